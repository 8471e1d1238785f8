/**
 * The one place requests are sent: auth header, per-attempt timeout, the
 * caller's `AbortSignal`, retries with backoff, and problem+json → typed
 * errors. Everything above this module deals in paths and bodies only.
 *
 * Retries: a request marked `retry` is sent again after a connection error,
 * a timeout, a 429, a 5xx, or a 409 `idempotency-key-in-use`, at most
 * `maxRetries` times, waiting `Retry-After` when the server says (up to a
 * minute; longer and the error is thrown rather than waited out) and an
 * exponential backoff with jitter otherwise. Creates are only marked
 * `retry` together with an `Idempotency-Key`, which stays the same across
 * the attempts, so a create whose answer was lost is replayed by the
 * server, never made twice.
 *
 * @module
 */

import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  EphemeralError,
  type FieldError,
  makeAPIError,
  retryAfterSeconds,
} from "./errors.js";

/** The `fetch` the SDK calls: the platform's, or one the caller passes. */
export type Fetch = (input: string, init: RequestInit) => Promise<Response>;

/** Options every method takes. */
export interface RequestOptions {
  /** Abandons the call (and its retries, and its stream) when aborted; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Per-attempt time limit in ms for this call (default: the client's `timeoutMs`). */
  timeoutMs?: number;
  /** Retries for this call (default: the client's `maxRetries`). */
  maxRetries?: number;
}

/** Options of the methods that create something. */
export interface CreateOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key`. Default: a fresh `crypto.randomUUID()` per
   * call, the same across that call's retries. Pass your own to make a
   * create safe to repeat across processes (the server keeps keys 24 h).
   */
  idempotencyKey?: string;
}

/** Settings the client hands its resources besides the HTTP ones. */
export interface ResourceConfig {
  /** A stream silent this long (keep-alive comments count) is dropped and resumed. */
  streamIdleTimeoutMs: number;
}

export interface HttpConfig {
  baseURL: string;
  apiKey: string;
  timeoutMs: number;
  maxRetries: number;
  fetch: Fetch;
}

/**
 * A request body as sent. Spelled out rather than `BodyInit`, which only
 * the DOM library declares (a Node-only project's types lack it).
 */
export type RawBody = string | Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array>;

export interface HttpRequest {
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** Path under the base URL, already encoded (`/v1/runs/run_…`). */
  path: string;
  query?: Record<string, string | number | undefined>;
  /** A JSON body (serialized once, so every attempt sends the same bytes). */
  json?: unknown;
  /** A raw body. A `ReadableStream` is sent streamed and never retried (it cannot be read twice). */
  body?: RawBody;
  headers?: Record<string, string>;
  /** `Accept` (default `application/json`). */
  accept?: string;
  idempotencyKey?: string;
  /** Whether sending this request again is safe. */
  retry: boolean;
  /** The method's own per-attempt time limit, when the default does not fit (a long command). */
  timeoutMs?: number;
}

/**
 * One attempt's lifetime: its abort controller, linked to the caller's
 * signal and to the timeout. A streamed response outlives the send, so its
 * owner stops the timer once headers are in and releases it when done.
 */
export class Attempt {
  readonly controller = new AbortController();
  timedOut = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #user: AbortSignal | undefined;
  #onUserAbort = (): void => this.controller.abort(this.#user?.reason);

  constructor(timeoutMs: number, user: AbortSignal | undefined) {
    this.#user = user;
    if (user) user.addEventListener("abort", this.#onUserAbort, { once: true });
    if (timeoutMs > 0 && Number.isFinite(timeoutMs)) {
      this.#timer = setTimeout(() => {
        this.timedOut = true;
        this.controller.abort(new APITimeoutError(`no answer within ${timeoutMs} ms`));
      }, timeoutMs);
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** From here on the reader sets its own pace (streams have idle timeouts instead). */
  stopTimer(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Ends the attempt: stops the timer, unlinks the caller's signal, closes the connection if still open. */
  release(): void {
    this.stopTimer();
    this.#user?.removeEventListener("abort", this.#onUserAbort);
    this.#user = undefined;
    if (!this.controller.signal.aborted) this.controller.abort();
  }
}

/** A response whose body the caller reads at its own pace; `attempt.release()` when done. */
export interface OpenResponse {
  response: Response;
  attempt: Attempt;
}

const MAX_RETRY_AFTER_MS = 60_000;
const MAX_ERROR_BODY = 64 * 1024;

export class Http {
  readonly config: HttpConfig;

  constructor(config: HttpConfig) {
    this.config = config;
  }

  /** Sends and parses a JSON answer (`undefined` for 204). */
  async json<T>(req: HttpRequest, opts: RequestOptions = {}): Promise<{ body: T; response: Response }> {
    return this.#send(req, opts, async (response) => {
      if (response.status === 204) return { body: undefined as T, response };
      const text = await response.text();
      let body: T;
      try {
        body = (text === "" ? undefined : JSON.parse(text)) as T;
      } catch (cause) {
        throw new APIConnectionError(
          `the server's answer to ${describe(req)} is not JSON (${text.length} bytes)`,
          { cause },
        );
      }
      return { body, response };
    });
  }

  /** Sends and reads the whole body as bytes. */
  async bytes(req: HttpRequest, opts: RequestOptions = {}): Promise<Uint8Array> {
    return this.#send(req, opts, async (response) => new Uint8Array(await response.arrayBuffer()));
  }

  /**
   * Sends and hands back the response with its body unread. The timeout
   * covers the wait for headers only; the caller's signal still aborts the
   * body. The caller must `attempt.release()` when done with it.
   */
  async open(req: HttpRequest, opts: RequestOptions = {}): Promise<OpenResponse> {
    return this.#send(
      req,
      opts,
      async (response, attempt) => {
        attempt.stopTimer();
        return { response, attempt };
      },
      true,
    );
  }

  async #send<T>(
    req: HttpRequest,
    opts: RequestOptions,
    read: (response: Response, attempt: Attempt) => Promise<T>,
    keepOpen = false,
  ): Promise<T> {
    const { signal } = opts;
    signal?.throwIfAborted();
    const streamedBody = typeof ReadableStream !== "undefined" && req.body instanceof ReadableStream;
    const canRetry = req.retry && !streamedBody;
    const maxRetries = canRetry ? Math.max(0, opts.maxRetries ?? this.config.maxRetries) : 0;
    const timeoutMs = opts.timeoutMs ?? req.timeoutMs ?? this.config.timeoutMs;
    const url = this.#url(req);
    const headers: Record<string, string> = {
      Accept: req.accept ?? "application/json",
      Authorization: `Bearer ${this.config.apiKey}`,
      ...req.headers,
    };
    let body = req.body as BodyInit | undefined;
    if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers["Content-Type"] = "application/json";
    }
    if (req.idempotencyKey !== undefined) {
      if (!/^[\x20-\x7e]{1,255}$/.test(req.idempotencyKey)) {
        throw new EphemeralError("an Idempotency-Key must be 1 to 255 printable ASCII characters");
      }
      headers["Idempotency-Key"] = req.idempotencyKey;
    }

    for (let attempt = 0; ; attempt++) {
      const a = new Attempt(timeoutMs, signal);
      let keep = false;
      let failure: APIError | APIConnectionError;
      try {
        const init: RequestInit & { duplex?: "half" } = {
          method: req.method,
          headers,
          signal: a.signal,
          redirect: "error",
        };
        if (body !== undefined) init.body = body;
        // Node's fetch (and the Fetch standard) require `duplex` to stream a request body.
        if (streamedBody) init.duplex = "half";
        const response = await this.config.fetch(url, init);
        if (response.ok) {
          const value = await read(response, a);
          keep = keepOpen;
          return value;
        }
        failure = await problem(response, req);
      } catch (e) {
        if (signal?.aborted) throw signal.reason;
        if (a.timedOut) {
          failure = new APITimeoutError(`${describe(req)}: no answer within ${timeoutMs} ms`, { cause: e });
        } else if (e instanceof APIConnectionError || e instanceof APIError) {
          failure = e;
        } else if (isNetworkError(e)) {
          failure = new APIConnectionError(`${describe(req)}: connection failed (${reason(e)})`, { cause: e });
        } else {
          throw e;
        }
      } finally {
        if (!keep) a.release();
      }
      const wait = retryDelay(failure, attempt);
      if (attempt >= maxRetries || wait === undefined) throw failure;
      await sleep(wait, signal);
    }
  }

  #url(req: HttpRequest): string {
    let url = this.config.baseURL + req.path;
    if (req.query) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(req.query)) {
        if (v !== undefined) params.set(k, String(v));
      }
      const qs = params.toString();
      if (qs) url += `?${qs}`;
    }
    return url;
  }
}

function describe(req: HttpRequest): string {
  return `${req.method} ${req.path}`;
}

/**
 * Whether `fetch` failed for want of a connection (a `TypeError` by the
 * Fetch standard, in browsers with no more detail; undici adds a cause),
 * or a body broke off mid-read. Node's own argument errors (`ERR_…`) are
 * programming errors, thrown as they are.
 */
function isNetworkError(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === "string") {
    return code.startsWith("UND_ERR") || (/^E[A-Z_]+$/.test(code) && !code.startsWith("ERR_"));
  }
  return e.name === "TypeError" || e.name === "AbortError";
}

/** The innermost cause's message: "other side closed", "connect ECONNREFUSED 127.0.0.1:9". */
function reason(e: unknown): string {
  let cur: unknown = e;
  let text = "unknown error";
  for (let depth = 0; cur instanceof Error && depth < 5; depth++) {
    text = cur.message || text;
    cur = cur.cause;
  }
  return text;
}

/** How long to wait before the next attempt, or `undefined` when this failure is final. */
function retryDelay(failure: APIError | APIConnectionError, attempt: number): number | undefined {
  const backoff = Math.min(500 * 2 ** attempt, 8_000) * (0.75 + Math.random() * 0.25);
  if (failure instanceof APIConnectionError) return backoff;
  const retryable =
    failure.status === 429 ||
    failure.status >= 500 ||
    (failure.status === 409 && failure.type.endsWith("/idempotency-key-in-use"));
  if (!retryable) return undefined;
  const after = retryAfterSeconds(failure.headers);
  if (after === undefined) return backoff;
  const ms = after * 1000;
  return ms > MAX_RETRY_AFTER_MS ? undefined : ms;
}

/** The error a non-2xx response stands for, from its problem+json body when it has one. */
async function problem(response: Response, req: HttpRequest): Promise<APIError> {
  let text = "";
  try {
    text = (await response.text()).slice(0, MAX_ERROR_BODY);
  } catch {
    // The status says enough; a body that broke off adds nothing.
  }
  let parsed: Record<string, unknown> = {};
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value)) parsed = value as Record<string, unknown>;
  } catch {
    // Not JSON: a proxy's page, say. Its first line is the detail.
  }
  const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
  const errors: FieldError[] = Array.isArray(parsed.errors)
    ? parsed.errors
        .filter((e): e is Record<string, unknown> => !!e && typeof e === "object")
        .map((e) => ({ field: String(e.field ?? ""), message: String(e.message ?? "") }))
    : [];
  return makeAPIError({
    status: response.status,
    type: str(parsed.type) ?? "about:blank",
    title: str(parsed.title) ?? (response.statusText || `HTTP ${response.status}`),
    detail: str(parsed.detail) ?? (str(parsed.type) ? "" : (text.split(/\r?\n/, 1)[0] ?? "").slice(0, 200)),
    errors,
    headers: response.headers,
    request: describe(req),
  });
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
