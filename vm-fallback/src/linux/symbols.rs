//! Which kernel function an address is in, from the `vmlinux`'s own
//! symbol table: so a guest that stalls says where ("in
//! `calibrate_delay_converge+0x3a`"), not just a number.
//!
//! Only what that needs: the ELF64 section headers, the `SHT_SYMTAB`
//! section and its string table, function symbols. A stripped or odd
//! file gives `None`, never an error: this is for reports.

/// `SHT_SYMTAB`: the full symbol table (not the dynamic one).
const SHT_SYMTAB: u32 = 2;
/// `STT_FUNC` in the low nibble of `st_info`.
const STT_FUNC: u8 = 2;
const SECTION_HEADER_SIZE: usize = 64;
const SYMBOL_SIZE: usize = 24;

/// The function of `elf` that contains `addr`, and the offset into it.
pub fn function_at(elf: &[u8], addr: u64) -> Option<(String, u64)> {
    let sections = section_headers(elf)?;
    let symtab = sections.iter().find(|s| s.kind == SHT_SYMTAB)?;
    let strtab = sections.get(symtab.link as usize)?;
    let strings = elf.get(strtab.offset..strtab.offset.checked_add(strtab.size)?)?;
    let symbols = elf.get(symtab.offset..symtab.offset.checked_add(symtab.size)?)?;
    let mut best: Option<(u64, u32)> = None;
    for sym in symbols.chunks_exact(SYMBOL_SIZE) {
        let name = u32::from_le_bytes(sym[0..4].try_into().ok()?);
        let value = u64::from_le_bytes(sym[8..16].try_into().ok()?);
        let size = u64::from_le_bytes(sym[16..24].try_into().ok()?);
        let inside = value <= addr && (size == 0 || addr < value.saturating_add(size));
        if sym[4] & 0xF == STT_FUNC && inside && best.is_none_or(|(v, _)| value > v) {
            best = Some((value, name));
        }
    }
    let (value, name) = best?;
    let name = strings.get(name as usize..)?;
    let end = name.iter().position(|&b| b == 0)?;
    Some((
        String::from_utf8_lossy(&name[..end]).into_owned(),
        addr - value,
    ))
}

struct Section {
    kind: u32,
    offset: usize,
    size: usize,
    link: u32,
}

fn section_headers(elf: &[u8]) -> Option<Vec<Section>> {
    if elf.get(0..4)? != b"\x7fELF" || *elf.get(4)? != 2 {
        return None;
    }
    let shoff = usize::try_from(u64::from_le_bytes(elf.get(0x28..0x30)?.try_into().ok()?)).ok()?;
    let shnum = usize::from(u16::from_le_bytes(elf.get(0x3C..0x3E)?.try_into().ok()?));
    let table = elf.get(shoff..shoff.checked_add(shnum.checked_mul(SECTION_HEADER_SIZE)?)?)?;
    table
        .chunks_exact(SECTION_HEADER_SIZE)
        .map(|h| {
            Some(Section {
                kind: u32::from_le_bytes(h[4..8].try_into().ok()?),
                offset: usize::try_from(u64::from_le_bytes(h[24..32].try_into().ok()?)).ok()?,
                size: usize::try_from(u64::from_le_bytes(h[32..40].try_into().ok()?)).ok()?,
                link: u32::from_le_bytes(h[40..44].try_into().ok()?),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junk_is_no_symbol_not_a_panic() {
        assert_eq!(function_at(b"", 0), None);
        assert_eq!(function_at(b"\x7fELF\x02garbage", 0x1000), None);
        let mut header = vec![0u8; 64];
        header[..5].copy_from_slice(b"\x7fELF\x02");
        header[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
        header[0x3C..0x3E].copy_from_slice(&9u16.to_le_bytes());
        assert_eq!(function_at(&header, 0x1000), None);
    }

    #[test]
    fn finds_a_function_of_this_test_binary() {
        // The test executable itself is an ELF64 with a symbol table.
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        // Its load address is unknown, so look the function up by name
        // and ask what is one byte into it.
        let Some(value) = symbol_value(&exe, "finds_a_function_of_this_test_binary") else {
            return; // a stripped build: nothing to check
        };
        let (name, offset) = function_at(&exe, value + 1).unwrap();
        assert!(
            name.contains("finds_a_function_of_this_test_binary"),
            "{name}"
        );
        assert_eq!(offset, 1);
    }

    fn symbol_value(elf: &[u8], wanted: &str) -> Option<u64> {
        let sections = section_headers(elf)?;
        let symtab = sections.iter().find(|s| s.kind == SHT_SYMTAB)?;
        let strtab = sections.get(symtab.link as usize)?;
        let strings = &elf[strtab.offset..strtab.offset + strtab.size];
        elf[symtab.offset..symtab.offset + symtab.size]
            .chunks_exact(SYMBOL_SIZE)
            .find(|sym| {
                let name = u32::from_le_bytes(sym[0..4].try_into().unwrap()) as usize;
                let end = strings[name..].iter().position(|&b| b == 0).unwrap();
                sym[4] & 0xF == STT_FUNC
                    && std::str::from_utf8(&strings[name..name + end])
                        .is_ok_and(|n| n.contains(wanted))
            })
            .map(|sym| u64::from_le_bytes(sym[8..16].try_into().unwrap()))
    }
}
