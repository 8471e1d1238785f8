//! A run's sandbox, driven from async code: the `Sandbox` lives on a thread
//! of its own (wasmtime runs it synchronously) and takes requests in order —
//! put files, exec, destroy — answering with output chunks as they come and
//! the exit. This is the edge's whole view of a sandbox: the same messages
//! the jailed worker and the microVM guest speak.

use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use ephemeral_runtime::{ExecOutcome, Limits, Runtime, SandboxUsage, Stream};
use tokio::sync::{mpsc, oneshot};

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the sandbox could not start: {0}")]
    Start(String),
    #[error("the sandbox is gone")]
    Gone,
    #[error("{0}")]
    Runtime(String),
}

/// What an exec reports while it runs.
#[derive(Debug)]
pub enum ExecEvent {
    Output(Stream, Vec<u8>),
    Exit(ExecOutcome),
    Failed(String),
}

enum Request {
    Exec {
        command: String,
        timeout: Duration,
        events: mpsc::UnboundedSender<ExecEvent>,
    },
    Destroy {
        reply: oneshot::Sender<SandboxUsage>,
    },
}

/// The handle a run holds on its sandbox.
pub struct SandboxHandle {
    requests: std_mpsc::Sender<Request>,
    started: Instant,
}

impl SandboxHandle {
    /// Builds a sandbox with `files` in it, on its own thread.
    pub async fn start(
        runtime: Arc<Runtime>,
        limits: Limits,
        files: Vec<(String, Vec<u8>)>,
    ) -> Result<SandboxHandle, SandboxError> {
        let (requests, inbox) = std_mpsc::channel();
        let (ready_tx, ready_rx) = oneshot::channel();
        std::thread::Builder::new()
            .name("sandbox".into())
            .spawn(move || serve(runtime, limits, files, inbox, ready_tx))
            .map_err(|e| SandboxError::Start(e.to_string()))?;
        match ready_rx.await {
            Ok(Ok(())) => Ok(SandboxHandle {
                requests,
                started: Instant::now(),
            }),
            Ok(Err(message)) => Err(SandboxError::Start(message)),
            Err(_) => Err(SandboxError::Start("the sandbox thread ended".into())),
        }
    }

    /// Starts `command`; its output and exit arrive on the returned channel.
    pub fn exec(
        &self,
        command: &str,
        timeout: Duration,
    ) -> Result<mpsc::UnboundedReceiver<ExecEvent>, SandboxError> {
        let (events, rx) = mpsc::unbounded_channel();
        self.requests
            .send(Request::Exec {
                command: command.to_string(),
                timeout,
                events,
            })
            .map_err(|_| SandboxError::Gone)?;
        Ok(rx)
    }

    /// Destroys the sandbox once its current command (if any) has ended;
    /// the wait is bounded by the sandbox's own time limit.
    pub async fn destroy(self) -> Duration {
        let (reply, rx) = oneshot::channel();
        if self.requests.send(Request::Destroy { reply }).is_ok() {
            let _ = rx.await;
        }
        self.started.elapsed()
    }
}

fn serve(
    runtime: Arc<Runtime>,
    limits: Limits,
    files: Vec<(String, Vec<u8>)>,
    inbox: std_mpsc::Receiver<Request>,
    ready: oneshot::Sender<Result<(), String>>,
) {
    let built = runtime
        .sandbox()
        .limits(limits)
        .build()
        .map_err(|e| e.to_string());
    let mut sandbox = match built {
        Ok(sandbox) => sandbox,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    for (path, contents) in &files {
        if let Err(e) = sandbox.put_file(path, contents) {
            let _ = ready.send(Err(e.to_string()));
            return;
        }
    }
    if ready.send(Ok(())).is_err() {
        return;
    }
    for request in inbox {
        match request {
            Request::Exec {
                command,
                timeout,
                events,
            } => {
                sandbox.set_command_timeout(timeout);
                let sink = {
                    let events = events.clone();
                    move |stream: Stream, data: &[u8]| {
                        let _ = events.send(ExecEvent::Output(stream, data.to_vec()));
                    }
                };
                let result = sandbox.exec(&command, sink);
                let _ = events.send(match result {
                    Ok(outcome) => ExecEvent::Exit(outcome),
                    Err(e) => ExecEvent::Failed(e.to_string()),
                });
            }
            Request::Destroy { reply } => {
                let usage = sandbox.destroy();
                let _ = reply.send(usage);
                return;
            }
        }
    }
}
