//! Records: runs expire after the retention period and are purged with
//! their timelines; zero-data-retention runs leave no prompt, command or
//! output anywhere in the data folder, only billing figures and status.

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use support::{Backend, TestServer, client, get_json, post_run, read_sse, script, wait_run};

on_both_stores!(
    expired_runs_are_purged,
    zero_data_retention_stores_no_content
);

async fn expired_runs_are_purged(backend: Backend) {
    let server = TestServer::start_with(backend, |c| {
        c.retention.days = 0;
        c.retention.purge_interval_seconds = 1;
    })
    .await;
    let key = server.org("acme", 1_000_000).await;
    let (_, _, run) = post_run(
        &server.base,
        &key,
        &script("echo keep me briefly", 1_000),
        None,
    )
    .await;
    let id = run["id"].as_str().unwrap();
    wait_run(&server.base, &key, id).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (status, _) = get_json(&server.base, &key, &format!("/v1/runs/{id}")).await;
        if status == 404 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "run was not purged");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(server.edge.store.events(id, 0).await.unwrap().is_empty());
    // The money it moved stays in the ledger.
    let totals = server.edge.store.ledger_totals().await.unwrap();
    assert_eq!(totals.balance_micros + totals.charged_micros, 1_000_000);
    server.stop().await;
}

const SECRET_PROMPT: &str = "zdr-marker-prompt-4417";
const SECRET_OUTPUT: &str = "zdr-marker-output-9923";

async fn zero_data_retention_stores_no_content(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("private", 1_000_000).await;
    let body = json!({
        "prompt": format!("echo {SECRET_OUTPUT} # {SECRET_PROMPT}\nprintf '%s\\n' {SECRET_OUTPUT}-2 > f.txt; cat f.txt"),
        "model": "ephemeral/script",
        "max_cost_micros": 10_000,
        "zero_data_retention": true,
    });
    let response = client()
        .post(format!("{}/v1/runs", server.base))
        .bearer_auth(&key)
        .header("accept", "text/event-stream")
        .json(&body)
        .send()
        .await
        .unwrap();
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let live = read_sse(response).await;
    let streamed: String = live.iter().map(|e| e.data.to_string()).collect();
    assert!(
        streamed.contains(SECRET_OUTPUT),
        "the caller gets everything live"
    );
    assert!(
        live.iter().any(|e| e.kind == "run.succeeded"
            && e.data["output"].as_str().unwrap().contains(SECRET_OUTPUT))
    );

    let (_, run) = get_json(&server.base, &key, &location).await;
    assert_eq!(run["status"], "succeeded");
    assert_eq!(run["permissions"]["zero_data_retention"], true);
    assert!(run["output"].is_null());
    let cost = &run["cost"];
    assert_eq!(
        cost["charged_micros"].as_i64().unwrap() + cost["released_micros"].as_i64().unwrap(),
        10_000
    );
    let text = run.to_string();
    assert!(
        !text.contains(SECRET_OUTPUT) && !text.contains(SECRET_PROMPT),
        "{text}"
    );
    let kinds: Vec<&str> = run["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert!(!kinds.iter().any(|k| k.starts_with("shell.")), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"worker.destroyed"));

    // Organisation-wide ZDR applies to runs that did not ask for it.
    let update = ephemeral_edge::store::OrgUpdate {
        zero_data_retention: Some(true),
        ..Default::default()
    };
    let org = server
        .edge
        .store
        .org_for_key(&ephemeral_edge::ids::key_hash(&key))
        .await
        .unwrap()
        .unwrap();
    server
        .edge
        .store
        .set_org(&org.name, &org, &update)
        .await
        .unwrap();
    let (_, _, forced) = post_run(
        &server.base,
        &key,
        &script(&format!("echo {SECRET_OUTPUT}"), 1_000),
        None,
    )
    .await;
    assert_eq!(forced["permissions"]["zero_data_retention"], true);
    let forced = wait_run(&server.base, &key, forced["id"].as_str().unwrap()).await;
    assert!(!forced.to_string().contains(SECRET_OUTPUT));

    let data = server.stop().await;
    if backend == Backend::Sqlite {
        for marker in [SECRET_PROMPT, SECRET_OUTPUT] {
            assert!(
                !folder_contains(data.path(), marker.as_bytes()),
                "{marker} found on disk"
            );
        }
    }
}

/// Whether any file under `dir` contains `needle` (the SQLite file, its
/// WAL, anything else the server wrote).
fn folder_contains(dir: &Path, needle: &[u8]) -> bool {
    let mut found = false;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found |= folder_contains(&path, needle);
        } else if let Ok(bytes) = std::fs::read(&path) {
            found |= bytes.windows(needle.len()).any(|w| w == needle);
        }
    }
    found
}
