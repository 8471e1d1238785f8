//! Identity page tables for the first 1 GiB, with 2 MiB pages.
//!
//! One PML4 entry points at one PDPT entry, which points at one page
//! directory of 512 large pages: guest-virtual equals guest-physical for
//! every address below 1 GiB. Addresses beyond guest RAM but below 1 GiB are
//! mapped too, so guest accesses there become MMIO exits instead of page
//! faults.
//!
//! Not here: 4 KiB pages, protection (everything is writable and
//! executable), or mappings above 1 GiB.

use vm_memory::{Bytes, GuestAddress};

use super::SetupError;
use super::layout::{PD_START, PDPT_START, PML4_START};
use crate::memory::GuestMemory;

/// Page-table entry bits: present, writable.
const PRESENT_WRITABLE: u64 = 0b11;
/// Page-directory entry bit 7: this entry maps a 2 MiB page, not a table.
const PAGE_SIZE_2M: u64 = 1 << 7;
/// Entries in one 4 KiB table.
const ENTRIES: u64 = 512;
/// Bytes mapped by one page-directory entry.
const LARGE_PAGE: u64 = 2 << 20;

/// Writes the PML4, the PDPT and the page directory.
pub fn write_identity_map(memory: &GuestMemory) -> Result<(), SetupError> {
    let write = |value: u64, at: u64| {
        memory
            .mmap()
            .write_obj(value, GuestAddress(at))
            .map_err(|source| SetupError::Write {
                what: "page tables",
                source,
            })
    };
    write(PDPT_START | PRESENT_WRITABLE, PML4_START)?;
    write(PD_START | PRESENT_WRITABLE, PDPT_START)?;
    for i in 0..ENTRIES {
        write(
            (i * LARGE_PAGE) | PAGE_SIZE_2M | PRESENT_WRITABLE,
            PD_START + 8 * i,
        )?;
    }
    Ok(())
}
