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

/// Runs `vcpu` until the guest's counter in `vm`'s memory has passed
/// `past`, then stops it from another thread. Waiting for the guest's own
/// progress, not for a time, is what makes "it ran" certain on a loaded
/// host (a stop sent before the vCPU entered the guest would end a run
/// that never happened).
fn run_past_then_stop(vm: &Vm, vcpu: &mut Vcpu, past: u64) {
    let stop = StopSignal::new();
    let remote = stop.clone();
    let report = thread::scope(|scope| {
        scope.spawn(move || {
            let give_up = Instant::now() + DEADLINE;
            while counter_in_memory(vm) <= past && Instant::now() < give_up {
                thread::sleep(Duration::from_millis(1));
            }
            remote.stop();
        });
        vcpu.run_until_stopped(
            Instant::now() + 2 * DEADLINE,
            Some(&stop),
            &mut OpenBus,
            |_| ephemeral_vm::Flow::Continue,
        )
        .unwrap()
    });
    assert_eq!(report.end, RunEnd::Stopped, "{report:?}");
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
    run_past_then_stop(&vm, &mut vcpu, 0);
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

    run_past_then_stop(&vm_b, &mut vcpus_b[0], at_snapshot);
    let b = consistent(&vm_b, &vcpus_b[0]);
    assert!(b > at_snapshot, "B continued from {at_snapshot}: {b}");
    assert_eq!(
        counter_in_memory(&vm_c),
        at_snapshot,
        "C does not see B's writes"
    );

    run_past_then_stop(&vm_c, &mut vcpus_c[0], at_snapshot);
    let c = consistent(&vm_c, &vcpus_c[0]);
    assert!(c > at_snapshot, "C continued from {at_snapshot}: {c}");
    assert_eq!(counter_in_memory(&vm_b), b, "B does not see C's writes");

    // The snapshot is as it was taken, and so is the template.
    let (vm_d, _) = snapshot.restore(&kvm).unwrap();
    assert_eq!(counter_in_memory(&vm_d), at_snapshot);
    assert_eq!(counter_in_memory(&vm), at_snapshot);
    run_past_then_stop(&vm, &mut vcpu, at_snapshot);
    assert!(consistent(&vm, &vcpu) > at_snapshot, "the template runs on");
}

#[test]
fn a_snapshot_keeps_the_irqchip_pit_and_clock() {
    let (vm, mut vcpu) = boot(&counting_forever(), config());
    vm.create_pit().unwrap();
    run_past_then_stop(&vm, &mut vcpu, 0);
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
    let before = counter_in_memory(&restored);
    run_past_then_stop(&restored, &mut vcpus[0], before);
    let first = restored.save_state().unwrap().clock;
    let (was, is) = (saved.clock.clock, first.clock);
    println!("kvmclock: saved {was} ns, restored and run {is} ns");
    assert!(
        is >= was && is < was + 10_000_000_000,
        "saved {was} ns, restored and run {is} ns"
    );
    let before = counter_in_memory(&restored);
    run_past_then_stop(&restored, &mut vcpus[0], before);
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
    // It ended because of the stop, not at the deadline.
    assert!(report.elapsed < DEADLINE, "{report:?}");
}
