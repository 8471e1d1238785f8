/**
 * One real server per test file: started before the file's tests, stopped
 * after them. `client()` makes a client for it (options override).
 */

import { after, before } from "node:test";

import { type ClientOptions, Ephemeral } from "@ephemeral/sdk";

import { type ServerOptions, startServer, type TestServer } from "./server.js";

export interface Fixture {
  readonly server: TestServer;
  client(options?: ClientOptions): Ephemeral;
}

export function useServer(options: ServerOptions = {}): Fixture {
  let server: TestServer | undefined;
  before(async () => {
    server = await startServer(options);
  });
  after(async () => {
    await server?.stop();
  });
  return {
    get server(): TestServer {
      if (!server) throw new Error("the server is not started yet");
      return server;
    },
    client(o: ClientOptions = {}): Ephemeral {
      const s = this.server;
      return new Ephemeral({ baseURL: s.url, apiKey: s.key, ...o });
    },
  };
}

/** Seconds of wall time, for asserting something did not hang. */
export function since(start: number): number {
  return (Date.now() - start) / 1000;
}
