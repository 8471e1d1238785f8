//! Bearer member keys: hashed, looked up, never logged.

use axum::http::{HeaderMap, header};

use super::problem::Problem;
use crate::ids::key_hash;
use crate::state::Edge;
use crate::store::Org;

/// The organisation the request's key belongs to.
pub async fn organisation(edge: &Edge, headers: &HeaderMap) -> Result<Org, Problem> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(Problem::unauthorized(
            "send Authorization: Bearer <member key>",
        ));
    };
    let key = value
        .to_str()
        .ok()
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .ok_or_else(|| {
            Problem::unauthorized("the Authorization header must be `Bearer <member key>`")
        })?;
    match edge.store.org_for_key(&key_hash(key)).await {
        Ok(Some(org)) => Ok(org),
        Ok(None) => Err(Problem::unauthorized("the member key is not valid")),
        Err(e) => Err(Problem::internal(&e)),
    }
}

/// The organisation of a bare member key (the MCP route's), if it is one.
pub async fn organisation_of_key(edge: &Edge, key: &str) -> Option<Org> {
    match edge.store.org_for_key(&key_hash(key)).await {
        Ok(org) => org,
        Err(e) => {
            tracing::error!(error = %e, "cannot look up a key");
            None
        }
    }
}
