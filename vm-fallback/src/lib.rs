//! `ephemeral-vm`: a small VMM on KVM for the per-run microVM.
//!
//! What this crate owns: opening `/dev/kvm` and naming the KVM behind it
//! (PVM, AMD SVM, Intel VMX); guest memory; entering 64-bit long mode
//! directly (no firmware); a run loop with typed exits and a deadline that
//! holds even when the guest never exits; saving and restoring a vCPU's
//! state; [`self_test`], which says whether this host runs guests and what
//! an exit costs; booting a Linux guest ([`linux`]: the 64-bit boot
//! protocol, irqchip, PIT, COM1, the i8042 reset as "done") with an
//! initramfs we generate ([`initramfs`]); and the guest's one channel, a
//! virtio-mmio console ([`devices::virtio`]). `src/bin/ephemeral-lab` is
//! the lab that runs all of it on an emulated AMD SVM (`vm-fallback/lab`).
//!
//! Not yet here: the worker as the guest's init, snapshots of a booted
//! guest and their restore, the VMM in a jail, serving runs from
//! microVMs (runs use `jail+wasm` until then).

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
compile_error!("ephemeral-vm supports only Linux on x86-64");

pub mod arch;
pub mod devices;
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
