/**
 * Published samples: an operator publishes a finished run; anyone opens
 * it without a key and sees it replayed; "Run it yourself" opens the
 * playground with the whole request filled in (after signing in), and
 * running it sends exactly that request.
 */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import {
  BASE,
  BIN,
  CONFIG,
  KEY,
  SEED_PROMPT_START,
  api,
  assertClean,
  createRun,
  go,
  launch,
  openTab,
  publish,
  rows,
  shot,
  waitRun,
} from "./support/harness.mjs";

const SEED_PROMPT =
  "This is a sandbox test. Do these steps with the shell and report the real output, never what you expect. 1) Write a small script that prints the first 15 prime numbers, run it and show the output. 2) Run `whoami` and `pwd`. 3) Try to reach the internet with `curl -sS -m 8 https://example.com` (and, if curl is missing, python3 with urllib) and report the exact error. 4) Write a file named /tmp/proof.txt and list it. Reply in Markdown, at most 120 words: one line per step with the result, then one sentence saying whether the network call succeeded.";

/** A request using every field the playground edits, and one it does not (metadata). */
const REQUEST = {
  prompt: SEED_PROMPT,
  model: "fake/seed",
  web: false,
  shell: true,
  files: [
    { path: "notes.txt", content: "hello from the sample\n" },
    { path: "data/blob.bin", content_base64: Buffer.from([0, 1, 2, 255]).toString("base64") },
  ],
  outputs: ["*.txt"],
  timeout_seconds: 90,
  max_cost_micros: 40000,
  metadata: { purpose: "console-sample" },
};

let browser;
let runId;
let sampleId;
const TITLE = "Seed run, published";

before(async () => {
  browser = await launch();
  runId = (await createRun(REQUEST)).id;
  const run = await waitRun(runId);
  assert.equal(run.status, "succeeded");
  sampleId = await publish(runId, TITLE);
  assert.match(sampleId, /^smp_[0-9a-f]+$/);
});
after(async () => {
  await browser?.close();
});

test("the sample API answers without a key, and never for a zero-data-retention run", async () => {
  const list = await api("/v1/samples", { key: null });
  assert.equal(list.status, 200);
  assert.ok(list.json.data.some((s) => s.id === sampleId && s.title === TITLE));
  const one = await api(`/v1/samples/${sampleId}`, { key: null });
  assert.equal(one.status, 200);
  assert.deepEqual(one.json.request, REQUEST);
  assert.equal(one.json.run.id, runId);

  const zdr = await waitRun((await createRun({ ...REQUEST, files: undefined, outputs: undefined, zero_data_retention: true })).id);
  await assert.rejects(promisify(execFile)(BIN, ["samples", "publish", zdr.id, "--config", CONFIG]));
});

test("anyone opens a published sample: the run replayed, no key, no sign-in", async () => {
  const { page, context, problems } = await openTab(browser);
  await go(page, "/");
  await page.waitForSelector(`ul.samples a[href='/samples/${sampleId}']`);
  await page.click(`ul.samples a[href='/samples/${sampleId}']`);
  await page.waitForSelector("ol.timeline li.lane-destroy");
  assert.equal(new URL(page.url()).pathname, `/samples/${sampleId}`);
  assert.equal(await page.$eval("main h1", (h) => h.textContent), TITLE);
  assert.equal(await page.$("form.signin"), null);
  assert.equal(await page.evaluate(() => sessionStorage.getItem("ephemeral.key")), null);
  assert.match(await page.$eval(".replay-of", (e) => e.textContent), /^Replaying the real run of .+\. Model: fake\/seed\.$/);
  const run = (await api(`/v1/runs/${runId}`)).json;
  const expected = run.timeline.filter((e) => e.type !== "shell.output" && e.type !== "shell.exit");
  assert.equal((await rows(page)).length, expected.length);
  assert.match(await page.$eval("[data-testid=output]", (e) => e.textContent), /2 3 5 7 11 13 17 19 23 29 31 37 41 43 47/);
  assert.deepEqual(JSON.parse(await page.$eval("[data-testid=request-json]", (e) => e.textContent)), REQUEST);
  assert.match(await page.$eval(".actions", (e) => e.textContent), /Budget for this sample: \$0\.04\./);
  // Nothing it asked for carried a key.
  for (const r of problems.requests) assert.equal(r.headers.authorization, undefined, r.url);
  await page.evaluate(() => scrollTo(0, 0));
  await shot(page, "sample-en.png");
  // The replay works here too.
  await page.click("button[data-speed='4']");
  await page.click("[data-testid=play]");
  await page.waitForFunction(() => document.querySelector("[data-testid=play]")?.textContent === "Play" && document.querySelector("ol.timeline li.lane-destroy"));
  assertClean(assert, problems);
  await context.close();
});

/** The playground's form as a request, and its preview. */
async function playgroundState(page) {
  return page.evaluate(() => ({
    prompt: document.querySelector("textarea[name=prompt]").value,
    model: document.querySelector("select[name=model]").value,
    shell: document.querySelector("input[name=shell]").checked,
    web: document.querySelector("input[name=web]").checked,
    timeout: document.querySelector("input[name=timeout_seconds]").value,
    budget: document.querySelector("input[name=max_cost_micros]").value,
    outputs: document.querySelector("input[name=outputs]").value,
    zdr: document.querySelector("input[name=zero_data_retention]").checked,
    files: [...document.querySelectorAll(".file-draft")].map((li) => ({
      path: li.querySelector("input[type=text]").value,
      content: li.querySelector("textarea")?.value ?? null,
    })),
    note: document.querySelector("[data-testid=prefill-note]")?.textContent ?? "",
    preview: JSON.parse(document.querySelector("[data-testid=request-json]").textContent),
  }));
}

test("Run it yourself: sign in, the playground has the whole request, and sends exactly it", async () => {
  const { page, context, problems } = await openTab(browser);
  await go(page, `/samples/${sampleId}`);
  await page.waitForSelector(".actions a.button.primary");
  assert.equal(await page.$eval(".actions a.button.primary", (a) => a.textContent), "Run it yourself");
  await page.click(".actions a.button.primary");
  // The playground needs a key: the sign-in form, at the same address.
  await page.waitForSelector("form.signin input[name=key]");
  assert.equal(new URL(page.url()).pathname, "/playground");
  await page.type("form.signin input[name=key]", KEY);
  await page.click("form.signin button[type=submit]");
  await page.waitForSelector("[data-testid=prefill-note]");

  const s = await playgroundState(page);
  assert.deepEqual(s.preview, REQUEST, "the request it will send is the sample's");
  assert.equal(s.prompt, SEED_PROMPT);
  assert.ok(s.prompt.startsWith(SEED_PROMPT_START));
  assert.equal(s.model, "fake/seed");
  assert.equal(s.shell, true);
  assert.equal(s.web, false);
  assert.equal(s.timeout, "90");
  assert.equal(s.budget, "0.04");
  assert.equal(s.outputs, "*.txt");
  assert.equal(s.zdr, false);
  assert.deepEqual(s.files, [
    { path: "notes.txt", content: "hello from the sample\n" },
    { path: "data/blob.bin", content: null },
  ]);
  assert.equal(s.note, `Filled in from the sample “${TITLE}”.`);

  const posted = new Promise((resolve) =>
    page.on("request", (r) => {
      if (r.method() === "POST" && r.url() === `${BASE}/v1/runs`) resolve(r);
    }),
  );
  await page.click("[data-testid=send]");
  const req = await posted;
  assert.deepEqual(JSON.parse(req.postData()), REQUEST);
  await page.waitForFunction(() => /^\/runs\/run_[0-9a-f]{32}$/.test(location.pathname));
  const newId = page.url().split("/").pop();
  assert.notEqual(newId, runId);
  await page.waitForSelector("ol.timeline li.lane-destroy");
  const kept = (await api(`/v1/runs/${newId}/request`)).json.request;
  assert.deepEqual(kept, REQUEST, "the new run's request is the sample's");
  const newRun = await waitRun(newId);
  assert.equal(newRun.status, "succeeded");

  // "Open in playground" from the new run gives the same request again.
  await page.click(".actions a[href^='/playground?run=']");
  await page.waitForSelector("[data-testid=prefill-note]");
  assert.deepEqual((await playgroundState(page)).preview, REQUEST);
  assertClean(assert, problems);
  await context.close();
});
