/**
 * `@ephemeral/sdk`: the TypeScript client of Ephemeral, the self-hostable
 * sandbox server for AI agents. No runtime dependencies: the platform's
 * `fetch`, streams, `TextDecoder`, `AbortSignal` and `crypto` only, so it
 * runs on Node 20+ and in browsers alike.
 *
 * @module
 */

export { Ephemeral, Models, type ClientOptions } from "./client.js";
export { Ephemeral as default } from "./client.js";
export {
  APIConnectionError,
  APIError,
  APITimeoutError,
  AuthenticationError,
  ConflictError,
  EphemeralError,
  IdempotencyKeyReusedError,
  InsufficientFundsError,
  InternalServerError,
  InvalidRequestError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitError,
  ShuttingDownError,
  type FieldError,
} from "./errors.js";
export type { CreateOptions, Fetch, RequestOptions } from "./http.js";
export { PagePromise } from "./pagination.js";
export { RunFiles, Runs, RunStream, type EventsOptions, type StreamOptions, type WaitOptions } from "./runs.js";
export {
  Commands,
  Sandbox,
  SandboxFiles,
  Sandboxes,
  type CommandOptions,
  type FileData,
  type SandboxEventsOptions,
} from "./sandboxes.js";
export type {
  EventBase,
  EventDataMap,
  EventType,
  RunEndData,
  RunEvent,
  SandboxEvent,
  TimelineEvent,
} from "./timeline.js";
export * from "./types.js";
