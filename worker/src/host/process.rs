//! One worker process as the host holds it: its pid and pidfd (so a
//! signal never reaches a recycled pid), its end of the stream and its
//! cgroup. Dropping it kills and reaps the process and removes the cgroup:
//! nothing of a worker outlives its handle.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

use super::cgroup::Cgroup;

/// A worker process, killed and reaped (its cgroup removed) when dropped.
#[derive(Debug)]
pub struct WorkerProcess {
    pub(crate) pid: libc::pid_t,
    pub(crate) pidfd: OwnedFd,
    pub(crate) stream: Option<UnixStream>,
    pub(crate) cgroup: Cgroup,
    /// The wait status, once reaped.
    status: Option<libc::c_int>,
    /// A fork server's copy holds its uid slot until it is reaped.
    pub(crate) slot: Option<super::fork_server::SlotLease>,
}

/// How a worker process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
}

impl WorkerProcess {
    pub(crate) fn new(
        pid: libc::pid_t,
        stream: UnixStream,
        cgroup: Cgroup,
    ) -> std::io::Result<WorkerProcess> {
        // SAFETY: pidfd_open with our child's pid and no flags.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a new descriptor, ours alone.
        let pidfd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        Ok(WorkerProcess::adopt(pid, pidfd, stream, cgroup))
    }

    /// A child of ours whose pidfd we already hold (a fork server's copy).
    pub(crate) fn adopt(
        pid: libc::pid_t,
        pidfd: OwnedFd,
        stream: UnixStream,
        cgroup: Cgroup,
    ) -> WorkerProcess {
        WorkerProcess {
            pid,
            pidfd,
            stream: Some(stream),
            cgroup,
            status: None,
            slot: None,
        }
    }

    /// The worker's pid on the host.
    pub fn pid(&self) -> u32 {
        self.pid as u32
    }

    /// The cgroup it runs in: its caps and what they counted.
    pub fn cgroup(&self) -> &Cgroup {
        &self.cgroup
    }

    /// SIGKILL through the pidfd; harmless once the process is gone.
    pub fn kill(&self) {
        // SAFETY: pidfd_send_signal on our own pidfd.
        unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.pidfd.as_raw_fd(),
                libc::SIGKILL,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        };
    }

    /// Reaps the process if it has exited (never blocks).
    pub fn try_reap(&mut self) -> Option<Exit> {
        if self.status.is_none() {
            let mut status = 0;
            // SAFETY: waiting on our own child without blocking.
            let rc = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
            if rc == self.pid {
                self.status = Some(status);
            }
        }
        self.status.map(decode)
    }

    /// Kills and reaps, blocking until the kernel has the process gone.
    pub fn kill_and_reap(&mut self) -> Exit {
        if let Some(exit) = self.try_reap() {
            return exit;
        }
        self.kill();
        let mut status = 0;
        // SAFETY: waiting on our own child, which was just sent SIGKILL.
        unsafe { libc::waitpid(self.pid, &mut status, 0) };
        self.status = Some(status);
        decode(status)
    }

    /// Why the process ended, in words for a run's error.
    pub fn describe(&self, exit: Exit) -> (&'static str, String) {
        let mib = self.cgroup.memory_limit() >> 20;
        match exit {
            _ if self.cgroup.oom_killed() => (
                "memory",
                format!("the worker was OOM-killed at its {mib} MiB memory cap"),
            ),
            Exit::Signal(libc::SIGSYS) => (
                "seccomp",
                "the worker made a system call its seccomp filter forbids".into(),
            ),
            Exit::Signal(signal) => (
                "worker_crashed",
                format!("the worker was killed by signal {signal}"),
            ),
            Exit::Code(code) => (
                "worker_crashed",
                format!("the worker exited with status {code}"),
            ),
        }
    }
}

fn decode(status: libc::c_int) -> Exit {
    if libc::WIFSIGNALED(status) {
        Exit::Signal(libc::WTERMSIG(status))
    } else {
        Exit::Code(libc::WEXITSTATUS(status))
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        self.kill_and_reap();
        self.cgroup.remove();
    }
}
