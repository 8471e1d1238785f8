//! Making a worker process: `clone` straight into new user, mount, PID,
//! network, IPC and UTS namespaces (the worker is PID 1 of its own), the
//! uid/gid maps and the cgroup written by us while the child waits on a
//! pipe, then `execve` of the worker with an empty environment — no
//! credential of the server's can follow it in.
//!
//! The child between `clone` and `execve` runs only async-signal-safe
//! calls on memory prepared before the clone: the server is multi-threaded.
//! It shares the server's memory (`CLONE_VM`, as `posix_spawn` does):
//! copying the page tables of a server holding hundreds of sandboxes, and
//! the copy-on-write faults that followed in the server, were most of a
//! spawn. So the server keeps everything the child uses alive until the
//! child has called `execve` (a close-on-exec pipe tells it) or is reaped,
//! and the child runs with signals blocked and its handlers reset, so no
//! handler of the server's runs on the child's stack.

use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::Path;

use super::cgroup::Cgroup;
use super::process::WorkerProcess;
use crate::entry::STREAM_FD;
use crate::jail::{FORK_SLOTS, FORK_UID_BASE, HOST_UID_BASE, WORKER_UID};

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
    /// The signal mask to restore just before `execve`.
    mask: libc::sigset_t,
    program: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
}

const NAMESPACES: libc::c_int = libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS;

/// What the new process is to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A worker: PID 1 of a PID namespace of its own, its inner
    /// [`WORKER_UID`] a host uid of its own.
    Worker,
    /// A fork server (`fork_server.rs`): it stays in the host's PID
    /// namespace, because the copies it makes are made the server's
    /// children (`CLONE_PARENT`, which the init of a PID namespace may not
    /// use), each in PID and user namespaces of its own; it maps
    /// [`FORK_SLOTS`] host uids, one per copy alive.
    ForkServer,
}
/// The child's stack until `execve` replaces it.
const CHILD_STACK_BYTES: usize = 64 << 10;

/// Starts `program args…` jailed in fresh namespaces, inside `cgroup`.
pub fn spawn(
    program: &Path,
    args: &[String],
    cgroup: Cgroup,
    shape: Shape,
) -> Result<WorkerProcess, SpawnError> {
    let (host_end, worker_end) = UnixStream::pair().map_err(os("socketpair"))?;
    let (go_read, go_write) = pipe()?;
    // The child's copy of `exec_write` closes on its `execve` (or exit):
    // end-of-file on `exec_read` says it no longer uses our memory.
    let (exec_read, exec_write) = pipe()?;
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
    let mut plan = ChildPlan {
        go: go_read.as_raw_fd(),
        stream: worker_end.as_raw_fd(),
        null: null.as_raw_fd(),
        // SAFETY: an all-zero sigset_t is a valid (empty) set; filled below.
        mask: unsafe { std::mem::zeroed() },
        program: program_c.as_ptr(),
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
    };
    let mut stack = vec![0u8; CHILD_STACK_BYTES];
    // The stack grows down; x86-64 wants 16-byte alignment.
    let top = (stack.as_mut_ptr() as usize + CHILD_STACK_BYTES) & !15;
    let blocked = SignalsBlocked::now();
    plan.mask = blocked.old;
    // SAFETY: the child runs `child_main` in our memory (CLONE_VM) on
    // `stack`, using only `plan`, `argv_c`, `argv`, `envp` and
    // `program_c`, and only async-signal-safe calls, until `execve`. All of
    // them outlive the child's use: this function returns only after
    // `exec_read` reads end-of-file (the child exec'd or died) or after the
    // child was killed and reaped (`process` drops before them).
    let pid = unsafe {
        libc::clone(
            child_main,
            top as *mut libc::c_void,
            namespaces(shape) | libc::CLONE_VM | libc::SIGCHLD,
            (&plan as *const ChildPlan).cast_mut().cast(),
        )
    };
    let clone_error = std::io::Error::last_os_error();
    drop(blocked);
    if pid == -1 {
        return Err(os("clone into new namespaces")(clone_error));
    }
    drop((go_read, worker_end, null, exec_write));
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
    write_id_maps(pid, shape).map_err(os("write the uid/gid maps"))?;
    let mut go = std::fs::File::from(go_write);
    go.write_all(b"g").map_err(os("release the child"))?;
    wait_for_exec(exec_read).map_err(os("wait for the worker's exec"))?;
    drop(stack);
    Ok(process)
}

fn namespaces(shape: Shape) -> libc::c_int {
    match shape {
        Shape::Worker => NAMESPACES | libc::CLONE_NEWPID,
        Shape::ForkServer => NAMESPACES,
    }
}

/// Inner 0 is the host's root only while the worker builds its jail; the
/// worker then switches for good to its own unprivileged host uid (a fork
/// server's copies, each to one of the server's range).
fn write_id_maps(pid: libc::pid_t, shape: Shape) -> std::io::Result<()> {
    let map = match shape {
        Shape::Worker => format!("0 0 1\n{WORKER_UID} {} 1\n", HOST_UID_BASE + pid as u32),
        Shape::ForkServer => format!("0 0 1\n{WORKER_UID} {} {FORK_SLOTS}\n", fork_uid_base(pid)),
    };
    std::fs::write(format!("/proc/{pid}/uid_map"), &map)?;
    std::fs::write(format!("/proc/{pid}/gid_map"), &map)
}

/// The first host uid of the fork server `pid`'s range.
pub(crate) fn fork_uid_base(pid: libc::pid_t) -> u32 {
    FORK_UID_BASE + pid as u32 * FORK_SLOTS
}

/// Returns once the child no longer runs in our memory: its end of the
/// pipe closed on `execve` (or its exit).
fn wait_for_exec(exec_read: OwnedFd) -> std::io::Result<()> {
    let mut pipe = std::fs::File::from(exec_read);
    let mut rest = Vec::new();
    std::io::Read::read_to_end(&mut pipe, &mut rest)?;
    Ok(())
}

/// Every signal blocked in this thread until dropped, so none arrives in
/// the child before it resets its handlers: they are the server's, and
/// its memory is the server's. `old` is the mask to go back to.
struct SignalsBlocked {
    old: libc::sigset_t,
}

impl SignalsBlocked {
    fn now() -> SignalsBlocked {
        // SAFETY: `all` and `old` are valid sigset_t for these calls (an
        // all-zero sigset_t is an empty set).
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
            SignalsBlocked { old }
        }
    }
}

impl Drop for SignalsBlocked {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved by `now`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
    }
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
        // The server's handlers would run on our stack in its memory:
        // back to the defaults (ignored signals stay ignored, as across a
        // fork and exec).
        // (32 and 33 are glibc's own: asking about them fails, and a failure
        // would write errno, which is the server's thread's.)
        for signal in (1..32).chain(libc::SIGRTMIN()..=libc::SIGRTMAX()) {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction != libc::SIG_DFL
                && old.sa_sigaction != libc::SIG_IGN
            {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &default, std::ptr::null_mut());
            }
        }
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
        libc::pthread_sigmask(libc::SIG_SETMASK, &plan.mask, std::ptr::null_mut());
        libc::execve(plan.program, plan.argv, plan.envp);
        libc::_exit(127)
    }
}
