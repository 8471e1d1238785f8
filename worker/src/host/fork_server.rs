//! The host's side of a fork server (the worker's `fork_server.rs`): one
//! jailed, warm worker process that makes ready workers by `clone`, each
//! a child of this process in namespaces, a uid and a cgroup of its own.
//!
//! A copy is made like this: a free uid slot is leased; the server is
//! asked for a copy in it; the copy's pidfd and stream come back over the
//! control socket, its user namespace already mapped onto the slot's uid
//! by the server (only a process in the parent user namespace may); the
//! copy is moved into its cgroup; then it is told to go, and says `Ready`
//! on its stream like any worker.

use std::io::{IoSliceMut, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ephemeral_runtime::Limits;
use nix::sys::socket::{ControlMessageOwned, MsgFlags, recvmsg};

use super::WorkerConfig;
use super::cgroup::Cgroup;
use super::idle::StartError;
use super::process::WorkerProcess;
use super::spawn::{Shape, SpawnError, fork_uid_base, spawn};
use crate::channel::read_frame;
use crate::fork_server::{FAILED, FORKED, GO};
use crate::jail::FORK_SLOTS;
use crate::protocol::{FromWorker, VERSION};

/// How long one fork may take before the server is given up as stuck.
const FORK_TIMEOUT: Duration = Duration::from_secs(10);

/// A running fork server. Dropping it kills it; copies already made live on
/// (they are this process's children, not the server's).
pub struct ForkServer {
    process: Mutex<WorkerProcess>,
    control: Mutex<UnixStream>,
    uid_base: u32,
    slots: Arc<Slots>,
}

impl std::fmt::Debug for ForkServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ForkServer")
            .field("uid_base", &self.uid_base)
            .finish()
    }
}

/// Which of the server's uid slots are taken by a copy alive.
#[derive(Debug)]
struct Slots {
    free: Mutex<Vec<u32>>,
}

/// A slot held by one copy until the copy is reaped.
#[derive(Debug)]
pub(crate) struct SlotLease {
    slots: Arc<Slots>,
    slot: u32,
}

impl Drop for SlotLease {
    fn drop(&mut self) {
        self.slots
            .free
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(self.slot);
    }
}

impl Slots {
    fn lease(self: &Arc<Self>) -> Option<SlotLease> {
        let slot = self
            .free
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()?;
        Some(SlotLease {
            slots: self.clone(),
            slot,
        })
    }
}

impl ForkServer {
    /// Spawns a fork server and waits until it is warm.
    pub async fn start(config: &WorkerConfig) -> Result<ForkServer, StartError> {
        let cgroup = Cgroup::create_as(
            'f',
            config.cgroups,
            config.cgroup_limits(Limits::default().memory_bytes as u64),
        )
        .map_err(|e| SpawnError::Os {
            step: "create the fork server's cgroup",
            source: e,
        })?;
        let mut args = config.worker_args();
        args.push("--fork-server".into());
        let mut process = spawn(&config.program, &args, cgroup, Shape::ForkServer)?;
        let stream = process
            .stream
            .take()
            .ok_or_else(|| StartError::NotReady("no stream".into()))?;
        let stream = wait_ready(stream, config.ready_timeout).await?;
        stream
            .set_read_timeout(Some(FORK_TIMEOUT))
            .map_err(|e| StartError::NotReady(e.to_string()))?;
        // Slot 0 last: the first copies take the highest slots.
        let free = (0..FORK_SLOTS).collect();
        Ok(ForkServer {
            uid_base: fork_uid_base(process.pid),
            process: Mutex::new(process),
            control: Mutex::new(stream),
            slots: Arc::new(Slots {
                free: Mutex::new(free),
            }),
        })
    }

    /// Whether the server still runs.
    pub fn is_alive(&self) -> bool {
        self.lock_process().try_reap().is_none()
    }

    /// The server's pid on the host.
    pub fn pid(&self) -> u32 {
        self.lock_process().pid()
    }

    /// A new copy in `cgroup`, released to say `Ready` on its stream.
    pub(crate) fn fork(&self, cgroup: Cgroup) -> Result<WorkerProcess, SpawnError> {
        let lease = self.slots.lease().ok_or_else(|| {
            SpawnError::Invalid("every uid slot of the fork server is taken".into())
        })?;
        let (pid, pidfd, stream) = self.ask(lease.slot)?;
        let mut process = WorkerProcess::adopt(pid, pidfd, stream, cgroup);
        process.cgroup.add(pid).map_err(os("join the cgroup"))?;
        process.slot = Some(lease);
        let stream = process
            .stream
            .as_ref()
            .ok_or_else(|| SpawnError::Invalid("no stream".into()))?;
        (&*stream)
            .write_all(&[GO])
            .map_err(os("release the copy"))?;
        Ok(process)
    }

    /// One request on the control stream: the copy's pid, pidfd, stream.
    fn ask(&self, slot: u32) -> Result<(libc::pid_t, OwnedFd, UnixStream), SpawnError> {
        let mut control = self.control.lock().unwrap_or_else(PoisonError::into_inner);
        control
            .write_all(&slot.to_le_bytes())
            .map_err(os("ask the fork server"))?;
        let mut reply = [0u8; 5];
        let fds = receive(&control, &mut reply).map_err(os("hear from the fork server"))?;
        let pid = i32::from_le_bytes([reply[1], reply[2], reply[3], reply[4]]);
        match reply[0] {
            FORKED => {}
            FAILED => {
                if pid > 0 && !fds.is_empty() {
                    // A copy made but not mapped: killed by the server, ours to reap.
                    // SAFETY: reaping our own child, already sent SIGKILL.
                    unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
                }
                let mut buf = Vec::new();
                let why = match read_frame::<_, FromWorker>(&mut &*control, &mut buf) {
                    Ok(FromWorker::Error { message }) => message,
                    other => format!("the fork server failed: {other:?}"),
                };
                return Err(SpawnError::Invalid(why));
            }
            other => {
                return Err(SpawnError::Invalid(format!(
                    "the fork server answered {other:#x}"
                )));
            }
        }
        let [pidfd, stream] = fds
            .try_into()
            .map_err(|_| SpawnError::Invalid("the fork server sent no descriptors".into()))?;
        Ok((pid, pidfd, UnixStream::from(stream)))
    }

    /// The host uid a copy in `slot` runs as.
    pub fn host_uid(&self, slot: u32) -> u32 {
        self.uid_base + slot
    }

    fn lock_process(&self) -> std::sync::MutexGuard<'_, WorkerProcess> {
        self.process.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn os(step: &'static str) -> impl FnOnce(std::io::Error) -> SpawnError {
    move |source| SpawnError::Os { step, source }
}

/// Waits for the server's `Ready` (or the error it died of).
async fn wait_ready(stream: UnixStream, timeout: Duration) -> Result<UnixStream, StartError> {
    let not_ready = |e: std::io::Error| StartError::NotReady(e.to_string());
    let first = tokio::task::spawn_blocking(move || {
        stream.set_read_timeout(Some(timeout))?;
        let mut buf = Vec::new();
        let frame = read_frame::<_, FromWorker>(&mut &stream, &mut buf);
        Ok::<_, std::io::Error>((stream, frame))
    })
    .await
    .map_err(|e| StartError::NotReady(e.to_string()))?
    .map_err(not_ready)?;
    match first {
        (stream, Ok(FromWorker::Ready { version, .. })) if version == VERSION => Ok(stream),
        (_, Ok(FromWorker::Error { message })) => Err(StartError::NotReady(message)),
        (_, other) => Err(StartError::NotReady(format!(
            "the fork server's first frame: {other:?}"
        ))),
    }
}

/// Reads one reply of `reply.len()` bytes and the descriptors sent with it.
fn receive(control: &UnixStream, reply: &mut [u8]) -> std::io::Result<Vec<OwnedFd>> {
    let mut space = nix::cmsg_space!([RawFd; 2]);
    let mut iov = [IoSliceMut::new(reply)];
    let message = recvmsg::<()>(
        control.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_CMSG_CLOEXEC,
    )
    .map_err(std::io::Error::from)?;
    let read = message.bytes;
    let mut fds = Vec::new();
    for cmsg in message.cmsgs().map_err(std::io::Error::from)? {
        if let ControlMessageOwned::ScmRights(received) = cmsg {
            // SAFETY: the kernel just installed these descriptors for us.
            fds.extend(
                received
                    .into_iter()
                    .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
            );
        }
    }
    if read == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "the fork server is gone",
        ));
    }
    if read < reply.len() {
        (&*control).read_exact(&mut reply[read..])?;
    }
    Ok(fds)
}
