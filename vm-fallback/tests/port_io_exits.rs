//! Port I/O reaches the host as one exit per instruction, with the port,
//! the width and the exact bytes; `in` gets the bus's answer; `hlt` without
//! an irqchip is an exit of its own.

mod common;

use std::time::Instant;

use common::{DEADLINE, DONE_PORT, REPORT_PORT, assemble, boot, reported, run_to_done};
use ephemeral_vm::arch::x86_64::layout::DATA_START;
use ephemeral_vm::{Bus, Exit, Flow, OpenBus, RunEnd, VmConfig};
use iced_x86::code_asm::*;

#[test]
fn each_out_is_one_exit_with_its_port_width_and_bytes() {
    let program = assemble(|a| {
        a.mov(eax, 0x1122_3344)?;
        a.out(0x10, al)?;
        a.out(0x20, ax)?;
        a.out(0x30, eax)?;
        a.mov(dx, 0x1234)?;
        a.out(dx, al)?;
        a.out(u32::from(DONE_PORT), al)?;
        a.hlt()
    });
    let (_vm, mut vcpu) = boot(&program, VmConfig::default());
    let exits = run_to_done(&mut vcpu, &mut OpenBus);
    let out = |port, data: &[u8]| Exit::IoOut {
        port,
        data: data.to_vec(),
    };
    assert_eq!(
        exits,
        vec![
            out(0x10, &[0x44]),
            out(0x20, &[0x44, 0x33]),
            out(0x30, &[0x44, 0x33, 0x22, 0x11]),
            out(0x1234, &[0x44]),
        ]
    );
}

#[test]
fn a_loop_of_n_outs_gives_exactly_n_exits_in_order() {
    const N: u32 = 1000;
    let program = assemble(|a| {
        let mut next = a.create_label();
        a.xor(ebx, ebx)?;
        a.set_label(&mut next)?;
        a.inc(ebx)?;
        a.mov(eax, ebx)?;
        a.out(u32::from(REPORT_PORT), eax)?;
        a.cmp(ebx, N)?;
        a.jne(next)?;
        a.out(u32::from(DONE_PORT), al)?;
        a.hlt()
    });
    let (_vm, mut vcpu) = boot(&program, VmConfig::default());
    let start = Instant::now();
    let exits = run_to_done(&mut vcpu, &mut OpenBus);
    let took = start.elapsed();
    println!(
        "{N} port exits in {took:?}: {:.2} µs per exit",
        took.as_secs_f64() * 1e6 / f64::from(N + 1)
    );
    assert_eq!(reported(&exits), (1..=u64::from(N)).collect::<Vec<_>>());
}

/// Answers `in` from port 0x60 with a counter, so each read differs.
#[derive(Default)]
struct CountingPort {
    reads: u8,
}

impl Bus for CountingPort {
    fn io_in(&mut self, port: u16, data: &mut [u8]) {
        assert_eq!(port, 0x60);
        self.reads += 1;
        data.fill(self.reads * 0x11);
    }
}

#[test]
fn in_gets_the_bus_answer_and_the_guest_sees_it() {
    let program = assemble(|a| {
        a.in_(al, 0x60)?;
        a.out(u32::from(REPORT_PORT), al)?;
        a.in_(eax, 0x60)?;
        a.out(u32::from(REPORT_PORT), eax)?;
        a.out(u32::from(DONE_PORT), al)?;
        a.hlt()
    });
    let (_vm, mut vcpu) = boot(&program, VmConfig::default());
    let mut bus = CountingPort::default();
    let exits = run_to_done(&mut vcpu, &mut bus);
    assert_eq!(
        exits[0],
        Exit::IoIn {
            port: 0x60,
            data: vec![0x11]
        }
    );
    assert_eq!(reported(&exits), vec![0x11, 0x2222_2222]);
    // An empty bus answers all-ones.
    let (_vm, mut vcpu) = boot(&program, VmConfig::default());
    let exits = run_to_done(&mut vcpu, &mut OpenBus);
    assert_eq!(reported(&exits), vec![0xFF, 0xFFFF_FFFF]);
}

#[test]
fn string_out_delivers_every_byte() {
    let message = b"hello from a long-mode guest, via rep outsb";
    let program = assemble(|a| {
        a.mov(rsi, DATA_START)?;
        a.mov(ecx, message.len() as u32)?;
        a.mov(dx, u32::from(REPORT_PORT))?;
        a.rep().outsb()?;
        a.out(u32::from(DONE_PORT), al)?;
        a.hlt()
    });
    let (vm, mut vcpu) = boot(&program, VmConfig::default());
    vm.memory().write(DATA_START, message).unwrap();
    let exits = run_to_done(&mut vcpu, &mut OpenBus);
    let bytes: Vec<u8> = exits
        .iter()
        .flat_map(|e| match e {
            Exit::IoOut { port, data } if *port == REPORT_PORT => data.clone(),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(bytes, message);
}

#[test]
fn hlt_without_irqchip_exits_to_the_host() {
    let program = assemble(|a| {
        a.out(u32::from(REPORT_PORT), al)?;
        a.hlt()?;
        a.out(u32::from(DONE_PORT), al)?;
        a.hlt()
    });
    let (_vm, mut vcpu) = boot(&program, VmConfig::default());
    let report = vcpu
        .run_until(Instant::now() + DEADLINE, &mut OpenBus, |exit| {
            if *exit == Exit::Hlt {
                Flow::Stop
            } else {
                Flow::Continue
            }
        })
        .unwrap();
    assert_eq!(report.end, RunEnd::Exit(Exit::Hlt));
    assert_eq!(report.exits, 2);
}
