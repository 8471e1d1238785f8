//! The zero page (`struct boot_params`) of the 64-bit boot protocol
//! (Documentation/arch/x86/boot.rst): where the command line and the
//! initramfs are, and the e820 map of guest RAM.

use linux_loader::loader::bootparam::{boot_e820_entry, boot_params};
use vm_memory::ByteValued;

/// The zero page's address: low memory, clear of the GDT and page tables
/// at 0x1000-0x5000 and of the boot stack below 0x9000.
pub const ZERO_PAGE_START: u64 = 0x7000;
/// The command line's address and its room.
pub const CMDLINE_START: u64 = 0x2_0000;
/// The command line's room in bytes, its terminating NUL included.
pub const CMDLINE_MAX: usize = 4096;
/// Start of "high" memory: everything from 1 MiB up is RAM for the kernel.
pub const HIMEM_START: u64 = 0x10_0000;
/// Where the legacy EBDA would begin: low RAM ends here.
const EBDA_START: u64 = 0x9_FC00;
/// e820 type of usable RAM.
const E820_RAM: u32 = 1;
/// Setup header values the kernel checks (boot.rst): "HdrS", 0xAA55, and
/// an "undefined" boot loader id.
const HDRS_MAGIC: u32 = 0x5372_6448;
const BOOT_FLAG: u16 = 0xAA55;
const LOADER_UNDEFINED: u8 = 0xFF;
/// `loadflags`: the kernel was loaded high (at 1 MiB or above).
const LOADED_HIGH: u8 = 0x01;
const PAGE: u64 = 0x1000;

/// Where the initramfs goes: at the top of RAM, page-aligned, above the
/// kernel; `None` if it does not fit.
pub(super) fn place_initramfs(ram_end: u64, kernel_end: u64, len: usize) -> Option<u64> {
    let start = ram_end.checked_sub(len as u64)? & !(PAGE - 1);
    (start >= kernel_end.max(HIMEM_START)).then_some(start)
}

/// The zero page for `ram_end` bytes of RAM.
pub(super) fn build(ram_end: u64, cmdline_len: usize, initrd: u64, initrd_len: usize) -> Vec<u8> {
    let mut params = boot_params::default();
    params.hdr.boot_flag = BOOT_FLAG;
    params.hdr.header = HDRS_MAGIC;
    params.hdr.type_of_loader = LOADER_UNDEFINED;
    params.hdr.loadflags |= LOADED_HIGH;
    params.hdr.cmd_line_ptr = CMDLINE_START as u32;
    params.hdr.cmdline_size = cmdline_len as u32;
    params.hdr.ramdisk_image = initrd as u32;
    params.hdr.ramdisk_size = initrd_len as u32;
    let ram = [(0, EBDA_START), (HIMEM_START, ram_end - HIMEM_START)];
    for (i, (addr, size)) in ram.into_iter().enumerate() {
        params.e820_table[i] = boot_e820_entry {
            addr,
            size,
            r#type: E820_RAM,
        };
    }
    params.e820_entries = ram.len() as u8;
    params.as_slice().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_initramfs_sits_page_aligned_at_the_top_of_ram() {
        let ram = 256 << 20;
        let at = place_initramfs(ram, 32 << 20, 10_000).unwrap();
        assert_eq!(at % PAGE, 0);
        assert!(at + 10_000 <= ram);
        assert_eq!(place_initramfs(ram, 250 << 20, 10 << 20), None);
    }

    #[test]
    fn the_zero_page_says_where_things_are() {
        let page = build(256 << 20, 42, 0x0F00_0000, 1234);
        let params = boot_params::from_slice(&page).unwrap();
        assert_eq!({ params.hdr.header }, HDRS_MAGIC);
        assert_eq!({ params.hdr.cmd_line_ptr }, CMDLINE_START as u32);
        assert_eq!({ params.hdr.ramdisk_size }, 1234);
        assert_eq!(params.e820_entries, 2);
        let high = params.e820_table[1];
        assert_eq!({ high.addr } + { high.size }, 256 << 20);
    }
}
