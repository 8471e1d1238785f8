//! `GET /v1/samples` and `GET /v1/samples/{id}`: published runs, readable
//! by anyone (no key): what the sample page shows, as published.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::problem::Problem;
use crate::ids::is_sample_id;
use crate::samples::{sample_json, summary_json};
use crate::state::Edge;

pub(crate) async fn list(State(edge): State<Arc<Edge>>) -> Response {
    match edge.store.samples().await {
        Ok(samples) => {
            let data: Vec<Value> = samples.iter().map(summary_json).collect();
            axum::Json(json!({"object": "list", "data": data})).into_response()
        }
        Err(e) => Problem::internal(&e).into_response(),
    }
}

pub(crate) async fn get_one(State(edge): State<Arc<Edge>>, Path(id): Path<String>) -> Response {
    let missing = || Problem::new("not-found", "no such sample").into_response();
    if !is_sample_id(&id) {
        return missing();
    }
    match edge.store.sample(&id).await {
        Ok(Some(sample)) => axum::Json(sample_json(&sample)).into_response(),
        Ok(None) => missing(),
        Err(e) => Problem::internal(&e).into_response(),
    }
}
