//! p50/p99 of the sandbox's hot paths and the memory of an idle sandbox,
//! printed as the rows of the README's performance table.
//!
//! `cargo bench -p ephemeral-benches --bench percentiles`

use std::time::{Duration, Instant};

/// Runs of the fast measurements; slow ones take fewer.
const RUNS: usize = 2_000;
const IDLE_SANDBOXES: usize = 1_000;

fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    (at(0.50), at(0.99))
}

fn measure(name: &str, f: impl FnMut()) {
    measure_n(name, RUNS, f)
}

fn measure_n(name: &str, runs: usize, mut f: impl FnMut()) {
    for _ in 0..runs / 10 + 1 {
        f();
    }
    let samples = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    let (p50, p99) = percentiles(samples);
    println!("{name}: p50 {p50:?}, p99 {p99:?} ({runs} runs)");
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let rt = ephemeral_benches::runtime();
    measure("fresh sandbox + destroy (no command)", || {
        rt.sandbox().build().unwrap().destroy();
    });
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
    shell_workloads(&rt);
    idle_memory(&rt);
}

/// 1 MB of text: 20,000 lines of words.
fn megabyte() -> Vec<u8> {
    let mut text = String::new();
    let mut i = 0u64;
    while text.len() < 1 << 20 {
        i += 1;
        text.push_str(&format!(
            "line {i} alpha beta gamma {} delta\n",
            i * 7919 % 1000
        ));
    }
    text.into_bytes()
}

/// A 10-stage pipeline over 1 MB, python start-up, and the seed's prime
/// script, each in a fresh sandbox.
fn shell_workloads(rt: &std::sync::Arc<ephemeral_runtime::Runtime>) {
    let data = megabyte();
    let pipeline = "cat data.txt | grep -v 999 | tr a-z A-Z | sed 's/ALPHA/a/' | cut -d' ' -f2-5 \
                    | sort -k4 -n | uniq | awk '{s+=$4} END {print s}' | head -1 | wc -c";
    measure_n("10-stage pipeline over 1 MB (fresh sandbox)", 50, || {
        let mut sb = rt.sandbox().file("data.txt", data.clone()).build().unwrap();
        let out = sb.exec_captured(pipeline).unwrap();
        assert_eq!(
            out.outcome.exit_code,
            0,
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
    if !rt.program_names().iter().any(|p| p == "python3") {
        println!("python3: not measured (no python3.wasm in the programs folder; ./dev builds it)");
        return;
    }
    measure_n("python3 -c 'print(1)' (fresh sandbox)", 200, || {
        let mut sb = rt.sandbox().build().unwrap();
        let out = sb.exec_captured("python3 -c 'print(1)'").unwrap();
        assert_eq!(out.stdout, b"1\n");
    });
    let primes = "printf '%s\\n' '#!/usr/bin/env python3' 'primes = []' 'n = 2' \
                  'while len(primes) < 15:' '    if all(n % p for p in primes):' \
                  '        primes.append(n)' '    n += 1' 'print(*primes)' > primes.py \
                  && chmod +x primes.py && ./primes.py";
    measure_n("seed prime script (fresh sandbox)", 200, || {
        let mut sb = rt.sandbox().build().unwrap();
        let out = sb.exec_captured(primes).unwrap();
        assert_eq!(out.stdout, b"2 3 5 7 11 13 17 19 23 29 31 37 41 43 47\n");
    });
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
