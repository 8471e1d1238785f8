//! `ephemeral-vm`: a small VMM on KVM for the per-run microVM.
//!
//! What this crate owns: opening `/dev/kvm` and naming the KVM behind it
//! (PVM, AMD SVM, Intel VMX); guest memory, anonymous or mapped privately
//! from a snapshot's memory file; entering 64-bit long mode directly (no
//! firmware); a run loop with typed exits, a deadline that holds even when
//! the guest never exits, and a stop on demand from another thread;
//! saving and restoring a vCPU's and a VM's state ([`snapshot`]);
//! [`self_test`], which says whether this host runs guests and what an
//! exit costs; booting a Linux guest ([`linux`]: the 64-bit boot
//! protocol, irqchip, PIT, COM1, the i8042 reset as "done") with an
//! initramfs we generate ([`initramfs`]), and snapshots of it; the guest's
//! one channel, a virtio-mmio console ([`devices::virtio`]); a run's
//! microVM ([`microvm`]: the worker as the guest's init, the template,
//! serving one run over a stream), its read-only virtio disk of what VMs
//! share ([`disk_image`]) and the VMM process's jail ([`jail`]).
//! Binaries: `ephemeral-vmm` (the VMM process the server spawns),
//! `ephemeral-guest-init` (a test init), `ephemeral-lab` (the lab that runs
//! all of it on an emulated AMD SVM, `vm-fallback/lab`).
//!
//! Not here: more than one vCPU, writable disks, network devices.

#![warn(missing_docs)]

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
compile_error!("ephemeral-vm supports only Linux on x86-64");

pub mod arch;
pub mod devices;
pub mod disk_image;
pub mod exit;
pub mod initramfs;
pub mod jail;
pub mod kvm;
pub mod linux;
pub mod memory;
pub mod microvm;
pub mod selftest;
pub mod snapshot;
pub mod vcpu;
pub mod vcpu_state;
pub mod vm;
pub mod watchdog;

pub use exit::{Bus, Exit, OpenBus};
pub use kvm::{Capabilities, Kvm, KvmError, KvmKind};
pub use memory::{GuestMemory, MemoryError};
pub use selftest::{Failure, SelfTest, self_test, self_test_with_guest};
pub use snapshot::{RestoreTimes, SnapshotError, VmSnapshot};
pub use vcpu::{Flow, RunEnd, RunReport, Vcpu, VcpuError};
pub use vcpu_state::{StateError, VcpuState};
pub use vm::{Vm, VmConfig, VmError, VmState};
pub use watchdog::StopSignal;
