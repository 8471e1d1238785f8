/**
 * A run's live event stream over `fetch`.
 *
 * `EventSource` cannot send an `Authorization` header, so the stream is
 * read with `fetch` and parsed here as the HTML standard says (the same
 * logic as sdk/typescript/src/sse.ts): lines end in CRLF, LF or CR; one
 * leading BOM is dropped; `:` lines are comments; `data` lines join with
 * LF; `id` sets the last event id; an event is dispatched at a blank line,
 * one cut off by the end of the stream is dropped.
 *
 * `follow` reconnects after a dropped connection with `Last-Event-ID`, so
 * nothing is missed; the caller drops what it has already seen by `seq`,
 * so nothing is shown twice.
 */

import { getKey } from "./api";

export interface SSEMessage {
  type: string;
  data: string;
  id: string;
}

export class SSEParser {
  private line = "";
  private pendingCR = false;
  private started = false;
  private data: string[] = [];
  private hasData = false;
  private type = "";
  private idBuffer = "";
  lastId = "";

  constructor(
    private readonly onEvent: (e: SSEMessage) => void,
    private readonly onRetry?: (ms: number) => void,
  ) {}

  feed(chunk: string): void {
    if (chunk.length === 0) return;
    if (!this.started) {
      this.started = true;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    let start = 0;
    if (this.pendingCR) {
      this.pendingCR = false;
      if (chunk.charCodeAt(0) === 10) start = 1;
    }
    for (let i = start; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.line + chunk.slice(start, i);
      this.line = "";
      if (c === 13) {
        if (i + 1 < chunk.length) {
          if (chunk.charCodeAt(i + 1) === 10) i++;
        } else {
          this.pendingCR = true;
        }
      }
      start = i + 1;
      this.process(line);
    }
    if (start < chunk.length) this.line += chunk.slice(start);
  }

  /** The connection ended: a half event is dropped; the last id is kept. */
  end(): void {
    this.line = "";
    this.pendingCR = false;
    this.started = false;
    this.data = [];
    this.hasData = false;
    this.type = "";
    this.idBuffer = this.lastId;
  }

  private process(line: string): void {
    if (line === "") return this.dispatch();
    if (line.charCodeAt(0) === 58 /* : */) return;
    const colon = line.indexOf(":");
    let field = line;
    let value = "";
    if (colon >= 0) {
      field = line.slice(0, colon);
      value = line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
    }
    if (field === "event") this.type = value;
    else if (field === "data") {
      this.data.push(value);
      this.hasData = true;
    } else if (field === "id") {
      if (!value.includes("\0")) this.idBuffer = value;
    } else if (field === "retry") {
      if (/^[0-9]+$/.test(value)) this.onRetry?.(Number(value));
    }
  }

  private dispatch(): void {
    this.lastId = this.idBuffer;
    if (!this.hasData) {
      this.type = "";
      return;
    }
    const ev = { type: this.type || "message", data: this.data.join("\n"), id: this.lastId };
    this.data = [];
    this.hasData = false;
    this.type = "";
    this.onEvent(ev);
  }
}

export interface FollowHandlers {
  /** One event; `seq` is its `id:` as a number. */
  onEvent: (seq: number, type: string, data: Record<string, unknown>) => void;
  /** Connected (true) or lost and about to retry (false). */
  onConnection?: (connected: boolean) => void;
  /** The stream ended for good (after `worker.destroyed`, or a 4xx). */
  onEnd?: (error?: unknown) => void;
  /**
   * Asked when a connection closed cleanly without a single event: a run
   * that has ended (whose last event never came, say a truncated timeline)
   * is not followed for ever.
   */
  hasEnded?: () => Promise<boolean>;
}

/** The last event of every run. */
const LAST = "worker.destroyed";
/** A stream silent for this long (no event, no keep-alive comment) is taken as dropped. */
const IDLE_MS = 45_000;

/**
 * Follows `/v1/runs/{id}/events` from after `afterSeq` until the run's last
 * event, reconnecting (with `Last-Event-ID`) when the connection drops.
 * Returns a function that stops following.
 */
export function follow(runId: string, afterSeq: number, h: FollowHandlers): () => void {
  const ctl = new AbortController();
  let last = afterSeq;
  let retryMs = 2000;
  let done = false;

  const once = async (): Promise<"done" | "again"> => {
    const headers: Record<string, string> = { Accept: "text/event-stream" };
    const key = getKey();
    if (key) headers.Authorization = `Bearer ${key}`;
    if (last > 0) headers["Last-Event-ID"] = String(last);
    const res = await fetch(`/v1/runs/${encodeURIComponent(runId)}/events`, {
      headers,
      signal: ctl.signal,
      cache: "no-store",
      credentials: "omit",
    });
    if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) {
      throw new Error(`the event stream answered ${res.status}`);
    }
    if (!res.ok || !res.body) return "again";
    h.onConnection?.(true);
    let finished = false;
    let gotAny = false;
    const parser = new SSEParser(
      (m) => {
        const seq = Number(m.id);
        if (!Number.isFinite(seq)) return;
        let data: Record<string, unknown> = {};
        try {
          const parsed: unknown = JSON.parse(m.data);
          if (parsed && typeof parsed === "object") data = parsed as Record<string, unknown>;
        } catch {
          return;
        }
        gotAny = true;
        if (seq > last) last = seq;
        h.onEvent(seq, m.type, data);
        if (m.type === LAST) finished = true;
      },
      (ms) => {
        retryMs = Math.min(Math.max(ms, 250), 30_000);
      },
    );
    const reader = res.body.getReader();
    const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => void reader.cancel().catch(() => {}), IDLE_MS);
    };
    try {
      arm();
      for (;;) {
        const { done: eof, value } = await reader.read();
        if (eof) break;
        arm();
        parser.feed(decoder.decode(value, { stream: true }));
        if (finished) break;
      }
    } catch (e) {
      // The connection dropped after it was up: resume at once (from the
      // last id), as after a clean close; only a stop ends the loop.
      if (ctl.signal.aborted) throw e;
    } finally {
      clearTimeout(idle);
      reader.cancel().catch(() => {});
    }
    parser.end();
    if (finished) return "done";
    if (!gotAny && !ctl.signal.aborted && h.hasEnded && (await h.hasEnded().catch(() => false))) return "done";
    return "again";
  };

  void (async () => {
    let failures = 0;
    while (!done) {
      try {
        const r = await once();
        if (r === "done") {
          done = true;
          h.onEnd?.();
          return;
        }
        failures = 0;
      } catch (e) {
        if (ctl.signal.aborted) return;
        if (e instanceof Error && /answered 4/.test(e.message)) {
          done = true;
          h.onEnd?.(e);
          return;
        }
        failures += 1;
      }
      if (done || ctl.signal.aborted) return;
      h.onConnection?.(false);
      // Back off a little more after each failure in a row, up to 30 s.
      const wait = Math.min(retryMs * 2 ** Math.min(failures, 4), 30_000);
      await new Promise((r) => setTimeout(r, failures === 0 ? Math.min(retryMs, 1000) : wait));
    }
  })();

  return () => {
    done = true;
    ctl.abort();
  };
}
