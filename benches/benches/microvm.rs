//! The microVM's snapshot figures on this host: a VM restored from a
//! snapshot until its vCPU is ready, and until the guest's first exit
//! after restore; the host memory an idle restored VM costs beyond the
//! snapshot's shared pages.
//!
//! On these machines `/dev/kvm` is PVM, which runs small long-mode guests
//! but not Linux, so the guest is a small one (an `out` loop over 256 MiB
//! of RAM, 16 MiB of it holding data) with the Linux microVM's irqchip
//! and PIT. The Linux guest's restore is measured in the lab
//! (`microvm_runs_the_seed`), where it is slowed by emulation.
//!
//! `cargo bench -p ephemeral-benches --bench microvm` (add `-- --test` for
//! a quick pass).

use std::time::{Duration, Instant};

use ephemeral_vm::{Exit, Flow, Kvm, OpenBus, RunEnd, Vcpu, Vm, VmConfig, VmSnapshot};

/// `out 0x80, al; inc rbx; mov [rdi], rbx; jmp` back to the `out`.
const GUEST: [u8; 10] = [0xE6, 0x80, 0x48, 0xFF, 0xC3, 0x48, 0x89, 0x1F, 0xEB, 0xF6];
const MEMORY_MIB: usize = 256;
/// Guest memory the template fills with data before its snapshot.
const DATA_MIB: usize = 16;
/// Restored VMs kept alive at once for the memory figure.
const IDLE_VMS: usize = 16;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--list") {
        return;
    }
    let samples = if args.iter().any(|a| a == "--test") {
        5
    } else {
        300
    };
    let kvm = Kvm::open().expect("/dev/kvm");
    println!("KVM here: {}", kvm.kind());
    let snapshot = template(&kvm);
    println!(
        "snapshot: {} MiB of guest RAM, {} MiB stored",
        snapshot.memory_size() >> 20,
        snapshot.memory_stored() >> 20
    );

    let mut ready = Vec::new();
    let mut breakdown = Vec::new();
    for _ in 0..samples {
        let t = Instant::now();
        let (vm, vcpus, times) = snapshot.restore_timed(&kvm).expect("restore");
        ready.push(t.elapsed());
        breakdown.push(times);
        drop((vcpus, vm));
    }
    report("microVM ready from snapshot (small guest, PVM)", &mut ready);
    let mean = |f: fn(&ephemeral_vm::RestoreTimes) -> Duration| {
        breakdown.iter().map(f).sum::<Duration>() / breakdown.len() as u32
    };
    println!(
        "  of which: VM + memory {:.3} ms, vCPU + state {:.3} ms, irqchip/PIT/clock {:.3} ms (means)",
        ms(mean(|t| t.vm)),
        ms(mean(|t| t.vcpus)),
        ms(mean(|t| t.vm_state))
    );

    let mut first_exit = Vec::new();
    for _ in 0..samples {
        let t = Instant::now();
        let (_vm, mut vcpus) = snapshot.restore(&kvm).expect("restore");
        run_to_first_out(&mut vcpus[0]);
        first_exit.push(t.elapsed());
    }
    report(
        "restore → the guest's first exit (small guest, PVM)",
        &mut first_exit,
    );

    idle_memory(&kvm, &snapshot);
}

/// Boots the small guest, fills DATA_MIB of its memory, runs it to its
/// first exit and snapshots it there.
fn template(kvm: &Kvm) -> VmSnapshot {
    let vm = Vm::new(
        kvm,
        VmConfig {
            memory_mib: MEMORY_MIB,
            irqchip: true,
        },
    )
    .expect("VM");
    vm.create_pit().expect("PIT");
    let data = vec![0xA5u8; 1 << 20];
    for mib in 0..DATA_MIB {
        vm.memory()
            .write(((MEMORY_MIB - DATA_MIB + mib) << 20) as u64, &data)
            .expect("fill");
    }
    let entry = vm.load_program(&GUEST).expect("load");
    let mut vcpu = vm.create_vcpu(0).expect("vCPU");
    vcpu.enter_long_mode(entry).expect("long mode");
    run_to_first_out(&mut vcpu);
    VmSnapshot::take(&vm, std::slice::from_mut(&mut vcpu)).expect("snapshot")
}

fn run_to_first_out(vcpu: &mut Vcpu) {
    let report = vcpu
        .run_until(
            Instant::now() + Duration::from_secs(5),
            &mut OpenBus,
            |exit| match exit {
                Exit::IoOut { .. } => Flow::Stop,
                _ => Flow::Continue,
            },
        )
        .expect("run");
    assert!(
        matches!(report.end, RunEnd::Exit(Exit::IoOut { port: 0x80, .. })),
        "{report:?}"
    );
}

/// Restores IDLE_VMS VMs, lets each run a little, and sums the memory
/// private to each one's guest RAM (pages it wrote: copies of the
/// snapshot's, or new ones), from /proc/self/smaps.
fn idle_memory(kvm: &Kvm, snapshot: &VmSnapshot) {
    let mut vms = Vec::new();
    for _ in 0..IDLE_VMS {
        let (vm, mut vcpus) = snapshot.restore(kvm).expect("restore");
        for _ in 0..100 {
            run_to_first_out(&mut vcpus[0]);
        }
        vms.push((vm, vcpus));
    }
    let mut private = 0;
    let mut shared = 0;
    for (vm, _) in &vms {
        let (start, _) = vm.memory().host_range().expect("guest RAM");
        let (p, s) = mapping_kib(start);
        private += p;
        shared += s;
    }
    println!(
        "host memory per idle restored VM: {} KiB private to it, {} KiB shared with the snapshot (mean of {IDLE_VMS})",
        private / IDLE_VMS as u64,
        shared / IDLE_VMS as u64
    );
}

/// `(Private_Clean + Private_Dirty, Shared_Clean + Shared_Dirty)` in KiB
/// of the mapping that starts at `start`.
fn mapping_kib(start: usize) -> (u64, u64) {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
    let header = format!("{start:x}-");
    let mut lines = smaps
        .lines()
        .skip_while(|l| !l.starts_with(&header))
        .skip(1);
    let (mut private, mut shared) = (0, 0);
    for line in lines.by_ref() {
        let mut words = line.split_whitespace();
        let (Some(key), Some(value)) = (words.next(), words.next()) else {
            break;
        };
        let Ok(kib) = value.parse::<u64>() else {
            break;
        };
        match key {
            "Private_Clean:" | "Private_Dirty:" => private += kib,
            "Shared_Clean:" | "Shared_Dirty:" => shared += kib,
            _ => {}
        }
    }
    (private, shared)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn report(what: &str, samples: &mut [Duration]) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    println!(
        "{what}: p50 {:.3} ms, p99 {:.3} ms, min {:.3} ms ({} samples)",
        ms(at(0.5)),
        ms(at(0.99)),
        ms(samples[0]),
        samples.len()
    );
}
