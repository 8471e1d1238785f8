// Builds the console into the folder given as the only argument (build.sh
// passes dist/ or a temporary folder for --check). Reproducible: esbuild's
// output depends only on its inputs, nothing here writes a time, and files
// are written in a fixed order. The assets are referenced from index.html
// with `?v=` and the first 12 hex digits of their SHA-256, so a browser never
// keeps an old app.js with a new index.html.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const out = process.argv[2];
if (!out || !process.env.CONSOLE_DEPS) {
  console.error("usage: CONSOLE_DEPS=node_modules node build.mjs OUT_DIR (build.sh sets it)");
  process.exit(2);
}
const require = createRequire(join(process.env.CONSOLE_DEPS, "noop.js"));
const esbuild = require("esbuild");

const here = new URL(".", import.meta.url).pathname;
const common = {
  bundle: true,
  minify: true,
  write: false,
  legalComments: "none",
  charset: "utf8",
  logLevel: "warning",
  absWorkingDir: here,
};

const js = await esbuild.build({
  ...common,
  entryPoints: ["src/main.ts"],
  outfile: "app.js",
  format: "iife",
  target: ["es2022", "chrome110", "firefox110", "safari16"],
  define: { "process.env.NODE_ENV": '"production"' },
});
const css = await esbuild.build({
  ...common,
  entryPoints: ["src/styles.css"],
  outfile: "app.css",
  target: ["chrome110", "firefox110", "safari16"],
});

const only = (result) => {
  if (result.outputFiles.length !== 1) throw new Error("expected one output file");
  return result.outputFiles[0].contents;
};
const appJs = only(js);
const appCss = only(css);
const icon = readFileSync(join(here, "src/icon.svg"));
const v = (bytes) => createHash("sha256").update(bytes).digest("hex").slice(0, 12);

let html = readFileSync(join(here, "src/index.html"), "utf8");
const refs = { "app.js": appJs, "app.css": appCss, "icon.svg": icon };
for (const [name, bytes] of Object.entries(refs)) {
  const ref = `/assets/${name}`;
  if (!html.includes(`"${ref}"`)) throw new Error(`index.html does not reference ${ref}`);
  html = html.replaceAll(`"${ref}"`, `"${ref}?v=${v(bytes)}"`);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, "assets"), { recursive: true });
writeFileSync(join(out, "index.html"), html);
writeFileSync(join(out, "assets/app.css"), appCss);
writeFileSync(join(out, "assets/app.js"), appJs);
writeFileSync(join(out, "assets/icon.svg"), icon);
