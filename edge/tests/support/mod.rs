//! What the edge's integration tests share: a real server on loopback (in
//! this process, or the `ephemeral` binary as a child to kill -9), on a
//! real SQLite file or a real PostgreSQL database, and a small HTTP client.
#![allow(dead_code)]

pub mod fake_llm;
pub mod postgres;
pub mod upstream;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ephemeral_edge::config::Config;
use ephemeral_edge::ids::key_hash;
use ephemeral_edge::server::{Edge, Server};
use ephemeral_edge::store::{Org, OrgUpdate, Store};
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// The stores every behaviour is tested on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

pub const BACKENDS: [Backend; 2] = [Backend::Sqlite, Backend::Postgres];

/// A server running in this process.
pub struct TestServer {
    pub addr: SocketAddr,
    pub base: String,
    pub edge: std::sync::Arc<Edge>,
    pub data: tempfile::TempDir,
    pub database_url: Option<String>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

pub fn config_for(backend: Backend, data: &Path, database_url: Option<String>) -> Config {
    Config {
        listen: "127.0.0.1:0".parse().unwrap(),
        data_dir: data.to_path_buf(),
        database_url: match backend {
            Backend::Sqlite => None,
            Backend::Postgres => database_url,
        },
        default_model: "ephemeral/script".into(),
        shutdown_grace_seconds: 5,
        workers: ephemeral_edge::config::WorkersConfig {
            binary: Some(binary()),
            ..Default::default()
        },
        ..Config::default()
    }
}

impl TestServer {
    pub async fn start(backend: Backend) -> TestServer {
        TestServer::start_with(backend, |_| {}).await
    }

    pub async fn start_with(backend: Backend, tweak: impl FnOnce(&mut Config)) -> TestServer {
        let data = tempfile::tempdir().unwrap();
        let database_url = match backend {
            Backend::Sqlite => None,
            Backend::Postgres => Some(postgres::fresh_database().await),
        };
        TestServer::start_on(backend, data, database_url, tweak).await
    }

    /// Another node (or a restart) on the same data.
    pub async fn start_on(
        backend: Backend,
        data: tempfile::TempDir,
        database_url: Option<String>,
        tweak: impl FnOnce(&mut Config),
    ) -> TestServer {
        let mut config = config_for(backend, data.path(), database_url.clone());
        tweak(&mut config);
        let server = Server::start(config).await.expect("server starts");
        let addr = server.local_addr();
        let edge = server.edge();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            server
                .serve(async move {
                    let _ = stopped.await;
                })
                .await
                .expect("server runs");
        });
        TestServer {
            addr,
            base: format!("http://{addr}"),
            edge,
            data,
            database_url,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// A member key for `org` with `balance` micros.
    pub async fn org(&self, name: &str, balance: i64) -> String {
        org_key(self.edge.store.as_ref(), name, balance).await
    }

    /// Graceful shutdown; gives back the data folder.
    pub async fn stop(mut self) -> tempfile::TempDir {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(30), task).await;
        }
        let data = tempfile::tempdir().unwrap();
        std::mem::replace(&mut self.data, data)
    }
}

pub async fn org_key(store: &dyn Store, name: &str, balance: i64) -> String {
    let key = ephemeral_edge::ids::new_member_key();
    let defaults = Org {
        id: String::new(),
        name: String::new(),
        balance_micros: balance,
        held_micros: 0,
        per_run_cap_micros: 1_000_000,
        zero_data_retention: false,
    };
    store
        .create_key(name, &key_hash(&key), &defaults)
        .await
        .unwrap();
    let update = OrgUpdate {
        balance_micros: Some(balance),
        ..Default::default()
    };
    store.set_org(name, &defaults, &update).await.unwrap();
    key
}

/// A client of its own: never shared between tests, whose runtimes each
/// own the connections they open. A kept-alive connection is given up well
/// before the server's idle cut (1 s in the shortest test), so a request is
/// never sent down a connection the server is closing.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(60))
        .pool_idle_timeout(Duration::from_millis(500))
        .build()
        .unwrap()
}

/// A script-model request running `commands`, one per line.
pub fn script(commands: &str, max_cost_micros: i64) -> Value {
    json!({"prompt": commands, "model": "ephemeral/script", "max_cost_micros": max_cost_micros})
}

/// POSTs a run; `(status, headers, body)`.
pub async fn post_run(
    base: &str,
    key: &str,
    body: &Value,
    idempotency_key: Option<&str>,
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = client()
        .post(format!("{base}/v1/runs"))
        .bearer_auth(key)
        .json(body);
    if let Some(k) = idempotency_key {
        request = request.header("Idempotency-Key", k);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (
        status,
        headers,
        response.json().await.unwrap_or(Value::Null),
    )
}

pub async fn get_json(base: &str, key: &str, path: &str) -> (u16, Value) {
    get_json_with(&client(), base, key, path).await
}

/// `get_json` on a given client, whose connection is kept between calls.
pub async fn get_json_with(
    client: &reqwest::Client,
    base: &str,
    key: &str,
    path: &str,
) -> (u16, Value) {
    let response = client
        .get(format!("{base}{path}"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Waits for a run to end; its run object with timeline. One connection
/// polls: hundreds of waiters each opening a connection every 20 ms would
/// reach the server's per-peer cap on a loaded machine.
pub async fn wait_run(base: &str, key: &str, id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    let client = client();
    // Backing off as a client should: hundreds of waiters polling every
    // 20 ms are thousands of requests a second on the server's own cores.
    let mut pause = Duration::from_millis(20);
    loop {
        let (status, run) = get_json_with(&client, base, key, &format!("/v1/runs/{id}")).await;
        assert_eq!(status, 200, "{run}");
        let ended = run["timeline"]
            .as_array()
            .is_some_and(|t| t.last().is_some_and(|e| e["type"] == "worker.destroyed"));
        if ended {
            return run;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "run {id} did not end: {run}"
        );
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(250));
    }
}

/// One SSE event as read off the wire.
#[derive(Debug, Clone)]
pub struct SseEvent {
    pub id: i64,
    pub kind: String,
    pub data: Value,
}

/// Reads a whole SSE response body into events.
pub async fn read_sse(response: reqwest::Response) -> Vec<SseEvent> {
    let text = response.text().await.unwrap();
    parse_sse(&text)
}

pub fn parse_sse(text: &str) -> Vec<SseEvent> {
    let mut events = Vec::new();
    for block in text.split("\n\n") {
        let (mut id, mut kind, mut data) = (None, None, String::new());
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("id:") {
                id = v.trim().parse().ok();
            } else if let Some(v) = line.strip_prefix("event:") {
                kind = Some(v.trim().to_string());
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push_str(v.strip_prefix(' ').unwrap_or(v));
            }
        }
        if let (Some(id), Some(kind)) = (id, kind) {
            events.push(SseEvent {
                id,
                kind,
                data: serde_json::from_str(&data).unwrap_or(Value::Null),
            });
        }
    }
    events
}

/// The `ephemeral` binary built with these tests.
pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ephemeral"))
}

/// Runs an async scenario `fn(Backend)` once per store, as two tests.
#[macro_export]
macro_rules! on_both_stores {
    ($($scenario:ident),* $(,)?) => {
        $(
            mod $scenario {
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn sqlite() {
                    super::$scenario($crate::support::Backend::Sqlite).await
                }
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn postgres() {
                    super::$scenario($crate::support::Backend::Postgres).await
                }
            }
        )*
    };
}

/// POSTs a sandbox; `(status, body)`.
pub async fn create_sandbox(base: &str, key: &str, body: &Value) -> (u16, Value) {
    let response = client()
        .post(format!("{base}/v1/sandboxes"))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Runs `command` in sandbox `id`; `(status, body)`.
pub async fn sandbox_command(base: &str, key: &str, id: &str, body: &Value) -> (u16, Value) {
    let response = client()
        .post(format!("{base}/v1/sandboxes/{id}/commands"))
        .bearer_auth(key)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Waits until sandbox `id` has ended and its timeline is closed; the
/// sandbox object.
pub async fn wait_sandbox_ended(base: &str, key: &str, id: &str, within: Duration) -> Value {
    let deadline = tokio::time::Instant::now() + within;
    let client = client();
    loop {
        let (status, sbx) = get_json_with(&client, base, key, &format!("/v1/sandboxes/{id}")).await;
        assert_eq!(status, 200, "{sbx}");
        if sbx["status"] == "ended" {
            return sbx;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "sandbox {id} did not end: {sbx}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The ledger's invariants over the whole store: every reservation
/// settled or held, the balance moved by exactly what was charged.
pub async fn assert_ledger_balanced(store: &dyn Store, start_balance_total: i64) {
    let totals = store.ledger_totals().await.unwrap();
    assert_eq!(totals.held_micros, 0, "{totals:?}");
    assert_eq!(
        totals.balance_micros + totals.charged_micros,
        start_balance_total,
        "{totals:?}"
    );
}
