//! Streamable HTTP at `/mcp`: Bearer keys, sessions bound to the key that
//! opened them, and their idle timeout, in front of rmcp's session layer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::{
    SessionId, SessionManager as _, StreamableHttpServerConfig, StreamableHttpService,
};

use crate::handler::{Handler, SessionRef};
use crate::session::{Session, Shared};

/// Where the endpoint is.
pub const MCP_PATH: &str = "/mcp";

const SESSION_HEADER: &str = "mcp-session-id";

struct HttpState {
    shared: Arc<Shared>,
    service: StreamableHttpService<Handler, LocalSessionManager>,
    manager: Arc<LocalSessionManager>,
    /// Live sessions by `Mcp-Session-Id`.
    sessions: Mutex<HashMap<String, Arc<Session>>>,
}

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    let mut manager = LocalSessionManager::default();
    // The idle timeout is ours (a running tool call counts as activity), and
    // we close rmcp's session when it fires.
    let mut config = SessionConfig::default();
    config.keep_alive = None;
    manager.session_config = config;
    let manager = Arc::new(manager);
    let service = {
        let shared = shared.clone();
        StreamableHttpService::new(
            move || Ok(Handler::new(shared.clone(), None)),
            manager.clone(),
            StreamableHttpServerConfig::default().disable_allowed_hosts(),
        )
    };
    let state = Arc::new(HttpState {
        shared,
        service,
        manager,
        sessions: Mutex::new(HashMap::new()),
    });
    Router::new()
        .route(MCP_PATH, any(endpoint))
        .with_state(state)
}

/// A JSON-RPC error answer with an HTTP status (no request id is known here).
fn refusal(status: StatusCode, code: i64, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": message},
    });
    (status, axum::Json(body)).into_response()
}

fn unauthorized(message: &str) -> Response {
    let mut response = refusal(StatusCode::UNAUTHORIZED, -32001, message);
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

fn session_not_found() -> Response {
    refusal(
        StatusCode::NOT_FOUND,
        -32001,
        "no such MCP session (it ended, or belongs to another key): initialize a new one",
    )
}

/// The Bearer key of a request, if it has one.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, key) = value.split_once(' ')?;
    let key = key.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !key.is_empty()).then_some(key)
}

/// Compares keys in time that does not depend on where they differ.
fn same_key(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl HttpState {
    fn session(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions.lock().ok()?.get(id).cloned()
    }

    /// Forgets the session `id` if it is still `session`.
    fn forget(&self, id: &str, session: &Arc<Session>) -> bool {
        let Ok(mut sessions) = self.sessions.lock() else {
            return false;
        };
        if sessions.get(id).is_some_and(|s| Arc::ptr_eq(s, session)) {
            sessions.remove(id);
            true
        } else {
            false
        }
    }

    /// Starts keeping a session that rmcp has just opened.
    fn open(self: &Arc<Self>, id: String, key: &str) {
        let session = Session::new(self.shared.clone(), Some(key.to_owned()));
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.insert(id.clone(), session.clone());
        }
        tracing::debug!("mcp session opened");
        let state = Arc::downgrade(self);
        let weak = Arc::downgrade(&session);
        drop(session);
        let idle_timeout = self.shared.idle_timeout;
        tokio::spawn(async move {
            if !Session::wait_idle(&weak, idle_timeout).await {
                return;
            }
            let (Some(state), Some(session)) = (state.upgrade(), weak.upgrade()) else {
                return;
            };
            if state.forget(&id, &session) {
                tracing::debug!("mcp session idle for {idle_timeout:?}: ending it");
                session.end().await;
                state.close(&id).await;
            }
        });
    }

    /// Closes rmcp's side of a session.
    async fn close(&self, id: &str) {
        let id: SessionId = id.to_owned().into();
        if let Err(e) = self.manager.close_session(&id).await {
            tracing::debug!("closing an mcp session: {e}");
        }
    }
}

async fn endpoint(State(state): State<Arc<HttpState>>, mut request: Request) -> Response {
    let Some(key) = bearer(request.headers()).map(str::to_owned) else {
        return unauthorized("an API key is needed: Authorization: Bearer KEY");
    };
    if !state.shared.factory.authorize(&key).await {
        return unauthorized("this API key may not use MCP");
    }
    let session_id = match request.headers().get(SESSION_HEADER) {
        None => None,
        Some(value) => match value.to_str() {
            Ok(id) => Some(id.to_owned()),
            Err(_) => return session_not_found(),
        },
    };
    let Some(id) = session_id else {
        // No session yet: an initialize opens one (anything else is refused
        // by rmcp, or answered without a session).
        let opening = request.method() == Method::POST;
        let response = state.service.handle(request).await;
        if opening
            && response.status().is_success()
            && let Some(id) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
        {
            state.open(id.to_owned(), &key);
        }
        return response.map(Body::new);
    };
    let Some(session) = state.session(&id) else {
        return session_not_found();
    };
    if !session
        .caller()
        .is_some_and(|caller| same_key(caller, &key))
    {
        return session_not_found();
    }
    // A message counts as activity; a client's GET (re)opening its event
    // stream does not, or an idle client would keep its sandbox forever.
    if request.method() == Method::POST {
        session.touch();
    }
    if request.method() == Method::DELETE {
        if state.forget(&id, &session) {
            session.end().await;
        }
        state.close(&id).await;
        return StatusCode::NO_CONTENT.into_response();
    }
    request.extensions_mut().insert(SessionRef(session));
    state.service.handle(request).await.map(Body::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_keys() {
        let mut headers = HeaderMap::new();
        assert_eq!(bearer(&headers), None);
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer k1"));
        assert_eq!(bearer(&headers), Some("k1"));
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer  k2 "),
        );
        assert_eq!(bearer(&headers), Some("k2"));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic k1"));
        assert_eq!(bearer(&headers), None);
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer "));
        assert_eq!(bearer(&headers), None);
    }

    #[test]
    fn keys_compare_whole() {
        assert!(same_key("abc", "abc"));
        assert!(!same_key("abc", "abd"));
        assert!(!same_key("abc", "abcd"));
        assert!(!same_key("", "a"));
    }
}
