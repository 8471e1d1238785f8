//! The `/v1/runs` endpoints: HTTP only. `create` parses and checks the
//! request, hands it to admission (`lifecycle::admit`) and answers with
//! what admission gave: the run object or its live timeline, a replay, or
//! the problem that refused it.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes, to_bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};

use super::auth::organisation;
use super::problem::Problem;
use super::request::{MAX_BODY_BYTES, Rules, parse_object, validate};
use super::timeline_stream;
use crate::ids::is_run_id;
use crate::lifecycle::{self, Admission, Asked, Refusal};
use crate::models;
use crate::run::RunRecord;
use crate::state::Edge;
use crate::store::Org;
use crate::timeline::{Event, EventKind};

const MAX_IDEMPOTENCY_KEY: usize = 255;
/// `Retry-After` for too many runs at once: runs end in seconds to minutes.
const RETRY_TOO_MANY_RUNS: u64 = 5;
/// `Retry-After` of a node that is shutting down.
const RETRY_DRAINING: u64 = 5;
const DEFAULT_PAGE: i64 = 20;
const MAX_PAGE: i64 = 100;

pub(crate) async fn create(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    match create_run(&edge, &headers, body).await {
        Ok(response) => response,
        Err(problem) => problem.into_response(),
    }
}

async fn create_run(
    edge: &Arc<Edge>,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response, Problem> {
    if edge.in_flight.is_draining() {
        return Err(refused(Refusal::Draining));
    }
    let org = organisation(edge, headers).await?;
    let idempotency_key = idempotency_key(headers)?;
    lifecycle::within_rate(edge, &org).map_err(refused)?;
    let bytes = read_body(edge, body).await?;
    let object = parse_object(&bytes)?;
    let is_connection = |c: &str| {
        edge.config
            .connections
            .get(c)
            .is_some_and(|conn| conn.allows_org(&org.name))
    };
    let is_model = |m: &str| models::is_known(&edge.config, m);
    let request = validate(&object, &rules_for(edge, &org, &is_model, &is_connection))?;
    let asked = Asked {
        org: &org,
        request,
        body: &object,
        idempotency_key,
    };
    let wants_stream = wants_event_stream(headers);
    let admission = lifecycle::admit(edge, asked)
        .await
        .map_err(|e| Problem::internal(&e))?;
    match admission {
        Admission::Admitted(record) => {
            let response = if wants_stream {
                timeline_stream::response(edge.clone(), record.id.clone(), 0)
            } else {
                axum::Json(record.to_json()).into_response()
            };
            Ok(created(response, &record.id, false))
        }
        Admission::Replayed { run_id, response } => {
            let response = if wants_stream {
                timeline_stream::response(edge.clone(), run_id.clone(), 0)
            } else {
                json_text(response)
            };
            Ok(created(response, &run_id, true))
        }
        Admission::Refused(refusal) => Err(refused(refusal)),
    }
}

/// The body, read within the body timeout and under the size cap.
async fn read_body(edge: &Edge, body: Body) -> Result<Bytes, Problem> {
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

/// The problem a refusal is.
fn refused(refusal: Refusal) -> Problem {
    match refusal {
        Refusal::Draining => Problem::new("shutting-down", "this node is shutting down")
            .header(header::RETRY_AFTER, RETRY_DRAINING.to_string()),
        Refusal::RateLimited { per_minute, wait } => Problem::new(
            "rate-limited",
            format!("at most {per_minute} runs a minute"),
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
            format!("at most {limit} runs in flight per organisation"),
        )
        .header(header::RETRY_AFTER, RETRY_TOO_MANY_RUNS.to_string()),
    }
}

fn rules_for<'a>(
    edge: &'a Edge,
    org: &Org,
    is_model: &'a dyn Fn(&str) -> bool,
    is_connection: &'a dyn Fn(&str) -> bool,
) -> Rules<'a> {
    Rules {
        max_timeout_seconds: edge.config.runs.max_timeout_seconds,
        default_timeout_seconds: edge.config.runs.default_timeout_seconds,
        per_run_cap_micros: org.per_run_cap_micros,
        default_model: &edge.config.default_model,
        is_model,
        is_connection,
    }
}

fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, Problem> {
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

fn wants_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| {
            v.split(',')
                .any(|t| t.trim().starts_with("text/event-stream"))
        })
}

fn created(mut response: Response, run_id: &str, replayed: bool) -> Response {
    *response.status_mut() = StatusCode::CREATED;
    let headers = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(&format!("/v1/runs/{run_id}")) {
        headers.insert(header::LOCATION, location);
    }
    if replayed {
        headers.insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    response
}

fn json_text(text: String) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], text).into_response()
}

/// The run if it exists and belongs to `org`; 404 otherwise, either way.
async fn owned_run(edge: &Edge, org: &Org, id: &str) -> Result<RunRecord, Problem> {
    if !is_run_id(id) {
        return Err(Problem::not_found());
    }
    match edge.store.run(id).await {
        Ok(Some(run)) if run.org_id == org.id => Ok(run),
        Ok(_) => Err(Problem::not_found()),
        Err(e) => Err(Problem::internal(&e)),
    }
}

pub(crate) async fn get_one(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let result = async {
        let org = organisation(&edge, &headers).await?;
        owned_run(&edge, &org, &id).await?;
        let (run, last) = consistent_view(&edge, &id).await?;
        Ok::<_, Problem>(run_with_timeline(edge, run, last))
    };
    result.await.unwrap_or_else(IntoResponse::into_response)
}

/// Events of one page of a streamed `GET /v1/runs/{id}`: at most 64 KiB
/// each, so a read holds a few MiB however large the run (finding G3:
/// 14 reads of one 240 MB run built 14 bodies and took the server down).
const GET_PAGE: i64 = 64;

/// The run object with its timeline up to `last`, streamed page by page
/// from the store rather than built whole in memory.
fn run_with_timeline(edge: Arc<Edge>, run: RunRecord, last: i64) -> Response {
    let mut head = run.to_json().to_string();
    // The object's closing brace makes way for the timeline.
    head.pop();
    head.push_str(if head.ends_with('{') {
        "\"timeline\":["
    } else {
        ",\"timeline\":["
    });
    let output = run.output.clone();
    // The state: the last sequence number sent, and whether any was.
    let pages = futures_util::stream::unfold(Some((0i64, false)), move |state| {
        let edge = edge.clone();
        let output = output.clone();
        let id = run.id.clone();
        async move {
            let (after, mut any) = state?;
            if after >= last {
                return None;
            }
            let page = match edge.store.events_page(&id, after, GET_PAGE).await {
                Ok(page) => page,
                Err(e) => {
                    // The status is sent: all that is left is to cut the
                    // body, which the client sees as malformed JSON.
                    tracing::error!(run_id = %id, error = %e, "timeline read failed mid-body");
                    return Some((Err(std::io::Error::other("timeline read failed")), None));
                }
            };
            let mut text = String::new();
            let mut next = None;
            for stored in page.into_iter().take_while(|e| e.seq <= last) {
                if any {
                    text.push(',');
                }
                any = true;
                next = Some(stored.seq);
                let Some(event) = Event::from_stored(stored) else {
                    continue;
                };
                let event = event.with_output(output.as_deref());
                text.push_str(&event.to_json().to_string());
            }
            // A page with nothing new (a gap in the sequence) ends it.
            let next = next.filter(|&n| n > after).map(|n| (n, any));
            Some((Ok(Bytes::from(text)), next))
        }
    });
    let body = futures_util::stream::once(async move { Ok(Bytes::from(head)) })
        .chain(pages)
        .chain(futures_util::stream::once(async {
            Ok(Bytes::from_static(b"]}"))
        }));
    (
        [(header::CONTENT_TYPE, "application/json")],
        Body::from_stream(body),
    )
        .into_response()
}

/// A run and the last sequence number of its timeline as of one moment: a
/// run is settled a moment before its last two events are written, so a
/// read that lands between the two is retried briefly rather than showing
/// an ended run with an unfinished timeline (or the reverse).
async fn consistent_view(edge: &Edge, id: &str) -> Result<(RunRecord, i64), Problem> {
    const TRIES: usize = 40;
    const PAUSE: std::time::Duration = std::time::Duration::from_millis(25);
    for attempt in 0..TRIES {
        let run = edge
            .store
            .run(id)
            .await
            .map_err(|e| Problem::internal(&e))?
            .ok_or_else(Problem::not_found)?;
        let last = edge
            .store
            .last_seq(id)
            .await
            .map_err(|e| Problem::internal(&e))?;
        let closed = last > 0
            && edge
                .store
                .events_page(id, last - 1, 1)
                .await
                .map_err(|e| Problem::internal(&e))?
                .first()
                .is_some_and(|e| EventKind::parse(&e.kind).is_some_and(EventKind::is_last));
        if run.status.is_terminal() == closed || attempt + 1 == TRIES {
            return Ok((run, last));
        }
        tokio::time::sleep(PAUSE).await;
    }
    Err(Problem::not_found())
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

#[derive(Deserialize)]
pub(crate) struct ListQuery {
    limit: Option<String>,
    before: Option<String>,
}

pub(crate) async fn list(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Response {
    let result = async {
        let org = organisation(&edge, &headers).await?;
        // A query string that does not parse (a parameter given twice, say)
        // is the caller's error, in problem+json like every other.
        let Query(q) = query.map_err(|e| {
            Problem::new(
                "validation-failed",
                format!("the query string: {}", e.body_text()),
            )
        })?;
        let limit = match q.limit.as_deref() {
            None => DEFAULT_PAGE,
            Some(text) => text
                .parse::<i64>()
                .ok()
                .filter(|n| (1..=MAX_PAGE).contains(n))
                .ok_or_else(|| {
                    Problem::field(
                        "validation-failed",
                        "limit",
                        format!("must be 1 to {MAX_PAGE}"),
                    )
                })?,
        };
        if let Some(before) = &q.before {
            owned_run(&edge, &org, before)
                .await
                .map_err(|_| Problem::field("validation-failed", "before", "no such run"))?;
        }
        let mut runs = edge
            .store
            .list_runs(&org.id, limit + 1, q.before.as_deref())
            .await
            .map_err(|e| Problem::internal(&e))?;
        let has_more = runs.len() as i64 > limit;
        runs.truncate(limit as usize);
        let data: Vec<Value> = runs.iter().map(RunRecord::to_json).collect();
        let next = if has_more {
            runs.last().map(|r| r.id.clone())
        } else {
            None
        };
        Ok::<_, Problem>(
            axum::Json(
                json!({"object": "list", "data": data, "has_more": has_more, "next_before": next}),
            )
            .into_response(),
        )
    };
    result.await.unwrap_or_else(IntoResponse::into_response)
}

pub(crate) async fn events(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let result = async {
        let org = organisation(&edge, &headers).await?;
        let run = owned_run(&edge, &org, &id).await?;
        let after = match headers.get("last-event-id") {
            None => 0,
            Some(v) => v
                .to_str()
                .ok()
                .and_then(|s| s.trim().parse::<i64>().ok())
                .filter(|n| *n >= 0)
                .ok_or_else(|| {
                    Problem::field(
                        "invalid-request",
                        "Last-Event-ID",
                        "must be an event id (an integer)",
                    )
                })?,
        };
        Ok::<_, Problem>(timeline_stream::response(edge.clone(), run.id, after))
    };
    result.await.unwrap_or_else(IntoResponse::into_response)
}

pub(crate) async fn cancel(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let result = async {
        let org = organisation(&edge, &headers).await?;
        let run = owned_run(&edge, &org, &id).await?;
        if run.status.is_terminal() {
            return Err(Problem::new(
                "run-finished",
                format!("the run has already ended {}", run.status.as_str()),
            ));
        }
        edge.store
            .request_cancel(&run.id)
            .await
            .map_err(|e| Problem::internal(&e))?;
        edge.in_flight.cancel(&run.id);
        tracing::info!(run_id = %run.id, "cancel requested");
        Ok((StatusCode::ACCEPTED, axum::Json(run.to_json())).into_response())
    };
    result.await.unwrap_or_else(IntoResponse::into_response)
}
