/**
 * A real `ephemeral serve` for the tests: SQLite in a temporary folder,
 * in-process (`wasm`) sandboxes so it starts in milliseconds, and the
 * `ephemeral/script` model, which runs each prompt line as a shell command
 * (no LLM). Port 0: the server picks a free port and says which on stderr.
 *
 * Two organisations: `sdk` (a large balance) and `poor` (1,000 micros, so
 * a budget within the per-run cap is still over its balance: a 402).
 */

import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export const BIN = process.env.EPHEMERAL_BIN || "/var/cache/ephemeral/target/release/ephemeral";

export interface TestServer {
  url: string;
  /** A member key of `sdk` (balance $100, per-run cap $10). */
  key: string;
  /** A member key of `poor` (balance 1,000 micros, per-run cap $10). */
  poorKey: string;
  dataDir: string;
  /** What the server wrote on stderr so far (for failure messages). */
  log(): string;
  /** SIGTERM, then SIGKILL if it lingers; removes the data folder. */
  stop(): Promise<void>;
}

export interface ServerOptions {
  /** Extra TOML lines (e.g. `[limits]\nruns_per_minute = 1`). */
  extraConfig?: string;
}

export async function startServer(options: ServerOptions = {}): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), "ephemeral-sdk-ts-"));
  const config = join(dataDir, "config.toml");
  await writeFile(
    config,
    [
      `listen = "127.0.0.1:0"`,
      `data_dir = ${JSON.stringify(dataDir)}`,
      `isolation = "wasm"`,
      `default_model = "ephemeral/script"`,
      // Tests that leave a run going must not hold the server's exit for 30 s.
      `shutdown_grace_seconds = 1`,
      options.extraConfig ?? "",
    ].join("\n"),
  );
  const key = await createKey(config, "sdk", 100_000_000);
  const poorKey = await createKey(config, "poor", 1_000);

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    EPHEMERAL_PROGRAMS_DIR: process.env.EPHEMERAL_PROGRAMS_DIR ?? "/var/cache/ephemeral/programs",
    EPHEMERAL_CACHE_DIR: process.env.EPHEMERAL_CACHE_DIR ?? "/var/cache/ephemeral/components",
  };
  // The client's variables are the client's: the server has no use for them.
  delete env.EPHEMERAL_URL;
  delete env.EPHEMERAL_API_KEY;
  const child = spawn(BIN, ["serve", "--config", config], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout?.on("data", (d: Buffer) => (log += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (log += d.toString()));
  let url: string;
  try {
    url = await listening(child, () => log);
    await healthy(url);
  } catch (e) {
    // A server that did not come up must not outlive the test file (nor keep it running).
    await stop(child);
    await rm(dataDir, { recursive: true, force: true });
    throw e;
  }
  return {
    url,
    key,
    poorKey,
    dataDir,
    log: () => log,
    stop: async () => {
      await stop(child);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function createKey(config: string, org: string, balance: number): Promise<string> {
  const { stdout } = await run(BIN, ["keys", "create", "--org", org, "--config", config]);
  const key = stdout.split("\n").map((l) => l.trim()).find((l) => l.length > 0);
  if (!key) throw new Error(`keys create --org ${org} printed no key`);
  await run(BIN, [
    "orgs",
    "set",
    "--org",
    org,
    "--balance-micros",
    String(balance),
    "--per-run-cap-micros",
    "10000000",
    "--config",
    config,
  ]);
  return key;
}

/** The URL from `ephemeral: listening on http://…`, or the reason it never came. */
function listening(child: ChildProcess, log: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the server did not start within 30 s:\n${log()}`));
    }, 30_000);
    const look = (): void => {
      // The whole line: stderr may arrive in pieces, and half an address is no address.
      const m = /listening on (http:\/\/[0-9.:]+)\r?\n/.exec(log());
      if (m?.[1]) {
        clearTimeout(timer);
        child.stderr?.off("data", look);
        resolve(m[1]);
      }
    };
    child.stderr?.on("data", look);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code}) before listening:\n${log()}`));
    });
  });
}

async function healthy(url: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      const r = await fetch(`${url}/v1/health`);
      if (r.ok) return;
    } catch {
      // Not yet.
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url}/v1/health never answered 200`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** A unique tag for `metadata`, to find this test's runs among the others. */
export function tag(): string {
  return crypto.randomUUID();
}
