//! Bad input, generated: thousands of mangled bodies, headers and paths
//! against a live server. Every answer is a 2xx or 4xx (never a 5xx),
//! comes within the client's timeout, and errors are problem+json.

mod support;

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use support::{Backend, TestServer, client};

const CASES: usize = 1_500;

fn valid() -> Value {
    json!({
        "prompt": "echo fuzz",
        "model": "ephemeral/script",
        "max_cost_micros": 1_000,
        "timeout_seconds": 5,
        "shell": true,
        "web": false,
        "files": [{"path": "a.txt", "content": "x"}],
        "metadata": {"k": "v"},
        "connections": [],
        "zero_data_retention": false,
    })
}

fn weird_value(rng: &mut StdRng) -> Value {
    match rng.random_range(0..12) {
        0 => Value::Null,
        1 => json!(rng.random::<bool>()),
        2 => json!(rng.random::<i64>()),
        3 => json!(-1),
        4 => json!(rng.random::<f64>() * 1e20),
        5 => json!(u64::MAX),
        6 => json!("x".repeat(rng.random_range(0..5_000))),
        7 => json!([1, "two", null, {"a": []}]),
        8 => json!({"path": "../../etc/passwd", "content_base64": "%%%"}),
        9 => json!("\u{0000}\u{ffff}🙂"),
        10 => json!([{"path": "/tmp/x", "content": "y"}, {"path": "/tmp/x", "content": "z"}]),
        _ => json!({"nested": {"deeper": [weird_depth(rng, 30)]}}),
    }
}

fn weird_depth(rng: &mut StdRng, depth: usize) -> Value {
    if depth == 0 || rng.random_range(0..4) == 0 {
        return json!(1);
    }
    json!([weird_depth(rng, depth - 1)])
}

fn mangle(rng: &mut StdRng) -> Vec<u8> {
    let mut body = valid();
    let map = body.as_object_mut().unwrap();
    let keys: Vec<String> = map.keys().cloned().collect();
    for _ in 0..rng.random_range(1..4) {
        match rng.random_range(0..4) {
            0 => {
                let key = &keys[rng.random_range(0..keys.len())];
                map.insert(key.clone(), weird_value(rng));
            }
            1 => {
                let key = &keys[rng.random_range(0..keys.len())];
                map.remove(key);
            }
            2 => {
                map.insert(format!("extra{}", rng.random::<u8>()), weird_value(rng));
            }
            _ => {}
        }
    }
    let mut bytes = serde_json::to_vec(&body).unwrap();
    if rng.random_range(0..6) == 0 && !bytes.is_empty() {
        // Byte-level damage: truncation or a flipped byte.
        let at = rng.random_range(0..bytes.len());
        if rng.random::<bool>() {
            bytes.truncate(at);
        } else {
            bytes[at] ^= 1 << rng.random_range(0..8);
        }
    }
    bytes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn mangled_requests_never_get_a_5xx() {
    let server = TestServer::start_with(Backend::Sqlite, |c| {
        c.limits.runs_per_minute = 1_000_000;
        c.limits.concurrent_runs = 1_000;
    })
    .await;
    let key = server.org("fuzz", i64::MAX / 4).await;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let mut rng = StdRng::seed_from_u64(0xE9E3);
    let mut created = 0;
    for case in 0..CASES {
        let body = mangle(&mut rng);
        let mut request = http
            .post(format!("{}/v1/runs", server.base))
            .bearer_auth(&key)
            .body(body.clone());
        if rng.random_range(0..5) == 0 {
            let header: String = (0..rng.random_range(0..300))
                .map(|_| rng.random_range(0x20u8..0x7f) as char)
                .collect();
            request = request.header("Idempotency-Key", header);
        }
        if rng.random_range(0..5) == 0 {
            request = request
                .header("Last-Event-ID", "-7")
                .header("Accept", "text/event-stream, */*");
        }
        let response = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("case {case}: no answer: {e}"));
        let status = response.status().as_u16();
        assert!(
            status < 500,
            "case {case}: {status} for {}",
            String::from_utf8_lossy(&body)
        );
        if status >= 400 {
            assert_eq!(
                response.headers()["content-type"],
                "application/problem+json",
                "case {case}"
            );
        } else {
            created += 1;
        }
    }
    assert!(created > 0, "some mutations stay valid");
    // Paths and methods.
    let paths = [
        "/v1/runs/run_",
        "/v1/runs/%00",
        "/v1/runs/run_zz/events",
        "/v1/runs//cancel",
        "/problems/..%2f",
        "/v1/runs?limit=-1&before=%ff",
    ];
    for path in paths {
        for method in [
            reqwest::Method::GET,
            reqwest::Method::POST,
            reqwest::Method::PUT,
            reqwest::Method::DELETE,
        ] {
            let response = client()
                .request(method.clone(), format!("{}{path}", server.base))
                .bearer_auth(&key)
                .send()
                .await
                .unwrap();
            assert!(
                response.status().as_u16() < 500,
                "{method} {path}: {}",
                response.status()
            );
        }
    }
    // A query string that does not parse is answered like any other bad
    // input, in problem+json (finding G10).
    for query in ["limit=1&limit=2", "before=a&before=b", "limit=%ZZ"] {
        let response = client()
            .get(format!("{}/v1/runs?{query}", server.base))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let kind = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_owned();
        if status != 200 {
            assert_eq!(
                (status, kind.as_str()),
                (422, "application/problem+json"),
                "{query}"
            );
        }
    }
    server.stop().await;
}

/// A body that is not a body (a malformed chunked encoding) is the
/// client's error, 400, not "too large" (finding D5).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_chunked_body_is_400() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = TestServer::start(Backend::Sqlite).await;
    let key = server.org("acme", 1_000_000).await;
    let addr = server.base.trim_start_matches("http://").to_owned();
    let mut socket = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let request = format!(
        "POST /v1/runs HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n\
         5\r\n{{\"pro\r\nzz-not-a-size\r\n\r\n"
    );
    socket.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(20), socket.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    let status_line = answer.lines().next().unwrap_or_default();
    assert!(status_line.starts_with("HTTP/1.1 400"), "{answer}");
    server.stop().await;
}
