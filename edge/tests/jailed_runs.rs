//! Runs in jailed workers, end to end through the API: the isolation is
//! `jail+wasm` where the host can jail (a worker killed under its run:
//! `worker_killed_mid_run.rs`).

mod support;

use serde_json::Value;
use support::{Backend, TestServer, post_run, script, wait_run};

fn event<'a>(run: &'a Value, kind: &str) -> &'a Value {
    run["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == kind)
        .unwrap_or_else(|| panic!("no {kind} in {run}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn runs_are_jailed_by_default() {
    let server = TestServer::start(Backend::Sqlite).await;
    let key = server.org("acme", 1_000_000).await;
    let (status, _, created) =
        post_run(&server.base, &key, &script("echo hi\nwhoami", 50_000), None).await;
    assert_eq!(status, 201, "{created}");
    let run = wait_run(&server.base, &key, created["id"].as_str().unwrap()).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["isolation"], "jail+wasm");
    assert_eq!(event(&run, "vm.ready")["data"]["isolation"], "jail+wasm");
    server.stop().await;
}
