//! The CPUID a guest sees: what `KVM_GET_SUPPORTED_CPUID` offers, with the
//! vCPU's own APIC ID filled in and the two bits every VMM adds itself.
//!
//! `KVM_GET_SUPPORTED_CPUID` leaves out the "hypervisor present" bit, so a
//! Linux guest would not look for KVM's leaves: no kvmclock, so no known
//! TSC frequency, so the kernel calibrates the TSC against the PIT and,
//! when that fails (it mostly does under nested TCG: the loop is preempted
//! and its readings are thrown out), times its delay loop by counting
//! jiffies. On the lab that left most boots stalled before init (issue
//! 20). With the bit set, the guest takes the TSC frequency from kvmclock
//! and skips both calibrations. TSC-deadline mode is emulated by KVM but
//! also left to the VMM to advertise (`KVM_CAP_TSC_DEADLINE_TIMER`).
//!
//! Not here: CPU templates or feature masking; a guest sees everything the
//! host KVM supports. The test guests execute no CPUID at all, but KVM wants
//! the table set before the first run, and VMX derives some vCPU behaviour
//! (e.g. which MSRs exist) from it.

use kvm_bindings::CpuId;

use crate::kvm::Capabilities;

/// Leaf 1 holds the initial APIC ID in EBX bits 24..32 and feature flags
/// in ECX.
const LEAF_FEATURES: u32 = 0x1;
const EBX_APIC_ID_SHIFT: u32 = 24;
const EBX_APIC_ID_MASK: u32 = 0xFF << EBX_APIC_ID_SHIFT;
/// CPUID.1:ECX[24]: the local APIC has TSC-deadline mode.
const ECX_TSC_DEADLINE: u32 = 1 << 24;
/// CPUID.1:ECX[31]: running under a hypervisor (its leaves start at
/// 0x4000_0000).
const ECX_HYPERVISOR: u32 = 1 << 31;

/// Leaf 0xB (extended topology) reports the x2APIC ID in EDX of every
/// sub-leaf.
const LEAF_TOPOLOGY: u32 = 0xB;

/// A copy of `supported` for vCPU `index` of a VM with `caps`.
pub fn for_vcpu(supported: &CpuId, index: u8, caps: Capabilities) -> CpuId {
    let mut cpuid = supported.clone();
    for entry in cpuid.as_mut_slice() {
        match entry.function {
            LEAF_FEATURES => {
                entry.ebx =
                    (entry.ebx & !EBX_APIC_ID_MASK) | (u32::from(index) << EBX_APIC_ID_SHIFT);
                entry.ecx |= ECX_HYPERVISOR;
                if caps.tsc_deadline_timer {
                    entry.ecx |= ECX_TSC_DEADLINE;
                }
            }
            LEAF_TOPOLOGY => entry.edx = u32::from(index),
            _ => {}
        }
    }
    cpuid
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvm_bindings::kvm_cpuid_entry2;

    fn table() -> CpuId {
        let entries = [
            kvm_cpuid_entry2 {
                function: 1,
                ebx: 0xAB00_1234,
                ecx: 0x0000_0001,
                ..Default::default()
            },
            kvm_cpuid_entry2 {
                function: 0xB,
                edx: 7,
                ..Default::default()
            },
        ];
        CpuId::from_entries(&entries).unwrap()
    }

    #[test]
    fn apic_id_goes_into_leaf_1_and_0xb() {
        let cpuid = for_vcpu(&table(), 3, Capabilities::default());
        assert_eq!(cpuid.as_slice()[0].ebx, 0x0300_1234);
        assert_eq!(cpuid.as_slice()[1].edx, 3);
    }

    #[test]
    fn the_guest_is_told_it_runs_under_a_hypervisor() {
        let cpuid = for_vcpu(&table(), 0, Capabilities::default());
        assert_eq!(cpuid.as_slice()[0].ecx, ECX_HYPERVISOR | 1);
    }

    #[test]
    fn tsc_deadline_mode_is_advertised_only_when_kvm_emulates_it() {
        let caps = Capabilities {
            tsc_deadline_timer: true,
            ..Capabilities::default()
        };
        let cpuid = for_vcpu(&table(), 0, caps);
        assert_eq!(
            cpuid.as_slice()[0].ecx,
            ECX_HYPERVISOR | ECX_TSC_DEADLINE | 1
        );
    }
}
