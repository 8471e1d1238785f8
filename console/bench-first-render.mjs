#!/usr/bin/env node
/**
 * First render of a finished run's page, in Debian's headless Chromium: a
 * benchmark (numbers to read), not a test (nothing is asserted).
 *
 *   node console/bench-first-render.mjs [N]      (N loads of each kind, default 100)
 *
 * Starts its own `ephemeral serve` ($EPHEMERAL_BIN, default the release
 * build; SQLite in a temporary folder, `wasm` sandboxes, the built-in
 * `scripted/seed` model, so no LLM), makes one seed run, waits for it to
 * end, then loads /runs/{id} N times in one tab (assets revalidated from
 * the browser's cache, as on a return visit) and N times each in a fresh
 * browser context (nothing cached). For each load it reads, relative to
 * navigation start (performance.timeOrigin):
 *   - "rendered": the page's own mark `ephemeral:first-render`, set once the
 *     whole timeline is in the DOM (console/src/pages/run.ts);
 *   - "painted": the first frame after that mark (requestAnimationFrame,
 *     then a task), when the timeline is on screen.
 * Prints min / p50 / p99 / max in milliseconds.
 *
 * Environment: EPHEMERAL_BIN, CHROMIUM (default /usr/bin/chromium),
 * CONSOLE_DEPS (node_modules with puppeteer-core; default ./build.sh --deps).
 */

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const N = Number(process.argv[2] ?? 100);
const BIN = process.env.EPHEMERAL_BIN || "/var/cache/ephemeral/target/release/ephemeral";
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const deps = process.env.CONSOLE_DEPS || execFileSync(join(here, "build.sh"), ["--deps"], { encoding: "utf8" }).trim();
const puppeteer = createRequire(join(deps, "noop.js"))("puppeteer-core");

const SEED = {
  prompt:
    "This is a sandbox test. Do these steps with the shell and report the real output, never what you expect. 1) Write a small script that prints the first 15 prime numbers, run it and show the output. 2) Run `whoami` and `pwd`. 3) Try to reach the internet with `curl -sS -m 8 https://example.com` (and, if curl is missing, python3 with urllib) and report the exact error. 4) Write a file named /tmp/proof.txt and list it. Reply in Markdown, at most 120 words: one line per step with the result, then one sentence saying whether the network call succeeded.",
  web: false,
  shell: true,
  timeout_seconds: 120,
  max_cost_micros: 40000,
};

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
const fmt = (xs) =>
  `min ${Math.min(...xs).toFixed(1)}  p50 ${pct(xs, 50).toFixed(1)}  p99 ${pct(xs, 99).toFixed(1)}  max ${Math.max(...xs).toFixed(1)} ms`;

async function startServer(dir) {
  const config = join(dir, "config.toml");
  writeFileSync(
    config,
    [`listen = "127.0.0.1:0"`, `data_dir = ${JSON.stringify(dir)}`, `isolation = "wasm"`, `default_model = "scripted/seed"`, `shutdown_grace_seconds = 1`].join("\n"),
  );
  const key = execFileSync(BIN, ["keys", "create", "--org", "bench", "--config", config], { encoding: "utf8" }).trim().split("\n")[0].trim();
  execFileSync(BIN, ["orgs", "set", "--org", "bench", "--balance-micros", "100000000", "--config", config]);
  const env = { ...process.env };
  delete env.EPHEMERAL_URL;
  delete env.EPHEMERAL_API_KEY;
  env.EPHEMERAL_PROGRAMS_DIR ??= "/var/cache/ephemeral/programs";
  env.EPHEMERAL_CACHE_DIR ??= "/var/cache/ephemeral/components";
  const child = spawn(BIN, ["serve", "--config", config], { env, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  const url = await new Promise((resolve, reject) => {
    child.stderr.on("data", (d) => {
      log += d;
      const m = /listening on (http:\/\/[0-9.:]+)\r?\n/.exec(log);
      if (m) resolve(m[1]);
    });
    child.once("exit", (code) => reject(new Error(`the server exited (${code}):\n${log}`)));
  });
  return { url, key, child };
}

async function until(cond, what, ms = 120_000) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Loads the page once in `page` and returns {rendered, painted} in ms since navigation start. */
async function load(page, url) {
  await page.goto(url, { waitUntil: "domcontentloaded" });
  await page.waitForFunction(() => window.__painted !== undefined && document.querySelector("ol.timeline li.lane-destroy"), {
    polling: 20,
    timeout: 60_000,
  });
  return page.evaluate(() => ({
    rendered: performance.getEntriesByName("ephemeral:first-render")[0].startTime,
    painted: window.__painted,
  }));
}

async function prepare(page, key) {
  await page.evaluateOnNewDocument((k) => {
    sessionStorage.setItem("ephemeral.key", k);
    new PerformanceObserver((list) => {
      if (list.getEntries().some((e) => e.name === "ephemeral:first-render")) {
        requestAnimationFrame(() => setTimeout(() => (window.__painted = performance.now()), 0));
      }
    }).observe({ type: "mark", buffered: true });
  }, key);
}

const dir = mkdtempSync(join(tmpdir(), "ephemeral-bench-console-"));
let server;
let browser;
try {
  server = await startServer(dir);
  const auth = { authorization: `Bearer ${server.key}`, "content-type": "application/json" };
  const created = await (await fetch(`${server.url}/v1/runs`, { method: "POST", headers: auth, body: JSON.stringify(SEED) })).json();
  let run;
  await until(async () => {
    run = await (await fetch(`${server.url}/v1/runs/${created.id}`, { headers: auth })).json();
    return run.timeline?.at(-1)?.type === "worker.destroyed";
  }, "the run to end");
  const url = `${server.url}/runs/${run.id}`;
  console.log(`run ${run.id}: ${run.status}, ${run.timeline.length} events; chromium ${CHROMIUM}; ${N} loads each`);

  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run", "--disable-extensions", "--disable-background-networking"],
    defaultViewport: { width: 1280, height: 900 },
  });

  // Warm: one tab, the assets revalidated (ETag → 304) as on a return visit.
  const tab = await browser.newPage();
  await prepare(tab, server.key);
  for (let i = 0; i < 3; i++) await load(tab, url); // warm-up, not counted
  const warm = { rendered: [], painted: [] };
  for (let i = 0; i < N; i++) {
    const r = await load(tab, url);
    warm.rendered.push(r.rendered);
    warm.painted.push(r.painted);
  }
  await tab.close();

  // Cold: a fresh browser context each time (empty cache, new connection).
  const cold = { rendered: [], painted: [] };
  for (let i = 0; i < N; i++) {
    const ctx = await browser.createBrowserContext();
    const page = await ctx.newPage();
    await prepare(page, server.key);
    const r = await load(page, url);
    cold.rendered.push(r.rendered);
    cold.painted.push(r.painted);
    await ctx.close();
  }

  console.log("first render of a finished run page, from navigation start:");
  console.log(`  warm cache  rendered  ${fmt(warm.rendered)}`);
  console.log(`  warm cache  painted   ${fmt(warm.painted)}`);
  console.log(`  cold cache  rendered  ${fmt(cold.rendered)}`);
  console.log(`  cold cache  painted   ${fmt(cold.painted)}`);
} finally {
  await browser?.close().catch(() => {});
  if (server) {
    server.child.kill("SIGTERM");
    await new Promise((r) => server.child.once("exit", r));
  }
  rmSync(dir, { recursive: true, force: true });
}
