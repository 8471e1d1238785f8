// Problems come back as typed errors, carrying what the server said and
// nothing of the request's secrets.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { inspect } from "node:util";

import {
  APIError,
  AuthenticationError,
  ConflictError,
  EphemeralError,
  IdempotencyKeyReusedError,
  InsufficientFundsError,
  InvalidRequestError,
  NotFoundError,
  RateLimitError,
} from "@ephemeral/sdk";

import { useServer } from "./support/fixture.js";
import { startServer, tag } from "./support/server.js";

const fx = useServer();

/** `assert.rejects` with a class and checks on the error. */
async function rejectsWith<E extends Error>(
  promise: Promise<unknown>,
  cls: abstract new (...args: never[]) => E,
  check: (e: E) => void = () => {},
): Promise<E> {
  let caught: unknown;
  await assert.rejects(promise, (e: unknown) => {
    caught = e;
    return true;
  });
  assert.ok(caught instanceof cls, `expected ${cls.name}, got ${inspect(caught)}`);
  check(caught);
  return caught;
}

describe("errors", () => {
  test("402 for a budget above the balance: InsufficientFundsError", async () => {
    const client = fx.client({ apiKey: fx.server.poorKey });
    const e = await rejectsWith(client.runs.create({ prompt: "true", maxCostMicros: 5_000 }), InsufficientFundsError);
    assert.equal(e.status, 402);
    assert.equal(e.type, "/problems/insufficient-funds");
    assert.equal(e.title, "Not enough balance");
    assert.match(e.detail, /free balance is 1000/);
    assert.ok(e instanceof APIError && e instanceof EphemeralError && e instanceof Error);
    assert.equal(e.name, "InsufficientFundsError");
  });

  test("400 naming the field: an unknown field, a wrong type", async () => {
    const client = fx.client();
    const unknown = { prompt: "true", maxCostMicros: 1_000, temperature: 1 };
    await rejectsWith(client.runs.create(unknown), InvalidRequestError, (e) => {
      assert.equal(e.status, 400);
      assert.equal(e.type, "/problems/invalid-request");
      assert.equal(e.field, "temperature");
      assert.deepEqual(e.errors, [{ field: "temperature", message: "unknown field" }]);
    });
    const wrongType = { prompt: "true", maxCostMicros: "lots" } as unknown as { prompt: string; maxCostMicros: number };
    await rejectsWith(client.runs.create(wrongType), InvalidRequestError, (e) => {
      assert.equal(e.status, 400);
      assert.equal(e.field, "max_cost_micros");
    });
  });

  test("a value out of range names its field (validation-failed)", async () => {
    const client = fx.client();
    await rejectsWith(client.runs.create({ prompt: "", maxCostMicros: 1_000 }), InvalidRequestError, (e) => {
      assert.equal(e.type, "/problems/validation-failed");
      assert.equal(e.field, "prompt");
    });
    await rejectsWith(client.runs.create({ prompt: "x", maxCostMicros: 10_000_001 }), InvalidRequestError, (e) => {
      assert.equal(e.field, "max_cost_micros");
    });
    await rejectsWith(client.runs.list({ limit: 0 }), InvalidRequestError, (e) => assert.equal(e.field, "limit"));
  });

  test("401 for a wrong key: AuthenticationError, and the key is nowhere in it", async () => {
    const secret = "eph_0123456789abcdef0123456789abcdef0123456789abcdef";
    const client = fx.client({ apiKey: secret });
    const e = await rejectsWith(client.runs.list(), AuthenticationError, (err) => {
      assert.equal(err.status, 401);
      assert.equal(err.headers.get("www-authenticate"), "Bearer");
    });
    const everything = `${e.message}\n${e.stack}\n${inspect(e, { depth: 5 })}\n${JSON.stringify(e)}`;
    assert.ok(!everything.includes(secret), "the key leaked into the error");
    assert.ok(!everything.includes(fx.server.key));
  });

  test("404 for an unknown run: NotFoundError", async () => {
    const client = fx.client();
    await rejectsWith(client.runs.get("run_00000000000000000000000000000000"), NotFoundError, (e) => {
      assert.equal(e.status, 404);
      assert.equal(e.type, "/problems/not-found");
    });
    await rejectsWith(client.runs.get("not-a-run-id"), NotFoundError);
    // Another organisation's run is not found either.
    const run = await client.runs.create({ prompt: "true", maxCostMicros: 1_000 });
    const other = fx.client({ apiKey: fx.server.poorKey });
    await rejectsWith(other.runs.get(run.id), NotFoundError);
  });

  test("409 for cancelling a finished run: ConflictError", async () => {
    const client = fx.client();
    const run = await client.runs.create({ prompt: "true", maxCostMicros: 1_000 });
    await client.runs.wait(run.id);
    await rejectsWith(client.runs.cancel(run.id), ConflictError, (e) => {
      assert.equal(e.status, 409);
      assert.equal(e.slug, "run-finished");
    });
  });

  test("422 for a key reused with another body: IdempotencyKeyReusedError", async () => {
    const client = fx.client();
    const idempotencyKey = `reuse-${tag()}`;
    await client.runs.create({ prompt: "echo a", maxCostMicros: 1_000 }, { idempotencyKey });
    await rejectsWith(
      client.runs.create({ prompt: "echo b", maxCostMicros: 1_000 }, { idempotencyKey }),
      IdempotencyKeyReusedError,
      (e) => {
        assert.equal(e.status, 422);
        assert.equal(e.type, "/problems/idempotency-key-reused");
      },
    );
  });

  test("an error message names the method and path, and what the server said", async () => {
    const client = fx.client();
    const e = await rejectsWith(client.runs.get("run_00000000000000000000000000000000"), NotFoundError);
    assert.equal(e.message, "404 Not found: no such run (GET /v1/runs/run_00000000000000000000000000000000)");
  });

  test("429 with Retry-After: RateLimitError.retryAfter (a server allowing one run a minute)", async () => {
    const limited = await startServer({ extraConfig: "[limits]\nruns_per_minute = 1" });
    try {
      const client = fx.client({ baseURL: limited.url, apiKey: limited.key, maxRetries: 0 });
      await client.runs.create({ prompt: "true", maxCostMicros: 1_000 });
      const start = Date.now();
      await rejectsWith(client.runs.create({ prompt: "true", maxCostMicros: 1_000 }), RateLimitError, (e) => {
        assert.equal(e.status, 429);
        assert.equal(e.type, "/problems/rate-limited");
        assert.ok(e.retryAfter !== undefined && e.retryAfter >= 1, `retryAfter ${e.retryAfter}`);
      });
      assert.ok(Date.now() - start < 5_000, "maxRetries 0 must not wait");
    } finally {
      await limited.stop();
    }
  });
});
