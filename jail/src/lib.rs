//! `ephemeral-jail`: the jail a worker — or a microVM's VMM — puts itself
//! in before it reads any request data, modelled on Firecracker's jailer.
//!
//! The host has already made the process (`ephemeral-worker`'s
//! `host::spawn`): new user,
//! mount, PID, network, IPC and UTS namespaces, a cgroup with the run's
//! caps, inner uid 0 mapped to the host's root only for the set-up below and
//! an unprivileged inner uid mapped to a host uid of its own. Here the
//! worker, in order:
//! 1. [`enter`]: a cgroup namespace of its own; every mount private; a new
//!    root on a size-capped tmpfs holding only read-only binds of what it
//!    needs (the precompiled component cache, the programs, its binary);
//!    the host's tree detached; the root made read-only; a hostname; rlimits;
//!    the capability bounding set emptied; `no_new_privs`; Landlock.
//! 2. (the caller warms the engine: it may read the cache as root-owned files)
//! 3. [`lock`]: becomes the unprivileged uid (every capability gone, in
//!    every thread) and installs a seccomp allow-list on every thread: the
//!    worker's ([`seccomp::AllowList::worker`]) or the caller's own (the
//!    VMM's, which allows KVM's ioctls and little else).
//!
//! The network namespace has only a loopback that is never brought up.
//!
//! A fork server (`ephemeral-worker`'s `fork_server`) does step 1 and 2
//! once, and each copy it makes does [`lock_copy`] in PID, user, IPC and
//! UTS namespaces of its own.

#![warn(missing_docs)]

mod credentials;
mod landlock_rules;
mod mounts;
mod rlimits;
pub mod seccomp;

use std::io;
use std::path::PathBuf;

pub use mounts::Bind;

/// The inner uid/gid the worker runs as once locked; the host maps it to a
/// host uid used by no other worker.
pub const WORKER_UID: u32 = 1000;
/// Where the host maps [`WORKER_UID`]: `HOST_UID_BASE + the worker's pid`.
pub const HOST_UID_BASE: u32 = 200_000;
/// Where a fork server's range of host uids begins: a fork server of
/// host pid P maps inner `WORKER_UID + k` to `FORK_UID_BASE + P *
/// FORK_SLOTS + k`, and its copy in slot k runs as that host uid alone.
/// (Above every `HOST_UID_BASE + pid`; the largest pid Linux allows,
/// 2^22, still ends below 2^32.)
pub const FORK_UID_BASE: u32 = 1_000_000_000;
/// Copies of one fork server alive at once, each with a host uid of its own.
pub const FORK_SLOTS: u32 = 512;
/// The worker's hostname.
pub const HOSTNAME: &str = "ephemeral-worker";

/// Why a step of [`enter`] or [`lock`] failed.
#[derive(Debug, thiserror::Error)]
pub enum JailError {
    /// A system call of one step failed.
    #[error("jail step {step}: {source}")]
    Step {
        /// The step, by name (`"sethostname"`, `"make mounts private"`, ...).
        step: &'static str,
        /// The call's errno.
        #[source]
        source: io::Error,
    },
    /// Building or installing the Landlock ruleset failed.
    #[error("landlock: {0}")]
    Landlock(String),
    /// Building or installing the seccomp filter failed.
    #[error("seccomp: {0}")]
    Seccomp(String),
}

impl JailError {
    pub(crate) fn step(step: &'static str) -> impl FnOnce(io::Error) -> JailError {
        move |source| JailError::Step { step, source }
    }
}

/// What the jail is made of.
#[derive(Debug, Clone)]
pub struct JailPlan {
    /// Size cap of the root tmpfs.
    pub tmpfs_bytes: u64,
    /// Host paths bound read-only into the new root.
    pub binds: Vec<Bind>,
    /// Open files at once.
    pub max_open_files: u64,
    /// Threads of the worker's host uid (there is only this worker).
    pub max_threads: u64,
}

/// What is left in place after [`enter`], reported by the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LandlockStatus {
    /// Every access right we handle is restricted.
    Enforced,
    /// The kernel's Landlock ABI is older: some rights are restricted.
    Partial,
    /// No Landlock on this kernel: nothing is restricted by it.
    Unavailable,
}

/// Steps 1 of the module docs. Must run before any other thread exists.
pub fn enter(plan: &JailPlan) -> Result<LandlockStatus, JailError> {
    mounts::unshare_cgroup()?;
    mounts::build_root(plan.tmpfs_bytes, &plan.binds)?;
    set_hostname()?;
    rlimits::apply(plan)?;
    credentials::drop_bounding_set()?;
    credentials::set_no_new_privs()?;
    landlock_rules::restrict_to_read_only()
}

/// Step 3: after this the process holds no privilege of any kind and can
/// make only the system calls of `allowed`.
pub fn lock(allowed: &seccomp::AllowList) -> Result<(), JailError> {
    credentials::become_unprivileged()?;
    allowed.install()
}

/// Step 1 for a fork server: as [`enter`], but keeping a descriptor of
/// the host's `/proc` and leaving Landlock to each copy ([`lock_copy`]).
/// Only a process in the parent user namespace of a copy's may write the
/// copy's uid and gid maps: the fork server is that process, and it can
/// reach `/proc/PID/uid_map` only through a descriptor opened before its
/// root was replaced — and write it only without a read-only Landlock.
/// A copy closes the descriptor before it runs anything.
pub fn enter_fork_server(plan: &JailPlan) -> Result<std::os::fd::OwnedFd, JailError> {
    let proc = std::fs::File::open("/proc").map_err(JailError::step("open /proc"))?;
    mounts::unshare_cgroup()?;
    mounts::build_root(plan.tmpfs_bytes, &plan.binds)?;
    set_hostname()?;
    rlimits::apply_but_threads(plan)?;
    credentials::drop_bounding_set()?;
    credentials::set_no_new_privs()?;
    Ok(proc.into())
}

/// Step 3 for a fork server's copy: its thread limit and Landlock (which
/// the server left to it), then the bounding set (the user namespace the
/// copy was made in gave it a whole one back), then as [`lock`]. The root,
/// mounts, other rlimits and `no_new_privs` it inherited from the server.
pub fn lock_copy(
    allowed: &seccomp::AllowList,
    max_threads: u64,
) -> Result<LandlockStatus, JailError> {
    rlimits::limit_threads(max_threads)?;
    let landlock = landlock_rules::restrict_to_read_only()?;
    credentials::drop_bounding_set()?;
    lock(allowed)?;
    Ok(landlock)
}

fn set_hostname() -> Result<(), JailError> {
    // SAFETY: the pointer and length describe a live byte string.
    let rc = unsafe { libc::sethostname(HOSTNAME.as_ptr().cast(), HOSTNAME.len()) };
    check(rc).map_err(JailError::step("sethostname"))
}

/// `-1` → the thread's errno.
pub(crate) fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Where a bind lands inside the jail.
pub fn inside(name: &str) -> PathBuf {
    PathBuf::from("/").join(name)
}
