//! `GET /v1/models`: the model catalogue a request may name, with prices.
//! Never the providers' addresses or key variables: those are the
//! operator's.

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::auth::organisation;
use crate::state::Edge;

pub(crate) async fn models(State(edge): State<Arc<Edge>>, headers: HeaderMap) -> Response {
    if let Err(problem) = organisation(&edge, &headers).await {
        return problem.into_response();
    }
    let default = &edge.config.default_model;
    let data: Vec<Value> = edge
        .config
        .catalogue()
        .iter()
        .map(|(id, m)| {
            json!({
                "id": id,
                "object": "model",
                "provider": m.provider,
                "input_micros_per_million": m.input_micros_per_million,
                "output_micros_per_million": m.output_micros_per_million,
                "context_window": m.context_window,
                "max_output_tokens": m.max_output_tokens,
                "default": id == default,
            })
        })
        .collect();
    axum::Json(json!({"object": "list", "data": data})).into_response()
}
