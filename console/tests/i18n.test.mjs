/**
 * Japanese, the seed page's language: chosen from the browser's preference,
 * money and numbers formatted per locale as on the seed page
 * ("$0.04 のうち $0.00353"), and the language switch (remembered).
 */

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import {
  KEY,
  assertClean,
  createRun,
  fake,
  go,
  launch,
  openTab,
  publish,
  shot,
  waitRun,
} from "./support/harness.mjs";

const money = (lang, micros) =>
  new Intl.NumberFormat(lang, { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 5 }).format(micros / 1e6);

let browser;
before(async () => {
  browser = await launch({ lang: "ja" });
});
after(async () => {
  await fake.release();
  await browser?.close();
});

test("money as the seed page writes it, in both languages", () => {
  // The console's rule (i18n.ts money): 2 to 5 decimals.
  assert.equal(`${money("ja", 40000)} のうち ${money("ja", 3530)}`, "$0.04 のうち $0.00353");
  assert.equal(`${money("en", 3530)} of ${money("en", 40000)}`, "$0.00353 of $0.04");
});

test("a run in Japanese, live then finished", async () => {
  const { page, context, problems } = await openTab(browser, { key: KEY, lang: "ja" });
  await fake.hold();
  const { id } = await createRun({
    prompt: "This is a sandbox test. Do these steps with the shell and report the real output.",
    web: false,
    shell: true,
    timeout_seconds: 120,
    max_cost_micros: 40000,
  });
  await go(page, `/runs/${id}`);
  await page.waitForSelector(".run-head .live-dot");
  await fake.waitHeld(1);
  await page.waitForFunction(() => document.querySelectorAll("ol.timeline li.lane-shell .exit.ok, ol.timeline li.lane-shell .exit.bad").length === 4);
  assert.equal(await page.evaluate(() => document.documentElement.lang), "ja");
  assert.equal(await page.$eval(".run-head .badge", (e) => e.textContent), "実行中");
  assert.equal(await page.$eval(".run-head .live-dot", (e) => e.textContent), "ライブ");
  assert.equal(await page.$eval("[data-testid=cost-of]", (e) => e.textContent), "$0.04 のうち —");
  const lanes = await page.$$eval("ol.timeline .lane", (l) => [...new Set(l.map((x) => x.textContent))]);
  assert.deepEqual(lanes, ["待機中", "サンドボックス", "モデル呼び出し", "シェル"]);
  assert.equal(await page.$eval("ol.timeline li.lane-waiting .body", (e) => e.textContent), "予算 $0.04 を確保");
  assert.match(await page.$eval("ol.timeline li.lane-shell .exit", (e) => e.textContent), /^終了コード 0 · [\d.,]+(ミリ)?秒$/);
  assert.match(await page.$eval(".elapsed-value", (e) => e.textContent), /^[\d.]+秒$|^\d+分\d+秒$/);
  assert.equal(await page.$eval(".actions a.button", (e) => e.textContent), "プレイグラウンドで開く");
  await shot(page, "run-live-ja.png");

  await fake.release();
  await page.waitForSelector("ol.timeline li.lane-destroy");
  await page.waitForFunction(() => !document.querySelector(".run-head .live-dot"));
  const run = await waitRun(id);
  const cost = run.cost;
  await page.waitForFunction((want) => document.querySelector("[data-testid=cost-of]")?.textContent === want, {}, `$0.04 のうち ${money("ja", cost.charged_micros)}`);
  assert.match(await page.$eval("[data-testid=cost-of]", (e) => e.textContent), /^\$0\.04 のうち \$0\.\d{2,5}$/);
  assert.equal(await page.$eval(".run-head .badge", (e) => e.textContent), "成功");
  assert.equal(
    await page.$eval("ol.timeline li.lane-destroy .body", (e) => e.textContent),
    `${money("ja", cost.charged_micros)} を請求、${money("ja", cost.released_micros)} を解放`,
  );
  assert.equal(
    await page.$eval("ol.timeline li.lane-success .body", (e) => e.textContent),
    `モデル呼び出し ${run.usage.model_calls} 回、トークン ${run.usage.total_tokens.toLocaleString("ja")}`,
  );
  assert.equal(await page.$eval("ol.timeline li.lane-success .lane", (e) => e.textContent), "成功");
  assert.equal(await page.$eval("ol.timeline li.lane-destroy .lane", (e) => e.textContent), "ワーカーを破棄");
  assert.equal(
    await page.$eval("[data-testid=cost-split]", (e) => e.textContent),
    `モデル ${money("ja", cost.model_micros)} · Web ${money("ja", cost.web_micros)} · コンピュート ${money("ja", cost.compute_micros)}`,
  );
  const perms = await page.$$eval("table.perm tbody tr", (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
  const table = Object.fromEntries(perms);
  assert.equal(table["接続"], "なし");
  assert.equal(table["Web"], "オフ");
  assert.equal(table["シェル"], "オン（隔離されたマシンの内部）");
  assert.equal(table["予算"], "$0.04、厳格な上限");
  assert.equal(table["タイムアウト"], "120 秒");
  assert.match(table["ゼロデータ保持"], /^オフ: 記録は \d+ 日間保存されます$/);
  // Model calls: tokens grouped per locale.
  assert.match(await page.$eval("ol.timeline li.lane-model .body", (e) => e.textContent), /^呼び出し 1 · fake\/seed · 入力 1,200、出力 60 トークン · \$0\.\d+/);
  await page.evaluate(() => scrollTo(0, 0));
  await shot(page, "run-finished-ja.png");

  // The switch: English, remembered across a reload; then back.
  await page.select("#lang", "en");
  await page.waitForFunction(() => document.documentElement.lang === "en");
  assert.equal(await page.$eval(".run-head .badge", (e) => e.textContent), "Success");
  assert.equal(await page.$eval("[data-testid=cost-of]", (e) => e.textContent), `${money("en", cost.charged_micros)} of $0.04`);
  assert.equal(await page.evaluate(() => localStorage.getItem("ephemeral.lang")), "en");
  await page.reload({ waitUntil: "domcontentloaded" });
  await page.waitForSelector("ol.timeline li.lane-destroy");
  assert.equal(await page.$eval(".run-head .badge", (e) => e.textContent), "Success");
  assert.equal(await page.$eval("#lang", (s) => s.getAttribute("aria-label")), "Language");
  await page.select("#lang", "ja");
  await page.waitForFunction(() => document.documentElement.lang === "ja");
  assert.equal(await page.$eval(".run-head .badge", (e) => e.textContent), "成功");
  assert.equal(await page.$eval("nav ul a[href='/runs']", (e) => e.textContent), "実行");
  assertClean(assert, problems);
  await context.close();

  // A sample in Japanese: the date as Japanese writes it.
  const sample = await publish(id, "シードの実行");
  const anon = await openTab(browser, { lang: "ja" });
  await go(anon.page, `/samples/${sample}`);
  await anon.page.waitForSelector("ol.timeline li.lane-destroy");
  assert.match(
    await anon.page.$eval(".replay-of", (e) => e.textContent),
    /^\d{4}年\d{1,2}月\d{1,2}日 の実際の実行を再生しています。モデル: fake\/seed。$/,
  );
  assert.equal(await anon.page.$eval(".actions a.button", (e) => e.textContent), "自分で実行する");
  assert.equal(await anon.page.$eval(".eyebrow", (e) => e.textContent), "実際の実行を見る");
  assertClean(assert, anon.problems);
  await anon.context.close();
});

test("the browser's preference picks the language when nothing was chosen", async () => {
  const ja = await openTab(browser, { lang: "ja" });
  await go(ja.page, "/");
  await ja.page.waitForSelector("form.signin");
  assert.equal(await ja.page.evaluate(() => document.documentElement.lang), "ja");
  assert.equal(await ja.page.$eval("main h2", (h) => h.textContent), "サインイン");
  await ja.context.close();
  const en = await openTab(browser, { lang: "en" });
  await go(en.page, "/");
  await en.page.waitForSelector("form.signin");
  assert.equal(await en.page.evaluate(() => document.documentElement.lang), "en");
  assert.equal(await en.page.$eval("main h2", (h) => h.textContent), "Sign in");
  await en.context.close();
});
