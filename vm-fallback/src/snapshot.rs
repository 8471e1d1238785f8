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
//! On disk a snapshot is a folder: `memory` (a sparse file, holes where
//! the guest never wrote) and `state` (postcard), written by the process
//! that took it and mapped by every VMM process that restores it — they
//! share the file's pages through the page cache.
//!
//! Not here: devices' state (the Linux guest's snapshot adds it, in
//! `linux/snapshot.rs`).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::kvm::Kvm;
use crate::memory::{GuestMemory, MemoryError};
use crate::vcpu::Vcpu;
use crate::vcpu_state::{StateError, VcpuState};
use crate::vm::{Vm, VmError, VmState};

/// Errors from taking or restoring a snapshot.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Reading, mapping or writing guest memory failed.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// A KVM call on the VM failed.
    #[error(transparent)]
    Vm(#[from] VmError),
    /// Saving or restoring a vCPU's state failed.
    #[error("vCPU state: {0}")]
    Vcpu(#[from] StateError),
    /// A snapshot file could not be read or written.
    #[error("snapshot {path}: {source}")]
    File {
        /// The file.
        path: std::path::PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A snapshot file this build cannot read (or write).
    #[error("snapshot {path}: not a snapshot this build can read: {why}")]
    Format {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        why: String,
    },
}

/// The parts of a [`VmSnapshot`] besides its memory, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct VmSnapshotState {
    memory_size: u64,
    state: VmState,
    vcpus: Vec<VcpuState>,
}

pub(crate) fn file_error(path: &Path) -> impl FnOnce(std::io::Error) -> SnapshotError + '_ {
    move |source| SnapshotError::File {
        path: path.to_path_buf(),
        source,
    }
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
        let (vcpus, vm_state) = self.restore_machine_timed(&vm)?;
        let times = RestoreTimes {
            vm: vm_done,
            vcpus: t.elapsed() - vm_done - vm_state,
            vm_state,
        };
        Ok((vm, vcpus, times))
    }

    /// The VM and its memory, with an irqchip and PIT when the snapshot
    /// has them; no vCPU yet, no state. For callers that must wire
    /// devices (irqfds) before [`VmSnapshot::restore_machine`].
    pub fn restore_vm(&self, kvm: &Kvm) -> Result<Vm, SnapshotError> {
        let memory = GuestMemory::restore(&self.memory, self.memory_size)?;
        let vm = Vm::with_memory(kvm, !self.state.irqchips.is_empty(), memory)?;
        if self.state.pit.is_some() {
            vm.create_pit()?;
        }
        Ok(vm)
    }

    /// Puts the machine's state into `vm` (from [`VmSnapshot::restore_vm`])
    /// and returns its vCPUs, in the order Firecracker uses: the vCPUs are
    /// created, then the irqchip, PIT and clock go in, then each vCPU's
    /// own state (its TSC, local APIC, pending events) on top.
    pub fn restore_machine(&self, vm: &Vm) -> Result<Vec<Vcpu>, SnapshotError> {
        self.restore_machine_timed(vm).map(|(vcpus, _)| vcpus)
    }

    fn restore_machine_timed(&self, vm: &Vm) -> Result<(Vec<Vcpu>, Duration), SnapshotError> {
        let vcpus = (0u8..)
            .zip(&self.vcpus)
            .map(|(index, _)| vm.create_vcpu(index))
            .collect::<Result<Vec<_>, _>>()?;
        let t = Instant::now();
        vm.restore_state(&self.state)?;
        let vm_state = t.elapsed();
        for (vcpu, state) in vcpus.iter().zip(&self.vcpus) {
            state.restore(vcpu)?;
        }
        Ok((vcpus, vm_state))
    }

    /// The saved vCPU states.
    pub fn vcpus(&self) -> &[VcpuState] {
        &self.vcpus
    }

    /// Guest RAM size in bytes.
    pub fn memory_size(&self) -> u64 {
        self.memory_size
    }

    /// Everything but the memory, for a state file.
    pub(crate) fn saved_state(&self) -> VmSnapshotState {
        VmSnapshotState {
            memory_size: self.memory_size,
            state: self.state.clone(),
            vcpus: self.vcpus.clone(),
        }
    }

    /// A snapshot from its memory file and saved state.
    pub(crate) fn from_parts(memory: File, saved: VmSnapshotState) -> VmSnapshot {
        VmSnapshot {
            memory,
            memory_size: saved.memory_size,
            state: saved.state,
            vcpus: saved.vcpus,
        }
    }

    /// Copies the memory file to `path`, holes kept as holes.
    pub(crate) fn write_memory(&self, path: &Path) -> Result<(), SnapshotError> {
        let out = File::create(path).map_err(file_error(path))?;
        out.set_len(self.memory_size).map_err(file_error(path))?;
        let mut buf = vec![0u8; 1 << 20];
        for (start, end) in data_ranges(&self.memory, self.memory_size) {
            let mut at = start;
            while at < end {
                let n = buf.len().min((end - at) as usize);
                self.memory
                    .read_exact_at(&mut buf[..n], at)
                    .map_err(file_error(path))?;
                out.write_all_at(&buf[..n], at).map_err(file_error(path))?;
                at += n as u64;
            }
        }
        out.sync_all().map_err(file_error(path))
    }

    /// Bytes of the memory file that hold data (the rest are holes).
    pub fn memory_stored(&self) -> u64 {
        use std::os::unix::fs::MetadataExt;
        self.memory.metadata().map_or(0, |m| m.blocks() * 512)
    }
}

/// The `(start, end)` ranges of `file` that hold data (`SEEK_DATA` /
/// `SEEK_HOLE`); the whole file where the filesystem cannot say.
fn data_ranges(file: &File, size: u64) -> Vec<(u64, u64)> {
    let fd = file.as_raw_fd();
    let seek = |from: u64, whence| {
        // SAFETY: lseek on a descriptor we own; it does not touch memory.
        let at = unsafe { libc::lseek(fd, from as libc::off_t, whence) };
        u64::try_from(at).ok()
    };
    let mut ranges = Vec::new();
    let mut at = 0;
    while at < size {
        let Some(start) = seek(at, libc::SEEK_DATA) else {
            break; // ENXIO: no data past `at`
        };
        let end = seek(start, libc::SEEK_HOLE).unwrap_or(size).min(size);
        if end <= start {
            break;
        }
        ranges.push((start, end));
        at = end;
    }
    ranges
}
