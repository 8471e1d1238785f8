//! The virtio console (virtio 1.2, 5.3), single port: queue 0 carries
//! bytes to the guest (`/dev/hvc0` reads them), queue 1 bytes from it. The
//! host's side is a byte stream: what the guest writes goes to a sink as
//! whole descriptor chains; what the host pushes fills the guest's receive
//! buffers as they come. Shared between the vCPU thread (register access)
//! and the host's I/O thread (pushing data), behind one lock.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex, PoisonError};

use virtio_queue::{Queue, QueueT};
use vmm_sys_util::eventfd::EventFd;

use super::mmio::{Action, Transport, TransportState};
use super::{DEVICE_CONSOLE, F_VERSION_1};
use crate::memory::GuestMemory;

const RX: usize = 0;
const TX: usize = 1;
/// Entries per queue the device offers.
const QUEUE_SIZE: u16 = 256;
/// `InterruptStatus` bit: a used buffer was returned.
const INT_USED_BUFFER: u32 = 1;
/// Bytes from the host waiting for guest buffers, at most: past this the
/// host's pushes wait (backpressure instead of unbounded memory).
pub const MAX_PENDING: usize = 4 << 20;

/// Where the guest's output goes.
pub type ConsoleSink = Box<dyn Write + Send>;

struct State {
    transport: Transport,
    pending: VecDeque<u8>,
    sink: ConsoleSink,
    /// Bytes moved each way, and queue notifications seen.
    pub to_guest: u64,
    pub from_guest: u64,
    pub notifies: u64,
}

/// The console in a snapshot: its transport, and bytes the host had
/// pushed that the guest had not taken yet.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ConsoleState {
    /// The MMIO transport, with both queues.
    pub transport: TransportState,
    /// Bytes the host pushed that no guest buffer had taken yet.
    pub pending: Vec<u8>,
}

/// The console, cheap to clone: every clone is the same device.
#[derive(Clone)]
pub struct VirtioConsole {
    state: Arc<Mutex<State>>,
    memory: Arc<GuestMemory>,
    irq: Arc<EventFd>,
}

impl VirtioConsole {
    /// A console at reset over the guest's `memory`; its interrupt goes through
    /// `irq`, the guest's output to `sink`.
    pub fn new(memory: Arc<GuestMemory>, irq: EventFd, sink: ConsoleSink) -> VirtioConsole {
        let queues = (0..2)
            .map(|_| Queue::new(QUEUE_SIZE).expect("a power-of-two queue size is valid"))
            .collect();
        let transport = Transport::new(DEVICE_CONSOLE, F_VERSION_1, queues);
        Self::with_transport(memory, irq, sink, transport, VecDeque::new())
    }

    /// The console in a saved `state`, over a restored guest's memory;
    /// `None` if the state is not one a console can be in.
    pub fn from_state(
        memory: Arc<GuestMemory>,
        irq: EventFd,
        sink: ConsoleSink,
        state: &ConsoleState,
    ) -> Option<VirtioConsole> {
        let transport = Transport::from_state(DEVICE_CONSOLE, &state.transport)?;
        (transport.queues.len() == 2 && state.pending.len() <= MAX_PENDING).then_some(())?;
        let pending = state.pending.iter().copied().collect();
        Some(Self::with_transport(memory, irq, sink, transport, pending))
    }

    /// The device's state, for a snapshot (the guest must be stopped).
    pub fn state(&self) -> ConsoleState {
        let s = self.lock();
        ConsoleState {
            transport: s.transport.state(),
            pending: s.pending.iter().copied().collect(),
        }
    }

    fn with_transport(
        memory: Arc<GuestMemory>,
        irq: EventFd,
        sink: ConsoleSink,
        transport: Transport,
        pending: VecDeque<u8>,
    ) -> VirtioConsole {
        VirtioConsole {
            state: Arc::new(Mutex::new(State {
                transport,
                pending,
                sink,
                to_guest: 0,
                from_guest: 0,
                notifies: 0,
            })),
            memory,
            irq: Arc::new(irq),
        }
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
        match state.transport.write_bytes(offset, data) {
            Action::Notify(queue) => self.notify(&mut state, queue),
            Action::Reset => state.pending.clear(),
            Action::None => {}
        }
    }

    /// The guest notified `queue` (the `QueueNotify` register, reached
    /// through an ioeventfd instead of an exit when the VMM has one).
    pub fn notified(&self, queue: u32) {
        let mut state = self.lock();
        self.notify(&mut state, queue);
    }

    /// Serves both queues as if notified: after a restore, whatever the
    /// guest posted before the snapshot whose notification had not been
    /// served yet (an ioeventfd's count is not part of a snapshot).
    pub fn resume(&self) {
        let mut state = self.lock();
        if state.transport.driver_ok() {
            self.drain_tx(&mut state);
            self.fill_rx(&mut state);
        }
    }

    fn notify(&self, state: &mut State, queue: u32) {
        state.notifies += 1;
        match queue as usize {
            TX => self.drain_tx(state),
            RX => self.fill_rx(state),
            _ => {}
        }
    }

    /// Queues `data` for the guest and fills whatever receive buffers it
    /// has posted. Returns how many bytes were accepted (fewer when
    /// [`MAX_PENDING`] is reached).
    pub fn push(&self, data: &[u8]) -> usize {
        let mut state = self.lock();
        let room = MAX_PENDING.saturating_sub(state.pending.len());
        let take = data.len().min(room);
        state.pending.extend(&data[..take]);
        self.fill_rx(&mut state);
        take
    }

    /// `(to guest, from guest, notifications)` so far.
    pub fn counters(&self) -> (u64, u64, u64) {
        let s = self.lock();
        (s.to_guest, s.from_guest, s.notifies)
    }

    /// Whether the guest's driver is up.
    pub fn ready(&self) -> bool {
        let s = self.lock();
        s.transport.driver_ok() && s.transport.queues[RX].ready()
    }

    fn drain_tx(&self, state: &mut State) {
        let mem = self.memory.mmap();
        let mut used = false;
        while let Some(chain) = state.transport.queues[TX].pop_descriptor_chain(mem) {
            let head = chain.head_index();
            let mut buf = Vec::new();
            if let Ok(mut reader) = chain.reader(mem) {
                let _ = reader.read_to_end(&mut buf);
            }
            state.from_guest += buf.len() as u64;
            if let Err(e) = state.sink.write_all(&buf).and_then(|_| state.sink.flush()) {
                tracing::debug!(error = %e, "console sink closed");
            }
            let _ = state.transport.queues[TX].add_used(mem, head, 0);
            used = true;
        }
        if used {
            self.interrupt(state);
        }
    }

    fn fill_rx(&self, state: &mut State) {
        if state.pending.is_empty() || !state.transport.driver_ok() {
            return;
        }
        let mem = self.memory.mmap();
        let mut used = false;
        while !state.pending.is_empty() {
            let Some(chain) = state.transport.queues[RX].pop_descriptor_chain(mem) else {
                break;
            };
            let head = chain.head_index();
            let written = match chain.writer(mem) {
                Ok(mut writer) => {
                    let n = writer.available_bytes().min(state.pending.len());
                    let chunk: Vec<u8> = state.pending.drain(..n).collect();
                    writer.write_all(&chunk).map(|_| n).unwrap_or(0)
                }
                Err(_) => 0,
            };
            state.to_guest += written as u64;
            let _ = state.transport.queues[RX].add_used(mem, head, written as u32);
            used = true;
        }
        if used {
            self.interrupt(state);
        }
    }

    fn interrupt(&self, state: &mut State) {
        state.transport.interrupt_status |= INT_USED_BUFFER;
        if let Err(e) = self.irq.write(1) {
            tracing::warn!(error = %e, "cannot interrupt the guest");
        }
    }
}
