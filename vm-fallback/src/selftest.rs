//! Can this host run our VMs, and how fast? One call that creates a VM,
//! runs a tiny guest, and reports — always within the time given.
//!
//! The guest (hand-assembled below, checked against an assembler in the
//! unit tests) is integer-only 64-bit code, entered directly in long mode:
//! it writes [`GUEST_BYTES`] bytes counting down to [`DATA_PORT`], then
//! [`DONE_VALUE`] to [`DONE_PORT`], then halts. Each `out` is one exit to
//! this process, so the run measures the cost of an exit.
//!
//! Two layers keep the promise of returning in time: the vCPU's own
//! deadline watchdog (`watchdog.rs`) kicks it out of `KVM_RUN`; and the VM
//! runs on its own thread, which this module waits for only until the
//! deadline plus [`STUCK_GRACE`] — should KVM ever ignore the kick, the
//! thread is left behind and the report says so.
//!
//! Not here: Linux guests, devices, or deciding what isolation a sandbox
//! gets (callers do that from the report).

use std::fmt;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use crate::exit::{Exit, OpenBus};
use crate::kvm::{Kvm, KvmKind};
use crate::vcpu::{Flow, RunEnd};
use crate::vm::{Vm, VmConfig};

/// Port the guest writes its bytes to: 0xE9, the port Bochs and QEMU use as
/// a debug console, i.e. a plain byte sink by convention.
pub const DATA_PORT: u16 = 0xE9;

/// Port the guest writes [`DONE_VALUE`] to when finished: 0xF4, QEMU's
/// `isa-debug-exit` default, the conventional "guest says it is done" port.
pub const DONE_PORT: u16 = 0xF4;

/// What the guest writes to [`DONE_PORT`]: a bit pattern (0101_1010) that a
/// stray write is unlikely to produce.
pub const DONE_VALUE: u8 = 0x5A;

/// How many bytes the guest writes: enough exits to time one exit to a
/// microsecond, few enough to stay far below a second even under PVM.
pub const GUEST_BYTES: u8 = 200;

/// Guest RAM for the test: the minimum the long-mode layout needs.
const SELFTEST_MEMORY_MIB: usize = 4;

/// How long past the deadline to wait for the VM thread before giving up on
/// it. The watchdog's kick normally ends a run within microseconds.
pub const STUCK_GRACE: Duration = Duration::from_millis(250);

/// The guest, hand-assembled (64-bit mode):
///
/// ```text
/// 0x00  b9 NN 00 00 00   mov ecx, GUEST_BYTES
/// 0x05  89 c8            next: mov eax, ecx
/// 0x07  e6 e9            out DATA_PORT, al
/// 0x09  ff c9            dec ecx
/// 0x0b  75 f8            jnz next
/// 0x0d  b0 5a            mov al, DONE_VALUE
/// 0x0f  e6 f4            out DONE_PORT, al
/// 0x11  f4               halt: hlt
/// 0x12  eb fd            jmp halt
/// ```
pub const GUEST: [u8; 20] = [
    0xB9,
    GUEST_BYTES,
    0x00,
    0x00,
    0x00,
    0x89,
    0xC8,
    0xE6,
    DATA_PORT as u8,
    0xFF,
    0xC9,
    0x75,
    0xF8,
    0xB0,
    DONE_VALUE,
    0xE6,
    DONE_PORT as u8,
    0xF4,
    0xEB,
    0xFD,
];

/// Why a self-test did not reach "done".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The deadline passed with the guest still running.
    TimedOut,
    /// The guest triple-faulted (a shutdown exit).
    TripleFault,
    /// The guest stopped some other way, or wrote something unexpected.
    UnexpectedExit(String),
    /// The guest reached "done" but its bytes were wrong.
    WrongOutput {
        /// Bytes expected on the data port.
        expected: Vec<u8>,
        /// Bytes received.
        got: Vec<u8>,
    },
    /// Opening KVM, creating the VM or setting up the vCPU failed.
    Error(String),
    /// The VM thread did not come back even after the grace period: KVM did
    /// not honour the kick. The thread is left running.
    Stuck,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::TimedOut => {
                f.write_str("timed out: the guest was still running at the deadline")
            }
            Failure::TripleFault => f.write_str("the guest triple-faulted"),
            Failure::UnexpectedExit(e) => write!(f, "unexpected guest exit: {e}"),
            Failure::WrongOutput { expected, got } => write!(
                f,
                "the guest wrote {} bytes, {} expected, or the wrong ones",
                got.len(),
                expected.len()
            ),
            Failure::Error(e) => write!(f, "could not run a guest: {e}"),
            Failure::Stuck => f.write_str("the vCPU thread ignored the deadline and was abandoned"),
        }
    }
}

/// What the self-test found.
#[derive(Debug, Clone, PartialEq)]
pub struct SelfTest {
    /// Which KVM answers (from `/sys/module`, even if `/dev/kvm` failed).
    pub kind: KvmKind,
    /// The guest wrote [`DONE_VALUE`] to [`DONE_PORT`].
    pub ran_to_done: bool,
    /// Guest exits seen.
    pub exits: u64,
    /// Time spent running the guest.
    pub run_time: Duration,
    /// Time for the whole self-test, VM creation included.
    pub elapsed: Duration,
    /// `run_time / exits`, in microseconds; `None` with no exits.
    pub micros_per_exit: Option<f64>,
    /// Why it failed; `None` if it passed.
    pub failure: Option<Failure>,
}

impl SelfTest {
    /// Whether guests run here.
    pub fn passed(&self) -> bool {
        self.ran_to_done && self.failure.is_none()
    }
}

impl fmt::Display for SelfTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.kind)?;
        match &self.failure {
            None => f.write_str("guest ran to done")?,
            Some(why) => write!(f, "failed, {why}")?,
        }
        write!(f, "; {} exits", self.exits)?;
        if let Some(us) = self.micros_per_exit {
            write!(f, ", {us:.1} µs per exit")?;
        }
        write!(f, "; {} ms in all", self.elapsed.as_millis())
    }
}

/// Runs the built-in guest; returns within `timeout` (plus at most
/// [`STUCK_GRACE`] if KVM ignores the kick, which the report then says).
pub fn self_test(timeout: Duration) -> SelfTest {
    let expected: Vec<u8> = (1..=GUEST_BYTES).rev().collect();
    run(GUEST.to_vec(), Some(expected), timeout)
}

/// Runs `program` in place of the built-in guest, with the same rules:
/// "done" is [`DONE_VALUE`] on [`DONE_PORT`]; bytes on [`DATA_PORT`] are
/// counted but not checked. For testing the harness (e.g. with a guest that
/// never stops).
pub fn self_test_with_guest(program: &[u8], timeout: Duration) -> SelfTest {
    run(program.to_vec(), None, timeout)
}

/// What the VM thread sends back.
struct Attempt {
    ran_to_done: bool,
    exits: u64,
    run_time: Duration,
    failure: Option<Failure>,
}

impl Attempt {
    fn failed(failure: Failure) -> Self {
        Attempt {
            ran_to_done: false,
            exits: 0,
            run_time: Duration::ZERO,
            failure: Some(failure),
        }
    }
}

fn run(program: Vec<u8>, expected: Option<Vec<u8>>, timeout: Duration) -> SelfTest {
    let start = Instant::now();
    let deadline = start + timeout;
    let (tx, rx) = mpsc::channel();
    let spawned = thread::Builder::new()
        .name("vm-selftest".into())
        .spawn(move || {
            let _ = tx.send(attempt(&program, expected.as_deref(), deadline));
        });
    let attempt = match spawned {
        Err(e) => Attempt::failed(Failure::Error(format!("cannot start the VM thread: {e}"))),
        Ok(thread) => match rx.recv_timeout(timeout + STUCK_GRACE) {
            Ok(attempt) => {
                let _ = thread.join();
                attempt
            }
            // The thread is abandoned, not joined: joining could hang.
            Err(_) => Attempt::failed(Failure::Stuck),
        },
    };
    let report = SelfTest {
        kind: KvmKind::detect(),
        ran_to_done: attempt.ran_to_done,
        exits: attempt.exits,
        run_time: attempt.run_time,
        elapsed: start.elapsed(),
        micros_per_exit: (attempt.exits > 0)
            .then(|| attempt.run_time.as_secs_f64() * 1e6 / attempt.exits as f64),
        failure: attempt.failure,
    };
    tracing::info!(%report, "VM self-test");
    report
}

/// On the VM thread: build, run, judge.
fn attempt(program: &[u8], expected: Option<&[u8]>, deadline: Instant) -> Attempt {
    match run_guest(program, deadline) {
        Err(e) => Attempt::failed(Failure::Error(e)),
        Ok((report, received)) => {
            let failure = judge(&report.end, &received, expected);
            Attempt {
                ran_to_done: is_done(&report.end),
                exits: report.exits,
                run_time: report.elapsed,
                failure,
            }
        }
    }
}

fn run_guest(
    program: &[u8],
    deadline: Instant,
) -> Result<(crate::vcpu::RunReport, Vec<u8>), String> {
    let kvm = Kvm::open().map_err(|e| e.to_string())?;
    let config = VmConfig {
        memory_mib: SELFTEST_MEMORY_MIB,
        irqchip: false,
    };
    let vm = Vm::new(&kvm, config).map_err(|e| e.to_string())?;
    let entry = vm.load_program(program).map_err(|e| e.to_string())?;
    let mut vcpu = vm.create_vcpu(0).map_err(|e| e.to_string())?;
    vcpu.enter_long_mode(entry).map_err(|e| e.to_string())?;
    let mut received = Vec::new();
    let report = vcpu
        .run_until(deadline, &mut OpenBus, |exit| match exit {
            Exit::IoOut { port, data } if *port == DATA_PORT => {
                received.extend_from_slice(data);
                Flow::Continue
            }
            _ => Flow::Stop,
        })
        .map_err(|e| e.to_string())?;
    Ok((report, received))
}

fn is_done(end: &RunEnd) -> bool {
    matches!(end, RunEnd::Exit(Exit::IoOut { port, data }) if *port == DONE_PORT && data[..] == [DONE_VALUE])
}

fn judge(end: &RunEnd, received: &[u8], expected: Option<&[u8]>) -> Option<Failure> {
    match end {
        RunEnd::Deadline => Some(Failure::TimedOut),
        RunEnd::Exit(Exit::Shutdown) => Some(Failure::TripleFault),
        _ if !is_done(end) => Some(Failure::UnexpectedExit(format!("{end:?}"))),
        _ => match expected {
            Some(expected) if expected != received => Some(Failure::WrongOutput {
                expected: expected.to_vec(),
                got: received.to_vec(),
            }),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iced_x86::code_asm::*;

    #[test]
    fn hand_assembled_guest_matches_the_assembler() {
        let mut a = CodeAssembler::new(64).unwrap();
        let mut next = a.create_label();
        let mut halt = a.create_label();
        a.mov(ecx, u32::from(GUEST_BYTES)).unwrap();
        a.set_label(&mut next).unwrap();
        a.mov(eax, ecx).unwrap();
        a.out(u32::from(DATA_PORT), al).unwrap();
        a.dec(ecx).unwrap();
        a.jnz(next).unwrap();
        a.mov(al, u32::from(DONE_VALUE)).unwrap();
        a.out(u32::from(DONE_PORT), al).unwrap();
        a.set_label(&mut halt).unwrap();
        a.hlt().unwrap();
        a.jmp(halt).unwrap();
        assert_eq!(a.assemble(0).unwrap(), GUEST);
    }

    #[test]
    fn judging_names_the_failure() {
        let done = RunEnd::Exit(Exit::IoOut {
            port: DONE_PORT,
            data: vec![DONE_VALUE],
        });
        assert_eq!(judge(&done, &[2, 1], Some(&[2, 1])), None);
        assert!(matches!(
            judge(&done, &[2], Some(&[2, 1])),
            Some(Failure::WrongOutput { .. })
        ));
        assert_eq!(judge(&RunEnd::Deadline, &[], None), Some(Failure::TimedOut));
        assert_eq!(
            judge(&RunEnd::Exit(Exit::Shutdown), &[], None),
            Some(Failure::TripleFault)
        );
    }
}
