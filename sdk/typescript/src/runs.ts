/**
 * `client.runs`: agent runs (`/v1/runs…`) and the files they leave behind.
 *
 * @module
 */

import { APITimeoutError, EphemeralError } from "./errors.js";
import {
  type CreateOptions,
  type Http,
  type OpenResponse,
  type RequestOptions,
  type ResourceConfig,
  sleep,
} from "./http.js";
import { PagePromise } from "./pagination.js";
import { followTimeline, LAST_EVENT, type RunEvent } from "./timeline.js";
import {
  type FileInput,
  type List,
  type ListParams,
  type Page,
  type Run,
  type RunCreateParams,
  type RunFile,
  type RunWithTimeline,
  TERMINAL_RUN_STATUSES,
} from "./types.js";
import { encodeId, encodePath, filesToWire, fromWire, newIdempotencyKey, toWire } from "./wire.js";

/** Options of `runs.stream`. */
export interface StreamOptions extends CreateOptions {
  /** A connection silent this long is dropped and resumed (default: the client's `streamIdleTimeoutMs`). */
  idleTimeoutMs?: number;
}

/** Options of `runs.events`. */
export interface EventsOptions extends RequestOptions {
  /** Start after this sequence number (`Last-Event-ID`); 0 or absent: from the first event. */
  after?: number;
  idleTimeoutMs?: number;
}

/** Options of `runs.wait`. */
export interface WaitOptions {
  signal?: AbortSignal;
  /** Give up (with `APITimeoutError`) if the run has not ended within this many ms. Default: wait as long as the run lasts. */
  timeoutMs?: number;
  maxRetries?: number;
}

/**
 * The events of a run being created, as they happen. Iterate it once.
 * `runId` is known as soon as the server has answered (before the first
 * event arrives).
 */
export class RunStream implements AsyncIterable<RunEvent> {
  /** The run's id, once the server has answered. */
  runId: string | undefined;
  /** The `Idempotency-Key` the create was sent with (the same across its retries). */
  readonly idempotencyKey: string;
  #events: AsyncGenerator<RunEvent, void, undefined> | undefined;

  /** @internal */
  constructor(idempotencyKey: string, make: (stream: RunStream) => AsyncGenerator<RunEvent, void, undefined>) {
    this.idempotencyKey = idempotencyKey;
    this.#events = make(this);
  }

  [Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    const events = this.#events;
    if (!events) throw new EphemeralError("a RunStream can be iterated only once");
    this.#events = undefined;
    return events;
  }
}

export class Runs {
  /** The files a run's `outputs` collected. */
  readonly files: RunFiles;
  #http: Http;
  #config: ResourceConfig;

  /** @internal */
  constructor(http: Http, config: ResourceConfig) {
    this.#http = http;
    this.#config = config;
    this.files = new RunFiles(http);
  }

  /**
   * Creates a run and answers once it is queued (201). Safe to retry: an
   * `Idempotency-Key` is sent (yours, or a fresh UUID) and reused across
   * the automatic retries, so one call makes at most one run.
   */
  async create(params: RunCreateParams, opts: CreateOptions = {}): Promise<Run> {
    const { body } = await this.#http.json(
      {
        method: "POST",
        path: "/v1/runs",
        json: runRequestToWire(params),
        idempotencyKey: opts.idempotencyKey ?? newIdempotencyKey(),
        retry: true,
      },
      opts,
    );
    return fromWire<Run>(body);
  }

  /**
   * Creates a run and yields its events live, from `budget.reserved` to
   * `worker.destroyed`. The create is sent when the iteration starts (a
   * stream never iterated creates nothing). A dropped connection is
   * resumed with `Last-Event-ID`, without repeating an event. Breaking out
   * of the loop closes the connection (the run goes on; cancel it with
   * `runs.cancel`).
   */
  stream(params: RunCreateParams, opts: StreamOptions = {}): RunStream {
    const http = this.#http;
    const json = runRequestToWire(params);
    const key = opts.idempotencyKey ?? newIdempotencyKey();
    const signal = opts.signal;
    const maxRetries = opts.maxRetries ?? http.config.maxRetries;
    const idleTimeoutMs = opts.idleTimeoutMs ?? this.#config.streamIdleTimeoutMs;
    return new RunStream(key, (stream) => {
      const eventsPath = (): string => {
        if (!stream.runId) throw new EphemeralError("the server did not say which run it created (no Location header)");
        return `/v1/runs/${encodeId(stream.runId)}/events`;
      };
      const first = async (): Promise<OpenResponse> => {
        const open = await http.open(
          { method: "POST", path: "/v1/runs", json, idempotencyKey: key, accept: "text/event-stream", retry: true },
          opts,
        );
        stream.runId = idFromLocation(open.response.headers.get("location"));
        if (open.response.headers.get("content-type")?.includes("text/event-stream")) return open;
        // The server answered with the run object instead: read the id from it, then follow the events.
        try {
          const run = fromWire<Run>(await open.response.json());
          stream.runId ??= run.id;
        } finally {
          open.attempt.release();
        }
        return http.open(
          { method: "GET", path: eventsPath(), accept: "text/event-stream", retry: true },
          { signal, maxRetries },
        );
      };
      return followTimeline({ http, path: eventsPath, after: 0, first, signal, maxRetries, idleTimeoutMs });
    });
  }

  /** The run and its timeline so far. */
  async get(id: string, opts: RequestOptions = {}): Promise<RunWithTimeline> {
    const { body } = await this.#http.json({ method: "GET", path: `/v1/runs/${encodeId(id)}`, retry: true }, opts);
    return fromWire<RunWithTimeline>(body);
  }

  /**
   * A page of the organisation's runs, newest first (`await`), or every run
   * (`for await`), fetching pages as the loop needs them.
   */
  list(params: ListParams = {}, opts: RequestOptions = {}): PagePromise<Run> {
    return new PagePromise<Run>(async (before) => {
      const { body } = await this.#http.json(
        { method: "GET", path: "/v1/runs", query: { limit: params.limit, before }, retry: true },
        opts,
      );
      return fromWire<Page<Run>>(body);
    }, params.before);
  }

  /**
   * Asks the run to stop (202); it ends `cancelled` and is settled as
   * usual. A run that has already ended is a `ConflictError` (`run-finished`).
   */
  async cancel(id: string, opts: RequestOptions = {}): Promise<Run> {
    const { body } = await this.#http.json(
      { method: "POST", path: `/v1/runs/${encodeId(id)}/cancel`, retry: true },
      opts,
    );
    return fromWire<Run>(body);
  }

  /**
   * The run's events, from the first (or after `after`) to
   * `worker.destroyed`: a finished run's replay, a live run's as they
   * happen. Resumes across dropped connections.
   */
  events(id: string, opts: EventsOptions = {}): AsyncIterable<RunEvent> {
    const path = `/v1/runs/${encodeId(id)}/events`;
    return followTimeline({
      http: this.#http,
      path: () => path,
      after: opts.after ?? 0,
      signal: opts.signal,
      maxRetries: opts.maxRetries ?? this.#http.config.maxRetries,
      idleTimeoutMs: opts.idleTimeoutMs ?? this.#config.streamIdleTimeoutMs,
    });
  }

  /**
   * Waits for the run to end and returns it with its whole timeline. It
   * follows the event stream rather than polling, so it answers as soon
   * as the run ends.
   */
  async wait(id: string, opts: WaitOptions = {}): Promise<RunWithTimeline> {
    const deadline = new AbortController();
    const onAbort = (): void => deadline.abort(opts.signal?.reason);
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    if (opts.signal?.aborted) onAbort();
    let timedOut = false;
    const timer =
      opts.timeoutMs !== undefined
        ? setTimeout(() => {
            timedOut = true;
            deadline.abort(new APITimeoutError(`run ${id} did not end within ${opts.timeoutMs} ms`));
          }, opts.timeoutMs)
        : undefined;
    const signal = deadline.signal;
    const maxRetries = opts.maxRetries;
    try {
      for (;;) {
        const run = await this.get(id, withRetries({ signal }, maxRetries));
        if (TERMINAL_RUN_STATUSES.includes(run.status)) return run;
        const after = run.timeline.at(-1)?.seq ?? 0;
        let seen = 0;
        for await (const event of this.events(id, withRetries({ after, signal }, maxRetries))) {
          seen++;
          if (event.type === LAST_EVENT) break;
        }
        // The stream ended without news (it should not): do not spin.
        if (seen === 0) await sleep(1_000, signal);
      }
    } catch (e) {
      if (timedOut && !opts.signal?.aborted) {
        throw new APITimeoutError(`run ${id} did not end within ${opts.timeoutMs} ms`, { cause: e });
      }
      throw e;
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
    }
  }
}

/** `client.runs.files`: what a run's `outputs` collected. */
export class RunFiles {
  #http: Http;

  /** @internal */
  constructor(http: Http) {
    this.#http = http;
  }

  /** The files collected (an empty list when none, or under zero data retention). */
  async list(runId: string, opts: RequestOptions = {}): Promise<List<RunFile>> {
    const { body } = await this.#http.json(
      { method: "GET", path: `/v1/runs/${encodeId(runId)}/files`, retry: true },
      opts,
    );
    return fromWire<List<RunFile>>(body);
  }

  /**
   * The file as a `Response` whose body is not read yet: stream it
   * (`.body`), or take `.arrayBuffer()`, `.text()`, the headers
   * (`Content-Type`, `Content-Length`, `ETag`). `NotFoundError` for a path
   * not collected.
   */
  async download(runId: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const { response } = await this.#http.open(
      { method: "GET", path: filePath(runId, path), accept: "*/*", retry: true },
      opts,
    );
    return response;
  }

  /** The file's bytes, read whole. */
  async read(runId: string, path: string, opts: RequestOptions = {}): Promise<Uint8Array> {
    return this.#http.bytes({ method: "GET", path: filePath(runId, path), accept: "*/*", retry: true }, opts);
  }

  /** The file as a stream of bytes, read as the caller pulls. */
  async readStream(runId: string, path: string, opts: RequestOptions = {}): Promise<ReadableStream<Uint8Array>> {
    const response = await this.download(runId, path, opts);
    return response.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
  }
}

function filePath(runId: string, path: string): string {
  return `/v1/runs/${encodeId(runId)}/files/${encodePath(path)}`;
}

/** `Location: /v1/runs/run_…` → `run_…`. */
function idFromLocation(location: string | null): string | undefined {
  if (!location) return undefined;
  const last = location.split("?")[0]?.split("/").filter(Boolean).at(-1);
  return last ? decodeURIComponent(last) : undefined;
}

function withRetries<T extends object>(opts: T, maxRetries: number | undefined): T {
  return maxRetries === undefined ? opts : { ...opts, maxRetries };
}

/** The request body in wire form: snake_case, files with bytes as base64. */
export function runRequestToWire(params: RunCreateParams | object): unknown {
  const p = params as { files?: FileInput[] };
  const wire = toWire({ ...params, files: undefined }) as Record<string, unknown>;
  if (p.files !== undefined) wire.files = filesToWire(p.files);
  return wire;
}
