//! `ephemeral exec -- 'echo hi'` as a whole process, the way a user or a
//! script calls it: the CLI starts, chooses (`--isolation jail`; none,
//! which self-tests KVM first; `wasm`), gets one sandbox, runs the command,
//! prints `hi` and exits. Wall time from spawn to exit, p50/p90/min.
//!
//! `cargo bench -p ephemeral-benches --bench exec_cli` (add `-- --test`
//! for a quick pass). Uses the `ephemeral` binary of the same build
//! (`cargo build --release -p ephemeral-edge` first when benching alone)
//! and the component cache it names; one unmeasured call per isolation
//! warms that cache first.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let samples = if args.iter().any(|a| a == "--test") {
        3
    } else {
        40
    };
    let Some(binary) = ephemeral_binary() else {
        panic!("no `ephemeral` binary next to the bench: cargo build --release -p ephemeral-edge");
    };
    for (label, isolation) in [
        ("--isolation jail", Some("jail")),
        ("no --isolation (KVM self-test, then jail here)", None),
        ("--isolation wasm", Some("wasm")),
    ] {
        exec_once(&binary, isolation);
        let mut times: Vec<Duration> = (0..samples)
            .map(|_| exec_once(&binary, isolation))
            .collect();
        times.sort_unstable();
        println!(
            "ephemeral exec {label} -- 'echo hi': p50 {:.1} ms, p90 {:.1} ms, min {:.1} ms ({samples} runs)",
            ms(times[times.len() / 2]),
            ms(times[times.len() * 9 / 10]),
            ms(times[0]),
        );
    }
}

/// One whole `ephemeral exec`, checked: it must print `hi` and succeed.
fn exec_once(binary: &PathBuf, isolation: Option<&str>) -> Duration {
    let mut command = Command::new(binary);
    command.arg("exec");
    if let Some(isolation) = isolation {
        command.args(["--isolation", isolation]);
    }
    command.args(["--", "echo hi"]).stdin(Stdio::null());
    let started = Instant::now();
    let out = command.output().expect("cannot run ephemeral");
    let took = started.elapsed();
    assert!(
        out.status.success() && out.stdout == b"hi\n",
        "ephemeral exec failed: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

/// The `ephemeral` binary of this build.
fn ephemeral_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|d| d.join("ephemeral"))
        .find(|p| p.is_file())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
