//! Virtio over MMIO (virtio 1.2, section 4.2): the transport's registers in
//! `mmio.rs`, the console (`console.rs`), whose two queues carry the worker
//! protocol between host and guest, and a read-only block device
//! (`block.rs`) for the large read-only files VMs share.
//! Data moves a descriptor chain at a time — many bytes per exit, never a
//! byte per exit — and the guest is interrupted through an irqfd.
//!
//! Not here: PCI, other device types, packed queues, event index.

mod block;
mod console;
mod mmio;
mod notify;

pub use block::{BlockState, SECTOR, VirtioBlock};
pub use console::{ConsoleSink, ConsoleState, VirtioConsole};
pub use mmio::{MMIO_SIZE, TransportState, cmdline_device};
pub use notify::{Notifier, NotifierError};

/// Device type of a console (virtio 1.2, 5.3).
pub(crate) const DEVICE_CONSOLE: u32 = 3;
/// Feature bit every modern device offers (virtio 1.2, 6).
pub(crate) const F_VERSION_1: u64 = 1 << 32;

/// A device whose queues a [`Notifier`] serves.
pub trait QueueNotified: Send + 'static {
    /// The guest notified `queue`.
    fn notified(&self, queue: u32);
}

impl QueueNotified for VirtioConsole {
    fn notified(&self, queue: u32) {
        VirtioConsole::notified(self, queue);
    }
}

impl QueueNotified for VirtioBlock {
    fn notified(&self, queue: u32) {
        VirtioBlock::notified(self, queue);
    }
}
