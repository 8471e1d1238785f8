//! A read-only virtio block device (virtio 1.2, 5.2), one request queue:
//! the microVM's shared disk of large read-only files (the scientific
//! python and its compiled code), which every VM restored from a template
//! reads from the same host file instead of carrying a copy in its RAM.
//!
//! The guest reads sectors (`VIRTIO_BLK_T_IN`) and asks the disk's id;
//! anything that would write is refused (`VIRTIO_BLK_F_RO` is offered, and
//! a write request gets `VIRTIO_BLK_S_IOERR`). Reads go straight from the
//! image file into the request's buffers, a whole descriptor chain at a
//! time, and the guest is interrupted through an irqfd.
//!
//! Not here: writes, flush, discard, multiple queues, event index.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex, PoisonError};

use virtio_queue::{DescriptorChain, Queue, QueueT};
use vm_memory::GuestMemoryMmap;
use vmm_sys_util::eventfd::EventFd;

use super::F_VERSION_1;
use super::mmio::{Action, Transport, TransportState};
use crate::memory::GuestMemory;

/// Device type of a block device (virtio 1.2, 5.2).
const DEVICE_BLOCK: u32 = 2;
/// Feature bits (virtio 1.2, 5.2.3): the maximum number of segments in a
/// request is in the config, and the device is read-only.
const F_SEG_MAX: u64 = 1 << 2;
const F_RO: u64 = 1 << 5;
/// Request types and statuses (virtio 1.2, 5.2.6).
const T_IN: u32 = 0;
const T_GET_ID: u32 = 8;
const S_OK: u8 = 0;
const S_IOERR: u8 = 1;
const S_UNSUPP: u8 = 2;
/// A sector is 512 bytes whatever the disk's block size (5.2.6).
pub const SECTOR: u64 = 512;
/// The request header: type, reserved, sector.
const HEADER_BYTES: usize = 16;
/// The id string's length (`VIRTIO_BLK_ID_BYTES`).
const ID_BYTES: usize = 20;
/// Entries in the request queue, and segments a request may have (two
/// descriptors are the header and the status).
const QUEUE_SIZE: u16 = 256;
const SEG_MAX: u32 = QUEUE_SIZE as u32 - 2;
/// The largest read one request may ask for: Linux asks for at most
/// `max_sectors` (a few hundred KiB); anything past this is refused.
const MAX_READ: usize = 8 << 20;
/// `InterruptStatus` bit: a used buffer was returned.
const INT_USED_BUFFER: u32 = 1;

/// The device in a snapshot: its transport and queue. The image itself is
/// the snapshot's to name (see `linux::snapshot`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BlockState {
    /// The MMIO transport, with the one queue.
    pub transport: TransportState,
}

struct State {
    transport: Transport,
    /// Requests served and bytes read, for the record.
    requests: u64,
    bytes_read: u64,
}

/// The block device, cheap to clone: every clone is the same device.
#[derive(Clone)]
pub struct VirtioBlock {
    state: Arc<Mutex<State>>,
    image: Arc<File>,
    /// The image's length in bytes (a whole number of sectors is shown).
    len: u64,
    id: [u8; ID_BYTES],
    memory: Arc<GuestMemory>,
    irq: Arc<EventFd>,
}

impl VirtioBlock {
    /// A fresh device over `image` (opened read-only by the caller).
    pub fn new(
        memory: Arc<GuestMemory>,
        irq: EventFd,
        image: File,
        id: &str,
    ) -> std::io::Result<VirtioBlock> {
        let transport = Transport::new(DEVICE_BLOCK, F_VERSION_1 | F_RO | F_SEG_MAX, queues());
        Self::with_transport(memory, irq, image, id, transport)
    }

    /// The device in a saved `state` over a restored guest's memory; `None`
    /// if the state is not one this device can be in.
    pub fn from_state(
        memory: Arc<GuestMemory>,
        irq: EventFd,
        image: File,
        id: &str,
        state: &BlockState,
    ) -> Option<VirtioBlock> {
        let transport = Transport::from_state(DEVICE_BLOCK, &state.transport)?;
        (transport.queues.len() == 1).then_some(())?;
        Self::with_transport(memory, irq, image, id, transport).ok()
    }

    fn with_transport(
        memory: Arc<GuestMemory>,
        irq: EventFd,
        image: File,
        id: &str,
        mut transport: Transport,
    ) -> std::io::Result<VirtioBlock> {
        let len = image.metadata()?.len();
        transport.config = config_space(len / SECTOR);
        let mut name = [0u8; ID_BYTES];
        for (b, c) in name.iter_mut().zip(id.bytes()) {
            *b = c;
        }
        Ok(VirtioBlock {
            state: Arc::new(Mutex::new(State {
                transport,
                requests: 0,
                bytes_read: 0,
            })),
            image: Arc::new(image),
            len,
            id: name,
            memory,
            irq: Arc::new(irq),
        })
    }

    /// The device's state, for a snapshot (the guest must be stopped).
    pub fn state(&self) -> BlockState {
        BlockState {
            transport: self.lock().transport.state(),
        }
    }

    /// `(requests, bytes read)` so far.
    pub fn counters(&self) -> (u64, u64) {
        let s = self.lock();
        (s.requests, s.bytes_read)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A register read at `offset` in the device's window.
    pub fn mmio_read(&self, offset: u64, data: &mut [u8]) {
        self.lock().transport.read_bytes(offset, data);
    }

    /// A register write at `offset`.
    pub fn mmio_write(&self, offset: u64, data: &[u8]) {
        let mut state = self.lock();
        if let Action::Notify(queue) = state.transport.write_bytes(offset, data) {
            self.serve(&mut state, queue);
        }
    }

    /// The guest notified `queue` (through an ioeventfd, or an exit).
    pub fn notified(&self, queue: u32) {
        let mut state = self.lock();
        self.serve(&mut state, queue);
    }

    /// Serves the queue as if notified: after a restore, requests posted
    /// before the snapshot whose notification was not served yet.
    pub fn resume(&self) {
        let mut state = self.lock();
        if state.transport.driver_ok() {
            self.serve(&mut state, 0);
        }
    }

    fn serve(&self, state: &mut State, queue: u32) {
        if queue != 0 || !state.transport.driver_ok() {
            return;
        }
        let mem = self.memory.mmap();
        let mut used = false;
        while let Some(chain) = state.transport.queues[0].pop_descriptor_chain(mem) {
            let head = chain.head_index();
            let (written, read) = self.request(mem, chain);
            state.requests += 1;
            state.bytes_read += read as u64;
            let _ = state.transport.queues[0].add_used(mem, head, written);
            used = true;
        }
        if used {
            state.transport.interrupt_status |= INT_USED_BUFFER;
            if let Err(e) = self.irq.write(1) {
                tracing::warn!(error = %e, "cannot interrupt the guest");
            }
        }
    }

    /// Carries out one request; `(bytes written to the guest, bytes read
    /// from the image)`. A malformed chain gets no status at all (0 bytes
    /// written), which the guest's driver reports as an I/O error.
    fn request(
        &self,
        mem: &GuestMemoryMmap,
        chain: DescriptorChain<&GuestMemoryMmap>,
    ) -> (u32, usize) {
        let Ok(mut reader) = chain.clone().reader(mem) else {
            return (0, 0);
        };
        let mut header = [0u8; HEADER_BYTES];
        if std::io::Read::read_exact(&mut reader, &mut header).is_err() {
            return (0, 0);
        }
        let kind = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let mut sector = [0u8; 8];
        sector.copy_from_slice(&header[8..16]);
        let sector = u64::from_le_bytes(sector);
        let Ok(mut data) = chain.writer(mem) else {
            return (0, 0);
        };
        let Some(room) = data.available_bytes().checked_sub(1) else {
            return (0, 0);
        };
        let Ok(mut status) = data.split_at(room) else {
            return (0, 0);
        };
        let (code, payload, read) = match kind {
            T_IN => match self.read_sectors(sector, room) {
                Some(bytes) => (S_OK, bytes, room),
                None => (S_IOERR, Vec::new(), 0),
            },
            T_GET_ID => (S_OK, self.id[..room.min(ID_BYTES)].to_vec(), 0),
            // Writes, flushes, discards: a read-only disk does none.
            1 | 4 | 11 | 13 => (S_IOERR, Vec::new(), 0),
            _ => (S_UNSUPP, Vec::new(), 0),
        };
        if std::io::Write::write_all(&mut data, &payload).is_err()
            || std::io::Write::write_all(&mut status, &[code]).is_err()
        {
            return (0, 0);
        }
        ((payload.len() + 1) as u32, read)
    }

    /// `len` bytes from `sector`, when they lie inside the image.
    fn read_sectors(&self, sector: u64, len: usize) -> Option<Vec<u8>> {
        if len > MAX_READ || !(len as u64).is_multiple_of(SECTOR) {
            return None;
        }
        let start = sector.checked_mul(SECTOR)?;
        let end = start.checked_add(len as u64)?;
        if end > self.len / SECTOR * SECTOR {
            return None;
        }
        let mut bytes = vec![0u8; len];
        self.image.read_exact_at(&mut bytes, start).ok()?;
        Some(bytes)
    }
}

fn queues() -> Vec<Queue> {
    vec![Queue::new(QUEUE_SIZE).expect("a power-of-two queue size is valid")]
}

/// `struct virtio_blk_config` up to `seg_max` (5.2.4): capacity in
/// sectors, `size_max` (not offered), `seg_max`.
fn config_space(capacity: u64) -> Vec<u8> {
    let mut config = Vec::with_capacity(16);
    config.extend_from_slice(&capacity.to_le_bytes());
    config.extend_from_slice(&0u32.to_le_bytes());
    config.extend_from_slice(&SEG_MAX.to_le_bytes());
    config
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use vm_memory::{Bytes, GuestAddress};

    use super::super::mmio::{
        CONFIG, DRIVER_FEATURES, DRIVER_FEATURES_SEL, QUEUE_DESC_LOW, QUEUE_DEVICE_LOW,
        QUEUE_DRIVER_LOW, QUEUE_NOTIFY, QUEUE_NUM, QUEUE_READY, STATUS,
    };

    const DESC: u64 = 0x1000;
    const AVAIL: u64 = 0x2000;
    const USED: u64 = 0x3000;
    const HEADER: u64 = 0x4000;
    const DATA: u64 = 0x5000;
    const STATUS_BYTE: u64 = 0x8000;
    /// Descriptor flags (virtio 1.2, 2.7.5).
    const NEXT: u16 = 1;
    const WRITE: u16 = 2;

    /// A device over a 3-sector-and-a-bit image, its queue set up by a
    /// driver the way Linux's does it, through the registers.
    fn device() -> (VirtioBlock, Arc<GuestMemory>, Vec<u8>) {
        let memory = Arc::new(GuestMemory::new(1).unwrap());
        let image: Vec<u8> = (0..3 * 512 + 100).map(|i| (i * 7 % 251) as u8).collect();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&image).unwrap();
        let irq = EventFd::new(libc::EFD_NONBLOCK).unwrap();
        let disk = VirtioBlock::new(memory.clone(), irq, file, "test-disk").unwrap();
        let w = |offset: u64, value: u32| disk.mmio_write(offset, &value.to_le_bytes());
        w(STATUS, 1 | 2);
        w(DRIVER_FEATURES_SEL, 1);
        w(DRIVER_FEATURES, 1);
        w(QUEUE_NUM, 8);
        w(QUEUE_DESC_LOW, DESC as u32);
        w(QUEUE_DRIVER_LOW, AVAIL as u32);
        w(QUEUE_DEVICE_LOW, USED as u32);
        w(QUEUE_READY, 1);
        w(STATUS, 1 | 2 | 4 | 8);
        (disk, memory, image)
    }

    /// Posts one request (header, `data_len` writable bytes, status) and
    /// notifies; returns the used length, the data and the status.
    fn request(
        disk: &VirtioBlock,
        memory: &GuestMemory,
        kind: u32,
        sector: u64,
        data_len: u32,
    ) -> (u32, Vec<u8>, u8) {
        let mem = memory.mmap();
        let mut header = [0u8; 16];
        header[0..4].copy_from_slice(&kind.to_le_bytes());
        header[8..16].copy_from_slice(&sector.to_le_bytes());
        mem.write_slice(&header, GuestAddress(HEADER)).unwrap();
        mem.write_slice(&vec![0xAA; data_len as usize], GuestAddress(DATA))
            .unwrap();
        mem.write_obj(0xFFu8, GuestAddress(STATUS_BYTE)).unwrap();
        let descriptor = |i: u64, addr: u64, len: u32, flags: u16, next: u16| {
            let at = DESC + 16 * i;
            mem.write_obj(addr, GuestAddress(at)).unwrap();
            mem.write_obj(len, GuestAddress(at + 8)).unwrap();
            mem.write_obj(flags, GuestAddress(at + 12)).unwrap();
            mem.write_obj(next, GuestAddress(at + 14)).unwrap();
        };
        descriptor(0, HEADER, 16, NEXT, 1);
        descriptor(1, DATA, data_len, NEXT | WRITE, 2);
        descriptor(2, STATUS_BYTE, 1, WRITE, 0);
        let posted: u16 = mem.read_obj(GuestAddress(AVAIL + 2)).unwrap();
        mem.write_obj(0u16, GuestAddress(AVAIL + 4 + 2 * u64::from(posted % 8)))
            .unwrap();
        mem.write_obj(posted + 1, GuestAddress(AVAIL + 2)).unwrap();
        disk.mmio_write(QUEUE_NOTIFY, &0u32.to_le_bytes());
        let used: u16 = mem.read_obj(GuestAddress(USED + 2)).unwrap();
        assert_eq!(used, posted + 1, "the request was returned");
        let len: u32 = mem
            .read_obj(GuestAddress(USED + 4 + 8 * u64::from(posted % 8) + 4))
            .unwrap();
        let mut data = vec![0u8; data_len as usize];
        mem.read_slice(&mut data, GuestAddress(DATA)).unwrap();
        (len, data, mem.read_obj(GuestAddress(STATUS_BYTE)).unwrap())
    }

    #[test]
    fn sectors_read_back_as_the_image_holds_them() {
        let (disk, memory, image) = device();
        let (len, data, status) = request(&disk, &memory, T_IN, 1, 1024);
        assert_eq!((len, status), (1025, S_OK));
        assert_eq!(data, image[512..1536]);
        assert_eq!(disk.counters(), (1, 1024));
    }

    #[test]
    fn the_config_says_the_capacity_in_whole_sectors() {
        let (disk, _, _) = device();
        let mut capacity = [0u8; 8];
        disk.mmio_read(CONFIG, &mut capacity);
        assert_eq!(u64::from_le_bytes(capacity), 3);
        let mut seg_max = [0u8; 4];
        disk.mmio_read(CONFIG + 12, &mut seg_max);
        assert_eq!(u32::from_le_bytes(seg_max), SEG_MAX);
    }

    #[test]
    fn writes_reads_past_the_end_and_odd_lengths_are_refused() {
        let (disk, memory, _) = device();
        for (kind, sector, len) in [
            (1, 0, 512),
            (T_IN, 2, 1024),
            (T_IN, u64::MAX, 512),
            (T_IN, 0, 100),
        ] {
            let (used, _, status) = request(&disk, &memory, kind, sector, len);
            assert_eq!((used, status), (1, S_IOERR), "{kind} {sector} {len}");
        }
        let (_, _, status) = request(&disk, &memory, 99, 0, 512);
        assert_eq!(status, S_UNSUPP);
        let (len, id, status) = request(&disk, &memory, T_GET_ID, 0, 20);
        assert_eq!((len, status), (21, S_OK));
        assert!(id.starts_with(b"test-disk\0"));
    }
}
