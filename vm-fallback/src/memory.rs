//! Guest RAM: one anonymous mapping of N MiB at guest-physical 0, registered
//! with KVM as a user memory region.
//!
//! The mapping is shared (`Arc`) between the VM and each of its vCPUs, so it
//! cannot be unmapped while any vCPU could still run: KVM would otherwise be
//! left pointing at a host address that a later `mmap` may reuse.
//!
//! A snapshot's memory is a sealed memory file ([`GuestMemory::save`]:
//! only the pages the guest touched are written, the rest stay holes); a
//! restored VM maps it privately ([`GuestMemory::restore`]), so every VM
//! restored from one snapshot shares the file's pages until it writes one.
//!
//! Not here: memory hot-plug, dirty tracking, huge pages, more than one
//! region.

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::FileExt;

use vm_memory::mmap::{GuestRegionMmap, MmapRegionBuilder};
use vm_memory::{
    Bytes, FileOffset, GuestAddress, GuestMemoryBackend as _, GuestMemoryMmap, GuestMemoryRegion,
};

/// Guest RAM starts at guest-physical 0; the layout in
/// `arch::x86_64::layout` assumes it.
const RAM_START: GuestAddress = GuestAddress(0);

const MIB: usize = 1 << 20;

/// Copies between guest memories go through a buffer this big, not one the
/// size of the guest.
const COPY_CHUNK: usize = MIB;

/// The page size KVM maps guest memory with here.
const PAGE: usize = 4096;

/// Errors from creating, registering or copying guest memory.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// A size of zero, or one that overflows.
    #[error("guest memory of {0} MiB is not a size this VMM can map")]
    BadSize(usize),
    /// The anonymous mapping failed.
    #[error("cannot map {mib} MiB of guest memory: {source}")]
    Map {
        /// Requested size.
        mib: usize,
        /// The mapping error.
        #[source]
        source: vm_memory::mmap::FromRangesError,
    },
    /// KVM refused the memory region.
    #[error("KVM refused guest memory slot {slot}: {source}")]
    Register {
        /// The slot number.
        slot: u32,
        /// The ioctl error.
        #[source]
        source: vmm_sys_util::errno::Error,
    },
    /// A read or write outside guest memory.
    #[error("guest memory access failed: {0}")]
    Access(#[from] vm_memory::GuestMemoryError),
    /// Saving to or mapping a memory file failed.
    #[error("guest memory snapshot: {what}: {source}")]
    Snapshot {
        /// The step that failed.
        what: &'static str,
        /// The system error.
        #[source]
        source: std::io::Error,
    },
    /// Copying between memories of different sizes.
    #[error("cannot copy {from} bytes of guest memory into {to} bytes")]
    SizeMismatch {
        /// Size of the source.
        from: u64,
        /// Size of the destination.
        to: u64,
    },
}

/// Guest RAM.
#[derive(Debug)]
pub struct GuestMemory {
    mmap: GuestMemoryMmap,
}

impl GuestMemory {
    /// Maps `mib` MiB of zeroed anonymous memory at guest-physical 0.
    pub fn new(mib: usize) -> Result<Self, MemoryError> {
        let bytes = mib
            .checked_mul(MIB)
            .filter(|b| *b > 0)
            .ok_or(MemoryError::BadSize(mib))?;
        let mmap = GuestMemoryMmap::from_ranges(&[(RAM_START, bytes)])
            .map_err(|source| MemoryError::Map { mib, source })?;
        Ok(GuestMemory { mmap })
    }

    /// The vm-memory view, for typed reads and writes (`Bytes`).
    pub fn mmap(&self) -> &GuestMemoryMmap {
        &self.mmap
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.mmap.iter().map(|r| r.len()).sum()
    }

    /// Reads `len` bytes at guest-physical `addr`.
    pub fn read(&self, addr: u64, len: usize) -> Result<Vec<u8>, MemoryError> {
        let mut buf = vec![0; len];
        self.mmap.read_slice(&mut buf, GuestAddress(addr))?;
        Ok(buf)
    }

    /// Writes `data` at guest-physical `addr`.
    pub fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemoryError> {
        Ok(self.mmap.write_slice(data, GuestAddress(addr))?)
    }

    /// Makes this memory's contents equal to `other`'s (same size only).
    /// Used to move a guest to another VM along with its vCPU state.
    pub fn copy_from(&self, other: &GuestMemory) -> Result<(), MemoryError> {
        let (from, to) = (other.size(), self.size());
        if from != to {
            return Err(MemoryError::SizeMismatch { from, to });
        }
        let mut chunk = vec![0; COPY_CHUNK];
        for at in (RAM_START.0..RAM_START.0 + from).step_by(COPY_CHUNK) {
            let len = COPY_CHUNK.min((RAM_START.0 + from - at) as usize);
            other.mmap.read_slice(&mut chunk[..len], GuestAddress(at))?;
            self.mmap.write_slice(&chunk[..len], GuestAddress(at))?;
        }
        Ok(())
    }

    /// Writes this memory into a new sealed memory file, skipping pages
    /// the guest never touched (they read as zero from the file's holes)
    /// and pages of zeros. The guest must not run meanwhile.
    pub fn save(&self) -> Result<File, MemoryError> {
        let size = self.size();
        let file = sealable_memfd(c"ephemeral-guest-memory")?;
        file.set_len(size)
            .map_err(snapshot_error("resize the memory file"))?;
        for region in self.mmap.iter() {
            let host = region
                .get_host_address(vm_memory::MemoryRegionAddress(0))
                .map_err(MemoryError::Access)?;
            let len = region.len() as usize;
            // SAFETY: `host..host+len` is this region's live mapping, which
            // `self` keeps; nothing writes it while we read (the guest is
            // stopped, and `&self` has no writer on this side).
            let bytes = unsafe { std::slice::from_raw_parts(host.cast_const(), len) };
            let resident = resident_pages(host, len)?;
            write_touched_pages(&file, region.start_addr().0, bytes, &resident)?;
        }
        seal(&file)?;
        Ok(file)
    }

    /// Maps `file` (from [`GuestMemory::save`]) as guest RAM of `size`
    /// bytes, privately: reads share the file's pages with every other VM
    /// restored from it, a write copies just that page.
    pub fn restore(file: &File, size: u64) -> Result<Self, MemoryError> {
        let bad = || MemoryError::BadSize((size / MIB as u64) as usize);
        let len = usize::try_from(size).map_err(|_| bad())?;
        if len == 0 || len % PAGE != 0 {
            return Err(bad());
        }
        let copy = file
            .try_clone()
            .map_err(snapshot_error("duplicate the memory file"))?;
        let region = MmapRegionBuilder::new(len)
            .with_file_offset(FileOffset::new(copy, 0))
            .with_mmap_prot(libc::PROT_READ | libc::PROT_WRITE)
            .with_mmap_flags(libc::MAP_PRIVATE | libc::MAP_NORESERVE)
            .build()
            .map_err(|e| MemoryError::Snapshot {
                what: "map the memory file",
                source: std::io::Error::other(e.to_string()),
            })?;
        let region = GuestRegionMmap::new(region, RAM_START).ok_or_else(bad)?;
        let mmap =
            GuestMemoryMmap::from_regions(vec![region]).map_err(|e| MemoryError::Snapshot {
                what: "build guest memory",
                source: std::io::Error::other(e.to_string()),
            })?;
        Ok(GuestMemory { mmap })
    }

    /// The host address range of guest RAM: `(start, length)`, for
    /// measuring what a VM costs the host (`/proc/self/smaps`).
    pub fn host_range(&self) -> Option<(usize, usize)> {
        let region = self.mmap.iter().next()?;
        let host = region
            .get_host_address(vm_memory::MemoryRegionAddress(0))
            .ok()?;
        Some((host as usize, region.len() as usize))
    }

    /// Tells KVM about every region, slots numbered from 0.
    pub(crate) fn register(&self, vm: &kvm_ioctls::VmFd) -> Result<(), MemoryError> {
        for (slot, region) in (0u32..).zip(self.mmap.iter()) {
            let host = region
                .get_host_address(vm_memory::MemoryRegionAddress(0))
                .map_err(MemoryError::Access)?;
            let kvm_region = kvm_bindings::kvm_userspace_memory_region {
                slot,
                flags: 0,
                guest_phys_addr: region.start_addr().0,
                memory_size: region.len(),
                userspace_addr: host as u64,
            };
            // SAFETY: `host..host+len` is a live mapping owned by `self.mmap`.
            // The only caller, `Vm::new`, registers memory it holds in an
            // `Arc` that it and each of its `Vcpu`s keep, and never hands out
            // the VM fd, so the mapping outlives every KVM_RUN that could
            // touch it.
            unsafe { vm.set_user_memory_region(kvm_region) }
                .map_err(|source| MemoryError::Register { slot, source })?;
        }
        Ok(())
    }
}

fn snapshot_error(what: &'static str) -> impl FnOnce(std::io::Error) -> MemoryError {
    move |source| MemoryError::Snapshot { what, source }
}

/// A memory file that can be sealed (`memfd_create`): it lives in RAM,
/// has no name in any filesystem, and closes with its last user.
fn sealable_memfd(name: &std::ffi::CStr) -> Result<File, MemoryError> {
    // SAFETY: `name` is a valid C string; the flags are plain bits.
    let fd =
        unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
    if fd < 0 {
        return Err(MemoryError::Snapshot {
            what: "create a memory file",
            source: std::io::Error::last_os_error(),
        });
    }
    // SAFETY: `fd` is a new descriptor nobody else owns.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// No more writes, no resize: a snapshot cannot change under the VMs that
/// map it (their private copies are theirs alone).
fn seal(file: &File) -> Result<(), MemoryError> {
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: fcntl on a descriptor we own, with an integer argument.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) } < 0 {
        return Err(MemoryError::Snapshot {
            what: "seal the memory file",
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// One flag a page: whether it is in memory (`mincore`). An anonymous
/// page the guest never touched is not, and reads as zero.
fn resident_pages(host: *mut u8, len: usize) -> Result<Vec<u8>, MemoryError> {
    let mut flags = vec![0u8; len.div_ceil(PAGE)];
    // SAFETY: `host..host+len` is a page-aligned live mapping and `flags`
    // has one byte per page of it.
    if unsafe { libc::mincore(host.cast(), len, flags.as_mut_ptr()) } != 0 {
        return Err(MemoryError::Snapshot {
            what: "list resident pages",
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(flags)
}

/// Writes the resident, non-zero pages of `bytes` at their offsets, runs
/// of neighbours in one write.
fn write_touched_pages(
    file: &File,
    base: u64,
    bytes: &[u8],
    resident: &[u8],
) -> Result<(), MemoryError> {
    let kept = |page: usize| {
        resident[page] & 1 != 0
            && bytes[page * PAGE..((page + 1) * PAGE).min(bytes.len())]
                .iter()
                .any(|&b| b != 0)
    };
    let mut page = 0;
    while page < resident.len() {
        if !kept(page) {
            page += 1;
            continue;
        }
        let first = page;
        while page < resident.len() && kept(page) {
            page += 1;
        }
        let run = &bytes[first * PAGE..(page * PAGE).min(bytes.len())];
        file.write_all_at(run, base + (first * PAGE) as u64)
            .map_err(snapshot_error("write the memory file"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_zero_is_refused() {
        assert!(matches!(GuestMemory::new(0), Err(MemoryError::BadSize(0))));
    }

    #[test]
    fn copy_moves_contents_and_checks_size() {
        let a = GuestMemory::new(3).unwrap();
        let b = GuestMemory::new(3).unwrap();
        a.write(0x1234, b"hello").unwrap();
        a.write((3 << 20) - 5, b"world").unwrap();
        b.copy_from(&a).unwrap();
        assert_eq!(b.read(0x1234, 5).unwrap(), b"hello");
        assert_eq!(b.read((3 << 20) - 5, 5).unwrap(), b"world");
        let c = GuestMemory::new(2).unwrap();
        assert!(matches!(
            c.copy_from(&a),
            Err(MemoryError::SizeMismatch { .. })
        ));
    }

    #[test]
    fn a_saved_memory_restores_privately_and_sparsely() {
        let a = GuestMemory::new(4).unwrap();
        a.write(0x1234, b"hello").unwrap();
        a.write((4 << 20) - 5, b"world").unwrap();
        let file = a.save().unwrap();
        // Two touched pages, the rest holes: the file holds 8 KiB of data.
        let blocks = std::os::unix::fs::MetadataExt::blocks(&file.metadata().unwrap());
        assert!(blocks * 512 <= 2 * PAGE as u64, "{blocks} blocks");
        let b = GuestMemory::restore(&file, a.size()).unwrap();
        let c = GuestMemory::restore(&file, a.size()).unwrap();
        assert_eq!(b.read(0x1234, 5).unwrap(), b"hello");
        assert_eq!(b.read((4 << 20) - 5, 5).unwrap(), b"world");
        b.write(0x1234, b"HELLO").unwrap();
        assert_eq!(c.read(0x1234, 5).unwrap(), b"hello", "writes stay private");
        // Sealed: the snapshot cannot be written.
        assert!(file.write_all_at(b"x", 0).is_err());
    }
}
