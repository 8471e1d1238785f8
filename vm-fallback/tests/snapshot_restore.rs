//! A running guest (irqchip, PIT and all) stopped from another thread,
//! snapshotted, and restored into fresh VMs: each continues where the
//! template stopped, the restored VMs share the snapshot's memory
//! copy-on-write and never see each other's writes, and the snapshot
//! itself does not change.

mod common;

use std::thread;
use std::time::{Duration, Instant};

use common::{COUNTER_ADDR, DEADLINE, assemble, boot, counter_in_memory};
use ephemeral_vm::{Kvm, OpenBus, RunEnd, StopSignal, Vcpu, Vm, VmConfig, VmSnapshot};
use iced_x86::code_asm::*;

/// Counts forever without an exit: `rbx += 1; [COUNTER_ADDR] = rbx`.
/// Only a stop from outside ends it.
fn counting_forever() -> Vec<u8> {
    assemble(|a| {
        let mut step = a.create_label();
        a.xor(ebx, ebx)?;
        a.mov(rdi, COUNTER_ADDR)?;
        a.set_label(&mut step)?;
        a.inc(rbx)?;
        a.mov(qword_ptr(rdi), rbx)?;
        a.jmp(step)
    })
}

fn config() -> VmConfig {
    VmConfig {
        irqchip: true,
        ..VmConfig::default()
    }
}

/// Runs `vcpu` for about `run_for`, then stops it from another thread.
fn run_then_stop(vcpu: &mut Vcpu, run_for: Duration) {
    let stop = StopSignal::new();
    let remote = stop.clone();
    let stopper = thread::spawn(move || {
        thread::sleep(run_for);
        remote.stop();
    });
    let report = vcpu
        .run_until_stopped(Instant::now() + DEADLINE, Some(&stop), &mut OpenBus, |_| {
            ephemeral_vm::Flow::Continue
        })
        .unwrap();
    stopper.join().unwrap();
    assert_eq!(report.end, RunEnd::Stopped, "{report:?}");
    assert!(report.elapsed < DEADLINE / 2, "{report:?}");
}

/// The guest's register and memory copies of the counter agree: it was
/// stopped between instructions and nothing was lost.
fn consistent(vm: &Vm, vcpu: &Vcpu) -> u64 {
    let register = vcpu.regs().unwrap().rbx;
    let memory = counter_in_memory(vm);
    assert!(
        memory == register || memory + 1 == register,
        "register {register}, memory {memory}"
    );
    memory
}

#[test]
fn a_stopped_guest_restores_twice_and_each_copy_continues_on_its_own() {
    let (vm, mut vcpu) = boot(&counting_forever(), config());
    vm.create_pit().unwrap();
    run_then_stop(&mut vcpu, Duration::from_millis(30));
    let at_snapshot = consistent(&vm, &vcpu);
    assert!(at_snapshot > 0, "the guest ran");
    let snapshot = VmSnapshot::take(&vm, std::slice::from_mut(&mut vcpu)).unwrap();
    assert!(
        snapshot.memory_stored() < snapshot.memory_size() / 4,
        "only touched pages are stored: {} of {}",
        snapshot.memory_stored(),
        snapshot.memory_size()
    );

    let kvm = Kvm::open().unwrap();
    let (vm_b, mut vcpus_b) = snapshot.restore(&kvm).unwrap();
    let (vm_c, mut vcpus_c) = snapshot.restore(&kvm).unwrap();
    assert_eq!(counter_in_memory(&vm_b), at_snapshot);
    assert_eq!(vcpus_b[0].regs().unwrap().rbx, vcpu.regs().unwrap().rbx);

    run_then_stop(&mut vcpus_b[0], Duration::from_millis(30));
    let b = consistent(&vm_b, &vcpus_b[0]);
    assert!(b > at_snapshot, "B continued from {at_snapshot}: {b}");
    assert_eq!(
        counter_in_memory(&vm_c),
        at_snapshot,
        "C does not see B's writes"
    );

    run_then_stop(&mut vcpus_c[0], Duration::from_millis(10));
    let c = consistent(&vm_c, &vcpus_c[0]);
    assert!(c > at_snapshot, "C continued from {at_snapshot}: {c}");
    assert_eq!(counter_in_memory(&vm_b), b, "B does not see C's writes");

    // The snapshot is as it was taken, and so is the template.
    let (vm_d, _) = snapshot.restore(&kvm).unwrap();
    assert_eq!(counter_in_memory(&vm_d), at_snapshot);
    assert_eq!(counter_in_memory(&vm), at_snapshot);
    run_then_stop(&mut vcpu, Duration::from_millis(5));
    assert!(consistent(&vm, &vcpu) > at_snapshot, "the template runs on");
}

#[test]
fn a_snapshot_keeps_the_irqchip_pit_and_clock() {
    let (vm, mut vcpu) = boot(&counting_forever(), config());
    vm.create_pit().unwrap();
    run_then_stop(&mut vcpu, Duration::from_millis(5));
    let snapshot = VmSnapshot::take(&vm, std::slice::from_mut(&mut vcpu)).unwrap();
    let saved = vm.save_state().unwrap();
    assert_eq!(saved.irqchips.len(), 3, "PIC master, PIC slave, IOAPIC");
    assert!(saved.pit.is_some());
    let (restored, mut vcpus) = snapshot.restore(&Kvm::open().unwrap()).unwrap();
    let again = restored.save_state().unwrap();
    for (a, b) in saved.irqchips.iter().zip(&again.irqchips) {
        // SAFETY: plain-data unions of the same chip, read as bytes.
        let bytes = |c: &kvm_bindings::kvm_irqchip| unsafe { c.chip.dummy };
        assert_eq!(a.chip_id, b.chip_id);
        assert_eq!(bytes(a), bytes(b), "chip {}", a.chip_id);
    }
    assert_eq!(
        saved.pit.unwrap().channels[0].count,
        again.pit.unwrap().channels[0].count
    );
    // The clock continues from the snapshot (plus the wall time since):
    // not from zero, never back. KVM computes it from a master clock it
    // refreshes when a vCPU next enters, so it is read after the restored
    // guest ran a little.
    run_then_stop(&mut vcpus[0], Duration::from_millis(5));
    let first = restored.save_state().unwrap().clock;
    let (was, is) = (saved.clock.clock, first.clock);
    println!("kvmclock: saved {was} ns, restored and run {is} ns");
    assert!(
        is >= was && is < was + 10_000_000_000,
        "saved {was} ns, restored and run {is} ns"
    );
    run_then_stop(&mut vcpus[0], Duration::from_millis(5));
    let second = restored.save_state().unwrap().clock;
    assert!(second.clock > first.clock, "{first:?} then {second:?}");
}

#[test]
fn a_stop_before_the_run_starts_returns_at_once() {
    let (_vm, mut vcpu) = boot(&counting_forever(), VmConfig::default());
    let stop = StopSignal::new();
    stop.stop();
    let report = vcpu
        .run_until_stopped(Instant::now() + DEADLINE, Some(&stop), &mut OpenBus, |_| {
            ephemeral_vm::Flow::Continue
        })
        .unwrap();
    assert_eq!(report.end, RunEnd::Stopped);
    assert!(report.elapsed < Duration::from_secs(1));
}
