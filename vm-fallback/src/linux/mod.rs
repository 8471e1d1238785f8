//! Booting a Linux guest with the 64-bit boot protocol: the kernel's ELF
//! (`vmlinux`) loaded where it asks, a zero page with the e820 map, the
//! command line and the initramfs, and the vCPU entered at `startup_64` in
//! long mode — no firmware, no real mode. The VM gets an in-kernel irqchip
//! and PIT, COM1 for its console and the i8042 reset line as its "done".
//!
//! This is `builder.rs` for Linux guests: the wiring in one place.
//! Snapshots of a booted guest and their restore are in `snapshot.rs`.

mod snapshot;
pub mod symbols;
mod zero_page;

pub use snapshot::{LinuxSnapshot, RestoreReport};

use std::cell::RefCell;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use linux_loader::loader::{Elf, KernelLoader};
use vm_memory::{GuestAddress, GuestMemoryBackend};
use vmm_sys_util::eventfd::EventFd;

use crate::arch::x86_64::{gdt, paging, regs};
use crate::devices::virtio::{
    BlockState, ConsoleSink, ConsoleState, MMIO_SIZE, Notifier, VirtioBlock, VirtioConsole,
    cmdline_device,
};
use crate::devices::{COM1_IRQ, Console, ConsoleLog, LegacyDevices, PortEvent};
use crate::exit::{Bus, Exit};
use crate::kvm::Kvm;
use crate::vcpu::{Flow, RunEnd, Vcpu, VcpuError};
use crate::vm::{Vm, VmConfig, VmError};
use crate::watchdog::StopSignal;

pub use zero_page::{CMDLINE_MAX, CMDLINE_START, HIMEM_START, ZERO_PAGE_START};

/// Where the boot stack starts: below the zero page, in low memory the
/// e820 map reports as RAM (as Firecracker does).
const BOOT_STACK_POINTER: u64 = 0x8FF0;
/// Offsets of the local APIC's LVT LINT0 and LINT1 registers.
const APIC_LVT0: usize = 0x350;
const APIC_LVT1: usize = 0x360;
/// LVT delivery modes (bits 8-10): ExtINT and NMI.
const APIC_MODE_EXTINT: u32 = 0x7;
const APIC_MODE_NMI: u32 = 0x4;
/// The virtio console's MMIO window: above RAM, below 4 GiB, where a PC
/// has no devices; and its interrupt line, the first free ISA one.
pub const VIRTIO_CONSOLE_BASE: u64 = 0xD000_0000;
/// The virtio console's interrupt line.
pub const VIRTIO_CONSOLE_IRQ: u32 = 5;
/// The read-only disk's window, right above the console's, and its
/// interrupt line (a PC's floppy line; a microVM has no floppy).
pub const VIRTIO_DISK_BASE: u64 = VIRTIO_CONSOLE_BASE + MMIO_SIZE;
/// The read-only disk's interrupt line.
pub const VIRTIO_DISK_IRQ: u32 = 6;
/// The disk's id, as the guest reads it (`/sys/block/vda/serial`).
const DISK_ID: &str = "ephemeral-programs";
/// x87 control word and MXCSR at reset, as the SDM gives them.
const FPU_CONTROL_WORD: u16 = 0x37F;
const MXCSR_DEFAULT: u32 = 0x1F80;

/// Why a Linux guest could not be booted, restored or given its devices.
#[derive(Debug, thiserror::Error)]
pub enum LinuxError {
    /// A KVM call on the VM failed.
    #[error(transparent)]
    Vm(#[from] VmError),
    /// A KVM call on the vCPU failed.
    #[error(transparent)]
    Vcpu(#[from] VcpuError),
    /// The kernel file could not be opened.
    #[error("cannot read the kernel {path}: {source}")]
    Kernel {
        /// The kernel's path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The kernel ELF could not be loaded into guest memory.
    #[error("cannot load the kernel: {0}")]
    Load(#[from] linux_loader::loader::Error),
    /// The boot setup (page tables, zero page, command line, initramfs) does
    /// not fit.
    #[error("the guest setup does not fit: {0}")]
    Setup(String),
    /// An eventfd for a device's interrupt could not be made.
    #[error("cannot make the console's interrupt: {0}")]
    Irq(std::io::Error),
    /// Taking or restoring the snapshot failed.
    #[error(transparent)]
    Snapshot(#[from] crate::snapshot::SnapshotError),
    /// A snapshot's device state that our devices cannot be restored to.
    #[error("the snapshot's device state is not one our devices can be in: {0}")]
    DeviceState(String),
    /// The disk image could not be opened.
    #[error("the disk image {path}: {source}")]
    Disk {
        /// The image's path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// What to boot.
#[derive(Debug, Clone)]
pub struct LinuxGuest {
    /// An uncompressed kernel ELF (`vmlinux`).
    pub kernel: PathBuf,
    /// A newc cpio archive, uncompressed.
    pub initramfs: Vec<u8>,
    /// The kernel command line (the disk's device is added to it).
    pub cmdline: String,
    /// Guest RAM, in MiB.
    pub memory_mib: usize,
    /// A read-only disk image (`/dev/vda` in the guest), if any: large
    /// read-only files every VM of a template shares from the host's file
    /// instead of its own RAM. Its device is added to the command line.
    pub disk: Option<PathBuf>,
}

/// The command line a microVM guest gets unless told otherwise: console on
/// COM1, reboot through the i8042 (our "done"), no PCI or ACPI probing.
pub const DEFAULT_CMDLINE: &str =
    "console=ttyS0 quiet reboot=k panic=-1 pci=off i8042.noaux i8042.nomux i8042.dumbkbd";

/// How a guest run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuestEnd {
    /// The guest asked for a reboot: the normal end of a microVM.
    Reset,
    /// A triple fault or another fatal exit.
    Crashed(String),
    /// Still running at the deadline.
    Deadline,
    /// Stopped by a [`StopSignal`]: it can be snapshotted, or run on.
    Stopped,
}

/// A booted (or bootable) Linux microVM.
pub struct LinuxVm {
    /// First to drop: its thread stops before the VM goes (and so does
    /// the disk's, inside it).
    notifier: Option<Notifier>,
    disk: Option<Disk>,
    vm: Vm,
    vcpu: Vcpu,
    devices: Rc<RefCell<LegacyDevices>>,
    console: ConsoleLog,
    channel: VirtioConsole,
}

/// The read-only disk of a VM: the device, the image it reads (named in a
/// snapshot), and the thread serving its notifications.
struct Disk {
    device: VirtioBlock,
    path: PathBuf,
    _notifier: Option<Notifier>,
}

/// Borrows the devices as the vCPU's read bus.
struct SharedBus {
    legacy: Rc<RefCell<LegacyDevices>>,
    channel: VirtioConsole,
    disk: Option<VirtioBlock>,
}

impl Bus for SharedBus {
    fn io_in(&mut self, port: u16, data: &mut [u8]) {
        self.legacy.borrow_mut().io_in(port, data);
    }

    fn mmio_read(&mut self, addr: u64, data: &mut [u8]) {
        if let Some(offset) = window_offset(VIRTIO_CONSOLE_BASE, addr) {
            return self.channel.mmio_read(offset, data);
        }
        match (&self.disk, window_offset(VIRTIO_DISK_BASE, addr)) {
            (Some(disk), Some(offset)) => disk.mmio_read(offset, data),
            _ => data.fill(0xFF),
        }
    }
}

/// `addr`'s offset in the device window at `base`, if it is inside.
fn window_offset(base: u64, addr: u64) -> Option<u64> {
    (base..base + MMIO_SIZE)
        .contains(&addr)
        .then(|| addr - base)
}

/// The guest's command line with the virtio console added.
pub fn cmdline_with_channel(cmdline: &str) -> String {
    format!(
        "{cmdline} {}",
        cmdline_device(VIRTIO_CONSOLE_BASE, VIRTIO_CONSOLE_IRQ)
    )
}

impl LinuxVm {
    /// Builds the VM and loads `guest` into it; the vCPU stands at the
    /// kernel's entry.
    /// `sink` receives what the guest writes to its channel (`/dev/hvc0`).
    pub fn new(kvm: &Kvm, guest: &LinuxGuest, sink: ConsoleSink) -> Result<LinuxVm, LinuxError> {
        let vm = Vm::new(
            kvm,
            VmConfig {
                memory_mib: guest.memory_mib,
                irqchip: true,
            },
        )?;
        vm.create_pit()?;
        let disk = match &guest.disk {
            Some(path) => Some(DiskImage::open(path, None)?),
            None => None,
        };
        let devices = Devices::wire(&vm, sink, None, disk)?;
        let entry = load(&vm, guest)?;
        let vcpu = vm.create_vcpu(0)?;
        set_boot_state(&vcpu, entry)?;
        Ok(LinuxVm::assemble(vm, vcpu, devices))
    }

    fn assemble(vm: Vm, vcpu: Vcpu, devices: Devices) -> LinuxVm {
        LinuxVm {
            notifier: devices.notifier,
            vm,
            vcpu,
            console: devices.legacy.console.log(),
            devices: Rc::new(RefCell::new(devices.legacy)),
            channel: devices.channel,
            disk: devices.disk,
        }
    }

    /// Runs the guest until it resets, crashes, or `deadline`.
    pub fn run_until(&mut self, deadline: Instant) -> Result<GuestEnd, LinuxError> {
        self.run(deadline, None)
    }

    /// Runs the guest until it resets, crashes, `deadline`, or `stop` is
    /// signalled from another thread ([`GuestEnd::Stopped`]).
    pub fn run_until_stopped(
        &mut self,
        deadline: Instant,
        stop: &StopSignal,
    ) -> Result<GuestEnd, LinuxError> {
        self.run(deadline, Some(stop))
    }

    fn run(
        &mut self,
        deadline: Instant,
        stop: Option<&StopSignal>,
    ) -> Result<GuestEnd, LinuxError> {
        let disk = self.disk.as_ref().map(|d| d.device.clone());
        let mut bus = SharedBus {
            legacy: self.devices.clone(),
            channel: self.channel.clone(),
            disk: disk.clone(),
        };
        let devices = self.devices.clone();
        let channel = self.channel.clone();
        let report = self
            .vcpu
            .run_until_stopped(deadline, stop, &mut bus, |exit| match exit {
                Exit::IoOut { port, data } => match devices.borrow_mut().io_out(*port, data) {
                    PortEvent::Reset => Flow::Stop,
                    PortEvent::None => Flow::Continue,
                },
                Exit::MmioWrite { addr, data } => {
                    if let Some(offset) = window_offset(VIRTIO_CONSOLE_BASE, *addr) {
                        channel.mmio_write(offset, data);
                    } else if let (Some(disk), Some(offset)) =
                        (&disk, window_offset(VIRTIO_DISK_BASE, *addr))
                    {
                        disk.mmio_write(offset, data);
                    }
                    Flow::Continue
                }
                _ => Flow::Continue,
            })?;
        Ok(match report.end {
            RunEnd::Deadline => GuestEnd::Deadline,
            RunEnd::Stopped => GuestEnd::Stopped,
            RunEnd::Exit(Exit::IoOut { .. }) => GuestEnd::Reset,
            RunEnd::Exit(other) => GuestEnd::Crashed(format!("{other:?}")),
        })
    }

    /// Where the vCPU stands, in one line, for a guest that ran out of
    /// time: its instruction pointer (as a function of `kernel` when that
    /// ELF is given and has symbols), whether it takes interrupts, and
    /// whether it is halted (waiting for one) or busy.
    pub fn vcpu_report(&self, kernel: Option<&Path>) -> String {
        let regs = match self.vcpu.regs() {
            Ok(regs) => regs,
            Err(e) => return format!("vCPU state unreadable: {e}"),
        };
        let function = kernel
            .and_then(|path| std::fs::read(path).ok())
            .and_then(|elf| symbols::function_at(&elf, regs.rip))
            .map(|(name, offset)| format!(" in {name}+{offset:#x}"))
            .unwrap_or_default();
        // RFLAGS.IF is bit 9.
        let interrupts = if regs.rflags & (1 << 9) != 0 {
            "on"
        } else {
            "off"
        };
        let activity = match self.vcpu.mp_state() {
            Ok(kvm_bindings::KVM_MP_STATE_HALTED) => "halted",
            Ok(kvm_bindings::KVM_MP_STATE_RUNNABLE) => "running",
            Ok(other) => {
                return format!(
                    "vCPU at rip {:#x}{function}, interrupts {interrupts}, mp_state {other}",
                    regs.rip
                );
            }
            Err(_) => "activity unknown",
        };
        format!(
            "vCPU at rip {:#x}{function}, interrupts {interrupts}, {activity}",
            regs.rip
        )
    }

    /// The host's end of the guest's channel: push bytes to the guest
    /// from any thread.
    pub fn channel(&self) -> VirtioConsole {
        self.channel.clone()
    }

    /// `(requests, bytes read)` of the read-only disk so far, if there is one.
    pub fn disk_counters(&self) -> Option<(u64, u64)> {
        self.disk.as_ref().map(|d| d.device.counters())
    }

    /// Whether the guest's queue notifications reach the VMM through
    /// ioeventfds (no exit) rather than as MMIO exits.
    pub fn ioeventfd(&self) -> bool {
        self.notifier.is_some()
    }

    /// The guest console's output so far (its tail).
    pub fn console(&self) -> String {
        String::from_utf8_lossy(&self.console.contents()).into_owned()
    }

    /// The VM the guest runs in.
    pub fn vm(&self) -> &Vm {
        &self.vm
    }
}

/// A Linux guest's devices, wired to its VM's interrupt lines.
struct Devices {
    legacy: LegacyDevices,
    channel: VirtioConsole,
    /// Queue notifications through ioeventfds; `None` where KVM refused
    /// them (the notifications then arrive as MMIO exits).
    notifier: Option<Notifier>,
    disk: Option<Disk>,
}

/// The devices' state in a snapshot.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct DeviceState {
    serial: crate::devices::SavedSerial,
    channel: ConsoleState,
    disk: Option<SavedDisk>,
}

/// The read-only disk in a snapshot: the image it reads (which must still
/// be there, the same length, when a VM is restored) and the device.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct SavedDisk {
    path: PathBuf,
    len: u64,
    device: BlockState,
}

/// A disk image, opened read-only, and the state its device is in.
#[derive(Debug)]
struct DiskImage {
    path: PathBuf,
    file: File,
    saved: Option<BlockState>,
}

impl DiskImage {
    /// Opens `path`; with `expected_len`, it must have that many bytes.
    fn open(path: &Path, expected_len: Option<u64>) -> Result<DiskImage, LinuxError> {
        let error = |source| LinuxError::Disk {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(error)?;
        let len = file.metadata().map_err(error)?.len();
        if len < crate::devices::virtio::SECTOR || expected_len.is_some_and(|e| e != len) {
            return Err(error(std::io::Error::other(format!(
                "{len} bytes, not the disk the snapshot was taken with"
            ))));
        }
        Ok(DiskImage {
            path: path.to_path_buf(),
            file,
            saved: None,
        })
    }
}

impl Devices {
    /// COM1 and the virtio console, fresh or in `saved` state.
    fn wire(
        vm: &Vm,
        sink: ConsoleSink,
        saved: Option<&DeviceState>,
        disk: Option<DiskImage>,
    ) -> Result<Devices, LinuxError> {
        let irq = EventFd::new(libc::EFD_NONBLOCK).map_err(LinuxError::Irq)?;
        vm.register_irqfd(&irq, COM1_IRQ)?;
        let console = match saved {
            Some(saved) => Console::from_state(irq, &saved.serial)
                .map_err(|e| LinuxError::DeviceState(format!("COM1: {e}")))?,
            None => Console::new(irq),
        };
        let channel_irq = EventFd::new(libc::EFD_NONBLOCK).map_err(LinuxError::Irq)?;
        vm.register_irqfd(&channel_irq, VIRTIO_CONSOLE_IRQ)?;
        let channel = match saved {
            Some(saved) => {
                VirtioConsole::from_state(vm.memory_handle(), channel_irq, sink, &saved.channel)
                    .ok_or_else(|| LinuxError::DeviceState("the virtio console's queues".into()))?
            }
            None => VirtioConsole::new(vm.memory_handle(), channel_irq, sink),
        };
        let notifier = match Notifier::start(vm, VIRTIO_CONSOLE_BASE, 2, channel.clone()) {
            Ok(notifier) => Some(notifier),
            Err(e) => {
                tracing::debug!(error = %e, "no ioeventfd: queue notifications exit to the VMM");
                None
            }
        };
        let disk = match disk {
            Some(image) => Some(Self::wire_disk(vm, image)?),
            None => None,
        };
        Ok(Devices {
            legacy: LegacyDevices { console },
            channel,
            notifier,
            disk,
        })
    }

    /// The read-only disk over `image`, fresh or in its saved state.
    fn wire_disk(vm: &Vm, image: DiskImage) -> Result<Disk, LinuxError> {
        let irq = EventFd::new(libc::EFD_NONBLOCK).map_err(LinuxError::Irq)?;
        vm.register_irqfd(&irq, VIRTIO_DISK_IRQ)?;
        let memory = vm.memory_handle();
        let device = match &image.saved {
            Some(state) => VirtioBlock::from_state(memory, irq, image.file, DISK_ID, state)
                .ok_or_else(|| LinuxError::DeviceState("the disk's queue".into()))?,
            None => VirtioBlock::new(memory, irq, image.file, DISK_ID).map_err(|source| {
                LinuxError::Disk {
                    path: image.path.clone(),
                    source,
                }
            })?,
        };
        let notifier = match Notifier::start(vm, VIRTIO_DISK_BASE, 1, device.clone()) {
            Ok(notifier) => Some(notifier),
            Err(e) => {
                tracing::debug!(error = %e, "no ioeventfd for the disk: its notifications exit");
                None
            }
        };
        Ok(Disk {
            device,
            path: image.path,
            _notifier: notifier,
        })
    }
}

/// Boots `guest` and runs it to its end or `timeout`: the convenience the
/// lab and `ephemeral-vm boot` use.
pub fn boot_and_run(
    guest: &LinuxGuest,
    timeout: Duration,
) -> Result<(GuestEnd, String, Duration), LinuxError> {
    let kvm = Kvm::open().map_err(VmError::from)?;
    let started = Instant::now();
    let mut vm = LinuxVm::new(&kvm, guest, Box::new(std::io::sink()))?;
    let end = vm.run_until(started + timeout)?;
    Ok((end, vm.console(), started.elapsed()))
}

/// Writes the long-mode scaffolding, the kernel, the initramfs, the
/// command line and the zero page; returns the kernel's entry.
fn load(vm: &Vm, guest: &LinuxGuest) -> Result<GuestAddress, LinuxError> {
    let memory = vm.memory();
    let setup = |e: crate::arch::x86_64::SetupError| LinuxError::Setup(e.to_string());
    gdt::write_gdt(memory).map_err(setup)?;
    paging::write_identity_map(memory).map_err(setup)?;
    let mut kernel = File::open(&guest.kernel).map_err(|source| LinuxError::Kernel {
        path: guest.kernel.clone(),
        source,
    })?;
    let loaded = Elf::load(
        memory.mmap(),
        None,
        &mut kernel,
        Some(GuestAddress(HIMEM_START)),
    )?;
    let ram = memory.mmap().last_addr().0 + 1;
    let initrd = zero_page::place_initramfs(ram, loaded.kernel_end, guest.initramfs.len())
        .ok_or_else(|| LinuxError::Setup("the initramfs does not fit in guest memory".into()))?;
    memory
        .write(initrd, &guest.initramfs)
        .map_err(|e| LinuxError::Setup(e.to_string()))?;
    let cmdline = match guest.disk {
        Some(_) => with_kernel_word(
            &guest.cmdline,
            &cmdline_device(VIRTIO_DISK_BASE, VIRTIO_DISK_IRQ),
        ),
        None => guest.cmdline.clone(),
    };
    let mut cmdline = cmdline.into_bytes();
    if cmdline.len() >= CMDLINE_MAX {
        return Err(LinuxError::Setup(
            "the kernel command line is too long".into(),
        ));
    }
    cmdline.push(0);
    memory
        .write(CMDLINE_START, &cmdline)
        .map_err(|e| LinuxError::Setup(e.to_string()))?;
    let page = zero_page::build(ram, cmdline.len() - 1, initrd, guest.initramfs.len());
    memory
        .write(ZERO_PAGE_START, &page)
        .map_err(|e| LinuxError::Setup(e.to_string()))?;
    Ok(loaded.kernel_load)
}

/// `cmdline` with `word` added for the kernel: before ` -- `, after which
/// every word is init's.
fn with_kernel_word(cmdline: &str, word: &str) -> String {
    match cmdline.split_once(" -- ") {
        Some((kernel, init)) => format!("{kernel} {word} -- {init}"),
        None => format!("{cmdline} {word}"),
    }
}

/// Long mode at `entry` with `rsi` pointing at the zero page (the 64-bit
/// boot protocol), a reset FPU, and LINT0/LINT1 wired as a PC's: ExtINT
/// from the PIC, NMI.
fn set_boot_state(vcpu: &Vcpu, entry: GuestAddress) -> Result<(), LinuxError> {
    let sregs = vcpu.sregs()?;
    vcpu.set_sregs(&regs::long_mode_sregs(sregs))?;
    let mut r = regs::entry_regs(entry.0, BOOT_STACK_POINTER);
    r.rbp = BOOT_STACK_POINTER;
    r.rsi = ZERO_PAGE_START;
    vcpu.set_regs(&r)?;
    let fpu = kvm_bindings::kvm_fpu {
        fcw: FPU_CONTROL_WORD,
        mxcsr: MXCSR_DEFAULT,
        ..Default::default()
    };
    vcpu.fd()
        .set_fpu(&fpu)
        .map_err(vcpu.ioctl_error("KVM_SET_FPU"))?;
    let mut lapic = vcpu
        .fd()
        .get_lapic()
        .map_err(vcpu.ioctl_error("KVM_GET_LAPIC"))?;
    set_lvt_mode(&mut lapic, APIC_LVT0, APIC_MODE_EXTINT);
    set_lvt_mode(&mut lapic, APIC_LVT1, APIC_MODE_NMI);
    vcpu.fd()
        .set_lapic(&lapic)
        .map_err(vcpu.ioctl_error("KVM_SET_LAPIC"))?;
    Ok(())
}

fn set_lvt_mode(lapic: &mut kvm_bindings::kvm_lapic_state, offset: usize, mode: u32) {
    let mut bytes = [0u8; 4];
    for (b, r) in bytes.iter_mut().zip(&lapic.regs[offset..offset + 4]) {
        *b = *r as u8;
    }
    let value = (u32::from_le_bytes(bytes) & !0x700) | (mode << 8);
    for (r, b) in lapic.regs[offset..offset + 4]
        .iter_mut()
        .zip(value.to_le_bytes())
    {
        *r = b as _;
    }
}

/// Where `vm-fallback/guest/build-kernel` leaves the guest kernel:
/// `$EPHEMERAL_GUEST_DIR/vmlinux`, by default under `/var/cache/ephemeral`.
pub fn default_kernel() -> PathBuf {
    std::env::var_os("EPHEMERAL_GUEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/ephemeral/guest"))
        .join("vmlinux")
}

/// Whether `path` looks like a kernel to boot.
pub fn kernel_exists(path: &Path) -> bool {
    path.is_file()
}

#[cfg(test)]
mod tests {
    use super::with_kernel_word;

    #[test]
    fn a_kernel_word_goes_before_inits_arguments() {
        assert_eq!(
            with_kernel_word("quiet -- --guest-init", "x=1"),
            "quiet x=1 -- --guest-init"
        );
        assert_eq!(with_kernel_word("quiet", "x=1"), "quiet x=1");
    }
}
