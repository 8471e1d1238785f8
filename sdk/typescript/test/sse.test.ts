// The SSE parser against the HTML standard's rules, with the inputs that
// break naive parsers: chunks split anywhere (inside a CRLF, inside a
// UTF-8 character), CR-only line ends, comments, multi-line data, a BOM.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { APITimeoutError } from "@ephemeral/sdk";
import { parseSSE, readSSE, type SSEMessage, SSEParser } from "@ephemeral/sdk/sse";

/** Feeds `parts` one by one, as chunks of a stream. */
function parseChunks(parts: string[]): SSEMessage[] {
  const events: SSEMessage[] = [];
  const parser = new SSEParser({ onEvent: (e) => events.push(e) });
  for (const p of parts) parser.feed(p);
  parser.end();
  return events;
}

/** A byte stream of the given chunks. */
function byteStream(chunks: Uint8Array[], onCancel?: () => void): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const c = chunks[i++];
      if (c) controller.enqueue(c);
      else controller.close();
    },
    cancel() {
      onCancel?.();
    },
  });
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<SSEMessage[]> {
  const out: SSEMessage[] = [];
  for await (const e of readSSE(stream)) out.push(e);
  return out;
}

const SAMPLE =
  "retry: 2000\n\nid: 1\nevent: budget.reserved\ndata: {\"reserved_micros\":5}\n\n" +
  ": keep-alive\n\nid: 2\nevent: shell.output\ndata: {\"data\":\"héllo ✓ 🎉\"}\n\n";

describe("SSE parser", () => {
  test("id, event and data of each event", () => {
    assert.deepEqual(parseSSE(SAMPLE), [
      { type: "budget.reserved", data: '{"reserved_micros":5}', id: "1" },
      { type: "shell.output", data: '{"data":"héllo ✓ 🎉"}', id: "2" },
    ]);
  });

  test("data lines join with LF; an event without `event:` is a message", () => {
    assert.deepEqual(parseSSE("data: a\ndata:b\ndata:  c\ndata\n\n"), [
      { type: "message", data: "a\nb\n c\n", id: "" },
    ]);
  });

  test("comments are skipped and reported", () => {
    const comments: string[] = [];
    const events: SSEMessage[] = [];
    const p = new SSEParser({ onEvent: (e) => events.push(e), onComment: (c) => comments.push(c) });
    p.feed(": keep-alive\n:\ndata: x\n: inside an event\n\n");
    assert.deepEqual(comments, [" keep-alive", "", " inside an event"]);
    assert.deepEqual(events, [{ type: "message", data: "x", id: "" }]);
  });

  test("CRLF, CR and LF line ends, mixed", () => {
    const text = "id: 1\r\nevent: a\rdata: one\n\r\nid: 2\revent: b\r\ndata: two\r\r";
    assert.deepEqual(parseSSE(text), [
      { type: "a", data: "one", id: "1" },
      { type: "b", data: "two", id: "2" },
    ]);
  });

  test("a CRLF split between two chunks is one line end", () => {
    // Read as two line ends, the LF would end the event early: "a" and "b" apart.
    assert.deepEqual(parseChunks(["data: a\r", "\ndata: b\r\n\r\n"]), [{ type: "message", data: "a\nb", id: "" }]);
    // A lone CR at the end of a chunk followed by something else is a line end by itself.
    assert.deepEqual(parseChunks(["data: a\r", "data: b\r", "\r"]), [{ type: "message", data: "a\nb", id: "" }]);
  });

  test("the same events however the text is split (every split point, and byte by byte)", () => {
    const text = "\uFEFF" + SAMPLE.replace(/\n/g, "\r\n") + "id: 3\revent: x\rdata: y\r\r";
    const whole = parseSSE(text);
    assert.equal(whole.length, 3);
    for (let i = 0; i <= text.length; i++) {
      assert.deepEqual(parseChunks([text.slice(0, i), text.slice(i)]), whole, `split at ${i}`);
    }
    assert.deepEqual(parseChunks([...text]), whole);
  });

  test("bytes split inside a UTF-8 character decode whole", async () => {
    const bytes = new TextEncoder().encode(SAMPLE);
    const expected = parseSSE(SAMPLE);
    for (let i = 1; i < bytes.length; i++) {
      const got = await collect(byteStream([bytes.subarray(0, i), bytes.subarray(i)]));
      assert.deepEqual(got, expected, `split at byte ${i}`);
    }
    const oneByOne = Array.from(bytes, (b) => new Uint8Array([b]));
    assert.deepEqual(await collect(byteStream(oneByOne)), expected);
  });

  test("one leading BOM is dropped, a second one is data", async () => {
    assert.deepEqual(parseSSE("\uFEFFdata: x\n\n"), [{ type: "message", data: "x", id: "" }]);
    // After the first BOM, "\uFEFFdata" is a field named "\uFEFFdata": unknown, ignored.
    assert.deepEqual(parseSSE("\uFEFF\uFEFFdata: x\n\n"), []);
    // The BOM as bytes (EF BB BF), split from the rest.
    const bom = new Uint8Array([0xef, 0xbb]);
    const rest = new Uint8Array([0xbf, ...new TextEncoder().encode("data: x\n\n")]);
    assert.deepEqual(await collect(byteStream([bom, rest])), [{ type: "message", data: "x", id: "" }]);
    // A BOM later in the stream is not dropped.
    assert.deepEqual(parseChunks(["data: a\n\n", "\uFEFFdata: b\n\n"]), [{ type: "message", data: "a", id: "" }]);
  });

  test("the last event id carries over; an id with NUL is ignored", () => {
    assert.deepEqual(parseSSE("id: 7\ndata: a\n\ndata: b\n\nid: 8\u0000x\ndata: c\n\nid\ndata: d\n\n"), [
      { type: "message", data: "a", id: "7" },
      { type: "message", data: "b", id: "7" },
      { type: "message", data: "c", id: "7" },
      { type: "message", data: "d", id: "" },
    ]);
  });

  test("retry: digits only", () => {
    const retries: number[] = [];
    const p = new SSEParser({ onEvent: () => {}, onRetry: (ms) => retries.push(ms) });
    p.feed("retry: 2000\nretry: 1.5\nretry: -1\nretry: abc\nretry:300\n\n");
    assert.deepEqual(retries, [2000, 300]);
  });

  test("an event with no data is not dispatched, and its type does not leak into the next", () => {
    assert.deepEqual(parseSSE("event: ping\n\ndata: x\n\n"), [{ type: "message", data: "x", id: "" }]);
  });

  test("unknown fields and a space-less colon", () => {
    assert.deepEqual(parseSSE("foo: bar\nevent:e\ndata:x:y\n\n"), [{ type: "e", data: "x:y", id: "" }]);
  });

  test("an event cut off by the end of the stream is dropped, not half-dispatched", async () => {
    assert.deepEqual(parseSSE("id: 1\ndata: whole\n\nid: 2\ndata: half"), [{ type: "message", data: "whole", id: "1" }]);
    assert.deepEqual(parseSSE("data: no blank line\n"), []);
    const bytes = new TextEncoder().encode("id: 1\ndata: a\n\nid: 2\ndata: b\n");
    assert.deepEqual(await collect(byteStream([bytes])), [{ type: "message", data: "a", id: "1" }]);
  });

  test("end() lets a parser start over (a new connection), keeping the last id", () => {
    const events: SSEMessage[] = [];
    const p = new SSEParser({ onEvent: (e) => events.push(e) });
    p.feed("id: 4\ndata: a\n\nid: 5\ndata: cut");
    p.end();
    p.feed("\uFEFFdata: b\n\n");
    assert.deepEqual(events, [
      { type: "message", data: "a", id: "4" },
      { type: "message", data: "b", id: "4" },
    ]);
    assert.equal(p.lastEventId, "4");
  });

  test("a silent stream is an APITimeoutError, and the stream is cancelled", async () => {
    let cancelled = false;
    const silent = new ReadableStream<Uint8Array>({
      pull: () => new Promise(() => {}),
      cancel: () => {
        cancelled = true;
      },
    });
    const started = Date.now();
    await assert.rejects(async () => {
      for await (const _ of readSSE(silent, { idleTimeoutMs: 150 })) {
        // nothing arrives
      }
    }, APITimeoutError);
    assert.ok(Date.now() - started < 2_000);
    assert.ok(cancelled);
  });

  test("stopping the loop early cancels the stream", async () => {
    let cancelled = false;
    const bytes = new TextEncoder().encode("data: 1\n\ndata: 2\n\n");
    const stream = byteStream([bytes, bytes, bytes], () => {
      cancelled = true;
    });
    for await (const e of readSSE(stream)) {
      assert.equal(e.data, "1");
      break;
    }
    assert.ok(cancelled);
  });
});
