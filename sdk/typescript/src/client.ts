/**
 * The client: `new Ephemeral({ baseURL, apiKey })`, with `runs`,
 * `sandboxes`, `models`, `runtime()` and `health()`.
 *
 * @module
 */

import { EphemeralError } from "./errors.js";
import { type Fetch, Http, type RequestOptions } from "./http.js";
import { Runs } from "./runs.js";
import { Sandboxes } from "./sandboxes.js";
import type { Health, List, Model, Runtime } from "./types.js";
import { fromWire } from "./wire.js";

export interface ClientOptions {
  /** The server, e.g. `http://127.0.0.1:8080` (default: `EPHEMERAL_URL`). */
  baseURL?: string;
  /** A member key (default: `EPHEMERAL_API_KEY`). */
  apiKey?: string;
  /** Per-attempt time limit for an answer, in ms (default 60,000). Streams use `streamIdleTimeoutMs` once open. */
  timeoutMs?: number;
  /** Retries after a connection error, a timeout, a 429 or a 5xx (default 2). Commands are never retried. */
  maxRetries?: number;
  /** A `fetch` to use instead of the platform's (a proxy agent, a test double). */
  fetch?: Fetch;
  /**
   * An event stream that sends nothing for this long is dropped and
   * resumed with `Last-Event-ID` (default 60,000; the server sends a
   * keep-alive comment every 15 s).
   */
  streamIdleTimeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_STREAM_IDLE_MS = 60_000;

/** An environment variable where there is a `process` (Node, Deno, Bun); `undefined` in browsers. */
function env(name: string): string | undefined {
  const proc = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  const value = proc?.env?.[name];
  return value === "" ? undefined : value;
}

export class Ephemeral {
  /** Agent runs: create, stream, get, list, cancel, events, wait, files. */
  readonly runs: Runs;
  /** Sandboxes driven by your own agent loop. */
  readonly sandboxes: Sandboxes;
  /** The server's model catalogue. */
  readonly models: Models;
  /** The server's base URL, without a trailing slash. */
  readonly baseURL: string;

  // Private, so neither `console.log(client)` nor `JSON.stringify` shows the key.
  #http: Http;

  constructor(options: ClientOptions = {}) {
    const baseURL = options.baseURL ?? env("EPHEMERAL_URL");
    const apiKey = options.apiKey ?? env("EPHEMERAL_API_KEY");
    if (!baseURL) {
      throw new EphemeralError(
        "no server URL: pass `new Ephemeral({ baseURL: 'http://…' })` or set EPHEMERAL_URL",
      );
    }
    if (!apiKey) {
      throw new EphemeralError(
        "no API key: pass `new Ephemeral({ apiKey })` or set EPHEMERAL_API_KEY (keys come from `ephemeral keys create --org NAME`)",
      );
    }
    // Checked here, where the message can say so, rather than as a header error from fetch.
    if (!/^[\x21-\x7e]+$/.test(apiKey)) {
      throw new EphemeralError("the API key must be printable ASCII without spaces (is there a stray newline?)");
    }
    let url: URL;
    try {
      url = new URL(baseURL);
    } catch {
      throw new EphemeralError(`the server URL is not a URL: ${JSON.stringify(baseURL.slice(0, 200))}`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new EphemeralError(`the server URL must be http or https, not ${url.protocol}`);
    }
    if (url.username || url.password) {
      throw new EphemeralError("the server URL must not hold credentials; pass the key as `apiKey`");
    }
    this.baseURL = `${url.origin}${url.pathname}`.replace(/\/+$/, "");
    const platformFetch: Fetch = (input, init) => globalThis.fetch(input, init);
    this.#http = new Http({
      baseURL: this.baseURL,
      apiKey,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
      fetch: options.fetch ?? platformFetch,
    });
    const resources = { streamIdleTimeoutMs: options.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_MS };
    this.runs = new Runs(this.#http, resources);
    this.sandboxes = new Sandboxes(this.#http, resources);
    this.models = new Models(this.#http);
  }

  /** What a sandbox offers on this server: isolation, default limits, programs, python and node versions. */
  async runtime(opts: RequestOptions = {}): Promise<Runtime> {
    const { body } = await this.#http.json({ method: "GET", path: "/v1/runtime", retry: true }, opts);
    return fromWire<Runtime>(body);
  }

  /** Whether the server is up (no key needed by the server, though the client sends it). */
  async health(opts: RequestOptions = {}): Promise<Health> {
    const { body } = await this.#http.json({ method: "GET", path: "/v1/health", retry: true }, opts);
    return fromWire<Health>(body);
  }
}

/** `client.models`. */
export class Models {
  #http: Http;

  /** @internal */
  constructor(http: Http) {
    this.#http = http;
  }

  /** The catalogue: ids, providers, prices, context windows; `default` marks the server's default. */
  async list(opts: RequestOptions = {}): Promise<List<Model>> {
    const { body } = await this.#http.json({ method: "GET", path: "/v1/models", retry: true }, opts);
    return fromWire<List<Model>>(body);
  }
}
