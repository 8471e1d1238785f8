//! The 64-bit boot protocol on this host's own /dev/kvm: the guest kernel
//! (built by `vm-fallback/guest/build-kernel`) is loaded, entered in long
//! mode, reads our command line and e820 map and prints them on COM1. On
//! PVM Linux stops soon after (its emulator lacks instructions the kernel
//! uses), so the deadline must end the run cleanly; on hardware KVM (and
//! in the lab) the guest runs to its init — `microvm_in_the_lab.rs`.

use std::time::{Duration, Instant};

use ephemeral_vm::linux::{GuestEnd, LinuxGuest, LinuxVm, default_kernel};
use ephemeral_vm::{Kvm, KvmKind};

#[test]
fn the_kernel_reads_our_command_line_and_memory_map() {
    let kernel = default_kernel();
    assert!(
        kernel.is_file(),
        "no guest kernel at {}: run vm-fallback/guest/build-kernel",
        kernel.display()
    );
    let kvm = Kvm::open().expect("/dev/kvm");
    let guest = LinuxGuest {
        kernel,
        initramfs: ephemeral_vm::initramfs::build(b"not run", &[]).unwrap(),
        cmdline:
            "console=ttyS0 earlyprintk=serial,ttyS0 reboot=k panic=-1 pci=off ephemeral.test=1"
                .into(),
        memory_mib: 128,
        disk: None,
    };
    let mut vm = LinuxVm::new(&kvm, &guest, Box::new(std::io::sink())).expect("the VM is built");
    let started = Instant::now();
    let end = vm
        .run_until(started + Duration::from_secs(3))
        .expect("runs");
    let console = vm.console();
    assert!(console.contains("Linux version 6.1"), "{console}");
    assert!(console.contains("ephemeral.test=1"), "{console}");
    assert!(
        console.contains("BIOS-e820: [mem 0x0000000000100000-0x0000000007ffffff] usable"),
        "{console}"
    );
    if kvm.kind() == KvmKind::Pvm {
        assert_eq!(end, GuestEnd::Deadline, "{console}");
        // Ended by its deadline's mechanism, not by the test giving up: a
        // generous bound, since a loaded host is slow to wake.
        assert!(started.elapsed() < Duration::from_secs(30));
    } else {
        assert_ne!(end, GuestEnd::Deadline, "{console}");
    }
}
