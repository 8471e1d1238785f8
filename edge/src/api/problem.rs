//! Errors as RFC 9457 `application/problem+json`, and the `/problems/<slug>`
//! pages that explain each one. A problem never carries internals (paths,
//! SQL, other tenants' ids): store and runtime errors are logged, and the
//! caller gets `internal` with no detail.

use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Every problem the API answers with: slug, status, title, explanation.
pub const PROBLEMS: &[(&str, u16, &str, &str)] = &[
    (
        "invalid-json",
        400,
        "The body is not valid JSON",
        "The request body must be one JSON object, UTF-8 encoded.",
    ),
    (
        "invalid-request",
        400,
        "The request is malformed",
        "A field has the wrong type, an unknown field was sent, or a header is malformed. `errors` names each field.",
    ),
    (
        "unauthorized",
        401,
        "Missing or invalid API key",
        "Send `Authorization: Bearer <member key>`. Keys are created with `ephemeral keys create --org NAME` and shown once.",
    ),
    (
        "insufficient-funds",
        402,
        "Not enough balance",
        "The organisation's free balance (balance minus the budgets of runs in flight) is below `max_cost_micros`.",
    ),
    (
        "not-found",
        404,
        "Not found",
        "No such resource for this organisation. Runs of other organisations are not found either.",
    ),
    (
        "method-not-allowed",
        405,
        "Method not allowed",
        "This path exists but not with this HTTP method.",
    ),
    (
        "idempotency-key-in-use",
        409,
        "Request with this Idempotency-Key in progress",
        "A request with the same Idempotency-Key is still being created. Retry shortly.",
    ),
    (
        "run-finished",
        409,
        "The run has already ended",
        "Only queued or running runs can be cancelled.",
    ),
    (
        "sandbox-ended",
        409,
        "The sandbox has ended",
        "The sandbox was deleted, reached its lifetime or idle timeout, used its budget, or failed: `GET` it for `end_reason`. Create a new one.",
    ),
    (
        "payload-too-large",
        413,
        "The body is too large",
        "Run requests are at most 1 MiB besides `files`, 12 MiB in all; a file put into a sandbox is at most its disk quota.",
    ),
    (
        "wrong-node",
        421,
        "The sandbox lives on another node",
        "A sandbox is held by the node that created it. Send its requests to that node (the detail names it).",
    ),
    (
        "validation-failed",
        422,
        "The request is not valid",
        "A field's value is out of range or refers to something that does not exist. `errors` names each field.",
    ),
    (
        "idempotency-key-reused",
        422,
        "Idempotency-Key reused with another request",
        "Within 24 hours an Idempotency-Key identifies one request body; send a new key for a different request.",
    ),
    (
        "rate-limited",
        429,
        "Too many requests",
        "The organisation sent more requests than its rate allows. Retry after the number of seconds in `Retry-After`.",
    ),
    (
        "too-many-runs",
        429,
        "Too many runs at once",
        "The organisation has as many runs in flight as it may. Retry after `Retry-After` seconds, or when a run ends.",
    ),
    (
        "internal",
        500,
        "Internal error",
        "The server failed. The failure is logged on the server; nothing about it is shown here.",
    ),
    (
        "shutting-down",
        503,
        "The server is shutting down",
        "This node is draining its runs before it stops. Retry on another node or after `Retry-After`.",
    ),
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// An API error as RFC 9457 `application/problem+json`: a type from
/// [`PROBLEMS`], this occurrence's detail, the fields at fault and any headers.
#[derive(Debug)]
pub struct Problem {
    slug: &'static str,
    detail: String,
    errors: Vec<FieldError>,
    headers: Vec<(HeaderName, String)>,
}

impl Problem {
    /// A problem of type `slug` (one of [`PROBLEMS`]) with `detail`.
    pub fn new(slug: &'static str, detail: impl Into<String>) -> Problem {
        debug_assert!(PROBLEMS.iter().any(|p| p.0 == slug), "{slug}");
        Problem {
            slug,
            detail: detail.into(),
            errors: Vec::new(),
            headers: Vec::new(),
        }
    }

    /// A problem naming each field at fault; its detail lists them all.
    pub fn fields(slug: &'static str, errors: Vec<FieldError>) -> Problem {
        let detail = errors
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect::<Vec<_>>()
            .join("; ");
        Problem {
            errors,
            ..Problem::new(slug, detail)
        }
    }

    /// A problem naming one field at fault.
    pub fn field(slug: &'static str, field: &str, message: impl Into<String>) -> Problem {
        Problem::fields(
            slug,
            vec![FieldError {
                field: field.into(),
                message: message.into(),
            }],
        )
    }

    /// Adds a header to the response (`Retry-After`, ...).
    pub fn header(mut self, name: HeaderName, value: impl Into<String>) -> Problem {
        self.headers.push((name, value.into()));
        self
    }

    /// `401 unauthorized`, with `WWW-Authenticate: Bearer`.
    pub fn unauthorized(detail: &str) -> Problem {
        Problem::new("unauthorized", detail).header(header::WWW_AUTHENTICATE, "Bearer")
    }

    /// `404 not-found`: no such run.
    pub fn not_found() -> Problem {
        Problem::new("not-found", "no such run")
    }

    /// A failure of ours: logged with its cause, shown without it.
    pub fn internal(cause: &dyn std::fmt::Display) -> Problem {
        tracing::error!(error = %cause, "request failed");
        Problem::new("internal", "the server could not complete the request")
    }

    /// The problem type's slug (`/problems/<slug>`).
    pub fn slug(&self) -> &'static str {
        self.slug
    }

    /// Its HTTP status, from [`PROBLEMS`].
    pub fn status(&self) -> StatusCode {
        let code = PROBLEMS
            .iter()
            .find(|p| p.0 == self.slug)
            .map_or(500, |p| p.1);
        StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn title(&self) -> &'static str {
        PROBLEMS
            .iter()
            .find(|p| p.0 == self.slug)
            .map_or("Error", |p| p.2)
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = self.status();
        let mut body = json!({
            "type": format!("/problems/{}", self.slug),
            "title": self.title(),
            "status": status.as_u16(),
            "detail": self.detail,
        });
        if !self.errors.is_empty() {
            body["errors"] = self
                .errors
                .iter()
                .map(|e| json!({"field": e.field, "message": e.message}))
                .collect();
        }
        let mut response = (status, body.to_string()).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        for (name, value) in self.headers {
            if let Ok(value) = HeaderValue::from_str(&value) {
                headers.insert(name, value);
            }
        }
        response
    }
}

/// `GET /problems/<slug>`: a short page on one problem.
pub fn page(slug: &str) -> Option<Response> {
    let (slug, status, title, text) = PROBLEMS.iter().find(|p| p.0 == slug)?;
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\n\
         <body><h1>{title}</h1><p>HTTP status {status} · problem type <code>/problems/{slug}</code></p>\n\
         <p>{text}</p></body></html>\n"
    );
    Some(([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response())
}
