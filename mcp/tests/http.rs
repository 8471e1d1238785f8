//! Streamable HTTP at `/mcp`: keys, sessions, their sandboxes and their end.

mod common;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use common::fake::{FakeFactory, about};
use common::{eventually, is_error, text, within};
use ephemeral_mcp::{SandboxFactory, http_router};
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt as _;
use serde_json::{Value, json};
use tower::ServiceExt as _;

const KEY_A: &str = "key-a";
const KEY_B: &str = "key-b";

fn router(factory: &Arc<FakeFactory>, idle: Duration) -> Router {
    let factory: Arc<dyn SandboxFactory> = factory.clone();
    http_router(factory, about(), idle)
}

fn post(key: Option<&str>, session: Option<&str>, body: &Value) -> Request<Body> {
    let mut request = Request::post("/mcp")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(key) = key {
        request = request.header("authorization", format!("Bearer {key}"));
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request
        .body(Body::from(body.to_string()))
        .expect("a request")
}

/// The JSON-RPC message answering `id` in a response, JSON or SSE.
async fn message(response: Response<Body>, id: i64) -> Value {
    let is_sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let mut body = response.into_body();
    let mut buffer = String::new();
    loop {
        let frame = within("a response frame", body.frame())
            .await
            .expect("the response ended without an answer")
            .expect("a body frame");
        if let Ok(data) = frame.into_data() {
            buffer.push_str(&String::from_utf8_lossy(&data));
        }
        if !is_sse {
            if let Ok(value) = serde_json::from_str::<Value>(&buffer) {
                return value;
            }
            continue;
        }
        for line in buffer.lines() {
            if let Some(data) = line.strip_prefix("data:")
                && let Ok(value) = serde_json::from_str::<Value>(data.trim())
                && value.get("id") == Some(&json!(id))
            {
                return value;
            }
        }
    }
}

struct Client {
    router: Router,
    key: String,
    session: String,
    next_id: i64,
}

impl Client {
    /// `initialize` and `notifications/initialized` with `key`.
    async fn open(router: &Router, key: &str) -> Self {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}
        }});
        let response = router
            .clone()
            .oneshot(post(Some(key), None, &init))
            .await
            .expect("infallible");
        if response.status() != StatusCode::OK {
            let status = response.status();
            let body = response
                .into_body()
                .collect()
                .await
                .expect("body")
                .to_bytes();
            panic!("initialize: {status}: {}", String::from_utf8_lossy(&body));
        }
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("an Mcp-Session-Id")
            .to_owned();
        let answer = message(response, 1).await;
        assert_eq!(
            answer["result"]["protocolVersion"],
            json!("2025-06-18"),
            "{answer}"
        );
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let response = router
            .clone()
            .oneshot(post(Some(key), Some(&session), &initialized))
            .await
            .expect("infallible");
        assert_eq!(response.status(), StatusCode::ACCEPTED);
        Self {
            router: router.clone(),
            key: key.to_owned(),
            session,
            next_id: 1,
        }
    }

    async fn send(&mut self, key: &str, method: &str, params: Value) -> Response<Body> {
        self.next_id += 1;
        let body =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        self.router
            .clone()
            .oneshot(post(Some(key), Some(&self.session), &body))
            .await
            .expect("infallible")
    }

    async fn request(&mut self, method: &str, params: Value) -> Value {
        let key = self.key.clone();
        let response = self.send(&key, method, params).await;
        assert_eq!(response.status(), StatusCode::OK);
        message(response, self.next_id).await
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        response
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("tools/call {tool} failed: {response}"))
    }

    async fn delete(&self, key: &str) -> StatusCode {
        let request = Request::delete("/mcp")
            .header("host", "localhost")
            .header("authorization", format!("Bearer {key}"))
            .header("mcp-session-id", &self.session)
            .body(Body::empty())
            .expect("a request");
        self.router
            .clone()
            .oneshot(request)
            .await
            .expect("infallible")
            .status()
    }
}

const LONG: Duration = Duration::from_secs(3600);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_key_or_a_refused_key_is_401() {
    let factory = FakeFactory::new(&[KEY_A]);
    let router = router(&factory, LONG);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}
    }});
    for key in [None, Some("wrong")] {
        let response = router
            .clone()
            .oneshot(post(key, None, &init))
            .await
            .expect("infallible");
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{key:?}");
        let challenge = response
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        assert!(challenge.starts_with("Bearer"), "{challenge}");
    }
    let basic = Request::post("/mcp")
        .header("authorization", "Basic a2V5LWE6")
        .body(Body::from(init.to_string()))
        .expect("a request");
    let response = router.clone().oneshot(basic).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(factory.stats.created(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_lives_from_initialize_to_delete() {
    let factory = FakeFactory::new(&[KEY_A]);
    let router = router(&factory, LONG);
    let mut client = Client::open(&router, KEY_A).await;

    let tools = client.request("tools/list", json!({})).await;
    assert_eq!(
        tools["result"]["tools"].as_array().map(Vec::len),
        Some(5),
        "{tools}"
    );
    assert_eq!(factory.stats.created(), 0);

    let echo = client
        .call("run_shell", json!({"command": "echo hi"}))
        .await;
    assert!(text(&echo).starts_with("hi\n"), "{echo}");
    assert_eq!(echo["structuredContent"]["exit_code"], json!(0));
    client
        .call("write_file", json!({"path": "a.txt", "content": "kept"}))
        .await;
    let read = client.call("read_file", json!({"path": "a.txt"})).await;
    assert_eq!(text(&read), "kept");
    let missing = client.call("read_file", json!({"path": "b.txt"})).await;
    assert!(is_error(&missing), "{missing}");

    // One sandbox, made for the key that opened the session.
    assert_eq!(factory.stats.created(), 1);
    assert_eq!(factory.stats.callers(), vec![Some(KEY_A.to_owned())]);

    assert!(client.delete(KEY_A).await.is_success());
    assert_eq!(factory.stats.ended(), 1);
    let after = client
        .send(
            KEY_A,
            "tools/call",
            json!({"name": "run_shell", "arguments": {"command": "echo"}}),
        )
        .await;
    assert_eq!(after.status(), StatusCode::NOT_FOUND);
    assert_eq!(client.delete(KEY_A).await, StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_without_tool_calls_ends_without_a_sandbox() {
    let factory = FakeFactory::new(&[KEY_A]);
    let router = router(&factory, LONG);
    let client = Client::open(&router, KEY_A).await;
    assert!(client.delete(KEY_A).await.is_success());
    assert_eq!(factory.stats.created(), 0);
    assert_eq!(factory.stats.ended(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_unknown_and_foreign_session_ids() {
    let factory = FakeFactory::new(&[KEY_A, KEY_B]);
    let router = router(&factory, LONG);
    let mut client = Client::open(&router, KEY_A).await;
    client.call("run_shell", json!({"command": "echo"})).await;

    // No session id on a request other than initialize.
    let list = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}});
    let response = router
        .clone()
        .oneshot(post(Some(KEY_A), None, &list))
        .await
        .expect("infallible");
    assert!(response.status().is_client_error(), "{}", response.status());

    // An id nobody was given.
    let response = router
        .clone()
        .oneshot(post(Some(KEY_A), Some("no-such-session"), &list))
        .await
        .expect("infallible");
    assert_eq!(response.status(), StatusCode::NOT_FOUND);

    // Another key, even a valid one, cannot use or end the session.
    let foreign = client.send(KEY_B, "tools/list", json!({})).await;
    assert_eq!(foreign.status(), StatusCode::NOT_FOUND);
    assert_eq!(client.delete(KEY_B).await, StatusCode::NOT_FOUND);
    assert_eq!(factory.stats.ended(), 0);

    // The owner still can.
    let echo = client
        .call("run_shell", json!({"command": "echo mine"}))
        .await;
    assert!(text(&echo).starts_with("mine"), "{echo}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_have_two_sandboxes() {
    let factory = FakeFactory::new(&[KEY_A]);
    let router = router(&factory, LONG);
    let mut first = Client::open(&router, KEY_A).await;
    let mut second = Client::open(&router, KEY_A).await;
    assert_ne!(first.session, second.session);

    first
        .call(
            "write_file",
            json!({"path": "secret.txt", "content": "first's"}),
        )
        .await;
    let seen = second
        .call("read_file", json!({"path": "secret.txt"}))
        .await;
    assert!(is_error(&seen), "{seen}");
    let own = first.call("read_file", json!({"path": "secret.txt"})).await;
    assert_eq!(text(&own), "first's");
    assert_eq!(factory.stats.created(), 2);

    assert!(first.delete(KEY_A).await.is_success());
    assert_eq!(factory.stats.ended(), 1);
    let still = second
        .call("run_shell", json!({"command": "echo alive"}))
        .await;
    assert!(text(&still).starts_with("alive"), "{still}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_ends_with_its_sandbox() {
    let factory = FakeFactory::new(&[KEY_A]);
    let router = router(&factory, Duration::from_millis(300));
    let mut client = Client::open(&router, KEY_A).await;
    client.call("run_shell", json!({"command": "echo"})).await;
    let stats = factory.stats.clone();
    eventually("the idle session's sandbox to end", || stats.ended() == 1).await;
    let after = client.send(KEY_A, "tools/list", json!({})).await;
    assert_eq!(after.status(), StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_call_keeps_the_session() {
    let factory = FakeFactory::new(&[KEY_A]);
    let router = router(&factory, Duration::from_millis(500));
    let mut client = Client::open(&router, KEY_A).await;
    // The fake's sleep fails if its sandbox ended while it slept.
    let slow = client
        .call("run_shell", json!({"command": "sleep 1.5"}))
        .await;
    assert!(!is_error(&slow), "{slow}");
}
