/**
 * Server-Sent Events, parsed as the HTML standard says
 * (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
 * lines end in CRLF, LF or CR (a CR at the end of one chunk and an LF at
 * the start of the next are one line end); one leading BOM is dropped;
 * `:` lines are comments; `data` lines join with LF; `id` sets the last
 * event id (kept for later events, ignored when it holds a NUL); `retry`
 * of ASCII digits sets the reconnection time; an unknown field is ignored;
 * an event is dispatched at a blank line, and one cut off by the end of
 * the stream is dropped, never dispatched half.
 *
 * The browser's `EventSource` cannot send an `Authorization` header, and
 * cannot POST, so the SDK reads streams over `fetch` with this parser.
 *
 * @module
 */

import { APITimeoutError, EphemeralError } from "./errors.js";

/** One dispatched event. */
export interface SSEMessage {
  /** The `event:` field, `message` when there was none. */
  type: string;
  /** The `data:` lines joined with LF. */
  data: string;
  /** The last event id as of this event (`""` when none was ever set). */
  id: string;
}

export interface SSEHandlers {
  onEvent: (event: SSEMessage) => void;
  /** A `retry:` field: the reconnection time in ms. */
  onRetry?: (ms: number) => void;
  /** A comment line (its text after the colon). */
  onComment?: (text: string) => void;
}

/** The longest line kept in memory: a server that never ends a line is an error, not a leak. */
const MAX_LINE = 32 * 1024 * 1024;

/**
 * A push parser: `feed` it decoded text in chunks of any size and it calls
 * `onEvent` for each complete event.
 */
export class SSEParser {
  #h: SSEHandlers;
  #line = "";
  #pendingCR = false;
  #started = false;
  #data: string[] = [];
  #hasData = false;
  #type = "";
  #idBuffer = "";
  #lastId = "";

  constructor(handlers: SSEHandlers) {
    this.#h = handlers;
  }

  /** The last event id seen (what a reconnection sends as `Last-Event-ID`). */
  get lastEventId(): string {
    return this.#lastId;
  }

  feed(chunk: string): void {
    if (chunk.length === 0) return;
    if (!this.#started) {
      this.#started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    let start = 0;
    if (this.#pendingCR) {
      this.#pendingCR = false;
      if (chunk.charCodeAt(0) === 10) start = 1;
    }
    for (let i = start; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.#line + chunk.slice(start, i);
      this.#line = "";
      if (c === 13) {
        if (i + 1 < chunk.length) {
          if (chunk.charCodeAt(i + 1) === 10) i++;
        } else {
          this.#pendingCR = true;
        }
      }
      start = i + 1;
      this.#process(line);
    }
    if (start < chunk.length) {
      this.#line += chunk.slice(start);
      if (this.#line.length > MAX_LINE) {
        throw new EphemeralError(`an event stream line is over ${MAX_LINE} characters`);
      }
    }
  }

  /**
   * The stream ended: whatever was not closed by a blank line is dropped,
   * as the standard says. The parser can be fed again afterwards (a new
   * connection starts clean, keeping only the last event id).
   */
  end(): void {
    this.#line = "";
    this.#pendingCR = false;
    this.#started = false;
    this.#data = [];
    this.#hasData = false;
    this.#type = "";
    this.#idBuffer = this.#lastId;
  }

  #process(line: string): void {
    if (line === "") return this.#dispatch();
    if (line.charCodeAt(0) === 58 /* : */) {
      this.#h.onComment?.(line.slice(1));
      return;
    }
    const colon = line.indexOf(":");
    let field = line;
    let value = "";
    if (colon >= 0) {
      field = line.slice(0, colon);
      value = line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
    }
    switch (field) {
      case "event":
        this.#type = value;
        break;
      case "data":
        this.#data.push(value);
        this.#hasData = true;
        break;
      case "id":
        if (!value.includes("\0")) this.#idBuffer = value;
        break;
      case "retry":
        if (/^[0-9]+$/.test(value)) this.#h.onRetry?.(Number(value));
        break;
      default:
        break;
    }
  }

  #dispatch(): void {
    this.#lastId = this.#idBuffer;
    if (!this.#hasData) {
      this.#type = "";
      return;
    }
    const event: SSEMessage = {
      type: this.#type || "message",
      data: this.#data.join("\n"),
      id: this.#lastId,
    };
    this.#data = [];
    this.#hasData = false;
    this.#type = "";
    this.#h.onEvent(event);
  }
}

/** Parses a whole event stream given as one string (tests, recorded streams). */
export function parseSSE(text: string): SSEMessage[] {
  const events: SSEMessage[] = [];
  const parser = new SSEParser({ onEvent: (e) => events.push(e) });
  parser.feed(text);
  parser.end();
  return events;
}

export interface ReadOptions {
  /** Give up on a connection that sends nothing (not even a comment) for this long. */
  idleTimeoutMs?: number;
  onRetry?: (ms: number) => void;
}

/**
 * The events of a byte stream, as they complete. Decoding is streaming
 * UTF-8, so a character split between two chunks is whole. Throws
 * `APITimeoutError` after `idleTimeoutMs` of silence; stopping the
 * iteration early cancels the stream.
 */
export async function* readSSE(
  body: ReadableStream<Uint8Array>,
  opts: ReadOptions = {},
): AsyncGenerator<SSEMessage, void, undefined> {
  const queue: SSEMessage[] = [];
  const handlers: SSEHandlers = { onEvent: (e) => queue.push(e) };
  if (opts.onRetry) handlers.onRetry = opts.onRetry;
  const parser = new SSEParser(handlers);
  // ignoreBOM: keep it in the text, so the parser drops exactly one, as the standard says.
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  const reader = body.getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await readWithin(reader, opts.idleTimeoutMs);
      if (done) {
        parser.feed(decoder.decode());
        parser.end();
        finished = true;
        yield* queue.splice(0);
        return;
      }
      parser.feed(decoder.decode(value, { stream: true }));
      while (queue.length > 0) yield queue.shift() as SSEMessage;
    }
  } finally {
    if (!finished) {
      // Stopped early (a `break`, an error, idle): close the connection.
      reader.cancel().catch(() => {});
    }
    try {
      reader.releaseLock();
    } catch {
      // A read still pending on an older runtime: the cancel above ends it.
    }
  }
}

/** One `read()`, or `APITimeoutError` when nothing arrives in time. */
async function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  ms: number | undefined,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  if (!ms || !Number.isFinite(ms) || ms <= 0) return reader.read();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new APITimeoutError(`the event stream was silent for ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([reader.read(), idle]);
  } finally {
    clearTimeout(timer);
  }
}
