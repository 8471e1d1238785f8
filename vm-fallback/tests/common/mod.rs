//! Shared by the integration tests: assembling a guest and booting it.

#![allow(dead_code)] // each test binary uses a different part

use std::time::{Duration, Instant};

use ephemeral_vm::{Bus, Exit, Flow, Kvm, RunEnd, Vcpu, Vm, VmConfig};
use iced_x86::code_asm::CodeAssembler;

/// Port test guests report values on (the self-test's data port).
pub const REPORT_PORT: u16 = ephemeral_vm::selftest::DATA_PORT;
/// Port test guests write to when finished.
pub const DONE_PORT: u16 = ephemeral_vm::selftest::DONE_PORT;
/// Where counting test guests keep their counter in memory.
pub const COUNTER_ADDR: u64 = ephemeral_vm::arch::x86_64::layout::DATA_START;
/// Generous deadline for any test guest: they finish in milliseconds.
pub const DEADLINE: Duration = Duration::from_secs(5);

/// Assembles 64-bit code written by `build`.
pub fn assemble(
    build: impl FnOnce(&mut CodeAssembler) -> Result<(), iced_x86::IcedError>,
) -> Vec<u8> {
    let mut a = CodeAssembler::new(64).unwrap();
    build(&mut a).unwrap();
    a.assemble(ephemeral_vm::arch::x86_64::layout::CODE_START)
        .unwrap()
}

/// A VM with `program` loaded and vCPU 0 at its first instruction.
pub fn boot(program: &[u8], config: VmConfig) -> (Vm, Vcpu) {
    let kvm = Kvm::open().unwrap();
    let vm = Vm::new(&kvm, config).unwrap();
    let entry = vm.load_program(program).unwrap();
    let vcpu = vm.create_vcpu(0).unwrap();
    vcpu.enter_long_mode(entry).unwrap();
    (vm, vcpu)
}

/// Runs until the guest writes to [`DONE_PORT`]; returns every exit before
/// that one. Panics on timeout or any fatal exit.
pub fn run_to_done(vcpu: &mut Vcpu, bus: &mut dyn Bus) -> Vec<Exit> {
    let mut exits = Vec::new();
    let report = vcpu
        .run_until(Instant::now() + DEADLINE, bus, |exit| {
            if matches!(exit, Exit::IoOut { port, .. } if *port == DONE_PORT) {
                return Flow::Stop;
            }
            exits.push(exit.clone());
            Flow::Continue
        })
        .unwrap();
    match report.end {
        RunEnd::Exit(Exit::IoOut { port, .. }) if port == DONE_PORT => exits,
        other => panic!("guest did not reach done: {other:?} after {exits:?}"),
    }
}

/// The values of `out REPORT_PORT` exits, little-endian, in order.
pub fn reported(exits: &[Exit]) -> Vec<u64> {
    exits
        .iter()
        .filter_map(|e| match e {
            Exit::IoOut { port, data } if *port == REPORT_PORT => {
                let mut bytes = [0u8; 8];
                bytes[..data.len()].copy_from_slice(data);
                Some(u64::from_le_bytes(bytes))
            }
            _ => None,
        })
        .collect()
}

/// The 64-bit counter a counting guest keeps at [`COUNTER_ADDR`].
pub fn counter_in_memory(vm: &Vm) -> u64 {
    let bytes = vm.memory().read(COUNTER_ADDR, 8).unwrap();
    u64::from_le_bytes(bytes.try_into().unwrap())
}
