//! A guest stopped halfway, its vCPU state saved and its memory copied,
//! continues in a fresh VM exactly where it left off.

mod common;

use std::time::Instant;

use common::{
    COUNTER_ADDR, DEADLINE, DONE_PORT, REPORT_PORT, assemble, boot, counter_in_memory, reported,
    run_to_done,
};
use ephemeral_vm::arch::x86_64::msr::MSR_LSTAR;
use ephemeral_vm::{Exit, Flow, Kvm, OpenBus, RunEnd, Vcpu, VcpuState, Vm, VmConfig};
use iced_x86::code_asm::*;

/// Steps the counting guest takes in all.
const STEPS: u32 = 100;
/// Steps run in the first VM before the state is moved.
const HALFWAY: u64 = 40;
/// Each step: rbx += 1, memory counter += 1, `out REPORT_PORT, eax` with
/// eax = rbx. Also sets LSTAR once, so an MSR has a value to carry over.
fn counting_guest() -> Vec<u8> {
    assemble(|a| {
        let mut step = a.create_label();
        a.mov(ecx, MSR_LSTAR)?;
        a.mov(eax, 0xDEAD_0000u32)?;
        a.mov(edx, 0xFFFF_FFFFu32)?;
        a.wrmsr()?;
        a.xor(ebx, ebx)?;
        a.mov(rdi, COUNTER_ADDR)?;
        a.set_label(&mut step)?;
        a.inc(rbx)?;
        a.inc(qword_ptr(rdi))?;
        a.mov(eax, ebx)?;
        a.out(u32::from(REPORT_PORT), eax)?;
        a.cmp(rbx, STEPS as i32)?;
        a.jne(step)?;
        a.out(u32::from(DONE_PORT), al)?;
        a.hlt()
    })
}

/// Runs `vcpu` until it has reported `n` values; returns them.
fn run_steps(vcpu: &mut Vcpu, n: u64) -> Vec<u64> {
    let mut exits = Vec::new();
    let report = vcpu
        .run_until(Instant::now() + DEADLINE, &mut OpenBus, |exit| {
            exits.push(exit.clone());
            if reported(&exits).len() as u64 == n {
                Flow::Stop
            } else {
                Flow::Continue
            }
        })
        .unwrap();
    assert!(
        matches!(report.end, RunEnd::Exit(Exit::IoOut { .. })),
        "{report:?}"
    );
    reported(&exits)
}

/// Saves `source`'s vCPU, copies its memory into a fresh VM with the same
/// config, restores there.
fn move_to_new_vm(source_vm: &Vm, source: &mut Vcpu, config: VmConfig) -> (Vm, Vcpu, VcpuState) {
    let state = VcpuState::save(source).unwrap();
    for s in &state.skipped {
        println!("not saved: {} ({})", s.piece, s.reason);
    }
    let kvm = Kvm::open().unwrap();
    let vm = Vm::new(&kvm, config).unwrap();
    vm.memory().copy_from(source_vm.memory()).unwrap();
    let vcpu = vm.create_vcpu(0).unwrap();
    state.restore(&vcpu).unwrap();
    (vm, vcpu, state)
}

fn roundtrip(config: VmConfig) {
    let (vm_a, mut vcpu_a) = boot(&counting_guest(), config);
    let first = run_steps(&mut vcpu_a, HALFWAY);
    assert_eq!(first, (1..=HALFWAY).collect::<Vec<_>>());

    let (vm_b, mut vcpu_b, state) = move_to_new_vm(&vm_a, &mut vcpu_a, config);
    assert_eq!(state.regs.rbx, HALFWAY);
    assert_eq!(state.lapic.is_some(), config.irqchip);
    assert_eq!(counter_in_memory(&vm_b), HALFWAY);
    let rest = run_to_done(&mut vcpu_b, &mut OpenBus);
    assert_eq!(
        reported(&rest),
        (HALFWAY + 1..=u64::from(STEPS)).collect::<Vec<_>>(),
        "the counter must continue exactly (saved rip {:#x})",
        state.regs.rip
    );
    assert_eq!(counter_in_memory(&vm_b), u64::from(STEPS));

    // What was restored reads back the same from the new vCPU's registers,
    // at the point of restore.
    let (_vm_c, vcpu_c, _) = move_to_new_vm(&vm_a, &mut vcpu_a, config);
    let again = VcpuState::save(&mut { vcpu_c }).unwrap();
    assert_eq!(again.regs, state.regs);
    assert_eq!(again.sregs, state.sregs);
    let lstar = |s: &VcpuState| s.msrs.iter().find(|m| m.index == MSR_LSTAR).map(|m| m.data);
    if lstar(&state).is_some() {
        assert_eq!(lstar(&state), Some(0xFFFF_FFFF_DEAD_0000));
        assert_eq!(lstar(&again), lstar(&state));
    }

    // The original, left where it was saved, finishes the same way.
    let rest_a = run_to_done(&mut vcpu_a, &mut OpenBus);
    assert_eq!(reported(&rest_a), reported(&rest));
}

#[test]
fn counter_continues_exactly_in_a_fresh_vm() {
    roundtrip(VmConfig::default());
}

#[test]
fn counter_continues_exactly_with_an_irqchip_when_kvm_has_one() {
    let kvm = Kvm::open().unwrap();
    let config = VmConfig {
        irqchip: true,
        ..VmConfig::default()
    };
    if let Err(e) = Vm::new(&kvm, config) {
        println!("skipped: this KVM ({}) has no irqchip: {e}", kvm.kind());
        return;
    }
    roundtrip(config);
}

#[test]
fn every_piece_kvm_offers_is_saved_and_skips_are_explained() {
    let (vm, mut vcpu) = boot(&counting_guest(), VmConfig::default());
    run_steps(&mut vcpu, 3);
    let state = VcpuState::save(&mut vcpu).unwrap();
    let caps = vm.capabilities();
    assert_eq!(
        state.mp_state.is_some(),
        caps.mp_state && !skipped(&state, "mp_state")
    );
    assert_eq!(state.xcrs.is_some(), caps.xcrs && !skipped(&state, "xcrs"));
    assert_eq!(
        state.events.is_some(),
        caps.vcpu_events && !skipped(&state, "vcpu_events")
    );
    assert!(state.lapic.is_none(), "no irqchip, no local APIC");
    assert!(skipped(&state, "lapic"));
    println!(
        "saved {} of {} MSRs; skipped: {:?}",
        state.msrs.len(),
        vm.saved_msrs().len(),
        state.skipped
    );
    assert!(state.skipped.iter().all(|s| !s.reason.is_empty()));
}

fn skipped(state: &VcpuState, piece: &str) -> bool {
    state.skipped.iter().any(|s| s.piece == piece)
}
