//! A booted Linux guest, frozen, and microVMs restored from it: the
//! template VM boots once (kernel, init, the worker warm and waiting for
//! its first frame), is stopped and snapshotted; each run then gets a VM
//! restored from that snapshot in milliseconds instead of a boot.
//!
//! A snapshot is [`VmSnapshot`] (memory, vCPU, irqchip, PIT, clock) plus
//! the devices' state: COM1's registers and the virtio console's transport
//! and queues. Take it when the guest is idle on its channel (the host has
//! read everything it wrote, nothing is pending to it), so no byte is lost
//! or duplicated across the cut.

use std::time::{Duration, Instant};

use super::{DeviceState, Devices, LinuxError, LinuxVm};
use crate::devices::virtio::ConsoleSink;
use crate::kvm::Kvm;
use crate::snapshot::VmSnapshot;

/// A frozen Linux microVM.
#[derive(Debug)]
pub struct LinuxSnapshot {
    vm: VmSnapshot,
    devices: DeviceState,
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
}

impl LinuxVm {
    /// Freezes this guest (stopped: `&mut` ensures no run is in
    /// progress). It may run on afterwards; the snapshot is a copy.
    pub fn snapshot(&mut self) -> Result<LinuxSnapshot, LinuxError> {
        let vm = VmSnapshot::take(&self.vm, std::slice::from_mut(&mut self.vcpu))?;
        let devices = DeviceState {
            serial: self.devices.borrow().console.state(),
            channel: self.channel.state(),
        };
        Ok(LinuxSnapshot { vm, devices })
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
        let devices = Devices::wire(&vm, sink, Some(&snapshot.devices))?;
        let mut vcpus = snapshot.vm.restore_vcpus(&vm)?;
        snapshot.vm.restore_vm_state(&vm)?;
        let Some(vcpu) = vcpus.pop().filter(|_| vcpus.is_empty()) else {
            return Err(LinuxError::DeviceState(format!(
                "a Linux microVM has one vCPU, the snapshot has {}",
                vcpus.len() + 1
            )));
        };
        let report = RestoreReport {
            ready: started.elapsed(),
        };
        Ok((LinuxVm::assemble(vm, vcpu, devices), report))
    }
}
