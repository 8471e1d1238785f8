// Retries: a create whose answer is lost is sent again with the same
// Idempotency-Key and makes one run; streams resume after a cut without
// repeating events; 429/5xx wait for Retry-After; timeouts and refused
// connections end in typed errors; commands are never sent twice.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  APIConnectionError,
  APITimeoutError,
  InternalServerError,
  InvalidRequestError,
  type RunEvent,
} from "@ephemeral/sdk";

import { startFake, problem } from "./support/fake.js";
import { since, useServer } from "./support/fixture.js";
import { startProxy, startSilentServer } from "./support/proxy.js";
import { tag } from "./support/server.js";

const fx = useServer();
const BUDGET = 100_000;

const SANDBOX = {
  id: "sbx_0123456789abcdef0123456789abcdef",
  object: "sandbox",
  status: "running",
  isolation: "wasm",
  created_at: "2026-12-04T21:48:00.123Z",
  expires_at: "2026-12-04T21:53:00.123Z",
  ended_at: null,
  end_reason: null,
  limits: {
    timeout_seconds: 300,
    idle_timeout_seconds: 120,
    command_timeout_seconds: 60,
    memory_bytes: 536870912,
    output_bytes: 1048576,
    disk_bytes: 67108864,
    disk_files: 10000,
  },
  cost: { reserved_micros: 100000, charged_micros: 0, released_micros: 0, compute_micros: 0 },
  metadata: {},
};

describe("retries", () => {
  test("a create whose answer is lost is retried with the same key: exactly one run", async () => {
    const proxy = await startProxy(fx.server.url, { mode: "drop", match: /^POST \/v1\/runs HTTP/m });
    try {
      const t = tag();
      const client = fx.client({ baseURL: proxy.url });
      const run = await client.runs.create({ prompt: "echo once", maxCostMicros: BUDGET, metadata: { t } });
      assert.ok(proxy.fired, "the proxy did not drop the first create");
      assert.equal(proxy.matches, 2, "one create dropped, one retried");
      const direct = fx.client();
      const mine = [];
      for await (const r of direct.runs.list({ limit: 100 })) if (r.metadata.t === t) mine.push(r.id);
      assert.deepEqual(mine, [run.id], "exactly one run exists");
      const done = await direct.runs.wait(run.id);
      assert.equal(done.output, "once\n");
    } finally {
      await proxy.close();
    }
  });

  test("a streamed create whose answer is lost: one run, every event once", async () => {
    const proxy = await startProxy(fx.server.url, { mode: "drop", match: /^POST \/v1\/runs HTTP/m });
    try {
      const t = tag();
      const client = fx.client({ baseURL: proxy.url });
      const stream = client.runs.stream({ prompt: "echo streamed", maxCostMicros: BUDGET, metadata: { t } });
      const events: RunEvent[] = [];
      for await (const e of stream) events.push(e);
      assert.equal(proxy.matches, 2);
      assert.deepEqual(
        events.map((e) => e.seq),
        events.map((_, i) => i + 1),
      );
      assert.equal(events.at(-1)?.type, "worker.destroyed");
      const mine = [];
      for await (const r of fx.client().runs.list({ limit: 100 })) if (r.metadata.t === t) mine.push(r.id);
      assert.deepEqual(mine, [stream.runId]);
    } finally {
      await proxy.close();
    }
  });

  test("a stream cut mid-event resumes with Last-Event-ID, without repeating an event", async () => {
    // The first answer of the POST is cut after 700 bytes: its headers, the
    // retry hint, a few events and half of one.
    const proxy = await startProxy(fx.server.url, { mode: "cut", match: /^POST \/v1\/runs HTTP/m, bytes: 700 });
    try {
      const client = fx.client({ baseURL: proxy.url });
      const stream = client.runs.stream({
        prompt: "echo 1\nsleep 1\necho 2\necho 3",
        maxCostMicros: BUDGET,
      });
      const events: RunEvent[] = [];
      for await (const e of stream) events.push(e);
      assert.ok(proxy.fired, "the proxy did not cut the stream");
      assert.deepEqual(
        events.map((e) => e.seq),
        events.map((_, i) => i + 1),
        "events missing or repeated",
      );
      assert.equal(events.at(-1)?.type, "worker.destroyed");
      const stored = await fx.client().runs.get(stream.runId ?? "");
      assert.equal(stored.timeline.length, events.length);
      const outputs = events.flatMap((e) => (e.type === "shell.output" ? [e.data.data] : []));
      assert.deepEqual(outputs, ["1\n", "2\n", "3\n"]);
    } finally {
      await proxy.close();
    }
  });

  test("runs.events resumes after a cut too", async () => {
    const client = fx.client();
    const run = await client.runs.create({ prompt: "echo a\necho b\necho c", maxCostMicros: BUDGET });
    await client.runs.wait(run.id);
    const proxy = await startProxy(fx.server.url, { mode: "cut", match: /^GET \/v1\/runs\/run_\w+\/events/m, bytes: 500 });
    try {
      const events: RunEvent[] = [];
      for await (const e of fx.client({ baseURL: proxy.url }).runs.events(run.id)) events.push(e);
      assert.ok(proxy.fired);
      assert.equal(proxy.matches, 2, "one cut, one resumed");
      assert.deepEqual(
        events.map((e) => e.seq),
        events.map((_, i) => i + 1),
      );
      assert.equal(events.at(-1)?.type, "worker.destroyed");
    } finally {
      await proxy.close();
    }
  });

  test("429 and 503 wait Retry-After, then succeed; one Idempotency-Key across the attempts", async () => {
    const fake = await startFake([
      { ...problem("rate-limited", 429, "Too many requests"), headers: { "retry-after": "1" } },
      { ...problem("shutting-down", 503, "The server is shutting down"), headers: { "retry-after": "1" } },
      { status: 201, body: { ...SANDBOX } },
    ]);
    try {
      const client = fx.client({ baseURL: fake.url });
      const start = Date.now();
      const sbx = await client.sandboxes.create({ maxCostMicros: BUDGET });
      assert.equal(sbx.id, SANDBOX.id);
      assert.equal(fake.requests.length, 3);
      const keys = fake.requests.map((r) => r.headers["idempotency-key"]);
      assert.match(keys[0] as string, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.deepEqual(keys, [keys[0], keys[0], keys[0]]);
      const gaps = fake.requests.slice(1).map((r, i) => r.at - (fake.requests[i]?.at ?? 0));
      assert.ok(gaps.every((g) => g >= 950), `Retry-After not honoured: gaps ${gaps.join(", ")} ms`);
      assert.ok(since(start) < 10);
      // The bodies of the attempts are the same bytes.
      assert.equal(new Set(fake.requests.map((r) => r.body)).size, 1);
      assert.deepEqual(JSON.parse(fake.requests[0]?.body ?? ""), { max_cost_micros: BUDGET });
    } finally {
      await fake.close();
    }
  });

  test("maxRetries bounds the attempts; the last error is thrown", async () => {
    const fake = await startFake([problem("internal", 500, "Internal error")]);
    try {
      const client = fx.client({ baseURL: fake.url, maxRetries: 1 });
      await assert.rejects(client.runs.get("run_00000000000000000000000000000000"), InternalServerError);
      assert.equal(fake.requests.length, 2);
      await assert.rejects(
        client.runs.get("run_00000000000000000000000000000000", { maxRetries: 0 }),
        InternalServerError,
      );
      assert.equal(fake.requests.length, 3);
    } finally {
      await fake.close();
    }
  });

  test("a 4xx other than 409 in-use and 429 is not retried", async () => {
    const fake = await startFake([problem("invalid-request", 400, "The request is malformed")]);
    try {
      const client = fx.client({ baseURL: fake.url });
      await assert.rejects(client.runs.create({ prompt: "x", maxCostMicros: 1 }), InvalidRequestError);
      assert.equal(fake.requests.length, 1);
    } finally {
      await fake.close();
    }
  });

  test("409 idempotency-key-in-use is retried (the first create is still being made)", async () => {
    const fake = await startFake([
      problem("idempotency-key-in-use", 409, "Request with this Idempotency-Key in progress"),
      { status: 201, body: { ...SANDBOX } },
    ]);
    try {
      const sbx = await fx.client({ baseURL: fake.url }).sandboxes.create({ maxCostMicros: BUDGET });
      assert.equal(sbx.id, SANDBOX.id);
      assert.equal(fake.requests.length, 2);
    } finally {
      await fake.close();
    }
  });

  test("commands are never retried, whatever the answer", async () => {
    const fake = await startFake((r) =>
      r.method === "GET" ? { status: 200, body: SANDBOX } : problem("internal", 500, "Internal error"),
    );
    try {
      const client = fx.client({ baseURL: fake.url, maxRetries: 5 });
      const sbx = await client.sandboxes.connect(SANDBOX.id);
      await assert.rejects(sbx.commands.run("echo hi"), InternalServerError);
      await assert.rejects(sbx.commands.run("echo hi", { onStdout: () => {} }), InternalServerError);
      const posts = fake.requests.filter((r) => r.method === "POST");
      assert.equal(posts.length, 2, "a command was sent more than once");
    } finally {
      await fake.close();
    }
  });

  test("no answer within timeoutMs: APITimeoutError, after the retries", async () => {
    const silent = await startSilentServer();
    try {
      const client = fx.client({ baseURL: silent.url, timeoutMs: 300, maxRetries: 1 });
      const start = Date.now();
      await assert.rejects(client.runs.list(), (e: unknown) => {
        assert.ok(e instanceof APITimeoutError && e instanceof APIConnectionError);
        assert.match(e.message, /GET \/v1\/runs: no answer within 300 ms/);
        return true;
      });
      assert.equal(silent.connections, 2);
      assert.ok(since(start) < 5);
      // The per-call option wins.
      await assert.rejects(client.health({ timeoutMs: 100, maxRetries: 0 }), APITimeoutError);
    } finally {
      await silent.close();
    }
  });

  test("a refused connection: APIConnectionError, after the retries", async () => {
    const silent = await startSilentServer();
    const url = silent.url;
    await silent.close(); // nothing listens there now
    const client = fx.client({ baseURL: url, maxRetries: 2 });
    const start = Date.now();
    await assert.rejects(client.runs.create({ prompt: "x", maxCostMicros: 1 }), (e: unknown) => {
      assert.ok(e instanceof APIConnectionError && !(e instanceof APITimeoutError));
      assert.match(e.message, /POST \/v1\/runs: connection failed/);
      return true;
    });
    // Backoff: about 0.5 s then 1 s.
    assert.ok(since(start) >= 0.7 && since(start) < 5, `took ${since(start)} s`);
  });
});
