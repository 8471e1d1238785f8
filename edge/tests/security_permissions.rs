//! Rule: a permission the request did not grant stops every executor.
//! `"shell": false` means no command runs and no sandbox starts (nor is
//! billed), whichever model drives the run — `ephemeral/script`,
//! `scripted/seed` or a provider's model (red team 2026-12, breach B1);
//! `"web": false` keeps `web_fetch` away, and a connection the request did
//! not name cannot be called.

mod support;

use ephemeral_edge::config::{Config, ConnectionConfig, ModelConfig};
use serde_json::{Value, json};
use support::fake_llm::{FakeLlm, Reply};
use support::upstream::Upstream;
use support::{Backend, TestServer, post_run, wait_run};

/// The broker and the permissions are the same at every isolation; the
/// in-process sandbox starts without compiling every program first.
fn in_process(c: &mut Config) {
    c.isolation = Some(ephemeral_edge::isolation::Isolation::Wasm);
}

const KEY_ENV: &str = "EPHEMERAL_SECURITY_PERMISSIONS_KEY";
const CONN_ENV: &str = "EPHEMERAL_SECURITY_PERMISSIONS_CONN";
/// What a command prints only if it ran: the request holds `$((6*7))`.
const RAN: &str = "ran-with-shell-42";
const COMMAND: &str = "echo ran-with-shell-$((6*7)); whoami";

fn fake_model(base_url: &str) -> ModelConfig {
    support::fake_llm::free_openai_model(base_url, KEY_ENV)
}

async fn server(llm: &FakeLlm, upstream: &Upstream) -> (TestServer, String) {
    // SAFETY: constant values, set before the server reads them.
    unsafe {
        std::env::set_var(KEY_ENV, "sk-permissions-test-0001");
        std::env::set_var(CONN_ENV, "tok-permissions-test-0002");
    }
    let url = llm.base_url.clone();
    let base = format!("{}/api", upstream.base);
    let server = TestServer::start_with(Backend::Sqlite, move |c: &mut Config| {
        in_process(c);
        c.models.insert("test/fake".into(), fake_model(&url));
        c.connections.insert(
            "echo".into(),
            ConnectionConfig {
                orgs: vec!["acme".into()],
                base_url: base,
                credential_env: Some(CONN_ENV.into()),
                auth_header: "Authorization".into(),
                methods: vec!["GET".into()],
                paths: vec!["/issues/*".into()],
            },
        );
    })
    .await;
    let key = server.org("acme", 10_000_000).await;
    (server, key)
}

fn kinds(run: &Value) -> Vec<String> {
    run["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

async fn run(server: &TestServer, key: &str, body: Value) -> Value {
    let (status, _, run) = post_run(&server.base, key, &body, None).await;
    assert_eq!(status, 201, "{run}");
    wait_run(&server.base, key, run["id"].as_str().unwrap()).await
}

/// No command ran, no sandbox was started or billed.
fn assert_no_shell(run: &Value, what: &str) {
    let kinds = kinds(run);
    for kind in [
        "shell.command",
        "shell.output",
        "shell.exit",
        "vm.ready",
        "vm.destroyed",
    ] {
        assert!(
            !kinds.iter().any(|k| k == kind),
            "{what}: {kind} with the shell off: {kinds:?}"
        );
    }
    assert!(
        !run.to_string().contains(RAN),
        "{what}: a command ran: {run}"
    );
    assert_eq!(run["permissions"]["shell"], false, "{what}");
    assert_eq!(run["isolation"], "none", "{what}: no sandbox: {run}");
    assert_eq!(
        run["cost"]["compute_micros"], 0,
        "{what}: no sandbox is billed: {run}"
    );
    assert_eq!(kinds.last().map(String::as_str), Some("worker.destroyed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shell_off_stops_every_executor() {
    let llm = FakeLlm::start(vec![
        Reply::Tools(vec![("shell", json!({"command": COMMAND}))], (10, 5)),
        Reply::Answer("done".into(), (10, 5)),
    ])
    .await;
    let upstream = Upstream::start().await;
    let (server, key) = server(&llm, &upstream).await;

    // The script executor: refuses outright.
    let script = run(
        &server,
        &key,
        json!({"prompt": COMMAND, "model": "ephemeral/script", "shell": false, "max_cost_micros": 1_000}),
    )
    .await;
    assert_no_shell(&script, "ephemeral/script");
    assert_eq!(script["status"], "failed", "{script}");
    assert_eq!(script["error"]["code"], "shell_disabled", "{script}");

    // The scripted model: its shell calls are refused.
    let seed = run(
        &server,
        &key,
        json!({"prompt": "the seed prompt", "model": "scripted/seed", "shell": false, "max_cost_micros": 100_000}),
    )
    .await;
    assert_no_shell(&seed, "scripted/seed");

    // A provider's model: no shell tool offered, and a call to it refused.
    let agent = run(
        &server,
        &key,
        json!({"prompt": "run it", "model": "test/fake", "shell": false, "max_cost_micros": 1_000}),
    )
    .await;
    assert_no_shell(&agent, "test/fake");
    assert_eq!(agent["status"], "succeeded", "{agent}");
    let seen = llm.seen();
    assert!(
        seen[0].body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|t| t["function"]["name"] != "shell"),
        "no shell tool is offered: {}",
        seen[0].body["tools"]
    );
    let answer_to_call = seen[1].body["messages"].to_string();
    assert!(
        answer_to_call.contains("not allowed"),
        "the model is told: {answer_to_call}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn shell_on_still_runs_in_a_sandbox() {
    let llm = FakeLlm::start(vec![]).await;
    let upstream = Upstream::start().await;
    let (server, key) = server(&llm, &upstream).await;
    let run = run(
        &server,
        &key,
        json!({"prompt": COMMAND, "model": "ephemeral/script", "max_cost_micros": 100_000}),
    )
    .await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert!(run["output"].as_str().unwrap().contains(RAN), "{run}");
    assert!(kinds(&run).iter().any(|k| k == "vm.ready"));
    assert_ne!(run["isolation"], "none");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn web_off_and_unnamed_connections_are_refused() {
    let llm = FakeLlm::start(vec![
        Reply::Tools(
            vec![
                ("web_fetch", json!({"url": "http://example.com/"})),
                ("conn_echo", json!({"method": "GET", "path": "/issues/1"})),
            ],
            (10, 5),
        ),
        Reply::EchoTools,
    ])
    .await;
    let upstream = Upstream::start().await;
    let (server, key) = server(&llm, &upstream).await;
    let run = run(
        &server,
        &key,
        json!({"prompt": "fetch", "model": "test/fake", "shell": false, "web": false, "max_cost_micros": 10_000}),
    )
    .await;
    assert_eq!(run["status"], "succeeded", "{run}");
    let kinds = kinds(&run);
    assert!(
        !kinds.iter().any(|k| k.starts_with("web.")),
        "no web event: {kinds:?}"
    );
    let output = run["output"].as_str().unwrap();
    assert!(output.contains("web_fetch tool is not allowed"), "{output}");
    assert!(output.contains("no connection behind"), "{output}");
    assert!(upstream.hits().is_empty(), "{:?}", upstream.hits());
    assert_eq!(run["cost"]["web_micros"], 0, "{run}");
    server.stop().await;
}
