//! Files a run leaves behind (`outputs`): collected when the agent is
//! done, before the sandbox goes, announced by `files.collected`, listed
//! and downloaded byte for byte with their type and sha256; what is over
//! the limits named, never dropped silently; under zero data retention
//! sent once on the live stream and stored nowhere.

mod support;

use serde_json::{Value, json};
use support::{Backend, TestServer, client, get_json, post_run, wait_run};

on_both_stores!(
    a_runs_outputs_are_collected_and_downloaded,
    outputs_over_the_limits_are_named_not_dropped,
    zero_data_retention_sends_files_on_the_live_stream_only
);

const BALANCE: i64 = 5_000_000;

fn run_with_outputs(commands: &str, outputs: Value) -> Value {
    json!({"prompt": commands, "model": "ephemeral/script", "max_cost_micros": 100_000, "outputs": outputs})
}

async fn a_runs_outputs_are_collected_and_downloaded(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", BALANCE).await;
    let base = &server.base;
    let commands = "mkdir -p out/sub\n\
        printf 'hello report\\n' > report.txt\n\
        python3 -c \"open('out/sub/data.bin','wb').write(bytes(range(256))*4)\"\n\
        echo extra > /tmp/extra.md\n\
        echo not-wanted > skip.log";
    let body = run_with_outputs(
        commands,
        json!(["*.txt", "out/**", "/tmp/extra.md", "missing-*.csv"]),
    );
    let (status, _, run) = post_run(base, &key, &body, None).await;
    assert_eq!(status, 201, "{run}");
    let id = run["id"].as_str().unwrap();
    let run = wait_run(base, &key, id).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert_eq!(run["permissions"]["outputs"][0], "*.txt", "{run}");
    let timeline = run["timeline"].as_array().unwrap();
    let kinds: Vec<&str> = timeline
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    let collected = kinds
        .iter()
        .position(|k| *k == "files.collected")
        .expect("files.collected");
    let destroyed = kinds
        .iter()
        .position(|k| *k == "vm.destroyed")
        .expect("vm.destroyed");
    assert!(collected < destroyed, "{kinds:?}");
    let event = &timeline[collected]["data"];
    let mut paths: Vec<&str> = event["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        ["/tmp/extra.md", "out/sub/data.bin", "report.txt"],
        "{event}"
    );

    let (status, list) = get_json(base, &key, &format!("/v1/runs/{id}/files")).await;
    assert_eq!(status, 200, "{list}");
    let files = list["data"].as_array().unwrap();
    assert_eq!(files.len(), 3, "{list}");
    let report = files.iter().find(|f| f["path"] == "report.txt").unwrap();
    assert_eq!(report["content_type"], "text/plain", "{report}");
    assert_eq!(report["size"], 13);

    let response = client()
        .get(format!("{base}/v1/runs/{id}/files/report.txt"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    assert_eq!(headers["content-type"], "text/plain");
    assert_eq!(headers["content-length"], "13");
    assert_eq!(
        headers["etag"],
        format!("\"{}\"", report["sha256"].as_str().unwrap()).as_str()
    );
    assert_eq!(
        headers["content-disposition"],
        "attachment; filename=\"report.txt\""
    );
    assert_eq!(response.text().await.unwrap(), "hello report\n");

    let response = client()
        .get(format!("{base}/v1/runs/{id}/files/out/sub/data.bin"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    let bytes = response.bytes().await.unwrap();
    let want: Vec<u8> = (0..4).flat_map(|_| 0u8..=255).collect();
    assert_eq!(bytes.as_ref(), want.as_slice());
    let response = client()
        .get(format!("{base}/v1/runs/{id}/files/%2Ftmp%2Fextra.md"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    for missing in ["skip.log", "nope.txt"] {
        let response = client()
            .get(format!("{base}/v1/runs/{id}/files/{missing}"))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 404, "{missing}");
    }
    // Another organisation sees none of it.
    let other = server.org("other", BALANCE).await;
    let (status, _) = get_json(base, &other, &format!("/v1/runs/{id}/files")).await;
    assert_eq!(status, 404);
    server.stop().await;
}

async fn outputs_over_the_limits_are_named_not_dropped(backend: Backend) {
    let server = TestServer::start_with(backend, |c| {
        c.runs.max_output_files = 2;
        c.runs.max_output_bytes = 1_000;
    })
    .await;
    let key = server.org("acme", BALANCE).await;
    let commands = "echo a > a.txt\necho b > b.txt\necho c > c.txt\nhead -c 5000 /dev/zero > big.bin\nln -s a.txt link.txt";
    let body = run_with_outputs(commands, json!(["*.txt", "*.bin"]));
    let (_, _, run) = post_run(&server.base, &key, &body, None).await;
    let run = wait_run(&server.base, &key, run["id"].as_str().unwrap()).await;
    let event = run["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "files.collected")
        .map(|e| e["data"].clone())
        .expect("files.collected");
    let collected: Vec<&str> = event["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(collected.len(), 2, "{event}");
    let skipped: Vec<(String, String)> = event["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().to_string(),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // Five matches, two collected: each of the other three is named.
    assert_eq!(skipped.len(), 3, "{event}");
    assert!(
        skipped
            .iter()
            .any(|(_, r)| r == "too_many_files" || r == "too_large"),
        "{event}"
    );
    assert!(
        skipped
            .iter()
            .any(|(p, r)| p == "link.txt" && r == "not_a_regular_file")
            || skipped.iter().all(|(p, _)| p != "link.txt"),
        "{event}"
    );
    server.stop().await;
}

async fn zero_data_retention_sends_files_on_the_live_stream_only(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", BALANCE).await;
    let mut body = run_with_outputs("echo secret-content > notes.txt", json!(["notes.txt"]));
    body["zero_data_retention"] = json!(true);
    let response = client()
        .post(format!("{}/v1/runs", server.base))
        .bearer_auth(&key)
        .header("Accept", "text/event-stream")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let id = response.headers()["location"]
        .to_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string();
    let events = support::read_sse(response).await;
    let content = events
        .iter()
        .find(|e| e.kind == "file.content")
        .expect("file.content live");
    assert_eq!(content.data["path"], "notes.txt");
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(content.data["content_base64"].as_str().unwrap())
        .unwrap();
    assert_eq!(bytes, b"secret-content\n");
    // Stored nowhere: no file, no content event, no path in the record.
    let run = wait_run(&server.base, &key, &id).await;
    let (_, list) = get_json(&server.base, &key, &format!("/v1/runs/{id}/files")).await;
    assert_eq!(list["data"], json!([]), "{list}");
    let text = run.to_string();
    assert!(
        !text.contains("secret-content") && !text.contains("c2VjcmV0"),
        "{text}"
    );
    assert!(
        !run["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["type"] == "file.content"),
        "{run}"
    );
    server.stop().await;
}

/// `ephemeral run request.json --download DIR` saves what the run's
/// `outputs` collected, byte for byte, relative paths as they are and
/// `/tmp/…` under DIR/tmp; under zero data retention from the live stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_downloads_a_runs_files() {
    let server = TestServer::start(Backend::Sqlite).await;
    let key = server.org("acme", BALANCE).await;
    for zdr in [false, true] {
        let work = tempfile::tempdir().unwrap();
        let mut body = run_with_outputs(
            "mkdir -p out\necho chart > out/chart.txt\necho extra > /tmp/extra.md",
            json!(["out/*", "/tmp/extra.md"]),
        );
        body["zero_data_retention"] = json!(zdr);
        let request = work.path().join("request.json");
        std::fs::write(&request, body.to_string()).unwrap();
        let into = work.path().join("files");
        let (base, key) = (server.base.clone(), key.clone());
        let (request, into_dir) = (request.clone(), into.clone());
        let out = tokio::task::spawn_blocking(move || {
            std::process::Command::new(support::binary())
                .arg("run")
                .arg(&request)
                .arg("--download")
                .arg(&into_dir)
                .env("EPHEMERAL_URL", &base)
                .env("EPHEMERAL_API_KEY", &key)
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("saved 2 files"), "{stdout}");
        assert_eq!(
            std::fs::read_to_string(into.join("out/chart.txt")).unwrap(),
            "chart\n"
        );
        assert_eq!(
            std::fs::read_to_string(into.join("tmp/extra.md")).unwrap(),
            "extra\n"
        );
    }
    server.stop().await;
}
