/**
 * Everything a run produced is untrusted. A run whose commands print, and
 * whose model answers, <script>, <img onerror>, <svg onload>, iframes,
 * javascript: and data: links and terminal escapes (colours, titles, OSC 8
 * hyperlinks, screen clears), and leaves a file with such a name: on the
 * run page (live and finished, replayed), the sample page and the
 * playground nothing executes — each payload would set `window.__pwned` —
 * no dialog opens, no element carries an on… attribute, no link leads to
 * anything but http(s), and the text is shown as the text it is.
 */

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import {
  KEY,
  assertClean,
  createRun,
  fake,
  go,
  handlerAttributes,
  launch,
  openTab,
  publish,
  waitRun,
} from "./support/harness.mjs";

const REQUEST = {
  prompt: "Print <script>window.__pwned='prompt'</script> and <img src=x onerror=\"window.__pwned='prompt-img'\">",
  model: "fake/hostile",
  outputs: ["*.txt"],
  max_cost_micros: 40000,
  metadata: { note: "<script>window.__pwned='metadata'</script>" },
};

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await fake.release();
  await browser?.close();
});

/** What the page must never have, whatever the run said. */
async function assertInert(page, where) {
  // Give anything that would run a chance to: pointer over every element of the run, focus on every link.
  await page.$$eval("article.run *", (els) => {
    for (const e of els) {
      e.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
      e.dispatchEvent(new MouseEvent("mouseenter"));
    }
  });
  const state = await page.evaluate(() => ({
    pwned: window.__pwned ?? null,
    scripts: [...document.scripts].map((s) => s.getAttribute("src")),
    embedded: [...document.querySelectorAll("main iframe, main object, main embed, main svg, main img, main script, main style, main link, main base, main form:not(.playground-form):not(.signin), main meta")].map(
      (e) => e.outerHTML.slice(0, 120),
    ),
    links: [...document.querySelectorAll("main a[href]")].map((a) => a.getAttribute("href")),
    text: document.querySelector("main").textContent,
    title: document.title,
  }));
  assert.equal(state.pwned, null, `${where}: a payload ran`);
  assert.equal(state.scripts.length, 1, `${where}: scripts ${state.scripts}`);
  assert.match(state.scripts[0], /^\/assets\/app\.js\?v=[0-9a-f]{12}$/);
  assert.deepEqual(state.embedded, [], `${where}: embedded elements`);
  for (const href of state.links) {
    assert.match(href, /^(\/(?!\/)|https?:\/\/|mailto:)/, `${where}: link ${href}`);
  }
  assert.deepEqual(await handlerAttributes(page), [], `${where}: handler attributes`);
  assert.ok(!/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u009b]/.test(state.text), `${where}: control characters in the text`);
  assert.ok(!state.title.includes("title-bar"), `${where}: an escape set the title`);
  return state;
}

async function openRun(page, id) {
  await go(page, `/runs/${id}`);
  await page.waitForSelector("ol.timeline li.lane-destroy");
  await page.waitForSelector("[data-testid=output]");
  await page.waitForFunction(() => document.querySelector(".files-body li, .files-body p:not(.loading)"));
  await page.waitForFunction(() => document.querySelector("[data-testid=request-json]")?.textContent?.startsWith("{"));
}

test("a hostile run, watched live then finished: nothing executes, the text is shown as text", async () => {
  const { page, context, problems } = await openTab(browser, { key: KEY });
  await fake.hold();
  const { id } = await createRun(REQUEST);
  await go(page, `/runs/${id}`);
  await page.waitForSelector(".run-head .live-dot");
  await fake.waitHeld(1);
  await page.waitForFunction(() => document.querySelectorAll("ol.timeline li.lane-shell .exit.ok").length === 3);
  await assertInert(page, "live");
  await fake.release();
  await page.waitForSelector("ol.timeline li.lane-destroy");
  await page.waitForSelector("[data-testid=output]");
  await page.waitForFunction(() => !document.querySelector(".run-head .live-dot"));
  const live = await assertInert(page, "live, ended");

  // The payloads are there, as text.
  for (const s of [
    "<script>window.__pwned='script'</script>",
    "<img src=x onerror=\"window.__pwned='img'\">",
    "[click me](javascript:window.__pwned='link')",
    "<b onmouseover=\"window.__pwned='cmd'\">bold?</b>",
    "<img src=x onerror=window.__pwned=1>.txt",
    "RED-TEXT",
  ]) {
    assert.ok(live.text.includes(s), `shown as text: ${s}`);
  }
  // Terminal escapes: the colour codes are gone, the text around them stays; stderr is told apart.
  const outs = await page.$$eval("ol.timeline pre.out", (p) => p.map((x) => x.textContent));
  assert.ok(outs[0].includes("RED-TEXT osc-link after-clear"), outs[0]);
  assert.ok(!outs.join("").includes("[31m") && !outs.join("").includes("]8;;"), "escape sequences stripped");
  const stderr = await page.$$eval("ol.timeline [data-stream=stderr]", (s) => s.map((x) => x.textContent));
  assert.deepEqual(stderr, ["<script>window.__pwned='script'</script>\n<img src=x onerror=\"window.__pwned='img'\">\n"]);
  // The output's Markdown: the one safe link is a link, the hostile ones are text.
  const mdLinks = await page.$$eval("[data-testid=output] a", (as) => as.map((a) => [a.getAttribute("href"), a.getAttribute("rel"), a.getAttribute("target")]));
  assert.deepEqual(mdLinks, [["https://example.com/", "noopener noreferrer nofollow", "_blank"]]);
  const md = await page.$eval("[data-testid=output]", (e) => e.textContent);
  for (const s of ["[click me](javascript:window.__pwned='link')", "<javascript:window.__pwned='autolink'>", "<iframe srcdoc="]) {
    assert.ok(md.includes(s), `output shows ${s}`);
  }
  // The file with a hostile name is listed by its name.
  const files = await page.$$eval(".files-body .mono", (m) => m.map((x) => x.textContent));
  assert.deepEqual(files, ["<img src=x onerror=window.__pwned=1>.txt"]);
  assertClean(assert, problems);
  await context.close();

  // Reloaded (from the stored timeline), replayed, and the other pages that show the run.
  const run = await waitRun(id);
  assert.equal(run.status, "succeeded");
  const again = await openTab(browser, { key: KEY });
  await openRun(again.page, id);
  await assertInert(again.page, "finished");
  await again.page.click("button[data-speed='4']");
  await again.page.click("[data-testid=play]");
  await again.page.waitForFunction(() => document.querySelector("[data-testid=play]")?.textContent === "Play");
  await assertInert(again.page, "replayed");

  await go(again.page, `/playground?run=${id}`);
  await again.page.waitForSelector("[data-testid=prefill-note]");
  assert.equal(await again.page.$eval("textarea[name=prompt]", (t) => t.value), REQUEST.prompt);
  await assertInert(again.page, "playground");

  await go(again.page, "/runs");
  await again.page.waitForSelector(`tr[data-run-id='${id}']`);
  await assertInert(again.page, "runs list");
  assertClean(assert, again.problems);
  await again.context.close();

  const sample = await publish(id, "<script>window.__pwned='title'</script><img src=x onerror=\"window.__pwned='title-img'\">");
  const anon = await openTab(browser);
  await go(anon.page, `/samples/${sample}`);
  await anon.page.waitForSelector("ol.timeline li.lane-destroy");
  const s = await assertInert(anon.page, "sample");
  assert.ok(s.text.includes("<script>window.__pwned='title'</script>"), "the title as text");
  await go(anon.page, "/samples");
  await anon.page.waitForSelector(`a[href='/samples/${sample}']`);
  await assertInert(anon.page, "samples list");
  assertClean(assert, anon.problems);
  await anon.context.close();
});
