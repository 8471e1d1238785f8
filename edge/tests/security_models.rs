//! Rule: no request may name a file on the server. `"model":
//! "scripted:/dev/zero"` used to read the path inside the async handler
//! (the server OOM-killed in 12 s), two `scripted:/dev/ptmx` froze it, and
//! the time a 422 took told a file's size (red team 2026-12, G1/G2).
//! Scripted models are now catalogue entries an operator configures; the
//! server reads their file (a regular file, at most 1 MiB, opened without
//! blocking) at start-up and off the async threads.

mod support;

use std::time::{Duration, Instant};

use ephemeral_edge::config::{Config, ModelConfig};
use serde_json::{Value, json};
use support::{Backend, TestServer, client, post_run, wait_run};

/// The broker and the permissions are the same at every isolation; the
/// in-process sandbox starts without compiling every program first.
fn in_process(c: &mut Config) {
    c.isolation = Some(ephemeral_edge::isolation::Isolation::Wasm);
}

fn scripted(path: &str) -> ModelConfig {
    ModelConfig {
        provider: "scripted".into(),
        upstream: path.into(),
        base_url: None,
        api_key_env: None,
        input_micros_per_million: 0,
        output_micros_per_million: 0,
        context_window: 128_000,
        max_output_tokens: 4_096,
    }
}

async fn healthy(base: &str) {
    let response = client()
        .get(format!("{base}/v1/health"))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .expect("the server still answers");
    assert!(response.status().is_success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_request_cannot_name_a_host_file_as_its_model() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.toml");
    std::fs::write(&good, "[[turn]]\nanswer = \"hello\"\n").unwrap();
    let server = TestServer::start_with(Backend::Sqlite, in_process).await;
    let key = server.org("acme", 10_000_000).await;
    let post = |path: String| {
        let (base, key) = (server.base.clone(), key.clone());
        async move {
            let body = json!({"prompt": "hi", "model": format!("scripted:{path}"), "max_cost_micros": 1_000});
            let started = Instant::now();
            let answer =
                tokio::time::timeout(Duration::from_secs(20), post_run(&base, &key, &body, None))
                    .await
                    .unwrap_or_else(|_| panic!("scripted:{path} held the request"));
            (answer, started.elapsed())
        }
    };
    // Blocking devices first (two at once froze a 2-thread server), then
    // an endless one, a large one, a missing one and a valid script: every
    // answer is the same refusal, none reads anything.
    let ptmx =
        futures_util::future::join_all([post("/dev/ptmx".into()), post("/dev/ptmx".into())]).await;
    let mut answers: Vec<_> = ptmx.into_iter().collect();
    for path in [
        "/dev/zero".to_string(),
        "/proc/self/environ".into(),
        "/no/such/file.toml".into(),
        good.display().to_string(),
    ] {
        answers.push(post(path).await);
    }
    let mut details = Vec::new();
    for ((status, headers, problem), took) in &answers {
        assert_eq!(*status, 422, "{problem}");
        assert_eq!(
            headers["content-type"], "application/problem+json",
            "{problem}"
        );
        assert_eq!(problem["errors"][0]["field"], "model", "{problem}");
        assert!(
            took < &Duration::from_secs(10),
            "answered without reading: {took:?}"
        );
        details.push(problem["errors"][0]["message"].clone());
    }
    assert!(
        details.windows(2).all(|w| w[0] == w[1]),
        "one answer, whatever the file: {details:?}"
    );
    assert!(
        details[0].as_str().unwrap().contains("operator"),
        "{details:?}"
    );
    healthy(&server.base).await;
    server.stop().await;
}

/// What `ephemeral serve` says of a configuration before it starts: its
/// own checks, then whether its scripted models' files can be read.
fn error_of(config: &Config) -> String {
    let checked = config.validate().map_err(|e| e.to_string());
    let scripts = |()| ephemeral_edge::models::check_scripts(config).map_err(|e| e.to_string());
    match checked.and_then(scripts) {
        Ok(()) => String::new(),
        Err(e) => e,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_operators_script_must_be_a_small_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.toml");
    std::fs::write(&good, "[[turn]]\nanswer = \"hello from the operator\"\n").unwrap();
    let big = dir.path().join("big.toml");
    std::fs::write(&big, "#".repeat(2 << 20)).unwrap();
    let fifo = dir.path().join("fifo.toml");
    let c_path = std::ffi::CString::new(fifo.display().to_string()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);

    let with = |path: &std::path::Path| {
        let mut config = Config::default();
        config.models.insert(
            "scripted/mine".into(),
            scripted(&path.display().to_string()),
        );
        config
    };
    assert_eq!(error_of(&with(&good)), "");
    for (path, why) in [
        (&big, "over"),
        (&fifo, "not a regular file"),
        (&std::path::PathBuf::from("/dev/zero"), "not a regular file"),
        (&std::path::PathBuf::from("/dev/ptmx"), "not a regular file"),
    ] {
        let error = error_of(&with(path));
        assert!(error.contains(why), "{}: {error}", path.display());
    }

    // At run time too (the file may have changed since start-up): a FIFO
    // neither hangs the run nor the server; a good script runs.
    let (good_path, fifo_path) = (good.display().to_string(), fifo.display().to_string());
    let server = TestServer::start_with(Backend::Sqlite, move |c: &mut Config| {
        in_process(c);
        c.models
            .insert("scripted/mine".into(), scripted(&good_path));
        c.models
            .insert("scripted/fifo".into(), scripted(&fifo_path));
    })
    .await;
    let key = server.org("acme", 10_000_000).await;
    let run = |model: &str| json!({"prompt": "hi", "model": model, "shell": false, "max_cost_micros": 10_000});
    let mut runs = Vec::new();
    for model in ["scripted/fifo", "scripted/fifo", "scripted/mine"] {
        let (status, _, created) = post_run(&server.base, &key, &run(model), None).await;
        assert_eq!(status, 201, "{created}");
        runs.push(created["id"].as_str().unwrap().to_string());
    }
    let mut ended: Vec<Value> = Vec::new();
    for id in &runs {
        ended.push(wait_run(&server.base, &key, id).await);
    }
    for fifo_run in &ended[..2] {
        assert_eq!(fifo_run["status"], "failed", "{fifo_run}");
        assert!(
            fifo_run["error"]["message"]
                .as_str()
                .unwrap()
                .contains("script cannot be read"),
            "{fifo_run}"
        );
        assert!(
            !fifo_run.to_string().contains("fifo.toml"),
            "no server path in the run: {fifo_run}"
        );
    }
    assert_eq!(ended[2]["status"], "succeeded", "{}", ended[2]);
    assert_eq!(ended[2]["output"], "hello from the operator");
    healthy(&server.base).await;
    server.stop().await;
}
