//! The virtio-mmio register file (virtio 1.2, 4.2.2), decoded into
//! actions on a device's queues. Offsets and values are the spec's.

use virtio_queue::{Queue, QueueState, QueueT};

/// The window one device takes: registers and its config space.
pub const MMIO_SIZE: u64 = 0x1000;

/// "virt" in little-endian: the magic value.
const MAGIC: u32 = 0x7472_6976;
const VERSION: u32 = 2;
/// Vendor id: none of the registered ones.
const VENDOR: u32 = 0x4550_4845;

pub(super) const MAGIC_VALUE: u64 = 0x000;
pub(super) const VERSION_REG: u64 = 0x004;
pub(super) const DEVICE_ID: u64 = 0x008;
pub(super) const VENDOR_ID: u64 = 0x00C;
pub(super) const DEVICE_FEATURES: u64 = 0x010;
pub(super) const DEVICE_FEATURES_SEL: u64 = 0x014;
pub(super) const DRIVER_FEATURES: u64 = 0x020;
pub(super) const DRIVER_FEATURES_SEL: u64 = 0x024;
pub(super) const QUEUE_SEL: u64 = 0x030;
pub(super) const QUEUE_NUM_MAX: u64 = 0x034;
pub(super) const QUEUE_NUM: u64 = 0x038;
pub(super) const QUEUE_READY: u64 = 0x044;
pub(super) const QUEUE_NOTIFY: u64 = 0x050;
pub(super) const INTERRUPT_STATUS: u64 = 0x060;
pub(super) const INTERRUPT_ACK: u64 = 0x064;
pub(super) const STATUS: u64 = 0x070;
pub(super) const QUEUE_DESC_LOW: u64 = 0x080;
pub(super) const QUEUE_DESC_HIGH: u64 = 0x084;
pub(super) const QUEUE_DRIVER_LOW: u64 = 0x090;
pub(super) const QUEUE_DRIVER_HIGH: u64 = 0x094;
pub(super) const QUEUE_DEVICE_LOW: u64 = 0x0A0;
pub(super) const QUEUE_DEVICE_HIGH: u64 = 0x0A4;
pub(super) const CONFIG_GENERATION: u64 = 0x0FC;
/// Where the device's own configuration space starts in the window.
pub(super) const CONFIG: u64 = 0x100;

/// `virtio_mmio.device=` for the kernel command line
/// (Documentation/admin-guide/kernel-parameters.txt).
pub fn cmdline_device(base: u64, irq: u32) -> String {
    format!("virtio_mmio.device=4K@{base:#x}:{irq}")
}

/// The transport's state: feature negotiation, status, queue selection.
pub(super) struct Transport {
    pub device_id: u32,
    pub device_features: u64,
    pub driver_features: u64,
    features_sel: u32,
    driver_features_sel: u32,
    pub status: u32,
    queue_sel: u32,
    pub interrupt_status: u32,
    pub queues: Vec<Queue>,
    /// The device's configuration space (read-only to the driver here),
    /// set by the device: not part of a snapshot.
    pub config: Vec<u8>,
}

/// The transport's state in a snapshot: plain data.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TransportState {
    /// Features the device offers.
    pub device_features: u64,
    /// Features the driver accepted.
    pub driver_features: u64,
    /// Which 32 bits of `device_features` the driver reads
    /// (`DeviceFeaturesSel`).
    pub features_sel: u32,
    /// Which 32 bits of `driver_features` the driver writes
    /// (`DriverFeaturesSel`).
    pub driver_features_sel: u32,
    /// The device status the driver set (`ACKNOWLEDGE`, `DRIVER_OK`, ...).
    pub status: u32,
    /// The queue the queue registers address (`QueueSel`).
    pub queue_sel: u32,
    /// Interrupt causes not yet acknowledged (`InterruptStatus`).
    pub interrupt_status: u32,
    /// Each queue's state, by index.
    pub queues: Vec<SavedQueue>,
}

/// virtio-queue's `QueueState`, as a snapshot stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SavedQueue {
    max_size: u16,
    next_avail: u16,
    next_used: u16,
    event_idx_enabled: bool,
    size: u16,
    ready: bool,
    desc_table: u64,
    avail_ring: u64,
    used_ring: u64,
}

impl From<QueueState> for SavedQueue {
    fn from(q: QueueState) -> SavedQueue {
        SavedQueue {
            max_size: q.max_size,
            next_avail: q.next_avail,
            next_used: q.next_used,
            event_idx_enabled: q.event_idx_enabled,
            size: q.size,
            ready: q.ready,
            desc_table: q.desc_table,
            avail_ring: q.avail_ring,
            used_ring: q.used_ring,
        }
    }
}

impl From<SavedQueue> for QueueState {
    fn from(q: SavedQueue) -> QueueState {
        QueueState {
            max_size: q.max_size,
            next_avail: q.next_avail,
            next_used: q.next_used,
            event_idx_enabled: q.event_idx_enabled,
            size: q.size,
            ready: q.ready,
            desc_table: q.desc_table,
            avail_ring: q.avail_ring,
            used_ring: q.used_ring,
        }
    }
}

/// What a register write asks the device to do.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Action {
    None,
    Notify(u32),
    Reset,
}

impl Transport {
    pub fn new(device_id: u32, device_features: u64, queues: Vec<Queue>) -> Transport {
        Transport {
            device_id,
            device_features,
            driver_features: 0,
            features_sel: 0,
            driver_features_sel: 0,
            status: 0,
            queue_sel: 0,
            interrupt_status: 0,
            queues,
            config: Vec::new(),
        }
    }

    pub fn state(&self) -> TransportState {
        TransportState {
            device_features: self.device_features,
            driver_features: self.driver_features,
            features_sel: self.features_sel,
            driver_features_sel: self.driver_features_sel,
            status: self.status,
            queue_sel: self.queue_sel,
            interrupt_status: self.interrupt_status,
            queues: self.queues.iter().map(|q| q.state().into()).collect(),
        }
    }

    /// The transport of `device_id` in a saved `state`; `None` when a
    /// queue's saved state is not one virtio-queue accepts.
    pub fn from_state(device_id: u32, state: &TransportState) -> Option<Transport> {
        let queues = state
            .queues
            .iter()
            .map(|q| Queue::try_from(QueueState::from(*q)).ok())
            .collect::<Option<Vec<_>>>()?;
        Some(Transport {
            device_id,
            device_features: state.device_features,
            driver_features: state.driver_features,
            features_sel: state.features_sel,
            driver_features_sel: state.driver_features_sel,
            status: state.status,
            queue_sel: state.queue_sel,
            interrupt_status: state.interrupt_status,
            queues,
            config: Vec::new(),
        })
    }

    fn queue(&mut self) -> Option<&mut Queue> {
        self.queues.get_mut(self.queue_sel as usize)
    }

    /// A driver's read of `data.len()` bytes at `offset`: a register (a
    /// 32-bit one, of which the bytes asked for) or the config space.
    pub fn read_bytes(&self, offset: u64, data: &mut [u8]) {
        if offset >= CONFIG {
            let start = (offset - CONFIG) as usize;
            for (i, b) in data.iter_mut().enumerate() {
                *b = self.config.get(start + i).copied().unwrap_or(0);
            }
            return;
        }
        let bytes = self.read(offset & !3).to_le_bytes();
        let start = (offset & 3) as usize;
        for (i, b) in data.iter_mut().enumerate() {
            *b = bytes.get(start + i).copied().unwrap_or(0);
        }
    }

    /// A driver's write at `offset` (registers are 32-bit; the config
    /// space is not writable here).
    pub fn write_bytes(&mut self, offset: u64, data: &[u8]) -> Action {
        if offset >= CONFIG {
            return Action::None;
        }
        let mut bytes = [0u8; 4];
        for (b, d) in bytes.iter_mut().zip(data) {
            *b = *d;
        }
        self.write(offset, u32::from_le_bytes(bytes))
    }

    pub fn read(&self, offset: u64) -> u32 {
        let queue = self.queues.get(self.queue_sel as usize);
        match offset {
            MAGIC_VALUE => MAGIC,
            VERSION_REG => VERSION,
            DEVICE_ID => self.device_id,
            VENDOR_ID => VENDOR,
            DEVICE_FEATURES => match self.features_sel {
                0 => self.device_features as u32,
                1 => (self.device_features >> 32) as u32,
                _ => 0,
            },
            QUEUE_NUM_MAX => queue.map_or(0, |q| u32::from(q.max_size())),
            QUEUE_READY => queue.map_or(0, |q| u32::from(q.ready())),
            INTERRUPT_STATUS => self.interrupt_status,
            STATUS => self.status,
            CONFIG_GENERATION => 0,
            _ => 0,
        }
    }

    pub fn write(&mut self, offset: u64, value: u32) -> Action {
        match offset {
            DEVICE_FEATURES_SEL => self.features_sel = value,
            DRIVER_FEATURES_SEL => self.driver_features_sel = value,
            DRIVER_FEATURES => {
                let shift = 32 * u64::from(self.driver_features_sel.min(1));
                let mask = 0xFFFF_FFFFu64 << shift;
                self.driver_features =
                    (self.driver_features & !mask) | ((u64::from(value) << shift) & mask);
            }
            QUEUE_SEL => self.queue_sel = value,
            QUEUE_NUM => {
                if let Some(q) = self.queue() {
                    q.set_size(value as u16);
                }
            }
            QUEUE_READY => {
                if let Some(q) = self.queue() {
                    q.set_ready(value == 1);
                }
            }
            QUEUE_NOTIFY => return Action::Notify(value),
            INTERRUPT_ACK => self.interrupt_status &= !value,
            STATUS if value == 0 => {
                self.reset();
                return Action::Reset;
            }
            STATUS => self.status = value,
            QUEUE_DESC_LOW => self.with_queue(|q| q.set_desc_table_address(Some(value), None)),
            QUEUE_DESC_HIGH => self.with_queue(|q| q.set_desc_table_address(None, Some(value))),
            QUEUE_DRIVER_LOW => self.with_queue(|q| q.set_avail_ring_address(Some(value), None)),
            QUEUE_DRIVER_HIGH => self.with_queue(|q| q.set_avail_ring_address(None, Some(value))),
            QUEUE_DEVICE_LOW => self.with_queue(|q| q.set_used_ring_address(Some(value), None)),
            QUEUE_DEVICE_HIGH => self.with_queue(|q| q.set_used_ring_address(None, Some(value))),
            _ => {}
        }
        Action::None
    }

    fn with_queue(&mut self, f: impl FnOnce(&mut Queue)) {
        if let Some(q) = self.queue() {
            f(q);
        }
    }

    fn reset(&mut self) {
        self.status = 0;
        self.driver_features = 0;
        self.interrupt_status = 0;
        for q in &mut self.queues {
            q.reset();
        }
    }

    /// DRIVER_OK set: the driver may use the queues.
    pub fn driver_ok(&self) -> bool {
        const DRIVER_OK: u32 = 4;
        self.status & DRIVER_OK != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transport() -> Transport {
        let queues = vec![Queue::new(256).unwrap(), Queue::new(256).unwrap()];
        Transport::new(3, super::super::F_VERSION_1, queues)
    }

    #[test]
    fn identity_registers_read_as_the_spec_says() {
        let t = transport();
        assert_eq!(t.read(MAGIC_VALUE), 0x7472_6976);
        assert_eq!(t.read(VERSION_REG), 2);
        assert_eq!(t.read(DEVICE_ID), 3);
    }

    #[test]
    fn features_are_read_and_written_in_32_bit_halves() {
        let mut t = transport();
        t.write(DEVICE_FEATURES_SEL, 1);
        assert_eq!(t.read(DEVICE_FEATURES), 1);
        t.write(DRIVER_FEATURES_SEL, 1);
        t.write(DRIVER_FEATURES, 1);
        assert_eq!(t.driver_features, super::super::F_VERSION_1);
    }

    #[test]
    fn queues_are_configured_through_the_selector() {
        let mut t = transport();
        t.write(QUEUE_SEL, 1);
        assert_eq!(t.read(QUEUE_NUM_MAX), 256);
        t.write(QUEUE_NUM, 64);
        t.write(QUEUE_DESC_LOW, 0x1000);
        t.write(QUEUE_READY, 1);
        assert_eq!(t.queues[1].size(), 64);
        assert_eq!(t.queues[1].desc_table(), 0x1000);
        assert!(t.queues[1].ready());
        assert_eq!(t.write(QUEUE_NOTIFY, 1), Action::Notify(1));
        let saved = t.state();
        let back = Transport::from_state(3, &saved).unwrap();
        assert_eq!(back.state(), saved);
        assert!(back.queues[1].ready());
        assert_eq!(t.write(STATUS, 0), Action::Reset);
        assert!(!t.queues[1].ready());
    }
}
