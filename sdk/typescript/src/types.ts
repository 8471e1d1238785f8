/**
 * The API's objects as the SDK shows them: the wire's snake_case fields in
 * camelCase (`max_cost_micros` → `maxCostMicros`). Money is integer
 * micro-dollars (1 USD = 1,000,000); times are RFC 3339 UTC strings with
 * milliseconds, kept as strings so nothing is lost or re-zoned.
 *
 * @module
 */

import type { TimelineEvent } from "./timeline.js";

/** A file to put in the sandbox before it starts: text, base64, or bytes. */
export type FileInput =
  | { path: string; content: string }
  | { path: string; contentBase64: string }
  /** Bytes: sent as `content_base64`. */
  | { path: string; bytes: Uint8Array };

export type RunStatus =
  | "queued"
  | "running"
  | "succeeded"
  | "failed"
  | "timed_out"
  | "budget_exceeded"
  | "cancelled";

/** Statuses after which a run changes no more. */
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = [
  "succeeded",
  "failed",
  "timed_out",
  "budget_exceeded",
  "cancelled",
];

/** `POST /v1/runs`'s body. Only `prompt` and `maxCostMicros` are required. */
export interface RunCreateParams {
  /** 1 to 100,000 characters. */
  prompt: string;
  /** The hard cap, 1 to the organisation's per-run cap. */
  maxCostMicros: number;
  /** The agent gets the `shell` tool (default true). */
  shell?: boolean;
  /** The agent gets `web_fetch` (GET only; default false). */
  web?: boolean;
  /** Default 120, at most the server's maximum (default 900). */
  timeoutSeconds?: number;
  /** A model id of the server's catalogue (default: the server's). */
  model?: string;
  /** Connections configured for the organisation. */
  connections?: string[];
  /** Written into the scratch folder before the agent starts (10 MiB in all). */
  files?: FileInput[];
  /** Glob patterns of files to collect when the agent is done (at most 32). */
  outputs?: string[];
  /** Store nothing but billing figures. */
  zeroDataRetention?: boolean;
  /** At most 16 keys, echoed back; keys are sent as given. */
  metadata?: Record<string, string>;
}

export interface Permissions {
  shell: boolean;
  web: boolean;
  connections: string[];
  files: string[];
  timeoutSeconds: number;
  maxCostMicros: number;
  zeroDataRetention: boolean;
}

export interface Usage {
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** Always: `charged + released = reserved`; `model + web + compute = charged`. */
export interface RunCost {
  reservedMicros: number;
  chargedMicros: number;
  releasedMicros: number;
  modelMicros: number;
  webMicros: number;
  computeMicros: number;
}

export interface ErrorInfo {
  code: string;
  message: string;
}

/** The run object. */
export interface Run {
  id: string;
  object: "run";
  status: RunStatus;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  expiresAt: string;
  model: string;
  /** `kvm+wasm`, `jail+wasm`, `wasm`, `none` (shell off); null until the sandbox is up. */
  isolation: string | null;
  permissions: Permissions;
  usage: Usage;
  cost: RunCost;
  /** The agent's final answer, once it succeeded. */
  output: string | null;
  error: ErrorInfo | null;
  metadata: Record<string, string>;
}

/** `GET /v1/runs/{id}`: the run and its timeline so far. */
export interface RunWithTimeline extends Run {
  timeline: TimelineEvent[];
}

/** Query of the list endpoints. */
export interface ListParams {
  /** 1 to 100 (default 20). */
  limit?: number;
  /** An id: the page starts after it (newest first). */
  before?: string;
}

/** One page of a list. */
export interface Page<T> {
  object: "list";
  data: T[];
  hasMore: boolean;
  /** The `before` of the next page, or null on the last. */
  nextBefore: string | null;
}

/** A file a run's `outputs` collected. */
export interface RunFile {
  path: string;
  size: number;
  sha256: string;
  contentType: string;
}

export interface List<T> {
  object: "list";
  data: T[];
}

// ---------------------------------------------------------------- sandboxes

export type SandboxStatus = "running" | "ended";
export type SandboxEndReason = "deleted" | "timeout" | "idle_timeout" | "budget_exceeded" | "failed";

export interface SandboxCreateParams {
  /** The hard cap (required). */
  maxCostMicros: number;
  /** Lifetime (default 300, at most the server's maximum). */
  timeoutSeconds?: number;
  /** Ended after this long without a request (default 120, at most `timeoutSeconds`). */
  idleTimeoutSeconds?: number;
  files?: FileInput[];
  zeroDataRetention?: boolean;
  metadata?: Record<string, string>;
}

export interface SandboxLimits {
  timeoutSeconds: number;
  idleTimeoutSeconds: number;
  commandTimeoutSeconds: number;
  memoryBytes: number;
  outputBytes: number;
  diskBytes: number;
  diskFiles: number;
}

/** While running, `computeMicros` is what was metered so far and charged/released are 0. */
export interface SandboxCost {
  reservedMicros: number;
  chargedMicros: number;
  releasedMicros: number;
  computeMicros: number;
}

/** The sandbox object, as the server sends it. */
export interface SandboxInfo {
  id: string;
  object: "sandbox";
  status: SandboxStatus;
  isolation: string;
  createdAt: string;
  expiresAt: string;
  endedAt: string | null;
  endReason: SandboxEndReason | null;
  limits: SandboxLimits;
  cost: SandboxCost;
  metadata: Record<string, string>;
}

/** The limit a command hit, or null. */
export type CommandLimit =
  | "command_timeout"
  | "sandbox_timeout"
  | "memory"
  | "output"
  | "disk_bytes"
  | "disk_files"
  | "pipe"
  | "stack";

export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  durationMs: number;
  truncated: boolean;
  limit: CommandLimit | null;
}

/** `PUT /v1/sandboxes/{id}/files/{path}`'s answer. */
export interface WrittenFile {
  object: "file";
  /** As the sandbox sees it, absolute. */
  path: string;
  size: number;
  sha256: string;
}

export interface SandboxFileEntry {
  path: string;
  type: "file" | "dir" | "symlink";
  size: number;
  /** Octal, e.g. `0644`. */
  mode: string;
  modifiedAt: string;
}

// ------------------------------------------------------- catalogue, runtime

export interface Model {
  id: string;
  provider: string;
  inputMicrosPerMillion: number;
  outputMicrosPerMillion: number;
  contextWindow: number;
  maxOutputTokens: number;
  default: boolean;
}

/** `GET /v1/runtime`: what a sandbox offers here. */
export interface Runtime {
  isolation: string;
  network: boolean;
  user: string;
  limits: {
    commandTimeoutSeconds: number;
    memoryBytes: number;
    outputBytes: number;
    diskBytes: number;
    diskFiles: number;
  };
  shell: { utilities: string[]; programs: string[] };
  python: {
    version: string;
    pip?: string;
    packages: { name: string; version: string }[];
    [key: string]: unknown;
  } | null;
  node: { version: string } | null;
  [key: string]: unknown;
}

export interface Health {
  status: "ok" | "degraded";
  node: string;
  store: string;
  isolation: string;
  runsInFlight: number;
  draining: boolean;
  [key: string]: unknown;
}
