// client.runs.files: the files a run's `outputs` collected, written to
// docs/api-shapes.md ("Runs", "Event streams") and API.md ("Files a run
// leaves behind"). Left out by EPHEMERAL_SDK_ONLY_RUNS=1 while they land.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";

import { NotFoundError, type RunEvent } from "@ephemeral/sdk";

import { useServer } from "./support/fixture.js";

const fx = useServer();
const BUDGET = 200_000;

const sha256 = (data: Uint8Array | string): string => createHash("sha256").update(data).digest("hex");

const PROMPT = [
  "echo report > report.txt",
  "mkdir -p out/sub",
  "printf '\\000\\001\\377' > out/sub/data.bin",
  "echo not collected > skip.log",
].join("\n");

describe("run files", () => {
  test("outputs are collected, announced before vm.destroyed, and listed", async () => {
    const client = fx.client();
    const created = await client.runs.create({ prompt: PROMPT, maxCostMicros: BUDGET, outputs: ["*.txt", "out/**"] });
    const run = await client.runs.wait(created.id);
    assert.equal(run.status, "succeeded");
    const types = run.timeline.map((e) => e.type);
    const collected = run.timeline.find((e) => e.type === "files.collected");
    assert.ok(collected?.type === "files.collected", `no files.collected in ${types.join(", ")}`);
    assert.ok(types.indexOf("files.collected") < types.indexOf("vm.destroyed"));
    assert.deepEqual(collected.data.files.map((f) => f.path).sort(), ["out/sub/data.bin", "report.txt"]);
    assert.deepEqual(collected.data.skipped, []);

    const list = await client.runs.files.list(run.id);
    assert.equal(list.object, "list");
    const byPath = new Map(list.data.map((f) => [f.path, f]));
    assert.deepEqual([...byPath.keys()].sort(), ["out/sub/data.bin", "report.txt"]);
    const report = byPath.get("report.txt");
    assert.equal(report?.size, 7);
    assert.equal(report?.sha256, sha256("report\n"));
    assert.equal(typeof report?.contentType, "string");
    assert.equal(byPath.get("out/sub/data.bin")?.sha256, sha256(new Uint8Array([0, 1, 255])));
  });

  test("download, read and readStream give the bytes with their headers", async () => {
    const client = fx.client();
    const created = await client.runs.create({ prompt: PROMPT, maxCostMicros: BUDGET, outputs: ["*.txt", "out/**"] });
    await client.runs.wait(created.id);

    const response = await client.runs.files.download(created.id, "report.txt");
    assert.equal(response.status, 200);
    assert.match(response.headers.get("content-type") ?? "", /^text\/plain/);
    assert.equal(response.headers.get("content-length"), "7");
    assert.equal(response.headers.get("etag"), `"${sha256("report\n")}"`);
    assert.equal(response.headers.get("content-disposition"), 'attachment; filename="report.txt"');
    assert.equal(await response.text(), "report\n");

    const bytes = await client.runs.files.read(created.id, "out/sub/data.bin");
    assert.deepEqual(bytes, new Uint8Array([0, 1, 255]));

    const parts: Uint8Array[] = [];
    for await (const part of await client.runs.files.readStream(created.id, "out/sub/data.bin")) parts.push(part);
    assert.deepEqual(new Uint8Array(Buffer.concat(parts)), bytes);

    await assert.rejects(client.runs.files.read(created.id, "skip.log"), NotFoundError);
    await assert.rejects(client.runs.files.download(created.id, "nope.txt"), NotFoundError);
  });

  test("a run without outputs has an empty list", async () => {
    const client = fx.client();
    const created = await client.runs.create({ prompt: "echo x > x.txt", maxCostMicros: BUDGET });
    await client.runs.wait(created.id);
    const list = await client.runs.files.list(created.id);
    assert.deepEqual(list, { object: "list", data: [] });
  });

  test("under zero data retention a file travels once, on the live stream", async () => {
    const client = fx.client();
    const stream = client.runs.stream({
      prompt: "echo secret > s.txt",
      maxCostMicros: BUDGET,
      outputs: ["s.txt"],
      zeroDataRetention: true,
    });
    const events: RunEvent[] = [];
    for await (const e of stream) events.push(e);
    const content = events.find((e) => e.type === "file.content");
    assert.ok(content?.type === "file.content", `no file.content in ${events.map((e) => e.type).join(", ")}`);
    assert.equal(content.data.path, "s.txt");
    assert.equal(atob(content.data.contentBase64), "secret\n");
    assert.equal(content.data.sha256, sha256("secret\n"));
    const list = await client.runs.files.list(stream.runId ?? "");
    assert.deepEqual(list.data, []);
  });

  test("an unknown run's files are a 404", async () => {
    await assert.rejects(fx.client().runs.files.list("run_00000000000000000000000000000000"), NotFoundError);
  });
});
