//! Capabilities and identity: the bounding set emptied while still root (so
//! no later `execve` could regain anything), `no_new_privs`, and finally the
//! switch to the unprivileged uid, which clears every capability.

use super::{JailError, WORKER_UID, check};

pub(super) fn drop_bounding_set() -> Result<(), JailError> {
    for cap in 0..=last_cap() {
        // SAFETY: prctl with integer arguments only.
        let rc = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        check(rc).map_err(JailError::step("drop the capability bounding set"))?;
    }
    // SAFETY: as above.
    let rc = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    check(rc).map_err(JailError::step("clear ambient capabilities"))
}

fn last_cap() -> libc::c_ulong {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(40)
}

pub(super) fn set_no_new_privs() -> Result<(), JailError> {
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    check(rc).map_err(JailError::step("no_new_privs"))
}

/// Drops to [`WORKER_UID`] in every thread: glibc's `setres[ug]id` and
/// `setgroups` signal each thread to make the same call, so the engine's
/// threads lose their capabilities too.
pub(super) fn become_unprivileged() -> Result<(), JailError> {
    // SAFETY: plain libc calls with integer arguments or a null list.
    unsafe {
        check(libc::setgroups(0, std::ptr::null())).map_err(JailError::step("setgroups"))?;
        check(libc::setresgid(WORKER_UID, WORKER_UID, WORKER_UID))
            .map_err(JailError::step("setresgid"))?;
        check(libc::setresuid(WORKER_UID, WORKER_UID, WORKER_UID))
            .map_err(JailError::step("setresuid"))?;
    }
    // The uid change cleared the parent-death signal the host set: re-arm
    // it, so a worker never outlives the server that made it.
    // SAFETY: prctl with integer arguments only.
    let rc = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
    check(rc).map_err(JailError::step("parent-death signal"))?;
    if effective_capabilities()? != 0 {
        return Err(JailError::Step {
            step: "drop capabilities",
            source: std::io::Error::other("capabilities left after the uid change"),
        });
    }
    Ok(())
}

/// The calling thread's effective capability set (both 32-bit words).
pub(crate) fn effective_capabilities() -> Result<u64, JailError> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Default, Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522;
    let mut header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let mut data = [Data::default(); 2];
    // SAFETY: capget writes two `Data` records for version 3, which `data` holds.
    let rc = unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) };
    check(rc as libc::c_int).map_err(JailError::step("capget"))?;
    Ok(u64::from(data[0].effective) | (u64::from(data[1].effective) << 32))
}
