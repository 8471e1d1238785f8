//! The VMM process's jail: the worker's (`ephemeral-jail`), entered in the
//! same order, with the VMM's own seccomp allow-list.
//!
//! The server spawns `ephemeral-vmm serve --jail` exactly as it spawns a
//! worker: fresh user, mount, PID, network, IPC and UTS namespaces, its
//! own cgroup, an empty environment. Then the VMM
//! 1. opens `/dev/kvm` and its snapshot (the only files it ever opens);
//! 2. [`enter`]s the jail: an empty read-only tmpfs root (the host's tree
//!    detached), no capabilities in its bounding set, `no_new_privs`,
//!    rlimits, Landlock — descriptors opened in step 1 keep working;
//! 3. restores the microVM (creating the VM, its memory mapping, vCPU,
//!    eventfds);
//! 4. [`lock`]s: becomes an unprivileged uid of its own and installs
//!    [`allow_list`] — from here on it can run the guest (KVM's ioctls),
//!    move bytes on descriptors it holds, make threads and memory, and
//!    nothing else: no `open`, no socket, no `execve`, no `ptrace`.

use ephemeral_jail::seccomp::{AllowList, masked_eq};
use ephemeral_jail::{JailError, JailPlan};

/// The ioctl "type" byte of KVM's ioctls (`KVMIO`, include/uapi/linux/kvm.h).
const KVMIO: u64 = 0xAE;

/// The VMM's seccomp allow-list: the jail's [`BASE`] (bytes on
/// descriptors it holds, memory, threads, time), `pread64` (the read-only
/// disk's image, opened before the jail) and `ioctl` only for KVM's
/// ioctls — no `open`, no socket, no `execve`, nothing else.
///
/// [`BASE`]: ephemeral_jail::seccomp::BASE
pub fn allow_list() -> Result<AllowList, JailError> {
    AllowList::new(
        &[libc::SYS_pread64],
        vec![(libc::SYS_ioctl, vec![masked_eq(1, 0xFF00, KVMIO << 8)?])],
    )
}

/// Threads of a VMM: the vCPU's, the deadline watchdog's, the one moving
/// the host's bytes to the guest, and room for std's.
pub const MAX_THREADS: u64 = 8;
/// Descriptors of a VMM: KVM, the VM, the vCPU, the memory file, the
/// stream, a few eventfds.
pub const MAX_OPEN_FILES: u64 = 64;

/// Step 2 of the module docs. Must run before any other thread exists.
pub fn enter(tmpfs_bytes: u64) -> Result<(), JailError> {
    let landlock = ephemeral_jail::enter(&JailPlan {
        tmpfs_bytes,
        binds: Vec::new(),
        max_open_files: MAX_OPEN_FILES,
        max_threads: MAX_THREADS,
    })?;
    tracing::debug!(?landlock, "VMM jail entered");
    Ok(())
}

/// Step 4 of the module docs.
pub fn lock() -> Result<(), JailError> {
    ephemeral_jail::lock(&allow_list()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_compiles_and_leaves_out_what_a_vmm_never_needs() {
        let list = allow_list().unwrap();
        assert!(!list.program().unwrap().is_empty());
        for nr in [
            libc::SYS_openat,
            libc::SYS_execve,
            libc::SYS_socket,
            libc::SYS_connect,
            libc::SYS_ptrace,
            libc::SYS_mount,
            libc::SYS_unshare,
            libc::SYS_setns,
            libc::SYS_bpf,
            libc::SYS_memfd_create,
            libc::SYS_kill,
        ] {
            assert!(!list.allows(nr), "syscall {nr} must not be allowed");
        }
        assert!(list.allows(libc::SYS_ioctl));
    }
}
