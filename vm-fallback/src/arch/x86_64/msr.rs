//! The MSRs saved with a vCPU's state, and how the list is cut down to the
//! ones this host's KVM can actually save.
//!
//! The list is fixed and short: the MSRs a 64-bit kernel programs (SYSCALL
//! entry, GS swap, PAT, TSC and its deadline timer, KVM's paravirtual
//! clock and friends). Whatever KVM does not report in
//! `KVM_GET_MSR_INDEX_LIST` is dropped instead of failing the save.
//!
//! Not here: MSR filtering or trapping, or setting MSRs at boot (our guests
//! need none).

/// IA32_TSC: the time-stamp counter, so guest time continues after restore.
pub const MSR_IA32_TSC: u32 = 0x10;
/// IA32_SYSENTER_CS/ESP/EIP: legacy fast system-call entry.
pub const MSR_IA32_SYSENTER_CS: u32 = 0x174;
/// See [`MSR_IA32_SYSENTER_CS`].
pub const MSR_IA32_SYSENTER_ESP: u32 = 0x175;
/// See [`MSR_IA32_SYSENTER_CS`].
pub const MSR_IA32_SYSENTER_EIP: u32 = 0x176;
/// IA32_MISC_ENABLE: fast-strings and similar switches.
pub const MSR_IA32_MISC_ENABLE: u32 = 0x1A0;
/// IA32_PAT: page attribute table (memory types).
pub const MSR_IA32_PAT: u32 = 0x277;
/// STAR: SYSCALL segment selectors.
pub const MSR_STAR: u32 = 0xC000_0081;
/// LSTAR: 64-bit SYSCALL entry point.
pub const MSR_LSTAR: u32 = 0xC000_0082;
/// CSTAR: compatibility-mode SYSCALL entry point.
pub const MSR_CSTAR: u32 = 0xC000_0083;
/// SFMASK: RFLAGS bits cleared on SYSCALL.
pub const MSR_SYSCALL_MASK: u32 = 0xC000_0084;
/// KERNEL_GS_BASE: the GS base SWAPGS switches to.
pub const MSR_KERNEL_GS_BASE: u32 = 0xC000_0102;
/// TSC_AUX: what RDTSCP and RDPID return.
pub const MSR_TSC_AUX: u32 = 0xC000_0103;
/// IA32_TSC_DEADLINE: the local APIC timer's next tick in TSC-deadline
/// mode (how a tickless Linux guest sleeps).
pub const MSR_IA32_TSC_DEADLINE: u32 = 0x6E0;
/// IA32_SPEC_CTRL: speculation controls the guest kernel set.
pub const MSR_IA32_SPEC_CTRL: u32 = 0x48;
/// KVM's paravirtual MSRs (Documentation/virt/kvm/x86/msr.rst): where the
/// guest keeps its kvmclock and wall clock, asynchronous page faults,
/// steal time, paravirtual EOI, and host polling control.
pub const MSR_KVM_WALL_CLOCK_NEW: u32 = 0x4B56_4D00;
/// See [`MSR_KVM_WALL_CLOCK_NEW`].
pub const MSR_KVM_SYSTEM_TIME_NEW: u32 = 0x4B56_4D01;
/// See [`MSR_KVM_WALL_CLOCK_NEW`].
pub const MSR_KVM_ASYNC_PF_EN: u32 = 0x4B56_4D02;
/// See [`MSR_KVM_WALL_CLOCK_NEW`].
pub const MSR_KVM_STEAL_TIME: u32 = 0x4B56_4D03;
/// See [`MSR_KVM_WALL_CLOCK_NEW`].
pub const MSR_KVM_PV_EOI_EN: u32 = 0x4B56_4D04;
/// See [`MSR_KVM_WALL_CLOCK_NEW`].
pub const MSR_KVM_POLL_CONTROL: u32 = 0x4B56_4D05;
/// See [`MSR_KVM_WALL_CLOCK_NEW`].
pub const MSR_KVM_ASYNC_PF_INT: u32 = 0x4B56_4D06;

/// Every MSR saved with a vCPU, in the order they are restored. The TSC is
/// first so that restoring it does not disturb the others.
pub const SAVED_MSRS: &[u32] = &[
    MSR_IA32_TSC,
    MSR_IA32_SYSENTER_CS,
    MSR_IA32_SYSENTER_ESP,
    MSR_IA32_SYSENTER_EIP,
    MSR_IA32_MISC_ENABLE,
    MSR_IA32_PAT,
    MSR_STAR,
    MSR_LSTAR,
    MSR_CSTAR,
    MSR_SYSCALL_MASK,
    MSR_KERNEL_GS_BASE,
    MSR_TSC_AUX,
    MSR_IA32_TSC_DEADLINE,
    MSR_IA32_SPEC_CTRL,
    MSR_KVM_WALL_CLOCK_NEW,
    MSR_KVM_SYSTEM_TIME_NEW,
    MSR_KVM_ASYNC_PF_INT,
    MSR_KVM_ASYNC_PF_EN,
    MSR_KVM_STEAL_TIME,
    MSR_KVM_PV_EOI_EN,
    MSR_KVM_POLL_CONTROL,
];

/// The members of [`SAVED_MSRS`] that KVM says it can save, in that order.
pub fn saveable(kvm_index_list: &[u32]) -> Vec<u32> {
    SAVED_MSRS
        .iter()
        .copied()
        .filter(|msr| kvm_index_list.contains(msr))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_msrs_are_dropped_order_kept() {
        let kvm = [MSR_LSTAR, 0x1234, MSR_IA32_TSC];
        assert_eq!(saveable(&kvm), vec![MSR_IA32_TSC, MSR_LSTAR]);
    }
}
