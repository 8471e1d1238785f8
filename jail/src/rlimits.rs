//! Per-process resource limits, under the cgroup's caps: no core dumps, no
//! locked memory, no message queues, bounded files and threads. File size
//! is left alone: the engine writes each program's memory image into a
//! memfd (charged to the cgroup), and the root is read-only anyway.

use super::{JailError, JailPlan, check};

pub(super) fn apply(plan: &JailPlan) -> Result<(), JailError> {
    apply_but_threads(plan)?;
    limit_threads(plan.max_threads)
}

/// All but the thread limit: a fork server keeps its threads unlimited,
/// because the user namespace each copy is made in takes the creator's
/// limit as the cap of *all* its copies' threads together (the kernel
/// charges them to the one uid that owns those namespaces); each copy
/// sets its own limit with [`limit_threads`] after the fork.
pub(super) fn apply_but_threads(plan: &JailPlan) -> Result<(), JailError> {
    let limits = [
        (libc::RLIMIT_CORE, 0),
        (libc::RLIMIT_MEMLOCK, 0),
        (libc::RLIMIT_MSGQUEUE, 0),
        (libc::RLIMIT_NOFILE, plan.max_open_files),
    ];
    set(&limits)
}

/// Threads of this process's uid.
pub(super) fn limit_threads(max_threads: u64) -> Result<(), JailError> {
    set(&[(libc::RLIMIT_NPROC, max_threads)])
}

/// `setrlimit`'s resource type: glibc's enum, musl's int.
#[cfg(target_env = "musl")]
type Resource = libc::c_int;
#[cfg(not(target_env = "musl"))]
type Resource = libc::__rlimit_resource_t;

fn set(limits: &[(Resource, u64)]) -> Result<(), JailError> {
    for &(resource, value) in limits {
        let limit = libc::rlimit {
            rlim_cur: value,
            rlim_max: value,
        };
        // SAFETY: `limit` is a valid rlimit for the duration of the call.
        let rc = unsafe { libc::setrlimit(resource, &limit) };
        check(rc).map_err(JailError::step("setrlimit"))?;
    }
    Ok(())
}
