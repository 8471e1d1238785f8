//! The register values that put a fresh vCPU straight into 64-bit long mode
//! at a given entry point.
//!
//! Pure functions from a `kvm_sregs`/`kvm_regs` to a modified copy; the ioctl
//! that applies them lives in `vcpu.rs`.
//!
//! Not here: SSE/AVX enabling (CR4.OSFXSR, XCR0): guests are integer-only,
//! which PVM needs for its CPL0 code anyway; and any interrupt state.

use kvm_bindings::{kvm_regs, kvm_sregs};

use super::gdt::{self, CODE_SELECTOR, DATA_SELECTOR, GDT_BYTES, TSS_SELECTOR};
use super::layout::{GDT_START, PML4_START};

/// CR0.PE: protected mode.
pub const CR0_PE: u64 = 1 << 0;
/// CR0.ET: set on every CPU since the 486; some checks insist on it.
pub const CR0_ET: u64 = 1 << 4;
/// CR0.NE: native x87 error reporting; VMX requires it set.
pub const CR0_NE: u64 = 1 << 5;
/// CR0.PG: paging, which long mode requires.
pub const CR0_PG: u64 = 1 << 31;
/// CR4.PAE: 64-bit page-table entries, which long mode requires.
pub const CR4_PAE: u64 = 1 << 5;
/// EFER.LME: long mode enabled.
pub const EFER_LME: u64 = 1 << 8;
/// EFER.LMA: long mode active (what the CPU sets once LME and PG are on;
/// set here because we skip the transition).
pub const EFER_LMA: u64 = 1 << 10;
/// RFLAGS bit 1 is reserved and reads as one; interrupts stay off (IF=0).
pub const RFLAGS_RESERVED: u64 = 1 << 1;

/// `sregs` with long mode on, flat segments from our GDT, paging rooted at
/// our PML4, and no IDT. Fields not named here (APIC base, interrupt bitmap)
/// keep what KVM reported.
pub fn long_mode_sregs(mut sregs: kvm_sregs) -> kvm_sregs {
    let data = gdt::DATA.to_kvm_segment(DATA_SELECTOR);
    sregs.cs = gdt::CODE.to_kvm_segment(CODE_SELECTOR);
    sregs.ds = data;
    sregs.es = data;
    sregs.fs = data;
    sregs.gs = data;
    sregs.ss = data;
    sregs.tr = gdt::TSS.to_kvm_segment(TSS_SELECTOR);
    sregs.gdt.base = GDT_START;
    sregs.gdt.limit = GDT_BYTES - 1;
    // No IDT: an exception becomes a triple fault, i.e. a shutdown exit.
    sregs.idt.base = 0;
    sregs.idt.limit = 0;
    // Caches on (CD/NW cleared), protection and paging on.
    sregs.cr0 = CR0_PE | CR0_ET | CR0_NE | CR0_PG;
    sregs.cr3 = PML4_START;
    sregs.cr4 = CR4_PAE;
    sregs.efer = EFER_LME | EFER_LMA;
    sregs
}

/// General registers for entry at `rip` with the stack at `rsp`; all others
/// are zero.
pub fn entry_regs(rip: u64, rsp: u64) -> kvm_regs {
    kvm_regs {
        rip,
        rsp,
        rbp: rsp,
        rflags: RFLAGS_RESERVED,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_mode_bits_are_set() {
        let s = long_mode_sregs(kvm_sregs::default());
        assert_eq!(s.cr0 & (CR0_PE | CR0_PG), CR0_PE | CR0_PG);
        assert_eq!(s.cr4 & CR4_PAE, CR4_PAE);
        assert_eq!(s.efer, EFER_LME | EFER_LMA);
        assert_eq!(s.cs.l, 1);
        assert_eq!(s.cr3, PML4_START);
    }
}
