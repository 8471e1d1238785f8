// AbortSignal: every call stops when its signal aborts — before it is
// sent, while it waits for an answer, between retries, mid-stream — and
// rejects with the signal's reason, promptly.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { since, useServer } from "./support/fixture.js";
import { startFake, problem } from "./support/fake.js";
import { startSilentServer } from "./support/proxy.js";

const fx = useServer();
const BUDGET = 100_000;

function isAbort(e: unknown): boolean {
  return e instanceof Error && e.name === "AbortError";
}

/** The server's count of open event-stream readers. */
async function sseReaders(): Promise<number> {
  const text = await (await fetch(`${fx.server.url}/metrics`)).text();
  const m = /^ephemeral_sse_readers (\d+)/m.exec(text);
  return Number(m?.[1] ?? NaN);
}

async function eventually(check: () => Promise<boolean>, seconds = 5): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (since(start) > seconds) assert.fail("not within time");
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("abort", () => {
  test("an aborted signal stops a call before it is sent", async () => {
    const fake = await startFake([{ status: 200, body: {} }]);
    try {
      const client = fx.client({ baseURL: fake.url });
      const signal = AbortSignal.abort();
      await assert.rejects(client.runs.list({}, { signal }), isAbort);
      await assert.rejects(client.runs.create({ prompt: "x", maxCostMicros: 1 }, { signal }), isAbort);
      assert.equal(fake.requests.length, 0);
    } finally {
      await fake.close();
    }
  });

  test("the signal's own reason is what the call rejects with", async () => {
    const client = fx.client();
    const reason = new Error("user gave up");
    const controller = new AbortController();
    controller.abort(reason);
    await assert.rejects(client.health({ signal: controller.signal }), (e) => e === reason);
  });

  test("abort while waiting for an answer", async () => {
    const silent = await startSilentServer();
    try {
      const client = fx.client({ baseURL: silent.url, timeoutMs: 60_000 });
      const start = Date.now();
      await assert.rejects(client.runs.get("run_x", { signal: AbortSignal.timeout(200) }), (e: unknown) => {
        // AbortSignal.timeout's reason is a TimeoutError DOMException.
        assert.ok(e instanceof Error && e.name === "TimeoutError");
        return true;
      });
      assert.ok(since(start) < 3);
    } finally {
      await silent.close();
    }
  });

  test("abort while waiting between retries", async () => {
    const fake = await startFake([{ ...problem("rate-limited", 429, "Too many requests"), headers: { "retry-after": "30" } }]);
    try {
      const client = fx.client({ baseURL: fake.url, maxRetries: 5 });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 300);
      const start = Date.now();
      await assert.rejects(client.runs.list({}, { signal: controller.signal }), isAbort);
      assert.ok(since(start) < 3);
      assert.equal(fake.requests.length, 1);
    } finally {
      await fake.close();
    }
  });

  test("abort mid-stream stops the iteration and closes the connection", async () => {
    const client = fx.client();
    const controller = new AbortController();
    const stream = client.runs.stream(
      { prompt: "echo start\nsleep 20", maxCostMicros: BUDGET },
      { signal: controller.signal },
    );
    const start = Date.now();
    const types: string[] = [];
    await assert.rejects(async () => {
      for await (const e of stream) {
        types.push(e.type);
        if (e.type === "shell.output") {
          assert.ok((await sseReaders()) >= 1, "no stream open on the server");
          controller.abort();
        }
      }
    }, isAbort);
    assert.ok(since(start) < 5);
    assert.ok(types.includes("shell.output"));
    await eventually(async () => (await sseReaders()) === 0);
    await client.runs.cancel(stream.runId ?? "");
  });

  test("breaking out of a stream closes the connection (the run goes on)", async () => {
    const client = fx.client();
    const run = await client.runs.create({ prompt: "echo a\nsleep 20", maxCostMicros: BUDGET });
    for await (const e of client.runs.events(run.id)) {
      if (e.type === "shell.output") {
        assert.ok((await sseReaders()) >= 1, "no stream open on the server");
        break;
      }
    }
    await eventually(async () => (await sseReaders()) === 0);
    const now = await client.runs.get(run.id);
    assert.equal(now.status, "running");
    await client.runs.cancel(run.id);
  });

  test("abort while waiting for a run", async () => {
    const client = fx.client();
    const run = await client.runs.create({ prompt: "sleep 20", maxCostMicros: BUDGET });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const start = Date.now();
    await assert.rejects(client.runs.wait(run.id, { signal: controller.signal }), isAbort);
    assert.ok(since(start) < 3);
    await client.runs.cancel(run.id);
  });

  test("abort during the auto-pager", async () => {
    const client = fx.client();
    await client.runs.create({ prompt: "true", maxCostMicros: BUDGET });
    await client.runs.create({ prompt: "true", maxCostMicros: BUDGET });
    const controller = new AbortController();
    let n = 0;
    await assert.rejects(async () => {
      for await (const _ of client.runs.list({ limit: 1 }, { signal: controller.signal })) {
        n++;
        controller.abort();
      }
    }, isAbort);
    assert.equal(n, 1);
  });
});
