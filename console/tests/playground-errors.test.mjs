/**
 * The playground's problems shown where they belong: a 402 (a budget above
 * the balance) next to the budget field, a 400 naming a field next to that
 * field, a value that is not a number caught before sending.
 */

import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { BASE, KEY, POOR_KEY, api, assertClean, go, launch, openTab } from "./support/harness.mjs";

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/** The error text shown in the field wrapper `name`, and whether its control is marked invalid. */
function fieldError(page, name) {
  return page.$eval(`[data-field='${name}']`, (w) => {
    const err = w.querySelector(".field-error");
    const control = w.querySelector("input, textarea, select");
    return {
      text: err?.textContent ?? "",
      visible: !!err && err.getClientRects().length > 0,
      invalid: control?.getAttribute("aria-invalid") === "true",
      describedBy: (control?.getAttribute("aria-describedby") ?? "").split(" ").includes(err?.id ?? "-"),
      focused: document.activeElement === control,
    };
  });
}

async function setField(page, name, value) {
  await page.$eval(`[name='${name}']`, (e) => {
    e.focus();
    e.select?.();
  });
  await page.keyboard.press("Backspace");
  await page.type(`[name='${name}']`, value);
}

test("402: a budget above the balance is shown next to the budget field", async () => {
  const before = await runsOf(POOR_KEY);
  const { page, context, problems } = await openTab(browser, { key: POOR_KEY });
  await go(page, "/playground");
  await page.waitForSelector("[data-testid=send]");
  assert.equal(await page.$eval("input[name=max_cost_micros]", (e) => e.value), "0.04");
  const answered = page.waitForResponse((r) => r.url() === `${BASE}/v1/runs` && r.request().method() === "POST");
  await page.click("[data-testid=send]");
  const res = await answered;
  assert.equal(res.status(), 402);
  const problem = await res.json();
  assert.equal(problem.type, "/problems/insufficient-funds");

  await page.waitForFunction(() => document.querySelector("[data-field='max_cost_micros'] .field-error")?.textContent);
  const e = await fieldError(page, "max_cost_micros");
  assert.equal(e.text, problem.detail || problem.title);
  assert.ok(e.visible && e.invalid && e.describedBy && e.focused, JSON.stringify(e));
  // Only there: no other field is blamed, no general box.
  for (const other of ["prompt", "timeout_seconds", "model"]) assert.equal((await fieldError(page, other)).text, "", other);
  assert.equal(await page.$eval(".general-error", (g) => g.textContent), "");
  assert.equal(await page.$eval("[data-testid=send]", (b) => b.disabled), false, "can try again");
  assert.equal(new URL(page.url()).pathname, "/playground", "stays");
  assert.equal(await runsOf(POOR_KEY), before, "no run was made");

  // Typing in the field clears its error; a budget within the balance goes through.
  await setField(page, "max_cost_micros", "0.0009");
  assert.equal((await fieldError(page, "max_cost_micros")).text, "");
  assert.match(await page.$eval("[data-field='max_cost_micros'] .hint", (h) => h.textContent), /^= 900 micro-dollars/);
  assert.equal(JSON.parse(await page.$eval("[data-testid=request-json]", (c) => c.textContent)).max_cost_micros, 900);
  await page.click("[data-testid=send]");
  await page.waitForFunction(() => /^\/runs\/run_[0-9a-f]{32}$/.test(location.pathname));
  assertClean(assert, problems, { allow: [/status of 402/] });
  await context.close();
});

test("400 naming a field: shown next to that field", async () => {
  const { page, context, problems } = await openTab(browser, { key: KEY });
  await go(page, "/playground");
  await page.waitForSelector("[data-testid=send]");
  await setField(page, "timeout_seconds", "999999");
  const answered = page.waitForResponse((r) => r.url() === `${BASE}/v1/runs` && r.request().method() === "POST");
  await page.click("[data-testid=send]");
  const res = await answered;
  assert.ok([400, 422].includes(res.status()), `status ${res.status()}`);
  const problem = await res.json();
  const named = problem.errors?.find((f) => f.field === "timeout_seconds");
  assert.ok(named, JSON.stringify(problem));
  await page.waitForFunction(() => document.querySelector("[data-field='timeout_seconds'] .field-error")?.textContent);
  const e = await fieldError(page, "timeout_seconds");
  assert.ok(e.text.includes(named.message), JSON.stringify(e));
  assert.ok(e.invalid && e.focused, JSON.stringify(e));
  assert.equal((await fieldError(page, "max_cost_micros")).text, "");
  assertClean(assert, problems, { allow: [/status of (400|422)/] });
  await context.close();
});

test("what is not a number is caught before sending", async () => {
  const { page, context, problems } = await openTab(browser, { key: KEY });
  await go(page, "/playground");
  await page.waitForSelector("[data-testid=send]");
  await setField(page, "max_cost_micros", "four cents");
  let posted = 0;
  page.on("request", (r) => {
    if (r.method() === "POST") posted++;
  });
  await page.click("[data-testid=send]");
  await page.waitForFunction(() => document.querySelector("[data-field='max_cost_micros'] .field-error")?.textContent);
  assert.equal((await fieldError(page, "max_cost_micros")).text, "Enter a number.");
  assert.equal(posted, 0);
  assertClean(assert, problems);
  await context.close();
});

async function runsOf(key) {
  const r = await api("/v1/runs?limit=100", { key });
  return r.json.data.length;
}
