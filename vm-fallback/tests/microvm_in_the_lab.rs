//! Our microVM on a real hardware KVM (AMD SVM, emulated by QEMU in the
//! lab): our VMM boots the guest kernel built by
//! `vm-fallback/guest/build-kernel` with an initramfs we generate, to our
//! init, which reports and reboots (the VMM's "done"); 256 KiB go through
//! the virtio console and come back intact; two boots draw different
//! random bytes; a guest that never ends is stopped at its deadline. One
//! lab boot runs all of it. Never skipped: without the lab or the guest
//! kernel it fails with the reason.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The nested cargo's target folder (shared with the lab's own test).
fn target_dir() -> PathBuf {
    std::env::var_os("EPHEMERAL_LAB_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/ephemeral/target-vm-lab"))
}

/// Builds the VMM example and the guest init for musl (static).
fn build_guest_programs() -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--locked", "--release", "-p", "ephemeral-vm"])
        .args([
            "--manifest-path",
            concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"),
        ])
        .args(["--target", "x86_64-unknown-linux-musl"])
        .args(["--example", "boot", "--bin", "ephemeral-guest-init"])
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("CARGO_MAKEFLAGS")
        .env_remove("MAKEFLAGS")
        .stdin(Stdio::null())
        .status()
        .expect("cannot run cargo");
    assert!(status.success(), "the musl build failed");
    target_dir().join("x86_64-unknown-linux-musl/release")
}

fn section<'a>(stdout: &'a str, label: &str) -> Vec<&'a str> {
    let begin = format!("==> {label}");
    let end = format!("<== {label}: exit ");
    let mut out = Vec::new();
    for line in stdout.lines().skip_while(|l| *l != begin).skip(1) {
        out.push(line);
        if line.starts_with(&end) {
            break;
        }
    }
    out
}

fn file(host: &Path, guest: &str) -> String {
    format!("{}:{guest}", host.display())
}

#[test]
fn a_microvm_boots_talks_and_stops_under_amd_svm() {
    let kernel = ephemeral_vm::linux::default_kernel();
    assert!(
        kernel.is_file(),
        "no guest kernel at {}: run vm-fallback/guest/build-kernel",
        kernel.display()
    );
    let built = build_guest_programs();
    let script = tempfile_script(
        "run() { label=$1; shift; echo \"==> $label\"; \"$@\"; echo \"<== $label: exit $?\"; }\n\
         run boot /boot /vmlinux /guest-init 120\n\
         run again /boot /vmlinux /guest-init 120\n\
         EPHEMERAL_ECHO=262144 run echo /boot /vmlinux /guest-init 120\n\
         EPHEMERAL_GUEST_CMDLINE='console=ttyS0 quiet reboot=k panic=-1 pci=off ephemeral.spin=1' \
         run spin /boot /vmlinux /guest-init 10\n",
    );
    let run = Command::new(env!("CARGO_BIN_EXE_ephemeral-lab"))
        .args(["run", "--timeout", "900"])
        .args(["--file", &file(&kernel, "/vmlinux")])
        .args(["--file", &file(&built.join("examples/boot"), "/boot")])
        .args([
            "--file",
            &file(&built.join("ephemeral-guest-init"), "/guest-init"),
        ])
        .args(["--script", script.to_str().unwrap()])
        .output()
        .expect("cannot start ephemeral-lab");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    assert!(
        run.status.success() || stdout.contains("<== spin"),
        "the lab failed: {stderr}"
    );

    let random = |label: &str| {
        let lines = section(&stdout, label);
        assert!(
            lines.contains(&"ephemeral-guest: init running as pid 1"),
            "{label}: {lines:?}"
        );
        assert!(
            lines.contains(&"ephemeral-guest: done"),
            "{label}: {lines:?}"
        );
        assert!(
            lines.iter().any(|l| l.starts_with("--- Reset after")),
            "{label}: {lines:?}"
        );
        assert_eq!(lines.last(), Some(&format!("<== {label}: exit 0").as_str()));
        lines
            .iter()
            .find(|l| l.starts_with("ephemeral-guest: getrandom: 8 bytes"))
            .map(|l| l.to_string())
            .unwrap_or_else(|| panic!("{label}: no random bytes"))
    };
    assert_ne!(
        random("boot"),
        random("again"),
        "two boots drew the same bytes"
    );

    let echo = section(&stdout, "echo");
    assert!(
        echo.iter()
            .any(|l| l.contains("262144 bytes to the guest, 262144 back")
                || l.contains("262144 bytes to the guest, 262145 back")),
        "{echo:?}"
    );
    assert!(echo.iter().any(|l| l.ends_with("echo intact")), "{echo:?}");
    assert_eq!(echo.last(), Some(&"<== echo: exit 0"));

    let spin = section(&stdout, "spin");
    assert!(spin.contains(&"ephemeral-guest: spinning"), "{spin:?}");
    assert!(
        spin.iter().any(|l| l.starts_with("--- Deadline after 1")),
        "{spin:?}"
    );
    assert_eq!(spin.last(), Some(&"<== spin: exit 1"));
}

fn tempfile_script(text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("microvm-lab-{}.sh", std::process::id()));
    std::fs::write(&path, text).expect("write the lab script");
    path
}
