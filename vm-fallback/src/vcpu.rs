//! One vCPU: entering long mode, running to the next exit, and a run loop
//! bounded by a deadline that never hangs.
//!
//! [`Vcpu::run`] is one `KVM_RUN`, returned as an owned [`Exit`].
//! [`Vcpu::run_until`] loops over `run`, hands each exit to the caller, and
//! stops when the caller says so, on a fatal exit, or at the deadline — the
//! latter enforced by `watchdog.rs` even if the guest never exits.
//!
//! Not here: several vCPUs in lockstep, interrupt injection, and saving
//! state (`vcpu_state.rs`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use kvm_bindings::{CpuId, kvm_regs, kvm_sregs};
use kvm_ioctls::{VcpuExit, VcpuFd};
use vm_memory::GuestAddress;
use vmm_sys_util::errno;

use crate::arch::x86_64::{layout, regs};
use crate::exit::{Bus, Exit};
use crate::kvm::Capabilities;
use crate::memory::GuestMemory;
use crate::watchdog::{self, StopSignal, WatchdogError};

/// Errors from vCPU ioctls and the run loop.
#[derive(Debug, thiserror::Error)]
pub enum VcpuError {
    /// An ioctl on the vCPU failed; `what` names it.
    #[error("{what} failed on vCPU {index}: {source}")]
    Ioctl {
        /// The ioctl, e.g. `KVM_SET_SREGS`.
        what: &'static str,
        /// The vCPU index.
        index: u8,
        /// The error KVM returned.
        #[source]
        source: errno::Error,
    },
    /// The deadline watchdog could not be armed.
    #[error(transparent)]
    Watchdog(#[from] WatchdogError),
    /// A pending I/O could not be completed without running the guest.
    #[error("vCPU {index} cannot finish its pending I/O without running the guest: {why}")]
    PendingIo {
        /// The vCPU index.
        index: u8,
        /// What went wrong.
        why: &'static str,
    },
}

/// What the caller's exit handler wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Run the guest again.
    Continue,
    /// Stop the loop and return this exit.
    Stop,
}

/// Why [`Vcpu::run_until`] returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// The handler said stop on this exit, or it was fatal.
    Exit(Exit),
    /// The deadline passed first.
    Deadline,
    /// A [`StopSignal`] asked the run to end.
    Stopped,
}

/// What a bounded run did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunReport {
    /// Why it stopped.
    pub end: RunEnd,
    /// Guest exits seen (kicks out of `KVM_RUN` not counted).
    pub exits: u64,
    /// Wall time of the loop.
    pub elapsed: Duration,
}

impl RunReport {
    /// Whether the deadline ended the run.
    pub fn timed_out(&self) -> bool {
        self.end == RunEnd::Deadline
    }
}

/// Settings a vCPU inherits from its VM.
#[derive(Debug, Clone)]
pub(crate) struct VcpuFeatures {
    pub(crate) irqchip: bool,
    pub(crate) caps: Capabilities,
    pub(crate) msrs: Arc<[u32]>,
}

/// A vCPU. Fields drop in order: the vCPU fd is closed before this
/// vCPU's hold on guest memory is released.
#[derive(Debug)]
pub struct Vcpu {
    fd: VcpuFd,
    index: u8,
    features: VcpuFeatures,
    _memory: Arc<GuestMemory>,
}

impl Vcpu {
    pub(crate) fn new(
        fd: VcpuFd,
        index: u8,
        features: VcpuFeatures,
        memory: Arc<GuestMemory>,
    ) -> Self {
        Vcpu {
            fd,
            index,
            features,
            _memory: memory,
        }
    }

    /// This vCPU's index in its VM.
    pub fn index(&self) -> u8 {
        self.index
    }

    pub(crate) fn features(&self) -> &VcpuFeatures {
        &self.features
    }

    /// The raw handle, for ioctls this crate does not wrap.
    pub fn fd(&self) -> &VcpuFd {
        &self.fd
    }

    pub(crate) fn ioctl_error(&self, what: &'static str) -> impl FnOnce(errno::Error) -> VcpuError {
        let index = self.index;
        move |source| VcpuError::Ioctl {
            what,
            index,
            source,
        }
    }

    pub(crate) fn set_cpuid(&self, cpuid: &CpuId) -> Result<(), VcpuError> {
        self.fd
            .set_cpuid2(cpuid)
            .map_err(self.ioctl_error("KVM_SET_CPUID2"))
    }

    /// Puts the vCPU in 64-bit long mode at `entry`, with the stack at
    /// [`layout::STACK_TOP`], using the GDT and page tables that
    /// `Vm::load_program` wrote.
    pub fn enter_long_mode(&self, entry: GuestAddress) -> Result<(), VcpuError> {
        let sregs = self.sregs()?;
        self.set_sregs(&regs::long_mode_sregs(sregs))?;
        self.set_regs(&regs::entry_regs(entry.0, layout::STACK_TOP))
    }

    /// General-purpose registers.
    pub fn regs(&self) -> Result<kvm_regs, VcpuError> {
        self.fd.get_regs().map_err(self.ioctl_error("KVM_GET_REGS"))
    }

    /// `KVM_GET_MP_STATE`: runnable, halted, waiting for INIT/SIPI.
    pub fn mp_state(&self) -> Result<u32, VcpuError> {
        self.fd
            .get_mp_state()
            .map(|state| state.mp_state)
            .map_err(self.ioctl_error("KVM_GET_MP_STATE"))
    }

    /// Sets the general-purpose registers.
    pub fn set_regs(&self, regs: &kvm_regs) -> Result<(), VcpuError> {
        self.fd
            .set_regs(regs)
            .map_err(self.ioctl_error("KVM_SET_REGS"))
    }

    /// Segment, control and descriptor-table registers.
    pub fn sregs(&self) -> Result<kvm_sregs, VcpuError> {
        self.fd
            .get_sregs()
            .map_err(self.ioctl_error("KVM_GET_SREGS"))
    }

    /// Sets the segment, control and descriptor-table registers.
    pub fn set_sregs(&self, sregs: &kvm_sregs) -> Result<(), VcpuError> {
        self.fd
            .set_sregs(sregs)
            .map_err(self.ioctl_error("KVM_SET_SREGS"))
    }

    /// One `KVM_RUN`. Guest reads are answered by `bus` before returning.
    /// A signal (e.g. the watchdog's kick) gives [`Exit::Interrupted`].
    pub fn run(&mut self, bus: &mut dyn Bus) -> Result<Exit, VcpuError> {
        let index = self.index;
        let exit = match self.fd.run() {
            Ok(exit) => from_kvm(exit, bus),
            Err(e) if e.errno() == libc::EINTR => return Ok(Exit::Interrupted),
            Err(source) => {
                return Err(VcpuError::Ioctl {
                    what: "KVM_RUN",
                    index,
                    source,
                });
            }
        };
        Ok(match exit {
            Exit::InternalError { .. } => Exit::InternalError {
                suberror: self.internal_suberror(),
            },
            other => other,
        })
    }

    fn internal_suberror(&mut self) -> u32 {
        let run = self.fd.get_kvm_run();
        // SAFETY: called right after KVM_RUN returned KVM_EXIT_INTERNAL_ERROR,
        // for which the kernel fills the `internal` member of the union.
        unsafe { run.__bindgen_anon_1.internal.suberror }
    }

    /// Runs until `on_exit` returns [`Flow::Stop`], a fatal exit, or
    /// `deadline` — whichever is first. Never runs past the deadline by more
    /// than a kick's delivery time, even if the guest never exits.
    pub fn run_until(
        &mut self,
        deadline: Instant,
        bus: &mut dyn Bus,
        on_exit: impl FnMut(&Exit) -> Flow,
    ) -> Result<RunReport, VcpuError> {
        self.run_until_stopped(deadline, None, bus, on_exit)
    }

    /// [`Vcpu::run_until`], also ending with [`RunEnd::Stopped`] when
    /// `stop` is signalled from another thread. The vCPU is then between
    /// two guest instructions and its state can be saved.
    pub fn run_until_stopped(
        &mut self,
        deadline: Instant,
        stop: Option<&StopSignal>,
        bus: &mut dyn Bus,
        on_exit: impl FnMut(&Exit) -> Flow,
    ) -> Result<RunReport, VcpuError> {
        self.fd.set_kvm_immediate_exit(0);
        let result = self.run_armed(deadline, stop, bus, on_exit);
        // The watchdog is disarmed; a kick may have left the flag set.
        self.fd.set_kvm_immediate_exit(0);
        result
    }

    fn run_armed(
        &mut self,
        deadline: Instant,
        stop: Option<&StopSignal>,
        bus: &mut dyn Bus,
        mut on_exit: impl FnMut(&Exit) -> Flow,
    ) -> Result<RunReport, VcpuError> {
        let start = Instant::now();
        let immediate_exit = &raw mut self.fd.get_kvm_run().immediate_exit;
        // SAFETY: the pointer is into this vCPU's kvm_run mapping, which lives
        // as long as `self.fd`; `self` is borrowed mutably for this whole
        // function, and `armed` is dropped before it returns.
        let armed = unsafe { watchdog::arm(immediate_exit, deadline, stop)? };
        let mut exits = 0;
        let end = loop {
            if armed.fired() {
                break RunEnd::Deadline;
            }
            if stop.is_some_and(StopSignal::requested) {
                break RunEnd::Stopped;
            }
            let exit = self.run(bus)?;
            if !exit.is_guest_exit() {
                continue;
            }
            exits += 1;
            if exit.is_fatal() || on_exit(&exit) == Flow::Stop {
                break RunEnd::Exit(exit);
            }
        };
        drop(armed);
        Ok(RunReport {
            end,
            exits,
            elapsed: start.elapsed(),
        })
    }

    /// Finishes an I/O or MMIO exit that KVM completes only on the next
    /// `KVM_RUN` (e.g. moving RIP past an `out`), without running any guest
    /// code: `KVM_RUN` with `immediate_exit` set. After this the registers
    /// are consistent and can be saved.
    pub fn complete_pending_io(&mut self) -> Result<(), VcpuError> {
        let index = self.index;
        if !self.features.caps.immediate_exit {
            return Err(VcpuError::PendingIo {
                index,
                why: "KVM lacks KVM_CAP_IMMEDIATE_EXIT",
            });
        }
        self.fd.set_kvm_immediate_exit(1);
        let result = self.fd.run().map(|_| ());
        self.fd.set_kvm_immediate_exit(0);
        match result {
            Err(e) if e.errno() == libc::EINTR => Ok(()),
            Ok(()) => Err(VcpuError::PendingIo {
                index,
                why: "KVM ran the guest despite immediate_exit",
            }),
            Err(source) => Err(VcpuError::Ioctl {
                what: "KVM_RUN (immediate_exit)",
                index,
                source,
            }),
        }
    }
}

/// Copies kvm-ioctls' borrowed exit into an owned [`Exit`], answering reads
/// from `bus`.
fn from_kvm(exit: VcpuExit<'_>, bus: &mut dyn Bus) -> Exit {
    match exit {
        VcpuExit::IoOut(port, data) => Exit::IoOut {
            port,
            data: data.to_vec(),
        },
        VcpuExit::IoIn(port, data) => {
            bus.io_in(port, data);
            Exit::IoIn {
                port,
                data: data.to_vec(),
            }
        }
        VcpuExit::MmioWrite(addr, data) => Exit::MmioWrite {
            addr,
            data: data.to_vec(),
        },
        VcpuExit::MmioRead(addr, data) => {
            bus.mmio_read(addr, data);
            Exit::MmioRead {
                addr,
                data: data.to_vec(),
            }
        }
        VcpuExit::Hlt => Exit::Hlt,
        VcpuExit::Shutdown => Exit::Shutdown,
        VcpuExit::FailEntry(reason, cpu) => Exit::FailEntry { reason, cpu },
        VcpuExit::InternalError => Exit::InternalError { suberror: 0 },
        VcpuExit::SystemEvent(kind, _) => Exit::SystemEvent { kind },
        other => Exit::Other(format!("{other:?}")),
    }
}
