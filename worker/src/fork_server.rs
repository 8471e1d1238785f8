//! The fork server: a worker jailed once and warmed once (engine, shell,
//! programs' trees) that, instead of serving a run, makes copies of
//! itself when the host asks. A copy shares the server's memory
//! copy-on-write, so it starts with the engine and the compiled
//! components already mapped: no `execve`, no jail to build, no engine
//! to make. What the copy must not share, it gets fresh:
//! - PID, user, IPC and UTS namespaces of its own (it is PID 1 of its own
//!   and sees no sibling), made by the same `clone` (the mount and network
//!   namespaces are the server's: see `COPY_NAMESPACES`);
//! - a host uid of its own: the host maps the copy's user namespace onto
//!   the server's slot it chose (`jail::FORK_SLOTS`), so no two copies
//!   alive share an identity;
//! - its own cgroup, which the host moves it into before it runs anything;
//! - randomness: every draw a sandbox makes asks the kernel
//!   (`ephemeral_runtime`'s `entropy.rs`), so copies share no generator
//!   state — `worker/tests/forked_workers.rs` checks it.
//!
//! `CLONE_PARENT` makes each copy a child of the host server rather than
//! of this process: the host reaps it and reads how it ended exactly as
//! for a worker it spawned itself (this is why a fork server is not the
//! init of a PID namespace: the init of one may not use `CLONE_PARENT`).
//!
//! The server has no thread but the one forking (`Runtime::new_for_forking`
//! leaves none, and the server checks it before it says `Ready`), so a copy
//! inherits no lock held by a thread it does not have; each copy starts
//! its own (the epoch's, wasi's I/O runtime) before it locks itself.
//!
//! The control stream: the host writes a slot (u32, little-endian); the
//! server answers `F` + the copy's pid on the host (i32 LE) with two
//! descriptors — the copy's pidfd and the host's end of the copy's own
//! stream — or `E` and four zero bytes, then an `Error` frame. Before its first frame
//! the copy waits for one byte on its stream: the host's word that its
//! uid maps and cgroup are in place.

use std::io::{IoSlice, Read};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::Arc;

use ephemeral_runtime::Runtime;
use nix::sys::socket::{ControlMessage, MsgFlags, sendmsg};

use crate::channel::write_frame;
use crate::entry::{WorkerArgs, WorkerError};
use crate::jail::{self, WORKER_UID, seccomp::AllowList};
use crate::protocol::{FromWorker, VERSION};

/// Namespaces each copy gets of its own. Its mount namespace is the
/// server's: a read-only root no copy can change or write. So is its
/// network namespace (a loopback never brought up, no other interface):
/// the one thing copies could meet on there, an abstract unix socket,
/// takes `bind`, `listen` or `connect`, which no locked worker may call;
/// a namespace each would cost a quarter of the runs a second (its
/// teardown is the kernel's slowest).
const COPY_NAMESPACES: libc::c_ulong = (libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS
    | libc::CLONE_PARENT
    | libc::CLONE_PIDFD) as libc::c_ulong;

/// The reply tags.
pub(crate) const FORKED: u8 = b'F';
pub(crate) const FAILED: u8 = b'E';
/// The byte the host writes on a copy's stream once it may run.
pub(crate) const GO: u8 = b'g';

/// The fork server's life: jail and warm as a worker does, say `Ready`,
/// then make a copy for every slot the host sends until the control
/// stream ends.
pub(crate) fn run(args: &WorkerArgs, control: UnixStream) -> Result<(), WorkerError> {
    let warmed = warm(args);
    let (server, runtime) = match warmed {
        Ok(w) => w,
        Err(e) => {
            let _ = write_frame(
                &mut &control,
                &FromWorker::Error {
                    message: e.to_string(),
                },
            );
            return Err(e);
        }
    };
    write_frame(
        &mut &control,
        &FromWorker::Ready {
            version: VERSION,
            pid: std::process::id(),
        },
    )?;
    loop {
        let mut request = [0u8; 4];
        match (&control).read_exact(&mut request) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e.into()),
        }
        let slot = u32::from_le_bytes(request);
        fork_one(&server, &runtime, &control, slot)?;
    }
}

/// What a copy is made from.
struct Server {
    /// The host's `/proc` (see `jail::enter_fork_server`).
    proc: OwnedFd,
    allowed: AllowList,
    /// Each copy's thread limit (the server's own is unlimited).
    max_threads: u64,
}

fn warm(args: &WorkerArgs) -> Result<(Server, Arc<Runtime>), WorkerError> {
    let plan = args
        .jail
        .as_ref()
        .ok_or_else(|| std::io::Error::other("a fork server is always jailed"))?;
    let proc = jail::enter_fork_server(plan)?;
    let runtime = Runtime::new_for_forking(crate::entry::runtime_config(args))?;
    let allowed = AllowList::worker()?;
    let threads = threads(&proc)?;
    if threads != 1 {
        return Err(std::io::Error::other(format!(
            "a fork server must have one thread when it forks; it has {threads}"
        ))
        .into());
    }
    let max_threads = plan.max_threads;
    Ok((
        Server {
            proc,
            allowed,
            max_threads,
        },
        runtime,
    ))
}

/// This process's threads, from the host's `/proc`.
fn threads(proc: &OwnedFd) -> std::io::Result<usize> {
    let path = format!("{}/status", std::process::id());
    let mut file = open_in_proc(proc, &path, libc::O_RDONLY)?;
    let mut status = String::new();
    file.read_to_string(&mut status)?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| std::io::Error::other("no thread count in /proc"))
}

/// Makes one copy in uid `slot`, maps its user namespace, and hands the
/// host its pid, pidfd and stream.
fn fork_one(
    server: &Server,
    runtime: &Arc<Runtime>,
    control: &UnixStream,
    slot: u32,
) -> Result<(), WorkerError> {
    let (host_end, copy_end) = UnixStream::pair()?;
    let mut pidfd: libc::c_int = -1;
    // SAFETY: a fork-like clone (no new stack: the child continues here on
    // its copy of ours); this process has no other thread (see the module
    // docs), so the copy inherits no lock held elsewhere.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            COPY_NAMESPACES,
            0usize,
            &mut pidfd as *mut libc::c_int,
            0usize,
            0usize,
        )
    };
    if pid == 0 {
        drop(host_end);
        // SAFETY: the control stream and `/proc` are the server's, not the
        // copy's; closed before the copy runs anything.
        unsafe {
            libc::close(control.as_raw_fd());
            libc::close(server.proc.as_raw_fd());
        }
        become_copy(runtime, copy_end, server);
    }
    drop(copy_end);
    let made = if pid < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        map_ids(&server.proc, pid as libc::pid_t, slot)
    };
    // SAFETY: clone wrote a new descriptor, ours alone (only if it made one).
    let pidfd = (pid > 0).then(|| unsafe { <OwnedFd as FromRawFd>::from_raw_fd(pidfd) });
    let mut reply = [FORKED, 0, 0, 0, 0];
    reply[1..].copy_from_slice(&(pid.max(0) as i32).to_le_bytes());
    if let Err(why) = made {
        // A copy that cannot be mapped never runs: killed here, reaped by
        // the host (its parent), told of it with the pidfd.
        reply[0] = FAILED;
        if let Some(pidfd) = &pidfd {
            // SAFETY: pidfd_send_signal on the pidfd clone just gave us.
            unsafe {
                libc::syscall(
                    libc::SYS_pidfd_send_signal,
                    pidfd.as_raw_fd(),
                    libc::SIGKILL,
                    0,
                    0,
                )
            };
        }
        let fds: Vec<RawFd> = pidfd.iter().map(|p| p.as_raw_fd()).collect();
        send(control, &reply, &fds)?;
        write_frame(
            &mut &*control,
            &FromWorker::Error {
                message: format!("cannot fork a worker: {why}"),
            },
        )?;
        return Ok(());
    }
    let pidfd = pidfd.ok_or_else(|| std::io::Error::other("clone gave no pidfd"))?;
    send(control, &reply, &[pidfd.as_raw_fd(), host_end.as_raw_fd()])
}

fn send(control: &UnixStream, reply: &[u8], fds: &[RawFd]) -> Result<(), WorkerError> {
    let rights = [ControlMessage::ScmRights(fds)];
    let cmsgs: &[ControlMessage] = if fds.is_empty() { &[] } else { &rights };
    sendmsg::<()>(
        control.as_raw_fd(),
        &[IoSlice::new(reply)],
        cmsgs,
        MsgFlags::empty(),
        None,
    )
    .map_err(std::io::Error::from)?;
    Ok(())
}

/// Maps the copy's user namespace: its inner 0 is the server's (the
/// host's root, until the copy drops it), its worker uid the slot's alone.
fn map_ids(proc: &OwnedFd, pid: libc::pid_t, slot: u32) -> std::io::Result<()> {
    let map = format!("0 0 1\n{WORKER_UID} {} 1\n", WORKER_UID + slot);
    for file in ["uid_map", "gid_map"] {
        let mut file = open_in_proc(proc, &format!("{pid}/{file}"), libc::O_WRONLY)?;
        std::io::Write::write_all(&mut file, map.as_bytes())?;
    }
    Ok(())
}

/// `path` under the host's `/proc`, through the descriptor the server kept.
fn open_in_proc(proc: &OwnedFd, path: &str, flags: libc::c_int) -> std::io::Result<std::fs::File> {
    let path =
        std::ffi::CString::new(path).map_err(|_| std::io::Error::other("a NUL in a path"))?;
    // SAFETY: openat on a descriptor we hold, with a NUL-terminated path.
    let fd = unsafe { libc::openat(proc.as_raw_fd(), path.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a new descriptor, ours alone.
    Ok(std::fs::File::from(unsafe {
        <OwnedFd as FromRawFd>::from_raw_fd(fd)
    }))
}

/// The copy's life: wait for the host's word, lock, serve one run, exit.
fn become_copy(runtime: &Arc<Runtime>, stream: UnixStream, server: &Server) -> ! {
    let code = match serve_copy(runtime, &stream, server) {
        Ok(()) => 0,
        Err(e) => {
            let _ = write_frame(
                &mut &stream,
                &FromWorker::Error {
                    message: e.to_string(),
                },
            );
            1
        }
    };
    // SAFETY: ends this process without running the server's exit hooks.
    unsafe { libc::_exit(code) }
}

fn serve_copy(
    runtime: &Arc<Runtime>,
    stream: &UnixStream,
    server: &Server,
) -> Result<(), WorkerError> {
    let mut go = [0u8; 1];
    (&*stream).read_exact(&mut go)?;
    if go[0] != GO {
        return Err(std::io::Error::other("the host did not release the copy").into());
    }
    runtime.after_fork();
    let landlock = jail::lock_copy(&server.allowed, server.max_threads)?;
    tracing::debug!(?landlock, "copy locked");
    crate::guest::serve(
        runtime.clone(),
        stream.try_clone()?,
        stream.try_clone()?,
        false,
    )?;
    Ok(())
}
