//! p50/p99 of the sandbox's hot paths and the memory of an idle sandbox,
//! printed as the rows of the README's performance table.
//!
//! `cargo bench -p ephemeral-benches --bench percentiles`

use std::time::{Duration, Instant};

const RUNS: usize = 2_000;
const IDLE_SANDBOXES: usize = 1_000;

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    (at(0.50), at(0.99))
}

fn measure(name: &str, mut f: impl FnMut()) {
    for _ in 0..RUNS / 10 {
        f();
    }
    let samples = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    let (p50, p99) = percentiles(samples);
    println!("{name}: p50 {p50:?}, p99 {p99:?} ({RUNS} runs)");
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let rt = ephemeral_benches::runtime();
    measure("fresh sandbox + echo hi + destroy", || {
        let mut sb = rt.sandbox().build().unwrap();
        let out = sb.exec_captured("echo hi").unwrap();
        assert_eq!(out.stdout, b"hi\n");
        sb.destroy();
    });
    let mut sb = rt.sandbox().build().unwrap();
    measure("exec echo hi in an existing sandbox", || {
        sb.exec_captured("echo hi").unwrap();
    });
    idle_memory(&rt);
}

fn idle_memory(rt: &std::sync::Arc<ephemeral_runtime::Runtime>) {
    let before = ephemeral_benches::resident_bytes();
    let mut idle = Vec::with_capacity(IDLE_SANDBOXES);
    for _ in 0..IDLE_SANDBOXES {
        let mut sb = rt.sandbox().build().unwrap();
        sb.exec_captured("echo hi > /tmp/note").unwrap();
        idle.push(sb);
    }
    let after = ephemeral_benches::resident_bytes();
    let each = after.saturating_sub(before) / IDLE_SANDBOXES as u64;
    println!(
        "idle sandbox (after one command): {} KiB each ({IDLE_SANDBOXES} sandboxes)",
        each / 1024
    );
    drop(idle);
}
