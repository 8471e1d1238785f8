//! Making a worker process: `clone` straight into new user, mount, PID,
//! network, IPC and UTS namespaces (the worker is PID 1 of its own), the
//! uid/gid maps and the cgroup written by us while the child waits on a
//! pipe, then `execve` of the worker with an empty environment — no
//! credential of the server's can follow it in.
//!
//! The child between `clone` and `execve` runs only async-signal-safe
//! calls on memory prepared before the clone: the server is multi-threaded.

use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::Path;

use super::cgroup::Cgroup;
use super::process::WorkerProcess;
use crate::entry::STREAM_FD;
use crate::jail::{HOST_UID_BASE, WORKER_UID};

/// Why a worker process could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// A system call of one step failed.
    #[error("cannot start a worker: {step}: {source}")]
    Os {
        /// The step, by name (`"create the cgroup"`, ...).
        step: &'static str,
        /// The call's error.
        #[source]
        source: std::io::Error,
    },
    /// The request cannot be made into a process (a NUL in an argument).
    #[error("cannot start a worker: {0}")]
    Invalid(String),
}

fn os(step: &'static str) -> impl FnOnce(std::io::Error) -> SpawnError {
    move |source| SpawnError::Os { step, source }
}

/// Everything the child touches, laid out before the clone.
struct ChildPlan {
    go: libc::c_int,
    stream: libc::c_int,
    null: libc::c_int,
    program: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
}

const NAMESPACES: libc::c_int = libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS;
/// The child's stack until `execve` replaces it.
const CHILD_STACK_BYTES: usize = 64 << 10;

/// Starts `program args…` jailed in fresh namespaces, inside `cgroup`.
pub fn spawn(program: &Path, args: &[String], cgroup: Cgroup) -> Result<WorkerProcess, SpawnError> {
    let (host_end, worker_end) = UnixStream::pair().map_err(os("socketpair"))?;
    let (go_read, go_write) = pipe()?;
    let null = std::fs::File::open("/dev/null").map_err(os("open /dev/null"))?;
    let c =
        |b: &[u8]| CString::new(b).map_err(|_| SpawnError::Invalid("NUL in an argument".into()));
    let program_c = c(program.as_os_str().as_bytes())?;
    let mut argv_c = vec![program_c.clone()];
    for a in args {
        argv_c.push(c(a.as_bytes())?);
    }
    let mut argv: Vec<*const libc::c_char> = argv_c.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let envp: [*const libc::c_char; 1] = [std::ptr::null()];
    let plan = ChildPlan {
        go: go_read.as_raw_fd(),
        stream: worker_end.as_raw_fd(),
        null: null.as_raw_fd(),
        program: program_c.as_ptr(),
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
    };
    let mut stack = vec![0u8; CHILD_STACK_BYTES];
    // The stack grows down; x86-64 wants 16-byte alignment.
    let top = (stack.as_mut_ptr() as usize + CHILD_STACK_BYTES) & !15;
    // SAFETY: the child runs `child_main` on its own copy of our memory
    // (no CLONE_VM), using only `plan`, which lives until after the clone,
    // and only async-signal-safe calls before `execve`.
    let pid = unsafe {
        libc::clone(
            child_main,
            top as *mut libc::c_void,
            NAMESPACES | libc::SIGCHLD,
            (&plan as *const ChildPlan).cast_mut().cast(),
        )
    };
    if pid == -1 {
        return Err(os("clone into new namespaces")(
            std::io::Error::last_os_error(),
        ));
    }
    drop((go_read, worker_end, null));
    // From here the child exists: on any failure it is killed and reaped.
    let process = WorkerProcess::new(pid, host_end, cgroup);
    let process = match process {
        Ok(p) => p,
        Err(e) => {
            kill_and_reap(pid);
            return Err(os("pidfd_open")(e));
        }
    };
    process.cgroup.add(pid).map_err(os("join the cgroup"))?;
    write_id_maps(pid).map_err(os("write the uid/gid maps"))?;
    let mut go = std::fs::File::from(go_write);
    go.write_all(b"g").map_err(os("release the child"))?;
    Ok(process)
}

/// Inner 0 is the host's root only while the worker builds its jail; the
/// worker then switches for good to its own unprivileged host uid.
fn write_id_maps(pid: libc::pid_t) -> std::io::Result<()> {
    let own = HOST_UID_BASE + pid as u32;
    let map = format!("0 0 1\n{WORKER_UID} {own} 1\n");
    std::fs::write(format!("/proc/{pid}/uid_map"), &map)?;
    std::fs::write(format!("/proc/{pid}/gid_map"), &map)
}

fn pipe() -> Result<(OwnedFd, OwnedFd), SpawnError> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
        return Err(os("pipe")(std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors are new and ours alone.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

pub(super) fn kill_and_reap(pid: libc::pid_t) {
    // SAFETY: signalling and reaping our own child.
    unsafe {
        libc::kill(pid, libc::SIGKILL);
        libc::waitpid(pid, std::ptr::null_mut(), 0);
    }
}

extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` points at the parent's `ChildPlan`, copied into our
    // address space by clone and never freed here. Only raw syscalls follow.
    unsafe {
        let plan = &*(arg as *const ChildPlan);
        // Dies with the server even if it is killed with SIGKILL (the
        // worker re-arms this after its uid change, which clears it).
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        let mut byte = 0u8;
        // Wait until our maps and cgroup are written (EOF: the parent gave up).
        if libc::read(plan.go, (&mut byte as *mut u8).cast(), 1) != 1 {
            libc::_exit(126);
        }
        libc::dup2(plan.null, 0);
        libc::dup2(plan.null, 1);
        if plan.stream == STREAM_FD {
            libc::fcntl(STREAM_FD, libc::F_SETFD, 0);
        } else if libc::dup2(plan.stream, STREAM_FD) == -1 {
            libc::_exit(125);
        }
        libc::execve(plan.program, plan.argv, plan.envp);
        libc::_exit(127)
    }
}
