/**
 * `client.sandboxes`: sandboxes for agents that bring their own loop
 * (`/v1/sandboxes…`). A `Sandbox` is the object the server sends plus
 * handles to act on it: `commands`, `files`, `kill`, `refresh`, `events`.
 *
 *     await using sbx = await client.sandboxes.create({ maxCostMicros: 50_000 });
 *     const { stdout } = await sbx.commands.run("python3 -c 'print(6*7)'");
 *
 * @module
 */

import { APIConnectionError, EphemeralError, NotFoundError } from "./errors.js";
import type { CreateOptions, Http, RawBody, RequestOptions, ResourceConfig } from "./http.js";
import { PagePromise } from "./pagination.js";
import { readSSE } from "./sse.js";
import { followTimeline, type SandboxEvent } from "./timeline.js";
import type {
  CommandResult,
  List,
  ListParams,
  Page,
  SandboxCost,
  SandboxCreateParams,
  SandboxEndReason,
  SandboxFileEntry,
  SandboxInfo,
  SandboxLimits,
  SandboxStatus,
  WrittenFile,
} from "./types.js";
import { encodeId, encodePath, filesToWire, fromWire, newIdempotencyKey, toWire } from "./wire.js";

/** Options of `sbx.commands.run`. */
export interface CommandOptions extends RequestOptions {
  /** Called with each chunk the command writes to stdout, as it writes it (the answer is then streamed). */
  onStdout?: (data: string) => void;
  /** Called with each chunk the command writes to stderr, as it writes it. */
  onStderr?: (data: string) => void;
  /** The command's time limit (default: the sandbox's `commandTimeoutSeconds`; at most what is left of its lifetime). */
  timeoutSeconds?: number;
  /** Text on the command's standard input. */
  stdin?: string;
  /** Environment variables for this command only (names sent as given). */
  env?: Record<string, string>;
}

/** What `sbx.files.write` takes: text (UTF-8), bytes, a Blob, or a stream (sent as it is read). */
export type FileData = RawBody;

/** Options of `sandboxes.events` / `sbx.events`. */
export interface SandboxEventsOptions extends RequestOptions {
  after?: number;
  idleTimeoutMs?: number;
}

/** A margin over a command's own limit before the SDK gives up on the answer. */
const COMMAND_GRACE_MS = 30_000;
/** The server's default per-command limit, when the sandbox object does not say. */
const DEFAULT_COMMAND_TIMEOUT_S = 60;

export class Sandboxes {
  #http: Http;
  #config: ResourceConfig;

  /** @internal */
  constructor(http: Http, config: ResourceConfig) {
    this.#http = http;
    this.#config = config;
  }

  /**
   * Creates a sandbox (201) and returns it running. Safe to retry like
   * `runs.create`: one `Idempotency-Key` across the automatic retries.
   */
  async create(params: SandboxCreateParams, opts: CreateOptions = {}): Promise<Sandbox> {
    const p = params as SandboxCreateParams & Record<string, unknown>;
    const wire = toWire({ ...p, files: undefined }) as Record<string, unknown>;
    if (p.files !== undefined) wire.files = filesToWire(p.files);
    const { body } = await this.#http.json(
      {
        method: "POST",
        path: "/v1/sandboxes",
        json: wire,
        idempotencyKey: opts.idempotencyKey ?? newIdempotencyKey(),
        retry: true,
      },
      opts,
    );
    return this.#wrap(body);
  }

  /** The sandbox as it is now. */
  async get(id: string, opts: RequestOptions = {}): Promise<Sandbox> {
    const { body } = await this.#http.json({ method: "GET", path: sandboxPath(id), retry: true }, opts);
    return this.#wrap(body);
  }

  /**
   * A handle on an existing sandbox (made by another process, say), fetched
   * to check it exists: `NotFoundError` otherwise. Commands on one that has
   * ended raise `ConflictError` (`sandbox-ended`).
   */
  async connect(id: string, opts: RequestOptions = {}): Promise<Sandbox> {
    return this.get(id, opts);
  }

  /** A page of the organisation's sandboxes, newest first (`await`), or all of them (`for await`). */
  list(params: ListParams = {}, opts: RequestOptions = {}): PagePromise<Sandbox> {
    return new PagePromise<Sandbox>(async (before) => {
      const { body } = await this.#http.json(
        { method: "GET", path: "/v1/sandboxes", query: { limit: params.limit, before }, retry: true },
        opts,
      );
      const page = body as Page<unknown>;
      return { ...fromWire<Page<unknown>>({ ...page, data: [] }), data: page.data.map((s) => this.#wrap(s)) };
    }, params.before);
  }

  /** Ends the sandbox and settles it; returns it ended. Ending one already ended is not an error. */
  async kill(id: string, opts: RequestOptions = {}): Promise<Sandbox> {
    const { body } = await this.#http.json({ method: "DELETE", path: sandboxPath(id), retry: true }, opts);
    return this.#wrap(body);
  }

  /** The sandbox's timeline (`budget.reserved` … `worker.destroyed`), following it live. */
  events(id: string, opts: SandboxEventsOptions = {}): AsyncIterable<SandboxEvent> {
    const path = `${sandboxPath(id)}/events`;
    return followTimeline({
      http: this.#http,
      path: () => path,
      after: opts.after ?? 0,
      signal: opts.signal,
      maxRetries: opts.maxRetries ?? this.#http.config.maxRetries,
      idleTimeoutMs: opts.idleTimeoutMs ?? this.#config.streamIdleTimeoutMs,
    });
  }

  #wrap(body: unknown): Sandbox {
    return new Sandbox(this, this.#http, fromWire<SandboxInfo>(body));
  }
}

/**
 * A sandbox: its fields as of the last answer (`refresh()` to update them)
 * and what can be done with it. `await using sbx = …` kills it when the
 * scope ends, where the runtime has `Symbol.asyncDispose`.
 */
export class Sandbox implements SandboxInfo {
  id!: string;
  object!: "sandbox";
  status!: SandboxStatus;
  isolation!: string;
  createdAt!: string;
  expiresAt!: string;
  endedAt!: string | null;
  endReason!: SandboxEndReason | null;
  limits!: SandboxLimits;
  cost!: SandboxCost;
  metadata!: Record<string, string>;

  /** Runs shell commands, one at a time, in order; state carries over. */
  readonly commands: Commands;
  /** Files in the sandbox (paths relative to its scratch folder, or absolute under `/tmp`). */
  readonly files: SandboxFiles;

  #sandboxes: Sandboxes;

  /** @internal */
  constructor(sandboxes: Sandboxes, http: Http, info: SandboxInfo) {
    this.#sandboxes = sandboxes;
    this.#update(info);
    this.commands = new Commands(http, this);
    this.files = new SandboxFiles(http, this.id);
  }

  /** Fetches the sandbox again and updates these fields (status, cost…). */
  async refresh(opts: RequestOptions = {}): Promise<this> {
    const fresh = await this.#sandboxes.get(this.id, opts);
    this.#update(fresh.toJSON());
    return this;
  }

  /** Ends and settles the sandbox; these fields then show the settlement. */
  async kill(opts: RequestOptions = {}): Promise<this> {
    const ended = await this.#sandboxes.kill(this.id, opts);
    this.#update(ended.toJSON());
    return this;
  }

  /** The sandbox's timeline, live. */
  events(opts: SandboxEventsOptions = {}): AsyncIterable<SandboxEvent> {
    return this.#sandboxes.events(this.id, opts);
  }

  /** The plain sandbox object (what `JSON.stringify` shows). */
  toJSON(): SandboxInfo {
    return {
      id: this.id,
      object: this.object,
      status: this.status,
      isolation: this.isolation,
      createdAt: this.createdAt,
      expiresAt: this.expiresAt,
      endedAt: this.endedAt,
      endReason: this.endReason,
      limits: this.limits,
      cost: this.cost,
      metadata: this.metadata,
    };
  }

  /** For `await using`: kills the sandbox; one already gone is fine. */
  declare [Symbol.asyncDispose]: () => Promise<void>;

  #update(info: SandboxInfo): void {
    this.id = info.id;
    this.object = info.object;
    this.status = info.status;
    this.isolation = info.isolation;
    this.createdAt = info.createdAt;
    this.expiresAt = info.expiresAt;
    this.endedAt = info.endedAt;
    this.endReason = info.endReason;
    this.limits = info.limits;
    this.cost = info.cost;
    this.metadata = info.metadata;
  }
}

// Defined only where the runtime has the symbol (Node 20+, recent
// browsers), rather than under a key named "undefined" elsewhere.
if (typeof Symbol.asyncDispose === "symbol") {
  Object.defineProperty(Sandbox.prototype, Symbol.asyncDispose, {
    configurable: true,
    writable: true,
    value: async function asyncDispose(this: Sandbox): Promise<void> {
      if (this.status === "ended") return;
      try {
        await this.kill();
      } catch (e) {
        if (!(e instanceof NotFoundError)) throw e;
      }
    },
  });
}

/** `sbx.commands`. */
export class Commands {
  #http: Http;
  #sandbox: Sandbox;

  /** @internal */
  constructor(http: Http, sandbox: Sandbox) {
    this.#http = http;
    this.#sandbox = sandbox;
  }

  /**
   * Runs one shell command and answers when it has exited. A non-zero
   * exit is an answer, not an error. With `onStdout`/`onStderr` the output
   * is streamed to them as it is written (and still returned whole).
   *
   * Never retried automatically: a command is not idempotent, and a lost
   * answer does not mean it did not run. A sandbox that has ended is a
   * `ConflictError` (`sandbox-ended`).
   */
  async run(command: string, opts: CommandOptions = {}): Promise<CommandResult> {
    const http = this.#http;
    const path = `${sandboxPath(this.#sandbox.id)}/commands`;
    const json = toWire({ command, timeoutSeconds: opts.timeoutSeconds, stdin: opts.stdin, env: opts.env });
    // The answer comes when the command ends: wait for its limit and a margin, not the client's default.
    const limitS = opts.timeoutSeconds ?? this.#sandbox.limits?.commandTimeoutSeconds ?? DEFAULT_COMMAND_TIMEOUT_S;
    const timeoutMs = opts.timeoutMs ?? Math.max(http.config.timeoutMs, limitS * 1000 + COMMAND_GRACE_MS);
    const reqOpts: RequestOptions = { timeoutMs, maxRetries: 0 };
    if (opts.signal) reqOpts.signal = opts.signal;

    if (!opts.onStdout && !opts.onStderr) {
      const { body } = await http.json({ method: "POST", path, json, retry: false }, reqOpts);
      return fromWire<CommandResult>(body);
    }

    const open = await http.open(
      { method: "POST", path, json, accept: "text/event-stream", retry: false },
      reqOpts,
    );
    let stdout = "";
    let stderr = "";
    try {
      const body = open.response.body;
      if (!body) throw new APIConnectionError("the command's event stream has no body");
      // No event for the whole limit and margin means the answer is lost.
      for await (const message of readSSE(body, { idleTimeoutMs: timeoutMs })) {
        const data = parseData(message.data, message.type);
        if (message.type === "output") {
          const chunk = String(data.data ?? "");
          if (data.stream === "stderr") {
            stderr += chunk;
            opts.onStderr?.(chunk);
          } else {
            stdout += chunk;
            opts.onStdout?.(chunk);
          }
        } else if (message.type === "exit") {
          const exit = fromWire<Omit<CommandResult, "stdout" | "stderr">>(data);
          return {
            exitCode: exit.exitCode,
            stdout,
            stderr,
            durationMs: exit.durationMs,
            truncated: exit.truncated,
            limit: exit.limit,
          };
        }
      }
      throw new APIConnectionError(`${path}: the stream ended before the command's exit`);
    } catch (e) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      if (e instanceof Error && !(e instanceof EphemeralError) && e.name === "TypeError") {
        throw new APIConnectionError(`${path}: the stream broke off before the command's exit`, { cause: e });
      }
      throw e;
    } finally {
      open.attempt.release();
    }
  }
}

/** `sbx.files`. */
export class SandboxFiles {
  #http: Http;
  #id: string;

  /** @internal */
  constructor(http: Http, id: string) {
    this.#http = http;
    this.#id = id;
  }

  /**
   * Writes a file (created or replaced). A `ReadableStream` is sent as it
   * is read, never held whole in memory (and so never retried); other data
   * is retried like any idempotent request. Over the sandbox's disk quota:
   * `PayloadTooLargeError`, and nothing half-written remains.
   */
  async write(path: string, data: FileData, opts: RequestOptions = {}): Promise<WrittenFile> {
    const { body } = await this.#http.json(
      {
        method: "PUT",
        path: this.#path(path),
        body: data,
        headers: { "Content-Type": "application/octet-stream" },
        retry: true,
      },
      opts,
    );
    return fromWire<WrittenFile>(body);
  }

  /** The file's bytes. `NotFoundError` when it does not exist. */
  async read(path: string, opts: RequestOptions = {}): Promise<Uint8Array> {
    return this.#http.bytes({ method: "GET", path: this.#path(path), accept: "*/*", retry: true }, opts);
  }

  /** The file as UTF-8 text. */
  async readText(path: string, opts: RequestOptions = {}): Promise<string> {
    return new TextDecoder().decode(await this.read(path, opts));
  }

  /** The file as a stream of bytes, read as the caller pulls (the client's timeout covers the wait for headers only). */
  async readStream(path: string, opts: RequestOptions = {}): Promise<ReadableStream<Uint8Array>> {
    const { response } = await this.#http.open(
      { method: "GET", path: this.#path(path), accept: "*/*", retry: true },
      opts,
    );
    return response.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
  }

  /** The entries of a folder (default: the scratch folder). */
  async list(params: { dir?: string } = {}, opts: RequestOptions = {}): Promise<List<SandboxFileEntry>> {
    const { body } = await this.#http.json(
      { method: "GET", path: `${sandboxPath(this.#id)}/files`, query: { dir: params.dir }, retry: true },
      opts,
    );
    return fromWire<List<SandboxFileEntry>>(body);
  }

  /** Deletes a file. `NotFoundError` when it does not exist. */
  async remove(path: string, opts: RequestOptions = {}): Promise<void> {
    await this.#http.json({ method: "DELETE", path: this.#path(path), retry: true }, opts);
  }

  #path(path: string): string {
    return `${sandboxPath(this.#id)}/files/${encodePath(path)}`;
  }
}

function sandboxPath(id: string): string {
  return `/v1/sandboxes/${encodeId(id)}`;
}

function parseData(text: string, type: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === "object") return value as Record<string, unknown>;
  } catch {
    // Reported below.
  }
  throw new EphemeralError(`a command event (${type}) has data that is not a JSON object`);
}
