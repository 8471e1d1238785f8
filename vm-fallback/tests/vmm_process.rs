//! The VMM process (`ephemeral-vmm`) on this host: its seccomp list still
//! lets a guest run while refusing what a compromised VMM would try; a
//! Linux guest's snapshot written to disk restores in a fresh VM; bad
//! input gets one plain line and an exit code, never a panic.
//!
//! Serving runs from a template needs a Linux guest that runs, so it is
//! proven in the lab (`microvm_runs_the_seed.rs`); here PVM stops Linux
//! early, which is enough to freeze, write, read and restore it.

use std::process::Command;
use std::time::{Duration, Instant};

use ephemeral_vm::linux::{GuestEnd, LinuxGuest, LinuxSnapshot, LinuxVm, default_kernel};
use ephemeral_vm::{Kvm, StopSignal};

fn vmm(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ephemeral-vmm"))
        .args(args)
        .output()
        .expect("run ephemeral-vmm");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn under_the_vmm_seccomp_list_a_guest_runs_and_escapes_are_refused() {
    let (code, stdout, stderr) = vmm(&["probe"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains("guest under the VMM's seccomp list: Ok(201)"),
        "{stdout}"
    );
    for refused in ["open", "socket", "execve", "ptrace", "ioctl TCGETS"] {
        assert!(
            stdout.contains(&format!("{refused}: refused (ENOSYS)")),
            "{stdout}"
        );
    }
}

#[test]
fn bad_input_gets_one_line_and_an_exit_code() {
    let (code, _, stderr) = vmm(&[]);
    assert_eq!(code, 2);
    assert!(stderr.starts_with("usage: ephemeral-vmm"), "{stderr}");

    let (code, _, stderr) = vmm(&["serve", "--snapshot", "/nonexistent/snapshot"]);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("/nonexistent/snapshot/state"), "{stderr}");

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("state"), b"not postcard").unwrap();
    std::fs::write(dir.path().join("memory"), b"").unwrap();
    let path = dir.path().to_str().unwrap();
    let (code, _, stderr) = vmm(&["serve", "--snapshot", path]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("not a snapshot this build can read"),
        "{stderr}"
    );

    let (code, _, stderr) = vmm(&["serve", "--snapshot", path, "--fd", "three"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("--fd"), "{stderr}");

    let (code, _, stderr) = vmm(&["template", "--out", path]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("--worker is required"), "{stderr}");
}

#[test]
fn a_linux_snapshot_written_to_disk_restores_in_a_fresh_vm() {
    let kernel = default_kernel();
    assert!(kernel.is_file(), "no guest kernel at {}", kernel.display());
    let kvm = Kvm::open().expect("/dev/kvm");
    let guest = LinuxGuest {
        kernel,
        initramfs: ephemeral_vm::initramfs::build(b"not run", &[]).unwrap(),
        cmdline: "console=ttyS0 reboot=k panic=-1 pci=off".into(),
        memory_mib: 64,
        disk: None,
    };
    let mut vm = LinuxVm::new(&kvm, &guest, Box::new(std::io::sink())).unwrap();
    assert!(vm.ioeventfd(), "queue notifications go through ioeventfds");
    // Run a little (on PVM the kernel stops in the emulator; on hardware
    // KVM it boots on), then stop it from another thread.
    let stop = StopSignal::new();
    let remote = stop.clone();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        remote.stop();
    });
    let end = vm
        .run_until_stopped(Instant::now() + Duration::from_secs(10), &stop)
        .unwrap();
    stopper.join().unwrap();
    assert_eq!(end, GuestEnd::Stopped);
    let mut snapshot = vm.snapshot().unwrap();
    snapshot.set_replay(b"ready".to_vec());
    let (size, stored) = snapshot.memory();
    assert_eq!(size, 64 << 20);
    assert!(stored > 0 && stored < size, "{stored} of {size}");

    let dir = tempfile::tempdir().unwrap();
    snapshot.save(dir.path()).unwrap();
    let on_disk = std::os::unix::fs::MetadataExt::blocks(
        &std::fs::metadata(dir.path().join("memory")).unwrap(),
    ) * 512;
    assert!(
        on_disk <= stored + (1 << 20),
        "holes kept: {on_disk} vs {stored}"
    );
    let loaded = LinuxSnapshot::load(dir.path()).unwrap();
    assert_eq!(loaded.replay(), b"ready");
    assert_eq!(loaded.memory().0, size);

    let (mut restored, report) =
        LinuxVm::restore(&kvm, &loaded, Box::new(std::io::sink())).unwrap();
    assert!(report.ready < Duration::from_secs(1), "{report:?}");
    assert!(restored.ioeventfd());
    let again = StopSignal::new();
    again.stop();
    // Restored state is accepted by KVM and the vCPU enters (and is
    // stopped at once): every piece went in.
    let end = restored
        .run_until_stopped(Instant::now() + Duration::from_secs(5), &again)
        .unwrap();
    assert_eq!(end, GuestEnd::Stopped);
}
