//! SIGTERM: the server stops taking runs, lets the ones in flight finish
//! (or cancels them after the grace period), settles them, then exits.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use support::{Backend, TestServer, get_json, post_run, script};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_finishes_runs_in_flight_then_exits() {
    let data = tempfile::tempdir().unwrap();
    let out = Command::new(support::binary())
        .args(["keys", "create", "--org", "acme", "--data"])
        .arg(data.path())
        .output()
        .unwrap();
    let key = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let mut child = Command::new(support::binary())
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let base = loop {
        let line = lines.next().unwrap().unwrap();
        if let Some(addr) = line.strip_prefix("ephemeral: listening on ") {
            break addr.to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    let (_, _, run) = post_run(&base, &key, &json!({"prompt": "sleep 1.5\necho finished", "model": "ephemeral/script", "max_cost_micros": 9_000}), None).await;
    let id = run["id"].as_str().unwrap().to_string();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    unsafe_kill(child.id(), 15);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(20));

    // Back up on the same data: the run finished before the exit.
    let server = TestServer::start_on(Backend::Sqlite, data, None, |_| {}).await;
    let (_, run) = get_json(&server.base, &key, &format!("/v1/runs/{id}")).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["output"], "finished\n");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_grace_period_runs_are_cancelled_and_settled() {
    let server = TestServer::start_with(Backend::Sqlite, |c| c.shutdown_grace_seconds = 1).await;
    let key = server.org("acme", 1_000_000).await;
    let (_, _, run) = post_run(&server.base, &key, &script("sleep 60", 20_000), None).await;
    let id = run["id"].as_str().unwrap().to_string();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let edge = server.edge.clone();
    let started = Instant::now();
    let data = server.stop().await;
    assert!(started.elapsed() < Duration::from_secs(15));
    let run = edge.store.run(&id).await.unwrap().unwrap();
    assert_eq!(run.status.as_str(), "cancelled");
    let s = run.settlement.unwrap();
    assert_eq!(s.charged + s.released, 20_000);
    drop(data);
}

/// A reader that opened a run's events and never reads them does not keep
/// the server alive after SIGTERM: streams end when the drain is over, and
/// a connection that cannot take its last bytes is left behind (finding D3).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_reader_does_not_hold_the_exit() {
    use tokio::io::AsyncWriteExt;
    let data = tempfile::tempdir().unwrap();
    let (key, mut child, base) = serve(data.path());
    // Enough output that the unread stream fills the socket's buffers.
    let prompt = "seq 1 150000";
    let (_, _, run) = post_run(
        &base,
        &key,
        &json!({"prompt": prompt, "model": "ephemeral/script", "max_cost_micros": 9_000}),
        None,
    )
    .await;
    let id = run["id"].as_str().unwrap().to_string();
    let addr = base.trim_start_matches("http://").to_owned();
    let mut stalled = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let request = format!(
        "GET /v1/runs/{id}/events HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\n\r\n"
    );
    stalled.write_all(request.as_bytes()).await.unwrap();
    support::wait_run(&base, &key, &id).await;
    let started = Instant::now();
    unsafe_kill(child.id(), 15);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    // Generous: the drain has nothing to wait for, so this takes about the
    // connections' grace (2 s); before the fix it never ended.
    let took = started.elapsed();
    assert!(took < Duration::from_secs(20), "{took:?}");
    drop(stalled);
}

/// `ephemeral serve` on `data`, with a key of org acme: (key, child, base URL).
fn serve(data: &std::path::Path) -> (String, std::process::Child, String) {
    let out = Command::new(support::binary())
        .args(["keys", "create", "--org", "acme", "--data"])
        .arg(data)
        .output()
        .unwrap();
    let key = String::from_utf8(out.stdout).unwrap().trim().to_string();
    let mut child = Command::new(support::binary())
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let base = loop {
        let line = lines.next().unwrap().unwrap();
        if let Some(addr) = line.strip_prefix("ephemeral: listening on ") {
            break addr.to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (key, child, base)
}

fn unsafe_kill(pid: u32, signal: i32) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success());
}
