//! One VM: its KVM handle, its guest memory, and the settings every vCPU of
//! it shares (CPUID, the MSRs to save, whether an irqchip exists).
//!
//! [`VmState`] is the VM-wide state KVM keeps for a snapshot: the PICs and
//! IOAPIC of the irqchip, the PIT, the kvmclock.
//!
//! Not here: running (`vcpu.rs`), devices, or more than the one memory
//! region from `memory.rs`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use kvm_bindings::{
    CpuId, KVM_IRQCHIP_IOAPIC, KVM_IRQCHIP_PIC_MASTER, KVM_IRQCHIP_PIC_SLAVE, kvm_clock_data,
    kvm_irqchip, kvm_pit_state2,
};
use kvm_ioctls::{Cap, VmFd};
use vm_memory::GuestAddress;

use crate::arch::x86_64::{self as arch, cpuid, msr};
use crate::kvm::{Capabilities, Kvm, KvmError};
use crate::memory::{GuestMemory, MemoryError};
use crate::vcpu::{Vcpu, VcpuError, VcpuFeatures};

/// Where KVM on Intel VMX may keep the three pages it needs to emulate real
/// mode: just below the 4 GiB boundary, far above any RAM here. Our guests
/// never enter real mode, but a vCPU starts in it, so it is set when KVM
/// offers it.
const KVM_TSS_ADDRESS: usize = 0xFFFB_D000;

/// Guest memory when a caller does not say: room for the fixed layout and a
/// few MiB of data.
const DEFAULT_MEMORY_MIB: usize = 8;

/// Errors from creating a VM or its vCPUs.
#[derive(Debug, thiserror::Error)]
pub enum VmError {
    /// `KVM_CREATE_VM` failed.
    #[error("KVM cannot create a VM: {0}")]
    Create(#[source] vmm_sys_util::errno::Error),
    /// A query to `/dev/kvm` failed.
    #[error(transparent)]
    Kvm(#[from] KvmError),
    /// Guest memory could not be set up.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// An irqchip was asked for and KVM refused it.
    #[error("KVM refused to create an in-kernel irqchip: {0}")]
    Irqchip(#[source] vmm_sys_util::errno::Error),
    /// `KVM_CREATE_PIT2` failed.
    #[error("KVM refused to create a PIT: {0}")]
    Pit(#[source] vmm_sys_util::errno::Error),
    /// `KVM_IRQFD` failed.
    #[error("KVM refused an irqfd for interrupt {gsi}: {source}")]
    Irqfd {
        /// The interrupt line.
        gsi: u32,
        /// The ioctl error.
        #[source]
        source: vmm_sys_util::errno::Error,
    },
    /// `KVM_IOEVENTFD` failed.
    #[error("KVM refused an ioeventfd at {addr:#x}: {source}")]
    Ioeventfd {
        /// The MMIO address.
        addr: u64,
        /// The ioctl error.
        #[source]
        source: vmm_sys_util::errno::Error,
    },
    /// Saving or restoring the VM-wide state failed.
    #[error("{what} failed: {source}")]
    State {
        /// The ioctl, e.g. `KVM_SET_IRQCHIP`.
        what: &'static str,
        /// The error KVM returned.
        #[source]
        source: vmm_sys_util::errno::Error,
    },
    /// A saved state does not fit this VM (no irqchip, no PIT…).
    #[error("the saved VM state does not fit this VM: {0}")]
    StateMismatch(&'static str),
    /// `KVM_CREATE_VCPU` failed.
    #[error("KVM cannot create vCPU {index}: {source}")]
    CreateVcpu {
        /// The vCPU index.
        index: u8,
        /// The ioctl error.
        #[source]
        source: vmm_sys_util::errno::Error,
    },
    /// Setting up a new vCPU failed.
    #[error(transparent)]
    Vcpu(#[from] VcpuError),
    /// The program or the long-mode scaffolding did not fit.
    #[error(transparent)]
    Setup(#[from] arch::SetupError),
}

/// What to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VmConfig {
    /// Guest RAM in MiB; at least `layout::MIN_MEMORY_BYTES` for programs
    /// loaded with [`Vm::load_program`].
    pub memory_mib: usize,
    /// Create an in-kernel irqchip (PIC, IOAPIC and a local APIC per vCPU).
    pub irqchip: bool,
}

impl Default for VmConfig {
    fn default() -> Self {
        VmConfig {
            memory_mib: DEFAULT_MEMORY_MIB,
            irqchip: false,
        }
    }
}

/// A VM with its memory registered.
#[derive(Debug)]
pub struct Vm {
    fd: VmFd,
    memory: Arc<GuestMemory>,
    cpuid: CpuId,
    features: VcpuFeatures,
    pit: AtomicBool,
}

/// The VM-wide state of a stopped VM: what KVM's irqchip, PIT and clock
/// hold. Plain data; the vCPUs' state is [`crate::VcpuState`].
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct VmState {
    /// PIC master, PIC slave, IOAPIC; empty without an irqchip.
    pub irqchips: Vec<kvm_irqchip>,
    /// The i8254, when the VM has one.
    pub pit: Option<kvm_pit_state2>,
    /// The kvmclock's value.
    pub clock: kvm_clock_data,
}

/// The irqchip's parts, in the order they are saved and restored.
const IRQCHIPS: [u32; 3] = [
    KVM_IRQCHIP_PIC_MASTER,
    KVM_IRQCHIP_PIC_SLAVE,
    KVM_IRQCHIP_IOAPIC,
];

impl Vm {
    /// Creates a VM with `config.memory_mib` MiB of RAM at address 0.
    pub fn new(kvm: &Kvm, config: VmConfig) -> Result<Self, VmError> {
        let memory = GuestMemory::new(config.memory_mib)?;
        Self::with_memory(kvm, config.irqchip, memory)
    }

    /// Creates a VM over `memory` (e.g. a snapshot's, mapped privately),
    /// with an in-kernel irqchip if `irqchip`.
    pub fn with_memory(kvm: &Kvm, irqchip: bool, memory: GuestMemory) -> Result<Self, VmError> {
        let fd = kvm.fd().create_vm().map_err(VmError::Create)?;
        let memory = Arc::new(memory);
        memory.register(&fd)?;
        if kvm.fd().check_extension(Cap::SetTssAddr)
            && let Err(e) = fd.set_tss_address(KVM_TSS_ADDRESS)
        {
            tracing::debug!(error = %e, "KVM_SET_TSS_ADDR refused; only real mode needs it");
        }
        if irqchip {
            fd.create_irq_chip().map_err(VmError::Irqchip)?;
        }
        let features = VcpuFeatures {
            irqchip,
            caps: kvm.capabilities(),
            msrs: saveable_msrs(kvm).into(),
        };
        Ok(Vm {
            fd,
            memory,
            cpuid: kvm.supported_cpuid()?,
            features,
            pit: AtomicBool::new(false),
        })
    }

    /// Guest RAM.
    pub fn memory(&self) -> &GuestMemory {
        &self.memory
    }

    /// Guest RAM, shared: for device threads that move data into it.
    pub fn memory_handle(&self) -> Arc<GuestMemory> {
        Arc::clone(&self.memory)
    }

    /// The optional KVM extensions this VM's vCPUs may use.
    pub fn capabilities(&self) -> Capabilities {
        self.features.caps
    }

    /// Whether an in-kernel irqchip exists.
    pub fn has_irqchip(&self) -> bool {
        self.features.irqchip
    }

    /// The MSRs saved with each vCPU's state.
    pub fn saved_msrs(&self) -> &[u32] {
        &self.features.msrs
    }

    /// Writes the long-mode scaffolding (GDT, page tables) and `program`
    /// into guest memory; returns the entry point for
    /// [`Vcpu::enter_long_mode`].
    pub fn load_program(&self, program: &[u8]) -> Result<GuestAddress, VmError> {
        Ok(arch::load_long_mode_program(&self.memory, program)?)
    }

    /// Creates vCPU `index` with its CPUID set. Its registers are KVM's reset
    /// state (real mode) until [`Vcpu::enter_long_mode`] or a state restore.
    pub fn create_vcpu(&self, index: u8) -> Result<Vcpu, VmError> {
        let fd = self
            .fd
            .create_vcpu(u64::from(index))
            .map_err(|source| VmError::CreateVcpu { index, source })?;
        let vcpu = Vcpu::new(fd, index, self.features.clone(), Arc::clone(&self.memory));
        vcpu.set_cpuid(&cpuid::for_vcpu(&self.cpuid, index, self.features.caps))?;
        Ok(vcpu)
    }

    /// Adds the in-kernel i8254 timer (after the irqchip): the clock a
    /// Linux guest calibrates against. Its speaker port is a dummy.
    pub fn create_pit(&self) -> Result<(), VmError> {
        let config = kvm_bindings::kvm_pit_config {
            flags: kvm_bindings::KVM_PIT_SPEAKER_DUMMY,
            ..Default::default()
        };
        self.fd.create_pit2(config).map_err(VmError::Pit)?;
        self.pit.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Saves the irqchip, PIT and clock. The vCPUs must be stopped.
    pub fn save_state(&self) -> Result<VmState, VmError> {
        let state_error = |what| move |source| VmError::State { what, source };
        let mut irqchips = Vec::new();
        if self.features.irqchip {
            for chip_id in IRQCHIPS {
                let mut chip = kvm_irqchip {
                    chip_id,
                    ..Default::default()
                };
                self.fd
                    .get_irqchip(&mut chip)
                    .map_err(state_error("KVM_GET_IRQCHIP"))?;
                irqchips.push(chip);
            }
        }
        let pit = match self.pit.load(Ordering::Relaxed) {
            true => Some(self.fd.get_pit2().map_err(state_error("KVM_GET_PIT2"))?),
            false => None,
        };
        let clock = self.fd.get_clock().map_err(state_error("KVM_GET_CLOCK"))?;
        Ok(VmState {
            irqchips,
            pit,
            clock,
        })
    }

    /// Puts `state` into this VM, which must have been built like the one
    /// it was saved from (irqchip, PIT).
    pub fn restore_state(&self, state: &VmState) -> Result<(), VmError> {
        let state_error = |what| move |source| VmError::State { what, source };
        if !state.irqchips.is_empty() && !self.features.irqchip {
            return Err(VmError::StateMismatch(
                "it has an irqchip, this VM has none",
            ));
        }
        if state.pit.is_some() != self.pit.load(Ordering::Relaxed) {
            return Err(VmError::StateMismatch("PIT present in one, not the other"));
        }
        if let Some(pit) = &state.pit {
            self.fd.set_pit2(pit).map_err(state_error("KVM_SET_PIT2"))?;
        }
        self.restore_clock(&state.clock)?;
        for chip in &state.irqchips {
            self.fd
                .set_irqchip(chip)
                .map_err(state_error("KVM_SET_IRQCHIP"))?;
        }
        Ok(())
    }

    /// Makes a write to `event` raise interrupt line `gsi` in the guest.
    pub fn register_irqfd(
        &self,
        event: &vmm_sys_util::eventfd::EventFd,
        gsi: u32,
    ) -> Result<(), VmError> {
        self.fd
            .register_irqfd(event, gsi)
            .map_err(|source| VmError::Irqfd { gsi, source })
    }

    /// The kvmclock continues from its saved value plus the wall time
    /// since it was saved (`KVM_CLOCK_REALTIME`, as Firecracker restores
    /// it): the guest sees time pass, never go back. A KVM without that
    /// flag gets the saved value alone. Other flags describe the old host
    /// moment and are not inputs.
    fn restore_clock(&self, saved: &kvm_clock_data) -> Result<(), VmError> {
        let realtime = kvm_bindings::KVM_CLOCK_REALTIME;
        let clock = kvm_clock_data {
            clock: saved.clock,
            flags: saved.flags & realtime,
            realtime: saved.realtime,
            ..Default::default()
        };
        match self.fd.set_clock(&clock) {
            Err(e) if clock.flags != 0 && e.errno() == libc::EINVAL => {
                let plain = kvm_clock_data {
                    clock: saved.clock,
                    ..Default::default()
                };
                self.fd.set_clock(&plain)
            }
            other => other,
        }
        .map_err(|source| VmError::State {
            what: "KVM_SET_CLOCK",
            source,
        })
    }

    /// Makes a 4-byte guest write of `value` to MMIO address `addr`
    /// signal `event` instead of exiting to the VMM.
    pub fn register_ioevent(
        &self,
        event: &vmm_sys_util::eventfd::EventFd,
        addr: u64,
        value: u32,
    ) -> Result<(), VmError> {
        self.fd
            .register_ioevent(event, &kvm_ioctls::IoEventAddress::Mmio(addr), value)
            .map_err(|source| VmError::Ioeventfd { addr, source })
    }

    // No accessor for the VM fd: a vCPU made from it directly would not hold
    // guest memory alive (see `memory.rs`).
}

/// Our fixed MSR list cut to what KVM reports it can save. A KVM whose
/// index list cannot be read gets no MSRs saved rather than no VM.
fn saveable_msrs(kvm: &Kvm) -> Vec<u32> {
    match kvm.msr_index_list() {
        Ok(list) => msr::saveable(&list),
        Err(e) => {
            tracing::warn!(error = %e, "no MSRs will be saved with vCPU state");
            Vec::new()
        }
    }
}
