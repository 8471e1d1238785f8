//! x86-64 guest setup: where things live in guest memory, the GDT, the page
//! tables, the registers for 64-bit long mode, CPUID and the MSRs we save.
//!
//! Guests here are entered directly in long mode, with no firmware and no
//! real-mode stage: the VMM writes a GDT and identity page tables into guest
//! memory and sets CR0/CR3/CR4/EFER and the segment registers itself. That is
//! also the only way in under PVM, where real-mode code can triple-fault.
//!
//! Not here: interrupts (no IDT, no APIC programming), and any Linux boot
//! protocol.

pub mod cpuid;
pub mod gdt;
pub mod layout;
pub mod msr;
pub mod paging;
pub mod regs;

use vm_memory::{Bytes, GuestAddress};

use crate::memory::GuestMemory;

/// Errors from writing the long-mode scaffolding and program into memory.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// Guest memory is too small for the fixed layout.
    #[error("guest memory is {have} bytes, the long-mode layout needs at least {need}")]
    MemoryTooSmall {
        /// Bytes of guest memory present.
        have: u64,
        /// Bytes the layout needs.
        need: u64,
    },
    /// The program does not fit between its load address and the data area.
    #[error("the guest program is {len} bytes, at most {max} fit at the load address")]
    ProgramTooLarge {
        /// Length of the program.
        len: usize,
        /// Room available.
        max: u64,
    },
    /// A write into guest memory failed.
    #[error("cannot write the {what} into guest memory: {source}")]
    Write {
        /// What was being written.
        what: &'static str,
        /// The memory error.
        #[source]
        source: vm_memory::GuestMemoryError,
    },
}

/// Writes the GDT, the page tables and `program` (at
/// [`layout::CODE_START`]) into `memory`. Returns the entry point, which is
/// the first byte of the program.
pub fn load_long_mode_program(
    memory: &GuestMemory,
    program: &[u8],
) -> Result<GuestAddress, SetupError> {
    let have = memory.size();
    if have < layout::MIN_MEMORY_BYTES {
        return Err(SetupError::MemoryTooSmall {
            have,
            need: layout::MIN_MEMORY_BYTES,
        });
    }
    let max = layout::CODE_MAX_LEN;
    if program.len() as u64 > max {
        return Err(SetupError::ProgramTooLarge {
            len: program.len(),
            max,
        });
    }
    gdt::write_gdt(memory)?;
    paging::write_identity_map(memory)?;
    let entry = GuestAddress(layout::CODE_START);
    memory
        .mmap()
        .write_slice(program, entry)
        .map_err(|source| SetupError::Write {
            what: "guest program",
            source,
        })?;
    Ok(entry)
}
