//! The agent against a real local HTTP server speaking the OpenAI wire
//! format (the one allowed fake): the seed flow end to end through the API
//! and the sandbox, parallel tool calls, budgets (an over-reporting
//! provider, a budget too small for one call), deadlines (in a slow model
//! call, in a long command), outages and retries, the web tool's absence
//! and its SSRF refusals, and no secret anywhere it must not be.

mod support;

use std::time::{Duration, Instant};

use ephemeral_edge::config::{Config, ModelConfig};
use serde_json::{Value, json};
use support::fake_llm::{FakeLlm, Reply};
use support::{Backend, TestServer, get_json, post_run, wait_run};

const KEY_ENV: &str = "EPHEMERAL_TEST_PROVIDER_KEY";
const PROVIDER_KEY: &str = "sk-test-never-in-the-sandbox-5f1c";

fn fake_model(base_url: &str) -> ModelConfig {
    ModelConfig {
        provider: "openai".into(),
        upstream: "fake-1".into(),
        base_url: Some(base_url.into()),
        api_key_env: Some(KEY_ENV.into()),
        input_micros_per_million: 50_000,
        output_micros_per_million: 200_000,
        context_window: 128_000,
        max_output_tokens: 4_096,
    }
}

async fn server_with(llm: &FakeLlm) -> (TestServer, String) {
    // SAFETY: every test sets the same value; nothing reads it concurrently
    // in a way that could observe a torn write.
    unsafe { std::env::set_var(KEY_ENV, PROVIDER_KEY) };
    let url = llm.base_url.clone();
    let server = TestServer::start_with(Backend::Sqlite, move |c: &mut Config| {
        c.models.insert("test/fake".into(), fake_model(&url));
        c.default_model = "test/fake".into();
    })
    .await;
    let key = server.org("acme", 10_000_000).await;
    (server, key)
}

fn shell(command: &str) -> (&'static str, Value) {
    ("shell", json!({"command": command}))
}

fn kinds(run: &Value) -> Vec<String> {
    run["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

fn request(prompt: &str, budget: i64) -> Value {
    json!({"prompt": prompt, "max_cost_micros": budget, "timeout_seconds": 60})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_seed_flow_runs_end_to_end_through_a_provider() {
    let llm = FakeLlm::start(vec![
        Reply::Tools(vec![shell("pwd; whoami"), shell("command -v curl && curl -sS -m 8 https://example.com")], (1_200, 60)),
        Reply::Tools(vec![shell("python3 -c 'print(*[p for p in range(2, 50) if all(p % d for d in range(2, p))][:15])'"), shell("printf 'sandbox proof\\n' > /tmp/proof.txt && ls -l /tmp/proof.txt")], (1_900, 120)),
        Reply::Answer("- primes ok\nThe network call did not succeed.".into(), (2_600, 334)),
    ])
    .await;
    let (server, key) = server_with(&llm).await;
    let (status, _, run) = post_run(
        &server.base,
        &key,
        &request("the seed prompt", 40_000),
        Some("seed-1"),
    )
    .await;
    assert_eq!(status, 201, "{run}");
    let run = wait_run(&server.base, &key, run["id"].as_str().unwrap()).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(
        run["output"],
        "- primes ok\nThe network call did not succeed."
    );
    assert_eq!(run["usage"]["model_calls"], 3);
    assert_eq!(run["usage"]["input_tokens"], 1_200 + 1_900 + 2_600);
    assert_eq!(
        run["usage"]["total_tokens"],
        1_200 + 1_900 + 2_600 + 60 + 120 + 334
    );
    // 5,700 input tokens at $0.05/M and 514 output at $0.20/M, rounded up per call.
    let model_micros = run["cost"]["model_micros"].as_i64().unwrap();
    assert!((385..=400).contains(&model_micros), "{model_micros}");
    let k = kinds(&run);
    let pos = |t: &str| k.iter().position(|x| x == t).unwrap();
    assert!(pos("worker.started") < pos("model.call") && pos("model.call") < pos("shell.command"));
    assert_eq!(k.iter().filter(|x| *x == "model.call").count(), 3);
    assert_eq!(k.last().unwrap(), "worker.destroyed");
    // Output arrives in chunks cut anywhere: join them before looking.
    let text: String = run["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "shell.output")
        .map(|e| e["data"]["data"].as_str().unwrap().to_string())
        .collect();
    for expected in [
        "worker\n",
        "Could not resolve host: example.com",
        "2 3 5 7 11 13 17 19 23 29 31 37 41 43 47",
        "worker worker 14",
    ] {
        assert!(
            text.contains(expected),
            "{expected} missing from the timeline: {text}"
        );
    }
    // What the provider saw: streaming with usage, the key, the shell tool
    // only (web is off), and the tool results in call order.
    let seen = llm.seen();
    assert_eq!(seen.len(), 3);
    assert_eq!(
        seen[0].authorization.as_deref(),
        Some(format!("Bearer {PROVIDER_KEY}").as_str())
    );
    assert_eq!(seen[0].body["stream"], true);
    assert_eq!(seen[0].body["stream_options"]["include_usage"], true);
    assert_eq!(seen[0].body["model"], "fake-1");
    let tools: Vec<&str> = seen[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["shell"]);
    let messages = seen[1].body["messages"].as_array().unwrap();
    let tool_ids: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(tool_ids, ["call_fake_0", "call_fake_1"]);
    assert!(
        messages
            .iter()
            .any(|m| m["content"].as_str().is_some_and(|c| c.contains("worker")))
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_tool_calls_run_in_order() {
    let llm = FakeLlm::start(vec![
        Reply::Tools(
            vec![
                shell("echo one > f"),
                shell("echo two >> f"),
                shell("cat f"),
            ],
            (100, 30),
        ),
        Reply::Answer("done".into(), (200, 5)),
    ])
    .await;
    let (server, key) = server_with(&llm).await;
    let (_, _, run) = post_run(&server.base, &key, &request("go", 40_000), None).await;
    let run = wait_run(&server.base, &key, run["id"].as_str().unwrap()).await;
    let commands: Vec<&str> = run["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "shell.command")
        .map(|e| e["data"]["command"].as_str().unwrap())
        .collect();
    assert_eq!(commands, ["echo one > f", "echo two >> f", "cat f"]);
    let out: String = run["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "shell.output")
        .map(|e| e["data"]["data"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(out, "one\ntwo\n");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_over_reporting_provider_is_charged_at_most_the_budget() {
    let llm = FakeLlm::start(vec![Reply::Answer("hi".into(), (900_000_000, 900_000_000))]).await;
    let (server, key) = server_with(&llm).await;
    let (_, _, run) = post_run(&server.base, &key, &request("go", 5_000), None).await;
    let run = wait_run(&server.base, &key, run["id"].as_str().unwrap()).await;
    let cost = &run["cost"];
    assert_eq!(cost["charged_micros"], 5_000, "{run}");
    assert_eq!(cost["released_micros"], 0);
    let parts: i64 = ["model_micros", "web_micros", "compute_micros"]
        .iter()
        .map(|k| cost[k].as_i64().unwrap())
        .sum();
    assert_eq!(parts, 5_000);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_budget_too_small_for_one_call_ends_budget_exceeded() {
    let llm = FakeLlm::start(vec![]).await;
    let (server, key) = server_with(&llm).await;
    let (_, _, run) = post_run(&server.base, &key, &request("go", 10), None).await;
    let run = wait_run(&server.base, &key, run["id"].as_str().unwrap()).await;
    assert_eq!(run["status"], "budget_exceeded", "{run}");
    assert_eq!(run["usage"]["model_calls"], 0);
    assert!(
        llm.seen().is_empty(),
        "no call is made that could not be paid for"
    );
    assert!(run["cost"]["charged_micros"].as_i64().unwrap() <= 10);
    // A budget with room for a shrunken call: max_tokens is lowered to fit.
    let llm = FakeLlm::start(vec![Reply::Answer("short".into(), (500, 10))]).await;
    let (server2, key2) = server_with(&llm).await;
    let (_, _, run) = post_run(&server2.base, &key2, &request("go", 200), None).await;
    wait_run(&server2.base, &key2, run["id"].as_str().unwrap()).await;
    let max_tokens = llm.seen()[0].body["max_tokens"].as_i64().unwrap();
    assert!((32..4_096).contains(&max_tokens), "{max_tokens}");
    server.stop().await;
    server2.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_deadline_ends_a_slow_model_call_and_a_long_command() {
    let llm = FakeLlm::start(vec![Reply::Slow(
        Duration::from_secs(20),
        Box::new(Reply::Answer("late".into(), (1, 1))),
    )])
    .await;
    let (server, key) = server_with(&llm).await;
    let started = Instant::now();
    let (_, _, run) = post_run(
        &server.base,
        &key,
        &json!({"prompt": "go", "max_cost_micros": 40_000, "timeout_seconds": 2}),
        None,
    )
    .await;
    let run = wait_run(&server.base, &key, run["id"].as_str().unwrap()).await;
    assert_eq!(run["status"], "timed_out");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    let cost = &run["cost"];
    assert_eq!(
        cost["charged_micros"].as_i64().unwrap() + cost["released_micros"].as_i64().unwrap(),
        40_000
    );

    let llm = FakeLlm::start(vec![Reply::Tools(vec![shell("sleep 30")], (10, 10))]).await;
    let (server2, key2) = server_with(&llm).await;
    let started = Instant::now();
    let (_, _, run) = post_run(
        &server2.base,
        &key2,
        &json!({"prompt": "go", "max_cost_micros": 40_000, "timeout_seconds": 2}),
        None,
    )
    .await;
    let run = wait_run(&server2.base, &key2, run["id"].as_str().unwrap()).await;
    assert_eq!(run["status"], "timed_out");
    assert!(started.elapsed() < Duration::from_secs(8));
    server.stop().await;
    server2.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn outages_fail_the_run_and_429s_are_retried() {
    let llm = FakeLlm::start(vec![Reply::Status(500, None); 8]).await;
    let (server, key) = server_with(&llm).await;
    let (_, _, run) = post_run(&server.base, &key, &request("go", 40_000), None).await;
    let run = wait_run(&server.base, &key, run["id"].as_str().unwrap()).await;
    assert_eq!(run["status"], "failed");
    assert_eq!(run["error"]["code"], "provider_error");
    assert!(run["error"]["message"].as_str().unwrap().contains("500"));
    assert!(!run.to_string().contains(PROVIDER_KEY));
    assert_eq!(llm.seen().len(), 4, "one try and three retries");

    let llm = FakeLlm::start(vec![
        Reply::Status(429, Some(1)),
        Reply::Answer("after a retry".into(), (5, 5)),
    ])
    .await;
    let (server2, key2) = server_with(&llm).await;
    let (_, _, run) = post_run(&server2.base, &key2, &request("go", 40_000), None).await;
    let run = wait_run(&server2.base, &key2, run["id"].as_str().unwrap()).await;
    assert_eq!(run["status"], "succeeded");
    assert_eq!(run["output"], "after a retry");
    server.stop().await;
    server2.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn web_tools_follow_permissions_and_refuse_private_addresses() {
    let targets = [
        "http://127.0.0.1:9/",
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://localhost/",
    ];
    let calls: Vec<(&'static str, Value)> = targets
        .iter()
        .map(|u| ("web_fetch", json!({"url": u})))
        .collect();
    let llm = FakeLlm::start(vec![
        Reply::Tools(calls, (10, 10)),
        Reply::Answer("ok".into(), (10, 10)),
    ])
    .await;
    let (server, key) = server_with(&llm).await;
    let body = json!({"prompt": "fetch", "max_cost_micros": 40_000, "web": true});
    let (_, _, run) = post_run(&server.base, &key, &body, None).await;
    let run = wait_run(&server.base, &key, run["id"].as_str().unwrap()).await;
    let seen = llm.seen();
    let tools: Vec<&str> = seen[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["shell", "web_fetch"]);
    let responses: Vec<&Value> = run["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "web.response")
        .collect();
    assert_eq!(responses.len(), targets.len());
    for r in responses {
        assert!(
            r["data"]["error"].as_str().unwrap().contains("refused"),
            "{r}"
        );
    }
    assert_eq!(run["cost"]["web_micros"].as_i64().unwrap(), 4 * 1_000);

    // With web off the tool is absent, and a model that calls it anyway is refused.
    let llm = FakeLlm::start(vec![
        Reply::Tools(
            vec![("web_fetch", json!({"url": "http://example.com/"}))],
            (10, 10),
        ),
        Reply::Answer("ok".into(), (10, 10)),
    ])
    .await;
    let (server2, key2) = server_with(&llm).await;
    let (_, _, run) = post_run(&server2.base, &key2, &request("fetch", 40_000), None).await;
    let run = wait_run(&server2.base, &key2, run["id"].as_str().unwrap()).await;
    assert!(!kinds(&run).iter().any(|k| k.starts_with("web.")));
    let seen = llm.seen();
    assert!(
        seen[0].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["function"]["name"] != "web_fetch")
    );
    let tool_reply = seen[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert!(
        tool_reply["content"]
            .as_str()
            .unwrap()
            .contains("not allowed")
    );
    server.stop().await;
    server2.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_secret_reaches_the_sandbox_the_store_or_the_timeline() {
    let hunt = format!(
        "env; cat /proc/self/environ 2>&1; k=sk-test-never; grep -rl \"$k-in-the-sandbox\" / 2>/dev/null; echo searched; printenv {KEY_ENV}; echo ${KEY_ENV}"
    );
    let llm = FakeLlm::start(vec![
        Reply::Tools(vec![shell(&hunt)], (10, 10)),
        Reply::Answer("nothing found".into(), (10, 10)),
    ])
    .await;
    let (server, key) = server_with(&llm).await;
    let (_, _, run) = post_run(
        &server.base,
        &key,
        &request("look for secrets", 40_000),
        None,
    )
    .await;
    let id = run["id"].as_str().unwrap().to_string();
    let run = wait_run(&server.base, &key, &id).await;
    let text = run.to_string();
    assert!(text.contains("searched"), "the hunt ran: {text}");
    assert!(text.contains("USER=worker"));
    assert!(
        !text.contains(PROVIDER_KEY),
        "the provider key leaked: {text}"
    );
    assert!(!text.contains(&key), "the member key leaked");
    let (_, list) = get_json(&server.base, &key, "/v1/runs").await;
    assert!(!list.to_string().contains(PROVIDER_KEY));
    let data = server.stop().await;
    for entry in std::fs::read_dir(data.path()).unwrap().flatten() {
        let bytes = std::fs::read(entry.path()).unwrap_or_default();
        for secret in [PROVIDER_KEY.as_bytes(), key.as_bytes()] {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret),
                "secret on disk in {:?}",
                entry.path()
            );
        }
    }
}

const CONN_ENV: &str = "EPHEMERAL_TEST_CONNECTION_TOKEN";
const CONN_TOKEN: &str = "conn-token-never-on-the-timeline-77ab";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn connections_pass_only_their_allow_list_with_the_credential_attached() {
    use std::sync::{Arc, Mutex};
    // The organisation's service: records what reaches it.
    /// `(method, path and query, Authorization)` of each request that arrived.
    type Hit = (String, String, Option<String>);
    let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
    let record = hits.clone();
    let app = axum::Router::new().fallback(
        move |method: axum::http::Method, uri: axum::http::Uri, headers: axum::http::HeaderMap| {
            let record = record.clone();
            async move {
                let auth = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                record
                    .lock()
                    .unwrap()
                    .push((method.to_string(), uri.to_string(), auth));
                "{\"issue\": 42, \"title\": \"fix it\"}"
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let service = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let call = |method: &str, path: &str| ("conn_tracker", json!({"method": method, "path": path}));
    let llm = FakeLlm::start(vec![
        Reply::Tools(
            vec![
                call("GET", "/issues/42"),
                call("POST", "/issues/42"),
                call("GET", "/admin/users"),
                call("GET", "/issues/../admin"),
            ],
            (10, 10),
        ),
        Reply::Answer("done".into(), (10, 10)),
    ])
    .await;
    // SAFETY: set once with a constant value before the server reads it.
    unsafe {
        std::env::set_var(KEY_ENV, PROVIDER_KEY);
        std::env::set_var(CONN_ENV, CONN_TOKEN);
    }
    let url = llm.base_url.clone();
    let server = TestServer::start_with(Backend::Sqlite, move |c: &mut Config| {
        c.models.insert("test/fake".into(), fake_model(&url));
        c.default_model = "test/fake".into();
        c.connections.insert(
            "tracker".into(),
            ephemeral_edge::config::ConnectionConfig {
                orgs: vec!["acme".into()],
                base_url: service,
                credential_env: Some(CONN_ENV.into()),
                auth_header: "Authorization".into(),
                methods: vec!["GET".into()],
                paths: vec!["/issues/*".into()],
            },
        );
    })
    .await;
    let key = server.org("acme", 10_000_000).await;
    let other = server.org("globex", 10_000_000).await;
    let body =
        json!({"prompt": "read issue 42", "max_cost_micros": 40_000, "connections": ["tracker"]});
    let (status, _, problem) = post_run(&server.base, &other, &body, None).await;
    assert_eq!(
        status, 422,
        "another organisation cannot name it: {problem}"
    );
    let (status, _, run) = post_run(&server.base, &key, &body, None).await;
    assert_eq!(status, 201, "{run}");
    let run = wait_run(&server.base, &key, run["id"].as_str().unwrap()).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    let responses: Vec<&Value> = run["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "web.response")
        .collect();
    assert_eq!(responses.len(), 4);
    assert_eq!(responses[0]["data"]["status"], 200);
    for refused in &responses[1..] {
        assert!(
            refused["data"]["error"]
                .as_str()
                .unwrap()
                .starts_with("refused"),
            "{refused}"
        );
    }
    let hits = hits.lock().unwrap().clone();
    assert_eq!(
        hits.len(),
        1,
        "only the allowed call reached the service: {hits:?}"
    );
    assert_eq!(hits[0].0, "GET");
    assert_eq!(hits[0].1, "/issues/42");
    assert_eq!(
        hits[0].2.as_deref(),
        Some(format!("Bearer {CONN_TOKEN}").as_str())
    );
    assert!(!run.to_string().contains(CONN_TOKEN));
    let seen = llm.seen();
    let tool_names: Vec<&str> = seen[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tool_names, ["shell", "conn_tracker"]);
    assert!(
        !seen[1].body.to_string().contains(CONN_TOKEN),
        "the model never sees the credential"
    );
    server.stop().await;
}
