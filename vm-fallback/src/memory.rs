//! Guest RAM: one anonymous mapping of N MiB at guest-physical 0, registered
//! with KVM as a user memory region.
//!
//! The mapping is shared (`Arc`) between the VM and each of its vCPUs, so it
//! cannot be unmapped while any vCPU could still run: KVM would otherwise be
//! left pointing at a host address that a later `mmap` may reuse.
//!
//! Not here: memory hot-plug, dirty tracking, file-backed or huge-page
//! memory, more than one region.

use vm_memory::{Bytes, GuestAddress, GuestMemoryBackend as _, GuestMemoryMmap, GuestMemoryRegion};

/// Guest RAM starts at guest-physical 0; the layout in
/// `arch::x86_64::layout` assumes it.
const RAM_START: GuestAddress = GuestAddress(0);

const MIB: usize = 1 << 20;

/// Copies between guest memories go through a buffer this big, not one the
/// size of the guest.
const COPY_CHUNK: usize = MIB;

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
}
