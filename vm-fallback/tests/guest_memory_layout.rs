//! Guest memory as both sides see it: what the guest writes at a
//! guest-physical address the host reads from guest memory, and what the
//! host writes the guest reads. Addresses with no RAM behind them reach the
//! host as MMIO.

mod common;

use common::{DONE_PORT, REPORT_PORT, assemble, boot, reported, run_to_done};
use ephemeral_vm::arch::x86_64::layout::DATA_START;
use ephemeral_vm::{Bus, Exit, OpenBus, VmConfig};
use iced_x86::code_asm::*;

const PATTERN_QWORDS: u32 = 64;
const PATTERN_SEED: u64 = 0x0123_4567_89AB_CDEF;
const PATTERN_STEP: u64 = 0x1111_1111_1111_1111;

#[test]
fn guest_writes_a_pattern_the_host_reads_back() {
    let program = assemble(|a| {
        let mut next = a.create_label();
        a.mov(rdi, DATA_START)?;
        a.mov(rax, PATTERN_SEED)?;
        a.mov(rdx, PATTERN_STEP)?;
        a.mov(ecx, PATTERN_QWORDS)?;
        a.set_label(&mut next)?;
        a.mov(qword_ptr(rdi), rax)?;
        a.add(rdi, 8)?;
        a.add(rax, rdx)?;
        a.dec(ecx)?;
        a.jnz(next)?;
        a.out(u32::from(DONE_PORT), al)?;
        a.hlt()
    });
    let (vm, mut vcpu) = boot(&program, VmConfig::default());
    run_to_done(&mut vcpu, &mut OpenBus);

    let bytes = vm
        .memory()
        .read(DATA_START, PATTERN_QWORDS as usize * 8)
        .unwrap();
    for (i, qword) in bytes.chunks_exact(8).enumerate() {
        let want = PATTERN_SEED.wrapping_add(PATTERN_STEP.wrapping_mul(i as u64));
        assert_eq!(
            u64::from_le_bytes(qword.try_into().unwrap()),
            want,
            "qword {i}"
        );
    }
    // Nothing written past the pattern.
    let after = vm
        .memory()
        .read(DATA_START + u64::from(PATTERN_QWORDS) * 8, 8)
        .unwrap();
    assert_eq!(after, [0; 8]);
}

#[test]
fn guest_sums_what_the_host_wrote_and_reports_it() {
    let values: Vec<u32> = (1..=1000).map(|i| i * 7919).collect();
    let program = assemble(|a| {
        let mut next = a.create_label();
        a.mov(rsi, DATA_START)?;
        a.xor(eax, eax)?;
        a.mov(ecx, values.len() as u32)?;
        a.set_label(&mut next)?;
        a.add(eax, dword_ptr(rsi))?;
        a.add(rsi, 4)?;
        a.dec(ecx)?;
        a.jnz(next)?;
        a.out(u32::from(REPORT_PORT), eax)?;
        a.out(u32::from(DONE_PORT), al)?;
        a.hlt()
    });
    let (vm, mut vcpu) = boot(&program, VmConfig::default());
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    vm.memory().write(DATA_START, &bytes).unwrap();

    let exits = run_to_done(&mut vcpu, &mut OpenBus);
    let want = values.iter().fold(0u32, |s, v| s.wrapping_add(*v));
    assert_eq!(reported(&exits), vec![u64::from(want)]);
}

#[test]
fn the_last_page_of_ram_is_reachable() {
    let config = VmConfig {
        memory_mib: 16,
        irqchip: false,
    };
    let last_qword = (16u64 << 20) - 8;
    let program = assemble(|a| {
        a.mov(rdi, last_qword)?;
        a.mov(rax, 0xFEED_FACE_CAFE_BEEF_u64)?;
        a.mov(qword_ptr(rdi), rax)?;
        a.out(u32::from(DONE_PORT), al)?;
        a.hlt()
    });
    let (vm, mut vcpu) = boot(&program, config);
    run_to_done(&mut vcpu, &mut OpenBus);
    let bytes = vm.memory().read(last_qword, 8).unwrap();
    assert_eq!(
        u64::from_le_bytes(bytes.try_into().unwrap()),
        0xFEED_FACE_CAFE_BEEF
    );
}

/// Answers MMIO loads with a value derived from the address.
struct Echo;

impl Bus for Echo {
    fn mmio_read(&mut self, addr: u64, data: &mut [u8]) {
        let value = addr.wrapping_mul(3).to_le_bytes();
        data.copy_from_slice(&value[..data.len()]);
    }
}

#[test]
fn addresses_without_ram_are_mmio() {
    // Inside the 1 GiB identity map, far above the 8 MiB of RAM.
    const DEVICE: u64 = 0x3000_0000;
    let program = assemble(|a| {
        a.mov(rdi, DEVICE)?;
        a.mov(dword_ptr(rdi), 0x1234_5678)?;
        a.mov(rax, qword_ptr(rdi + 8))?;
        a.out(u32::from(REPORT_PORT), eax)?;
        a.out(u32::from(DONE_PORT), al)?;
        a.hlt()
    });
    let (_vm, mut vcpu) = boot(&program, VmConfig::default());
    let exits = run_to_done(&mut vcpu, &mut Echo);
    let read_value = (DEVICE + 8).wrapping_mul(3);
    assert_eq!(
        exits,
        vec![
            Exit::MmioWrite {
                addr: DEVICE,
                data: 0x1234_5678u32.to_le_bytes().to_vec()
            },
            Exit::MmioRead {
                addr: DEVICE + 8,
                data: read_value.to_le_bytes().to_vec()
            },
            Exit::IoOut {
                port: REPORT_PORT,
                data: (read_value as u32).to_le_bytes().to_vec()
            },
        ]
    );
}
