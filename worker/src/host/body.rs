//! What runs a worker's loop: a jailed process (`jail+wasm`, or a
//! microVM's VMM for `kvm+wasm`), or, for isolation `wasm`, a thread of
//! this process serving the very same loop (`guest::serve`) over a socket
//! pair. Either way the host drives it with the same handle, so every
//! isolation has one exec loop; only how the body ends, is killed and is
//! described differs.

use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;

use ephemeral_runtime::Runtime;

use super::process::{Exit, WorkerProcess};

/// A worker's body.
#[derive(Debug)]
pub(crate) enum Body {
    Process(WorkerProcess),
    Thread(WorkerThread),
}

/// A worker on a thread of this process.
#[derive(Debug)]
pub(crate) struct WorkerThread {
    /// Readable (at end of file) once the thread has ended: the thread
    /// holds the pipe's other end.
    exited: OwnedFd,
}

impl WorkerThread {
    /// Starts the worker loop on a thread of its own; the host's end of its
    /// stream.
    pub(crate) fn start(
        runtime: Arc<Runtime>,
    ) -> std::io::Result<(WorkerThread, std::os::unix::net::UnixStream)> {
        let (host, worker) = std::os::unix::net::UnixStream::pair()?;
        let (exited, alive) = std::io::pipe()?;
        let reader = worker.try_clone()?;
        std::thread::Builder::new()
            .name("sandbox".into())
            .spawn(move || {
                let _alive = alive;
                if let Err(e) = crate::guest::serve(runtime, reader, worker, false) {
                    tracing::debug!(error = %e, "in-process worker ended");
                }
            })?;
        Ok((
            WorkerThread {
                exited: exited.into(),
            },
            host,
        ))
    }

    fn has_ended(&self) -> bool {
        use std::os::fd::AsRawFd;
        let mut fd = libc::pollfd {
            fd: self.exited.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd, no waiting.
        let ready = unsafe { libc::poll(&mut fd, 1, 0) };
        ready > 0
    }
}

impl Body {
    /// The worker's process id on the host; `None` for a thread.
    pub(crate) fn pid(&self) -> Option<u32> {
        match self {
            Body::Process(p) => Some(p.pid()),
            Body::Thread(_) => None,
        }
    }

    pub(crate) fn cgroup_paths(&self) -> Vec<PathBuf> {
        match self {
            Body::Process(p) => p.cgroup().paths().to_vec(),
            Body::Thread(_) => Vec::new(),
        }
    }

    /// A descriptor that becomes readable when the body has ended.
    pub(crate) fn exit_fd(&self) -> std::io::Result<OwnedFd> {
        match self {
            Body::Process(p) => p.pidfd.try_clone(),
            Body::Thread(t) => t.exited.try_clone(),
        }
    }

    /// Sets the memory cap of the body's cgroup (a thread has none: its
    /// sandbox's own memory limit is the only one).
    pub(crate) fn set_memory(&self, bytes: u64) -> std::io::Result<()> {
        match self {
            Body::Process(p) => p.cgroup.set_memory(bytes),
            Body::Thread(_) => Ok(()),
        }
    }

    /// Ends a process at once; a thread cannot be killed: it ends when its
    /// stream closes, after its command, which its own limits bound.
    pub(crate) fn kill(&self) {
        if let Body::Process(p) = self {
            p.kill();
        }
    }

    /// How the body ended, if it has (never blocks).
    pub(crate) fn try_reap(&mut self) -> Option<Exit> {
        match self {
            Body::Process(p) => p.try_reap(),
            Body::Thread(t) => t.has_ended().then_some(Exit::Code(0)),
        }
    }

    /// Kills and reaps a process; a thread is left to end by itself.
    pub(crate) fn kill_and_reap(&mut self) -> Exit {
        match self {
            Body::Process(p) => p.kill_and_reap(),
            Body::Thread(_) => Exit::Code(0),
        }
    }

    /// Why the body ended, in words for a run's error.
    pub(crate) fn describe(&self, exit: Exit) -> (&'static str, String) {
        match self {
            Body::Process(p) => p.describe(exit),
            Body::Thread(_) => (
                "worker_crashed",
                "the in-process sandbox's thread ended".into(),
            ),
        }
    }
}
