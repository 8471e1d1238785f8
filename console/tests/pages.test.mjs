/**
 * Lighthouse-style checks on every page, offline: no console error (nor
 * uncaught exception, nor CSP violation), every control with an accessible
 * name (from Chromium's accessibility tree), keyboard reach (the skip link
 * first), readable at phone width (no sideways scrolling), and a
 * print-friendly run page.
 */

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";

import {
  KEY,
  api,
  assertClean,
  createRun,
  fake,
  go,
  launch,
  openTab,
  publish,
  unnamedControls,
  waitRun,
} from "./support/harness.mjs";

let browser;
let runId;
let sampleId;
let liveId;
let zdrId;

before(async () => {
  browser = await launch();
  runId = (await createRun({ prompt: "seed", max_cost_micros: 40000, outputs: ["/tmp/proof.txt"] })).id;
  await waitRun(runId);
  sampleId = await publish(runId, "A sample for the page checks");
  zdrId = (await createRun({ prompt: "seed", max_cost_micros: 40000, zero_data_retention: true })).id;
  await waitRun(zdrId);
});
after(async () => {
  await fake.release();
  await browser?.close();
});

/** path, whether signed in, and what shows the page is drawn. */
const PAGES = () => [
  ["/", false, "form.signin, ul.samples"],
  ["/samples", false, `a[href='/samples/${sampleId}']`],
  [`/samples/${sampleId}`, false, "ol.timeline li.lane-destroy"],
  ["/runs", false, "form.signin"],
  ["/runs", true, `tr[data-run-id='${runId}']`],
  [`/runs/${runId}`, true, ".files-body li"],
  ["/playground", true, "[data-testid=send]"],
  [`/playground?run=${runId}`, true, "[data-testid=prefill-note]"],
  [`/playground?sample=${sampleId}`, true, "[data-testid=prefill-note]"],
  // Zero data retention: no request, no files kept.
  [`/runs/${zdrId}`, true, ".request-body .note"],
  [`/playground?run=${zdrId}`, true, "[data-testid=prefill-note]"],
];

for (const lang of ["en", "ja"]) {
  test(`every page (${lang}): no console error, every control named, no sideways scroll at phone width`, async (t) => {
    for (const [path, signedIn, ready] of PAGES()) {
      await t.test(`${path}${signedIn ? " (signed in)" : ""}`, async () => {
        const { page, context, problems } = await openTab(browser, { key: signedIn ? KEY : null, lang });
        await go(page, path);
        await page.waitForSelector(ready);
        if (path === `/runs/${runId}`) await page.waitForFunction(() => document.querySelector("[data-testid=request-json]")?.textContent?.startsWith("{"));
        if (path === "/playground") {
          // With a file being written too, and its remove button.
          await page.click(".files-editor .form-actions button");
          await page.waitForSelector(".file-draft input[type=text]");
        }
        const { bad, focusables } = await unnamedControls(page);
        assert.deepEqual(bad, [], "controls without an accessible name");
        assert.ok(focusables > 0);
        // Every page has one h1, and a language.
        assert.equal(await page.$$eval("main h1", (h) => h.length), 1);
        assert.equal(await page.evaluate(() => document.documentElement.lang), lang);

        await page.setViewport({ width: 360, height: 740 });
        await page.waitForFunction(() => document.documentElement.scrollWidth <= innerWidth + 1, { timeout: 5000 }).catch(() => {});
        const widths = await page.evaluate(() => ({
          scroll: document.documentElement.scrollWidth,
          inner: innerWidth,
          wide: [...document.querySelectorAll("main *")]
            .filter((e) => e.getBoundingClientRect().right > innerWidth + 1 && !e.closest(".table-wrap, pre, .md-table, .sr-only"))
            .slice(0, 5)
            .map((e) => `${e.tagName.toLowerCase()}.${e.className}`),
        }));
        assert.ok(widths.scroll <= widths.inner + 1, `${path}: ${widths.scroll} px wide at ${widths.inner} px: ${widths.wide}`);
        await page.setViewport({ width: 1280, height: 900 });
        assertClean(assert, problems);
        await context.close();
      });
    }
  });
}

test("a live run's page: no console error, every control named, Cancel ends it", async () => {
  await fake.hold();
  liveId = (await createRun({ prompt: "seed", max_cost_micros: 40000 })).id;
  const { page, context, problems } = await openTab(browser, { key: KEY, lang: "en" });
  await go(page, `/runs/${liveId}`);
  await page.waitForSelector(".run-head .live-dot");
  await fake.waitHeld(1);
  await page.waitForFunction(() => document.querySelectorAll("ol.timeline li.lane-shell .exit.ok, ol.timeline li.lane-shell .exit.bad").length === 4);
  assert.equal(await page.$eval(".actions button.danger", (b) => b.textContent), "Cancel run");
  assert.deepEqual((await unnamedControls(page)).bad, []);
  await page.click(".actions button.danger");
  await page.waitForSelector("ol.timeline li.lane-destroy");
  await fake.release();
  await page.waitForFunction(() => document.querySelector(".run-head .badge")?.textContent === "Cancelled");
  assert.equal(await page.$(".actions button.danger"), null, "no Cancel once ended");
  assert.equal(await page.$$eval("ol.timeline li.lane-failure .lane", (l) => l.map((x) => x.textContent).join()), "Cancelled");
  const run = await waitRun(liveId);
  assert.equal(run.status, "cancelled");
  assert.equal(run.cost.charged_micros + run.cost.released_micros, run.cost.reserved_micros);
  assertClean(assert, problems);
  await context.close();
});

test("keyboard: the skip link comes first and leads to the content; the replay is operable by keys", async () => {
  const { page, context, problems } = await openTab(browser, { key: KEY, lang: "en" });
  await go(page, `/runs/${runId}`);
  await page.waitForSelector("ol.timeline li.lane-destroy");
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement?.className), "skip");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => location.hash === "#main");
  // Tab on until the 4× button, press it with the keyboard, then Play.
  let guard = 0;
  while ((await page.evaluate(() => document.activeElement?.getAttribute("data-speed"))) !== "4") {
    await page.keyboard.press("Tab");
    if (++guard > 60) assert.fail("the 4× button cannot be reached with Tab");
  }
  await page.keyboard.press("Enter");
  assert.equal(await page.$eval("button[data-speed='4']", (b) => b.getAttribute("aria-pressed")), "true");
  await page.keyboard.down("Shift");
  while ((await page.evaluate(() => document.activeElement?.getAttribute("data-testid"))) !== "play") {
    await page.keyboard.press("Tab");
    if (++guard > 120) assert.fail("Play cannot be reached with Shift+Tab");
  }
  await page.keyboard.up("Shift");
  await page.keyboard.press("Space");
  await page.waitForFunction(() => document.querySelector("[data-testid=play]")?.textContent === "Play" && document.querySelector("ol.timeline li.lane-destroy"));
  // Visible focus: the focused control has an outline.
  const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
  assert.notEqual(outline, "none");
  assertClean(assert, problems);
  await context.close();
});

test("the run page prints without the controls", async () => {
  const { page, context, problems } = await openTab(browser, { key: KEY, lang: "en" });
  await go(page, `/runs/${runId}`);
  await page.waitForSelector("ol.timeline li.lane-destroy");
  await page.waitForSelector("[data-testid=request-json]");
  await page.emulateMediaType("print");
  const hidden = await page.evaluate(() =>
    ["#top", ".replay", ".actions", "button.copy"].map((s) => {
      const e = document.querySelector(s);
      return e ? getComputedStyle(e).display : "absent";
    }),
  );
  assert.deepEqual(hidden, ["none", "none", "none", "none"]);
  assert.notEqual(await page.$eval("ol.timeline", (e) => getComputedStyle(e).display), "none");
  const pdf = await page.pdf({ format: "A4" });
  assert.ok(pdf.length > 1000);
  assertClean(assert, problems);
  await context.close();
});

test("the runs list: newest first, 20 a page, older ones on demand, each once", async () => {
  // Enough quick runs (the script model: no model turns) for a second page.
  const made = [];
  for (let i = 0; i < 21; i++) made.push((await createRun({ prompt: `echo run ${i}`, model: "ephemeral/script", max_cost_micros: 10000 })).id);
  for (const id of made) await waitRun(id);
  const all = [];
  let before = null;
  for (;;) {
    const page = (await api(`/v1/runs?limit=100${before ? `&before=${before}` : ""}`)).json;
    all.push(...page.data.map((r) => r.id));
    if (!page.has_more) break;
    before = page.next_before;
  }

  const { page, context, problems } = await openTab(browser, { key: KEY, lang: "en" });
  await go(page, "/runs");
  await page.waitForSelector("table.runs tbody tr");
  const ids = () => page.$$eval("table.runs tbody tr", (trs) => trs.map((tr) => tr.getAttribute("data-run-id")));
  assert.deepEqual(await ids(), all.slice(0, 20), "newest first");
  const first = await page.$eval(`tr[data-run-id='${made.at(-1)}']`, (tr) => [...tr.cells].map((c) => c.textContent));
  assert.equal(first[0], "Success");
  assert.equal(first[1], made.at(-1));
  assert.equal(first[2], "ephemeral/script");
  assert.match(first[3], /^\$[\d.]+ of \$0\.01$/);
  assert.ok(first[4].length > 0 && first[5].length > 0);
  // A row's link opens the run.
  assert.equal(await page.$eval(`tr[data-run-id='${made.at(-1)}'] a`, (a) => a.getAttribute("href")), `/runs/${made.at(-1)}`);

  await page.click(".form-actions button:not([hidden])");
  await page.waitForFunction((n) => document.querySelectorAll("table.runs tbody tr").length === n, {}, Math.min(all.length, 40));
  const shown = await ids();
  assert.deepEqual(shown, all.slice(0, shown.length));
  assert.equal(new Set(shown).size, shown.length, "no run twice");
  assert.deepEqual((await unnamedControls(page)).bad, []);
  assertClean(assert, problems);
  await context.close();
});

test("a collected file downloads through the API with the key (no plain link)", async () => {
  const { page, context, problems } = await openTab(browser, { key: KEY, lang: "en" });
  const dir = mkdtempSync(join(tmpdir(), "ephemeral-console-download-"));
  const cdp = await page.createCDPSession();
  try {
    await cdp.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: dir, eventsEnabled: true, browserContextId: context.id });
    const done = new Promise((resolve) => cdp.on("Browser.downloadProgress", (e) => e.state === "completed" && resolve(e)));
    await go(page, `/runs/${runId}`);
    await page.waitForSelector(".files-body li button");
    assert.equal(await page.$eval(".files-body li .mono", (e) => e.textContent), "/tmp/proof.txt");
    assert.equal(await page.$eval(".files-body li button", (b) => b.getAttribute("aria-label")), "Download /tmp/proof.txt");
    const fetched = page.waitForResponse((r) => r.url().includes(`/v1/runs/${runId}/files/`));
    await page.click(".files-body li button");
    const res = await fetched;
    assert.equal(res.status(), 200);
    assert.ok(res.request().headers().authorization?.startsWith("Bearer "));
    await done;
    assert.deepEqual(readdirSync(dir), ["proof.txt"]);
    assert.equal(readFileSync(join(dir, "proof.txt"), "utf8"), "sandbox proof\n");
    assert.equal(new URL(page.url()).pathname, `/runs/${runId}`, "no navigation");
    assertClean(assert, problems);
  } finally {
    await cdp.detach().catch(() => {});
    await context.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
