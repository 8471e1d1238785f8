//! A booted Linux guest, frozen, and microVMs restored from it: the
//! template VM boots once (kernel, init, the worker warm and waiting for
//! its first frame), is stopped and snapshotted; each run then gets a VM
//! restored from that snapshot in milliseconds instead of a boot.
//!
//! A snapshot is [`VmSnapshot`] (memory, vCPU, irqchip, PIT, clock) plus
//! the devices' state: COM1's registers, the virtio console's transport
//! and queues, and the read-only disk's (with the image's path: the image
//! is opened with the snapshot, and must be the one the template read). Take it when the guest is idle on its channel (the host has
//! read everything it wrote, nothing is pending to it), so no byte is lost
//! or duplicated across the cut. What the host did read before the cut
//! (the worker's Ready) can be kept with the snapshot as its "replay", for
//! a restoring VMM to hand its own client.
//!
//! On disk: the folder of [`VmSnapshot`] (`memory`, `state`), the state
//! holding the devices and the replay too.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{DeviceState, Devices, DiskImage, LinuxError, LinuxVm, SavedDisk};
use crate::devices::virtio::ConsoleSink;
use crate::kvm::Kvm;
use crate::snapshot::{SnapshotError, VmSnapshot, VmSnapshotState, file_error};

/// Bumped whenever the stored layout changes: an older snapshot is then
/// refused (and rebuilt by its owner), never misread.
const FORMAT: u32 = 2;
const MEMORY_FILE: &str = "memory";
const STATE_FILE: &str = "state";

/// A frozen Linux microVM.
#[derive(Debug)]
pub struct LinuxSnapshot {
    vm: VmSnapshot,
    devices: DeviceState,
    replay: Vec<u8>,
    /// The disk image, opened with the snapshot (a jailed VMM opens
    /// nothing later).
    disk: Option<std::fs::File>,
}

/// What `state` holds.
#[derive(Serialize, Deserialize)]
struct Stored {
    format: u32,
    vm: VmSnapshotState,
    devices: DeviceState,
    replay: Vec<u8>,
}

/// How long a restore took, and how much of the snapshot's memory holds
/// data.
#[derive(Debug, Clone, Copy)]
pub struct RestoreReport {
    /// From the call to a vCPU ready to run.
    pub ready: Duration,
}

impl LinuxSnapshot {
    /// Guest RAM in bytes, and how many of them the memory file stores.
    pub fn memory(&self) -> (u64, u64) {
        (self.vm.memory_size(), self.vm.memory_stored())
    }

    /// Keeps `bytes` with the snapshot: what the guest wrote to its
    /// channel before the cut, that a restoring VMM hands its client.
    pub fn set_replay(&mut self, bytes: Vec<u8>) {
        self.replay = bytes;
    }

    /// What the guest wrote to its channel before the cut (see
    /// [`LinuxSnapshot::set_replay`]).
    pub fn replay(&self) -> &[u8] {
        &self.replay
    }

    /// Writes the snapshot into folder `dir` (created): `memory`, sparse,
    /// then `state`, renamed into place last — a folder with a `state` is
    /// complete.
    pub fn save(&self, dir: &Path) -> Result<(), LinuxError> {
        std::fs::create_dir_all(dir).map_err(file_error(dir))?;
        self.vm.write_memory(&dir.join(MEMORY_FILE))?;
        let stored = Stored {
            format: FORMAT,
            vm: self.vm.saved_state(),
            devices: self.devices.clone(),
            replay: self.replay.clone(),
        };
        let bytes = postcard::to_allocvec(&stored).map_err(|e| SnapshotError::Format {
            path: dir.to_path_buf(),
            why: e.to_string(),
        })?;
        let staged = dir.join(format!("{STATE_FILE}.new"));
        std::fs::write(&staged, bytes).map_err(file_error(&staged))?;
        let state = dir.join(STATE_FILE);
        std::fs::rename(&staged, &state).map_err(file_error(&state))?;
        Ok(())
    }

    /// Opens the snapshot in folder `dir` (from [`LinuxSnapshot::save`]).
    /// Its memory file is opened read-only: every VM restored from it maps
    /// it privately.
    pub fn load(dir: &Path) -> Result<LinuxSnapshot, LinuxError> {
        let state = dir.join(STATE_FILE);
        let bytes = std::fs::read(&state).map_err(file_error(&state))?;
        let bad = |why: String| SnapshotError::Format {
            path: state.clone(),
            why,
        };
        let stored: Stored = postcard::from_bytes(&bytes).map_err(|e| bad(e.to_string()))?;
        if stored.format != FORMAT {
            return Err(bad(format!(
                "format {}, this build reads {FORMAT}",
                stored.format
            ))
            .into());
        }
        let path = dir.join(MEMORY_FILE);
        let memory = std::fs::File::open(&path).map_err(file_error(&path))?;
        let vm = VmSnapshot::from_parts(memory, stored.vm);
        let on_disk = std::fs::metadata(&path).map_err(file_error(&path))?.len();
        if on_disk != vm.memory_size() {
            return Err(bad(format!(
                "its memory file has {on_disk} bytes, the state says {}",
                vm.memory_size()
            ))
            .into());
        }
        let disk = match &stored.devices.disk {
            Some(saved) => Some(DiskImage::open(&saved.path, Some(saved.len))?.file),
            None => None,
        };
        Ok(LinuxSnapshot {
            vm,
            devices: stored.devices,
            replay: stored.replay,
            disk,
        })
    }
}

impl LinuxVm {
    /// Freezes this guest (stopped: `&mut` ensures no run is in
    /// progress). It may run on afterwards; the snapshot is a copy.
    pub fn snapshot(&mut self) -> Result<LinuxSnapshot, LinuxError> {
        let vm = VmSnapshot::take(&self.vm, std::slice::from_mut(&mut self.vcpu))?;
        let disk = match &self.disk {
            Some(disk) => {
                let image = DiskImage::open(&disk.path, None)?;
                let len = image.file.metadata().map_or(0, |m| m.len());
                Some((
                    SavedDisk {
                        path: disk.path.clone(),
                        len,
                        device: disk.device.state(),
                    },
                    image.file,
                ))
            }
            None => None,
        };
        let (saved_disk, disk_file) = disk.unzip();
        let devices = DeviceState {
            serial: self.devices.borrow().console.state(),
            channel: self.channel.state(),
            disk: saved_disk,
        };
        Ok(LinuxSnapshot {
            vm,
            devices,
            replay: Vec::new(),
            disk: disk_file,
        })
    }

    /// A new microVM in `snapshot`'s state, its memory shared with the
    /// snapshot copy-on-write; what the guest writes to its channel goes
    /// to `sink`. The guest continues where the template stopped: give it
    /// fresh entropy before anything untrusted runs in it.
    pub fn restore(
        kvm: &Kvm,
        snapshot: &LinuxSnapshot,
        sink: ConsoleSink,
    ) -> Result<(LinuxVm, RestoreReport), LinuxError> {
        let started = Instant::now();
        let vm = snapshot.vm.restore_vm(kvm)?;
        let disk = match (&snapshot.devices.disk, &snapshot.disk) {
            (Some(saved), Some(file)) => Some(DiskImage {
                path: saved.path.clone(),
                file: file.try_clone().map_err(|source| LinuxError::Disk {
                    path: saved.path.clone(),
                    source,
                })?,
                saved: Some(saved.device.clone()),
            }),
            _ => None,
        };
        let devices = Devices::wire(&vm, sink, Some(&snapshot.devices), disk)?;
        let mut vcpus = snapshot.vm.restore_machine(&vm)?;
        let Some(vcpu) = vcpus.pop().filter(|_| vcpus.is_empty()) else {
            return Err(LinuxError::DeviceState(format!(
                "a Linux microVM has one vCPU, the snapshot has {}",
                vcpus.len() + 1
            )));
        };
        let report = RestoreReport {
            ready: started.elapsed(),
        };
        let vm = LinuxVm::assemble(vm, vcpu, devices);
        vm.channel.resume();
        if let Some(disk) = &vm.disk {
            disk.device.resume();
        }
        Ok((vm, report))
    }
}
