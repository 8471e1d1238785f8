/**
 * A scripted HTTP server for what a real one will not do on demand: answer
 * 429 or 503 with a `Retry-After`, then succeed; record every request, so a
 * test can check the attempts (their count, timing, `Idempotency-Key`).
 */

import { type IncomingHttpHeaders, createServer } from "node:http";

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface FakeServer {
  url: string;
  requests: Recorded[];
  close(): Promise<void>;
}

/** `replies` are used in order; the last one repeats. */
export async function startFake(replies: Reply[] | ((r: Recorded, n: number) => Reply)): Promise<FakeServer> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const rec: Recorded = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        at: Date.now(),
      };
      requests.push(rec);
      const n = requests.length - 1;
      const reply =
        typeof replies === "function" ? replies(rec, n) : (replies[Math.min(n, replies.length - 1)] as Reply);
      const isProblem = reply.status >= 400;
      res.writeHead(reply.status, {
        "content-type": isProblem ? "application/problem+json" : "application/json",
        ...reply.headers,
      });
      res.end(reply.body === undefined ? "" : JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A problem+json body as the server writes it. */
export function problem(slug: string, status: number, title: string, detail = ""): Reply {
  return { status, body: { type: `/problems/${slug}`, title, status, detail } };
}
