/**
 * What the server sends for the console, before any browser: every page
 * path answers the same document under a strict Content-Security-Policy
 * (no inline script, no other origin, no framing), the assets are the
 * checked-in dist/ (so the binary under test embeds the current build),
 * and the whole weighs under 200 KB compressed.
 */

import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import test from "node:test";
import { gzipSync } from "node:zlib";

import { BASE, DIST } from "./support/harness.mjs";

const PAGES = ["/", "/runs", "/runs/run_0123456789abcdef0123456789abcdef", "/playground", "/samples", "/samples/smp_0123456789abcdef01234567"];

function files(dir, prefix = "") {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p, `${prefix}${name}/`) : [`${prefix}${name}`];
  });
}

function directives(csp) {
  const out = new Map();
  for (const part of csp.split(";")) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) out.set(name.toLowerCase(), values);
  }
  return out;
}

test("every page path answers the app's document with the security headers", async () => {
  const index = readFileSync(join(DIST, "index.html"), "utf8");
  for (const path of PAGES) {
    const res = await fetch(`${BASE}${path}`);
    assert.equal(res.status, 200, path);
    assert.match(res.headers.get("content-type") ?? "", /^text\/html/, path);
    assert.equal(await res.text(), index, `${path} is dist/index.html`);

    const csp = res.headers.get("content-security-policy");
    assert.ok(csp, `${path}: Content-Security-Policy`);
    const d = directives(csp);
    const script = d.get("script-src") ?? d.get("default-src");
    assert.ok(script, `${path}: script-src or default-src`);
    assert.deepEqual(script, ["'self'"], `${path}: scripts from this origin only`);
    for (const [name, values] of d) {
      for (const v of values) {
        assert.ok(!/unsafe-inline|unsafe-eval|unsafe-hashes|strict-dynamic/.test(v), `${path}: ${name} ${v}`);
        assert.ok(!/^(https?:|wss?:|\*)/.test(v) || v === "*.invalid", `${path}: ${name} allows another origin (${v})`);
      }
    }
    assert.deepEqual(d.get("object-src"), ["'none'"], `${path}: object-src 'none'`);
    const framing = d.get("frame-ancestors");
    assert.ok(
      (framing && framing.join(" ") === "'none'") || res.headers.get("x-frame-options")?.toUpperCase() === "DENY",
      `${path}: framing denied`,
    );
    assert.equal(res.headers.get("x-content-type-options"), "nosniff", `${path}: nosniff`);
    assert.ok(res.headers.get("referrer-policy"), `${path}: Referrer-Policy`);
  }
});

test("the document has no inline script, handler or style", () => {
  const index = readFileSync(join(DIST, "index.html"), "utf8");
  const scripts = [...index.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
  assert.ok(scripts.length >= 1);
  for (const [, attrs, body] of scripts) {
    assert.match(attrs, /\bsrc="\/assets\/[^"]+"/, "every script is a file of this origin");
    assert.equal(body.trim(), "", "no inline script");
  }
  assert.doesNotMatch(index, /\son[a-z]+\s*=/i, "no inline event handler");
  assert.doesNotMatch(index, /\sstyle\s*=|<style\b/i, "no inline style");
  assert.doesNotMatch(index, /(src|href)="(https?:)?\/\//i, "nothing from another origin");
  // The bundle builds no markup from strings either.
  const js = readFileSync(join(DIST, "assets/app.js"), "utf8");
  assert.doesNotMatch(js, /\.innerHTML\s*=|\.outerHTML\s*=|insertAdjacentHTML|document\.write\(/, "no HTML parsing of data");
  assert.doesNotMatch(js, /\beval\(|new Function\(/, "no eval");
});

test("the assets served are the checked-in dist/, with their types", async () => {
  for (const name of files(join(DIST, "assets"))) {
    const res = await fetch(`${BASE}/assets/${name}`);
    assert.equal(res.status, 200, name);
    const body = Buffer.from(await res.arrayBuffer());
    assert.ok(body.equals(readFileSync(join(DIST, "assets", name))), `/assets/${name} differs from dist/ (rebuild the binary)`);
    const type = res.headers.get("content-type") ?? "";
    const want = { js: /javascript/, css: /^text\/css/, svg: /^image\/svg\+xml/ }[name.split(".").pop()];
    if (want) assert.match(type, want, name);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff", name);
  }
  const missing = await fetch(`${BASE}/assets/nope.js`);
  assert.equal(missing.status, 404);
});

test("the console weighs under 200 KB compressed", () => {
  let raw = 0;
  let gz = 0;
  const sizes = [];
  for (const name of files(DIST)) {
    const bytes = readFileSync(join(DIST, name));
    const z = gzipSync(bytes, { level: 9 }).length;
    raw += bytes.length;
    gz += z;
    sizes.push(`${name} ${bytes.length} B (${z} B gzip)`);
  }
  console.log(`dist: ${raw} B, ${gz} B gzip-compressed\n  ${sizes.join("\n  ")}`);
  assert.ok(gz < 200 * 1024, `dist is ${gz} B compressed`);
});
