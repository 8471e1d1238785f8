//! The task that drives one run's worker: it owns the worker's body and
//! stream, sends the handle's requests in order, routes output and exits
//! to the command that is running, and watches the body, so that a worker
//! that crashes, is OOM-killed or hangs past its command's limit fails
//! that command with the cause. When the run ends the body is killed (a
//! thread is left to end after its command) and reaped.

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use ephemeral_runtime::{ExecOutcome, SandboxUsage};
use tokio::io::unix::AsyncFd;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{mpsc, oneshot, watch};

use super::body::Body;
use super::frames;
use super::handle::{Command, ExecEvent, FileFailure, Request, WorkerFailure};
use crate::channel::ChannelError;
use crate::protocol::{FileReply, FromWorker, ToWorker};

/// Time a worker may overrun its command's own limit before it is
/// declared hung and killed.
const HUNG_GRACE: Duration = Duration::from_secs(5);
/// How long a finished run's worker may take to say goodbye.
const DESTROY_GRACE: Duration = Duration::from_secs(1);

/// Starts the tasks that read the worker's frames and drive it.
pub(super) fn start(
    body: Body,
    reader: OwnedReadHalf,
    writer: OwnedWriteHalf,
    inbox: mpsc::UnboundedReceiver<Request>,
    failure: watch::Sender<Option<WorkerFailure>>,
) {
    let (frames_tx, frames) = mpsc::unbounded_channel();
    tokio::spawn(read_frames(reader, frames_tx));
    let driver = Driver {
        body,
        writer,
        frames,
        inbox,
        failure,
        queue: VecDeque::new(),
        running: None,
        asked: None,
        next_id: 1,
    };
    tokio::spawn(driver.run());
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
    /// A request answered by one frame (a probe, a file operation).
    asked: Option<Asked>,
    next_id: u32,
}

/// The reply a request waits for.
enum Asked {
    Probe(oneshot::Sender<(bool, String)>),
    File(oneshot::Sender<Result<FileReply, FileFailure>>),
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
            let idle = self.running.is_none() && self.asked.is_none();
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
            Request::Exec { command, events } => {
                let Command {
                    command,
                    timeout,
                    stdin,
                    env,
                } = command;
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
                    stdin,
                    env,
                }
            }
            Request::File { op, reply } => {
                self.asked = Some(Asked::File(reply));
                ToWorker::File { op }
            }
            Request::Probe { probe, reply } => {
                self.asked = Some(Asked::Probe(reply));
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

    fn answer_file(&mut self, answer: Result<FileReply, FileFailure>) {
        if let Some(Asked::File(reply)) = self.asked.take() {
            let _ = reply.send(answer);
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
                if let Some(Asked::Probe(reply)) = self.asked.take() {
                    let _ = reply.send((refused, detail));
                }
            }
            FromWorker::File { reply } => self.answer_file(Ok(reply)),
            FromWorker::FileRefused { refusal, message } => {
                self.answer_file(Err(FileFailure::Refused { refusal, message }));
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
            // The failure is known before any command hears of it: whoever
            // sees a command cut short by it can already tell why.
            let _ = self.failure.send(Some(failure.clone()));
            if let Some(r) = self.running.take() {
                let _ = r.events.send(ExecEvent::Failed(failure.message.clone()));
            }
            for request in self.queue.drain(..) {
                if let Request::Exec { events, .. } = request {
                    let _ = events.send(ExecEvent::Failed(failure.message.clone()));
                }
            }
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
