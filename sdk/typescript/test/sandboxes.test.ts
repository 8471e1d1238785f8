// client.sandboxes and a Sandbox's methods against a real server, written
// to docs/api-shapes.md ("Sandboxes"). Left out by EPHEMERAL_SDK_ONLY_RUNS=1
// while the endpoints land.

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";

import {
  ConflictError,
  EphemeralError,
  InsufficientFundsError,
  InvalidRequestError,
  NotFoundError,
  Sandbox,
  type SandboxEvent,
} from "@ephemeral/sdk";

import { since, useServer } from "./support/fixture.js";
import { startProxy } from "./support/proxy.js";
import { tag } from "./support/server.js";

const fx = useServer();
const BUDGET = 500_000;

const sha256 = (data: Uint8Array | string): string => createHash("sha256").update(data).digest("hex");

/** A sandbox for one test, killed after it whatever happens. */
async function withSandbox(fn: (sbx: Sandbox) => Promise<void>, metadata: Record<string, string> = {}): Promise<void> {
  const sbx = await fx.client().sandboxes.create({ maxCostMicros: BUDGET, metadata });
  try {
    await fn(sbx);
  } finally {
    await sbx.kill().catch(() => {});
  }
}

describe("sandboxes", () => {
  test("create answers a running sandbox, in camelCase", async () => {
    const client = fx.client();
    const sbx = await client.sandboxes.create({
      maxCostMicros: BUDGET,
      timeoutSeconds: 120,
      idleTimeoutSeconds: 60,
      metadata: { job_id: "j-1" },
    });
    try {
      assert.ok(sbx instanceof Sandbox);
      assert.match(sbx.id, /^sbx_[0-9a-f]{32}$/);
      assert.equal(sbx.object, "sandbox");
      assert.equal(sbx.status, "running");
      assert.equal(typeof sbx.isolation, "string");
      assert.equal(sbx.endedAt, null);
      assert.equal(sbx.endReason, null);
      assert.equal(sbx.limits.timeoutSeconds, 120);
      assert.equal(sbx.limits.idleTimeoutSeconds, 60);
      assert.equal(typeof sbx.limits.commandTimeoutSeconds, "number");
      assert.equal(typeof sbx.limits.memoryBytes, "number");
      assert.equal(sbx.cost.reservedMicros, BUDGET);
      assert.deepEqual(sbx.metadata, { job_id: "j-1" });
      assert.equal(Date.parse(sbx.expiresAt) - Date.parse(sbx.createdAt), 120_000);
      const json = JSON.parse(JSON.stringify(sbx)) as Record<string, unknown>;
      assert.deepEqual(Object.keys(json).sort(), [
        "cost", "createdAt", "endReason", "endedAt", "expiresAt", "id", "isolation", "limits", "metadata", "object", "status",
      ]);
    } finally {
      await sbx.kill();
    }
  });

  test("commands.run answers exit code, stdout, stderr, duration; a failing command is an answer", async () => {
    await withSandbox(async (sbx) => {
      const ok = await sbx.commands.run("echo hi");
      assert.deepEqual({ ...ok, durationMs: 0 }, {
        exitCode: 0, stdout: "hi\n", stderr: "", durationMs: 0, truncated: false, limit: null,
      });
      assert.equal(typeof ok.durationMs, "number");
      const bad = await sbx.commands.run("echo oops >&2; exit 3");
      assert.equal(bad.exitCode, 3);
      assert.equal(bad.stderr, "oops\n");
      assert.equal(bad.stdout, "");
    });
  });

  test("shell state carries over from one command to the next", async () => {
    await withSandbox(async (sbx) => {
      await sbx.commands.run("mkdir -p work && cd work && export FOO=bar && echo x > here.txt");
      const r = await sbx.commands.run('basename "$(pwd)"; echo $FOO; cat here.txt');
      assert.equal(r.stdout, "work\nbar\nx\n");
    });
  });

  test("stdin and env (names sent as given, this command only)", async () => {
    await withSandbox(async (sbx) => {
      const r = await sbx.commands.run('cat; echo "$GREETING $snake_case_name"', {
        stdin: "from stdin\n",
        env: { GREETING: "hello", snake_case_name: "world" },
      });
      assert.equal(r.stdout, "from stdin\nhello world\n");
      const after = await sbx.commands.run('echo "[$GREETING]"');
      assert.equal(after.stdout, "[]\n");
    });
  });

  test("onStdout/onStderr get the output as it is written, and the answer has it whole", async () => {
    await withSandbox(async (sbx) => {
      const chunks: { stream: string; data: string; at: number }[] = [];
      const start = Date.now();
      const r = await sbx.commands.run("echo a; sleep 1; echo b >&2; echo c", {
        onStdout: (data) => chunks.push({ stream: "stdout", data, at: Date.now() - start }),
        onStderr: (data) => chunks.push({ stream: "stderr", data, at: Date.now() - start }),
      });
      assert.equal(r.exitCode, 0);
      assert.equal(r.stdout, "a\nc\n");
      assert.equal(r.stderr, "b\n");
      assert.equal(chunks.map((c) => c.data).join(""), "a\nb\nc\n", "write order");
      assert.deepEqual(chunks.map((c) => c.stream), ["stdout", "stderr", "stdout"]);
      const first = chunks[0]?.at ?? 0;
      const last = chunks.at(-1)?.at ?? 0;
      assert.ok(last - first >= 800, `not live: chunks at ${chunks.map((c) => c.at).join(", ")} ms`);
    });
  });

  test("a command's timeoutSeconds stops it and names the limit", async () => {
    await withSandbox(async (sbx) => {
      const start = Date.now();
      const r = await sbx.commands.run("sleep 30", { timeoutSeconds: 1 });
      assert.equal(r.limit, "command_timeout");
      assert.ok(since(start) < 10);
      assert.notEqual(r.exitCode, 0);
    });
  });

  test("abort a command with its signal", async () => {
    await withSandbox(async (sbx) => {
      const start = Date.now();
      await assert.rejects(
        sbx.commands.run("sleep 30", { signal: AbortSignal.timeout(300) }),
        (e: unknown) => e instanceof Error && e.name === "TimeoutError",
      );
      await assert.rejects(
        sbx.commands.run("sleep 30", { onStdout: () => {}, signal: AbortSignal.timeout(300) }),
        (e: unknown) => e instanceof Error && e.name === "TimeoutError",
      );
      assert.ok(since(start) < 5);
    });
  });

  test("files: write text, bytes, a Blob, a stream; read them back", async () => {
    await withSandbox(async (sbx) => {
      const text = "héllo wörld\n";
      const written = await sbx.files.write("a.txt", text);
      assert.equal(written.object, "file");
      assert.match(written.path, /^\/tmp\/ephemeral-run-[A-Za-z0-9]{6}\/scratch\/a\.txt$/);
      assert.equal(written.size, new TextEncoder().encode(text).length);
      assert.equal(written.sha256, sha256(text));
      assert.equal(await sbx.files.readText("a.txt"), text);
      assert.equal((await sbx.commands.run("cat a.txt")).stdout, text);

      const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
      assert.equal((await sbx.files.write("all.bin", bytes)).sha256, sha256(bytes));
      assert.deepEqual(await sbx.files.read("all.bin"), bytes);

      const blob = new Blob(["from ", "a blob"]);
      await sbx.files.write("blob.txt", blob);
      assert.equal(await sbx.files.readText("blob.txt"), "from a blob");

      // 4 MiB made chunk by chunk as the upload pulls it.
      const chunk = new Uint8Array(64 * 1024).map((_, i) => i % 251);
      let pulled = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (pulled === 64) return controller.close();
          pulled++;
          controller.enqueue(chunk.slice());
        },
      });
      const hash = createHash("sha256");
      for (let i = 0; i < 64; i++) hash.update(chunk);
      const big = await sbx.files.write("big.bin", stream);
      assert.equal(big.size, 64 * chunk.length);
      assert.equal(big.sha256, hash.digest("hex"));
      assert.equal(pulled, 64);

      // readStream: the same bytes, as a stream.
      const back = createHash("sha256");
      let size = 0;
      for await (const part of await sbx.files.readStream("big.bin")) {
        back.update(part);
        size += part.length;
      }
      assert.equal(size, big.size);
      assert.equal(back.digest("hex"), big.sha256);
    });
  });

  test("files: absolute paths under /tmp, odd names, list, remove", async () => {
    await withSandbox(async (sbx) => {
      await sbx.files.write("/tmp/abs.txt", "abs");
      assert.equal(await sbx.files.readText("/tmp/abs.txt"), "abs");
      assert.equal((await sbx.commands.run("cat /tmp/abs.txt")).stdout, "abs");

      const odd = "sp ace #?%ü.txt";
      await sbx.files.write(odd, "odd");
      assert.equal(await sbx.files.readText(odd), "odd");
      assert.equal((await sbx.commands.run(`cat '${odd}'`)).stdout, "odd");

      await sbx.commands.run("mkdir -p sub && echo s > sub/s.txt");
      const list = await sbx.files.list();
      assert.equal(list.object, "list");
      const names = list.data.map((e) => e.path.split("/").at(-1));
      assert.ok(names.includes(odd) && names.includes("sub"), `listed ${names.join(", ")}`);
      const sub = list.data.find((e) => e.path.endsWith("/sub") || e.path === "sub");
      assert.equal(sub?.type, "dir");
      const file = list.data.find((e) => e.path.endsWith(odd));
      assert.equal(file?.type, "file");
      assert.equal(file?.size, 3);
      assert.match(file?.mode ?? "", /^0[0-7]{3}$/);
      assert.ok(!Number.isNaN(Date.parse(file?.modifiedAt ?? "")));
      const inSub = await sbx.files.list({ dir: "sub" });
      assert.deepEqual(inSub.data.map((e) => e.path.split("/").at(-1)), ["s.txt"]);

      await sbx.files.remove(odd);
      await assert.rejects(sbx.files.read(odd), NotFoundError);
      await assert.rejects(sbx.files.remove(odd), NotFoundError);
    });
  });

  test("a path outside the sandbox is a 400 naming `path`; `..` is refused before sending", async () => {
    await withSandbox(async (sbx) => {
      await assert.rejects(sbx.files.write("/etc/passwd", "x"), (e: unknown) => {
        assert.ok(e instanceof InvalidRequestError);
        assert.equal(e.field, "path");
        return true;
      });
      await assert.rejects(sbx.files.read("../../etc/passwd"), (e: unknown) => {
        assert.ok(e instanceof EphemeralError && !(e instanceof InvalidRequestError));
        assert.match(e.message, /\.\./);
        return true;
      });
    });
  });

  test("files given at create are there", async () => {
    const sbx = await fx.client().sandboxes.create({
      maxCostMicros: BUDGET,
      files: [
        { path: "in.txt", content: "given\n" },
        { path: "in.bin", bytes: new Uint8Array([1, 2, 3]) },
      ],
    });
    try {
      assert.equal(await sbx.files.readText("in.txt"), "given\n");
      assert.deepEqual(await sbx.files.read("in.bin"), new Uint8Array([1, 2, 3]));
    } finally {
      await sbx.kill();
    }
  });

  test("get, connect, refresh and list", async () => {
    const client = fx.client();
    const t = tag();
    await withSandbox(async (sbx) => {
      const got = await client.sandboxes.get(sbx.id);
      assert.equal(got.id, sbx.id);
      assert.equal(got.status, "running");
      const other = await client.sandboxes.connect(sbx.id);
      assert.equal((await other.commands.run("echo via connect")).stdout, "via connect\n");
      await sbx.refresh();
      assert.equal(sbx.status, "running");
      assert.ok(sbx.cost.computeMicros >= 0);

      const page = await client.sandboxes.list({ limit: 1 });
      assert.equal(page.object, "list");
      assert.equal(page.data.length, 1);
      assert.ok(page.data[0] instanceof Sandbox);
      const all = [];
      for await (const s of client.sandboxes.list({ limit: 1 })) all.push(s);
      assert.ok(all.some((s) => s.id === sbx.id && s.metadata.t === t));
      assert.equal(new Set(all.map((s) => s.id)).size, all.length);
    }, { t });
  });

  test("kill ends and settles it; again is fine; commands after are a ConflictError", async () => {
    const client = fx.client();
    const sbx = await client.sandboxes.create({ maxCostMicros: BUDGET });
    await sbx.commands.run("true");
    const same = await sbx.kill();
    assert.equal(same, sbx);
    assert.equal(sbx.status, "ended");
    assert.equal(sbx.endReason, "deleted");
    assert.ok(sbx.endedAt);
    const c = sbx.cost;
    assert.equal(c.chargedMicros + c.releasedMicros, c.reservedMicros);
    await sbx.kill();
    assert.equal(sbx.endReason, "deleted");
    await assert.rejects(sbx.commands.run("true"), (e: unknown) => {
      assert.ok(e instanceof ConflictError);
      assert.equal(e.slug, "sandbox-ended");
      return true;
    });
    assert.equal((await client.sandboxes.get(sbx.id)).status, "ended");
  });

  test("`await using` kills the sandbox at the end of the scope", async () => {
    const client = fx.client();
    let id = "";
    {
      await using sbx = await client.sandboxes.create({ maxCostMicros: BUDGET });
      id = sbx.id;
      assert.equal((await sbx.commands.run("echo in scope")).stdout, "in scope\n");
    }
    const after = await client.sandboxes.get(id);
    assert.equal(after.status, "ended");
    assert.equal(after.endReason, "deleted");
  });

  test("events: the sandbox's timeline, to worker.destroyed", async () => {
    const sbx = await fx.client().sandboxes.create({ maxCostMicros: BUDGET });
    await sbx.commands.run("echo timeline");
    await sbx.files.write("t.txt", "t");
    await sbx.kill();
    const events: SandboxEvent[] = [];
    for await (const e of sbx.events()) events.push(e);
    assert.deepEqual(
      events.map((e) => e.seq),
      events.map((_, i) => i + 1),
    );
    const types = events.map((e) => e.type);
    for (const t of ["budget.reserved", "vm.ready", "shell.command", "shell.output", "shell.exit", "file.written", "vm.destroyed", "sandbox.ended"]) {
      assert.ok(types.includes(t as SandboxEvent["type"]), `no ${t} in ${types.join(", ")}`);
    }
    assert.equal(types.at(-1), "worker.destroyed");
    const ended = events.find((e) => e.type === "sandbox.ended");
    assert.ok(ended?.type === "sandbox.ended");
    assert.equal(ended.data.endReason, "deleted");
    const written = events.find((e) => e.type === "file.written");
    assert.ok(written?.type === "file.written");
    assert.equal(written.data.sha256, sha256("t"));
  });

  test("a create whose answer is lost is retried with the same key: exactly one sandbox", async () => {
    const proxy = await startProxy(fx.server.url, { mode: "drop", match: /^POST \/v1\/sandboxes HTTP/m });
    try {
      const t = tag();
      const sbx = await fx.client({ baseURL: proxy.url }).sandboxes.create({ maxCostMicros: BUDGET, metadata: { t } });
      assert.equal(proxy.matches, 2);
      const mine = [];
      for await (const s of fx.client().sandboxes.list({ limit: 100 })) if (s.metadata.t === t) mine.push(s.id);
      assert.deepEqual(mine, [sbx.id]);
      await sbx.kill();
    } finally {
      await proxy.close();
    }
  });

  test("typed errors: 402 over the balance, 400 naming the field, 404 unknown", async () => {
    const poor = fx.client({ apiKey: fx.server.poorKey });
    await assert.rejects(poor.sandboxes.create({ maxCostMicros: 5_000 }), InsufficientFundsError);
    const client = fx.client();
    await assert.rejects(client.sandboxes.create({ maxCostMicros: 0 }), (e: unknown) => {
      assert.ok(e instanceof InvalidRequestError);
      assert.equal(e.field, "max_cost_micros");
      return true;
    });
    await assert.rejects(client.sandboxes.get("sbx_00000000000000000000000000000000"), NotFoundError);
    await assert.rejects(client.sandboxes.get("not-an-id"), NotFoundError);
    const mine = await client.sandboxes.create({ maxCostMicros: BUDGET });
    try {
      await assert.rejects(poor.sandboxes.get(mine.id), NotFoundError, "another organisation's sandbox");
    } finally {
      await mine.kill();
    }
  });
});
