//! `Idempotency-Key` as API.md says: one run per key and body, replays
//! marked, a different body refused, never a second reservation.

mod support;

use std::collections::HashSet;

use serde_json::json;
use support::{Backend, TestServer, get_json, post_run, script, wait_run};

on_both_stores!(
    fifty_concurrent_posts_make_one_run,
    replay_after_completion_and_reuse_with_another_body,
    keys_belong_to_one_organisation,
);

async fn fifty_concurrent_posts_make_one_run(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", 1_000_000).await;
    let body = script("echo once", 7_000);
    let posts = (0..50).map(|_| {
        let (base, key, body) = (server.base.clone(), key.clone(), body.clone());
        tokio::spawn(async move { post_run(&base, &key, &body, Some("same-key-1")).await })
    });
    let mut ids = HashSet::new();
    let mut fresh = 0;
    for post in posts {
        let (status, headers, run) = post.await.unwrap();
        assert!(status == 201 || status == 409, "{status} {run}");
        if status == 201 {
            ids.insert(run["id"].as_str().unwrap().to_string());
            if !headers.contains_key("idempotent-replayed") {
                fresh += 1;
            }
        }
    }
    assert_eq!(ids.len(), 1, "{ids:?}");
    assert_eq!(fresh, 1, "exactly one response is not a replay");
    let (_, list) = get_json(&server.base, &key, "/v1/runs").await;
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
    let id = ids.into_iter().next().unwrap();
    let run = wait_run(&server.base, &key, &id).await;
    let org = server
        .edge
        .store
        .org_for_key(&ephemeral_edge::ids::key_hash(&key))
        .await
        .unwrap()
        .unwrap();
    let charged = run["cost"]["charged_micros"].as_i64().unwrap();
    assert_eq!(org.held_micros, 0);
    assert_eq!(
        org.balance_micros,
        1_000_000 - charged,
        "one reservation, settled once"
    );
    server.stop().await;
}

async fn replay_after_completion_and_reuse_with_another_body(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", 1_000_000).await;
    let body = script("echo first", 5_000);
    let (status, headers, first) = post_run(&server.base, &key, &body, Some("k-2")).await;
    assert_eq!(status, 201);
    assert!(!headers.contains_key("idempotent-replayed"));
    let id = first["id"].as_str().unwrap();
    wait_run(&server.base, &key, id).await;

    let (status, headers, again) = post_run(&server.base, &key, &body, Some("k-2")).await;
    assert_eq!(status, 201);
    assert_eq!(headers["idempotent-replayed"], "true");
    assert_eq!(headers["location"], format!("/v1/runs/{id}").as_str());
    assert_eq!(again, first, "the stored response is replayed");

    let other = script("echo second", 5_000);
    let (status, _, problem) = post_run(&server.base, &key, &other, Some("k-2")).await;
    assert_eq!(status, 422, "{problem}");
    assert_eq!(problem["type"], "/problems/idempotency-key-reused");

    // Same body, no key, or another key: new runs.
    let (status, _, run) = post_run(&server.base, &key, &body, Some("k-3")).await;
    assert_eq!(status, 201);
    assert_ne!(run["id"], first["id"]);
    let (_, list) = get_json(&server.base, &key, "/v1/runs").await;
    assert_eq!(list["data"].as_array().unwrap().len(), 2);
    server.stop().await;
}

async fn keys_belong_to_one_organisation(backend: Backend) {
    let server = TestServer::start(backend).await;
    let a = server.org("a", 1_000_000).await;
    let b = server.org("b", 1_000_000).await;
    let body = json!({"prompt": "echo", "model": "ephemeral/script", "max_cost_micros": 1_000});
    let (_, _, run_a) = post_run(&server.base, &a, &body, Some("shared")).await;
    let (status, headers, run_b) = post_run(&server.base, &b, &body, Some("shared")).await;
    assert_eq!(status, 201);
    assert!(!headers.contains_key("idempotent-replayed"));
    assert_ne!(run_a["id"], run_b["id"]);
    server.stop().await;
}
