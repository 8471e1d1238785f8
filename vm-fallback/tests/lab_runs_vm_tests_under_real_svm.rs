//! On a real hardware KVM — AMD SVM with nested paging, emulated by QEMU's
//! TCG in the lab (`vm-fallback/lab/`) — the self-test reports AMD SVM and
//! passes, and the vCPU state and port I/O tests pass, all in one boot.
//!
//! Never skipped: when the lab cannot run, this fails with its reason. The
//! first run fetches QEMU, Debian's kernel and busybox into
//! `/var/cache/ephemeral/lab` and builds the musl binaries in
//! `/var/cache/ephemeral/target-musl` (a nested cargo with a target
//! folder of its own, so it never waits on this run's lock); later runs
//! take about 15 s.

use std::process::Command;

mod support;

use support::section;

/// A whole lab run, musl build included, must end within this.
const TIMEOUT_SECS: &str = "900";

#[test]
fn self_test_and_vm_tests_pass_under_amd_svm_in_the_lab() {
    let run = Command::new(env!("CARGO_BIN_EXE_ephemeral-lab"))
        .args([
            "vm-tests",
            "--timeout",
            TIMEOUT_SECS,
            "--retry-stalled",
            "1",
        ])
        .args(["--example", "selftest"])
        .args(["--test", "vcpu_state_roundtrip"])
        .args(["--test", "port_io_exits"])
        .args(["--test", "snapshot_restore"])
        .args(["--", "--test-threads=1"])
        .output()
        .expect("cannot start ephemeral-lab");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    let reason = failure_reason(&stdout, &stderr);
    assert!(
        run.status.success(),
        "the lab run failed ({}): {reason}",
        run.status
    );
    assert!(
        stderr.contains("(nested paging Y)"),
        "kvm_amd did not report nested paging"
    );

    let selftest = section(&stdout, "example selftest");
    let verdict = selftest
        .iter()
        .find(|l| l.contains("guest ran to done") || l.contains("failed"))
        .unwrap_or_else(|| panic!("no self-test report in {selftest:?}"));
    assert!(
        verdict.starts_with("AMD SVM (hardware virtualisation): guest ran to done"),
        "{verdict}"
    );
    assert!(verdict.contains("201 exits"), "{verdict}");
    assert_eq!(
        selftest.last(),
        Some(&"<== example selftest: exit 0"),
        "{selftest:?}"
    );
    println!("self-test under nested SVM: {verdict}");

    for test in ["vcpu_state_roundtrip", "port_io_exits", "snapshot_restore"] {
        let label = format!("test {test}");
        let lines = section(&stdout, &label);
        assert!(
            lines.iter().any(|l| l.starts_with("test result: ok.")),
            "{test}: no `test result: ok.` in {lines:?}"
        );
        assert_eq!(
            lines.last().copied(),
            Some(format!("<== {label}: exit 0").as_str()),
            "{test}"
        );
    }
}

/// Why a lab run failed: the lab's own `lab: FAILED` line, else each guest
/// section that did not exit 0 with its last lines (a failing test's
/// `panicked at` and assertion text are there).
fn failure_reason(stdout: &str, stderr: &str) -> String {
    if let Some(line) = stderr.lines().rfind(|l| l.starts_with("lab: FAILED")) {
        return line.to_owned();
    }
    let mut failed = Vec::new();
    for end in stdout
        .lines()
        .filter(|l| l.starts_with("<== ") && !l.ends_with(": exit 0"))
    {
        let label = end
            .trim_start_matches("<== ")
            .rsplit_once(": exit")
            .map_or(end, |(label, _)| label);
        let lines = section(stdout, label);
        let tail = lines[lines.len().saturating_sub(25)..].join("\n    ");
        failed.push(format!("{end}; its last lines:\n    {tail}"));
    }
    if failed.is_empty() {
        let tail: Vec<&str> = stderr.lines().rev().take(10).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return format!(
            "the lab ended without a verdict; its last words: {}",
            tail.join(" | ")
        );
    }
    failed.join("\n")
}
