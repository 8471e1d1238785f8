//! Just enough ELF64 reading for the lab: is an executable static (no
//! `PT_INTERP`), and what does a kernel module's `.modinfo` section say.
//!
//! Little-endian x86-64 files only; anything else reads as "not ELF".

/// `PT_INTERP`: the program header naming a dynamic loader.
const PT_INTERP: u32 = 3;

fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(off..off.checked_add(2)?)?.try_into().ok()?,
    ))
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(off..off.checked_add(4)?)?.try_into().ok()?,
    ))
}

fn u64_at(b: &[u8], off: usize) -> Option<usize> {
    usize::try_from(u64::from_le_bytes(
        b.get(off..off.checked_add(8)?)?.try_into().ok()?,
    ))
    .ok()
}

/// Whether `b` starts like a 64-bit little-endian ELF file.
pub fn is_elf64(b: &[u8]) -> bool {
    b.len() >= 64 && b[..4] == *b"\x7fELF" && b[4] == 2 && b[5] == 1
}

/// `Some(true)` for an ELF executable that names a dynamic loader, i.e.
/// one that needs shared libraries the lab's guest does not have;
/// `None` if `b` is not a 64-bit ELF file.
pub fn is_dynamic(b: &[u8]) -> Option<bool> {
    if !is_elf64(b) {
        return None;
    }
    let phoff = u64_at(b, 0x20)?;
    let phentsize = usize::from(u16_at(b, 0x36)?);
    let phnum = usize::from(u16_at(b, 0x38)?);
    for i in 0..phnum {
        if u32_at(b, phoff.checked_add(i.checked_mul(phentsize)?)?)? == PT_INTERP {
            return Some(true);
        }
    }
    Some(false)
}

/// The bytes of the section called `name`, if there is one.
pub fn section<'a>(b: &'a [u8], name: &str) -> Option<&'a [u8]> {
    if !is_elf64(b) {
        return None;
    }
    let shoff = u64_at(b, 0x28)?;
    let shentsize = usize::from(u16_at(b, 0x3A)?);
    let shnum = usize::from(u16_at(b, 0x3C)?);
    let shstrndx = usize::from(u16_at(b, 0x3E)?);
    let header = |i: usize| shoff.checked_add(i.checked_mul(shentsize)?);
    let names_off = u64_at(b, header(shstrndx)?.checked_add(0x18)?)?;
    for i in 0..shnum {
        let h = header(i)?;
        let name_off = names_off.checked_add(u32_at(b, h)? as usize)?;
        let rest = b.get(name_off..)?;
        let end = rest.iter().position(|&c| c == 0)?;
        if &rest[..end] == name.as_bytes() {
            let off = u64_at(b, h.checked_add(0x18)?)?;
            let size = u64_at(b, h.checked_add(0x20)?)?;
            return b.get(off..off.checked_add(size)?);
        }
    }
    None
}

/// The values of `key=value` entries in a kernel module's `.modinfo`
/// (NUL-separated strings), in order.
pub fn modinfo<'a>(module: &'a [u8], key: &str) -> Vec<&'a str> {
    let Some(info) = section(module, ".modinfo") else {
        return Vec::new();
    };
    info.split(|&c| c == 0)
        .filter_map(|entry| std::str::from_utf8(entry).ok())
        .filter_map(|entry| entry.strip_prefix(key)?.strip_prefix('='))
        .collect()
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A minimal ELF64 file: the given program header types, and the given
    /// sections (plus the section-name table) with their contents.
    pub fn tiny_elf(program_headers: &[u32], sections: &[(&str, &[u8])]) -> Vec<u8> {
        let mut names = vec![0u8];
        let mut name_offs = Vec::new();
        for (name, _) in sections.iter().copied().chain([(".shstrtab", &[][..])]) {
            name_offs.push(names.len() as u32);
            names.extend_from_slice(name.as_bytes());
            names.push(0);
        }
        let mut b = vec![0u8; 64];
        b[..6].copy_from_slice(b"\x7fELF\x02\x01");
        let phoff = b.len();
        for &t in program_headers {
            let mut ph = vec![0u8; 56];
            ph[..4].copy_from_slice(&t.to_le_bytes());
            b.extend(ph);
        }
        let mut placed = Vec::new();
        for (_, data) in sections {
            placed.push((b.len(), data.len()));
            b.extend_from_slice(data);
        }
        placed.push((b.len(), names.len()));
        b.extend(&names);
        let shoff = b.len();
        b.extend(vec![0u8; 64]); // the null section
        for (i, (off, size)) in placed.iter().enumerate() {
            let mut sh = vec![0u8; 64];
            sh[..4].copy_from_slice(&name_offs[i].to_le_bytes());
            sh[0x18..0x20].copy_from_slice(&(*off as u64).to_le_bytes());
            sh[0x20..0x28].copy_from_slice(&(*size as u64).to_le_bytes());
            b.extend(sh);
        }
        b[0x20..0x28].copy_from_slice(&(phoff as u64).to_le_bytes());
        b[0x28..0x30].copy_from_slice(&(shoff as u64).to_le_bytes());
        b[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        b[0x38..0x3A].copy_from_slice(&(program_headers.len() as u16).to_le_bytes());
        b[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes());
        b[0x3C..0x3E].copy_from_slice(&(placed.len() as u16 + 1).to_le_bytes());
        b[0x3E..0x40].copy_from_slice(&(placed.len() as u16).to_le_bytes());
        b
    }

    #[test]
    fn an_interpreter_header_makes_an_executable_dynamic() {
        assert_eq!(is_dynamic(&tiny_elf(&[1, PT_INTERP, 1], &[])), Some(true));
        assert_eq!(is_dynamic(&tiny_elf(&[1, 1], &[])), Some(false));
        assert_eq!(is_dynamic(b"#!/bin/sh\necho hi\n"), None);
    }

    #[test]
    fn modinfo_reads_keys_from_its_own_section_only() {
        let info = b"license=GPL\0depends=kvm,ccp\0name=kvm_amd\0";
        let module = tiny_elf(&[], &[(".text", b"depends=bogus\0"), (".modinfo", info)]);
        assert_eq!(modinfo(&module, "depends"), ["kvm,ccp"]);
        assert_eq!(modinfo(&module, "name"), ["kvm_amd"]);
        assert!(modinfo(&module, "softdep").is_empty());
    }

    #[test]
    fn truncated_files_read_as_nothing_rather_than_panicking() {
        let module = tiny_elf(&[PT_INTERP], &[(".modinfo", b"name=x\0")]);
        for len in 0..module.len() {
            let _ = is_dynamic(&module[..len]);
            let _ = modinfo(&module[..len], "name");
        }
    }
}
