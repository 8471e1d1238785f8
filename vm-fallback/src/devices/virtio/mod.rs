//! Virtio over MMIO (virtio 1.2, section 4.2): the transport's registers in
//! `mmio.rs`, and the one device a microVM has, the console (`console.rs`),
//! whose two queues carry the worker protocol between host and guest.
//! Data moves a descriptor chain at a time — many bytes per exit, never a
//! byte per exit — and the guest is interrupted through an irqfd.
//!
//! Not here: PCI, other device types, packed queues, event index.

mod console;
mod mmio;
mod notify;

pub use console::{ConsoleSink, ConsoleState, VirtioConsole};
pub use mmio::{MMIO_SIZE, TransportState, cmdline_device};
pub use notify::{Notifier, NotifierError};

/// Device type of a console (virtio 1.2, 5.3).
pub(crate) const DEVICE_CONSOLE: u32 = 3;
/// Feature bit every modern device offers (virtio 1.2, 6).
pub(crate) const F_VERSION_1: u64 = 1 << 32;
