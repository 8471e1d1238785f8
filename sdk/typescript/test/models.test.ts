// client.models: the catalogue (`GET /v1/models`, docs/api-shapes.md
// "Catalogue and runtime"). Left out by EPHEMERAL_SDK_ONLY_RUNS=1 while it lands.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { AuthenticationError } from "@ephemeral/sdk";

import { useServer } from "./support/fixture.js";

const fx = useServer();

describe("models", () => {
  test("the catalogue lists the built-in models, the server's default marked", async () => {
    const list = await fx.client().models.list();
    assert.equal(list.object, "list");
    const ids = list.data.map((m) => m.id);
    for (const id of ["openai/gpt-6-luna", "openai/gpt-4o-mini", "scripted/seed", "ephemeral/script"]) {
      assert.ok(ids.includes(id), `no ${id} in ${ids.join(", ")}`);
    }
    const defaults = list.data.filter((m) => m.default);
    assert.deepEqual(
      defaults.map((m) => m.id),
      ["ephemeral/script"],
    );
    for (const m of list.data) {
      assert.equal(typeof m.provider, "string");
      assert.ok(Number.isInteger(m.inputMicrosPerMillion), `${m.id} inputMicrosPerMillion`);
      assert.ok(Number.isInteger(m.outputMicrosPerMillion), `${m.id} outputMicrosPerMillion`);
      assert.ok(Number.isInteger(m.contextWindow), `${m.id} contextWindow`);
      assert.ok(Number.isInteger(m.maxOutputTokens), `${m.id} maxOutputTokens`);
      assert.ok(!Object.keys(m).some((k) => k.includes("_")), `${m.id}: snake_case key`);
    }
  });

  test("the catalogue needs a key", async () => {
    await assert.rejects(fx.client({ apiKey: "eph_wrong" }).models.list(), AuthenticationError);
  });
});
