// The client itself: configuration, defaults from the environment, the
// key kept out of sight, and the small endpoints (health, runtime).

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { inspect } from "node:util";

import Default, { Ephemeral, EphemeralError } from "@ephemeral/sdk";

import { useServer } from "./support/fixture.js";

const fx = useServer();

/** Runs `fn` with some environment variables set (or removed), then puts them back. */
function withEnv<T>(vars: Record<string, string | undefined>, fn: () => T): T {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  const apply = (v: Record<string, string | undefined>): void => {
    for (const [k, value] of Object.entries(v)) {
      if (value === undefined) delete process.env[k];
      else process.env[k] = value;
    }
  };
  apply(vars);
  try {
    return fn();
  } finally {
    apply(saved);
  }
}

describe("client", () => {
  test("no URL, no key: a clear error naming what to set", () => {
    withEnv({ EPHEMERAL_URL: undefined, EPHEMERAL_API_KEY: undefined }, () => {
      assert.throws(() => new Ephemeral({ apiKey: "k" }), (e: unknown) => {
        assert.ok(e instanceof EphemeralError);
        assert.match(e.message, /EPHEMERAL_URL/);
        return true;
      });
      assert.throws(() => new Ephemeral({ baseURL: "http://127.0.0.1:1" }), /EPHEMERAL_API_KEY/);
      assert.throws(() => new Ephemeral(), /no server URL/);
    });
  });

  test("a bad URL is refused up front", () => {
    assert.throws(() => new Ephemeral({ baseURL: "not a url", apiKey: "k" }), /not a URL/);
    assert.throws(() => new Ephemeral({ baseURL: "ftp://host", apiKey: "k" }), /http or https/);
    assert.throws(() => new Ephemeral({ baseURL: "http://u:p@host", apiKey: "k" }), /credentials/);
  });

  test("EPHEMERAL_URL and EPHEMERAL_API_KEY are the defaults", async () => {
    const client = withEnv({ EPHEMERAL_URL: `${fx.server.url}/`, EPHEMERAL_API_KEY: fx.server.key }, () => new Ephemeral());
    assert.equal(client.baseURL, fx.server.url);
    const page = await client.runs.list({ limit: 1 });
    assert.equal(page.object, "list");
    // Options win over the environment.
    const explicit = withEnv({ EPHEMERAL_URL: "http://127.0.0.1:1" }, () =>
      new Ephemeral({ baseURL: fx.server.url, apiKey: fx.server.key }),
    );
    assert.equal(explicit.baseURL, fx.server.url);
  });

  test("the default export is the client", () => {
    assert.equal(Default, Ephemeral);
  });

  test("the key shows neither in console.log nor in JSON", () => {
    const client = fx.client();
    const shown = inspect(client, { depth: 10, showHidden: true }) + JSON.stringify(client);
    assert.ok(!shown.includes(fx.server.key), "the API key is visible");
  });

  test("a base URL with a path prefix keeps it", async () => {
    // The prefix reaches the server, which has no such path: a 404 problem proves the URL was built with it.
    const client = fx.client({ baseURL: `${fx.server.url}/prefix/`, maxRetries: 0 });
    assert.equal(client.baseURL, `${fx.server.url}/prefix`);
    await assert.rejects(client.runtime(), /no such endpoint \(GET \/v1\/runtime\)/);
  });

  test("health and runtime", async () => {
    const client = fx.client();
    const health = await client.health();
    assert.equal(health.status, "ok");
    assert.equal(health.store, "sqlite");
    assert.equal(typeof health.runsInFlight, "number");
    const runtime = await client.runtime();
    assert.equal(runtime.isolation, "wasm");
    assert.equal(runtime.network, false);
    assert.equal(runtime.user, "worker");
    assert.equal(typeof runtime.limits.commandTimeoutSeconds, "number");
    assert.ok(runtime.shell.utilities.includes("sh") || runtime.shell.utilities.includes("bash"));
    assert.match(runtime.python?.version ?? "", /^3\./);
  });

  test("a custom fetch is used for every request", async () => {
    const seen: string[] = [];
    const client = fx.client({
      fetch: (url, init) => {
        seen.push(`${init.method} ${new URL(url).pathname}`);
        return fetch(url, init);
      },
    });
    await client.health();
    await client.runs.list({ limit: 1 });
    assert.deepEqual(seen, ["GET /v1/health", "GET /v1/runs"]);
  });
});
