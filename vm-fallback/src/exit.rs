//! Why a vCPU came back from `KVM_RUN`, as an owned value, and the [`Bus`]
//! that answers guest reads.
//!
//! kvm-ioctls hands out exits that borrow the vCPU's `kvm_run` page; this
//! module copies what matters out of it (port, address, bytes) so the caller
//! can keep an exit, count it, or stop the run loop on it. Reads (`in`, MMIO
//! loads) need an answer before the next entry, so they are answered by a
//! `Bus` at the moment of the exit and the answer is recorded in the exit.
//!
//! Not here: devices. The only bus in this crate is [`OpenBus`], which
//! answers every read with all-ones, as an empty ISA or PCI bus would.

/// One reason `KVM_RUN` returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// The guest wrote `data` to I/O `port` (`out`, or one round of `outs`).
    IoOut {
        /// The port.
        port: u16,
        /// The bytes written (size x count).
        data: Vec<u8>,
    },
    /// The guest read I/O `port`; `data` is what the bus answered.
    IoIn {
        /// The port.
        port: u16,
        /// The answer given.
        data: Vec<u8>,
    },
    /// The guest stored `data` at a guest-physical address with no RAM.
    MmioWrite {
        /// Guest-physical address.
        addr: u64,
        /// Bytes stored.
        data: Vec<u8>,
    },
    /// The guest loaded from a guest-physical address with no RAM; `data` is
    /// what the bus answered.
    MmioRead {
        /// Guest-physical address.
        addr: u64,
        /// The answer given.
        data: Vec<u8>,
    },
    /// The guest executed `hlt` with no in-kernel irqchip to wait on.
    Hlt,
    /// The guest shut down: on x86 this is a triple fault (an exception
    /// while delivering a double fault), e.g. any exception with no IDT.
    Shutdown,
    /// The CPU refused to enter the guest (bad register state).
    FailEntry {
        /// Hardware-specific reason code.
        reason: u64,
        /// Host CPU it happened on.
        cpu: u32,
    },
    /// KVM hit something it could not handle or emulate.
    InternalError {
        /// `KVM_INTERNAL_ERROR_*` sub-code.
        suberror: u32,
    },
    /// A system event (reset, shutdown request, crash) from the guest.
    SystemEvent {
        /// `KVM_SYSTEM_EVENT_*` type.
        kind: u32,
    },
    /// `KVM_RUN` was interrupted by a signal before or during guest
    /// execution (the watchdog's kick, or `immediate_exit`); no guest exit.
    Interrupted,
    /// Any other exit reason; the name is kvm-ioctls' debug name.
    Other(String),
}

impl Exit {
    /// True when the vCPU cannot usefully be run again: shutdown (triple
    /// fault), failed entry, KVM internal error, a system event.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            Exit::Shutdown
                | Exit::FailEntry { .. }
                | Exit::InternalError { .. }
                | Exit::SystemEvent { .. }
        )
    }

    /// Whether this is a real guest exit, not an interruption of `KVM_RUN`.
    pub fn is_guest_exit(&self) -> bool {
        !matches!(self, Exit::Interrupted)
    }
}

/// Answers guest reads from ports and MMIO. Writes need no answer; they are
/// reported in the [`Exit`] instead.
pub trait Bus {
    /// Fills `data` with the value of an `in` from `port`.
    fn io_in(&mut self, port: u16, data: &mut [u8]) {
        let _ = port;
        data.fill(0xFF);
    }

    /// Fills `data` with the value of a load from guest-physical `addr`.
    fn mmio_read(&mut self, addr: u64, data: &mut [u8]) {
        let _ = addr;
        data.fill(0xFF);
    }
}

/// A bus with nothing on it: every read returns all-ones.
#[derive(Debug, Default, Clone, Copy)]
pub struct OpenBus;

impl Bus for OpenBus {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_bus_reads_all_ones() {
        let mut data = [0u8; 4];
        OpenBus.io_in(0x60, &mut data);
        assert_eq!(data, [0xFF; 4]);
        OpenBus.mmio_read(0xFEE0_0000, &mut data[..2]);
        assert_eq!(data[..2], [0xFF; 2]);
    }

    #[test]
    fn triple_fault_is_fatal_port_io_is_not() {
        assert!(Exit::Shutdown.is_fatal());
        assert!(
            !Exit::IoOut {
                port: 1,
                data: vec![]
            }
            .is_fatal()
        );
        assert!(!Exit::Interrupted.is_guest_exit());
    }
}
