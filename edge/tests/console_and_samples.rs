//! The console's pages and published samples over real HTTP: every page
//! path answers the app with a strict Content-Security-Policy and no
//! inline script; samples are published from finished runs only (never
//! under zero data retention), readable by anyone without a key, as they
//! were when published; a run's request is kept for "the exact request".

mod support;

use std::process::Command;

use serde_json::{Value, json};
use support::{Backend, TestServer, client, get_json, post_run, script, wait_run};

on_both_stores!(samples_are_published_snapshots_anyone_can_read);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_is_the_app_under_a_strict_policy() {
    let server = TestServer::start(Backend::Sqlite).await;
    for path in [
        "/",
        "/runs",
        "/runs/run_0123456789abcdef0123456789abcdef",
        "/playground",
        "/samples",
        "/samples/smp_0123456789abcdef01234567",
    ] {
        let response = client()
            .get(format!("{}{path}", server.base))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
        let h = response.headers().clone();
        assert!(
            h["content-type"].to_str().unwrap().starts_with("text/html"),
            "{path}"
        );
        let csp = h["content-security-policy"].to_str().unwrap();
        for directive in [
            "default-src 'self'",
            "script-src 'self'",
            "frame-ancestors 'none'",
            "object-src 'none'",
        ] {
            assert!(csp.contains(directive), "{path}: {csp}");
        }
        assert!(
            !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
            "{csp}"
        );
        assert_eq!(h["x-content-type-options"], "nosniff");
        assert_eq!(h["x-frame-options"], "DENY");
        assert_eq!(h["referrer-policy"], "no-referrer");
        let html = response.text().await.unwrap();
        // No inline script: every <script> names its source.
        for tag in html.split("<script").skip(1) {
            let open = tag.split('>').next().unwrap_or("");
            assert!(open.contains("src="), "{path}: inline script in {html}");
        }
    }
    let response = client()
        .get(format!("{}/assets/nope.js", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);

    // A browser that has the page is told it is unchanged.
    let first = client()
        .get(format!("{}/runs", server.base))
        .send()
        .await
        .unwrap();
    let etag = first.headers()["etag"].clone();
    let again = client()
        .get(format!("{}/runs", server.base))
        .header("if-none-match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);

    // The app's script by its content address: kept for good, and gzipped
    // for a browser that takes it (the same bytes once unzipped).
    let html = client()
        .get(format!("{}/runs", server.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let script = html
        .split("<script src=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the app's script")
        .to_string();
    assert!(script.contains("?v="), "{script}");
    let plain = client()
        .get(format!("{}{script}", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status(), 200);
    assert!(
        plain.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("immutable")
    );
    assert!(plain.headers().get("content-encoding").is_none());
    let plain = plain.bytes().await.unwrap();
    let zipped = client()
        .get(format!("{}{script}", server.base))
        .header("accept-encoding", "br;q=1.0, gzip;q=0.8")
        .send()
        .await
        .unwrap();
    assert_eq!(zipped.headers()["content-encoding"], "gzip");
    let zipped = zipped.bytes().await.unwrap();
    assert!(
        zipped.len() * 2 < plain.len(),
        "{} of {}",
        zipped.len(),
        plain.len()
    );
    let mut unzipped = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(&zipped[..]),
        &mut unzipped,
    )
    .unwrap();
    assert_eq!(unzipped, plain);
    server.stop().await;
}

async fn samples_are_published_snapshots_anyone_can_read(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", 5_000_000).await;
    let base = &server.base;
    let body = script("echo published-output", 50_000);
    let (_, _, run) = post_run(base, &key, &body, None).await;
    let id = run["id"].as_str().unwrap().to_string();

    // Not before it has ended.
    let publish = |run_id: &str| {
        let mut command = Command::new(support::binary());
        command
            .args([
                "samples",
                "publish",
                run_id,
                "--title",
                "Echo, published",
                "--data",
            ])
            .arg(server.data.path());
        if let Some(url) = &server.database_url {
            command.env("EPHEMERAL_DATABASE_URL", url);
        }
        command.output().unwrap()
    };
    let finished = wait_run(base, &key, &id).await;
    let out = publish(&id);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sample_id = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(sample_id.starts_with("smp_"), "{sample_id}");

    // Anyone reads it, with no key.
    let anon = client();
    let list: Value = anon
        .get(format!("{base}/v1/samples"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["data"][0]["id"], sample_id.as_str(), "{list}");
    assert_eq!(list["data"][0]["title"], "Echo, published");
    let sample: Value = anon
        .get(format!("{base}/v1/samples/{sample_id}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(sample["request"], body, "the whole request, as sent");
    assert_eq!(sample["run"]["id"], id.as_str());
    assert_eq!(
        sample["run"]["timeline"], finished["timeline"],
        "the timeline as it was"
    );
    assert_eq!(sample["run"]["output"], finished["output"]);
    let response = anon
        .get(format!("{base}/v1/samples/smp_000000000000000000000000"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);

    // The run's own request, for its owner.
    let (status, kept) = get_json(base, &key, &format!("/v1/runs/{id}/request")).await;
    assert_eq!((status, &kept["request"]), (200, &body), "{kept}");

    // Never a run under zero data retention, nor one still running.
    let mut zdr = script("echo secret", 50_000);
    zdr["zero_data_retention"] = json!(true);
    let (_, _, zrun) = post_run(base, &key, &zdr, None).await;
    let zid = zrun["id"].as_str().unwrap().to_string();
    wait_run(base, &key, &zid).await;
    let out = publish(&zid);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("zero data retention"));
    let (status, _) = get_json(base, &key, &format!("/v1/runs/{zid}/request")).await;
    assert_eq!(status, 404);
    let (_, _, long) = post_run(base, &key, &script("sleep 20", 50_000), None).await;
    let out = publish(long["id"].as_str().unwrap());
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not ended"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Unpublished: gone.
    let mut command = Command::new(support::binary());
    command
        .args(["samples", "unpublish", &sample_id, "--data"])
        .arg(server.data.path());
    if let Some(url) = &server.database_url {
        command.env("EPHEMERAL_DATABASE_URL", url);
    }
    assert!(command.status().unwrap().success());
    let response = anon
        .get(format!("{base}/v1/samples/{sample_id}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    server.stop().await;
}
