//! COM1, a 16550 UART (vm-superio's model): the guest kernel's console.
//! Output is kept (bounded) for the caller; the UART's interrupt goes to
//! the guest through an irqfd, so the kernel's tty layer can use it.

use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use vm_superio::serial::SerialState;
use vm_superio::{Serial, Trigger};
use vmm_sys_util::eventfd::EventFd;

/// COM1's first port.
pub const COM1_BASE: u16 = 0x3F8;
/// COM1's interrupt line on the PC's PIC/IOAPIC.
pub const COM1_IRQ: u32 = 4;
/// The UART's eight registers.
const PORTS: u16 = 8;
/// Console bytes kept: the boot log's tail is what explains a failure.
const KEEP_BYTES: usize = 256 << 10;

/// Raises COM1's interrupt through an irqfd.
pub struct IrqTrigger(pub EventFd);

impl Trigger for IrqTrigger {
    type E = io::Error;
    fn trigger(&self) -> io::Result<()> {
        self.0.write(1)
    }
}

/// Where the UART's bytes go: a bounded buffer shared with the VMM.
#[derive(Clone, Default)]
pub struct ConsoleLog(Arc<Mutex<Vec<u8>>>);

impl ConsoleLog {
    /// Everything kept so far.
    pub fn contents(&self) -> Vec<u8> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl io::Write for ConsoleLog {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let mut log = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        log.extend_from_slice(data);
        if log.len() > KEEP_BYTES {
            let cut = log.len() - KEEP_BYTES;
            log.drain(..cut);
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// COM1 with its log.
pub struct Console {
    uart: Serial<IrqTrigger, vm_superio::serial::NoEvents, ConsoleLog>,
    log: ConsoleLog,
}

impl Console {
    /// COM1 at reset, raising its interrupt through `irq`.
    pub fn new(irq: EventFd) -> Console {
        let log = ConsoleLog::default();
        Console {
            uart: Serial::new(IrqTrigger(irq), log.clone()),
            log,
        }
    }

    /// A UART in `state` (from [`Console::state`]), with an empty log.
    pub fn from_state(irq: EventFd, state: &SavedSerial) -> io::Result<Console> {
        let log = ConsoleLog::default();
        let uart = Serial::from_state(
            &state.clone().into(),
            IrqTrigger(irq),
            vm_superio::serial::NoEvents,
            log.clone(),
        )
        .map_err(|e| io::Error::other(format!("{e:?}")))?;
        Ok(Console { uart, log })
    }

    /// The UART's registers and FIFO, for a snapshot.
    pub fn state(&self) -> SavedSerial {
        self.uart.state().into()
    }

    /// A handle on what the guest has written, shared with the UART.
    pub fn log(&self) -> ConsoleLog {
        self.log.clone()
    }

    pub(super) fn owns(&self, port: u16) -> bool {
        (COM1_BASE..COM1_BASE + PORTS).contains(&port)
    }

    pub(super) fn write(&mut self, port: u16, data: &[u8]) {
        if let Some(&value) = data.first() {
            let offset = (port - COM1_BASE) as u8;
            if let Err(e) = self.uart.write(offset, value) {
                tracing::debug!(?e, "console write");
            }
        }
    }

    pub(super) fn read(&mut self, port: u16, data: &mut [u8]) {
        let value = self.uart.read((port - COM1_BASE) as u8);
        data.fill(value);
    }
}

/// vm-superio's `SerialState`, as a snapshot stores it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SavedSerial {
    baud_divisor_low: u8,
    baud_divisor_high: u8,
    interrupt_enable: u8,
    interrupt_identification: u8,
    line_control: u8,
    line_status: u8,
    modem_control: u8,
    modem_status: u8,
    scratch: u8,
    in_buffer: Vec<u8>,
}

impl From<SerialState> for SavedSerial {
    fn from(s: SerialState) -> SavedSerial {
        SavedSerial {
            baud_divisor_low: s.baud_divisor_low,
            baud_divisor_high: s.baud_divisor_high,
            interrupt_enable: s.interrupt_enable,
            interrupt_identification: s.interrupt_identification,
            line_control: s.line_control,
            line_status: s.line_status,
            modem_control: s.modem_control,
            modem_status: s.modem_status,
            scratch: s.scratch,
            in_buffer: s.in_buffer,
        }
    }
}

impl From<SavedSerial> for SerialState {
    fn from(s: SavedSerial) -> SerialState {
        SerialState {
            baud_divisor_low: s.baud_divisor_low,
            baud_divisor_high: s.baud_divisor_high,
            interrupt_enable: s.interrupt_enable,
            interrupt_identification: s.interrupt_identification,
            line_control: s.line_control,
            line_status: s.line_status,
            modem_control: s.modem_control,
            modem_status: s.modem_status,
            scratch: s.scratch,
            in_buffer: s.in_buffer,
        }
    }
}
