//! The edge's figures: POST → `budget.reserved` latency, `GET /v1/runs/{id}`
//! requests per second on loopback, 1,000 concurrent SSE readers of live
//! runs with no lost event, and the server's memory per idle SSE stream.
//! A real server (in this process), real SQLite, real HTTP.
//!
//! `cargo bench -p ephemeral-benches --bench edge` (add `-- --test` for a
//! quick pass that checks the same things at small sizes).

use std::sync::Arc;
use std::time::{Duration, Instant};

use ephemeral_edge::config::Config;
use ephemeral_edge::ids::{key_hash, new_member_key};
use ephemeral_edge::server::Server;
use ephemeral_edge::store::Org;
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct Sizes {
    posts: usize,
    get_seconds: f64,
    live_runs: usize,
    readers_per_run: usize,
    idle_streams: usize,
}

const FULL: Sizes = Sizes {
    posts: 500,
    get_seconds: 5.0,
    live_runs: 10,
    readers_per_run: 100,
    idle_streams: 1_000,
};
const QUICK: Sizes = Sizes {
    posts: 20,
    get_seconds: 0.3,
    live_runs: 2,
    readers_per_run: 10,
    idle_streams: 20,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let sizes = if args.iter().any(|a| a == "--test") {
        QUICK
    } else {
        FULL
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio");
    rt.block_on(run(sizes));
}

struct Bench {
    base: String,
    key: String,
    http: reqwest::Client,
}

async fn run(sizes: Sizes) {
    let data = tempfile::tempdir().expect("temp dir");
    let config = Config {
        listen: "127.0.0.1:0".parse().expect("addr"),
        data_dir: data.path().to_path_buf(),
        default_model: "ephemeral/script".into(),
        limits: ephemeral_edge::config::LimitsConfig {
            runs_per_minute: 1_000_000,
            concurrent_runs: 100_000,
            ..Default::default()
        },
        ..Config::default()
    };
    let key = new_member_key();
    let server = Server::start(config).await.expect("server");
    let defaults = Org {
        id: String::new(),
        name: String::new(),
        balance_micros: i64::MAX / 4,
        held_micros: 0,
        per_run_cap_micros: 1_000_000,
        zero_data_retention: false,
    };
    server
        .edge()
        .store
        .create_key("bench", &key_hash(&key), &defaults)
        .await
        .expect("key");
    let base = format!("http://{}", server.local_addr());
    tokio::spawn(server.serve(std::future::pending()));
    let bench = Arc::new(Bench {
        base,
        key,
        http: reqwest::Client::new(),
    });

    post_to_reserved(&bench, sizes.posts).await;
    get_throughput(&bench, sizes.get_seconds).await;
    live_readers(&bench, sizes.live_runs, sizes.readers_per_run).await;
    idle_stream_memory(&bench, sizes.idle_streams).await;
}

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    (at(0.50), at(0.99))
}

fn request(prompt: &str) -> Value {
    json!({"prompt": prompt, "model": "ephemeral/script", "max_cost_micros": 10_000})
}

/// Time from sending the POST to holding the run's first event.
async fn post_to_reserved(bench: &Bench, runs: usize) {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let response = bench
            .http
            .post(format!("{}/v1/runs", bench.base))
            .bearer_auth(&bench.key)
            .header("accept", "text/event-stream")
            .json(&request("true"))
            .send()
            .await
            .expect("post");
        assert_eq!(response.status().as_u16(), 201);
        let mut body = response.bytes_stream();
        let mut text = String::new();
        while !text.contains("event: budget.reserved") {
            let chunk = body.next().await.expect("first event").expect("chunk");
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
        samples.push(started.elapsed());
        while body.next().await.is_some() {}
    }
    let (p50, p99) = percentiles(samples);
    println!("POST /v1/runs → budget.reserved: p50 {p50:?}, p99 {p99:?} ({runs} runs)");
}

/// Keep-alive clients reading one finished run as fast as they can.
async fn get_throughput(bench: &Arc<Bench>, seconds: f64) {
    let response = bench
        .http
        .post(format!("{}/v1/runs", bench.base))
        .bearer_auth(&bench.key)
        .json(&request("echo hi"))
        .send()
        .await
        .expect("post");
    let run: Value = response.json().await.expect("run");
    let url = format!("{}/v1/runs/{}", bench.base, run["id"].as_str().expect("id"));
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let clients: Vec<_> = (0..32)
        .map(|_| {
            let (bench, url) = (bench.clone(), url.clone());
            tokio::spawn(async move {
                let mut n = 0u64;
                while Instant::now() < until {
                    let r = bench
                        .http
                        .get(&url)
                        .bearer_auth(&bench.key)
                        .send()
                        .await
                        .expect("get");
                    assert_eq!(r.status().as_u16(), 200);
                    r.bytes().await.expect("body");
                    n += 1;
                }
                n
            })
        })
        .collect();
    let mut total = 0;
    for c in clients {
        total += c.await.expect("client");
    }
    println!(
        "GET /v1/runs/{{id}}: {:.0} requests/s (32 keep-alive clients, {seconds} s)",
        total as f64 / seconds
    );
}

/// Many readers of live runs; each must get every event of its run.
async fn live_readers(bench: &Arc<Bench>, runs: usize, per_run: usize) {
    let mut ids = Vec::new();
    for _ in 0..runs {
        let prompt = "sleep 0.5\nfor i in $(seq 1 40); do echo tick $i; sleep 0.02; done";
        let r = bench
            .http
            .post(format!("{}/v1/runs", bench.base))
            .bearer_auth(&bench.key)
            .json(&request(prompt))
            .send()
            .await
            .expect("post");
        let run: Value = r.json().await.expect("run");
        ids.push(run["id"].as_str().expect("id").to_string());
    }
    let started = Instant::now();
    let mut readers = Vec::new();
    for id in &ids {
        for _ in 0..per_run {
            let (bench, id) = (bench.clone(), id.clone());
            readers.push(tokio::spawn(async move {
                let r = bench
                    .http
                    .get(format!("{}/v1/runs/{id}/events", bench.base))
                    .bearer_auth(&bench.key)
                    .send()
                    .await
                    .expect("events");
                let text = r.text().await.expect("stream");
                (
                    id,
                    text.matches("\nid: ").count() + usize::from(text.starts_with("id: ")),
                )
            }));
        }
    }
    let mut lost = 0;
    for reader in readers {
        let (id, got) = reader.await.expect("reader");
        let run: Value = bench
            .http
            .get(format!("{}/v1/runs/{id}", bench.base))
            .bearer_auth(&bench.key)
            .send()
            .await
            .expect("get")
            .json()
            .await
            .expect("run");
        let want = run["timeline"].as_array().map_or(0, Vec::len);
        lost += want.saturating_sub(got);
    }
    assert_eq!(lost, 0, "readers lost events");
    println!(
        "{} concurrent SSE readers of {runs} live runs: 0 events lost ({:?})",
        runs * per_run,
        started.elapsed()
    );
}

/// Server memory per idle SSE stream: resident set growth while `n` raw
/// connections follow a long run that prints nothing.
async fn idle_stream_memory(bench: &Bench, n: usize) {
    let r = bench
        .http
        .post(format!("{}/v1/runs", bench.base))
        .bearer_auth(&bench.key)
        .json(&request("sleep 30"))
        .send()
        .await
        .expect("post");
    let run: Value = r.json().await.expect("run");
    let id = run["id"].as_str().expect("id").to_string();
    let addr = bench.base.trim_start_matches("http://").to_string();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = rss_kib();
    let mut streams = Vec::with_capacity(n);
    for _ in 0..n {
        let mut s = tokio::net::TcpStream::connect(&addr)
            .await
            .expect("connect");
        let req = format!(
            "GET /v1/runs/{id}/events HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\n\r\n",
            bench.key
        );
        s.write_all(req.as_bytes()).await.expect("send");
        let mut buf = [0u8; 4096];
        let _ = s.read(&mut buf).await.expect("headers");
        streams.push(s);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = rss_kib();
    let per = (after.saturating_sub(before) as f64 * 1024.0) / n as f64;
    println!(
        "memory per idle SSE stream (server and raw client socket): {:.1} KiB ({n} streams)",
        per / 1024.0
    );
    drop(streams);
    let _ = bench
        .http
        .post(format!("{}/v1/runs/{id}/cancel", bench.base))
        .bearer_auth(&bench.key)
        .send()
        .await;
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}
