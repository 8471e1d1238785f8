/**
 * `ephemeral demo --keep`, the README's first command, as a person follows
 * it: the addresses it prints open in a browser — the sample without a
 * key, the run page with the key it prints.
 */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { after, before, test } from "node:test";

import { BIN, LONG, assertClean, launch, openTab, rows, until } from "./support/harness.mjs";

let browser;
let demo;
let out = "";

before(async () => {
  browser = await launch();
  const env = { ...process.env };
  delete env.EPHEMERAL_URL;
  delete env.EPHEMERAL_API_KEY;
  demo = spawn(BIN, ["demo", "--keep", "--listen", "127.0.0.1:0"], { env, stdio: ["ignore", "pipe", "pipe"] });
  demo.stdout.on("data", (d) => (out += d));
  demo.stderr.on("data", (d) => (out += d));
  await until(() => /serving until/.test(out) || demo.exitCode !== null, "the demo to serve", LONG * 2);
  assert.equal(demo.exitCode, null, `the demo exited:\n${out}`);
});
after(async () => {
  await browser?.close();
  if (demo && demo.exitCode === null) {
    const gone = new Promise((r) => demo.once("exit", r));
    demo.kill("SIGINT");
    const t = setTimeout(() => demo.kill("SIGKILL"), 15_000);
    await gone;
    clearTimeout(t);
  }
});

test("the demo's sample and run page open in a browser", async () => {
  const sample = /sample[^\n]*?(http:\/\/[0-9.:]+\/samples\/smp_[0-9a-f]+)/.exec(out)?.[1];
  const runPage = /run page[^\n]*?(http:\/\/[0-9.:]+\/runs\/run_[0-9a-f]{32})/.exec(out)?.[1];
  const key = /(eph_[0-9a-f]+)/.exec(out)?.[1];
  assert.ok(sample && runPage && key, out);

  const anon = await openTab(browser, { lang: "en" });
  await anon.page.goto(sample, { waitUntil: "domcontentloaded" });
  await anon.page.waitForSelector("ol.timeline li.lane-destroy");
  assert.equal(await anon.page.$("form.signin"), null);
  const lanes = (await rows(anon.page)).map((r) => r.split(" | ")[1]);
  assert.ok(lanes.some((l) => l.includes("$ pwd; whoami")), lanes.join("\n"));
  assert.match(await anon.page.$eval("[data-testid=output]", (e) => e.textContent), /2 3 5 7 11 13 17 19 23 29 31 37 41 43 47/);
  assert.match(await anon.page.$eval("[data-testid=cost-of]", (e) => e.textContent), /^\$[\d.]+ of \$0\.04$/);
  assertClean(assert, anon.problems);
  await anon.context.close();

  const signed = await openTab(browser, { key, lang: "en" });
  await signed.page.goto(runPage, { waitUntil: "domcontentloaded" });
  await signed.page.waitForSelector("ol.timeline li.lane-destroy");
  assert.match(await signed.page.$eval(".run-head .badge", (e) => e.textContent), /Success/);
  assertClean(assert, signed.problems);
  await signed.context.close();
});
