//! Sandboxes over HTTP (`/v1/sandboxes`), the door for agents that bring
//! their own loop: `POST /v1/sandboxes` → the first command's output on
//! loopback (p50/p99, warm pool), commands per second on one sandbox, and
//! how many idle sandboxes 1 GiB of memory holds (the server's and its
//! workers' proportional memory per sandbox). A real server in this
//! process, real jailed workers, real SQLite, real HTTP.
//!
//! `cargo bench -p ephemeral-benches --bench sandboxes` (add `-- --test`
//! for a quick pass). Jailed workers are the `ephemeral` binary of the same
//! build (`cargo build --release -p ephemeral-edge` first when benching
//! alone); without it the bench says so and uses in-process sandboxes.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ephemeral_edge::cli::pss_of_tree;
use ephemeral_edge::config::{Config, LimitsConfig, WorkersConfig};
use ephemeral_edge::ids::{key_hash, new_member_key};
use ephemeral_edge::isolation::Isolation;
use ephemeral_edge::server::Server;
use ephemeral_edge::store::Org;
use serde_json::{Value, json};

struct Sizes {
    first_commands: usize,
    command_seconds: f64,
    held: usize,
}

const FULL: Sizes = Sizes {
    first_commands: 200,
    command_seconds: 5.0,
    held: 50,
};
const QUICK: Sizes = Sizes {
    first_commands: 5,
    command_seconds: 0.3,
    held: 4,
};

struct Bench {
    base: String,
    key: String,
    http: reqwest::Client,
}

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

/// The `ephemeral` binary of this build, for jailed workers.
fn ephemeral_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|d| d.join("ephemeral"))
        .find(|p| p.is_file())
}

async fn run(sizes: Sizes) {
    let data = tempfile::tempdir().expect("temp dir");
    let binary = ephemeral_binary();
    if binary.is_none() {
        println!("no `ephemeral` binary next to the bench: in-process sandboxes (isolation wasm)");
    }
    let config = Config {
        listen: "127.0.0.1:0".parse().expect("addr"),
        data_dir: data.path().to_path_buf(),
        isolation: binary.is_none().then_some(Isolation::Wasm),
        workers: WorkersConfig {
            binary: binary.clone(),
            pool_size: 4,
            ..WorkersConfig::default()
        },
        limits: LimitsConfig {
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
    let edge = server.edge();
    edge.store
        .create_key("bench", &key_hash(&key), &defaults)
        .await
        .expect("key");
    println!("isolation {}", edge.isolation().timeline_name());
    let base = format!("http://{}", server.local_addr());
    tokio::spawn(server.serve(std::future::pending()));
    let bench = Bench {
        base,
        key,
        http: reqwest::Client::new(),
    };
    // The pool fills in the background: wait for it, as a server would
    // have long before its first sandbox.
    tokio::time::sleep(Duration::from_secs(2)).await;
    create_to_first_output(&bench, sizes.first_commands).await;
    commands_per_second(&bench, sizes.command_seconds).await;
    held_per_gib(&bench, sizes.held).await;
}

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    (at(0.50), at(0.99))
}

async fn create(bench: &Bench) -> String {
    let response = bench
        .http
        .post(format!("{}/v1/sandboxes", bench.base))
        .bearer_auth(&bench.key)
        .json(&json!({"max_cost_micros": 100_000}))
        .send()
        .await
        .expect("post");
    assert_eq!(response.status().as_u16(), 201);
    let sandbox: Value = response.json().await.expect("sandbox");
    sandbox["id"].as_str().expect("id").to_string()
}

async fn command(bench: &Bench, id: &str, command: &str) -> Value {
    let response = bench
        .http
        .post(format!("{}/v1/sandboxes/{id}/commands", bench.base))
        .bearer_auth(&bench.key)
        .json(&json!({"command": command}))
        .send()
        .await
        .expect("command");
    assert_eq!(response.status().as_u16(), 200);
    response.json().await.expect("result")
}

async fn delete(bench: &Bench, id: &str) {
    let response = bench
        .http
        .delete(format!("{}/v1/sandboxes/{id}", bench.base))
        .bearer_auth(&bench.key)
        .send()
        .await
        .expect("delete");
    assert_eq!(response.status().as_u16(), 200);
}

/// From sending `POST /v1/sandboxes` to holding `echo hi`'s output.
async fn create_to_first_output(bench: &Bench, n: usize) {
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let id = create(bench).await;
        let out = command(bench, &id, "echo hi").await;
        samples.push(started.elapsed());
        assert_eq!(out["stdout"], "hi\n");
        delete(bench, &id).await;
    }
    let (p50, p99) = percentiles(samples);
    println!(
        "POST /v1/sandboxes → first command's output: p50 {p50:?}, p99 {p99:?} ({n} sandboxes)"
    );
}

/// One sandbox, one client, command after command.
async fn commands_per_second(bench: &Bench, seconds: f64) {
    let id = create(bench).await;
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let mut n = 0u64;
    while Instant::now() < until {
        let out = command(bench, &id, "echo hi").await;
        assert_eq!(out["exit_code"], 0);
        n += 1;
    }
    delete(bench, &id).await;
    println!(
        "commands on one sandbox: {:.0} per second ({seconds} s)",
        n as f64 / seconds
    );
}

/// Idle sandboxes held at once: what each costs, and so how many fit in
/// 1 GiB.
async fn held_per_gib(bench: &Bench, n: usize) {
    let before = pss_of_tree();
    let mut ids = Vec::with_capacity(n);
    for _ in 0..n {
        let id = create(bench).await;
        command(bench, &id, "echo warm > warm.txt").await;
        ids.push(id);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = pss_of_tree();
    let per = after.saturating_sub(before) / n as u64;
    let held = (1u64 << 20) / per.max(1);
    println!(
        "idle sandboxes: {per} KiB each (PSS of the server and its workers, {n} held) → {held} in 1 GiB"
    );
    for id in &ids {
        delete(bench, id).await;
    }
}
