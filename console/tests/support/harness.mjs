/**
 * What the console's tests share: the server run-tests.sh started (its URL,
 * two member keys, its configuration), the fake model's controls, the API
 * from Node, and Chromium through puppeteer-core (from ./build.sh --deps).
 *
 * Nothing here sleeps for correctness: every wait is for a condition (a
 * DOM state, a run's status), with generous limits, so a loaded machine is
 * slower, never wrong.
 */

import { execFile } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { promisify } from "node:util";

const need = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run the tests through console/run-tests.sh`);
  return v;
};

export const BASE = need("EPHEMERAL_URL");
export const KEY = need("EPHEMERAL_TEST_KEY");
export const POOR_KEY = need("EPHEMERAL_POOR_KEY");
export const FAKE = need("FAKE_LLM_URL");
export const BIN = need("EPHEMERAL_BIN");
export const CONFIG = need("EPHEMERAL_CONFIG");
export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
export const SHOTS = process.env.SCREENSHOTS_DIR || new URL("../../screenshots/", import.meta.url).pathname;
export const DIST = new URL("../../dist/", import.meta.url).pathname;

const require = createRequire(join(need("CONSOLE_DEPS"), "noop.js"));
export const puppeteer = require("puppeteer-core");

/** Limits for waits: long, since a slow machine is not a failure. */
export const LONG = 90_000;

/** The seed request as the playground prefills it (console/src/pages/playground.ts). */
export const SEED_PROMPT_START = "This is a sandbox test.";

// ---- the fake model ------------------------------------------------------

export const fake = {
  /** From now on, every run's last model turn (its answer) waits for `release`. */
  hold: () => fetch(`${FAKE}/control/hold`, { method: "POST" }).then((r) => r.json()),
  release: () => fetch(`${FAKE}/control/release`, { method: "POST" }).then((r) => r.json()),
  state: () => fetch(`${FAKE}/control/state`).then((r) => r.json()),
  /** Until `n` answers are being held. */
  async waitHeld(n = 1) {
    await until(async () => (await fake.state()).waiting >= n, "the fake model to hold an answer");
  },
};

// ---- the API ---------------------------------------------------------------

export async function api(path, { key = KEY, method = "GET", body, headers = {} } = {}) {
  const h = { accept: "application/json", ...headers };
  if (key) h.authorization = `Bearer ${key}`;
  if (body !== undefined) h["content-type"] = "application/json";
  const res = await fetch(`${BASE}${path}`, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, headers: res.headers, json, text };
}

export async function createRun(body, key = KEY) {
  const r = await api("/v1/runs", { key, method: "POST", body, headers: { "idempotency-key": crypto.randomUUID() } });
  if (r.status !== 201) throw new Error(`POST /v1/runs answered ${r.status}: ${r.text}`);
  return r.json;
}

export const FINISHED = new Set(["succeeded", "failed", "timed_out", "budget_exceeded", "cancelled"]);

/** The run once it has ended (its timeline ends with worker.destroyed). */
export async function waitRun(id, key = KEY) {
  let run;
  await until(async () => {
    run = (await api(`/v1/runs/${id}`, { key })).json;
    return FINISHED.has(run?.status) && run.timeline?.at(-1)?.type === "worker.destroyed";
  }, `run ${id} to end`);
  return run;
}

export async function publish(runId, title) {
  const args = ["samples", "publish", runId, "--config", CONFIG];
  if (title) args.push("--title", title);
  const { stdout } = await promisify(execFile)(BIN, args);
  const id = stdout.trim().split("\n")[0]?.trim();
  if (!id) throw new Error(`samples publish printed no id: ${stdout}`);
  return id;
}

/** Polls `cond` (async) every 100 ms until true, or fails after `ms`. */
export async function until(cond, what, ms = LONG) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      if (await cond()) return;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ""}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// ---- the browser -------------------------------------------------------------

/** Chromium, headless, 1280×900, in English or Japanese (the browser's preference). */
export async function launch({ lang = "en" } = {}) {
  const langs = lang === "ja" ? "ja-JP,ja" : "en-US,en";
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless=new",
      "--no-sandbox",
      "--disable-dev-shm-usage",
      "--disable-gpu",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-extensions",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--hide-scrollbars",
      "--mute-audio",
      "--force-color-profile=srgb",
      "--font-render-hinting=none",
      `--lang=${lang === "ja" ? "ja-JP" : "en-US"}`,
      `--accept-lang=${langs}`,
    ],
    env: { ...process.env, LANG: lang === "ja" ? "ja_JP.UTF-8" : "en_US.UTF-8", LANGUAGE: lang === "ja" ? "ja_JP:ja" : "en_US:en", TZ: "UTC" },
    defaultViewport: { width: 1280, height: 900 },
    protocolTimeout: 180_000,
  });
}

/**
 * A fresh tab (its own storage: an incognito-like context) that records
 * console errors, uncaught exceptions, dialogs and CSP violations.
 * `key`: kept in sessionStorage before the app starts (as after signing in).
 */
export async function openTab(browser, { key = null, lang = null } = {}) {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  page.setDefaultTimeout(LONG);
  page.setDefaultNavigationTimeout(LONG);
  const problems = { console: [], errors: [], dialogs: [], requests: [] };
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "assert") problems.console.push(`${m.text()} @ ${m.location()?.url ?? ""}`);
  });
  page.on("pageerror", (e) => problems.errors.push(String(e?.message ?? e)));
  page.on("dialog", async (d) => {
    problems.dialogs.push(`${d.type()}: ${d.message()}`);
    await d.dismiss().catch(() => {});
  });
  page.on("request", (r) => problems.requests.push({ url: r.url(), method: r.method(), headers: r.headers() }));
  const langs = lang === "ja" ? ["ja-JP", "ja"] : lang === "en" ? ["en-US", "en"] : null;
  await page.evaluateOnNewDocument(
    (k, langs) => {
      if (langs) {
        Object.defineProperty(navigator, "languages", { get: () => langs });
        Object.defineProperty(navigator, "language", { get: () => langs[0] });
      }
      if (k && !sessionStorage.getItem("ephemeral.key")) sessionStorage.setItem("ephemeral.key", k);
      document.addEventListener("securitypolicyviolation", (e) => {
        console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
      });
    },
    key,
    langs,
  );
  if (lang) await page.setExtraHTTPHeaders({ "accept-language": lang === "ja" ? "ja-JP,ja;q=0.9" : "en-US,en;q=0.9" });
  return { page, context, problems };
}

export async function go(page, path) {
  await page.goto(`${BASE}${path}`, { waitUntil: "domcontentloaded" });
}

export async function shot(page, name) {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: name.startsWith("/") ? name : join(SHOTS, name), type: "png" });
}

/** Text of each timeline row (lane, time, body), in order. */
export function rows(page, scope = "") {
  return page.$$eval(`${scope} ol.timeline > li.row`, (lis) =>
    lis.map((li) => `${li.className} | ${li.textContent}`),
  );
}

/**
 * Every focusable or interactive element without an accessible name, from
 * Chromium's own accessibility tree (what a screen reader gets).
 */
export async function unnamedControls(page) {
  const cdp = await page.createCDPSession();
  try {
    const { nodes } = await cdp.send("Accessibility.getFullAXTree");
    const interactive = new Set([
      "button",
      "link",
      "textbox",
      "searchbox",
      "checkbox",
      "radio",
      "switch",
      "combobox",
      "listbox",
      "slider",
      "spinbutton",
      "menuitem",
      "tab",
      "ListBox",
      "PopUpButton",
    ]);
    const bad = [];
    for (const n of nodes) {
      if (n.ignored) continue;
      const role = n.role?.value;
      const focusable = n.properties?.some((p) => p.name === "focusable" && p.value?.value === true);
      if (!interactive.has(role) && !(focusable && role && !["RootWebArea", "main", "generic", "region", "heading", "group", "pre", "code"].includes(role)))
        continue;
      const name = (n.name?.value ?? "").trim();
      if (!name) {
        let html = "";
        if (n.backendDOMNodeId) {
          try {
            const { outerHTML } = await cdp.send("DOM.getOuterHTML", { backendNodeId: n.backendDOMNodeId });
            html = outerHTML.slice(0, 160);
          } catch {
            html = "?";
          }
        }
        bad.push(`${role}: ${html}`);
      }
    }
    // Focusable elements Chromium leaves out of the tree altogether would escape the above.
    const focusables = await page.$$eval(
      "a[href], button, input:not([type=hidden]), select, textarea, [tabindex]:not([tabindex='-1'])",
      (els) => els.filter((e) => !e.closest("[hidden]") && e.getClientRects().length > 0).length,
    );
    return { bad, focusables };
  } finally {
    await cdp.detach().catch(() => {});
  }
}

/** Elements that carry an event-handler attribute (on…) anywhere in the document. */
export function handlerAttributes(page) {
  return page.$$eval("*", (els) =>
    els.flatMap((e) => [...e.attributes].filter((a) => /^on/i.test(a.name)).map((a) => `<${e.tagName.toLowerCase()} ${a.name}>`)),
  );
}

/** The first `ms` of a run's recorded time: t_ms of its last event. */
export function runLength(run) {
  return Math.max(0, ...run.timeline.map((e) => e.data?.t_ms ?? 0));
}

/** Runs `fn` with a browser, closed afterwards whatever happens. */
export async function withBrowser(opts, fn) {
  const browser = await launch(opts);
  try {
    return await fn(browser);
  } finally {
    await browser.close().catch(() => {});
  }
}

export function assertClean(assert, problems, { allow = [] } = {}) {
  const unexpected = problems.console.filter((c) => !allow.some((re) => re.test(c)));
  assert.deepEqual(unexpected, [], "console errors");
  assert.deepEqual(problems.errors, [], "uncaught exceptions");
  assert.deepEqual(problems.dialogs, [], "dialogs");
}
