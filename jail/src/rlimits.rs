//! Per-process resource limits, under the cgroup's caps: no core dumps, no
//! locked memory, no message queues, bounded files and threads. File size
//! is left alone: the engine writes each program's memory image into a
//! memfd (charged to the cgroup), and the root is read-only anyway.

use super::{JailError, JailPlan, check};

pub(super) fn apply(plan: &JailPlan) -> Result<(), JailError> {
    let limits = [
        (libc::RLIMIT_CORE, 0),
        (libc::RLIMIT_MEMLOCK, 0),
        (libc::RLIMIT_MSGQUEUE, 0),
        (libc::RLIMIT_NOFILE, plan.max_open_files),
        (libc::RLIMIT_NPROC, plan.max_threads),
    ];
    for (resource, value) in limits {
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
