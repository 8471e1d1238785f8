//! Rule: a connection's credential goes only to its base URL, only on its
//! allow-list, and never comes back. The red team's attempts (2026-12):
//! TAB, CR and LF inside `..` (breach B2), redirects to other hosts and
//! to paths off the list (B4), and an upstream that echoes the request's
//! headers, plainly or base64-encoded, to the model, the timeline and
//! into the sandbox (B3).

mod support;

use base64::Engine;
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

const KEY_ENV: &str = "EPHEMERAL_SECURITY_CONNECTIONS_KEY";
const PROVIDER_KEY: &str = "sk-FAKEMODEL-SECRET-1111";
const ECHO_ENV: &str = "EPHEMERAL_SECURITY_ECHO_TOKEN";
const ECHO_TOKEN: &str = "tok-ECHO-SECRET-2222";
const ECHOX_ENV: &str = "EPHEMERAL_SECURITY_ECHOX_TOKEN";
const ECHOX_TOKEN: &str = "tok-ECHOX-SECRET-3333";

fn fake_model(base_url: &str) -> ModelConfig {
    support::fake_llm::free_openai_model(base_url, KEY_ENV)
}

fn connection(base: &str, env: &str, header: &str, paths: &[&str]) -> ConnectionConfig {
    ConnectionConfig {
        orgs: vec!["acme".into()],
        base_url: format!("{base}/api"),
        credential_env: Some(env.into()),
        auth_header: header.into(),
        methods: vec!["GET".into()],
        paths: paths.iter().map(|p| p.to_string()).collect(),
    }
}

/// The red team's configuration: `echo` (Bearer) and `echox` (X-Api-Key)
/// on the same service, and `betaonly` for another organisation.
async fn server(llm: &FakeLlm, upstream: &Upstream) -> (TestServer, String) {
    // SAFETY: constant values, set before the server reads them.
    unsafe {
        std::env::set_var(KEY_ENV, PROVIDER_KEY);
        std::env::set_var(ECHO_ENV, ECHO_TOKEN);
        std::env::set_var(ECHOX_ENV, ECHOX_TOKEN);
    }
    let url = llm.base_url.clone();
    let base = upstream.base.clone();
    let server = TestServer::start_with(Backend::Sqlite, move |c: &mut Config| {
        in_process(c);
        c.models.insert("test/fake".into(), fake_model(&url));
        c.default_model = "test/fake".into();
        c.connections.insert(
            "echo".into(),
            connection(
                &base,
                ECHO_ENV,
                "Authorization",
                &["/issues/*", "/projects/*/issues", "/gists/**"],
            ),
        );
        c.connections.insert(
            "echox".into(),
            connection(&base, ECHOX_ENV, "X-Api-Key", &["/issues/*", "/gists/**"]),
        );
        let mut beta = connection(&base, ECHO_ENV, "Authorization", &["/**"]);
        beta.orgs = vec!["beta".into()];
        beta.base_url = format!("{base}/beta");
        c.connections.insert("betaonly".into(), beta);
    })
    .await;
    let key = server.org("acme", 10_000_000).await;
    (server, key)
}

fn call(conn: &'static str, path: &str) -> (&'static str, Value) {
    (conn, json!({"method": "GET", "path": path}))
}

async fn run(server: &TestServer, key: &str) -> Value {
    let body =
        json!({"prompt": "go", "max_cost_micros": 100_000, "connections": ["echo", "echox"]});
    let (status, _, run) = post_run(&server.base, key, &body, None).await;
    assert_eq!(status, 201, "{run}");
    wait_run(&server.base, key, run["id"].as_str().unwrap()).await
}

fn events<'a>(run: &'a Value, kind: &str) -> Vec<&'a Value> {
    run["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == kind)
        .map(|e| &e["data"])
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_allow_list_holds_against_control_characters_and_dot_segments() {
    let tricks = [
        "/gists/.\t./.\t./.\t./SECRET-ADMIN",
        "/gists/.\r./.\r./beta/x",
        "/gists/.\n./.\n./.\n./SECRET-LF",
        "/issues/.\t.",
        "/projects/.\t./issues",
        "/issues/%2e%2e",
        "/gists/a/..\\..\\..\\SECRET-BS",
        "/issues/1\r\nX-Injected: 1",
    ];
    let mut calls: Vec<(&'static str, Value)> =
        tricks.iter().map(|p| call("conn_echo", p)).collect();
    calls.push(("conn_echo", json!({"method": "GET\t", "path": "/issues/1"})));
    calls.push((
        "conn_echo",
        json!({"method": "GET /SECRET HTTP/1.1\r\n", "path": "/issues/1"}),
    ));
    calls.push(call("conn_echo", "/issues/1"));
    let llm = FakeLlm::start(vec![Reply::Tools(calls, (10, 5)), Reply::EchoTools]).await;
    let upstream = Upstream::start().await;
    let (server, key) = server(&llm, &upstream).await;
    let run = run(&server, &key).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    let hits = upstream.hits();
    assert_eq!(
        hits.iter().map(|h| h.target.as_str()).collect::<Vec<_>>(),
        ["/api/issues/1"],
        "only the plain call reached the service: {hits:?}"
    );
    let responses = events(&run, "web.response");
    assert_eq!(responses.len(), tricks.len() + 3);
    for refused in &responses[..tricks.len() + 2] {
        let error = refused["error"].as_str().unwrap_or_default();
        assert!(error.starts_with("refused"), "{refused}");
    }
    assert_eq!(responses[tricks.len() + 2]["status"], 200);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn connection_calls_do_not_follow_redirects() {
    let other = Upstream::start().await;
    let to_other = format!("/issues/redirect?to={}/internal-B", other.base);
    let to_v6 = format!(
        "/issues/redirect?to=http://[::1]:{}/v6&code=307",
        other.addr.port()
    );
    let llm = FakeLlm::start(vec![
        Reply::Tools(
            vec![
                call("conn_echox", &to_other),
                call("conn_echo", "/issues/redirect?to=/SECRET-viaredirect"),
                call("conn_echo", &to_v6),
                call("conn_echo", "/issues/redirect?to=/api/gists/ok&code=308"),
            ],
            (10, 5),
        ),
        Reply::EchoTools,
    ])
    .await;
    let upstream = Upstream::start().await;
    let (server, key) = server(&llm, &upstream).await;
    let run = run(&server, &key).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert!(
        other.hits().is_empty(),
        "nothing reached another host: {:?}",
        other.hits()
    );
    let hits = upstream.hits();
    assert_eq!(hits.len(), 4, "one request per call, no hop: {hits:?}");
    assert!(
        hits.iter()
            .all(|h| h.target.starts_with("/api/issues/redirect")),
        "{hits:?}"
    );
    let statuses: Vec<&Value> = events(&run, "web.response")
        .iter()
        .map(|e| &e["status"])
        .collect();
    assert_eq!(
        statuses,
        [&json!(302), &json!(302), &json!(307), &json!(308)]
    );
    let output = run["output"].as_str().unwrap();
    assert!(
        output.contains("redirect not followed") && output.contains("/SECRET-viaredirect"),
        "the model gets the 3xx and its Location: {output}"
    );
    server.stop().await;
}

/// The part of the base64 of `secret` that is the same wherever it sits
/// in an encoded text, for each of its three alignments.
fn base64_cores(secret: &str) -> Vec<String> {
    (0..3usize)
        .map(|offset| {
            let mut bytes = vec![b'x'; offset];
            bytes.extend_from_slice(secret.as_bytes());
            let text = base64::engine::general_purpose::STANDARD.encode(&bytes);
            text[(8 * offset).div_ceil(6)..8 * (offset + secret.len()) / 6].to_string()
        })
        .collect()
}

fn assert_clean(text: &str, what: &str) {
    for secret in [ECHO_TOKEN, ECHOX_TOKEN, PROVIDER_KEY] {
        assert!(!text.contains(secret), "{what} holds {secret}: {text}");
        for core in base64_cores(secret) {
            assert!(
                !text.contains(&core),
                "{what} holds {secret} in base64 ({core}): {text}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn credentials_reflected_by_an_upstream_are_scrubbed() {
    // The red team's step: decode what the model got into a file in the
    // sandbox (and the base64 body inside it), and look for a credential.
    let decode_and_look = "echo {{last_b64}} | base64 -d > leaked.txt; \
         tail -n +2 leaked.txt | base64 -d > inner.txt 2>/dev/null; \
         cat leaked.txt inner.txt | grep -c -e tok-ECHO -e tok-ECHOX; true";
    let llm = FakeLlm::start(vec![
        Reply::Tools(
            vec![
                call("conn_echo", "/issues/1"),
                call("conn_echox", "/issues/2"),
            ],
            (10, 5),
        ),
        Reply::Tools(vec![call("conn_echo", "/issues/3?enc=b64")], (10, 5)),
        Reply::ToolWithLast("shell", json!({"command": decode_and_look})),
        Reply::Tools(vec![call("conn_echo", "/issues/4")], (10, 5)),
        Reply::ToolWithLast("shell", json!({"command": decode_and_look})),
        Reply::EchoTools,
    ])
    .await;
    let upstream = Upstream::start().await;
    let (server, key) = server(&llm, &upstream).await;
    let run = run(&server, &key).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    // The upstream did get the credentials (so it did echo them) ...
    let hits = upstream.hits();
    assert_eq!(hits.len(), 4, "{hits:?}");
    assert_eq!(
        hits[0].header("authorization"),
        Some(format!("Bearer {ECHO_TOKEN}").as_str())
    );
    assert_eq!(hits[1].header("x-api-key"), Some(ECHOX_TOKEN));
    // ... and none came back: not to the model, not in the run's output,
    // not on the timeline (so not in the store), not in the sandbox.
    let output = run["output"].as_str().unwrap();
    assert!(output.contains("[redacted]"), "{output}");
    assert_clean(&run.to_string(), "the run and its timeline");
    for seen in llm.seen() {
        assert_clean(&seen.body["messages"].to_string(), "what the model got");
    }
    let found: Vec<String> = events(&run, "shell.output")
        .iter()
        .map(|e| e["data"].as_str().unwrap().trim().to_string())
        .collect();
    assert_eq!(found, ["0", "0"], "the sandbox never holds a credential");
    server.stop().await;
}
