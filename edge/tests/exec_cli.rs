//! `ephemeral exec` as a user runs it: output streamed, exit status passed
//! through, state shared between `--` commands, bad input answered in one
//! plain line.

use std::process::{Command, Output};

/// The compiled-component cache: `./dev`'s shared one when it names one.
fn cache() -> std::path::PathBuf {
    std::env::var_os("EPHEMERAL_CACHE_DIR")
        .map(Into::into)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-cache"))
}

fn ephemeral(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ephemeral"))
        .args(args)
        .env("EPHEMERAL_CACHE_DIR", cache())
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
fn default_isolation_is_the_jail_here() {
    // These machines run the tests as root with cgroups: workers are jailed.
    let out = ephemeral(&["exec", "--", "echo hi"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "hi\n");
    assert!(
        !text(&out.stderr).contains("isolation wasm"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn jailed_exec_streams_output_keeps_state_and_passes_the_status() {
    let out = ephemeral(&[
        "exec",
        "--isolation",
        "jail",
        "--",
        "mkdir -p sub && cd sub && export X=42",
        "--",
        "echo $X; pwd; python3 -c 'print(6*7)'; exit 3",
    ]);
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("42\n/tmp/ephemeral-run-"), "{stdout}");
    assert!(stdout.ends_with("/scratch/sub\n42\n"), "{stdout}");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
}

#[test]
fn jailed_exec_reports_a_timeout() {
    let out = ephemeral(&[
        "exec",
        "--isolation",
        "jail",
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
        &["exec", "--memory-mib", "0", "--", "true"],
        &["frobnicate"],
    ] {
        let out = ephemeral(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        // One plain line that names what is wrong (finding G12).
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("ephemeral: "), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}");
    }
}

#[test]
fn demo_shows_the_seed_run() {
    let out = ephemeral(&["demo"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // The seed page's "MicroVM" lane is "Sandbox" where the run's isolation
    // is not a microVM (this host's KVM may not run one).
    let (lane, noun) = if stdout.contains("isolation kvm+wasm") {
        ("MicroVM", "microVM")
    } else {
        ("Sandbox", "sandbox")
    };
    let ready = format!("{lane:<14} {noun} ready");
    let started = format!("{lane:<14} worker started · shell on · web off");
    let destroyed = format!("{lane:<14} {noun} destroyed");
    // Every lane of SEED.md, in order, with the real outputs.
    let in_order = [
        "Waiting        reserve budget $0.04",
        ready.as_str(),
        started.as_str(),
        "Model          call 1",
        "$ pwd; whoami",
        "| /tmp/ephemeral-run-",
        "| worker",
        "$ command -v curl && curl -sS -m 8 https://example.com",
        "! curl: (6) Could not resolve host: example.com",
        "$ printf '%s\\n' '#!/usr/bin/env python3'",
        "| 2 3 5 7 11 13 17 19 23 29 31 37 41 43 47",
        "$ printf 'sandbox proof\\n' > /tmp/proof.txt && ls -l /tmp/proof.txt",
        "| -rw-r--r-- 1 worker worker 14 ",
        "Model          call 3",
        destroyed.as_str(),
        "Success        3 model calls",
        "- Prime script output: 2 3 5 7 11 13 17 19 23 29 31 37 41 43 47",
        "- whoami:worker;pwd:/tmp/ephemeral-run-",
        "- curl error: curl: (6) Could not resolve host: example.com",
        "Destroy worker charged $0.0",
        "cost: model $0.0",
    ];
    let mut at = 0;
    for expected in in_order {
        let found = stdout[at..].find(expected).map(|i| i + at);
        assert!(
            found.is_some(),
            "missing (in order) {expected:?} in:\n{stdout}"
        );
        at = found.unwrap_or(at);
    }
    assert!(
        stdout.contains("scripted/seed"),
        "the scripted model says what it is"
    );
}

#[test]
fn demo_json_prints_one_event_per_line() {
    let out = ephemeral(&["demo", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let events: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    assert_eq!(
        events.first().map(|e| e["type"].clone()),
        Some("budget.reserved".into())
    );
    assert_eq!(
        events.last().map(|e| e["type"].clone()),
        Some("worker.destroyed".into())
    );
    assert!(events.iter().any(|e| e["type"] == "run.succeeded"));
}

#[test]
fn a_closed_stdout_is_not_a_crash() {
    use std::io::Read;
    let cache = cache();
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

#[test]
fn doctor_reports_each_layer_in_plain_words() {
    let out = ephemeral(&["doctor"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for layer in [
        "kvm",
        "namespaces",
        "seccomp",
        "cgroups",
        "landlock",
        "jail",
        "guest",
        // The tests run as root with cgroups: runs are jailed here.
        "isolation this build uses: jail+wasm",
    ] {
        assert!(stdout.contains(layer), "{layer} missing in:\n{stdout}");
    }
    if ephemeral_vm::KvmKind::detect() == ephemeral_vm::KvmKind::Pvm {
        assert!(
            stdout.contains("kvm+wasm: not here: /dev/kvm here is PVM"),
            "{stdout}"
        );
    }
}

/// On a host whose KVM cannot run the microVM (PVM here), asking the
/// server for `kvm` is refused at start, in one line that says why; it
/// never silently serves a weaker isolation.
#[test]
fn serve_refuses_kvm_where_the_microvm_cannot_run_and_says_why() {
    if ephemeral_vm::KvmKind::detect() != ephemeral_vm::KvmKind::Pvm {
        println!("this host's KVM is not PVM: the refusal is not expected here");
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let data = data.path().to_str().unwrap();
    for flags in [["--isolation", "kvm"], ["--min-isolation", "kvm"]] {
        let mut args = vec!["serve", "--listen", "127.0.0.1:0", "--data", data];
        args.extend(flags);
        let out = ephemeral(&args);
        let stderr = text(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{flags:?}: {stderr}");
        assert_ne!(
            out.status.code(),
            Some(101),
            "{flags:?}: panicked: {stderr}"
        );
        assert!(stderr.contains("kvm+wasm"), "{flags:?}: {stderr}");
        assert!(stderr.contains("PVM"), "{flags:?}: {stderr}");
    }
}
