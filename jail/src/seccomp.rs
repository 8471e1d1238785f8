//! Seccomp-BPF allow-lists. [`AllowList::worker`]: the system calls a
//! worker really makes once it is locked (serving frames, running wasm,
//! spawning its own threads, lazily loading a program from the cache),
//! found by tracing it through the test suite. Other processes (the VMM)
//! build their own with [`AllowList::new`]. Anything not allowed fails
//! with `ENOSYS`, the answer glibc expects for calls it can fall back from
//! (`clone3` → `clone`).
//!
//! Argument rules close the general-purpose calls: `socket` only for
//! `AF_UNIX`, `clone` only for threads (no new processes), `prctl` only
//! to name a thread. Refused by omission, among others: `ptrace`, `mount`,
//! `umount2`, `pivot_root`, `unshare`, `setns`, `bpf`, `perf_event_open`,
//! `keyctl`, `add_key`, `request_key`, `userfaultfd`, `init_module`,
//! `finit_module`, `delete_module`, `kexec_load`, `reboot`, `kill`,
//! `bind`, `listen`, `connect` and `accept` (a worker's sockets are its
//! inherited stream and unnamed pairs: with no name to meet at, copies of
//! a fork server sharing its network namespace cannot reach each other),
//! `execve`.

use std::collections::BTreeMap;

pub use seccompiler::SeccompRule;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    TargetArch,
};

use super::JailError;

/// What every locked process here may do with any arguments: move bytes
/// on descriptors it holds, manage its memory, run threads and their
/// signals, read the time, sleep, exit. Each list adds its own.
pub const BASE: &[libc::c_long] = &[
    libc::SYS_read,
    libc::SYS_write,
    libc::SYS_readv,
    libc::SYS_writev,
    libc::SYS_recvfrom,
    libc::SYS_sendto,
    libc::SYS_recvmsg,
    libc::SYS_sendmsg,
    libc::SYS_shutdown,
    libc::SYS_close,
    libc::SYS_fstat,
    libc::SYS_statx,
    libc::SYS_fcntl,
    libc::SYS_mmap,
    libc::SYS_mprotect,
    libc::SYS_munmap,
    libc::SYS_mremap,
    libc::SYS_madvise,
    libc::SYS_brk,
    libc::SYS_rt_sigaction,
    libc::SYS_rt_sigprocmask,
    libc::SYS_rt_sigreturn,
    libc::SYS_sigaltstack,
    libc::SYS_tgkill,
    libc::SYS_futex,
    libc::SYS_set_robust_list,
    libc::SYS_rseq,
    libc::SYS_sched_yield,
    libc::SYS_sched_getaffinity,
    libc::SYS_getrandom,
    libc::SYS_clock_gettime,
    libc::SYS_clock_getres,
    libc::SYS_clock_nanosleep,
    libc::SYS_nanosleep,
    libc::SYS_gettid,
    libc::SYS_getpid,
    libc::SYS_poll,
    libc::SYS_ppoll,
    libc::SYS_exit,
    libc::SYS_exit_group,
];

/// The worker's additions to [`BASE`]: reading the cache and programs
/// (open, seek, list), the engine's memory images (memfd), its event
/// loop, and who it is.
const WORKER: &[libc::c_long] = &[
    libc::SYS_pread64,
    libc::SYS_pwrite64,
    libc::SYS_openat,
    // musl (the static release's worker) calls the old `open`, `stat` and
    // `lstat`, where glibc calls `openat` and `newfstatat`: the same
    // operations.
    libc::SYS_open,
    libc::SYS_stat,
    libc::SYS_lstat,
    libc::SYS_newfstatat,
    libc::SYS_lseek,
    libc::SYS_getdents64,
    libc::SYS_readlink,
    libc::SYS_getcwd,
    libc::SYS_memfd_create,
    libc::SYS_ftruncate,
    libc::SYS_getuid,
    libc::SYS_geteuid,
    libc::SYS_getgid,
    libc::SYS_getegid,
    libc::SYS_epoll_create1,
    libc::SYS_epoll_ctl,
    libc::SYS_epoll_wait,
    libc::SYS_epoll_pwait,
    libc::SYS_eventfd2,
    libc::SYS_pipe2,
];

/// Argument `arg` (0-based), masked with `mask`, equals `value`.
pub fn masked_eq(arg: u8, mask: u64, value: u64) -> Result<SeccompRule, JailError> {
    let condition = SeccompCondition::new(
        arg,
        SeccompCmpArgLen::Qword,
        SeccompCmpOp::MaskedEq(mask),
        value,
    )
    .map_err(|e| JailError::Seccomp(e.to_string()))?;
    SeccompRule::new(vec![condition]).map_err(|e| JailError::Seccomp(e.to_string()))
}

/// Argument `arg` equals `value`.
pub fn equals(arg: u8, value: u64) -> Result<SeccompRule, JailError> {
    masked_eq(arg, u64::MAX, value)
}

/// System calls a process may make: some with any arguments, some only
/// with arguments one of their rules matches.
#[derive(Debug, Clone)]
pub struct AllowList {
    rules: BTreeMap<i64, Vec<SeccompRule>>,
}

impl AllowList {
    /// [`BASE`] and `more` allowed whatever their arguments; `clone` only
    /// for threads and `prctl` only to name one (every list needs those);
    /// `ruled` only when one of their rules matches.
    pub fn new(
        more: &[libc::c_long],
        ruled: Vec<(libc::c_long, Vec<SeccompRule>)>,
    ) -> Result<AllowList, JailError> {
        let thread = libc::CLONE_THREAD as u64;
        let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BASE
            .iter()
            .chain(more)
            .map(|&nr| (nr, Vec::new()))
            .collect();
        rules.insert(libc::SYS_clone, vec![masked_eq(0, thread, thread)?]);
        rules.insert(libc::SYS_prctl, vec![equals(0, libc::PR_SET_NAME as u64)?]);
        rules.extend(ruled);
        Ok(AllowList { rules })
    }

    /// The worker's list (see the module docs).
    pub fn worker() -> Result<AllowList, JailError> {
        let unix = || equals(0, libc::AF_UNIX as u64);
        AllowList::new(
            WORKER,
            vec![
                (libc::SYS_socket, vec![unix()?]),
                // A pair of connected unix sockets: what a tokio runtime
                // made after the lock (a fork server's copy makes wasi's
                // lazily) wakes its signal driver with.
                (libc::SYS_socketpair, vec![unix()?]),
            ],
        )
    }

    /// Whether `nr` is allowed at all (with some arguments).
    pub fn allows(&self, nr: libc::c_long) -> bool {
        self.rules.contains_key(&nr)
    }

    /// The filter, compiled to BPF for this machine's architecture.
    pub fn program(&self) -> Result<BpfProgram, JailError> {
        let arch = TargetArch::try_from(std::env::consts::ARCH)
            .map_err(|e| JailError::Seccomp(e.to_string()))?;
        let filter = SeccompFilter::new(
            self.rules.clone(),
            SeccompAction::Errno(libc::ENOSYS as u32),
            SeccompAction::Allow,
            arch,
        )
        .map_err(|e| JailError::Seccomp(e.to_string()))?;
        filter
            .try_into()
            .map_err(|e: seccompiler::BackendError| JailError::Seccomp(e.to_string()))
    }

    /// Installs the filter on every thread of this process (`TSYNC`).
    pub fn install(&self) -> Result<(), JailError> {
        let program = self.program()?;
        seccompiler::apply_filter_all_threads(&program)
            .map_err(|e| JailError::Seccomp(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_worker_can_name_no_socket() {
        let list = super::AllowList::worker().unwrap();
        for nr in [
            libc::SYS_bind,
            libc::SYS_listen,
            libc::SYS_connect,
            libc::SYS_accept,
            libc::SYS_accept4,
        ] {
            assert!(!list.allows(nr), "system call {nr} is allowed");
        }
    }

    #[test]
    fn the_filter_compiles() {
        let program = super::AllowList::worker().unwrap().program().unwrap();
        assert!(!program.is_empty());
    }
}
