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

    // Every documented operation answers something other than 404/405 on
    // its own path with its own method.
    for (path, item) in doc["paths"].as_object().unwrap() {
        let concrete = path.replace("{id}", &id).replace("{slug}", "not-found");
        for method in item.as_object().unwrap().keys() {
            let request = match method.as_str() {
                "get" => client().get(format!("{}{concrete}", server.base)),
                "post" => client()
                    .post(format!("{}{concrete}", server.base))
                    .json(&script("echo", 1_000)),
                other => panic!("undocumented method {other}"),
            };
            let status = request
                .bearer_auth(&key)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16();
            assert!(
                status != 404 && status != 405,
                "{method} {path} answered {status}"
            );
            let documented = item[method]["responses"].as_object().unwrap();
            assert!(
                documented.contains_key(&status.to_string()),
                "{method} {path} answered undocumented {status}"
            );
        }
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
    assert_eq!(request_fields.len(), 10, "API.md's ten request fields");

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
