//! Rule: what runs in a sandbox reaches no network, no host file, no other
//! run and no credential — tried through the API, as a run's commands, in
//! a jailed worker and in-process, the way the red team tried (2026-12:
//! 100 network attempts, 47 host-file attempts, 21 cross-run attempts, all
//! refused; kept refused here).
//!
//! - Network: a real listener on this host's loopback counts connections;
//!   curl, bash's `/dev/tcp`, python3's `urllib` and `socket`, and node's
//!   `fetch` all try it, and name resolution is tried too. It must see none.
//! - Host files: a file this test writes on the host, `/etc/shadow`, the
//!   server's own environment (`/proc/1/environ`, `/proc/self/environ`).
//! - Other runs: a run that keeps a file in its `/tmp` while another run
//!   looks for it everywhere it could be.
//! - Credentials: a secret in the server's environment is in no run's
//!   environment.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use ephemeral_edge::config::Config;
use ephemeral_edge::isolation::Isolation;
use serde_json::Value;
use support::{Backend, TestServer, post_run, script, wait_run};

const SECRET_ENV: &str = "EPHEMERAL_WALLS_TEST_SECRET";
const SECRET: &str = "sk-walls-test-5555-do-not-leak";

/// A TCP listener on loopback that counts whoever connects.
async fn listener() -> (u16, Arc<AtomicUsize>) {
    let socket = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = socket.local_addr().unwrap().port();
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    tokio::spawn(async move {
        while let Ok((_, _)) = socket.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });
    (port, seen)
}

async fn server(isolation: Isolation) -> (TestServer, String) {
    // SAFETY: a constant, set before the server starts.
    unsafe { std::env::set_var(SECRET_ENV, SECRET) };
    let server = TestServer::start_with(Backend::Sqlite, move |c: &mut Config| {
        c.isolation = Some(isolation);
    })
    .await;
    let key = server.org("acme", 100_000_000).await;
    (server, key)
}

async fn run(server: &TestServer, key: &str, commands: &str) -> Value {
    let (status, _, run) = post_run(&server.base, key, &script(commands, 1_000_000), None).await;
    assert_eq!(status, 201, "{run}");
    wait_run(&server.base, key, run["id"].as_str().unwrap()).await
}

/// Everything the run's commands printed, stdout and stderr.
fn printed(run: &Value) -> String {
    run["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "shell.output")
        .map(|e| e["data"]["data"].as_str().unwrap_or(""))
        .collect()
}

async fn no_byte_leaves_the_sandbox(isolation: Isolation) {
    let (server, key) = server(isolation).await;
    let (port, seen) = listener().await;
    let attempts = [
        format!("curl -sS -m 5 http://127.0.0.1:{port}/; echo curl=$?"),
        format!("(echo x > /dev/tcp/127.0.0.1/{port}) 2>&1; echo tcp=$?"),
        format!(
            "python3 -c \"import urllib.request; urllib.request.urlopen('http://127.0.0.1:{port}/', timeout=5)\" 2>&1 | tail -1"
        ),
        format!(
            "python3 -c \"import socket; s = socket.socket(); s.settimeout(5); s.connect(('127.0.0.1', {port}))\" 2>&1 | tail -1"
        ),
        format!(
            "node -e \"fetch('http://127.0.0.1:{port}/').then(() => console.log('fetched'), e => console.log('refused', e.message))\""
        ),
        "python3 -c \"import socket; print(socket.gethostbyname('localhost'))\" 2>&1 | tail -1"
            .to_string(),
    ];
    let run = run(&server, &key, &attempts.join("\n")).await;
    assert_eq!(run["status"], "succeeded", "{}", run["error"]);
    let out = printed(&run);
    assert!(out.contains("curl=6") || out.contains("curl=7"), "{out}");
    assert!(!out.contains("tcp=0"), "{out}");
    assert!(!out.contains("fetched"), "{out}");
    assert_eq!(
        seen.load(Ordering::SeqCst),
        0,
        "a connection reached the host: {out}"
    );
    server.stop().await;
}

async fn no_host_file_is_read(isolation: Isolation) {
    let (server, key) = server(isolation).await;
    let host = tempfile::tempdir().unwrap();
    let marker = host.path().join("host-marker.txt");
    std::fs::write(&marker, "host-only-content-7777").unwrap();
    let attempts = [
        format!("cat {} 2>&1", marker.display()),
        format!("ls {} 2>&1", host.path().display()),
        "cat /etc/shadow 2>&1 | head -3".to_string(),
        "cat /proc/1/environ /proc/self/environ 2>&1 | tr '\\0' '\\n' | head -50".to_string(),
        "env".to_string(),
        "python3 -c \"import os; print(sorted(os.environ))\"".to_string(),
        "ls / /var/cache /root 2>&1".to_string(),
    ];
    let run = run(&server, &key, &attempts.join("\n")).await;
    assert_eq!(run["status"], "succeeded", "{}", run["error"]);
    let out = printed(&run);
    assert!(!out.contains("host-only-content-7777"), "{out}");
    // The name may come back in an error (`cat: …/host-marker.txt: No such
    // file`), never in a listing.
    assert!(!out.lines().any(|l| l.trim() == "host-marker.txt"), "{out}");
    assert!(
        !out.contains(SECRET),
        "the server's secret reached a run: {out}"
    );
    assert!(!out.contains(SECRET_ENV), "{out}");
    // A line of /etc/shadow (`root:*:…`), not a listing's `/root:` header.
    assert!(
        !out.lines().any(|l| l.starts_with("root:")),
        "/etc/shadow: {out}"
    );
    server.stop().await;
}

async fn no_run_sees_another(isolation: Isolation) {
    let (server, key) = server(isolation).await;
    // The first run keeps its file while the second one looks.
    let keeper = script(
        "echo other-run-secret-8888 > /tmp/keeper.txt; echo other-run-secret-8888 > keeper.txt\nsleep 8",
        1_000_000,
    );
    let (status, _, first) = post_run(&server.base, &key, &keeper, None).await;
    assert_eq!(status, 201, "{first}");
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let looker = [
        "cat /tmp/keeper.txt 2>&1",
        "ls -a /tmp /tmp/* 2>&1",
        "grep -rs other-run-secret /tmp /home /root /var /etc 2>/dev/null | head -5",
        "python3 -c \"import glob; print(glob.glob('/tmp/**', recursive=True))\"",
    ]
    .join("\n");
    let second = run(&server, &key, &looker).await;
    assert_eq!(second["status"], "succeeded", "{}", second["error"]);
    let out = printed(&second);
    assert!(!out.contains("other-run-secret-8888"), "{out}");
    assert!(!out.contains("keeper.txt\n"), "{out}");
    let first = wait_run(&server.base, &key, first["id"].as_str().unwrap()).await;
    assert_eq!(first["status"], "succeeded", "{}", first["error"]);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_byte_leaves_a_jailed_or_in_process_sandbox() {
    no_byte_leaves_the_sandbox(Isolation::Jail).await;
    no_byte_leaves_the_sandbox(Isolation::Wasm).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_host_file_or_credential_reaches_a_run() {
    no_host_file_is_read(Isolation::Jail).await;
    no_host_file_is_read(Isolation::Wasm).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_run_sees_another_runs_files() {
    no_run_sees_another(Isolation::Jail).await;
    no_run_sees_another(Isolation::Wasm).await;
}
