/**
 * Errors the SDK throws. The server answers every failure with an RFC 9457
 * `application/problem+json` body; each problem type becomes a class here
 * so callers can `catch (e) { if (e instanceof RateLimitError) … }` rather
 * than compare status codes. Failures with no answer at all (refused,
 * reset, timed out) are `APIConnectionError` / `APITimeoutError`.
 *
 * No error carries the API key, request headers or request bodies: messages
 * name the method, the path (ids only) and what the server said.
 *
 * @module
 */

/** One field at fault, as the server names it (wire name, e.g. `max_cost_micros`). */
export interface FieldError {
  field: string;
  message: string;
}

/** The base of every error this SDK throws. */
export class EphemeralError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** What the server answered, for `APIError`'s constructor. */
export interface ProblemDetails {
  status: number;
  /** The problem type, e.g. `/problems/insufficient-funds` (`about:blank` when the body was not a problem). */
  type: string;
  title: string;
  detail: string;
  errors: FieldError[];
  headers: Headers;
  /** `METHOD /path` of the request, for the message. */
  request: string;
}

/**
 * The server answered with an error status. `type` is the problem's type
 * (`/problems/<slug>`), stable across versions; `title` and `detail` are
 * for people.
 */
export class APIError extends EphemeralError {
  readonly status: number;
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  /** Fields at fault (validation problems only; otherwise empty). */
  readonly errors: FieldError[];
  /** The response's headers (e.g. `Retry-After`). */
  readonly headers: Headers;

  constructor(p: ProblemDetails) {
    const what = p.detail ? `${p.title}: ${p.detail}` : p.title;
    super(`${p.status} ${what} (${p.request})`);
    this.status = p.status;
    this.type = p.type;
    this.title = p.title;
    this.detail = p.detail;
    this.errors = p.errors;
    this.headers = p.headers;
  }

  /** The problem type's last segment, e.g. `insufficient-funds`. */
  get slug(): string {
    const i = this.type.lastIndexOf("/");
    return i >= 0 ? this.type.slice(i + 1) : this.type;
  }
}

/**
 * The request is malformed or a value is out of range (400 `invalid-json`,
 * `invalid-request`, `validation-failed`; the server also answers
 * `validation-failed` with 422). `field` is the first field named.
 */
export class InvalidRequestError extends APIError {
  get field(): string | undefined {
    return this.errors[0]?.field;
  }
}

/** 401: the API key is missing or not valid. */
export class AuthenticationError extends APIError {}

/** 402: the organisation's free balance is below `max_cost_micros`. */
export class InsufficientFundsError extends APIError {}

/** 404: no such resource for this organisation (another organisation's is a 404 too). */
export class NotFoundError extends APIError {}

/**
 * 409: the resource is not in a state for this (`run-finished`,
 * `sandbox-ended`), or a request with the same Idempotency-Key is still
 * being created (`idempotency-key-in-use`; retried automatically).
 */
export class ConflictError extends APIError {}

/** 422 `idempotency-key-reused`: the key was used with a different body in the last 24 h. */
export class IdempotencyKeyReusedError extends APIError {}

/** 413: the body is over the server's limit (or a sandbox's disk quota). */
export class PayloadTooLargeError extends APIError {}

/** 429 (`rate-limited`, `too-many-runs`). Retried automatically up to `maxRetries`. */
export class RateLimitError extends APIError {
  /** Seconds the server asked to wait (`Retry-After`), when it said. */
  get retryAfter(): number | undefined {
    return retryAfterSeconds(this.headers);
  }
}

/** 5xx other than `shutting-down`. Retried automatically up to `maxRetries`. */
export class InternalServerError extends APIError {}

/** 503 `shutting-down`: this node is draining; retry elsewhere or after `Retry-After`. */
export class ShuttingDownError extends APIError {
  get retryAfter(): number | undefined {
    return retryAfterSeconds(this.headers);
  }
}

/** No answer from the server: refused, reset, DNS, TLS, or the stream broke off. */
export class APIConnectionError extends EphemeralError {}

/** No answer within `timeoutMs` (or a stream silent for that long). */
export class APITimeoutError extends APIConnectionError {}

/** Builds the error class that fits a problem: by type first, then by status. */
export function makeAPIError(p: ProblemDetails): APIError {
  const slug = p.type.slice(p.type.lastIndexOf("/") + 1);
  switch (slug) {
    case "invalid-json":
    case "invalid-request":
    case "validation-failed":
      return new InvalidRequestError(p);
    case "idempotency-key-reused":
      return new IdempotencyKeyReusedError(p);
    case "shutting-down":
      return new ShuttingDownError(p);
  }
  switch (p.status) {
    case 400:
    case 422:
      return new InvalidRequestError(p);
    case 401:
      return new AuthenticationError(p);
    case 402:
      return new InsufficientFundsError(p);
    case 404:
      return new NotFoundError(p);
    case 409:
      return new ConflictError(p);
    case 413:
      return new PayloadTooLargeError(p);
    case 429:
      return new RateLimitError(p);
  }
  if (p.status >= 500) return new InternalServerError(p);
  return new APIError(p);
}

/**
 * `Retry-After` in seconds: an integer or an HTTP date (RFC 9110). Anything
 * else is ignored rather than trusted.
 */
export function retryAfterSeconds(headers: Headers): number | undefined {
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
