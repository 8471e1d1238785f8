//! The OpenAPI document matches the server: served as checked in; every
//! documented operation is routed; every route is documented; the run
//! object carries exactly the documented required fields; every problem
//! status the server can answer is documented somewhere.

mod support;

use serde_json::Value;
use support::{Backend, TestServer, client, post_run, script, wait_run};

const CHECKED_IN: &str = include_str!("../src/api/openapi.json");

fn document() -> Value {
    serde_json::from_str(CHECKED_IN).expect("openapi.json is JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_document_describes_the_server() {
    let doc = document();
    assert_eq!(doc["openapi"], "3.1.0");
    let server = TestServer::start(Backend::Sqlite).await;
    let key = server.org("acme", 1_000_000).await;

    let served: Value = client()
        .get(format!("{}/v1/openapi.json", server.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(served, doc);

    let (_, _, run) = post_run(&server.base, &key, &script("echo hi", 1_000), None).await;
    let id = run["id"].as_str().unwrap().to_string();
    wait_run(&server.base, &key, &id).await;

    let (_, sbx) = support::create_sandbox(
        &server.base,
        &key,
        &serde_json::json!({"max_cost_micros": 100_000}),
    )
    .await;
    let sbx_id = sbx["id"].as_str().unwrap().to_string();
    let sample = ephemeral_edge::samples::publish(server.edge.store.as_ref(), &id, None)
        .await
        .unwrap();

    // Every documented operation answers something other than 404/405 on
    // its own path with its own method: writes first, deletes last, so a
    // file is there to read and a sandbox to end.
    let mut operations: Vec<(&String, &String, &Value)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .iter()
                .map(move |(m, op)| (path, m, op))
        })
        .collect();
    let rank = |method: &str| {
        ["put", "post", "get", "delete"]
            .iter()
            .position(|m| *m == method)
    };
    operations
        .sort_by_key(|(path, method, _)| (rank(method), path.contains("/files/"), path.len()));
    for (path, method, operation) in operations {
        let id = if path.starts_with("/v1/sandboxes") {
            &sbx_id
        } else if path.starts_with("/v1/samples") {
            &sample.id
        } else {
            &id
        };
        let concrete = path
            .replace("{id}", id)
            .replace("{slug}", "not-found")
            .replace("{path}", "seen.txt");
        let url = format!("{}{concrete}", server.base);
        let body = match path.as_str() {
            "/v1/sandboxes" => serde_json::json!({"max_cost_micros": 10_000}),
            "/v1/sandboxes/{id}/commands" => serde_json::json!({"command": "echo hi"}),
            _ => script("echo", 1_000),
        };
        let request = match method.as_str() {
            "get" => client().get(url),
            "post" => client().post(url).json(&body),
            "put" => client().put(url).body("seen"),
            "delete" => client().delete(url),
            other => panic!("undocumented method {other}"),
        };
        let status = request
            .bearer_auth(&key)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        // A run collected no `seen.txt`: its 404 is the file's, documented.
        let missing_run_file = path == "/v1/runs/{id}/files/{path}";
        assert!(
            (status != 404 || missing_run_file) && status != 405,
            "{method} {path} answered {status}"
        );
        let documented = operation["responses"].as_object().unwrap();
        assert!(
            documented.contains_key(&status.to_string()),
            "{method} {path} answered undocumented {status}"
        );
    }

    // The run object has every required field the schema lists, and no other.
    let run_schema = &doc["components"]["schemas"]["Run"];
    let required: Vec<&str> = run_schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let (_, run) = support::get_json(&server.base, &key, &format!("/v1/runs/{id}")).await;
    let mut keys: Vec<&str> = run
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "timeline")
        .collect();
    keys.sort();
    let mut want = required.clone();
    want.sort();
    assert_eq!(keys, want);
    let request_fields: Vec<&String> = doc["components"]["schemas"]["RunRequest"]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(
        request_fields.len(),
        11,
        "API.md's ten request fields and `outputs`"
    );

    // Every problem status appears among the documented responses.
    let statuses: std::collections::HashSet<String> = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|item| item.as_object().unwrap().values())
        .flat_map(|op| op["responses"].as_object().unwrap().keys().cloned())
        .collect();
    for (slug, status, _, _) in ephemeral_edge::api::PROBLEMS {
        if *slug == "internal" || *slug == "method-not-allowed" {
            continue;
        }
        assert!(
            statuses.contains(&status.to_string()),
            "{slug} ({status}) is documented nowhere"
        );
    }
    server.stop().await;
}
