//! A run's worker as the host holds it: [`WorkerHandle`] sends requests
//! in order to the task that drives the worker (`driver.rs`), which routes
//! each command's output back and watches the worker itself, so a worker
//! that crashes, is OOM-killed or stops answering fails its command and
//! reports the cause instead of hanging the run.

use std::time::Duration;

use ephemeral_runtime::{ExecOutcome, SandboxUsage, Stream};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{mpsc, oneshot, watch};

use super::body::Body;
use super::driver;
use crate::protocol::{FileOp, FileRefusal, FileReply, Probe};

/// What a command reports while it runs.
#[derive(Debug)]
pub enum ExecEvent {
    /// A chunk of its output, in order.
    Output(Stream, Vec<u8>),
    /// It ended: the last event.
    Exit(ExecOutcome),
    /// The worker failed; the command has no outcome. The last event.
    Failed(String),
}

/// Why a worker stopped serving its run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerFailure {
    /// `memory`, `seccomp`, `worker_crashed`, `worker_hung` or `protocol`.
    pub cause: &'static str,
    /// What happened, for the run's error.
    pub message: String,
}

/// One command: what it runs, for how long at most, its standard input
/// and what it adds to the environment (this command only).
#[derive(Debug, Clone, Default)]
pub struct Command {
    /// The command line, run as `sh -c`.
    pub command: String,
    /// Its wall-time limit.
    pub timeout: Duration,
    /// All of its standard input.
    pub stdin: Vec<u8>,
    /// Variables added for this command only.
    pub env: Vec<(String, String)>,
}

/// Why a file operation did not happen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileFailure {
    /// The sandbox refused it (a bad path, no such file, the quota…).
    #[error("{message}")]
    Refused {
        /// The reason, as the API names it.
        refusal: FileRefusal,
        /// The runtime's message, with the path.
        message: String,
    },
    /// The worker is gone.
    #[error("{0}")]
    Gone(String),
}

pub(super) enum Request {
    Exec {
        command: Command,
        events: mpsc::UnboundedSender<ExecEvent>,
    },
    File {
        op: FileOp,
        reply: oneshot::Sender<Result<FileReply, FileFailure>>,
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
    /// The handle of a worker that has its run, driven from now on by a
    /// task of its own.
    pub(super) fn drive(body: Body, reader: OwnedReadHalf, writer: OwnedWriteHalf) -> WorkerHandle {
        let (requests, inbox) = mpsc::unbounded_channel();
        let (failure_tx, failure) = watch::channel(None);
        let handle = WorkerHandle {
            requests,
            failure,
            pid: body.pid(),
            cgroup_paths: body.cgroup_paths(),
        };
        driver::start(body, reader, writer, inbox, failure_tx);
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
        self.run(Command {
            command: command.to_string(),
            timeout,
            ..Command::default()
        })
    }

    /// Starts `command` with its input and environment; its output and
    /// exit arrive on the returned channel. Commands (and file
    /// operations) are carried out one at a time, in order.
    pub fn run(&self, command: Command) -> mpsc::UnboundedReceiver<ExecEvent> {
        let (events, rx) = mpsc::unbounded_channel();
        let request = Request::Exec { command, events };
        if let Err(mpsc::error::SendError(Request::Exec { events, .. })) =
            self.requests.send(request)
        {
            let _ = events.send(ExecEvent::Failed(self.gone_message()));
        }
        rx
    }

    /// A file operation as the sandbox's user, after what was asked before.
    pub async fn file(&self, op: FileOp) -> Result<FileReply, FileFailure> {
        let (reply, rx) = oneshot::channel();
        if self.requests.send(Request::File { op, reply }).is_err() {
            return Err(FileFailure::Gone(self.gone_message()));
        }
        rx.await
            .unwrap_or_else(|_| Err(FileFailure::Gone(self.gone_message())))
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
        self.end().await
    }

    /// [`WorkerHandle::destroy`] asked for now, through a handle that may
    /// be shared; what it resolves to is the same. Requests after it fail
    /// as on a worker that is gone.
    pub fn end(&self) -> impl Future<Output = SandboxUsage> + Send + 'static {
        let (reply, rx) = oneshot::channel();
        let sent = self.requests.send(Request::Destroy { reply }).is_ok();
        async move {
            let none = || SandboxUsage::from(crate::protocol::WireUsage::default());
            match sent {
                true => rx.await.unwrap_or_else(|_| none()),
                false => none(),
            }
        }
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
