//! Rule: the broker's calls go where they were checked to go. Proxy
//! variables in the server's environment (`HTTP_PROXY`, `HTTPS_PROXY`,
//! `ALL_PROXY`) are ignored: a proxy resolves the host name again, which
//! undoes `web_fetch`'s address pinning (DNS rebinding through the proxy,
//! red team 2026-12, G4), and it would see every credential. The broker's
//! clients (provider, connections, `web_fetch`) are built by one function;
//! this binary sets the variables for the whole process, so it is alone.

mod support;

use ephemeral_edge::config::{Config, ConnectionConfig, ModelConfig};
use serde_json::json;
use support::fake_llm::{FakeLlm, Reply};
use support::upstream::Upstream;
use support::{Backend, TestServer, post_run, wait_run};

/// The broker and the permissions are the same at every isolation; the
/// in-process sandbox starts without compiling every program first.
fn in_process(c: &mut Config) {
    c.isolation = Some(ephemeral_edge::isolation::Isolation::Wasm);
}

const KEY_ENV: &str = "EPHEMERAL_SECURITY_PROXY_KEY";
const CONN_ENV: &str = "EPHEMERAL_SECURITY_PROXY_CONN";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn proxy_variables_are_ignored_by_the_broker() {
    let proxy = Upstream::start().await;
    let upstream = Upstream::start().await;
    let llm = FakeLlm::start(vec![
        Reply::Tools(
            vec![("conn_svc", json!({"method": "GET", "path": "/issues/1"}))],
            (10, 5),
        ),
        Reply::EchoTools,
    ])
    .await;
    // SAFETY: this binary's only test; set before the server starts.
    unsafe {
        for var in [
            "HTTP_PROXY",
            "http_proxy",
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
        ] {
            std::env::set_var(var, &proxy.base);
        }
        std::env::remove_var("NO_PROXY");
        std::env::remove_var("no_proxy");
        std::env::set_var(KEY_ENV, "sk-proxy-test-0001");
        std::env::set_var(CONN_ENV, "tok-proxy-test-0002");
    }
    let url = llm.base_url.clone();
    let base = upstream.base.clone();
    let server = TestServer::start_with(Backend::Sqlite, move |c: &mut Config| {
        in_process(c);
        c.models.insert(
            "test/fake".into(),
            ModelConfig {
                provider: "openai".into(),
                upstream: "fake-1".into(),
                base_url: Some(url),
                api_key_env: Some(KEY_ENV.into()),
                input_micros_per_million: 0,
                output_micros_per_million: 0,
                context_window: 128_000,
                max_output_tokens: 4_096,
            },
        );
        c.connections.insert(
            "svc".into(),
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
    let body = json!({"prompt": "go", "model": "test/fake", "shell": false,
                      "max_cost_micros": 10_000, "connections": ["svc"]});
    let (status, _, run) = post_run(&server.base, &key, &body, None).await;
    assert_eq!(status, 201, "{run}");
    let run = wait_run(&server.base, &key, run["id"].as_str().unwrap()).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert!(
        proxy.hits().is_empty(),
        "nothing went through the proxy: {:?}",
        proxy.hits()
    );
    let hits = upstream.hits();
    assert_eq!(
        hits.len(),
        1,
        "the connection was called directly: {hits:?}"
    );
    assert_eq!(hits[0].target, "/issues/1");
    assert_eq!(llm.seen().len(), 2, "the provider was called directly");
    server.stop().await;
}
