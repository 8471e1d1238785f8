//! The self-test passes quickly on this host's KVM, and returns on time with
//! "timed out" when the guest never stops.

use std::time::{Duration, Instant};

use ephemeral_vm::selftest::{DONE_PORT, DONE_VALUE};
use ephemeral_vm::{Failure, self_test, self_test_with_guest};
use iced_x86::code_asm::*;

/// How far past its timeout a run that timed out may return: the kick is
/// delivered in microseconds; this allows for a loaded 2-core machine.
const MARGIN: Duration = Duration::from_millis(300);

#[test]
fn normal_guest_runs_to_done_within_two_seconds() {
    let start = Instant::now();
    let report = self_test(Duration::from_secs(2));
    let took = start.elapsed();
    println!("{report}");
    println!(
        "self-test: {took:?} total, {:?} guest run, {} exits, {:.2} µs/exit",
        report.run_time,
        report.exits,
        report.micros_per_exit.unwrap_or(f64::NAN)
    );
    assert!(report.passed(), "{report}");
    assert!(took < Duration::from_secs(2), "took {took:?}");
    // 200 data bytes and the done write.
    assert_eq!(report.exits, 201);
}

#[test]
fn guest_looping_forever_times_out_cleanly() {
    let mut a = CodeAssembler::new(64).unwrap();
    let mut here = a.create_label();
    a.set_label(&mut here).unwrap();
    a.jmp(here).unwrap();
    let spin = a.assemble(0).unwrap();
    assert_eq!(spin, [0xEB, 0xFE], "jmp $");

    let timeout = Duration::from_millis(500);
    let start = Instant::now();
    let report = self_test_with_guest(&spin, timeout);
    let took = start.elapsed();
    println!("{report}; returned after {took:?}");
    assert_eq!(report.failure, Some(Failure::TimedOut), "{report}");
    assert!(!report.ran_to_done);
    assert_eq!(report.exits, 0);
    assert!(took >= timeout, "returned early: {took:?}");
    assert!(took < timeout + MARGIN, "returned late: {took:?}");
}

#[test]
fn guest_exiting_forever_times_out_too() {
    // Never writes "done", but exits constantly: the run loop, not only the
    // kick, must notice the deadline.
    let mut a = CodeAssembler::new(64).unwrap();
    let mut again = a.create_label();
    a.set_label(&mut again).unwrap();
    a.out(0xE9, al).unwrap();
    a.jmp(again).unwrap();
    let timeout = Duration::from_millis(300);
    let start = Instant::now();
    let report = self_test_with_guest(&a.assemble(0).unwrap(), timeout);
    let took = start.elapsed();
    println!("{report}; returned after {took:?}");
    assert_eq!(report.failure, Some(Failure::TimedOut), "{report}");
    assert!(report.exits > 100, "{report}");
    assert!(took < timeout + MARGIN, "returned late: {took:?}");
}

#[test]
fn many_short_deadlines_never_hang() {
    // Deadlines of a few milliseconds land at every point of the run loop,
    // including just before KVM_RUN, the spot `immediate_exit` covers.
    let spin = [0xEB, 0xFE];
    for i in 0..40 {
        let timeout = Duration::from_millis(2 + i % 7);
        let start = Instant::now();
        let report = self_test_with_guest(&spin, timeout);
        let took = start.elapsed();
        assert_eq!(report.failure, Some(Failure::TimedOut), "run {i}: {report}");
        assert!(took < timeout + MARGIN, "run {i} returned late: {took:?}");
    }
}

#[test]
fn guest_that_faults_is_reported_as_a_triple_fault() {
    // No IDT: a #UD (ud2) cannot be delivered and becomes a triple fault.
    let mut a = CodeAssembler::new(64).unwrap();
    a.ud2().unwrap();
    let report = self_test_with_guest(&a.assemble(0).unwrap(), Duration::from_secs(2));
    println!("{report}");
    assert!(!report.ran_to_done);
    assert_eq!(report.failure, Some(Failure::TripleFault), "{report}");
}

#[test]
fn custom_guest_reaching_done_passes() {
    let mut a = CodeAssembler::new(64).unwrap();
    a.mov(al, u32::from(DONE_VALUE)).unwrap();
    a.out(u32::from(DONE_PORT), al).unwrap();
    a.hlt().unwrap();
    let report = self_test_with_guest(&a.assemble(0).unwrap(), Duration::from_secs(2));
    assert!(report.passed(), "{report}");
    assert_eq!(report.exits, 1);
}
