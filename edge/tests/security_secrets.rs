//! Rule: a provider key never reaches the run's record, its timeline, the
//! model's sandbox or its output — even when the provider itself repeats
//! it: in an error message (red team 2026-12, breach B5; gateways and
//! self-hosted proxies do), in its answer, or in a tool call it makes.
//! Both for a catalogue model and for the default model pointed elsewhere
//! with `EPHEMERAL_MODEL_URL` / `EPHEMERAL_MODEL_KEY`.

mod support;

use ephemeral_edge::config::{Config, ModelConfig};
use serde_json::{Value, json};
use support::fake_llm::{FakeLlm, Reply};
use support::{Backend, TestServer, post_run, wait_run};

/// The broker and the permissions are the same at every isolation; the
/// in-process sandbox starts without compiling every program first.
fn in_process(c: &mut Config) {
    c.isolation = Some(ephemeral_edge::isolation::Isolation::Wasm);
}

const KEY_ENV: &str = "EPHEMERAL_SECURITY_SECRETS_KEY";
const PROVIDER_KEY: &str = "sk-FAKEMODEL-SECRET-1111";
const DEFAULT_KEY: &str = "sk-DEFAULTMODEL-SECRET-4444";

fn fake_model(base_url: &str) -> ModelConfig {
    support::fake_llm::free_openai_model(base_url, KEY_ENV)
}

async fn run(server: &TestServer, key: &str, model: Option<&str>) -> Value {
    let mut body = json!({"prompt": "go", "max_cost_micros": 100_000});
    if let Some(model) = model {
        body["model"] = json!(model);
    }
    let (status, _, run) = post_run(&server.base, key, &body, None).await;
    assert_eq!(status, 201, "{run}");
    wait_run(&server.base, key, run["id"].as_str().unwrap()).await
}

fn assert_clean(run: &Value, secret: &str) {
    let text = run.to_string();
    assert!(!text.contains(secret), "{secret} in {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_key_the_provider_echoes_is_scrubbed() {
    let llm = FakeLlm::start(vec![
        // An error that quotes the key (a 4xx: not retried).
        Reply::EchoAuth(Some(401)),
        // An answer that quotes it.
        Reply::EchoAuth(None),
        // A tool call that carries it into the sandbox, then an answer.
        Reply::EchoAuthInShell,
        Reply::EchoTools,
    ])
    .await;
    // SAFETY: a constant value, set before the server reads it.
    unsafe { std::env::set_var(KEY_ENV, PROVIDER_KEY) };
    let url = llm.base_url.clone();
    let server = TestServer::start_with(Backend::Sqlite, move |c: &mut Config| {
        in_process(c);
        c.models.insert("test/fake".into(), fake_model(&url));
    })
    .await;
    let key = server.org("acme", 10_000_000).await;

    let failed = run(&server, &key, Some("test/fake")).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("401") && message.contains("[redacted]"),
        "the error says what happened, without the key: {message}"
    );
    assert_clean(&failed, PROVIDER_KEY);

    let answered = run(&server, &key, Some("test/fake")).await;
    assert_eq!(answered["status"], "succeeded", "{answered}");
    assert_clean(&answered, PROVIDER_KEY);
    assert!(answered["output"].as_str().unwrap().contains("[redacted]"));

    let shelled = run(&server, &key, Some("test/fake")).await;
    assert_eq!(shelled["status"], "succeeded", "{shelled}");
    assert_clean(&shelled, PROVIDER_KEY);
    let commands: Vec<&Value> = shelled["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "shell.command")
        .collect();
    assert_eq!(commands.len(), 1, "{shelled}");
    // The model saw only what the sandbox printed: no key there either.
    for seen in llm.seen() {
        assert!(!seen.body["messages"].to_string().contains(PROVIDER_KEY));
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_default_models_key_is_scrubbed_too() {
    let llm = FakeLlm::start(vec![Reply::EchoAuth(Some(403)), Reply::EchoAuth(None)]).await;
    // SAFETY: only this test of this binary reads these variables.
    unsafe {
        std::env::set_var("EPHEMERAL_MODEL_URL", &llm.base_url);
        std::env::set_var("EPHEMERAL_MODEL_KEY", DEFAULT_KEY);
    }
    let server = TestServer::start_with(Backend::Sqlite, |c: &mut Config| {
        in_process(c);
        c.default_model = "openai/gpt-4o-mini".into();
    })
    .await;
    let key = server.org("acme", 10_000_000).await;
    let failed = run(&server, &key, None).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("[redacted]"),
        "{failed}"
    );
    assert_clean(&failed, DEFAULT_KEY);
    let answered = run(&server, &key, None).await;
    assert_clean(&answered, DEFAULT_KEY);
    assert_eq!(
        llm.seen()[0].authorization.as_deref(),
        Some(format!("Bearer {DEFAULT_KEY}").as_str()),
        "the key was sent (so the fake did echo it)"
    );
    server.stop().await;
}
