//! Guest-physical addresses of everything the VMM places in guest memory.
//!
//! Every address is fixed and page aligned, so a test can point at "the data
//! area" by name and a saved vCPU (whose CR3 and GDTR hold these addresses)
//! can be restored into any VM laid out by this module.
//!
//! Not here: what the guest does with the free memory above
//! [`DATA_START`].
//!
//! ```text
//! 0x0000_0000  page 0, left empty: a guest null-pointer write lands in RAM
//!              the VMM never reads, instead of in the tables below
//! 0x0000_1000  GDT
//! 0x0000_2000  PML4
//! 0x0000_3000  PDPT
//! 0x0000_4000  PD (512 x 2 MiB = the first 1 GiB, identity mapped)
//! 0x0000_5000  ... stack, growing down from STACK_TOP
//! 0x0008_0000  STACK_TOP
//! 0x0010_0000  CODE_START: the guest program
//! 0x0020_0000  DATA_START: free for guests and tests
//! ```

/// Size of one 4 KiB page.
pub const PAGE_SIZE: u64 = 0x1000;

/// The GDT: one page after page 0, which stays empty so a stray low write by
/// the guest cannot corrupt its own descriptors.
pub const GDT_START: u64 = 0x1000;

/// Top-level page table (PML4); CR3 points here.
pub const PML4_START: u64 = 0x2000;

/// Page-directory-pointer table, the PML4's only entry.
pub const PDPT_START: u64 = 0x3000;

/// Page directory: 512 entries of 2 MiB pages, identity-mapping the first
/// 1 GiB. Addresses in that gigabyte that have no RAM behind them reach the
/// VMM as MMIO exits, which is how tests provoke MMIO.
pub const PD_START: u64 = 0x4000;

/// How much the page tables identity-map: 512 x 2 MiB.
pub const IDENTITY_MAP_BYTES: u64 = 1 << 30;

/// Initial stack pointer. The stack grows down towards the page tables and
/// has ~492 KiB, far more than the integer-only test guests use; it ends
/// below the code so a runaway stack never overwrites the program.
pub const STACK_TOP: u64 = 0x8_0000;

/// Where the guest program is loaded and entered: 1 MiB, the customary x86
/// kernel load address, clear of everything above.
pub const CODE_START: u64 = 0x10_0000;

/// A free area for guest data, at 2 MiB: the start of the second 2 MiB page,
/// so guest data and guest code never share a page.
pub const DATA_START: u64 = 0x20_0000;

/// The longest program that fits between [`CODE_START`] and [`DATA_START`].
pub const CODE_MAX_LEN: u64 = DATA_START - CODE_START;

/// The smallest guest memory the layout works in: everything up to and
/// including one 2 MiB page of data.
pub const MIN_MEMORY_BYTES: u64 = DATA_START + (2 << 20);

// The layout is checked when the crate compiles: every area page aligned,
// in the order drawn above, all inside the identity map.
const _: () = {
    let starts = [
        GDT_START, PML4_START, PDPT_START, PD_START, STACK_TOP, CODE_START, DATA_START,
    ];
    let mut i = 0;
    while i < starts.len() {
        assert!(starts[i].is_multiple_of(PAGE_SIZE));
        assert!(i == 0 || starts[i - 1] < starts[i]);
        i += 1;
    }
    assert!(PD_START + PAGE_SIZE < STACK_TOP);
    assert!(MIN_MEMORY_BYTES <= IDENTITY_MAP_BYTES);
};
