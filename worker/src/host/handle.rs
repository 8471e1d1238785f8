//! A worker from the host's side, in two states: [`IdleWorker`] (jailed,
//! engine warm, no run yet: what the pool holds) and [`WorkerHandle`] (a
//! run's worker). Its body is a jailed process or, for isolation `wasm`, a
//! thread of this process running the same loop (`body.rs`). The handle talks to a task that owns the process and
//! its stream: it sends requests in order, routes output to the running
//! command, and watches the process itself, so a worker that crashes, is
//! OOM-killed or stops answering fails its command and reports the cause
//! instead of hanging the run.

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use ephemeral_runtime::{ExecOutcome, Limits, SandboxUsage, Stream};
use tokio::io::unix::AsyncFd;
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{mpsc, oneshot, watch};

use super::WorkerConfig;
use super::body::{Body, WorkerThread};
use super::cgroup::Cgroup;
use super::frames;
use super::spawn::{SpawnError, spawn};
use crate::channel::ChannelError;
use crate::protocol::{FromWorker, Probe, ToWorker, VERSION, WireLimits};

/// Time a worker may overrun its command's own limit before it is
/// declared hung and killed.
const HUNG_GRACE: Duration = Duration::from_secs(5);
/// How long a finished run's worker may take to say goodbye.
const DESTROY_GRACE: Duration = Duration::from_secs(1);

/// What a command reports while it runs.
#[derive(Debug)]
pub enum ExecEvent {
    Output(Stream, Vec<u8>),
    Exit(ExecOutcome),
    Failed(String),
}

/// Why a worker stopped serving its run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerFailure {
    /// `memory`, `seccomp`, `worker_crashed`, `worker_hung` or `protocol`.
    pub cause: &'static str,
    pub message: String,
}

/// A jailed worker with its engine warm, not yet given a run.
pub struct IdleWorker {
    body: Body,
    stream: UnixStream,
    /// `None` for a worker on a thread of this process.
    config: Option<WorkerConfig>,
    /// When the spawn began, and how long until `Ready`.
    pub spawned: Instant,
    pub ready_in: Duration,
}

impl std::fmt::Debug for IdleWorker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdleWorker")
            .field("pid", &self.body.pid())
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Spawn(#[from] SpawnError),
    #[error("the worker failed before it was ready: {0}")]
    NotReady(String),
    #[error("the worker refused the run: {0}")]
    Refused(String),
}

impl IdleWorker {
    /// Makes a worker and waits for its `Ready`.
    pub async fn spawn(config: &WorkerConfig) -> Result<IdleWorker, StartError> {
        let spawned = Instant::now();
        let cgroup = Cgroup::create(
            config.cgroups,
            config.cgroup_limits(Limits::default().memory_bytes as u64),
        )
        .map_err(|e| SpawnError::Os {
            step: "create the cgroup",
            source: e,
        })?;
        let mut process = spawn(&config.program, &config.worker_args(), cgroup)?;
        let stream = process
            .stream
            .take()
            .ok_or_else(|| StartError::NotReady("no stream".into()))?;
        let body = Body::Process(process);
        Self::ready(body, stream, Some(config.clone()), spawned, config.ready_timeout).await
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

enum Request {
    Exec {
        command: String,
        timeout: Duration,
        events: mpsc::UnboundedSender<ExecEvent>,
    },
    Probe {
        probe: Probe,
        reply: oneshot::Sender<(bool, String)>,
    },
    Destroy {
        reply: oneshot::Sender<SandboxUsage>,
    },
}

/// A run's worker.
pub struct WorkerHandle {
    requests: mpsc::UnboundedSender<Request>,
    failure: watch::Receiver<Option<WorkerFailure>>,
    pid: Option<u32>,
    cgroup_paths: Vec<std::path::PathBuf>,
}

impl WorkerHandle {
    fn drive(body: Body, reader: OwnedReadHalf, writer: OwnedWriteHalf) -> WorkerHandle {
        let (requests, inbox) = mpsc::unbounded_channel();
        let (failure_tx, failure) = watch::channel(None);
        let handle = WorkerHandle {
            requests,
            failure,
            pid: body.pid(),
            cgroup_paths: body.cgroup_paths(),
        };
        let (frames_tx, frames_rx) = mpsc::unbounded_channel();
        tokio::spawn(read_frames(reader, frames_tx));
        tokio::spawn(
            Driver {
                body,
                writer,
                frames: frames_rx,
                inbox,
                failure: failure_tx,
                queue: VecDeque::new(),
                running: None,
                probe: None,
                next_id: 1,
            }
            .run(),
        );
        handle
    }

    /// The worker's pid on the host; `None` for a worker on a thread of
    /// this process.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The worker's cgroup folders.
    pub fn cgroup_paths(&self) -> &[std::path::PathBuf] {
        &self.cgroup_paths
    }

    /// Starts `command`; its output and exit arrive on the returned channel.
    pub fn exec(&self, command: &str, timeout: Duration) -> mpsc::UnboundedReceiver<ExecEvent> {
        let (events, rx) = mpsc::unbounded_channel();
        let request = Request::Exec {
            command: command.to_string(),
            timeout,
            events,
        };
        if let Err(mpsc::error::SendError(Request::Exec { events, .. })) =
            self.requests.send(request)
        {
            let _ = events.send(ExecEvent::Failed(self.gone_message()));
        }
        rx
    }

    /// Runs a jail self-check inside the worker.
    pub async fn probe(&self, probe: Probe) -> Option<(bool, String)> {
        let (reply, rx) = oneshot::channel();
        self.requests.send(Request::Probe { probe, reply }).ok()?;
        rx.await.ok()
    }

    /// Resolves when the worker has failed, with why.
    pub async fn failed(&self) -> WorkerFailure {
        wait_failure(self.failure_watch()).await
    }

    /// What [`WorkerHandle::failed`] waits on, to wait without the handle.
    pub fn failure_watch(&self) -> watch::Receiver<Option<WorkerFailure>> {
        self.failure.clone()
    }

    /// Ends the worker: at once if a command is running (the run is over,
    /// its command with it), else after it has said goodbye. The process is
    /// reaped and its cgroup removed before this returns.
    pub async fn destroy(self) -> SandboxUsage {
        let (reply, rx) = oneshot::channel();
        if self.requests.send(Request::Destroy { reply }).is_err() {
            return SandboxUsage::from(crate::protocol::WireUsage::default());
        }
        rx.await
            .unwrap_or_else(|_| SandboxUsage::from(crate::protocol::WireUsage::default()))
    }

    fn gone_message(&self) -> String {
        self.failure
            .borrow()
            .as_ref()
            .map(|f| f.message.clone())
            .unwrap_or_else(|| "the worker is gone".into())
    }
}

/// Resolves when the worker behind `failure` has failed; never if it ends
/// without failing (destroyed with its run).
pub async fn wait_failure(mut failure: watch::Receiver<Option<WorkerFailure>>) -> WorkerFailure {
    let seen = failure
        .wait_for(Option::is_some)
        .await
        .map(|f| f.clone().unwrap_or_else(gone));
    match seen {
        Ok(f) => f,
        Err(_) => std::future::pending().await,
    }
}

fn gone() -> WorkerFailure {
    WorkerFailure {
        cause: "worker_crashed",
        message: "the worker is gone".into(),
    }
}

async fn read_frames(
    mut reader: OwnedReadHalf,
    frames: mpsc::UnboundedSender<Result<FromWorker, ChannelError>>,
) {
    let mut buf = Vec::new();
    loop {
        let frame = frames::read(&mut reader, &mut buf).await;
        let end = frame.is_err();
        if frames.send(frame).is_err() || end {
            return;
        }
    }
}

struct Running {
    id: u32,
    events: mpsc::UnboundedSender<ExecEvent>,
    /// Past this, the worker is hung.
    hung_at: Instant,
}

struct Driver {
    body: Body,
    writer: OwnedWriteHalf,
    frames: mpsc::UnboundedReceiver<Result<FromWorker, ChannelError>>,
    inbox: mpsc::UnboundedReceiver<Request>,
    failure: watch::Sender<Option<WorkerFailure>>,
    queue: VecDeque<Request>,
    running: Option<Running>,
    probe: Option<oneshot::Sender<(bool, String)>>,
    next_id: u32,
}

/// What ended the driver's loop.
enum End {
    Destroyed(SandboxUsage, oneshot::Sender<SandboxUsage>),
    /// The run ended with a command still running (or the handle dropped).
    Killed(Option<oneshot::Sender<SandboxUsage>>),
    Failed(WorkerFailure),
}

impl Driver {
    async fn run(mut self) {
        // SAFETY: the clone is a descriptor of our own, owned by the AsyncFd
        // and neither replaced nor closed while registered.
        let watch = |fd: OwnedFd| unsafe { AsyncFd::register(fd) }.map_err(std::io::Error::from);
        let exited = match self.body.exit_fd().and_then(watch) {
            Ok(fd) => fd,
            Err(e) => {
                let failure = WorkerFailure {
                    cause: "worker_crashed",
                    message: format!("cannot watch the worker: {e}"),
                };
                return self.finish(End::Failed(failure)).await;
            }
        };
        let end = self.serve(&exited).await;
        self.finish(end).await;
    }

    async fn serve(&mut self, exited: &AsyncFd<OwnedFd>) -> End {
        loop {
            let idle = self.running.is_none() && self.probe.is_none();
            if idle && let Some(request) = self.queue.pop_front() {
                match self.dispatch(request).await {
                    Ok(None) => continue,
                    Ok(Some(end)) => return end,
                    Err(failure) => return End::Failed(failure),
                }
            }
            let hung_at = self.running.as_ref().map(|r| r.hung_at);
            tokio::select! {
                request = self.inbox.recv() => match request {
                    None => return End::Killed(None),
                    Some(Request::Destroy { reply }) if self.running.is_some() => {
                        return End::Killed(Some(reply));
                    }
                    Some(request) => self.queue.push_back(request),
                },
                frame = self.frames.recv() => match frame {
                    Some(Ok(frame)) => {
                        if let Err(failure) = self.route(frame) {
                            return End::Failed(failure);
                        }
                    }
                    Some(Err(e)) => return End::Failed(self.lost(Some(e)).await),
                    None => return End::Failed(self.lost(None).await),
                },
                _ = exited.readable() => return End::Failed(self.lost(None).await),
                _ = sleep_until(hung_at), if hung_at.is_some() => {
                    return End::Failed(WorkerFailure {
                        cause: "worker_hung",
                        message: format!(
                            "the worker stopped answering: no exit {} s past its command's limit",
                            HUNG_GRACE.as_secs()
                        ),
                    });
                }
            }
        }
    }

    /// Sends a queued request; `Some` if it ends the worker.
    async fn dispatch(&mut self, request: Request) -> Result<Option<End>, WorkerFailure> {
        let frame = match request {
            Request::Exec {
                command,
                timeout,
                events,
            } => {
                let id = self.next_id;
                self.next_id += 1;
                self.running = Some(Running {
                    id,
                    events,
                    hung_at: Instant::now() + timeout + HUNG_GRACE,
                });
                ToWorker::Exec {
                    id,
                    command,
                    timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
                }
            }
            Request::Probe { probe, reply } => {
                self.probe = Some(reply);
                ToWorker::Probe { probe }
            }
            Request::Destroy { reply } => return Ok(Some(self.goodbye(reply).await)),
        };
        match frames::write(&mut self.writer, &frame).await {
            Ok(()) => Ok(None),
            Err(e) => Err(self.lost(Some(e)).await),
        }
    }

    /// Asks the worker to destroy its sandbox and waits a moment for it.
    async fn goodbye(&mut self, reply: oneshot::Sender<SandboxUsage>) -> End {
        if frames::write(&mut self.writer, &ToWorker::Destroy)
            .await
            .is_err()
        {
            return End::Killed(Some(reply));
        }
        let wait = async {
            while let Some(frame) = self.frames.recv().await {
                if let Ok(FromWorker::Destroyed { usage }) = frame {
                    return Some(SandboxUsage::from(usage));
                }
            }
            None
        };
        match tokio::time::timeout(DESTROY_GRACE, wait).await {
            Ok(Some(usage)) => End::Destroyed(usage, reply),
            _ => End::Killed(Some(reply)),
        }
    }

    fn route(&mut self, frame: FromWorker) -> Result<(), WorkerFailure> {
        match frame {
            FromWorker::Output { id, stream, data } => {
                if let Some(r) = self.running.as_ref().filter(|r| r.id == id) {
                    let _ = r.events.send(ExecEvent::Output(stream.into(), data));
                }
            }
            FromWorker::Exit { id, exit } => {
                if let Some(r) = self.running.take_if(|r| r.id == id) {
                    let event = match exit.error {
                        Some(message) => ExecEvent::Failed(message),
                        None => ExecEvent::Exit(ExecOutcome::from(&exit)),
                    };
                    let _ = r.events.send(event);
                }
            }
            FromWorker::ProbeResult {
                refused, detail, ..
            } => {
                if let Some(reply) = self.probe.take() {
                    let _ = reply.send((refused, detail));
                }
            }
            FromWorker::Error { message } => {
                tracing::warn!(pid = ?self.body.pid(), %message, "worker error");
            }
            other => {
                return Err(WorkerFailure {
                    cause: "protocol",
                    message: format!("the worker sent an unexpected frame: {other:?}"),
                });
            }
        }
        Ok(())
    }

    /// The worker's stream or process ended: why, from its exit status and
    /// its cgroup.
    async fn lost(&mut self, error: Option<ChannelError>) -> WorkerFailure {
        if let Some(ChannelError::Protocol(e)) = &error {
            return WorkerFailure {
                cause: "protocol",
                message: format!("the worker broke the protocol: {e}"),
            };
        }
        // The stream closes a moment before the process is reapable.
        for _ in 0..100 {
            if let Some(exit) = self.body.try_reap() {
                let (cause, message) = self.body.describe(exit);
                return WorkerFailure { cause, message };
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        WorkerFailure {
            cause: "worker_crashed",
            message: "the worker closed its stream".into(),
        }
    }

    async fn finish(mut self, end: End) {
        self.body.kill();
        let (reply, usage, failure) = match end {
            End::Destroyed(usage, reply) => (Some(reply), usage, None),
            End::Killed(reply) => (
                reply,
                SandboxUsage::from(crate::protocol::WireUsage::default()),
                None,
            ),
            End::Failed(failure) => (
                None,
                SandboxUsage::from(crate::protocol::WireUsage::default()),
                Some(failure),
            ),
        };
        if let Some(failure) = failure {
            tracing::warn!(pid = ?self.body.pid(), cause = failure.cause, message = %failure.message, "worker failed");
            if let Some(r) = self.running.take() {
                let _ = r.events.send(ExecEvent::Failed(failure.message.clone()));
            }
            for request in self.queue.drain(..) {
                if let Request::Exec { events, .. } = request {
                    let _ = events.send(ExecEvent::Failed(failure.message.clone()));
                }
            }
            let _ = self.failure.send(Some(failure));
        }
        // Reaped and its cgroup removed off the async threads.
        let body = self.body;
        let _ = tokio::task::spawn_blocking(move || drop(body)).await;
        if let Some(reply) = reply {
            let _ = reply.send(usage);
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}
