//! The worker's filesystem: a fresh tmpfs root, capped in size, holding
//! read-only binds of the few host paths it needs and nothing else. The
//! host's tree is detached, so no path leads back to it.
//!
//! Binds are cloned with `open_tree` before the tmpfs goes up, so a source
//! anywhere on the host (even under the staging folder) works.

use std::ffi::CString;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::{JailError, check};

/// A host path (folder or file) shown read-only at `/NAME` in the jail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bind {
    /// The host path.
    pub source: PathBuf,
    /// Where it shows: `/NAME` in the jail.
    pub name: String,
}

/// Where the new root is assembled: any folder works, since the mount
/// namespace is the worker's own; `/tmp` exists everywhere.
const STAGING: &str = "/tmp";
const OLD_ROOT: &str = "old-root";

pub(super) fn unshare_cgroup() -> Result<(), JailError> {
    // SAFETY: unshare with a flag constant.
    check(unsafe { libc::unshare(libc::CLONE_NEWCGROUP) })
        .map_err(JailError::step("cgroup namespace"))
}

pub(super) fn build_root(tmpfs_bytes: u64, binds: &[Bind]) -> Result<(), JailError> {
    mount(None, "/", None, libc::MS_REC | libc::MS_PRIVATE, None)
        .map_err(JailError::step("make mounts private"))?;
    let trees = binds
        .iter()
        .map(|b| clone_tree(&b.source).map(|fd| (b, b.source.is_dir(), fd)))
        .collect::<Result<Vec<_>, _>>()?;
    let options = format!("size={tmpfs_bytes},nr_inodes=64,mode=0755");
    mount(
        Some("ephemeral"),
        STAGING,
        Some("tmpfs"),
        libc::MS_NOSUID | libc::MS_NODEV,
        Some(&options),
    )
    .map_err(JailError::step("mount the root tmpfs"))?;
    for (bind, is_dir, tree) in trees {
        attach_read_only(bind, is_dir, tree)?;
    }
    pivot()?;
    mount(
        None,
        "/",
        None,
        libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
        None,
    )
    .map_err(JailError::step("make the root read-only"))
}

/// A detached copy of the mount at `source`.
fn clone_tree(source: &Path) -> Result<OwnedFd, JailError> {
    let path = cstring(source.as_os_str().as_bytes())?;
    // SAFETY: open_tree takes a NUL-terminated path and flag constants.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(JailError::Step {
            step: "open_tree",
            source: std::io::Error::other(format!(
                "{}: {}",
                source.display(),
                std::io::Error::last_os_error()
            )),
        });
    }
    // SAFETY: the kernel just returned this descriptor to us alone.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

fn attach_read_only(bind: &Bind, is_dir: bool, tree: OwnedFd) -> Result<(), JailError> {
    use std::os::fd::AsRawFd;
    let target = Path::new(STAGING).join(&bind.name);
    let made = if is_dir {
        std::fs::create_dir_all(&target)
    } else {
        std::fs::write(&target, b"")
    };
    made.map_err(JailError::step("make a bind target"))?;
    let target_c = cstring(target.as_os_str().as_bytes())?;
    let empty = cstring(b"")?;
    // SAFETY: a descriptor we own, NUL-terminated paths, flag constants.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            empty.as_ptr(),
            libc::AT_FDCWD,
            target_c.as_ptr(),
            libc::MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    check(rc as libc::c_int).map_err(JailError::step("move_mount"))?;
    let target = target.to_string_lossy().into_owned();
    mount(
        None,
        &target,
        None,
        libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
        None,
    )
    .map_err(JailError::step("make a bind read-only"))
}

fn pivot() -> Result<(), JailError> {
    let old = Path::new(STAGING).join(OLD_ROOT);
    std::fs::create_dir(&old).map_err(JailError::step("make the old-root folder"))?;
    let new_root = cstring(STAGING.as_bytes())?;
    let put_old = cstring(old.as_os_str().as_bytes())?;
    // SAFETY: NUL-terminated paths.
    let rc = unsafe { libc::syscall(libc::SYS_pivot_root, new_root.as_ptr(), put_old.as_ptr()) };
    check(rc as libc::c_int).map_err(JailError::step("pivot_root"))?;
    std::env::set_current_dir("/").map_err(JailError::step("chdir /"))?;
    let old_inside = cstring(format!("/{OLD_ROOT}").as_bytes())?;
    // SAFETY: a NUL-terminated path and a flag constant.
    check(unsafe { libc::umount2(old_inside.as_ptr(), libc::MNT_DETACH) })
        .map_err(JailError::step("detach the host's tree"))?;
    std::fs::remove_dir(format!("/{OLD_ROOT}")).map_err(JailError::step("remove old-root"))
}

fn mount(
    source: Option<&str>,
    target: &str,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> std::io::Result<()> {
    let c = |s: &str| CString::new(s).map_err(std::io::Error::other);
    let source = source.map(c).transpose()?;
    let target = c(target)?;
    let fstype = fstype.map(c).transpose()?;
    let data = data.map(c).transpose()?;
    let ptr = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: every pointer is null or a NUL-terminated string that
    // outlives the call.
    let rc = unsafe {
        libc::mount(
            ptr(&source),
            target.as_ptr(),
            ptr(&fstype),
            flags,
            ptr(&data).cast(),
        )
    };
    check(rc)
}

fn cstring(bytes: &[u8]) -> Result<CString, JailError> {
    CString::new(bytes).map_err(|_| JailError::Step {
        step: "path",
        source: std::io::Error::other("a path holds a NUL byte"),
    })
}
