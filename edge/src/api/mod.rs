//! The HTTP API of API.md on axum (hyper 1.x; HTTP/1.1 and h2c). One module
//! per concern: `runs` and `sandboxes` (the endpoints), `admission` (what
//! creating either shares), `request` (body validation), `paging`,
//! `timeline_stream` (SSE), `problem` (errors and their pages), `auth`.

mod admission;
mod auth;
mod catalogue;
mod console;
mod openapi;
mod paging;
mod problem;
mod request;
mod runs;
mod runtime_info;
mod samples;
mod sandboxes;
mod timeline_stream;

use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use serde_json::json;

pub use auth::organisation_of_key;
pub use problem::{PROBLEMS, Problem};
pub use request::MAX_BODY_BYTES;

use crate::state::Edge;

pub(crate) fn router(edge: Arc<Edge>) -> Router {
    Router::new()
        .route("/v1/runs", post(runs::create).get(runs::list))
        .route("/v1/runs/{id}", get(runs::get_one))
        .route("/v1/runs/{id}/events", get(runs::events))
        .route("/v1/runs/{id}/cancel", post(runs::cancel))
        .route("/v1/runs/{id}/request", get(runs::request))
        .route("/v1/runs/{id}/files", get(runs::files))
        .route("/v1/runs/{id}/files/{*path}", get(runs::file))
        .route("/v1/models", get(catalogue::models))
        .route("/v1/samples", get(samples::list))
        .route("/v1/samples/{id}", get(samples::get_one))
        .route("/", get(console::page))
        .route("/runs", get(console::page))
        .route("/runs/{id}", get(console::page))
        .route("/playground", get(console::page))
        .route("/samples", get(console::page))
        .route("/samples/{id}", get(console::page))
        .route("/assets/{*file}", get(console::asset))
        .route(
            "/v1/sandboxes",
            post(sandboxes::create).get(sandboxes::list),
        )
        .route(
            "/v1/sandboxes/{id}",
            get(sandboxes::get_one).delete(sandboxes::delete),
        )
        .route("/v1/sandboxes/{id}/events", get(sandboxes::events))
        .route("/v1/sandboxes/{id}/commands", post(sandboxes::command))
        .route("/v1/sandboxes/{id}/files", get(sandboxes::list_files))
        .route(
            "/v1/sandboxes/{id}/files/{*path}",
            put(sandboxes::put_file)
                .get(sandboxes::get_file)
                .delete(sandboxes::delete_file),
        )
        .route("/v1/runtime", get(runtime_info::get))
        .route("/v1/health", get(health))
        .route("/v1/openapi.json", get(openapi::document))
        .route("/metrics", get(metrics))
        .route("/problems/{slug}", get(problem_page))
        .fallback(|| async { Problem::new("not-found", "no such endpoint") })
        .method_not_allowed_fallback(|| async {
            Problem::new("method-not-allowed", "see /v1/openapi.json")
        })
        // Bodies are read (and capped) by the handlers themselves, so the
        // answer to an oversized one is a problem, not a bare 413.
        .layer(DefaultBodyLimit::disable())
        .with_state(edge)
}

async fn health(State(edge): State<Arc<Edge>>) -> Response {
    let store_ok = edge.store.last_seq("run_health").await.is_ok();
    let mut body = json!({
        "status": if store_ok && !edge.in_flight.is_draining() { "ok" } else { "degraded" },
        "node": edge.node_id,
        "store": edge.store.kind(),
        "isolation": edge.isolation().timeline_name(),
        "runs_in_flight": edge.in_flight.len(),
        "draining": edge.in_flight.is_draining(),
    });
    if let Some(workers) = edge.sandboxes.health() {
        body["workers"] = workers;
    }
    let status = if store_ok { 200 } else { 503 };
    (
        axum::http::StatusCode::from_u16(status).unwrap_or_default(),
        axum::Json(body),
    )
        .into_response()
}

async fn metrics(State(edge): State<Arc<Edge>>) -> Response {
    let totals = match edge.store.ledger_totals().await {
        Ok(t) => t,
        Err(e) => return Problem::internal(&e).into_response(),
    };
    let text = edge.metrics.render(totals);
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

async fn problem_page(Path(slug): Path<String>) -> Response {
    problem::page(&slug)
        .unwrap_or_else(|| Problem::new("not-found", "no such problem type").into_response())
}

/// A sandbox or run file's path as the `{path}` of a URL: each segment
/// percent-encoded, a leading `/` (an absolute path) as `%2F`.
pub fn encode_file_path(path: &str) -> String {
    let segment = |s: &str| -> String {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'_' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    };
    let (lead, rest) = path.strip_prefix('/').map_or(("", path), |r| ("%2F", r));
    let segments: Vec<String> = rest.split('/').map(segment).collect();
    format!("{lead}{}", segments.join("/"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn file_paths_are_encoded_for_urls() {
        assert_eq!(super::encode_file_path("out/a b.png"), "out/a%20b.png");
        assert_eq!(super::encode_file_path("/tmp/x.md"), "%2Ftmp/x.md");
    }
}
