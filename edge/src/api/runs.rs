//! The `/v1/runs` endpoints: HTTP only. `create` parses and checks the
//! request, hands it to admission (`lifecycle::admit`) and answers with
//! what admission gave: the run object or its live timeline, a replay, or
//! the problem that refused it.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;

use super::admission::{created, idempotency_key, read_body, refused};
use super::auth::organisation;
use super::paging::{ListQuery, Page};
use super::problem::Problem;
use super::request::{Rules, parse_object, validate};
use super::timeline_stream;
use crate::ids::{RecordKind, is_run_id};
use crate::lifecycle::{self, Admission, Asked, Refusal};
use crate::models;
use crate::run::RunRecord;
use crate::state::Edge;
use crate::store::Org;
use crate::timeline::{Event, EventKind};

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
    let wants_stream = timeline_stream::wanted(headers);
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
            Ok(created(response, &format!("/v1/runs/{}", record.id), false))
        }
        Admission::Replayed { run_id, response } => {
            let response = if wants_stream {
                timeline_stream::response(edge.clone(), run_id.clone(), 0)
            } else {
                json_text(response)
            };
            Ok(created(response, &format!("/v1/runs/{run_id}"), true))
        }
        Admission::Refused(refusal) => Err(refused(refusal)),
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

pub(crate) async fn list(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Response {
    let result = async {
        let org = organisation(&edge, &headers).await?;
        let page = Page::from_query(query)?;
        if let Some(before) = &page.before {
            owned_run(&edge, &org, before)
                .await
                .map_err(|_| Problem::field("validation-failed", "before", "no such run"))?;
        }
        let runs = edge
            .store
            .list_runs(
                &org.id,
                RecordKind::Run,
                page.limit + 1,
                page.before.as_deref(),
            )
            .await
            .map_err(|e| Problem::internal(&e))?;
        let list = page.list(runs, |r| r.id.clone(), RunRecord::to_json);
        Ok::<_, Problem>(axum::Json(list).into_response())
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
        let after = timeline_stream::last_event_id(&headers)?;
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

pub(crate) async fn files(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let result = async {
        let org = organisation(&edge, &headers).await?;
        let run = owned_run(&edge, &org, &id).await?;
        let files = edge
            .store
            .run_files(&run.id)
            .await
            .map_err(|e| Problem::internal(&e))?;
        let data: Vec<serde_json::Value> = files
            .iter()
            .map(|f| {
                serde_json::json!({"path": f.path, "size": f.size, "sha256": f.sha256,
                    "content_type": f.content_type})
            })
            .collect();
        Ok::<_, Problem>(
            axum::Json(serde_json::json!({"object": "list", "data": data})).into_response(),
        )
    };
    result.await.unwrap_or_else(IntoResponse::into_response)
}

pub(crate) async fn file(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    Path((id, path)): Path<(String, String)>,
) -> Response {
    let result = async {
        let org = organisation(&edge, &headers).await?;
        let run = owned_run(&edge, &org, &id).await?;
        let missing = || Problem::new("not-found", format!("the run collected no file {path:?}"));
        let (file, bytes) = edge
            .store
            .run_file(&run.id, &path)
            .await
            .map_err(|e| Problem::internal(&e))?
            .ok_or_else(missing)?;
        // What leaves is what was collected, or nothing.
        let sha256 = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes));
        if sha256 != file.sha256 {
            return Err(Problem::internal(&format!(
                "run {} file {path}: stored content does not match its sha256",
                run.id
            )));
        }
        Ok::<_, Problem>(file_response(
            &file.path,
            &file.content_type,
            &file.sha256,
            bytes,
        ))
    };
    result.await.unwrap_or_else(IntoResponse::into_response)
}

/// A collected file as a download.
fn file_response(path: &str, content_type: &str, sha256: &str, bytes: Vec<u8>) -> Response {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ascii: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut disposition = format!("attachment; filename=\"{ascii}\"");
    if ascii != name {
        let encoded: String = name
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'_' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect();
        disposition.push_str(&format!("; filename*=UTF-8''{encoded}"));
    }
    let mut response = bytes.into_response();
    let h = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_TYPE, content_type.to_string()),
        (header::ETAG, format!("\"{sha256}\"")),
        (header::CONTENT_DISPOSITION, disposition),
    ] {
        if let Ok(value) = axum::http::HeaderValue::from_str(&value) {
            h.insert(name, value);
        }
    }
    response
}

/// `GET /v1/runs/{id}/request`: the body the run was created with ("the
/// exact request", "Open in playground"); 404 under zero data retention,
/// where it was not kept.
pub(crate) async fn request(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    let result = async {
        let org = organisation(&edge, &headers).await?;
        let run = owned_run(&edge, &org, &id).await?;
        let body = edge
            .store
            .run_request(&run.id)
            .await
            .map_err(|e| Problem::internal(&e))?
            .ok_or_else(|| {
                Problem::new(
                    "not-found",
                    "the run's request was not kept (zero data retention)",
                )
            })?;
        let request: serde_json::Value =
            serde_json::from_str(&body).map_err(|e| Problem::internal(&e))?;
        Ok::<_, Problem>(
            axum::Json(serde_json::json!({"object": "run_request", "request": request}))
                .into_response(),
        )
    };
    result.await.unwrap_or_else(IntoResponse::into_response)
}
