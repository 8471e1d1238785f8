//! How a sandbox ends on its own: its idle timeout, its lifetime, its
//! budget (before the cap is crossed) — each settled to the micro, with
//! `sandbox.ended` naming the reason and `worker.destroyed` last.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::{
    Backend, TestServer, assert_ledger_balanced, client, create_sandbox, sandbox_command,
    wait_sandbox_ended,
};

on_both_stores!(
    an_idle_sandbox_ends_after_its_idle_timeout,
    a_sandbox_ends_at_its_lifetime_even_mid_command,
    a_sandbox_ends_before_its_budget_is_crossed
);

const BALANCE: i64 = 5_000_000;

async fn an_idle_sandbox_ends_after_its_idle_timeout(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", BALANCE).await;
    let body =
        json!({"max_cost_micros": 100_000, "timeout_seconds": 60, "idle_timeout_seconds": 2});
    let (status, sbx) = create_sandbox(&server.base, &key, &body).await;
    assert_eq!(status, 201, "{sbx}");
    let id = sbx["id"].as_str().unwrap();
    // A command longer than the idle timeout is not idleness.
    let (status, out) = sandbox_command(
        &server.base,
        &key,
        id,
        &json!({"command": "sleep 3; echo awake"}),
    )
    .await;
    assert_eq!(
        (status, out["stdout"].as_str()),
        (200, Some("awake\n")),
        "{out}"
    );
    let ended = wait_sandbox_ended(&server.base, &key, id, Duration::from_secs(30)).await;
    assert_eq!(ended["end_reason"], "idle_timeout", "{ended}");
    assert_settled(&ended, 100_000);
    assert_last_events(&server, &key, id, "idle_timeout").await;
    assert_ledger_balanced(server.edge.store.as_ref(), BALANCE).await;
    server.stop().await;
}

async fn a_sandbox_ends_at_its_lifetime_even_mid_command(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", BALANCE).await;
    let body = json!({"max_cost_micros": 100_000, "timeout_seconds": 3});
    let (_, sbx) = create_sandbox(&server.base, &key, &body).await;
    let id = sbx["id"].as_str().unwrap();
    // Asks for more than the sandbox has left: cut to its lifetime.
    let (status, out) = sandbox_command(
        &server.base,
        &key,
        id,
        &json!({"command": "sleep 30", "timeout_seconds": 60}),
    )
    .await;
    assert_eq!(status, 200, "{out}");
    assert_eq!(out["limit"], "sandbox_timeout", "{out}");
    let ended = wait_sandbox_ended(&server.base, &key, id, Duration::from_secs(30)).await;
    assert_eq!(ended["end_reason"], "timeout", "{ended}");
    assert_settled(&ended, 100_000);
    let (status, problem) =
        sandbox_command(&server.base, &key, id, &json!({"command": "echo late"})).await;
    assert_eq!(status, 409, "{problem}");
    assert_last_events(&server, &key, id, "timeout").await;
    server.stop().await;
}

async fn a_sandbox_ends_before_its_budget_is_crossed(backend: Backend) {
    // 100 + 20 × ½ GiB = 110 micros a second: 400 micros last ~2.6 s.
    let server = TestServer::start(backend).await;
    let key = server.org("acme", BALANCE).await;
    let (status, sbx) = create_sandbox(&server.base, &key, &json!({"max_cost_micros": 400})).await;
    assert_eq!(status, 201, "{sbx}");
    let id = sbx["id"].as_str().unwrap();
    let ended = wait_sandbox_ended(&server.base, &key, id, Duration::from_secs(30)).await;
    assert_eq!(ended["end_reason"], "budget_exceeded", "{ended}");
    assert_settled(&ended, 400);
    let compute = ended["cost"]["compute_micros"].as_i64().unwrap();
    assert!(compute < 400, "ended before the cap was crossed: {ended}");
    assert!(compute >= 100, "it lived its budget's worth: {ended}");
    // Less than a second of compute is refused up front.
    let (status, problem) =
        create_sandbox(&server.base, &key, &json!({"max_cost_micros": 50})).await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["errors"][0]["field"], "max_cost_micros");
    server.stop().await;
}

fn assert_settled(sbx: &Value, reserved: i64) {
    let cost = &sbx["cost"];
    let charged = cost["charged_micros"].as_i64().unwrap();
    let released = cost["released_micros"].as_i64().unwrap();
    assert_eq!(charged + released, reserved, "{sbx}");
    assert_eq!(charged, cost["compute_micros"].as_i64().unwrap(), "{sbx}");
    assert!(sbx["ended_at"].is_string(), "{sbx}");
}

async fn assert_last_events(server: &TestServer, key: &str, id: &str, reason: &str) {
    let response = client()
        .get(format!("{}/v1/sandboxes/{id}/events", server.base))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    let events = support::read_sse(response).await;
    let n = events.len();
    assert!(n >= 3, "{events:?}");
    assert_eq!(events[n - 1].kind, "worker.destroyed", "{events:?}");
    assert_eq!(events[n - 2].kind, "sandbox.ended", "{events:?}");
    assert_eq!(events[n - 2].data["end_reason"], reason, "{events:?}");
    assert_eq!(events[n - 3].kind, "vm.destroyed", "{events:?}");
}
