//! The CPUID a guest sees: what `KVM_GET_SUPPORTED_CPUID` offers, with the
//! vCPU's own APIC ID filled in.
//!
//! Not here: CPU templates or feature masking; a guest sees everything the
//! host KVM supports. The test guests execute no CPUID at all, but KVM wants
//! the table set before the first run, and VMX derives some vCPU behaviour
//! (e.g. which MSRs exist) from it.

use kvm_bindings::CpuId;

/// Leaf 1 holds the initial APIC ID in EBX bits 24..32.
const LEAF_FEATURES: u32 = 0x1;
const EBX_APIC_ID_SHIFT: u32 = 24;
const EBX_APIC_ID_MASK: u32 = 0xFF << EBX_APIC_ID_SHIFT;

/// Leaf 0xB (extended topology) reports the x2APIC ID in EDX of every
/// sub-leaf.
const LEAF_TOPOLOGY: u32 = 0xB;

/// A copy of `supported` for vCPU `index`.
pub fn for_vcpu(supported: &CpuId, index: u8) -> CpuId {
    let mut cpuid = supported.clone();
    for entry in cpuid.as_mut_slice() {
        match entry.function {
            LEAF_FEATURES => {
                entry.ebx =
                    (entry.ebx & !EBX_APIC_ID_MASK) | (u32::from(index) << EBX_APIC_ID_SHIFT);
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

    #[test]
    fn apic_id_goes_into_leaf_1_and_0xb() {
        let entries = [
            kvm_cpuid_entry2 {
                function: 1,
                ebx: 0xAB00_1234,
                ..Default::default()
            },
            kvm_cpuid_entry2 {
                function: 0xB,
                edx: 7,
                ..Default::default()
            },
        ];
        let cpuid = for_vcpu(&CpuId::from_entries(&entries).unwrap(), 3);
        assert_eq!(cpuid.as_slice()[0].ebx, 0x0300_1234);
        assert_eq!(cpuid.as_slice()[1].edx, 3);
    }
}
