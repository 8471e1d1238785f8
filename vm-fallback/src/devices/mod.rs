//! The few devices a Linux guest finds on its I/O ports: a 16550 UART for
//! its console (logs only: off the hot path) and the i8042 controller's
//! reset line, which is how a guest without ACPI asks to stop (`reboot=k`).
//! Everything else reads as an empty bus.
//!
//! The virtio console, the microVM's one channel, and its read-only disk
//! are in [`virtio`]. No network: a microVM has none.

mod i8042;
mod serial;
pub mod virtio;

pub use i8042::RESET_PORT;
pub use serial::{COM1_BASE, COM1_IRQ, Console, ConsoleLog, SavedSerial};

use crate::exit::Bus;

/// What a port write meant to the VMM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortEvent {
    /// Nothing the VMM must act on.
    None,
    /// The guest pulsed the reset line: it is done.
    Reset,
}

/// The port-I/O devices of one Linux guest.
pub struct LegacyDevices {
    /// COM1, the guest kernel's console.
    pub console: Console,
}

impl LegacyDevices {
    /// A port write from the guest.
    pub fn io_out(&mut self, port: u16, data: &[u8]) -> PortEvent {
        if self.console.owns(port) {
            self.console.write(port, data);
            return PortEvent::None;
        }
        if i8042::is_reset(port, data) {
            return PortEvent::Reset;
        }
        PortEvent::None
    }
}

impl Bus for LegacyDevices {
    fn io_in(&mut self, port: u16, data: &mut [u8]) {
        if self.console.owns(port) {
            self.console.read(port, data);
        } else if let Some(answer) = i8042::read(port) {
            data.fill(answer);
        } else {
            data.fill(0xFF);
        }
    }
}
