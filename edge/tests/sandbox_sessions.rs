//! Sandboxes their callers drive (`/v1/sandboxes`), over real HTTP with
//! real jailed workers: created, commands in order with their state
//! carried over, output streamed in write order, deleted and settled;
//! never reachable from another organisation; runs and sandboxes share
//! one concurrency limit; 200 at once conserve money and leave nothing
//! behind.

mod support;

use ephemeral_edge::isolation::Isolation;
use serde_json::{Value, json};
use support::{
    Backend, TestServer, assert_ledger_balanced, client, create_sandbox, get_json, post_run,
    sandbox_command,
};

on_both_stores!(
    a_sandbox_keeps_its_state_and_is_settled_when_deleted,
    another_organisation_cannot_see_or_touch_a_sandbox,
    runs_and_sandboxes_share_the_concurrency_limit,
    two_hundred_sandboxes_at_once_conserve_money_and_leave_nothing
);

const BALANCE: i64 = 5_000_000;

async fn a_sandbox_keeps_its_state_and_is_settled_when_deleted(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", BALANCE).await;
    let base = &server.base;
    let (status, sbx) = create_sandbox(
        base,
        &key,
        &json!({"max_cost_micros": 100_000, "metadata": {"who": "test"}}),
    )
    .await;
    assert_eq!(status, 201, "{sbx}");
    let id = sbx["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("sbx_") && id.len() == 36, "{id}");
    assert_eq!(sbx["object"], "sandbox");
    assert_eq!(sbx["status"], "running");
    assert_eq!(sbx["end_reason"], Value::Null);
    assert_eq!(sbx["limits"]["timeout_seconds"], 300);
    assert_eq!(sbx["limits"]["idle_timeout_seconds"], 120);
    assert_eq!(sbx["cost"]["reserved_micros"], 100_000);
    assert_eq!(sbx["metadata"]["who"], "test");
    assert!(sbx["isolation"].is_string(), "{sbx}");

    // State carries over: the folder, exported variables, files.
    let run = |command: Value| {
        let (base, key, id) = (base.clone(), key.clone(), id.clone());
        async move { sandbox_command(&base, &key, &id, &command).await }
    };
    let (status, out) = run(json!({"command": "mkdir -p work && cd work && export GREETING=hello && echo made > f.txt"})).await;
    assert_eq!((status, out["exit_code"].as_i64()), (200, Some(0)), "{out}");
    let (_, out) = run(json!({"command": "pwd; echo $GREETING; cat f.txt; whoami"})).await;
    let lines: Vec<&str> = out["stdout"].as_str().unwrap().lines().collect();
    assert!(lines[0].ends_with("/scratch/work"), "{out}");
    assert_eq!(lines[1..], ["hello", "made", "worker"], "{out}");

    // stdin and env are the command's own.
    let (_, out) = run(json!({"command": "cat; echo \"[$ONLY_HERE]\"", "stdin": "piped in\n", "env": {"ONLY_HERE": "yes"}})).await;
    assert_eq!(out["stdout"], "piped in\n[yes]\n", "{out}");
    let (_, out) = run(json!({"command": "echo \"[$ONLY_HERE]\""})).await;
    assert_eq!(out["stdout"], "[]\n", "{out}");

    // A failing command is a result, not an error; a timeout names its limit.
    let (status, out) = run(json!({"command": "echo oops >&2; exit 3"})).await;
    assert_eq!(
        (status, out["exit_code"].as_i64(), out["stderr"].as_str()),
        (200, Some(3), Some("oops\n")),
        "{out}"
    );
    let (_, out) = run(json!({"command": "sleep 5", "timeout_seconds": 1})).await;
    assert_eq!(out["limit"], "command_timeout", "{out}");

    // Streamed: output events in write order, then one exit.
    let response = client()
        .post(format!("{base}/v1/sandboxes/{id}/commands"))
        .bearer_auth(&key)
        .header("Accept", "text/event-stream")
        .json(&json!({"command": "echo one; echo two >&2; echo three"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let events = command_events(&response.text().await.unwrap());
    let (kinds, data): (Vec<&str>, Vec<&Value>) =
        events.iter().map(|(k, d)| (k.as_str(), d)).unzip();
    assert_eq!(kinds.last(), Some(&"exit"), "{events:?}");
    let written: String = data[..data.len() - 1]
        .iter()
        .map(|d| d["data"].as_str().unwrap())
        .collect();
    assert_eq!(written, "one\ntwo\nthree\n", "{events:?}");
    assert_eq!(data.last().unwrap()["exit_code"], 0);

    // Listed, then deleted: ended, settled, and closed to commands.
    let (_, list) = get_json(base, &key, "/v1/sandboxes?limit=5").await;
    assert_eq!(list["data"][0]["id"], id.as_str(), "{list}");
    let response = client()
        .delete(format!("{base}/v1/sandboxes/{id}"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let ended: Value = response.json().await.unwrap();
    assert_eq!(
        (ended["status"].as_str(), ended["end_reason"].as_str()),
        (Some("ended"), Some("deleted")),
        "{ended}"
    );
    let cost = &ended["cost"];
    let (charged, released) = (
        cost["charged_micros"].as_i64().unwrap(),
        cost["released_micros"].as_i64().unwrap(),
    );
    assert_eq!(charged + released, 100_000, "{ended}");
    assert!(
        charged > 0 && charged == cost["compute_micros"].as_i64().unwrap(),
        "{ended}"
    );
    let (status, problem) = run(json!({"command": "echo late"})).await;
    assert_eq!(
        (status, problem["type"].as_str()),
        (409, Some("/problems/sandbox-ended")),
        "{problem}"
    );
    // Deleting again is not an error.
    let again = client()
        .delete(format!("{base}/v1/sandboxes/{id}"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 200);

    // The timeline, from the start.
    let response = client()
        .get(format!("{base}/v1/sandboxes/{id}/events"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    let kinds: Vec<String> = support::read_sse(response)
        .await
        .into_iter()
        .map(|e| e.kind)
        .collect();
    let want_in_order = [
        "budget.reserved",
        "vm.ready",
        "worker.started",
        "shell.command",
        "shell.exit",
        "vm.destroyed",
        "sandbox.ended",
        "worker.destroyed",
    ];
    let mut at = 0;
    for kind in &kinds {
        if at < want_in_order.len() && kind == want_in_order[at] {
            at += 1;
        }
    }
    assert_eq!(at, want_in_order.len(), "{kinds:?}");
    assert_eq!(kinds.last().map(String::as_str), Some("worker.destroyed"));
    assert_ledger_balanced(server.edge.store.as_ref(), BALANCE).await;
    server.stop().await;
}

async fn another_organisation_cannot_see_or_touch_a_sandbox(backend: Backend) {
    let server = TestServer::start(backend).await;
    let owner = server.org("owner", BALANCE).await;
    let other = server.org("other", BALANCE).await;
    let base = &server.base;
    let (_, sbx) = create_sandbox(base, &owner, &json!({"max_cost_micros": 50_000})).await;
    let id = sbx["id"].as_str().unwrap();
    let http = client();
    let attempts = [
        http.get(format!("{base}/v1/sandboxes/{id}")),
        http.post(format!("{base}/v1/sandboxes/{id}/commands"))
            .json(&json!({"command": "echo hi"})),
        http.put(format!("{base}/v1/sandboxes/{id}/files/x.txt"))
            .body("x"),
        http.get(format!("{base}/v1/sandboxes/{id}/files/x.txt")),
        http.get(format!("{base}/v1/sandboxes/{id}/files")),
        http.get(format!("{base}/v1/sandboxes/{id}/events")),
        http.delete(format!("{base}/v1/sandboxes/{id}")),
        // A run's endpoints do not take a sandbox id either.
        http.get(format!("{base}/v1/runs/{id}")),
    ];
    for attempt in attempts {
        let response = attempt.bearer_auth(&other).send().await.unwrap();
        assert_eq!(response.status(), 404, "{:?}", response.url());
    }
    let (_, list) = get_json(base, &other, "/v1/sandboxes").await;
    assert_eq!(list["data"], json!([]), "{list}");
    // Still the owner's, untouched.
    let (status, out) = sandbox_command(base, &owner, id, &json!({"command": "echo mine"})).await;
    assert_eq!(
        (status, out["stdout"].as_str()),
        (200, Some("mine\n")),
        "{out}"
    );
    client()
        .delete(format!("{base}/v1/sandboxes/{id}"))
        .bearer_auth(&owner)
        .send()
        .await
        .unwrap();
    server.stop().await;
}

async fn runs_and_sandboxes_share_the_concurrency_limit(backend: Backend) {
    let server = TestServer::start_with(backend, |c| c.limits.concurrent_runs = 2).await;
    let key = server.org("acme", BALANCE).await;
    let base = &server.base;
    let (status, sbx) = create_sandbox(base, &key, &json!({"max_cost_micros": 50_000})).await;
    assert_eq!(status, 201, "{sbx}");
    let long_run =
        json!({"prompt": "sleep 30", "model": "ephemeral/script", "max_cost_micros": 50_000});
    let (status, _, run) = post_run(base, &key, &long_run, None).await;
    assert_eq!(status, 201, "{run}");
    let (status, problem) = create_sandbox(base, &key, &json!({"max_cost_micros": 50_000})).await;
    assert_eq!(
        (status, problem["type"].as_str()),
        (429, Some("/problems/too-many-runs")),
        "{problem}"
    );
    let (status, _, problem) = post_run(base, &key, &long_run, None).await;
    assert_eq!(status, 429, "{problem}");
    // Ending the sandbox frees its place.
    let id = sbx["id"].as_str().unwrap();
    client()
        .delete(format!("{base}/v1/sandboxes/{id}"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    let (status, sbx) = create_sandbox(base, &key, &json!({"max_cost_micros": 50_000})).await;
    assert_eq!(status, 201, "{sbx}");
    server.stop().await;
}

/// 200 sandboxes created, used and deleted concurrently (on threads of
/// the server, so that 200 fit on a small machine; the jailed path is the
/// same code above the worker): every one settled, money conserved,
/// nothing left in flight.
async fn two_hundred_sandboxes_at_once_conserve_money_and_leave_nothing(backend: Backend) {
    const N: usize = 200;
    let server = TestServer::start_with(backend, |c| {
        c.isolation = Some(Isolation::Wasm);
        c.limits.concurrent_runs = 1_000;
        c.limits.runs_per_minute = 10_000;
    })
    .await;
    let key = server.org("acme", BALANCE).await;
    let mut tasks = Vec::new();
    for i in 0..N {
        let (base, key) = (server.base.clone(), key.clone());
        tasks.push(tokio::spawn(async move {
            let (status, sbx) =
                create_sandbox(&base, &key, &json!({"max_cost_micros": 10_000})).await;
            assert_eq!(status, 201, "{sbx}");
            let id = sbx["id"].as_str().unwrap().to_string();
            let (status, out) =
                sandbox_command(&base, &key, &id, &json!({"command": format!("echo {i}")})).await;
            assert_eq!(
                (status, out["stdout"].as_str()),
                (200, Some(format!("{i}\n").as_str())),
                "{out}"
            );
            let ended: Value = client()
                .delete(format!("{base}/v1/sandboxes/{id}"))
                .bearer_auth(&key)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let cost = &ended["cost"];
            assert_eq!(
                cost["charged_micros"].as_i64().unwrap()
                    + cost["released_micros"].as_i64().unwrap(),
                10_000,
                "{ended}"
            );
            id
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_ledger_balanced(server.edge.store.as_ref(), BALANCE).await;
    let (_, health) = get_json(&server.base, &key, "/v1/health").await;
    assert_eq!(health["runs_in_flight"], 0, "{health}");
    server.stop().await;
}

/// The events of a command's stream: `(event, data)`.
fn command_events(text: &str) -> Vec<(String, Value)> {
    let mut events = Vec::new();
    for block in text.split("\n\n") {
        let (mut kind, mut data) = (None, String::new());
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("event:") {
                kind = Some(v.trim().to_string());
            } else if let Some(v) = line.strip_prefix("data:") {
                data.push_str(v.strip_prefix(' ').unwrap_or(v));
            }
        }
        if let Some(kind) = kind {
            events.push((kind, serde_json::from_str(&data).unwrap_or(Value::Null)));
        }
    }
    events
}
