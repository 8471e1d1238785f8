//! What a command wrote to stdout and stderr keeps its order end to end:
//! shell → runtime → worker protocol → the timeline's `shell.output`
//! events → the text the model reads. One ordered sequence, never two
//! buffers, in every isolation this host offers.

mod support;

use ephemeral_edge::config::Config;
use ephemeral_edge::isolation::Isolation;
use serde_json::{Value, json};
use support::fake_llm::{FakeLlm, Reply};
use support::{Backend, TestServer, post_run, script, wait_run};

const COMMAND: &str = "echo out; echo err >&2; echo out2; ls /nope; printf 'a'; printf 'b' >&2";
const MERGED: &str = "out\nerr\nout2\nls: cannot access '/nope': No such file or directory\nab";

/// `(stream, data)` of every `shell.output` event, neighbours on the same
/// stream joined (the server may merge or split chunks, never reorder).
fn output_events(run: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for e in run["timeline"].as_array().unwrap() {
        if e["type"] != "shell.output" {
            continue;
        }
        let stream = e["data"]["stream"].as_str().unwrap().to_string();
        let data = e["data"]["data"].as_str().unwrap();
        match out.last_mut() {
            Some((s, d)) if *s == stream => d.push_str(data),
            _ => out.push((stream, data.to_string())),
        }
    }
    out
}

fn expected() -> Vec<(String, String)> {
    [
        ("stdout", "out\n"),
        ("stderr", "err\n"),
        ("stdout", "out2\n"),
        (
            "stderr",
            "ls: cannot access '/nope': No such file or directory\n",
        ),
        ("stdout", "a"),
        ("stderr", "b"),
    ]
    .iter()
    .map(|(s, d)| (s.to_string(), d.to_string()))
    .collect()
}

async fn timeline_keeps_write_order(isolation: Isolation) {
    let server = TestServer::start_with(Backend::Sqlite, move |c: &mut Config| {
        c.isolation = Some(isolation)
    })
    .await;
    let key = server.org("acme", 1_000_000).await;
    let (status, _, run) = post_run(&server.base, &key, &script(COMMAND, 50_000), None).await;
    assert_eq!(status, 201, "{run}");
    let run = wait_run(&server.base, &key, run["id"].as_str().unwrap()).await;
    assert_eq!(output_events(&run), expected(), "{run:#}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn timeline_keeps_write_order_in_a_jailed_worker() {
    timeline_keeps_write_order(Isolation::Jail).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn timeline_keeps_write_order_in_process() {
    timeline_keeps_write_order(Isolation::Wasm).await;
}

const KEY_ENV: &str = "EPHEMERAL_TEST_ORDER_PROVIDER_KEY";

#[tokio::test(flavor = "multi_thread")]
async fn the_model_reads_one_sequence_in_write_order() {
    let llm = FakeLlm::start(vec![
        Reply::Tools(vec![("shell", json!({ "command": COMMAND }))], (100, 10)),
        Reply::Answer("done".into(), (100, 10)),
    ])
    .await;
    // SAFETY: this test binary's only writer of this variable, set before
    // the server that reads it starts.
    unsafe { std::env::set_var(KEY_ENV, "sk-order-test") };
    let url = llm.base_url.clone();
    let server = TestServer::start_with(Backend::Sqlite, move |c: &mut Config| {
        c.models.insert(
            "test/fake".into(),
            support::fake_llm::free_openai_model(&url, KEY_ENV),
        );
        c.default_model = "test/fake".into();
    })
    .await;
    let key = server.org("acme", 1_000_000).await;
    let body = json!({"prompt": "show me the order", "max_cost_micros": 100_000});
    let (status, _, run) = post_run(&server.base, &key, &body, None).await;
    assert_eq!(status, 201, "{run}");
    let run = wait_run(&server.base, &key, run["id"].as_str().unwrap()).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    let seen = llm.seen();
    let tool_text = seen[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .expect("a tool message")
        .to_string();
    assert!(tool_text.contains(MERGED), "{tool_text}");
    server.stop().await;
}
