//! The jailed worker's figures: a worker from spawn to ready, a copy of
//! the fork server to ready, the pool's
//! hand-out (take a ready worker and give it its run), `exec("echo hi")`
//! through a jailed worker (first on a fresh one, then repeated), worker
//! memory (RSS and PSS) idle and after the seed's commands, and runs per
//! second with N workers. Real processes, namespaces, cgroups, seccomp.
//!
//! `cargo bench -p ephemeral-benches --bench worker` (add `-- --test` for a
//! quick pass). Uses the `ephemeral-worker` binary of the same build
//! (`cargo build --release -p ephemeral-worker` first when benching alone).

use std::sync::Arc;
use std::time::{Duration, Instant};

use ephemeral_runtime::{Limits, Runtime, RuntimeConfig};
use ephemeral_worker::host::{ForkServer, WorkerConfig};
use ephemeral_worker::{ExecEvent, IdleWorker, WorkerHandle, WorkerPool};

struct Sizes {
    samples: usize,
    runs: usize,
}

const FULL: Sizes = Sizes {
    samples: 200,
    runs: 200,
};
const QUICK: Sizes = Sizes {
    samples: 5,
    runs: 6,
};

const SEED_COMMANDS: [&str; 4] = [
    "pwd; whoami",
    "command -v curl && curl -sS -m 8 https://example.com",
    "printf '%s\\n' '#!/usr/bin/env python3' 'primes = []' 'n = 2' 'while len(primes) < 15:' '    if all(n % p for p in primes):' '        primes.append(n)' '    n += 1' 'print(*primes)' > primes.py && chmod +x primes.py && ./primes.py",
    "printf 'sandbox proof\\n' > /tmp/proof.txt && ls -l /tmp/proof.txt",
];

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
    let config = match config() {
        Ok(c) => c,
        Err(why) => panic!("cannot bench jailed workers here: {why}"),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio");
    rt.block_on(run(config, sizes));
}

fn config() -> Result<WorkerConfig, String> {
    let runtime = Runtime::new(RuntimeConfig::default()).map_err(|e| e.to_string())?;
    runtime.warm_cache().map_err(|e| e.to_string())?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let binary = exe
        .ancestors()
        .skip(1)
        .take(2)
        .map(|d| d.join("ephemeral-worker"))
        .find(|p| p.is_file())
        .map(|p| (p, Vec::new()))
        .or_else(|| {
            exe.ancestors()
                .skip(1)
                .take(2)
                .map(|d| d.join("ephemeral"))
                .find(|p| p.is_file())
                .map(|p| (p, vec!["worker".to_string()]))
        })
        .ok_or("no ephemeral-worker binary next to the bench (build it first)")?;
    WorkerConfig::detect(
        binary.0,
        binary.1,
        runtime.cache().dir().to_path_buf(),
        runtime.programs_dir(),
    )
}

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    (at(0.50), at(0.99))
}

fn report(what: &str, samples: Vec<Duration>) {
    let (p50, p99) = percentiles(samples);
    println!("{what}: p50 {p50:.2?}, p99 {p99:.2?}");
}

async fn exec(worker: &WorkerHandle, command: &str) -> i32 {
    let mut events = worker.exec(command, Duration::from_secs(30));
    let mut code = -1;
    while let Some(event) = events.recv().await {
        match event {
            ExecEvent::Exit(o) => code = o.exit_code,
            ExecEvent::Failed(why) => panic!("{command}: {why}"),
            ExecEvent::Output(..) => {}
        }
    }
    code
}

async fn run(config: WorkerConfig, sizes: Sizes) {
    spawn_to_ready(&config, sizes.samples.min(50)).await;
    fork_to_ready(&config, sizes.samples).await;
    hand_out(&config, sizes.samples).await;
    exec_echo(&config, sizes.samples).await;
    memory(&config).await;
    for workers in [1, 2, 4] {
        runs_per_second(&config, workers, sizes.runs).await;
    }
    let spawning = WorkerConfig {
        fork_server: false,
        ..config
    };
    for workers in [1, 4] {
        print!("(no fork server) ");
        runs_per_second(&spawning, workers, sizes.runs).await;
    }
}

async fn spawn_to_ready(config: &WorkerConfig, n: usize) {
    let mut samples = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let worker = IdleWorker::spawn(config).await.expect("spawn");
        samples.push(t.elapsed());
        drop(worker);
    }
    report("worker spawn → ready (jail, engine, shell)", samples);
}

/// A copy of a warm fork server: clone, map, cgroup, lock, `Ready`.
async fn fork_to_ready(config: &WorkerConfig, n: usize) {
    let server = ForkServer::start(config).await.expect("a fork server");
    let mut samples = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let worker = IdleWorker::fork(&server, config).await.expect("fork");
        samples.push(t.elapsed());
        drop(worker);
    }
    report(
        "worker copied from the fork server → ready (clone, uid map, cgroup, lock)",
        samples,
    );
}

async fn wait_full(pool: &WorkerPool, size: usize) {
    while pool.ready() < size {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// From asking the pool for a worker to holding it started for a run.
async fn hand_out(config: &WorkerConfig, n: usize) {
    let pool = WorkerPool::start(config.clone(), 2);
    let mut samples = Vec::new();
    for _ in 0..n {
        wait_full(&pool, 2).await;
        let t = Instant::now();
        let worker = pool.take().await.expect("take");
        let worker = worker
            .start(Limits::default(), Vec::new())
            .await
            .expect("start");
        samples.push(t.elapsed());
        worker.destroy().await;
    }
    report(
        "pool hand-out: take a ready jailed worker + start its run",
        samples,
    );
}

async fn exec_echo(config: &WorkerConfig, n: usize) {
    let pool = WorkerPool::start(config.clone(), 2);
    let mut first = Vec::new();
    let mut again = Vec::new();
    for _ in 0..n {
        wait_full(&pool, 2).await;
        let worker = pool.take().await.expect("take");
        let worker = worker
            .start(Limits::default(), Vec::new())
            .await
            .expect("start");
        let t = Instant::now();
        assert_eq!(exec(&worker, "echo hi").await, 0);
        first.push(t.elapsed());
        let t = Instant::now();
        assert_eq!(exec(&worker, "echo hi").await, 0);
        again.push(t.elapsed());
        worker.destroy().await;
    }
    report("exec(\"echo hi\"), first in a fresh jailed worker", first);
    report("exec(\"echo hi\"), again in the same worker", again);
}

/// RSS and PSS of a worker process, in KiB.
fn rss_pss(pid: u32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("Rss:"), field("Pss:"))
}

async fn memory(config: &WorkerConfig) {
    // Several live at once, so shared pages are shared as in a server;
    // copies of one fork server, as the pool makes them.
    let server = ForkServer::start(config).await.expect("a fork server");
    let mut workers = Vec::new();
    for _ in 0..4 {
        let w = IdleWorker::fork(&server, config).await.expect("fork");
        workers.push(w.start(Limits::default(), Vec::new()).await.expect("start"));
    }
    let (rss, pss) = rss_pss(workers[0].pid().expect("a worker process"));
    println!(
        "worker memory, idle: RSS {} MiB, PSS {} MiB",
        rss / 1024,
        pss / 1024
    );
    for w in &workers {
        for command in SEED_COMMANDS {
            exec(w, command).await;
        }
    }
    let (rss, pss) = rss_pss(workers[0].pid().expect("a worker process"));
    println!(
        "worker memory, after the seed's commands: RSS {} MiB, PSS {} MiB",
        rss / 1024,
        pss / 1024
    );
    for w in workers {
        w.destroy().await;
    }
}

/// Whole runs (take, start, `echo hi`, destroy) by `workers` loops at once.
async fn runs_per_second(config: &WorkerConfig, workers: usize, runs: usize) {
    let pool = WorkerPool::start(config.clone(), workers);
    wait_full(&pool, workers).await;
    let pool = Arc::new(pool);
    let t = Instant::now();
    let per_loop = runs / workers;
    let loops: Vec<_> = (0..workers)
        .map(|_| {
            let pool = pool.clone();
            tokio::spawn(async move {
                for _ in 0..per_loop {
                    let w = pool.take().await.expect("take");
                    let w = w.start(Limits::default(), Vec::new()).await.expect("start");
                    assert_eq!(exec(&w, "echo hi").await, 0);
                    w.destroy().await;
                }
            })
        })
        .collect();
    for l in loops {
        l.await.expect("loop");
    }
    let rate = (per_loop * workers) as f64 / t.elapsed().as_secs_f64();
    println!("runs per second, {workers} worker(s) at once: {rate:.0}");
}
