//! Saving a vCPU's architectural state and restoring it into another vCPU,
//! possibly of another VM whose memory holds the same contents.
//!
//! [`VcpuState`] is plain owned data (no file descriptors, no pointers), so
//! it can be kept, cloned, or sent to another thread. Save order and restore
//! order follow what KVM needs: pending I/O is completed first so RIP is
//! past the instruction that exited; MP state and registers go in before the
//! local APIC and MSRs; vCPU events (pending exceptions, NMI, interrupt
//! shadow) go last because setting other state can clear them.
//!
//! Optional pieces — the local APIC (only with an in-kernel irqchip), XCRs,
//! vCPU events, MP state, individual MSRs — are saved when KVM offers them;
//! when KVM refuses one, the state records it in [`VcpuState::skipped`]
//! with the reason and restore leaves it at the target's default. This is
//! how a KVM like PVM that lacks some ioctls still round-trips.
//!
//! Not here: a byte format for state on disk, CPUID (set when the vCPU is
//! created, and the same for every vCPU of this host), guest memory (copy it
//! with `GuestMemory::copy_from` or a snapshot's memory file). XSAVE state
//! (AVX and the rest, which a Linux guest's user space uses) is saved when
//! KVM offers it, the legacy FPU/SSE area always.

use kvm_bindings::{
    Msrs, kvm_fpu, kvm_lapic_state, kvm_mp_state, kvm_msr_entry, kvm_regs, kvm_sregs,
    kvm_vcpu_events, kvm_xcrs, kvm_xsave,
};
use vmm_sys_util::errno;

use crate::vcpu::{Vcpu, VcpuError};

/// Errors from saving or restoring vCPU state.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// A vCPU ioctl failed.
    #[error(transparent)]
    Vcpu(#[from] VcpuError),
    /// Building the MSR request failed (too many entries).
    #[error("cannot build the list of {0} MSRs for KVM")]
    MsrList(usize),
    /// KVM accepted only some of the saved MSRs.
    #[error("KVM restored {set} of {total} MSRs; it refused MSR {refused:#x}")]
    MsrsPartlyRestored {
        /// How many it took.
        set: usize,
        /// How many were given.
        total: usize,
        /// The first one refused.
        refused: u32,
    },
    /// The state has a local APIC but the target VM has no irqchip.
    #[error("the saved state has a local APIC, the target vCPU has no irqchip to put it in")]
    NoIrqchip,
}

/// A piece of state that was not saved, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Skipped {
    /// What, e.g. `"xcrs"` or `"msr 0xc0000103"`.
    pub piece: String,
    /// Why, in words.
    pub reason: String,
}

/// The saved state of one vCPU.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct VcpuState {
    /// General-purpose registers, RIP, RFLAGS.
    pub regs: kvm_regs,
    /// Segments, control registers, EFER, descriptor tables.
    pub sregs: kvm_sregs,
    /// x87 and SSE registers.
    #[serde(with = "fpu_serde")]
    pub fpu: kvm_fpu,
    /// The MSRs of `Vm::saved_msrs` that KVM returned, in restore order.
    pub msrs: Vec<kvm_msr_entry>,
    /// The local APIC, when the VM has an in-kernel irqchip.
    pub lapic: Option<kvm_lapic_state>,
    /// Extended control registers (XCR0), when KVM supports them.
    pub xcrs: Option<kvm_xcrs>,
    /// The XSAVE area (4 KiB: x87, SSE, AVX…), when KVM supports it.
    pub xsave: Option<Vec<u32>>,
    /// Pending exceptions, interrupts, NMIs and the interrupt shadow.
    pub events: Option<kvm_vcpu_events>,
    /// Runnable, halted, waiting for SIPI...
    pub mp_state: Option<kvm_mp_state>,
    /// What could not be saved.
    pub skipped: Vec<Skipped>,
}

impl VcpuState {
    /// Saves `vcpu`'s state. Completes any pending I/O first (without
    /// running guest code), so the vCPU must not be running elsewhere — the
    /// `&mut` ensures it.
    pub fn save(vcpu: &mut Vcpu) -> Result<Self, StateError> {
        vcpu.complete_pending_io()?;
        let mut skipped = Vec::new();
        let features = vcpu.features().clone();
        let fd = vcpu.fd();
        let mp_state = optional(
            offered(features.caps.mp_state),
            "mp_state",
            || fd.get_mp_state(),
            &mut skipped,
        );
        let regs = vcpu.regs()?;
        let sregs = vcpu.sregs()?;
        let fpu = fd.get_fpu().map_err(vcpu.ioctl_error("KVM_GET_FPU"))?;
        let xcrs = optional(
            offered(features.caps.xcrs),
            "xcrs",
            || fd.get_xcrs(),
            &mut skipped,
        );
        let xsave = optional(
            offered(features.caps.xsave),
            "xsave",
            || fd.get_xsave().map(|x| x.region.to_vec()),
            &mut skipped,
        );
        let lapic = optional(
            features.irqchip.then_some(()).ok_or(NO_IRQCHIP),
            "lapic",
            || fd.get_lapic(),
            &mut skipped,
        );
        let msrs = read_msrs(vcpu, &features.msrs, &mut skipped)?;
        let events = optional(
            offered(features.caps.vcpu_events),
            "vcpu_events",
            || fd.get_vcpu_events(),
            &mut skipped,
        );
        for s in &skipped {
            tracing::debug!(piece = %s.piece, reason = %s.reason, "vCPU state piece not saved");
        }
        Ok(VcpuState {
            regs,
            sregs,
            fpu,
            msrs,
            lapic,
            xcrs,
            xsave,
            events,
            mp_state,
            skipped,
        })
    }

    /// Restores this state into `vcpu`, which should be freshly created in a
    /// VM whose memory holds the same contents as the source's did.
    pub fn restore(&self, vcpu: &Vcpu) -> Result<(), StateError> {
        let fd = vcpu.fd();
        if let Some(mp_state) = self.mp_state {
            fd.set_mp_state(mp_state)
                .map_err(vcpu.ioctl_error("KVM_SET_MP_STATE"))?;
        }
        vcpu.set_regs(&self.regs)?;
        vcpu.set_sregs(&self.sregs)?;
        fd.set_fpu(&self.fpu)
            .map_err(vcpu.ioctl_error("KVM_SET_FPU"))?;
        if let Some(region) = &self.xsave {
            let mut xsave = kvm_xsave::default();
            let n = region.len().min(xsave.region.len());
            xsave.region[..n].copy_from_slice(&region[..n]);
            // SAFETY: a whole `kvm_xsave` (its 4 KiB region, as
            // KVM_GET_XSAVE filled it); KVM_SET_XSAVE reads no more.
            unsafe { fd.set_xsave(&xsave) }.map_err(vcpu.ioctl_error("KVM_SET_XSAVE"))?;
        }
        if let Some(xcrs) = &self.xcrs {
            fd.set_xcrs(xcrs)
                .map_err(vcpu.ioctl_error("KVM_SET_XCRS"))?;
        }
        if let Some(lapic) = &self.lapic {
            if !vcpu.features().irqchip {
                return Err(StateError::NoIrqchip);
            }
            fd.set_lapic(lapic)
                .map_err(vcpu.ioctl_error("KVM_SET_LAPIC"))?;
        }
        self.restore_msrs(vcpu)?;
        if let Some(events) = &self.events {
            fd.set_vcpu_events(events)
                .map_err(vcpu.ioctl_error("KVM_SET_VCPU_EVENTS"))?;
        }
        Ok(())
    }

    /// KVM stops at the first MSR it refuses. One refused with the value
    /// zero — its reset value, e.g. a paravirtual feature the guest never
    /// enabled and this vCPU cannot have — is passed over; any other is an
    /// error.
    fn restore_msrs(&self, vcpu: &Vcpu) -> Result<(), StateError> {
        let total = self.msrs.len();
        let mut rest = &self.msrs[..];
        while !rest.is_empty() {
            let msrs = Msrs::from_entries(rest).map_err(|_| StateError::MsrList(total))?;
            let set = vcpu
                .fd()
                .set_msrs(&msrs)
                .map_err(vcpu.ioctl_error("KVM_SET_MSRS"))?;
            let Some(refused) = rest.get(set) else {
                break;
            };
            if refused.data != 0 {
                return Err(StateError::MsrsPartlyRestored {
                    set: total - rest.len() + set,
                    total,
                    refused: refused.index,
                });
            }
            tracing::debug!(msr = refused.index, "KVM refused a zero MSR; left at reset");
            rest = &rest[set + 1..];
        }
        Ok(())
    }
}

/// Why a piece is absent when KVM lacks the extension for it.
const NOT_OFFERED: &str = "this KVM does not offer the extension";
/// Why the local APIC is absent without an in-kernel irqchip.
const NO_IRQCHIP: &str = "the VM has no in-kernel irqchip, so no local APIC";

fn offered(cap: bool) -> Result<(), &'static str> {
    cap.then_some(()).ok_or(NOT_OFFERED)
}

/// Runs `get` when `offered` is `Ok`; absence or a refusal becomes a
/// [`Skipped`] with its reason.
fn optional<T>(
    offered: Result<(), &'static str>,
    piece: &str,
    get: impl FnOnce() -> Result<T, errno::Error>,
    skipped: &mut Vec<Skipped>,
) -> Option<T> {
    let reason = match offered.map(|()| get()) {
        Ok(Ok(value)) => return Some(value),
        Ok(Err(e)) => format!("KVM refused it: {e}"),
        Err(why) => why.to_string(),
    };
    skipped.push(Skipped {
        piece: piece.to_string(),
        reason,
    });
    None
}

/// Reads `wanted` with `KVM_GET_MSRS`. KVM stops at the first MSR it
/// refuses; that one is recorded as skipped and the rest are asked again.
fn read_msrs(
    vcpu: &Vcpu,
    wanted: &[u32],
    skipped: &mut Vec<Skipped>,
) -> Result<Vec<kvm_msr_entry>, StateError> {
    let mut saved = Vec::with_capacity(wanted.len());
    let mut rest = wanted;
    while !rest.is_empty() {
        let entries: Vec<kvm_msr_entry> = rest
            .iter()
            .map(|&index| kvm_msr_entry {
                index,
                ..Default::default()
            })
            .collect();
        let mut msrs =
            Msrs::from_entries(&entries).map_err(|_| StateError::MsrList(entries.len()))?;
        let read = vcpu
            .fd()
            .get_msrs(&mut msrs)
            .map_err(vcpu.ioctl_error("KVM_GET_MSRS"))?;
        saved.extend_from_slice(&msrs.as_slice()[..read]);
        if read < rest.len() {
            skipped.push(Skipped {
                piece: format!("msr {:#x}", rest[read]),
                reason: "KVM_GET_MSRS refused it".to_string(),
            });
            rest = &rest[read + 1..];
        } else {
            rest = &[];
        }
    }
    Ok(saved)
}

/// `kvm_fpu` is the one state struct kvm-bindings does not serialise: it
/// goes through a mirror of its fields.
mod fpu_serde {
    use kvm_bindings::kvm_fpu;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Fpu {
        fpr: [[u8; 16]; 8],
        fcw: u16,
        fsw: u16,
        ftwx: u8,
        last_opcode: u16,
        last_ip: u64,
        last_dp: u64,
        xmm: [[u8; 16]; 16],
        mxcsr: u32,
    }

    pub fn serialize<S: Serializer>(f: &kvm_fpu, s: S) -> Result<S::Ok, S::Error> {
        Fpu {
            fpr: f.fpr,
            fcw: f.fcw,
            fsw: f.fsw,
            ftwx: f.ftwx,
            last_opcode: f.last_opcode,
            last_ip: f.last_ip,
            last_dp: f.last_dp,
            xmm: f.xmm,
            mxcsr: f.mxcsr,
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<kvm_fpu, D::Error> {
        let f = Fpu::deserialize(d)?;
        Ok(kvm_fpu {
            fpr: f.fpr,
            fcw: f.fcw,
            fsw: f.fsw,
            ftwx: f.ftwx,
            last_opcode: f.last_opcode,
            last_ip: f.last_ip,
            last_dp: f.last_dp,
            xmm: f.xmm,
            mxcsr: f.mxcsr,
            ..Default::default()
        })
    }
}
