//! The OpenAPI 3.1 document of the API, checked in beside this file and
//! served at `/v1/openapi.json`; `tests/openapi.rs` holds it to the server.

use axum::http::header;
use axum::response::IntoResponse;

pub const DOCUMENT: &str = include_str!("openapi.json");

pub async fn document() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, "application/json")], DOCUMENT)
}
