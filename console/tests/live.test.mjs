/**
 * The console as a person uses it: sign in with a pasted key, start the
 * seed request from the playground, watch the run live until the worker is
 * destroyed, reload mid-run and see it resume without a line twice, then
 * replay the finished run at 4×.
 *
 * The fake model holds each run's answer until the test lets it go, so
 * "mid-run" is a state the test knows it is in, not a race it hopes to win.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";

import { startProxy } from "./support/proxy.mjs";
import {
  BASE,
  KEY,
  SEED_PROMPT_START,
  api,
  assertClean,
  createRun,
  fake,
  go,
  launch,
  openTab,
  rows,
  runLength,
  shot,
  waitRun,
} from "./support/harness.mjs";

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await fake.release();
  await browser?.close();
});

/** Rows' texts without the ones still growing (a command running). */
const rowTexts = (page) => rows(page);

test("sign in, run the seed request from the playground, watch it live, reload, replay", async (t) => {
  const { page, problems } = await openTab(browser);

  await t.test("a wrong key is refused, a right one is kept in sessionStorage only", async () => {
    await go(page, "/runs");
    await page.waitForSelector("form.signin input[name=key]");
    assert.equal(await page.$eval("h1", (h) => h.textContent), "Sign in");
    await page.type("form.signin input[name=key]", "eph_not_a_key");
    await page.click("form.signin button[type=submit]");
    await page.waitForFunction(() => document.querySelector("form.signin .field-error")?.textContent?.includes("refused"));
    assert.equal(await page.evaluate(() => sessionStorage.getItem("ephemeral.key")), null);

    await page.$eval("form.signin input[name=key]", (i) => (i.value = ""));
    await page.type("form.signin input[name=key]", KEY);
    await page.click("form.signin button[type=submit]");
    await page.waitForFunction(() => document.querySelector("h1")?.textContent === "Runs");
    assert.equal(await page.evaluate(() => sessionStorage.getItem("ephemeral.key")), KEY);
    assert.equal(await page.evaluate(() => localStorage.getItem("ephemeral.key")), null);
    assert.equal(await page.evaluate(() => document.cookie), "");
    assert.ok(!page.url().includes(KEY));
    assert.equal(await page.$eval("form.signin input[name=key]", () => true).catch(() => false), false, "the form is gone");
  });

  let runId;
  await t.test("the playground shows the seed request and starts it", async () => {
    await fake.hold();
    await page.click("nav a[href='/playground']");
    await page.waitForSelector("form.playground-form textarea[name=prompt]");
    const prompt = await page.$eval("textarea[name=prompt]", (e) => e.value);
    assert.ok(prompt.startsWith(SEED_PROMPT_START), prompt);
    const preview = JSON.parse(await page.$eval("[data-testid=request-json]", (e) => e.textContent));
    assert.deepEqual(preview, {
      prompt,
      web: false,
      shell: true,
      timeout_seconds: 120,
      max_cost_micros: 40000,
    });
    assert.equal(await page.$eval("input[name=max_cost_micros]", (e) => e.value), "0.04");
    assert.match(await page.$eval("[data-testid=curl]", (e) => e.textContent), /Idempotency-Key/);
    await shot(page, "playground-en.png");

    const posted = new Promise((resolve) =>
      page.on("request", (r) => {
        if (r.method() === "POST" && r.url() === `${BASE}/v1/runs`) resolve(r);
      }),
    );
    await page.click("[data-testid=send]");
    const req = await posted;
    assert.ok(req.headers()["idempotency-key"], "sent with an Idempotency-Key");
    assert.deepEqual(JSON.parse(req.postData()), preview, "sends what it showed");
    await page.waitForFunction(() => /^\/runs\/run_[0-9a-f]{32}$/.test(location.pathname));
    runId = page.url().split("/").pop();
  });

  let liveRows;
  await t.test("the run streams in live (held before its answer)", async () => {
    await page.waitForSelector(".run-head .live-dot");
    await fake.waitHeld(1);
    // The first two model turns' four commands have run and exited.
    await page.waitForFunction(() => document.querySelectorAll("ol.timeline li.lane-shell .exit.ok, ol.timeline li.lane-shell .exit.bad").length === 4);
    assert.equal(await page.$$eval("ol.timeline li.lane-destroy", (l) => l.length), 0);
    assert.match(await page.$eval(".run-head .badge", (e) => e.textContent), /Running/);
    assert.match(await page.$eval("[data-testid=cost-of]", (e) => e.textContent), /^— of \$0\.04$/);
    const pre = await page.$$eval("ol.timeline li.lane-shell pre.out", (p) => p.map((x) => x.textContent));
    assert.match(pre[0], /^\/tmp\/ephemeral-run-[A-Za-z0-9]{6}\/scratch\nworker\n$/);
    assert.match(pre[1], /curl: \(6\) Could not resolve host: example\.com/);
    assert.equal(
      await page.$eval("ol.timeline li.lane-shell [data-stream=stderr]", (e) => e.textContent.trim()),
      "curl: (6) Could not resolve host: example.com",
      "stderr told apart",
    );
    // Elapsed time ticks while live.
    const e0 = await page.$eval(".elapsed-value", (e) => e.textContent);
    await page.waitForFunction((e0) => document.querySelector(".elapsed-value")?.textContent !== e0, {}, e0);
    liveRows = await rowTexts(page);
    await shot(page, "run-live-en.png");
  });

  await t.test("a reload mid-run resumes without a line twice", async () => {
    await page.reload({ waitUntil: "domcontentloaded" });
    await page.waitForSelector(".run-head .live-dot");
    await page.waitForFunction((n) => document.querySelectorAll("ol.timeline > li.row").length >= n, {}, liveRows.length);
    assert.deepEqual(await rowTexts(page), liveRows, "the same rows, once each");
    assert.equal((await fake.state()).waiting, 1, "still mid-run");
    // Let the answer go; the rest arrives over the resumed stream.
    await fake.release();
    await page.waitForSelector("ol.timeline li.lane-destroy");
    await page.waitForFunction(() => !document.querySelector(".run-head .live-dot"));
    await page.waitForFunction(() => /^\$0\.\d+ of \$0\.04$/.test(document.querySelector("[data-testid=cost-of]")?.textContent ?? ""));
  });

  await t.test("the finished run: every event once, settled figures, output, request", async () => {
    const run = await waitRun(runId);
    assert.equal(run.status, "succeeded");
    const shown = await rowTexts(page);
    // One row per event, but a command's output and exit join its row.
    const expected = run.timeline.filter((e) => e.type !== "shell.output" && e.type !== "shell.exit");
    assert.equal(shown.length, expected.length, shown.join("\n"));
    assert.equal(new Set(shown).size, shown.length, "no row twice");
    assert.deepEqual(shown.slice(0, liveRows.length), liveRows, "what was live stays, in order");
    assert.equal(shown.filter((r) => r.includes("lane-destroy")).length, 1);
    // Each command's output once, as streamed.
    const outputs = new Map();
    for (const e of run.timeline) {
      if (e.type === "shell.output") outputs.set(e.data.call_id, (outputs.get(e.data.call_id) ?? "") + e.data.data);
    }
    const pres = await page.$$eval("ol.timeline li.lane-shell pre.out", (p) => p.map((x) => x.textContent));
    assert.deepEqual(pres, [...outputs.values()]);

    assert.match(await page.$eval(".run-head .badge", (e) => e.textContent), /Success/);
    const charged = run.cost.charged_micros;
    const money = (m) => new Intl.NumberFormat("en", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 5 }).format(m / 1e6);
    assert.equal(await page.$eval("[data-testid=cost-of]", (e) => e.textContent), `${money(charged)} of $0.04`);
    const destroy = await page.$eval("ol.timeline li.lane-destroy", (e) => e.textContent);
    assert.ok(destroy.includes(`charged ${money(charged)}, released ${money(run.cost.released_micros)}`), destroy);
    const split = await page.$eval("[data-testid=cost-split]", (e) => e.textContent);
    assert.equal(split, `Model ${money(run.cost.model_micros)} · Web ${money(run.cost.web_micros)} · Compute ${money(run.cost.compute_micros)}`);
    const success = await page.$eval("ol.timeline li.lane-success", (e) => e.textContent);
    assert.ok(success.includes(`${run.usage.model_calls} model calls, ${run.usage.total_tokens.toLocaleString("en")} tokens`), success);
    // The output, from Markdown: a list.
    assert.equal(await page.$$eval("[data-testid=output] ul > li", (l) => l.length), 4);
    assert.match(await page.$eval("[data-testid=output]", (e) => e.textContent), /2 3 5 7 11 13 17 19 23 29 31 37 41 43 47/);
    // The permissions table and the exact request.
    const perms = await page.$$eval("table.perm tbody tr", (trs) => trs.map((tr) => tr.textContent));
    assert.ok(perms.includes("Weboff"), perms.join("|"));
    assert.ok(perms.includes("Budget$0.04, hard cap"), perms.join("|"));
    assert.ok(perms.includes("Timeout120 seconds"), perms.join("|"));
    assert.ok(perms.some((p) => /^Zero data retentionoff: records are kept for \d+ days$/.test(p)), perms.join("|"));
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=request-json]").length === 1 && document.querySelector("[data-testid=request-json]").textContent.startsWith("{"));
    const shownRequest = JSON.parse(await page.$eval("[data-testid=request-json]", (e) => e.textContent));
    const kept = (await api(`/v1/runs/${runId}/request`)).json.request;
    assert.deepEqual(shownRequest, kept);
    assert.ok(String(shownRequest.prompt).startsWith(SEED_PROMPT_START));
    await page.evaluate(() => scrollTo(0, 0));
    await shot(page, "run-finished-en.png");
  });

  await t.test("the finished run replays at 4×", async () => {
    const run = await waitRun(runId);
    const total = runLength(run);
    await go(page, `/runs/${runId}`);
    await page.waitForSelector("ol.timeline li.lane-destroy");
    const all = (await rowTexts(page)).length;
    await page.click("button[data-speed='4']");
    assert.equal(await page.$eval("button[data-speed='4']", (b) => b.getAttribute("aria-pressed")), "true");
    const started = Date.now();
    await page.click("[data-testid=play]");
    // Back to the start: only what happened at t=0 is shown, then it grows.
    const firstCount = await page.$$eval("ol.timeline > li.row", (l) => l.length);
    assert.ok(firstCount < all, `replay starts over (${firstCount} of ${all})`);
    assert.equal(await page.$eval("[data-testid=play]", (b) => b.textContent), "Pause");
    const seen = new Set([firstCount]);
    await page.waitForFunction(
      (all) => document.querySelector("[data-testid=play]")?.textContent === "Play" && document.querySelectorAll("ol.timeline > li.row").length === all,
      { polling: 50 },
      all,
    );
    const took = Date.now() - started;
    // 4× the recorded time at most speed: never faster than a quarter of it.
    assert.ok(took >= (total / 4) * 0.9, `a ${total} ms run replayed in ${took} ms at 4×`);
    assert.equal(await page.$eval("[data-testid=scrubber]", (s) => s.value), String(Math.round(total)));
    assert.deepEqual((await rowTexts(page)).length, all);
    seen.add(all);

    // Scrubbing back to 0 shows the start; "instant" shows it all.
    await page.$eval("[data-testid=scrubber]", (s) => {
      s.value = "0";
      s.dispatchEvent(new Event("input", { bubbles: true }));
    });
    assert.ok((await page.$$eval("ol.timeline > li.row", (l) => l.length)) < all);
    await page.click("button[data-speed='instant']");
    await page.waitForFunction((all) => document.querySelectorAll("ol.timeline > li.row").length === all, {}, all);
  });

  await t.test("signing out forgets the key; it never went into a URL or the server's log", async () => {
    await page.click("button.signout");
    await page.waitForSelector("form.signin");
    assert.equal(new URL(page.url()).pathname, "/");
    assert.equal(await page.evaluate(() => sessionStorage.getItem("ephemeral.key")), null);
    assert.equal(await page.$("button.signout"), null);
    for (const r of problems.requests) assert.ok(!r.url.includes(KEY), r.url);
    if (process.env.EPHEMERAL_SERVE_LOG) {
      const log = readFileSync(process.env.EPHEMERAL_SERVE_LOG, "utf8");
      assert.ok(log.length > 0);
      assert.ok(!log.includes(KEY), "the key is in the server's log");
    }
    // Pages that need a key ask for it again.
    await go(page, `/runs/${runId}`);
    await page.waitForSelector("form.signin");
  });

  assertClean(assert, problems, { allow: [/status of 401/] });
  await page.close();
});

test("a dropped event stream resumes with Last-Event-ID, nothing missed, nothing twice", async () => {
  const proxy = await startProxy(BASE);
  const { page, context, problems } = await openTab(browser, { key: KEY, lang: "en" });
  try {
    await fake.hold();
    const { id } = await createRun({ prompt: "seed", max_cost_micros: 40000 });
    await page.goto(`${proxy.url}/runs/${id}`, { waitUntil: "domcontentloaded" });
    await page.waitForSelector(".run-head .live-dot");
    await fake.waitHeld(1);
    await page.waitForFunction(() => document.querySelectorAll("ol.timeline li.lane-shell .exit.ok, ol.timeline li.lane-shell .exit.bad").length === 4);
    const before = await rowTexts(page);
    const lastSeq = (await api(`/v1/runs/${id}`)).json.timeline.at(-1).seq;

    const streams = () => problems.requests.filter((r) => r.url === `${proxy.url}/v1/runs/${id}/events`);
    const opened = streams().length;
    const lost = page.waitForFunction(() => document.querySelector(".connection.lost")?.textContent === "Connection lost, resuming…", { polling: "mutation" });
    assert.ok(proxy.drop() > 0, "there was a connection to cut");
    await lost;
    await page.waitForFunction(() => !document.querySelector(".connection.lost"));
    const again = streams().slice(opened);
    assert.ok(again.length >= 1, "it reconnected");
    assert.equal(again[0].headers["last-event-id"], String(lastSeq), "from the last event it had");
    assert.deepEqual(await rowTexts(page), before, "nothing twice");

    await fake.release();
    await page.waitForSelector("ol.timeline li.lane-destroy");
    await page.waitForFunction(() => !document.querySelector(".run-head .live-dot"));
    const run = await waitRun(id);
    const shown = await rowTexts(page);
    assert.equal(shown.length, run.timeline.filter((e) => e.type !== "shell.output" && e.type !== "shell.exit").length, shown.join("\n"));
    assert.equal(new Set(shown).size, shown.length);
    assertClean(assert, problems, { allow: [/net::ERR_INCOMPLETE_CHUNKED_ENCODING @ .*\/events$/] });
  } finally {
    await fake.release();
    await context.close();
    await proxy.close();
  }
});
