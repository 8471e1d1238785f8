/**
 * The HTTP API, as the console uses it (same origin, `/v1/…`).
 *
 * The member key is kept in `sessionStorage` only: it leaves with the tab,
 * is sent as `Authorization: Bearer`, and never goes into a URL, a cookie
 * or a log. Errors are RFC 9457 problems (`application/problem+json`).
 */

const KEY = "ephemeral.key";

export function getKey(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function setKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function forgetKey(): void {
  try {
    sessionStorage.removeItem(KEY);
  } catch {
    // nothing kept
  }
}

// ---- shapes (API.md, docs/api-shapes.md) ----------------------------------

export interface Permissions {
  shell?: boolean;
  web?: boolean;
  connections?: string[];
  files?: string[];
  outputs?: string[];
  timeout_seconds?: number;
  max_cost_micros?: number;
  zero_data_retention?: boolean;
}

export interface Cost {
  reserved_micros?: number;
  charged_micros?: number;
  released_micros?: number;
  model_micros?: number;
  web_micros?: number;
  compute_micros?: number;
}

export interface Usage {
  model_calls?: number;
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
}

export interface TimelineEvent {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

export interface Run {
  id: string;
  object: "run";
  status: string;
  created_at?: string | null;
  started_at?: string | null;
  ended_at?: string | null;
  expires_at?: string | null;
  model?: string | null;
  isolation?: string | null;
  permissions?: Permissions;
  usage?: Usage;
  cost?: Cost;
  output?: string | null;
  error?: { code?: string; message?: string } | string | null;
  metadata?: Record<string, string>;
  timeline?: TimelineEvent[];
}

export interface RunList {
  object: "list";
  data: Run[];
  has_more?: boolean;
  next_before?: string | null;
}

export interface FileEntry {
  path: string;
  size?: number;
  sha256?: string;
  content_type?: string;
}

export interface Model {
  id: string;
  provider?: string;
  input_micros_per_million?: number;
  output_micros_per_million?: number;
  context_window?: number;
  default?: boolean;
}

/** The body of `POST /v1/runs`. */
export interface RunRequest {
  prompt?: string;
  model?: string;
  shell?: boolean;
  web?: boolean;
  timeout_seconds?: number;
  max_cost_micros?: number;
  connections?: string[];
  files?: Array<{ path: string; content?: string; content_base64?: string }>;
  outputs?: string[];
  zero_data_retention?: boolean;
  metadata?: Record<string, string>;
  [field: string]: unknown;
}

export interface SampleSummary {
  id: string;
  object: "sample";
  title?: string;
  published_at?: string;
  run_id?: string;
}

export interface Sample extends SampleSummary {
  request?: RunRequest;
  run?: Run;
}

export const FINISHED = new Set(["succeeded", "failed", "timed_out", "budget_exceeded", "cancelled"]);

// ---- errors -----------------------------------------------------------------

export interface FieldError {
  field: string;
  message: string;
}

export class ApiError extends Error {
  status: number;
  type: string;
  title: string;
  detail: string;
  errors: FieldError[];
  retryAfter: string | null;

  constructor(status: number, body: Record<string, unknown> | null, retryAfter: string | null) {
    const title = typeof body?.title === "string" ? body.title : `HTTP ${status}`;
    const detail = typeof body?.detail === "string" ? body.detail : "";
    super(detail || title);
    this.status = status;
    this.type = typeof body?.type === "string" ? body.type : "";
    this.title = title;
    this.detail = detail;
    this.errors = Array.isArray(body?.errors)
      ? (body.errors as unknown[]).flatMap((e) => {
          const o = e as Record<string, unknown>;
          return typeof o?.field === "string" ? [{ field: o.field, message: String(o.message ?? "") }] : [];
        })
      : [];
    this.retryAfter = retryAfter;
  }
}

/** Called when the server refuses the key (401): the app shows the sign-in form. */
let onUnauthorized: (() => void) | null = null;
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

export interface CallOptions {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Send no key even when one is kept (the public sample endpoints). */
  anonymous?: boolean;
  /** Use this key instead of the kept one (signing in). */
  key?: string;
}

/** Clock skew estimate: server time minus this machine's (from `Date` headers). */
let skewMs = 0;
export function serverNow(): number {
  return Date.now() + skewMs;
}
function noteDate(res: Response): void {
  const d = res.headers.get("date");
  const when = d ? Date.parse(d) : NaN;
  if (Number.isFinite(when)) {
    const s = when - Date.now();
    // Date has one-second resolution: only correct big differences.
    skewMs = Math.abs(s) > 1500 ? s : 0;
  }
}

/** Sends a request and gives the response (errors thrown as ApiError). */
export async function request(path: string, opts: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { Accept: "application/json", ...opts.headers };
  const key = opts.key ?? (opts.anonymous ? null : getKey());
  if (key) headers.Authorization = `Bearer ${key}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["Content-Type"] = "application/json";
  }
  const init: RequestInit = { method: opts.method ?? "GET", headers, cache: "no-store", credentials: "omit" };
  if (body !== undefined) init.body = body;
  if (opts.signal) init.signal = opts.signal;
  const res = await fetch(path, init);
  noteDate(res);
  if (!res.ok) {
    let problem: Record<string, unknown> | null = null;
    try {
      problem = (await res.json()) as Record<string, unknown>;
    } catch {
      problem = null;
    }
    const err = new ApiError(res.status, problem, res.headers.get("retry-after"));
    if (res.status === 401 && key && !opts.key) onUnauthorized?.();
    throw err;
  }
  return res;
}

export async function json<T>(path: string, opts: CallOptions = {}): Promise<T> {
  const res = await request(path, opts);
  return (await res.json()) as T;
}

const enc = encodeURIComponent;

export const api = {
  run: (id: string, signal?: AbortSignal) => json<Run>(`/v1/runs/${enc(id)}`, signal ? { signal } : {}),
  runs: (limit: number, before?: string | null) =>
    json<RunList>(`/v1/runs?limit=${limit}${before ? `&before=${enc(before)}` : ""}`),
  runRequest: (id: string) =>
    json<{ object: string; request: RunRequest }>(`/v1/runs/${enc(id)}/request`),
  files: (id: string) => json<{ object: string; data: FileEntry[] }>(`/v1/runs/${enc(id)}/files`),
  /** A file's bytes (the Bearer key is needed, so no plain link). */
  file: (id: string, path: string) =>
    request(`/v1/runs/${enc(id)}/files/${path.split("/").map(enc).join("/").replace(/^\//, "%2F")}`, {
      headers: { Accept: "*/*" },
    }),
  cancel: (id: string) => json<Run>(`/v1/runs/${enc(id)}/cancel`, { method: "POST" }),
  models: () => json<{ object: string; data: Model[] }>("/v1/models"),
  samples: () => json<{ object: string; data: SampleSummary[] }>("/v1/samples", { anonymous: true }),
  sample: (id: string) => json<Sample>(`/v1/samples/${enc(id)}`, { anonymous: true }),
  createRun: (body: RunRequest, idempotencyKey: string) =>
    json<Run>("/v1/runs", { method: "POST", body, headers: { "Idempotency-Key": idempotencyKey } }),
};
