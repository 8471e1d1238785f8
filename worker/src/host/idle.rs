//! A worker before its run: [`IdleWorker`], jailed (or on a thread of
//! this process), engine warm, waiting for a run — what the pool holds.
//! Its body is a jailed process or, for isolation `wasm`, a thread running
//! the same loop (`body.rs`). `start` gives it its run and turns it into a
//! [`WorkerHandle`].

use std::time::{Duration, Instant};

use ephemeral_runtime::Limits;
use tokio::net::UnixStream;
use tokio::net::unix::OwnedReadHalf;

use super::WorkerConfig;
use super::body::{Body, WorkerThread};
use super::cgroup::Cgroup;
use super::frames;
use super::handle::WorkerHandle;
use super::spawn::{Shape, SpawnError, spawn};
use crate::channel::ChannelError;
use crate::protocol::{FromWorker, ToWorker, VERSION, WireLimits};

/// A jailed worker with its engine warm, not yet given a run.
pub struct IdleWorker {
    body: Body,
    stream: UnixStream,
    /// `None` for a worker on a thread of this process.
    config: Option<WorkerConfig>,
    /// When the spawn began, and how long until `Ready`.
    pub spawned: Instant,
    /// How long after `spawned` it said `Ready`.
    pub ready_in: Duration,
}

impl std::fmt::Debug for IdleWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdleWorker")
            .field("pid", &self.body.pid())
            .finish()
    }
}

/// A new worker's cgroup, with the default sandbox's caps until its run.
fn worker_cgroup(config: &WorkerConfig) -> Result<Cgroup, SpawnError> {
    let limits = config.cgroup_limits(Limits::default().memory_bytes as u64);
    Cgroup::create(config.cgroups, limits).map_err(|e| SpawnError::Os {
        step: "create the cgroup",
        source: e,
    })
}

/// Why a worker could not be made ready or given its run.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The process could not be made.
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    /// It died, timed out or said something else before `Ready`.
    #[error("the worker failed before it was ready: {0}")]
    NotReady(String),
    /// Giving it its run failed: the memory cap, the stream or the worker's
    /// answer.
    #[error("the worker refused the run: {0}")]
    Refused(String),
}

impl IdleWorker {
    /// Makes a worker and waits for its `Ready`.
    pub async fn spawn(config: &WorkerConfig) -> Result<IdleWorker, StartError> {
        let spawned = Instant::now();
        let args = config.worker_args();
        let process = spawn(
            &config.program,
            &args,
            worker_cgroup(config)?,
            Shape::Worker,
        )?;
        Self::ready_process(process, config, spawned).await
    }

    /// A worker copied from `server` (see [`super::ForkServer`]) into a
    /// cgroup of its own, waited for until `Ready`.
    pub async fn fork(
        server: &super::ForkServer,
        config: &WorkerConfig,
    ) -> Result<IdleWorker, StartError> {
        let spawned = Instant::now();
        let process = server.fork(worker_cgroup(config)?)?;
        Self::ready_process(process, config, spawned).await
    }

    /// Waits for a worker process's `Ready` on its stream.
    async fn ready_process(
        mut process: super::WorkerProcess,
        config: &WorkerConfig,
        spawned: Instant,
    ) -> Result<IdleWorker, StartError> {
        let stream = process
            .stream
            .take()
            .ok_or_else(|| StartError::NotReady("no stream".into()))?;
        let body = Body::Process(process);
        Self::ready(
            body,
            stream,
            Some(config.clone()),
            spawned,
            config.ready_timeout,
        )
        .await
    }

    /// A worker on a thread of this process (isolation `wasm`: no jail, no
    /// cgroup; the sandbox's own limits are its only walls), serving the
    /// same loop as a jailed one.
    pub async fn in_process(
        runtime: std::sync::Arc<ephemeral_runtime::Runtime>,
        ready_timeout: Duration,
    ) -> Result<IdleWorker, StartError> {
        let spawned = Instant::now();
        let not_ready = |e: std::io::Error| StartError::NotReady(e.to_string());
        let (thread, stream) = WorkerThread::start(runtime).map_err(not_ready)?;
        Self::ready(Body::Thread(thread), stream, None, spawned, ready_timeout).await
    }

    /// Waits for the body's `Ready` on `stream`.
    async fn ready(
        mut body: Body,
        stream: std::os::unix::net::UnixStream,
        config: Option<WorkerConfig>,
        spawned: Instant,
        timeout: Duration,
    ) -> Result<IdleWorker, StartError> {
        let not_ready = |e: std::io::Error| StartError::NotReady(e.to_string());
        stream.set_nonblocking(true).map_err(not_ready)?;
        let mut stream = UnixStream::from_std(stream).map_err(not_ready)?;
        let mut buf = Vec::new();
        let first = tokio::time::timeout(timeout, frames::read(&mut stream, &mut buf)).await;
        match first {
            Ok(Ok(FromWorker::Ready { version, .. })) if version == VERSION => Ok(IdleWorker {
                body,
                stream,
                config,
                spawned,
                ready_in: spawned.elapsed(),
            }),
            Ok(Ok(FromWorker::Error { message })) => Err(StartError::NotReady(message)),
            Ok(Ok(other)) => Err(StartError::NotReady(format!(
                "unexpected first frame {other:?}"
            ))),
            Ok(Err(ChannelError::Closed)) => {
                let exit = body.kill_and_reap();
                Err(StartError::NotReady(body.describe(exit).1))
            }
            Ok(Err(e)) => Err(StartError::NotReady(e.to_string())),
            Err(_) => Err(StartError::NotReady(format!(
                "not ready within {} s",
                timeout.as_secs()
            ))),
        }
    }

    /// Whether the worker is still alive (a pooled worker may have died).
    pub fn is_alive(&mut self) -> bool {
        self.body.try_reap().is_none()
    }

    /// The worker's process id on the host; `None` for a worker on a
    /// thread of this process.
    pub fn pid(&self) -> Option<u32> {
        self.body.pid()
    }

    /// Gives the worker its run: the sandbox's limits (the cgroup's memory
    /// cap follows them) and its first files.
    pub async fn start(
        self,
        limits: Limits,
        files: Vec<(String, Vec<u8>)>,
    ) -> Result<WorkerHandle, StartError> {
        let IdleWorker {
            body,
            stream,
            config,
            ..
        } = self;
        if let Some(config) = &config {
            let cap = config
                .cgroup_limits(limits.memory_bytes as u64)
                .memory_bytes;
            body.set_memory(cap)
                .map_err(|e| StartError::Refused(format!("memory cap: {e}")))?;
        }
        let (mut reader, mut writer) = stream.into_split();
        let mut buf = Vec::new();
        let refused = |e: ChannelError| StartError::Refused(e.to_string());
        let microvm = config.as_ref().is_some_and(|c| c.microvm);
        let guest = match (microvm, body.pid()) {
            (true, Some(pid)) => {
                Some(guest_identity(&format!("microvm-{pid}")).map_err(StartError::Refused)?)
            }
            _ => None,
        };
        let start = ToWorker::Start {
            limits: WireLimits::from(limits),
            guest,
        };
        frames::write(&mut writer, &start).await.map_err(refused)?;
        expect_ok(&mut reader, &mut buf).await?;
        for (path, contents) in files {
            let put = ToWorker::PutFile { path, contents };
            frames::write(&mut writer, &put).await.map_err(refused)?;
            expect_ok(&mut reader, &mut buf).await?;
        }
        Ok(WorkerHandle::drive(body, reader, writer))
    }
}

/// What a microVM's guest must not guess or share with another restored
/// from the same snapshot: the time, 32 fresh bytes of this host's
/// entropy, and `run_id` (the pool uses the VMM's pid on this host).
pub fn guest_identity(run_id: &str) -> Result<crate::protocol::GuestIdentity, String> {
    let mut entropy = vec![0u8; 32];
    // SAFETY: getrandom writes at most `entropy.len()` bytes into it.
    let got = unsafe { libc::getrandom(entropy.as_mut_ptr().cast(), entropy.len(), 0) };
    if got != entropy.len() as isize {
        return Err(format!(
            "no entropy for the guest: {}",
            std::io::Error::last_os_error()
        ));
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|e| format!("the host's clock: {e}"))?;
    Ok(crate::protocol::GuestIdentity {
        run_id: run_id.to_string(),
        unix_time_ns: u64::try_from(now.as_nanos()).unwrap_or(u64::MAX),
        entropy,
    })
}

async fn expect_ok(reader: &mut OwnedReadHalf, buf: &mut Vec<u8>) -> Result<(), StartError> {
    match frames::read(reader, buf).await {
        Ok(FromWorker::Started | FromWorker::FileWritten { .. }) => Ok(()),
        Ok(FromWorker::Error { message }) => Err(StartError::Refused(message)),
        Ok(other) => Err(StartError::Refused(format!("unexpected frame {other:?}"))),
        Err(e) => Err(StartError::Refused(e.to_string())),
    }
}
