/**
 * A tiny TCP proxy between the client and the server that breaks one
 * exchange on purpose, to test what the SDK does when a connection dies:
 *
 * - `drop`: forwards the first request whose request line matches, waits
 *   until the server starts answering (so the server has acted on it),
 *   then closes both connections without passing a byte of the answer on.
 * - `cut`: passes on the first `bytes` bytes of the answer to the first
 *   matching request, then closes both connections (mid-stream).
 *
 * Every other exchange passes through untouched.
 */

import { type Server, type Socket, connect, createServer } from "node:net";

export interface ProxyRule {
  mode: "drop" | "cut";
  /** Tested against the text of each chunk the client sends (the request line is in the first). */
  match: RegExp;
  /** For `cut`: how many bytes of the answer (headers included) get through. */
  bytes?: number;
}

export interface TestProxy {
  url: string;
  /** How many requests matched the rule (the broken one and any retries). */
  matches: number;
  /** Whether the rule has fired. */
  fired: boolean;
  close(): Promise<void>;
}

export async function startProxy(target: string, rule: ProxyRule): Promise<TestProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const state: TestProxy = {
    url: "",
    matches: 0,
    fired: false,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    sockets.add(client);
    sockets.add(upstream);
    let breakThis: "drop" | "cut" | undefined;
    let passed = 0;
    const kill = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on("data", (chunk: Buffer) => {
      if (rule.match.test(chunk.toString("latin1"))) {
        state.matches++;
        if (!state.fired) {
          state.fired = true;
          breakThis = rule.mode;
        }
      }
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      if (breakThis === "drop") return kill();
      if (breakThis === "cut") {
        const room = (rule.bytes ?? 0) - passed;
        if (chunk.length >= room) {
          client.write(chunk.subarray(0, Math.max(0, room)), () => setTimeout(kill, 20));
          breakThis = undefined;
          passed = Number.POSITIVE_INFINITY;
          return;
        }
        passed += chunk.length;
      }
      if (passed !== Number.POSITIVE_INFINITY) client.write(chunk);
    });
    client.on("error", kill);
    upstream.on("error", kill);
    client.on("close", () => {
      upstream.destroy();
      sockets.delete(client);
    });
    upstream.on("close", () => {
      client.destroy();
      sockets.delete(upstream);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("the proxy has no port");
  state.url = `http://127.0.0.1:${address.port}`;
  return state;
}

/** A server that accepts connections and never answers: for timeouts. */
export async function startSilentServer(): Promise<{ url: string; connections: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const state = {
    url: "",
    connections: 0,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on("data", () => {});
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  state.url = `http://127.0.0.1:${address.port}`;
  return state;
}
