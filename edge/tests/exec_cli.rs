//! `ephemeral exec` as a user runs it: output streamed, exit status passed
//! through, state shared between `--` commands, bad input answered in one
//! plain line.

use std::process::{Command, Output};

fn ephemeral(args: &[&str]) -> Output {
    let cache = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-cache");
    Command::new(env!("CARGO_BIN_EXE_ephemeral"))
        .args(args)
        .env("EPHEMERAL_CACHE_DIR", cache)
        .output()
        .expect("ephemeral runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn prints_output_and_passes_the_exit_status() {
    let out = ephemeral(&["exec", "--isolation", "wasm", "--", "echo hi; exit 3"]);
    assert_eq!(text(&out.stdout), "hi\n");
    assert_eq!(text(&out.stderr), "");
    assert_eq!(out.status.code(), Some(3));
}

#[test]
fn consecutive_commands_share_one_sandbox() {
    let out = ephemeral(&[
        "exec",
        "--isolation",
        "wasm",
        "--",
        "mkdir -p sub && cd sub && export X=42",
        "--",
        "echo $X; pwd",
    ]);
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("42\n/tmp/ephemeral-run-"), "{stdout}");
    assert!(stdout.ends_with("/scratch/sub\n"), "{stdout}");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn default_isolation_is_said_not_silent() {
    let out = ephemeral(&["exec", "--", "true"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("isolation wasm"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn timeout_is_reported() {
    let out = ephemeral(&[
        "exec",
        "--isolation",
        "wasm",
        "--timeout",
        "1",
        "--",
        "while true; do :; done",
    ]);
    assert_eq!(out.status.code(), Some(124));
    assert!(
        text(&out.stderr).contains("limit hit: command_timeout"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn unavailable_isolation_is_one_plain_line() {
    let out = ephemeral(&["exec", "--isolation", "kvm", "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("ephemeral: isolation kvm is not available"),
        "{err}"
    );
}

#[test]
fn bad_arguments_are_usage_errors() {
    for args in [
        &["exec"][..],
        &["exec", "--timeout", "0", "--", "true"],
        &["exec", "--timeout", "abc", "--", "true"],
        &["exec", "--isolation", "docker", "--", "true"],
        &["frobnicate"],
    ] {
        let out = ephemeral(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!text(&out.stderr).is_empty(), "{args:?}");
        assert!(!text(&out.stderr).contains("panicked"), "{args:?}");
    }
}

#[test]
fn demo_shows_the_seed_run() {
    let out = ephemeral(&["demo"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for expected in [
        "$ pwd; whoami",
        "| worker",
        "| /tmp/ephemeral-run-",
        "| /usr/bin/curl\n",
        "! curl: (6) Could not resolve host: example.com\n",
        "| 2 3 5 7 11 13 17 19 23 29 31 37 41 43 47\n",
        "| -rw-r--r-- 1 worker worker 14 ",
        "reserve budget $0.04",
        "microVM destroyed",
        "Success",
        "Destroy worker charged $0.0000",
    ] {
        assert!(
            stdout.contains(expected),
            "missing {expected:?} in:\n{stdout}"
        );
    }
}

#[test]
fn a_closed_stdout_is_not_a_crash() {
    use std::io::Read;
    let cache = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-cache");
    for args in [
        &["demo"][..],
        &["exec", "--isolation", "wasm", "--", "seq 100000"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ephemeral"))
            .args(args)
            .env("EPHEMERAL_CACHE_DIR", &cache)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("ephemeral runs");
        let mut first = [0u8; 16];
        let _ = child.stdout.take().expect("stdout").read(&mut first);
        let mut stderr = String::new();
        let _ = child
            .stderr
            .take()
            .expect("stderr")
            .read_to_string(&mut stderr);
        let status = child.wait().expect("exits");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_ne!(status.code(), Some(101), "{args:?}");
    }
}
