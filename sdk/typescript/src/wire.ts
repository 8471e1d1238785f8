/**
 * The wire speaks snake_case (`max_cost_micros`); the SDK's types are
 * camelCase (`maxCostMicros`). These helpers convert keys both ways.
 *
 * Keys under `metadata` and `env` are the caller's own and are never
 * converted: a metadata key `build_id` stays `build_id` in both directions.
 *
 * @module
 */

import { EphemeralError } from "./errors.js";
import type { FileInput } from "./types.js";

/** Keys whose values are maps of the caller's own names. */
const OPAQUE = new Set(["metadata", "env"]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** `max_cost_micros` → `maxCostMicros`. */
export function camelKey(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** `maxCostMicros` → `max_cost_micros`; `contentBase64` → `content_base64`. */
export function snakeKey(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}

function convert(value: unknown, key: (k: string) => string): unknown {
  if (Array.isArray(value)) return value.map((v) => convert(v, key));
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    out[key(k)] = OPAQUE.has(k) ? v : convert(v, key);
  }
  return out;
}

/** A server body with camelCase keys (deeply, except opaque maps). */
export function fromWire<T>(value: unknown): T {
  return convert(value, camelKey) as T;
}

/** A request body with snake_case keys (deeply, except opaque maps); `undefined` fields are left out. */
export function toWire(value: unknown): unknown {
  return convert(value, snakeKey);
}

/**
 * Base64 of bytes without Node's Buffer (browsers have only `btoa`, which
 * takes a "binary string"); chunked so large inputs do not overflow the
 * argument list of `String.fromCharCode`.
 */
export function base64(bytes: Uint8Array): string {
  let binary = "";
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) {
    binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  }
  return btoa(binary);
}

/**
 * A file path as URL path segments: each segment percent-encoded, `/` kept
 * between them. A leading `/` (an absolute path under `/tmp`) is sent as
 * `%2F`, so no proxy that merges double slashes can turn `/tmp/x` into the
 * relative `tmp/x`.
 */
export function encodePath(path: string): string {
  if (typeof path !== "string" || path === "") throw new TypeError("a file path must be a non-empty string");
  const absolute = path.startsWith("/");
  const segments = path.replace(/^\/+/, "").split("/");
  // URL parsers resolve `..` (even as `%2E%2E`) before sending: `files/../x`
  // would reach another endpoint. The server refuses such paths anyway.
  if (segments.includes("..")) {
    throw new EphemeralError(`a file path must not contain '..': ${JSON.stringify(path.slice(0, 200))}`);
  }
  const encoded = segments.map(encodeURIComponent).join("/");
  return absolute ? `%2F${encoded}` : encoded;
}

/** An id as one URL path segment. */
export function encodeId(id: string): string {
  if (typeof id !== "string" || id === "") {
    throw new TypeError("an id must be a non-empty string");
  }
  return encodeURIComponent(id);
}

/** `files` of a create in wire form: `bytes` become `content_base64`. */
export function filesToWire(files: FileInput[]): unknown {
  if (!Array.isArray(files)) return files;
  return files.map((f) => {
    if (f && typeof f === "object" && "bytes" in f && f.bytes instanceof Uint8Array) {
      return { path: f.path, content_base64: base64(f.bytes) };
    }
    return toWire(f);
  });
}

/**
 * A fresh `Idempotency-Key`: `crypto.randomUUID()`, or the same from
 * `getRandomValues` where `randomUUID` is missing (browsers outside a
 * secure context).
 */
export function newIdempotencyKey(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === "function") return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
