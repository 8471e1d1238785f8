//! What creating a run and creating a sandbox share over HTTP: the
//! `Idempotency-Key` header, the body read under its cap and timeout, the
//! problem each refusal is, and the `201 Created` answer.

use std::time::Duration;

use axum::body::{Body, Bytes, to_bytes};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;

use super::problem::Problem;
use super::request::MAX_BODY_BYTES;
use crate::lifecycle::Refusal;
use crate::state::Edge;

const MAX_IDEMPOTENCY_KEY: usize = 255;
/// `Retry-After` for too many in flight at once: runs end in seconds to
/// minutes.
const RETRY_TOO_MANY_RUNS: u64 = 5;
/// `Retry-After` of a node that is shutting down.
const RETRY_DRAINING: u64 = 5;

/// The body, read within the body timeout and under the size cap.
pub(super) async fn read_body(edge: &Edge, body: Body) -> Result<Bytes, Problem> {
    let body_timeout = Duration::from_secs(edge.config.limits.body_read_timeout_seconds.max(1));
    tokio::time::timeout(body_timeout, to_bytes(body, MAX_BODY_BYTES))
        .await
        .map_err(|_| {
            Problem::new(
                "invalid-request",
                format!(
                    "the body did not arrive within {} s",
                    body_timeout.as_secs()
                ),
            )
        })?
        .map_err(body_problem)
}

/// Why a body could not be read: too large, or not a body at all (a
/// malformed chunked encoding, a connection cut mid-body: finding D5).
fn body_problem(e: axum::Error) -> Problem {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(error) = cause {
        if error.is::<http_body_util::LengthLimitError>() {
            return Problem::new(
                "payload-too-large",
                format!("the body is over {MAX_BODY_BYTES} bytes"),
            );
        }
        cause = error.source();
    }
    Problem::new(
        "invalid-request",
        format!("the body could not be read ({e})"),
    )
}

/// The problem a refusal is.
pub(super) fn refused(refusal: Refusal) -> Problem {
    match refusal {
        Refusal::Draining => Problem::new("shutting-down", "this node is shutting down")
            .header(header::RETRY_AFTER, RETRY_DRAINING.to_string()),
        Refusal::RateLimited { per_minute, wait } => Problem::new(
            "rate-limited",
            format!("at most {per_minute} runs and sandboxes a minute"),
        )
        .header(header::RETRY_AFTER, wait.as_secs().max(1).to_string()),
        Refusal::KeyReused => Problem::new(
            "idempotency-key-reused",
            "this Idempotency-Key was used with a different request in the last 24 hours",
        ),
        Refusal::InsufficientFunds { asked, available } => Problem::new(
            "insufficient-funds",
            format!("max_cost_micros is {asked} but the free balance is {available}"),
        ),
        Refusal::TooManyInFlight { limit } => Problem::new(
            "too-many-runs",
            format!("at most {limit} runs and sandboxes in flight per organisation"),
        )
        .header(header::RETRY_AFTER, RETRY_TOO_MANY_RUNS.to_string()),
    }
}

/// The request's `Idempotency-Key`, if it has a well-formed one.
pub(super) fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, Problem> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let bad = || {
        Problem::field(
            "invalid-request",
            "Idempotency-Key",
            format!("must be 1 to {MAX_IDEMPOTENCY_KEY} printable ASCII characters"),
        )
    };
    let key = value.to_str().map_err(|_| bad())?;
    let printable = key.bytes().all(|b| (0x20..0x7f).contains(&b));
    if key.is_empty() || key.len() > MAX_IDEMPOTENCY_KEY || !printable {
        return Err(bad());
    }
    Ok(Some(key.to_string()))
}

/// `response` as a `201 Created` at `location`, marked when replayed.
pub(super) fn created(mut response: Response, location: &str, replayed: bool) -> Response {
    *response.status_mut() = StatusCode::CREATED;
    let headers = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(location) {
        headers.insert(header::LOCATION, location);
    }
    if replayed {
        headers.insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    response
}
