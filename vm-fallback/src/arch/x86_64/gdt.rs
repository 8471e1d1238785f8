//! The guest's GDT: a flat 64-bit code segment, a flat data segment and a
//! task-state segment, and the `kvm_segment` values that match them.
//!
//! In long mode the CPU ignores most of a code or data descriptor, but the
//! hidden segment state KVM loads must still agree with it (VMX checks CS.L,
//! the TR type and more on every entry), so both are derived from the same
//! [`Descriptor`] value here.
//!
//! Not here: an IDT. Guests run without one, so any exception is a triple
//! fault, which the VMM sees as a shutdown exit: exactly the signal wanted.

use kvm_bindings::kvm_segment;
use vm_memory::{Bytes, GuestAddress};

use super::SetupError;
use super::layout::GDT_START;
use crate::memory::GuestMemory;

/// Access and flag bits of a flat 64-bit ring-0 code segment: G=1, L=1,
/// P=1, DPL=0, S=1, type 0xB (execute/read, accessed).
const CODE64_FLAGS: u16 = 0xA09B;

/// A flat ring-0 data segment: G=1, D/B=1, P=1, DPL=0, S=1, type 0x3
/// (read/write, accessed).
const DATA_FLAGS: u16 = 0xC093;

/// A 64-bit TSS: P=1, S=0, type 0xB ("busy"), the only TR type VMX accepts
/// in long mode.
const TSS_FLAGS: u16 = 0x008B;

/// Selector of the code segment (GDT index 1).
pub const CODE_SELECTOR: u16 = 1 << 3;
/// Selector of the data segment (GDT index 2).
pub const DATA_SELECTOR: u16 = 2 << 3;
/// Selector of the TSS (GDT index 3; it spans indices 3 and 4).
pub const TSS_SELECTOR: u16 = 3 << 3;

/// The TSS itself is never used (no interrupts, no privilege changes); it
/// only has to exist, so it is a minimal 104-byte one at address 0.
const TSS_LIMIT: u32 = 0x67;

/// One 8-byte segment descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Descriptor {
    flags: u16,
    base: u32,
    limit: u32,
}

/// The three segments every guest gets.
pub const CODE: Descriptor = Descriptor::new(CODE64_FLAGS, 0, 0xF_FFFF);
/// The flat data segment (DS, ES, FS, GS, SS).
pub const DATA: Descriptor = Descriptor::new(DATA_FLAGS, 0, 0xF_FFFF);
/// The task-state segment.
pub const TSS: Descriptor = Descriptor::new(TSS_FLAGS, 0, TSS_LIMIT);

impl Descriptor {
    /// `flags` holds the access byte in bits 0..8 and G, D/B, L, AVL in bits
    /// 12..16, the way they sit in the descriptor's upper half.
    pub const fn new(flags: u16, base: u32, limit: u32) -> Self {
        Descriptor { flags, base, limit }
    }

    /// The descriptor as the CPU reads it from the GDT.
    pub const fn encode(self) -> u64 {
        let base = self.base as u64;
        let limit = self.limit as u64;
        let flags = self.flags as u64;
        ((base & 0xFF00_0000) << 32)
            | ((flags & 0xF0FF) << 40)
            | ((limit & 0x000F_0000) << 32)
            | ((base & 0x00FF_FFFF) << 16)
            | (limit & 0xFFFF)
    }

    fn bit(self, n: u16) -> u8 {
        ((self.flags >> n) & 1) as u8
    }

    /// The hidden segment state KVM loads for `selector`.
    pub fn to_kvm_segment(self, selector: u16) -> kvm_segment {
        let g = self.bit(15);
        let limit = if g == 1 {
            (self.limit << 12) | 0xFFF
        } else {
            self.limit
        };
        let present = self.bit(7);
        kvm_segment {
            base: u64::from(self.base),
            limit,
            selector,
            type_: (self.flags & 0xF) as u8,
            present,
            dpl: ((self.flags >> 5) & 3) as u8,
            db: self.bit(14),
            s: self.bit(4),
            l: self.bit(13),
            g,
            avl: self.bit(12),
            unusable: u8::from(present == 0),
            padding: 0,
        }
    }
}

/// The GDT as written to guest memory: null, code, data, and the TSS's
/// 16-byte system descriptor (its upper half holds base bits 32..64: zero).
pub fn table() -> [u64; 5] {
    [0, CODE.encode(), DATA.encode(), TSS.encode(), 0]
}

/// Size of the GDT in bytes; GDTR.limit is this minus one.
pub const GDT_BYTES: u16 = 5 * 8;

/// Writes [`table`] at [`GDT_START`].
pub fn write_gdt(memory: &GuestMemory) -> Result<(), SetupError> {
    for (i, entry) in table().iter().enumerate() {
        memory
            .mmap()
            .write_obj(*entry, GuestAddress(GDT_START + 8 * i as u64))
            .map_err(|source| SetupError::Write {
                what: "GDT",
                source,
            })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_encode_to_the_well_known_values() {
        assert_eq!(CODE.encode(), 0x00AF_9B00_0000_FFFF);
        assert_eq!(DATA.encode(), 0x00CF_9300_0000_FFFF);
        assert_eq!(TSS.encode(), 0x0000_8B00_0000_0067);
    }

    #[test]
    fn code_segment_is_64_bit_ring_0() {
        let cs = CODE.to_kvm_segment(CODE_SELECTOR);
        assert_eq!((cs.l, cs.db, cs.dpl, cs.present, cs.s), (1, 0, 0, 1, 1));
        assert_eq!(cs.limit, 0xFFFF_FFFF);
        assert_eq!(cs.type_, 0xB);
        let tr = TSS.to_kvm_segment(TSS_SELECTOR);
        assert_eq!((tr.s, tr.type_, tr.limit, tr.g), (0, 0xB, 0x67, 0));
    }
}
