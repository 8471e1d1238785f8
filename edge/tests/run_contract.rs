//! API.md endpoint by endpoint, on both stores: statuses, headers, the run
//! object, the event order, listing, cancel, and every error status.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::{Backend, TestServer, client, get_json, post_run, read_sse, script, wait_run};

on_both_stores!(
    a_run_goes_through_the_documented_timeline,
    post_with_event_stream_streams_the_run,
    runs_are_listed_newest_first_in_pages,
    cancel_ends_a_run_cancelled_and_settled,
    auth_and_tenancy_errors,
    validation_errors_name_the_field,
    insufficient_balance_is_402,
    too_many_runs_is_429_with_retry_after,
    service_endpoints_answer,
);

async fn a_run_goes_through_the_documented_timeline(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", 1_000_000).await;
    let body = json!({
        "prompt": "pwd; whoami\ncat notes.txt\necho err >&2; exit 3",
        "model": "ephemeral/script",
        "max_cost_micros": 40_000,
        "files": [{"path": "notes.txt", "content": "from the request\n"}],
        "metadata": {"ticket": "T-1"},
    });
    let (status, headers, run) = post_run(&server.base, &key, &body, None).await;
    assert_eq!(status, 201, "{run}");
    let id = run["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("run_") && id.len() == 36);
    assert_eq!(headers["location"], format!("/v1/runs/{id}").as_str());
    assert_eq!(run["object"], "run");
    assert_eq!(run["metadata"], json!({"ticket": "T-1"}));
    assert_eq!(run["permissions"]["files"], json!(["notes.txt"]));
    assert_eq!(run["cost"]["reserved_micros"], 40_000);

    let run = wait_run(&server.base, &key, &id).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["isolation"], "jail+wasm");
    let output = run["output"].as_str().unwrap();
    assert!(
        output.contains("worker\n") && output.contains("from the request\n"),
        "{output}"
    );
    let kinds: Vec<&str> = run["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    let expected_start = [
        "budget.reserved",
        "vm.ready",
        "worker.started",
        "shell.command",
    ];
    assert_eq!(&kinds[..4], expected_start);
    let expected_end = ["vm.destroyed", "run.succeeded", "worker.destroyed"];
    assert_eq!(&kinds[kinds.len() - 3..], expected_end);
    for (i, event) in run["timeline"].as_array().unwrap().iter().enumerate() {
        assert_eq!(event["seq"], i as i64 + 1);
        assert!(event["data"]["at"].as_str().unwrap().ends_with('Z'));
        assert!(event["data"]["t_ms"].as_i64().unwrap() >= 0);
    }
    let exit = run["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|e| e["type"] == "shell.exit")
        .unwrap();
    assert_eq!(exit["data"]["exit_code"], 3);
    let cost = &run["cost"];
    let (charged, released) = (
        cost["charged_micros"].as_i64().unwrap(),
        cost["released_micros"].as_i64().unwrap(),
    );
    assert_eq!(charged + released, 40_000);
    let parts: i64 = ["model_micros", "web_micros", "compute_micros"]
        .iter()
        .map(|k| cost[k].as_i64().unwrap())
        .sum();
    assert_eq!(parts, charged);
    let destroyed = &run["timeline"].as_array().unwrap().last().unwrap()["data"];
    assert_eq!(destroyed["charged_micros"], charged);
    assert_eq!(destroyed["released_micros"], released);
    server.stop().await;
}

async fn post_with_event_stream_streams_the_run(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", 1_000_000).await;
    let response = client()
        .post(format!("{}/v1/runs", server.base))
        .bearer_auth(&key)
        .header("accept", "text/event-stream")
        .json(&script("echo one\necho two", 10_000))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 201);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let events = read_sse(response).await;
    let ids: Vec<i64> = events.iter().map(|e| e.id).collect();
    assert_eq!(ids, (1..=events.len() as i64).collect::<Vec<_>>());
    assert_eq!(events.first().unwrap().kind, "budget.reserved");
    assert_eq!(events.last().unwrap().kind, "worker.destroyed");
    let outputs: String = events
        .iter()
        .filter(|e| e.kind == "shell.output")
        .map(|e| e.data["data"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(outputs, "one\ntwo\n");

    // A finished run replays and closes; Last-Event-ID resumes after it.
    let replay = client()
        .get(format!("{}{location}/events", server.base))
        .bearer_auth(&key)
        .header("last-event-id", "3")
        .send()
        .await
        .unwrap();
    let rest = read_sse(replay).await;
    assert_eq!(rest.first().unwrap().id, 4);
    assert_eq!(rest.len(), events.len() - 3);
    server.stop().await;
}

async fn runs_are_listed_newest_first_in_pages(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", 1_000_000).await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let (status, _, run) = post_run(
            &server.base,
            &key,
            &script(&format!("echo {i}"), 1_000),
            None,
        )
        .await;
        assert_eq!(status, 201);
        ids.push(run["id"].as_str().unwrap().to_string());
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    let (status, page) = get_json(&server.base, &key, "/v1/runs?limit=2").await;
    assert_eq!(status, 200);
    let got: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(got, [ids[4].as_str(), ids[3].as_str()]);
    assert_eq!(page["has_more"], true);
    let (_, next) = get_json(
        &server.base,
        &key,
        &format!("/v1/runs?limit=10&before={}", ids[3]),
    )
    .await;
    let got: Vec<&str> = next["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(got, [ids[2].as_str(), ids[1].as_str(), ids[0].as_str()]);
    assert_eq!(next["has_more"], false);
    for bad in [
        "/v1/runs?limit=0",
        "/v1/runs?limit=101",
        "/v1/runs?limit=x",
        "/v1/runs?before=run_nope",
    ] {
        let (status, problem) = get_json(&server.base, &key, bad).await;
        assert_eq!(status, 422, "{bad}: {problem}");
    }
    server.stop().await;
}

async fn cancel_ends_a_run_cancelled_and_settled(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", 1_000_000).await;
    let (_, _, run) = post_run(&server.base, &key, &script("sleep 30", 50_000), None).await;
    let id = run["id"].as_str().unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let response = client()
        .post(format!("{}/v1/runs/{id}/cancel", server.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 202);
    let run = wait_run(&server.base, &key, id).await;
    assert_eq!(run["status"], "cancelled");
    assert_eq!(run["error"]["code"], "cancelled");
    let cost = &run["cost"];
    assert_eq!(
        cost["charged_micros"].as_i64().unwrap() + cost["released_micros"].as_i64().unwrap(),
        50_000
    );
    // Cancelling again: the run has ended.
    let response = client()
        .post(format!("{}/v1/runs/{id}/cancel", server.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 409);
    server.stop().await;
}

async fn auth_and_tenancy_errors(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", 1_000_000).await;
    let other = server.org("globex", 1_000_000).await;
    let body = script("echo hi", 1_000);
    for auth in [
        None,
        Some("Bearer eph_wrong"),
        Some("Basic abc"),
        Some("Bearer "),
    ] {
        let mut request = client()
            .post(format!("{}/v1/runs", server.base))
            .json(&body);
        if let Some(auth) = auth {
            request = request.header("authorization", auth);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), 401, "{auth:?}");
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json"
        );
        let problem: Value = response.json().await.unwrap();
        assert_eq!(problem["type"], "/problems/unauthorized");
        assert_eq!(problem["status"], 401);
    }
    let (_, _, run) = post_run(&server.base, &key, &body, None).await;
    let id = run["id"].as_str().unwrap();
    for path in [
        format!("/v1/runs/{id}"),
        format!("/v1/runs/{id}/events"),
        "/v1/runs/run_0000".into(),
    ] {
        let (status, problem) = get_json(&server.base, &other, &path).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(problem["type"], "/problems/not-found");
    }
    let response = client()
        .post(format!("{}/v1/runs/{id}/cancel", server.base))
        .bearer_auth(&other)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 404);
    let (status, list) = get_json(&server.base, &other, "/v1/runs").await;
    assert_eq!((status, list["data"].as_array().unwrap().len()), (200, 0));
    server.stop().await;
}

async fn validation_errors_name_the_field(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", 1_000_000).await;
    let cases: Vec<(Value, u16, &str)> = vec![
        (
            json!({"prompt": "x", "max_cost_micros": 5, "colour": "red"}),
            400,
            "colour",
        ),
        (json!({"prompt": 5, "max_cost_micros": 5}), 400, "prompt"),
        (json!({"max_cost_micros": 5}), 400, "prompt"),
        (json!({"prompt": "x"}), 400, "max_cost_micros"),
        (
            json!({"prompt": "x", "max_cost_micros": 1.5}),
            400,
            "max_cost_micros",
        ),
        (
            json!({"prompt": "x", "max_cost_micros": 5, "shell": "yes"}),
            400,
            "shell",
        ),
        (json!({"prompt": "", "max_cost_micros": 5}), 422, "prompt"),
        (
            json!({"prompt": "x".repeat(100_001), "max_cost_micros": 5}),
            422,
            "prompt",
        ),
        (
            json!({"prompt": "x", "max_cost_micros": 0}),
            422,
            "max_cost_micros",
        ),
        (
            json!({"prompt": "x", "max_cost_micros": 1_000_001}),
            422,
            "max_cost_micros",
        ),
        (
            json!({"prompt": "x", "max_cost_micros": 5, "timeout_seconds": 0}),
            422,
            "timeout_seconds",
        ),
        (
            json!({"prompt": "x", "max_cost_micros": 5, "timeout_seconds": 901}),
            422,
            "timeout_seconds",
        ),
        (
            json!({"prompt": "x", "max_cost_micros": 5, "model": "acme/unknown-1"}),
            422,
            "model",
        ),
        (
            json!({"prompt": "x", "max_cost_micros": 5, "connections": ["github"]}),
            422,
            "connections[0]",
        ),
        (
            json!({"prompt": "x", "max_cost_micros": 5, "metadata": {"k": 1}}),
            400,
            "metadata.k",
        ),
        (
            json!({"prompt": "x", "max_cost_micros": 5, "files": [{"path": "../up", "content": ""}]}),
            422,
            "files[0].path",
        ),
    ];
    for (body, status, field) in cases {
        let (got, headers, problem) = post_run(&server.base, &key, &body, None).await;
        assert_eq!(got, status, "{problem}");
        assert_eq!(headers["content-type"], "application/problem+json");
        let fields: Vec<&str> = problem["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["field"].as_str().unwrap())
            .collect();
        assert!(fields.contains(&field), "{field} not in {problem}");
        assert!(problem["detail"].as_str().unwrap().contains(field));
    }
    let raw = |body: &'static str| {
        client()
            .post(format!("{}/v1/runs", server.base))
            .bearer_auth(&key)
            .body(body)
            .send()
    };
    for body in ["{", "[]", "\"x\"", ""] {
        let response = raw(body).await.unwrap();
        assert_eq!(response.status().as_u16(), 400, "{body}");
    }
    let huge = json!({"prompt": "x".repeat(1_100_000), "max_cost_micros": 5});
    let (status, _, problem) = post_run(&server.base, &key, &huge, None).await;
    assert_eq!(
        (status, problem["type"].as_str().unwrap()),
        (413, "/problems/payload-too-large")
    );
    // `files` may hold far more than 1 MiB (API.md: 10 MiB of files, 12 MiB
    // in all; finding G13), and the run sees every byte.
    let megabyte = "f".repeat(1 << 20);
    let files: Vec<Value> = (0..4)
        .map(|i| json!({"path": format!("big{i}.txt"), "content": megabyte}))
        .collect();
    let body = json!({"prompt": "cat big*.txt | wc -c", "model": "ephemeral/script",
        "max_cost_micros": 40_000, "files": files});
    let (status, _, run) = post_run(&server.base, &key, &body, None).await;
    assert_eq!(status, 201, "{run}");
    let run = wait_run(&server.base, &key, run["id"].as_str().unwrap()).await;
    assert!(run["output"].as_str().unwrap().contains("4194304"), "{run}");

    let (status, _, problem) = post_run(
        &server.base,
        &key,
        &script("echo", 5),
        Some(&"k".repeat(256)),
    )
    .await;
    assert_eq!(status, 400, "{problem}");
    server.stop().await;
}

async fn insufficient_balance_is_402(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("poor", 30_000).await;
    let (status, _, _) = post_run(&server.base, &key, &script("sleep 2", 20_000), None).await;
    assert_eq!(status, 201);
    // 20,000 of 30,000 is held by the first run.
    let (status, _, problem) = post_run(&server.base, &key, &script("echo", 20_000), None).await;
    assert_eq!(status, 402, "{problem}");
    assert_eq!(problem["type"], "/problems/insufficient-funds");
    server.stop().await;
}

async fn too_many_runs_is_429_with_retry_after(backend: Backend) {
    let server = TestServer::start_with(backend, |c| c.limits.concurrent_runs = 2).await;
    let key = server.org("busy", 1_000_000).await;
    for _ in 0..2 {
        let (status, _, _) = post_run(&server.base, &key, &script("sleep 3", 1_000), None).await;
        assert_eq!(status, 201);
    }
    let (status, headers, problem) =
        post_run(&server.base, &key, &script("echo", 1_000), None).await;
    assert_eq!(status, 429, "{problem}");
    assert!(
        headers["retry-after"]
            .to_str()
            .unwrap()
            .parse::<u64>()
            .unwrap()
            >= 1
    );
    drop(server);

    let server = TestServer::start_with(backend, |c| c.limits.runs_per_minute = 3).await;
    let key = server.org("chatty", 1_000_000).await;
    for _ in 0..3 {
        assert_eq!(
            post_run(&server.base, &key, &script("echo", 1_000), None)
                .await
                .0,
            201
        );
    }
    let (status, headers, problem) =
        post_run(&server.base, &key, &script("echo", 1_000), None).await;
    assert_eq!(
        (status, problem["type"].as_str().unwrap()),
        (429, "/problems/rate-limited")
    );
    assert!(headers.contains_key("retry-after"));
    server.stop().await;
}

async fn service_endpoints_answer(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", 1_000_000).await;
    let (_, _, run) = post_run(&server.base, &key, &script("echo hi", 1_000), None).await;
    wait_run(&server.base, &key, run["id"].as_str().unwrap()).await;

    let health: Value = client()
        .get(format!("{}/v1/health", server.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "ok");
    let metrics = client()
        .get(format!("{}/metrics", server.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for name in [
        "ephemeral_runs_total{status=\"succeeded\"} 1",
        "ephemeral_run_duration_seconds_bucket",
        "ephemeral_stage_latency_seconds_bucket{le=",
        "ephemeral_active_runs",
        "ephemeral_sse_readers",
        "ephemeral_ledger_balance_micros",
    ] {
        assert!(metrics.contains(name), "{name} missing from\n{metrics}");
    }
    for slug in ephemeral_edge::api::PROBLEMS.iter().map(|p| p.0) {
        let response = client()
            .get(format!("{}/problems/{slug}", server.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200, "{slug}");
    }
    let response = client()
        .get(format!("{}/v1/nothing", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 404);
    let response = client()
        .delete(format!("{}/v1/runs", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 405);
    server.stop().await;
}
