//! The `/v1/sandboxes` endpoints: HTTP only. Admission and the sandbox's
//! life are `session/`'s; this file parses, checks, and frames answers
//! (docs/api-shapes.md, "Sandboxes").

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};

use super::admission::{created, idempotency_key, read_body, refused};
use super::auth::organisation;
use super::paging::{ListQuery, Page};
use super::problem::Problem;
use super::request::{Rules, check_path, parse_object, validate_sandbox};
use super::timeline_stream;
use crate::executor::ShellResult;
use crate::ids::{RecordKind, is_sandbox_id};
use crate::lifecycle::sandbox::{self as sandbox_admission, SandboxAsked, SessionAdmission};
use crate::lifecycle::{self, Refusal};
use crate::pricing;
use crate::run::RunRecord;
use crate::sandbox::{WireFileInfo, WireFileKind};
use crate::session::{CommandRequest, EndReason, Session, SessionError, sandbox_json};
use crate::state::Edge;
use crate::store::Org;
use crate::timestamp::rfc3339;

/// Largest `POST …/commands` body (the command, its stdin, its env).
const MAX_COMMAND_BODY: usize = 1 << 20;
/// Longest command timeout a request may ask for; the sandbox's own
/// lifetime usually cuts it shorter.
const MAX_COMMAND_TIMEOUT_SECONDS: i64 = 3_600;
const MAX_ENV_VARS: usize = 64;

type Answer = Result<Response, Problem>;

fn answer(result: Answer) -> Response {
    result.unwrap_or_else(IntoResponse::into_response)
}

pub(crate) async fn create(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    answer(create_sandbox(&edge, &headers, body).await)
}

async fn create_sandbox(edge: &Arc<Edge>, headers: &HeaderMap, body: Body) -> Answer {
    if edge.in_flight.is_draining() {
        return Err(refused(Refusal::Draining));
    }
    let org = organisation(edge, headers).await?;
    let idempotency_key = idempotency_key(headers)?;
    lifecycle::within_rate(edge, &org).map_err(refused)?;
    let bytes = read_body(edge, body).await?;
    let object = parse_object(&bytes)?;
    let request = {
        let no = |_: &str| false;
        let rules = Rules {
            max_timeout_seconds: edge.config.runs.max_timeout_seconds,
            default_timeout_seconds: edge.config.runs.default_timeout_seconds,
            per_run_cap_micros: org.per_run_cap_micros,
            default_model: "",
            is_model: &no,
            is_connection: &no,
        };
        validate_sandbox(&object, &rules)?
    };
    let least = pricing::one_second(&edge.config.prices);
    if request.max_cost_micros < least {
        return Err(Problem::field(
            "validation-failed",
            "max_cost_micros",
            format!("must cover at least one second of compute ({least} micros)"),
        ));
    }
    let asked = SandboxAsked {
        org: &org,
        request,
        body: &object,
        idempotency_key,
    };
    let admission = sandbox_admission::admit(edge, asked)
        .await
        .map_err(|e| Problem::internal(&e))?;
    match admission {
        SessionAdmission::Admitted(session) => {
            let object = current_json(edge, &session.id).await?;
            let location = format!("/v1/sandboxes/{}", session.id);
            Ok(created(
                axum::Json(object).into_response(),
                &location,
                false,
            ))
        }
        SessionAdmission::Replayed { id } => {
            let object = current_json(edge, &id).await?;
            let location = format!("/v1/sandboxes/{id}");
            Ok(created(axum::Json(object).into_response(), &location, true))
        }
        SessionAdmission::Refused(refusal) => Err(refused(refusal)),
    }
}

/// The sandbox object as it is now.
async fn current_json(edge: &Edge, id: &str) -> Result<Value, Problem> {
    let record = edge
        .store
        .run(id)
        .await
        .map_err(|e| Problem::internal(&e))?
        .ok_or_else(|| Problem::new("not-found", "no such sandbox"))?;
    Ok(object_of(edge, &record))
}

fn object_of(edge: &Edge, record: &RunRecord) -> Value {
    let live = edge.sessions.get(&record.id);
    sandbox_json(record, live.map(|s| s.compute_so_far()))
}

fn not_found() -> Problem {
    Problem::new("not-found", "no such sandbox")
}

/// The record of a sandbox of `org`; 404 for any other id, either way.
async fn owned(edge: &Edge, org: &Org, id: &str) -> Result<RunRecord, Problem> {
    if !is_sandbox_id(id) {
        return Err(not_found());
    }
    match edge.store.run(id).await {
        Ok(Some(record)) if record.org_id == org.id => Ok(record),
        Ok(_) => Err(not_found()),
        Err(e) => Err(Problem::internal(&e)),
    }
}

/// The live session of a sandbox of `org`, or why there is none: it has
/// ended (409), it lives on another node (421), or it is not `org`'s (404).
async fn live(edge: &Edge, org: &Org, id: &str) -> Result<Arc<Session>, Problem> {
    if let Some(session) = edge.sessions.get(id).filter(|s| s.org_id == org.id) {
        return Ok(session);
    }
    let record = owned(edge, org, id).await?;
    if !record.status.is_terminal() && record.node_id != edge.node_id {
        return Err(Problem::new(
            "wrong-node",
            format!(
                "the sandbox lives on node {}: send its requests there",
                record.node_id
            ),
        ));
    }
    let reason = record.error.map_or_else(|| "failed".into(), |e| e.code);
    Err(Problem::new(
        "sandbox-ended",
        format!("the sandbox has ended ({reason})"),
    ))
}

pub(crate) async fn get_one(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    answer(
        async {
            let org = organisation(&edge, &headers).await?;
            let record = owned(&edge, &org, &id).await?;
            Ok(axum::Json(object_of(&edge, &record)).into_response())
        }
        .await,
    )
}

pub(crate) async fn list(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    query: Result<Query<ListQuery>, QueryRejection>,
) -> Response {
    answer(
        async {
            let org = organisation(&edge, &headers).await?;
            let page = Page::from_query(query)?;
            if let Some(before) = &page.before {
                owned(&edge, &org, before).await.map_err(|_| {
                    Problem::field("validation-failed", "before", "no such sandbox")
                })?;
            }
            let records = edge
                .store
                .list_runs(
                    &org.id,
                    RecordKind::Sandbox,
                    page.limit + 1,
                    page.before.as_deref(),
                )
                .await
                .map_err(|e| Problem::internal(&e))?;
            let list = page.list(records, |r| r.id.clone(), |r| object_of(&edge, r));
            Ok(axum::Json(list).into_response())
        }
        .await,
    )
}

pub(crate) async fn delete(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    answer(
        async {
            let org = organisation(&edge, &headers).await?;
            match live(&edge, &org, &id).await {
                Ok(session) => session.end_and_wait(EndReason::Deleted).await,
                // Ended already: not an error, the answer is the object.
                Err(p) if p.slug() == "sandbox-ended" => {}
                Err(p) => return Err(p),
            }
            Ok(axum::Json(current_json(&edge, &id).await?).into_response())
        }
        .await,
    )
}

pub(crate) async fn events(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    answer(
        async {
            let org = organisation(&edge, &headers).await?;
            let record = owned(&edge, &org, &id).await?;
            let after = timeline_stream::last_event_id(&headers)?;
            Ok(timeline_stream::response(edge.clone(), record.id, after))
        }
        .await,
    )
}

pub(crate) async fn command(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Body,
) -> Response {
    answer(
        async {
            let org = organisation(&edge, &headers).await?;
            let session = live(&edge, &org, &id).await?;
            let bytes = read_body(&edge, body).await?;
            if bytes.len() > MAX_COMMAND_BODY {
                return Err(Problem::new(
                    "payload-too-large",
                    format!("a command's body is at most {MAX_COMMAND_BODY} bytes"),
                ));
            }
            let request = command_request(&parse_object(&bytes)?)?;
            let streamed = timeline_stream::wanted(&headers);
            Ok(run_command(session, request, streamed).await)
        }
        .await,
    )
}

/// Runs the command on its own task, so that it finishes (and its
/// timeline with it) even if the caller goes away; answers with its
/// result, or streams its output as it comes.
async fn run_command(session: Arc<Session>, request: CommandRequest, streamed: bool) -> Response {
    let (tap, output) = mpsc::unbounded_channel();
    let (done, result) = oneshot::channel();
    let tap = streamed.then_some(tap);
    tokio::spawn(async move {
        let result = session.command(request, tap.as_ref()).await;
        let _ = done.send(result);
    });
    if streamed {
        return command_stream(output, result);
    }
    match result.await {
        Ok(Ok(r)) => axum::Json(result_json(&r, true)).into_response(),
        Ok(Err(e)) => session_problem(e).into_response(),
        Err(_) => Problem::internal(&"the command's task ended without a result").into_response(),
    }
}

/// `output` events as the command writes, then one `exit`.
fn command_stream(
    output: mpsc::UnboundedReceiver<(ephemeral_runtime::Stream, String)>,
    result: oneshot::Receiver<Result<ShellResult, SessionError>>,
) -> Response {
    let outputs = futures_util::stream::unfold(output, |mut rx| async move {
        let (stream, data) = rx.recv().await?;
        let name = match stream {
            ephemeral_runtime::Stream::Stdout => "stdout",
            ephemeral_runtime::Stream::Stderr => "stderr",
        };
        let event = SseEvent::default()
            .event("output")
            .data(json!({"stream": name, "data": data}).to_string());
        Some((Ok::<_, Infallible>(event), rx))
    });
    let exit = futures_util::stream::once(async move {
        let data = match result.await {
            Ok(Ok(r)) => result_json(&r, false),
            Ok(Err(e)) => json!({"error": e.to_string()}),
            Err(_) => json!({"error": "the command's task ended without a result"}),
        };
        Ok::<_, Infallible>(SseEvent::default().event("exit").data(data.to_string()))
    });
    Sse::new(futures_util::StreamExt::chain(outputs, exit)).into_response()
}

fn result_json(r: &ShellResult, with_streams: bool) -> Value {
    let mut object = json!({
        "exit_code": r.exit_code,
        "duration_ms": r.duration_ms,
        "truncated": r.truncated,
        "limit": r.limit,
    });
    if with_streams {
        object["stdout"] = json!(r.stdout);
        object["stderr"] = json!(r.stderr);
    }
    object
}

/// A command body, checked field by field.
fn command_request(body: &Map<String, Value>) -> Result<CommandRequest, Problem> {
    const FIELDS: [&str; 4] = ["command", "timeout_seconds", "stdin", "env"];
    let bad = |field: &str, message: &str| Problem::field("invalid-request", field, message);
    if let Some(key) = body.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(bad(key, "unknown field"));
    }
    let command = match body.get("command") {
        Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
        Some(Value::String(_)) => {
            return Err(Problem::field("validation-failed", "command", "is empty"));
        }
        Some(_) => return Err(bad("command", "must be a string")),
        None => return Err(bad("command", "is required")),
    };
    let timeout = match body.get("timeout_seconds") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_i64() {
            Some(n) if (1..=MAX_COMMAND_TIMEOUT_SECONDS).contains(&n) => {
                Some(Duration::from_secs(n as u64))
            }
            Some(_) => {
                return Err(Problem::field(
                    "validation-failed",
                    "timeout_seconds",
                    format!("must be 1 to {MAX_COMMAND_TIMEOUT_SECONDS}"),
                ));
            }
            None => return Err(bad("timeout_seconds", "must be an integer")),
        },
    };
    let stdin = match body.get("stdin") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => s.as_bytes().to_vec(),
        Some(_) => return Err(bad("stdin", "must be a string")),
    };
    let env = env(body.get("env"))?;
    Ok(CommandRequest {
        command,
        timeout,
        stdin,
        env,
    })
}

fn env(value: Option<&Value>) -> Result<Vec<(String, String)>, Problem> {
    let map = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(map)) => map,
        Some(_) => {
            return Err(Problem::field(
                "invalid-request",
                "env",
                "must be an object of strings",
            ));
        }
    };
    if map.len() > MAX_ENV_VARS {
        return Err(Problem::field(
            "validation-failed",
            "env",
            format!("at most {MAX_ENV_VARS} variables"),
        ));
    }
    let mut vars = Vec::new();
    for (name, value) in map {
        let field = format!("env.{name}");
        let well_formed = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !well_formed {
            return Err(Problem::field(
                "validation-failed",
                &field,
                "a variable name is letters, digits and `_`, not starting with a digit",
            ));
        }
        let Value::String(value) = value else {
            return Err(Problem::field(
                "invalid-request",
                &field,
                "must be a string",
            ));
        };
        if value.contains('\0') {
            return Err(Problem::field("validation-failed", &field, "contains NUL"));
        }
        vars.push((name.clone(), value.clone()));
    }
    Ok(vars)
}

/// The problem a session's error is.
fn session_problem(e: SessionError) -> Problem {
    let detail = e.to_string();
    match e {
        SessionError::Ended(_) => Problem::new("sandbox-ended", detail),
        SessionError::BadPath(_) | SessionError::NotFolder(_) | SessionError::IsFolder(_) => {
            Problem::field("invalid-request", "path", detail)
        }
        SessionError::NotFound(_) => Problem::new("not-found", detail),
        SessionError::Denied(_) => Problem::field("invalid-request", "path", detail),
        SessionError::Quota { .. } => Problem::new("payload-too-large", detail),
        SessionError::Body(_) => Problem::new("invalid-request", detail),
        SessionError::Sandbox(_) => Problem::internal(&detail),
    }
}

/// A file path of the API: relative to the scratch folder or absolute
/// under `/tmp` (`files//tmp/x` or `files/%2Ftmp%2Fx`).
fn file_path(raw: &str) -> Result<String, Problem> {
    check_path(raw)
        .map(|()| raw.to_string())
        .map_err(|why| Problem::field("invalid-request", "path", format!("{raw:?} {why}")))
}

/// A folder to list: the scratch folder by default.
fn dir_path(raw: Option<&str>) -> Result<String, Problem> {
    match raw {
        None | Some("") | Some(".") => Ok(".".into()),
        Some("/tmp") | Some("/tmp/") => Ok("/tmp".into()),
        Some(dir) => file_path(dir.strip_suffix('/').unwrap_or(dir)),
    }
}

pub(crate) async fn put_file(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    Path((id, raw)): Path<(String, String)>,
    body: Body,
) -> Response {
    answer(
        async {
            let org = organisation(&edge, &headers).await?;
            let session = live(&edge, &org, &id).await?;
            let path = file_path(&raw)?;
            let declared = headers
                .get(header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok());
            let stall = Duration::from_secs(edge.config.limits.body_read_timeout_seconds.max(1));
            let file = session
                .write_file(&path, declared, body.into_data_stream(), stall)
                .await
                .map_err(session_problem)?;
            let object =
                json!({"object": "file", "path": file.path, "size": file.size, "sha256": file.sha256});
            Ok((StatusCode::CREATED, axum::Json(object)).into_response())
        }
        .await,
    )
}

pub(crate) async fn get_file(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    Path((id, raw)): Path<(String, String)>,
) -> Response {
    answer(
        async {
            let org = organisation(&edge, &headers).await?;
            let session = live(&edge, &org, &id).await?;
            let path = file_path(&raw)?;
            let info = session.file_info(&path).await.map_err(session_problem)?;
            if info.kind == WireFileKind::Dir {
                return Err(Problem::field(
                    "invalid-request",
                    "path",
                    format!("{path} is a folder: list it with GET …/files?dir={path}"),
                ));
            }
            let content_type = mime_guess::from_path(&path).first_or_octet_stream();
            let etag = format!("W/\"{}-{}\"", info.size, info.modified_ms);
            let body = Body::from_stream(session.read_file(path, info.size));
            let mut response = body.into_response();
            let h = response.headers_mut();
            for (name, value) in [
                (header::CONTENT_TYPE, content_type.to_string()),
                (header::CONTENT_LENGTH, info.size.to_string()),
                (header::ETAG, etag),
            ] {
                if let Ok(value) = HeaderValue::from_str(&value) {
                    h.insert(name, value);
                }
            }
            Ok(response)
        }
        .await,
    )
}

pub(crate) async fn delete_file(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    Path((id, raw)): Path<(String, String)>,
) -> Response {
    answer(
        async {
            let org = organisation(&edge, &headers).await?;
            let session = live(&edge, &org, &id).await?;
            let path = file_path(&raw)?;
            session.remove_file(&path).await.map_err(session_problem)?;
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        .await,
    )
}

#[derive(Deserialize)]
pub(crate) struct DirQuery {
    dir: Option<String>,
}

pub(crate) async fn list_files(
    State(edge): State<Arc<Edge>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    query: Result<Query<DirQuery>, QueryRejection>,
) -> Response {
    answer(
        async {
            let org = organisation(&edge, &headers).await?;
            let session = live(&edge, &org, &id).await?;
            let Query(q) = query.map_err(|e| {
                Problem::new(
                    "invalid-request",
                    format!("the query string: {}", e.body_text()),
                )
            })?;
            let dir = dir_path(q.dir.as_deref())?;
            let entries = session.list_files(&dir).await.map_err(session_problem)?;
            let data: Vec<Value> = entries.iter().map(entry_json).collect();
            Ok(axum::Json(json!({"object": "list", "data": data})).into_response())
        }
        .await,
    )
}

fn entry_json(info: &WireFileInfo) -> Value {
    let kind = match info.kind {
        WireFileKind::File => "file",
        WireFileKind::Dir => "dir",
        WireFileKind::Symlink => "symlink",
    };
    json!({
        "path": info.path,
        "type": kind,
        "size": info.size,
        "mode": format!("{:04o}", info.mode & 0o7777),
        "modified_at": rfc3339(i64::try_from(info.modified_ms).unwrap_or(i64::MAX)),
    })
}
