//! Every limit stops the guest, is reported by name, and leaves the host
//! process fine: the next sandbox in the same process works normally.
//!
//! These tests assert what stopped the guest and how it was reported, not
//! how fast: a loaded machine may take its time. The few time bounds are
//! only there so a stop that never comes fails the test instead of
//! hanging it, and are generous on purpose (how fast a stop is belongs in
//! `benches/` and the README's table).

mod common;

use std::time::{Duration, Instant};

use common::{guest, runtime, sandbox_with, text};
use ephemeral_runtime::{EXIT_MEMORY, EXIT_TIMEOUT, LimitHit, Limits};

/// Past this, a stop did not happen (it is not a speed bound: on an idle
/// machine the overshoot is a few milliseconds, see the README).
const NEVER_STOPPED: Duration = Duration::from_secs(20);

fn next_sandbox_still_works() {
    let mut sb = runtime().sandbox().build().unwrap();
    let out = sb.run_captured(&guest("env_dump"), &["env_dump"]).unwrap();
    assert_eq!(out.outcome.exit_code, 0);
    assert!(text(&out.stdout).contains("USER=worker"));
}

#[test]
fn infinite_loop_stops_at_the_deadline() {
    let limit = Duration::from_millis(300);
    let mut sb = sandbox_with(Limits {
        command_timeout: limit,
        ..Limits::default()
    });
    let started = Instant::now();
    let out = sb.run_captured(&guest("spin"), &["spin"]).unwrap();
    let overshoot = started.elapsed().saturating_sub(limit);
    println!("infinite loop: limit {limit:?}, overshoot {overshoot:?}");
    assert_eq!(out.outcome.limit, Some(LimitHit::CommandTimeout));
    assert_eq!(out.outcome.exit_code, EXIT_TIMEOUT);
    assert!(overshoot < NEVER_STOPPED, "overshoot {overshoot:?}");
    next_sandbox_still_works();
}

#[test]
fn sleeping_in_a_host_call_stops_at_the_deadline() {
    let limit = Duration::from_millis(300);
    let mut sb = sandbox_with(Limits {
        command_timeout: limit,
        ..Limits::default()
    });
    let started = Instant::now();
    let out = sb.run_captured(&guest("sleeper"), &["sleeper"]).unwrap();
    let overshoot = started.elapsed().saturating_sub(limit);
    println!("sleep: limit {limit:?}, overshoot {overshoot:?}");
    assert_eq!(out.outcome.limit, Some(LimitHit::CommandTimeout));
    assert!(overshoot < NEVER_STOPPED, "overshoot {overshoot:?}");
    assert_eq!(text(&out.stdout), "");
}

#[test]
fn sandbox_time_is_shared_by_its_commands() {
    let limits = Limits {
        command_timeout: Duration::from_secs(10),
        sandbox_timeout: Duration::from_millis(300),
        ..Limits::default()
    };
    let mut sb = sandbox_with(limits);
    let out = sb.run_captured(&guest("spin"), &["spin"]).unwrap();
    assert_eq!(out.outcome.limit, Some(LimitHit::SandboxTimeout));
    let again = sb.run_captured(&guest("env_dump"), &["env_dump"]).unwrap();
    assert_eq!(again.outcome.limit, Some(LimitHit::SandboxTimeout));
    assert_eq!(again.outcome.exit_code, EXIT_TIMEOUT);
    assert!(again.stdout.is_empty());
}

#[test]
fn memory_bomb_stops_at_the_cap() {
    let mut sb = sandbox_with(Limits {
        memory_bytes: 64 << 20,
        ..Limits::default()
    });
    let out = sb.run_captured(&guest("mem_bomb"), &["mem_bomb"]).unwrap();
    assert_eq!(
        out.outcome.limit,
        Some(LimitHit::Memory),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(out.outcome.exit_code, EXIT_MEMORY);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("32 MiB") && !stdout.contains("64 MiB"),
        "{stdout}"
    );
    next_sandbox_still_works();
}

#[test]
fn output_flood_is_truncated() {
    let cap = 100_000;
    let mut sb = sandbox_with(Limits {
        output_bytes: cap,
        ..Limits::default()
    });
    let started = Instant::now();
    let out = sb.run_captured(&guest("flood"), &["flood"]).unwrap();
    assert!(started.elapsed() < NEVER_STOPPED);
    assert_eq!(out.outcome.limit, Some(LimitHit::Output));
    assert!(out.outcome.truncated);
    assert_eq!(out.stdout.len() + out.stderr.len(), cap);
    next_sandbox_still_works();
}

#[test]
fn disk_fill_is_refused() {
    let mut sb = sandbox_with(Limits {
        disk_bytes: 1 << 20,
        ..Limits::default()
    });
    let out = sb
        .run_captured(
            &guest("fs_probe"),
            &["fs_probe", "--write", "/tmp/big", "10000000"],
        )
        .unwrap();
    // wasi-libc reports any failed stream write as EIO, so the guest sees
    // "I/O error"; the runtime still names the quota that refused it.
    assert!(
        text(&out.stdout).starts_with("write error: "),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(out.outcome.limit, Some(LimitHit::DiskBytes));
    assert!(sb.disk_usage().0 <= 1 << 20);
    next_sandbox_still_works();
}

#[test]
fn too_many_files_are_refused() {
    let mut sb = sandbox_with(Limits {
        disk_files: 20,
        ..Limits::default()
    });
    let mut refused = None;
    for i in 0..30 {
        let path = format!("/tmp/f{i}");
        let out = sb
            .run_captured(&guest("fs_probe"), &["fs_probe", "--write", &path, "1"])
            .unwrap();
        if text(&out.stdout).starts_with("write error") {
            refused = Some((i, text(&out.stdout), out.outcome.limit));
            break;
        }
    }
    let (_, msg, limit) = refused.expect("the file quota refused a file");
    // EDQUOT, in WASI's numbering and wasi-libc's wording.
    assert_eq!(msg, "write error: Quota exceeded (os error 19)\n");
    assert_eq!(limit, Some(LimitHit::DiskFiles));
}

#[test]
fn put_file_respects_the_quota() {
    let result = runtime()
        .sandbox()
        .limits(Limits {
            disk_bytes: 1 << 20,
            ..Limits::default()
        })
        .file("big.bin", vec![0u8; 2 << 20])
        .build();
    assert!(result.is_err());
}
