//! A stopped VM, frozen: its memory in a sealed memory file, its vCPUs'
//! state, and the VM-wide state KVM keeps (irqchip, PIT, clock). Restoring
//! builds a fresh VM that maps the memory file privately — copy-on-write,
//! so every VM restored from one snapshot shares the pages neither wrote —
//! and puts the state back: the guest continues at the instruction it was
//! stopped before, unaware.
//!
//! Restoring one snapshot twice gives two guests with the same memory,
//! random pools included: whoever restores must give each its own entropy
//! before it runs anything untrusted (for the microVM, the worker
//! protocol's guest identity does it).
//!
//! Not here: devices' state (the Linux guest's snapshot adds it, in
//! `linux/snapshot.rs`), a byte format for disk (a snapshot lives in the
//! VMM process that took it and in processes it forks).

use std::fs::File;
use std::time::{Duration, Instant};

use crate::kvm::Kvm;
use crate::memory::{GuestMemory, MemoryError};
use crate::vcpu::Vcpu;
use crate::vcpu_state::{StateError, VcpuState};
use crate::vm::{Vm, VmError, VmState};

/// Errors from taking or restoring a snapshot.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error(transparent)]
    Memory(#[from] MemoryError),
    #[error(transparent)]
    Vm(#[from] VmError),
    #[error("vCPU state: {0}")]
    Vcpu(#[from] StateError),
}

/// A frozen VM. Shareable between threads (`Arc`): restoring reads it.
#[derive(Debug)]
pub struct VmSnapshot {
    memory: File,
    memory_size: u64,
    state: VmState,
    vcpus: Vec<VcpuState>,
}

/// How long each step of a restore took: where the milliseconds go.
#[derive(Debug, Clone, Copy, Default)]
pub struct RestoreTimes {
    /// Creating the VM and mapping its memory.
    pub vm: Duration,
    /// Creating the vCPUs and putting their state back.
    pub vcpus: Duration,
    /// The irqchip, PIT and clock.
    pub vm_state: Duration,
}

impl VmSnapshot {
    /// Freezes `vm`. Its vCPUs must be stopped (`&mut` makes sure no run
    /// is in progress); they may continue afterwards, the snapshot is a
    /// copy.
    pub fn take(vm: &Vm, vcpus: &mut [Vcpu]) -> Result<VmSnapshot, SnapshotError> {
        let vcpus = vcpus
            .iter_mut()
            .map(VcpuState::save)
            .collect::<Result<Vec<_>, _>>()?;
        let state = vm.save_state()?;
        let memory = vm.memory().save()?;
        let memory_size = vm.memory().size();
        tracing::debug!(
            memory_size,
            vcpus = vcpus.len(),
            irqchip = !state.irqchips.is_empty(),
            "snapshot taken"
        );
        Ok(VmSnapshot {
            memory,
            memory_size,
            state,
            vcpus,
        })
    }

    /// A new VM in this snapshot's state: its memory the snapshot's,
    /// privately mapped; its vCPUs where they stopped.
    pub fn restore(&self, kvm: &Kvm) -> Result<(Vm, Vec<Vcpu>), SnapshotError> {
        self.restore_timed(kvm).map(|(vm, vcpus, _)| (vm, vcpus))
    }

    /// [`VmSnapshot::restore`], with the time each step took.
    pub fn restore_timed(&self, kvm: &Kvm) -> Result<(Vm, Vec<Vcpu>, RestoreTimes), SnapshotError> {
        let t = Instant::now();
        let vm = self.restore_vm(kvm)?;
        let vm_done = t.elapsed();
        let vcpus = self.restore_vcpus(&vm)?;
        let vcpus_done = t.elapsed();
        vm.restore_state(&self.state)?;
        let times = RestoreTimes {
            vm: vm_done,
            vcpus: vcpus_done - vm_done,
            vm_state: t.elapsed() - vcpus_done,
        };
        Ok((vm, vcpus, times))
    }

    /// The VM and its memory, with an irqchip and PIT when the snapshot
    /// has them; no vCPU yet, no state. For callers that must wire
    /// devices (irqfds) between the steps.
    pub fn restore_vm(&self, kvm: &Kvm) -> Result<Vm, SnapshotError> {
        let memory = GuestMemory::restore(&self.memory, self.memory_size)?;
        let vm = Vm::with_memory(kvm, !self.state.irqchips.is_empty(), memory)?;
        if self.state.pit.is_some() {
            vm.create_pit()?;
        }
        Ok(vm)
    }

    /// The vCPUs, created in `vm` with their saved state.
    pub fn restore_vcpus(&self, vm: &Vm) -> Result<Vec<Vcpu>, SnapshotError> {
        (0u8..)
            .zip(&self.vcpus)
            .map(|(index, state)| {
                let vcpu = vm.create_vcpu(index)?;
                state.restore(&vcpu)?;
                Ok(vcpu)
            })
            .collect()
    }

    /// The irqchip, PIT and clock, last: after the vCPUs, so that the
    /// interrupts pending in the irqchip meet local APICs in their state.
    pub fn restore_vm_state(&self, vm: &Vm) -> Result<(), SnapshotError> {
        Ok(vm.restore_state(&self.state)?)
    }

    /// The saved vCPU states.
    pub fn vcpus(&self) -> &[VcpuState] {
        &self.vcpus
    }

    /// Guest RAM size in bytes.
    pub fn memory_size(&self) -> u64 {
        self.memory_size
    }

    /// Bytes of the memory file that hold data (the rest are holes).
    pub fn memory_stored(&self) -> u64 {
        use std::os::unix::fs::MetadataExt;
        self.memory.metadata().map_or(0, |m| m.blocks() * 512)
    }
}
