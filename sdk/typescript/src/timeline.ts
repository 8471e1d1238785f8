/**
 * Timelines: the events of a run or a sandbox, their types, and a reader
 * that follows a live timeline across dropped connections.
 *
 * Every event has a sequence number (`seq`, the SSE `id`, from 1). When a
 * connection drops, the reader reconnects with `Last-Event-ID: <last seq>`
 * and the server resumes after it; any event at or below the last one seen
 * is skipped, so the caller sees each event exactly once, in order, even
 * when a retried create replays the stream from its start.
 *
 * @module
 */

import { APIConnectionError, EphemeralError } from "./errors.js";
import { type Http, type OpenResponse, sleep } from "./http.js";
import { readSSE } from "./sse.js";
import { fromWire } from "./wire.js";

/** Fields every event's data has. */
export interface EventBase {
  /** When it happened (RFC 3339 UTC, ms). */
  at: string;
  /** Milliseconds since the run or sandbox was created. */
  tMs: number;
}

/** The data of each known event type (camelCase). */
export interface EventDataMap {
  "budget.reserved": { reservedMicros: number };
  "vm.ready": { isolation: string; readyMs: number };
  "worker.started": { shell: boolean; web: boolean; connections: string[]; files: string[] };
  "model.call": {
    n: number;
    model: string;
    inputTokens: number;
    outputTokens: number;
    costMicros: number;
    durationMs: number;
  };
  "shell.command": { callId: string; command: string };
  "shell.output": { callId: string; stream: "stdout" | "stderr"; data: string };
  "shell.exit": {
    callId: string;
    exitCode: number;
    durationMs: number;
    truncated: boolean;
    limit: string | null;
  };
  "web.request": { url: string; [key: string]: unknown };
  "web.response": { url: string; status: number; bytes: number };
  "files.collected": {
    files: { path: string; size: number; sha256: string }[];
    skipped: { path: string; reason: "too_many_files" | "too_large" | "not_a_regular_file" | "unreadable" }[];
  };
  "file.content": { path: string; size: number; sha256: string; contentBase64: string };
  "file.written": { path: string; size: number; sha256: string };
  "vm.destroyed": { lifetimeMs: number };
  "run.succeeded": { modelCalls: number; totalTokens: number; output: string | null; outputTruncated?: boolean };
  "run.failed": RunEndData;
  "run.timed_out": RunEndData;
  "run.budget_exceeded": RunEndData;
  "run.cancelled": RunEndData;
  "sandbox.ended": { endReason: string };
  "worker.destroyed": {
    chargedMicros: number;
    releasedMicros: number;
    cost: { model: number; web: number; compute: number };
  };
  "timeline.truncated": { limitBytes: number; dropped: number };
}

export interface RunEndData {
  modelCalls: number;
  totalTokens: number;
  error: { code: string; message: string };
}

export type EventType = keyof EventDataMap;

/**
 * One event of a timeline, discriminated by `type` (so
 * `if (e.type === "shell.output") e.data.data` type-checks). A newer server
 * may send types not listed here; they arrive with their data converted the
 * same way.
 */
export type TimelineEvent = {
  [K in EventType]: { seq: number; type: K; data: EventDataMap[K] & EventBase };
}[EventType];

/** An event of a run's timeline. */
export type RunEvent = TimelineEvent;
/** An event of a sandbox's timeline. */
export type SandboxEvent = TimelineEvent;

/** The last event of every run and sandbox timeline. */
export const LAST_EVENT = "worker.destroyed";

/** An event from its wire form (`{seq, type, data}` of a stored timeline). */
export function eventFromWire(raw: { seq: number; type: string; data: unknown }): TimelineEvent {
  return { seq: raw.seq, type: raw.type, data: fromWire(raw.data) } as TimelineEvent;
}

export interface FollowOptions {
  http: Http;
  /** The events endpoint to (re)connect to, e.g. `/v1/runs/run_…/events`; may be known only once `first` answered. */
  path: () => string;
  /** Resume after this sequence number (0: from the start). */
  after: number;
  /** Opens the first connection differently (a `POST` that streams); later ones `GET path()`. */
  first?: () => Promise<OpenResponse>;
  signal?: AbortSignal | undefined;
  /** Reconnections in a row that bring no new event before giving up. */
  maxRetries: number;
  /** A connection silent this long (keep-alive comments count) is dropped and resumed. */
  idleTimeoutMs: number;
}

/** The server's hint is 2 s; a larger one is not waited out in full. */
const MAX_RECONNECT_MS = 5_000;

/**
 * Follows a timeline to its last event (`worker.destroyed`), reconnecting
 * with `Last-Event-ID` whenever a connection drops, breaks off mid-event,
 * or goes silent. Stopping the iteration closes the connection.
 */
export async function* followTimeline(opts: FollowOptions): AsyncGenerator<TimelineEvent, void, undefined> {
  const { http, signal } = opts;
  let last = opts.after;
  let reconnectMs = 2_000;
  let fruitless = 0;
  let first = opts.first;
  for (;;) {
    let open: OpenResponse;
    if (first) {
      const f = first;
      first = undefined;
      open = await f();
    } else {
      const headers: Record<string, string> = { "Cache-Control": "no-cache" };
      if (last > 0) headers["Last-Event-ID"] = String(last);
      open = await http.open(
        { method: "GET", path: opts.path(), accept: "text/event-stream", headers, retry: true },
        { signal, maxRetries: opts.maxRetries },
      );
    }
    let progressed = false;
    let dropped: unknown;
    try {
      const body = open.response.body;
      if (!body) throw new APIConnectionError("the event stream has no body");
      const messages = readSSE(body, {
        idleTimeoutMs: opts.idleTimeoutMs,
        onRetry: (ms) => {
          reconnectMs = ms;
        },
      });
      for await (const message of messages) {
        const seq = Number(message.id);
        if (!Number.isSafeInteger(seq) || seq <= last) continue;
        let data: unknown;
        try {
          data = JSON.parse(message.data);
        } catch (cause) {
          throw new EphemeralError(`event ${seq} (${message.type}) has data that is not JSON`, { cause });
        }
        last = seq;
        progressed = true;
        yield eventFromWire({ seq, type: message.type, data });
        if (message.type === LAST_EVENT) return;
      }
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      // Our own errors (bad data, a problem) are final; a connection that
      // broke off (reset, silent, cut mid-event) is resumed.
      if (e instanceof EphemeralError && !(e instanceof APIConnectionError)) throw e;
      dropped = e;
    } finally {
      open.attempt.release();
    }
    fruitless = progressed ? 0 : fruitless + 1;
    if (fruitless > opts.maxRetries) {
      if (dropped === undefined) {
        // The server closed cleanly, again and again, with nothing new: it
        // has no more (a timeline whose last event was never stored).
        return;
      }
      throw new APIConnectionError(
        `the event stream broke off ${fruitless} times in a row without a new event`,
        { cause: dropped },
      );
    }
    await sleep(Math.min(reconnectMs, MAX_RECONNECT_MS), signal);
  }
}
