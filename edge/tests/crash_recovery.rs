//! `kill -9` of the server while runs are in flight: on restart every such
//! run ends `failed` with error `interrupted`, settled from the usage it
//! had metered, its timeline closed by `worker.destroyed`, and the ledger's
//! invariants hold; sandboxes end `failed` the same way. The server here is
//! the real `ephemeral serve` binary.

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;
use support::{Backend, get_json, post_run, wait_run};

on_both_stores!(
    kill_9_mid_runs_then_restart_settles_everything,
    kill_9_right_after_the_201_keeps_the_first_event,
    kill_9_mid_command_then_restart_settles_sandboxes
);

const START_BALANCE: i64 = 5_000_000;

/// A run answered 201 has its `budget.reserved` event stored, even when
/// the server dies at once (finding D4: the first event was written after
/// the answer, and a kill -9 left timelines of only `run.failed`,
/// `worker.destroyed`).
async fn kill_9_right_after_the_201_keeps_the_first_event(backend: Backend) {
    let (data, url, key) = fresh_org(backend).await;
    let url = url.as_deref();
    let mut node = serve(data.path(), url);
    let mut ids = Vec::new();
    for i in 0..8 {
        let body = json!({"prompt": format!("echo {i}\nsleep 30"), "model": "ephemeral/script", "max_cost_micros": 10_000});
        let (status, _, run) = post_run(&node.base, &key, &body, None).await;
        assert_eq!(status, 201, "{run}");
        ids.push(run["id"].as_str().unwrap().to_string());
    }
    node.child.kill().unwrap(); // SIGKILL, with no pause after the last 201
    node.child.wait().unwrap();

    let mut node = serve(data.path(), url);
    for id in &ids {
        let run = wait_run(&node.base, &key, id).await;
        let timeline = run["timeline"].as_array().unwrap();
        assert_eq!(timeline[0]["type"], "budget.reserved", "{run}");
        assert_eq!(timeline[0]["data"]["reserved_micros"], 10_000, "{run}");
        assert_eq!(timeline.last().unwrap()["type"], "worker.destroyed");
        let cost = &run["cost"];
        assert_eq!(
            cost["charged_micros"].as_i64().unwrap() + cost["released_micros"].as_i64().unwrap(),
            10_000,
            "{run}"
        );
    }
    node.child.kill().unwrap();
    node.child.wait().unwrap();
}

/// A data folder, the PostgreSQL database for `backend` (none for
/// SQLite), and a key of org `acme` holding `START_BALANCE`.
async fn fresh_org(backend: Backend) -> (tempfile::TempDir, Option<String>, String) {
    let data = tempfile::tempdir().unwrap();
    let url = match backend {
        Backend::Sqlite => None,
        Backend::Postgres => Some(support::postgres::fresh_database().await),
    };
    let key = keys_create(data.path(), url.as_deref(), "acme");
    orgs_set(data.path(), url.as_deref(), "acme", START_BALANCE);
    (data, url, key)
}

struct Node {
    child: Child,
    base: String,
}

fn serve(data: &std::path::Path, database_url: Option<&str>) -> Node {
    let mut command = Command::new(support::binary());
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(url) = database_url {
        command.env("EPHEMERAL_DATABASE_URL", url);
    }
    let mut child = command.spawn().expect("ephemeral serve starts");
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let base = loop {
        let line = lines.next().expect("server said where it listens").unwrap();
        if let Some(addr) = line.strip_prefix("ephemeral: listening on ") {
            break addr.trim().to_string();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Node { child, base }
}

fn keys_create(data: &std::path::Path, database_url: Option<&str>, org: &str) -> String {
    let mut command = Command::new(support::binary());
    command
        .args(["keys", "create", "--org", org, "--data"])
        .arg(data);
    if let Some(url) = database_url {
        command.env("EPHEMERAL_DATABASE_URL", url);
    }
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn orgs_set(data: &std::path::Path, database_url: Option<&str>, org: &str, balance: i64) {
    let mut command = Command::new(support::binary());
    command
        .args([
            "orgs",
            "set",
            "--org",
            org,
            "--balance-micros",
            &balance.to_string(),
            "--data",
        ])
        .arg(data);
    if let Some(url) = database_url {
        command.env("EPHEMERAL_DATABASE_URL", url);
    }
    assert!(command.status().unwrap().success());
}

async fn kill_9_mid_runs_then_restart_settles_everything(backend: Backend) {
    let (data, url, key) = fresh_org(backend).await;
    let url = url.as_deref();

    let mut node = serve(data.path(), url);
    let mut ids = Vec::new();
    for i in 0..6 {
        let body = json!({"prompt": format!("echo start {i}\nsleep 30"), "model": "ephemeral/script", "max_cost_micros": 100_000});
        let (status, _, run) = post_run(&node.base, &key, &body, None).await;
        assert_eq!(status, 201, "{run}");
        ids.push(run["id"].as_str().unwrap().to_string());
    }
    // One finished run, to see it untouched by recovery.
    let (_, _, done) = post_run(
        &node.base,
        &key,
        &json!({"prompt": "echo done", "model": "ephemeral/script", "max_cost_micros": 100_000}),
        None,
    )
    .await;
    let done_id = done["id"].as_str().unwrap().to_string();
    wait_run(&node.base, &key, &done_id).await;
    // Let usage be metered (every second) before the crash.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    node.child.kill().unwrap(); // SIGKILL
    node.child.wait().unwrap();

    let mut node = serve(data.path(), url);
    let mut charged = 0;
    for id in ids.iter().chain([&done_id]) {
        let run = wait_run(&node.base, &key, id).await;
        let cost = &run["cost"];
        let get = |k: &str| cost[k].as_i64().unwrap();
        assert_eq!(
            get("charged_micros") + get("released_micros"),
            100_000,
            "{run}"
        );
        charged += get("charged_micros");
        if *id == done_id {
            assert_eq!(run["status"], "succeeded");
            continue;
        }
        assert_eq!(run["status"], "failed", "{run}");
        assert_eq!(run["error"]["code"], "interrupted");
        assert!(
            get("compute_micros") > 0,
            "usage metered before the crash is charged: {run}"
        );
        let timeline = run["timeline"].as_array().unwrap();
        let seqs: Vec<i64> = timeline
            .iter()
            .map(|e| e["seq"].as_i64().unwrap())
            .collect();
        assert_eq!(
            seqs,
            (1..=seqs.len() as i64).collect::<Vec<_>>(),
            "no gap in the timeline"
        );
        assert_eq!(timeline.last().unwrap()["type"], "worker.destroyed");
    }
    let (_, list) = get_json(&node.base, &key, "/v1/runs?limit=100").await;
    assert!(
        list["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["status"] != "running" && r["status"] != "queued")
    );
    let metrics = support::client()
        .get(format!("{}/metrics", node.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let gauge = |name: &str| -> i64 {
        metrics
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().last())
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(gauge("ephemeral_ledger_held_micros"), 0);
    assert_eq!(
        gauge("ephemeral_ledger_balance_micros") + charged,
        START_BALANCE
    );
    node.child.kill().unwrap();
    node.child.wait().unwrap();
}

/// Sandboxes held by a server killed mid-command are ended `failed` and
/// settled from the compute metered before the crash at the next start.
async fn kill_9_mid_command_then_restart_settles_sandboxes(backend: Backend) {
    let (data, url, key) = fresh_org(backend).await;
    let url = url.as_deref();
    let node = serve(data.path(), url);
    let mut ids = Vec::new();
    for _ in 0..3 {
        let (status, sbx) =
            support::create_sandbox(&node.base, &key, &json!({"max_cost_micros": 100_000})).await;
        assert_eq!(status, 201, "{sbx}");
        ids.push(sbx["id"].as_str().unwrap().to_string());
    }
    // A command in flight in each when the server dies.
    let mut commands = Vec::new();
    for id in &ids {
        let (base, key, id) = (node.base.clone(), key.clone(), id.clone());
        commands.push(tokio::spawn(async move {
            support::client()
                .post(format!("{base}/v1/sandboxes/{id}/commands"))
                .bearer_auth(&key)
                .json(&json!({"command": "sleep 30"}))
                .send()
                .await
        }));
    }
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let mut node = node;
    node.child.kill().unwrap(); // SIGKILL
    node.child.wait().unwrap();
    for command in commands {
        assert!(
            command.await.unwrap().is_err(),
            "the connection died with the server"
        );
    }

    let mut node = serve(data.path(), url);
    let mut charged = 0;
    for id in &ids {
        let sbx = support::wait_sandbox_ended(&node.base, &key, id, Duration::from_secs(60)).await;
        assert_eq!(sbx["end_reason"], "failed", "{sbx}");
        let cost = &sbx["cost"];
        let get = |k: &str| cost[k].as_i64().unwrap();
        assert_eq!(
            get("charged_micros") + get("released_micros"),
            100_000,
            "{sbx}"
        );
        assert!(
            get("compute_micros") > 0,
            "compute before the crash is charged: {sbx}"
        );
        charged += get("charged_micros");
        let (status, problem) =
            support::sandbox_command(&node.base, &key, id, &json!({"command": "echo hi"})).await;
        assert_eq!(status, 409, "{problem}");
        let events = support::read_sse(
            support::client()
                .get(format!("{}/v1/sandboxes/{id}/events", node.base))
                .bearer_auth(&key)
                .send()
                .await
                .unwrap(),
        )
        .await;
        let n = events.len();
        assert_eq!(events[n - 1].kind, "worker.destroyed", "{events:?}");
        assert_eq!(events[n - 2].kind, "sandbox.ended", "{events:?}");
    }
    let (_, health) = get_json(&node.base, &key, "/v1/health").await;
    assert_eq!(health["status"], "ok", "{health}");
    assert!(charged > 0);
    node.child.kill().unwrap();
    node.child.wait().unwrap();
}
