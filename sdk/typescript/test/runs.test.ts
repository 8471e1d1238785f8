// Every method of client.runs against a real server (the `ephemeral/script`
// model runs each prompt line as a shell command).

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { APITimeoutError, ConflictError, type Run, type RunEvent } from "@ephemeral/sdk";

import { since, useServer } from "./support/fixture.js";
import { tag } from "./support/server.js";

const fx = useServer();
const BUDGET = 200_000;

/** No snake_case key anywhere in an SDK object, except inside `metadata`. */
function assertCamel(value: unknown, path = "$"): void {
  if (Array.isArray(value)) return value.forEach((v, i) => assertCamel(v, `${path}[${i}]`));
  if (!value || typeof value !== "object") return;
  for (const [k, v] of Object.entries(value)) {
    assert.ok(!/_/.test(k), `snake_case key ${path}.${k}`);
    if (k !== "metadata") assertCamel(v, `${path}.${k}`);
  }
}

function assertTimeline(events: { seq: number; type: string }[]): void {
  assert.ok(events.length > 0, "no events");
  events.forEach((e, i) => assert.equal(e.seq, i + 1, `event ${i} has seq ${e.seq}`));
  assert.equal(events[0]?.type, "budget.reserved");
  assert.equal(events.at(-1)?.type, "worker.destroyed");
}

describe("runs", () => {
  test("create answers the queued run, in camelCase, metadata keys as given", async () => {
    const client = fx.client();
    const run = await client.runs.create({
      prompt: "echo hi",
      maxCostMicros: BUDGET,
      timeoutSeconds: 60,
      metadata: { build_id: "b-1", camelKey: "x" },
    });
    assert.match(run.id, /^run_[0-9a-f]{32}$/);
    assert.equal(run.object, "run");
    assert.ok(["queued", "running"].includes(run.status));
    assert.equal(run.model, "ephemeral/script");
    assert.equal(run.permissions.maxCostMicros, BUDGET);
    assert.equal(run.permissions.timeoutSeconds, 60);
    assert.equal(run.permissions.shell, true);
    assert.equal(run.permissions.web, false);
    assert.equal(run.cost.reservedMicros, BUDGET);
    assert.deepEqual(run.metadata, { build_id: "b-1", camelKey: "x" });
    assertCamel(run);
  });

  test("wait answers the ended run with its whole timeline; the ledger adds up", async () => {
    const client = fx.client();
    const created = await client.runs.create({ prompt: "echo hi\necho there >&2", maxCostMicros: BUDGET });
    const run = await client.runs.wait(created.id, { timeoutMs: 60_000 });
    assert.equal(run.id, created.id);
    assert.equal(run.status, "succeeded");
    assert.equal(run.output, "hi\n");
    assert.equal(run.error, null);
    assert.equal(run.isolation, "wasm");
    assert.ok(run.endedAt && run.startedAt);
    assertTimeline(run.timeline);
    const c = run.cost;
    assert.equal(c.chargedMicros + c.releasedMicros, c.reservedMicros);
    assert.equal(c.modelMicros + c.webMicros + c.computeMicros, c.chargedMicros);
    const stderr = run.timeline.find((e) => e.type === "shell.output" && e.data.stream === "stderr");
    assert.ok(stderr && stderr.type === "shell.output");
    assert.equal(stderr.data.data, "there\n");
    assertCamel(run);
  });

  test("get answers the run and its timeline so far", async () => {
    const client = fx.client();
    const created = await client.runs.create({ prompt: "echo got", maxCostMicros: BUDGET });
    await client.runs.wait(created.id);
    const run = await client.runs.get(created.id);
    assert.equal(run.status, "succeeded");
    assertTimeline(run.timeline);
    const first = run.timeline[0];
    assert.ok(first?.type === "budget.reserved");
    assert.equal(first.data.reservedMicros, BUDGET);
    assert.equal(typeof first.data.tMs, "number");
    assert.match(first.data.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const exit = run.timeline.find((e) => e.type === "shell.exit");
    assert.ok(exit?.type === "shell.exit");
    assert.equal(exit.data.exitCode, 0);
    assert.equal(exit.data.callId, "call_1");
  });

  test("stream yields the live events of a new run, once each, in order", async () => {
    const client = fx.client();
    const stream = client.runs.stream({ prompt: "echo one\nsleep 1\necho two", maxCostMicros: BUDGET });
    const events: RunEvent[] = [];
    const arrived: number[] = [];
    const start = Date.now();
    for await (const event of stream) {
      events.push(event);
      arrived.push(Date.now() - start);
    }
    assert.match(stream.runId ?? "", /^run_[0-9a-f]{32}$/);
    assertTimeline(events);
    const outputs = events.flatMap((e) => (e.type === "shell.output" ? [e.data.data] : []));
    assert.deepEqual(outputs, ["one\n", "two\n"]);
    const succeeded = events.find((e) => e.type === "run.succeeded");
    assert.ok(succeeded?.type === "run.succeeded");
    assert.equal(succeeded.data.output, "one\ntwo\n");
    // Live: the first events came well before the last (the run sleeps 1 s in between).
    assert.ok((arrived.at(-1) ?? 0) - (arrived[0] ?? 0) >= 800, `arrivals ${arrived.join(",")}`);
    const stored = await client.runs.get(stream.runId ?? "");
    assert.equal(stored.timeline.length, events.length);
  });

  test("a RunStream can be iterated once", async () => {
    const client = fx.client();
    const stream = client.runs.stream({ prompt: "true", maxCostMicros: BUDGET });
    for await (const _ of stream) {
      // drain
    }
    assert.throws(() => stream[Symbol.asyncIterator](), /only once/);
  });

  test("events replays a finished run, and resumes after `after`", async () => {
    const client = fx.client();
    const created = await client.runs.create({ prompt: "echo a\necho b", maxCostMicros: BUDGET });
    await client.runs.wait(created.id);
    const all: RunEvent[] = [];
    for await (const e of client.runs.events(created.id)) all.push(e);
    assertTimeline(all);
    const rest: RunEvent[] = [];
    for await (const e of client.runs.events(created.id, { after: 3 })) rest.push(e);
    assert.deepEqual(
      rest.map((e) => e.seq),
      all.slice(3).map((e) => e.seq),
    );
    assert.deepEqual(rest, all.slice(3));
  });

  test("events follows a live run until its last event", async () => {
    const client = fx.client();
    const created = await client.runs.create({ prompt: "sleep 1\necho late", maxCostMicros: BUDGET });
    const types: string[] = [];
    for await (const e of client.runs.events(created.id)) types.push(e.type);
    assert.equal(types[0], "budget.reserved");
    assert.ok(types.includes("run.succeeded"));
    assert.equal(types.at(-1), "worker.destroyed");
  });

  test("list pages newest first, and the auto-pager walks every page", async () => {
    const client = fx.client();
    const t = tag();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await client.runs.create({ prompt: "true", maxCostMicros: BUDGET, metadata: { t } })).id);
    }
    const page = await client.runs.list({ limit: 2 });
    assert.equal(page.object, "list");
    assert.equal(page.data.length, 2);
    assert.equal(page.hasMore, true);
    assert.equal(page.nextBefore, page.data[1]?.id);
    assert.deepEqual(
      page.data.map((r) => r.id),
      [ids[2], ids[1]],
    );
    assertCamel(page.data);

    const seen: Run[] = [];
    for await (const run of client.runs.list({ limit: 1 })) seen.push(run);
    const mine = seen.filter((r) => r.metadata.t === t).map((r) => r.id);
    assert.deepEqual(mine, [...ids].reverse());
    assert.equal(new Set(seen.map((r) => r.id)).size, seen.length, "a run listed twice");

    const after = await client.runs.list({ limit: 100, before: ids[2] });
    assert.equal(after.data[0]?.id, ids[1]);
  });

  test("cancel stops a running run; cancelling it again is a ConflictError", async () => {
    const client = fx.client();
    const created = await client.runs.create({ prompt: "sleep 30", maxCostMicros: BUDGET });
    const start = Date.now();
    const answer = await client.runs.cancel(created.id);
    assert.equal(answer.id, created.id);
    const run = await client.runs.wait(created.id, { timeoutMs: 20_000 });
    assert.ok(since(start) < 15);
    assert.equal(run.status, "cancelled");
    assert.equal(run.error?.code, "cancelled");
    assert.ok(run.timeline.some((e) => e.type === "run.cancelled"));
    await assert.rejects(client.runs.cancel(created.id), (e: unknown) => {
      assert.ok(e instanceof ConflictError);
      assert.equal(e.status, 409);
      assert.equal(e.type, "/problems/run-finished");
      assert.equal(e.slug, "run-finished");
      return true;
    });
  });

  test("wait gives up at its timeoutMs with an APITimeoutError", async () => {
    const client = fx.client();
    const created = await client.runs.create({ prompt: "sleep 20", maxCostMicros: BUDGET });
    const start = Date.now();
    await assert.rejects(client.runs.wait(created.id, { timeoutMs: 500 }), APITimeoutError);
    assert.ok(since(start) < 5);
    await client.runs.cancel(created.id);
  });

  test("files go in as text, base64 and bytes", async () => {
    const client = fx.client();
    const created = await client.runs.create({
      prompt: "cat a.txt\ncat b.txt\nod -An -tu1 c.bin",
      maxCostMicros: BUDGET,
      files: [
        { path: "a.txt", content: "alpha\n" },
        { path: "b.txt", contentBase64: btoa("beta\n") },
        { path: "c.bin", bytes: new Uint8Array([0, 1, 254, 255]) },
      ],
    });
    assert.deepEqual(created.permissions.files, ["a.txt", "b.txt", "c.bin"]);
    const run = await client.runs.wait(created.id);
    assert.equal(run.status, "succeeded");
    assert.equal(run.output?.replace(/\s+/g, " ").trim(), "alpha beta 0 1 254 255");
  });

  test("the same Idempotency-Key and body give back the same run", async () => {
    const client = fx.client();
    const key = `sdk-test-${tag()}`;
    const a = await client.runs.create({ prompt: "true", maxCostMicros: BUDGET }, { idempotencyKey: key });
    const b = await client.runs.create({ prompt: "true", maxCostMicros: BUDGET }, { idempotencyKey: key });
    assert.equal(a.id, b.id);
  });

  test("a request's options reach the server: model, shell off, zero data retention", async () => {
    const client = fx.client();
    const created = await client.runs.create({
      prompt: "echo never",
      maxCostMicros: BUDGET,
      model: "ephemeral/script",
      shell: false,
      zeroDataRetention: true,
    });
    assert.equal(created.permissions.shell, false);
    assert.equal(created.permissions.zeroDataRetention, true);
    const run = await client.runs.wait(created.id);
    // The script model needs the shell: with it off, the run fails and nothing ran.
    assert.equal(run.status, "failed");
    assert.equal(run.error?.code, "shell_disabled");
  });
});
