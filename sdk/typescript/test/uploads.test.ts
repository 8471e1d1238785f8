// sbx.files.write with a ReadableStream sends the stream as it is read:
// the server has the request (and its first bytes) while the stream is
// still being produced. Checked against a local HTTP server that holds the
// source back until it has seen the request, which deadlocks (and fails on
// the timeout) if the SDK reads the stream whole before sending.

import assert from "node:assert/strict";
import { createServer } from "node:http";
import { describe, test } from "node:test";

import { Ephemeral } from "@ephemeral/sdk";

const SANDBOX = {
  id: "sbx_0123456789abcdef0123456789abcdef",
  object: "sandbox",
  status: "running",
  isolation: "wasm",
  created_at: "2026-12-04T21:48:00.123Z",
  expires_at: "2026-12-04T21:53:00.123Z",
  ended_at: null,
  end_reason: null,
  limits: { timeout_seconds: 300, idle_timeout_seconds: 120, command_timeout_seconds: 60 },
  cost: { reserved_micros: 1, charged_micros: 0, released_micros: 0, compute_micros: 0 },
  metadata: {},
};

describe("streamed uploads", () => {
  test("a ReadableStream is sent as it is produced, never buffered whole", async () => {
    let firstBytes!: () => void;
    const serverHasBytes = new Promise<void>((resolve) => (firstBytes = resolve));
    let received = 0;
    let url = "";
    let method = "";
    const server = createServer((req, res) => {
      if (req.method === "GET") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify(SANDBOX));
      }
      method = req.method ?? "";
      url = req.url ?? "";
      req.on("data", (c: Buffer) => {
        received += c.length;
        firstBytes();
      });
      req.on("end", () => {
        res.writeHead(201, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "file", path: "/tmp/x/scratch/big.bin", size: received, sha256: "0" }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const address = server.address();
    assert.ok(address && typeof address === "object");
    try {
      const client = new Ephemeral({ baseURL: `http://127.0.0.1:${address.port}`, apiKey: "k", timeoutMs: 5_000 });
      const sbx = await client.sandboxes.connect(SANDBOX.id);
      let produced = 0;
      const chunk = new Uint8Array(256 * 1024);
      const source = new ReadableStream<Uint8Array>({
        async pull(controller) {
          // After the first chunk, nothing more until the server has bytes.
          if (produced === 1) await serverHasBytes;
          if (produced === 8) return controller.close();
          produced++;
          controller.enqueue(chunk);
        },
      });
      const written = await sbx.files.write("big file.bin", source);
      assert.equal(method, "PUT");
      assert.equal(url, `/v1/sandboxes/${SANDBOX.id}/files/big%20file.bin`);
      assert.equal(written.size, 8 * chunk.length);
      assert.equal(produced, 8);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  test("an absolute path is sent with its leading slash encoded", async () => {
    const urls: string[] = [];
    const server = createServer((req, res) => {
      urls.push(req.url ?? "");
      req.resume();
      req.on("end", () => {
        res.writeHead(req.method === "GET" && urls.length === 1 ? 200 : 201, { "content-type": "application/json" });
        res.end(JSON.stringify(urls.length === 1 ? SANDBOX : { object: "file", path: "/tmp/a b", size: 1, sha256: "0" }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const address = server.address();
    assert.ok(address && typeof address === "object");
    try {
      const client = new Ephemeral({ baseURL: `http://127.0.0.1:${address.port}`, apiKey: "k" });
      const sbx = await client.sandboxes.connect(SANDBOX.id);
      await sbx.files.write("/tmp/a b/c#d.txt", "x");
      assert.equal(urls[1], `/v1/sandboxes/${SANDBOX.id}/files/%2Ftmp/a%20b/c%23d.txt`);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
