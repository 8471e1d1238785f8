//! A run's sandbox as the edge sees it: start with files, exec (output
//! chunks as they come, then the exit), destroy — the same few messages
//! whatever holds the sandbox:
//! - `kvm+wasm`: a microVM per run, restored from a template snapshot by a
//!   jailed VMM process taken from a pool of ready ones; the worker runs as
//!   the guest's init and speaks the same protocol (`microvm_host.rs`);
//! - `jail+wasm`: a jailed worker process per run, taken from a pool of
//!   ready ones (`ephemeral_worker`); the run ends `failed` if its worker
//!   (or VMM) dies;
//! - `wasm`: the `Sandbox` on a thread of the server's own (development).

use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use ephemeral_runtime::{Limits, Runtime, SandboxUsage, Stream};
pub use ephemeral_worker::{ExecEvent, WorkerFailure};
use ephemeral_worker::{WorkerHandle, WorkerPool};
use tokio::sync::{mpsc, oneshot};

use crate::isolation::Isolation;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the sandbox could not start: {0}")]
    Start(String),
}

/// Where this server's sandboxes come from.
#[derive(Clone)]
pub enum Sandboxes {
    InProcess(Arc<Runtime>),
    Jailed(Arc<WorkerPool>),
}

impl Sandboxes {
    pub fn isolation(&self) -> Isolation {
        match self {
            Sandboxes::InProcess(_) => Isolation::Wasm,
            Sandboxes::Jailed(pool) if pool.config().microvm => Isolation::Kvm,
            Sandboxes::Jailed(_) => Isolation::Jail,
        }
    }

    /// A fresh sandbox with `files` in it.
    pub async fn start(
        &self,
        limits: Limits,
        files: Vec<(String, Vec<u8>)>,
    ) -> Result<SandboxHandle, SandboxError> {
        let started = Instant::now();
        let kind = match self {
            Sandboxes::InProcess(runtime) => {
                Kind::InProcess(InProcess::start(runtime.clone(), limits, files).await?)
            }
            Sandboxes::Jailed(pool) => {
                let start = SandboxError::Start;
                let worker = pool.take().await.map_err(|e| start(e.to_string()))?;
                let worker = worker
                    .start(limits, files)
                    .await
                    .map_err(|e| start(e.to_string()))?;
                Kind::Jailed(worker)
            }
        };
        Ok(SandboxHandle { kind, started })
    }
}

/// The handle a run holds on its sandbox.
pub struct SandboxHandle {
    kind: Kind,
    started: Instant,
}

enum Kind {
    InProcess(InProcess),
    Jailed(WorkerHandle),
}

impl SandboxHandle {
    /// Starts `command`; its output and exit arrive on the returned channel.
    pub fn exec(&self, command: &str, timeout: Duration) -> mpsc::UnboundedReceiver<ExecEvent> {
        match &self.kind {
            Kind::InProcess(s) => s.exec(command, timeout),
            Kind::Jailed(w) => w.exec(command, timeout),
        }
    }

    /// Resolves if the sandbox fails under the run (its worker crashed,
    /// was OOM-killed or hung); never for an in-process sandbox.
    pub fn failure(&self) -> impl std::future::Future<Output = WorkerFailure> + Send + 'static {
        let watch = match &self.kind {
            Kind::Jailed(w) => Some(w.failure_watch()),
            Kind::InProcess(_) => None,
        };
        async move {
            match watch {
                Some(w) => ephemeral_worker::host::wait_failure(w).await,
                None => std::future::pending().await,
            }
        }
    }

    /// The worker's pid on the host, for a jailed sandbox.
    pub fn worker_pid(&self) -> Option<u32> {
        match &self.kind {
            Kind::Jailed(w) => Some(w.pid()),
            Kind::InProcess(_) => None,
        }
    }

    /// Destroys the sandbox: a jailed worker is killed at once if a
    /// command is still running, and reaped; an in-process sandbox goes
    /// once its current command (bounded by its own limit) has ended.
    pub async fn destroy(self) -> Duration {
        match self.kind {
            Kind::InProcess(s) => s.destroy().await,
            Kind::Jailed(w) => {
                w.destroy().await;
            }
        }
        self.started.elapsed()
    }
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

/// The in-process sandbox, on a thread of its own (wasmtime runs it
/// synchronously), taking requests in order.
struct InProcess {
    requests: std_mpsc::Sender<Request>,
}

impl InProcess {
    async fn start(
        runtime: Arc<Runtime>,
        limits: Limits,
        files: Vec<(String, Vec<u8>)>,
    ) -> Result<InProcess, SandboxError> {
        let (requests, inbox) = std_mpsc::channel();
        let (ready_tx, ready_rx) = oneshot::channel();
        std::thread::Builder::new()
            .name("sandbox".into())
            .spawn(move || serve(runtime, limits, files, inbox, ready_tx))
            .map_err(|e| SandboxError::Start(e.to_string()))?;
        match ready_rx.await {
            Ok(Ok(())) => Ok(InProcess { requests }),
            Ok(Err(message)) => Err(SandboxError::Start(message)),
            Err(_) => Err(SandboxError::Start("the sandbox thread ended".into())),
        }
    }

    fn exec(&self, command: &str, timeout: Duration) -> mpsc::UnboundedReceiver<ExecEvent> {
        let (events, rx) = mpsc::unbounded_channel();
        let request = Request::Exec {
            command: command.to_string(),
            timeout,
            events,
        };
        if let Err(std_mpsc::SendError(Request::Exec { events, .. })) = self.requests.send(request)
        {
            let _ = events.send(ExecEvent::Failed("the sandbox is gone".into()));
        }
        rx
    }

    async fn destroy(self) {
        let (reply, rx) = oneshot::channel();
        if self.requests.send(Request::Destroy { reply }).is_ok() {
            let _ = rx.await;
        }
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

/// How this host's jailed workers are made, or why it cannot make them.
/// The worker binary: `binary`, else `$EPHEMERAL_WORKER_BIN`, else this
/// executable when it is `ephemeral`, else an `ephemeral` beside it (test
/// and bench harnesses live in `target/*/deps/`).
pub fn jail_config(
    runtime: &Runtime,
    binary: Option<std::path::PathBuf>,
) -> Result<ephemeral_worker::WorkerConfig, String> {
    let program = match binary {
        Some(path) => path,
        None => worker_binary()?,
    };
    ephemeral_worker::WorkerConfig::detect(
        program,
        vec!["worker".into()],
        runtime.cache().dir().to_path_buf(),
        runtime.programs_dir(),
    )
}

fn worker_binary() -> Result<std::path::PathBuf, String> {
    if std::env::var_os("EPHEMERAL_WORKER_BIN").is_none() {
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
        if exe.file_stem().is_some_and(|s| s == "ephemeral") {
            return Ok(exe);
        }
    }
    beside_this_executable("EPHEMERAL_WORKER_BIN", "ephemeral").map_err(|_| {
        "cannot find the `ephemeral` binary to run workers (set EPHEMERAL_WORKER_BIN)".into()
    })
}

/// `$VAR`, else `name` in this executable's folder or the one above it
/// (test and bench harnesses live in `target/*/deps/`).
pub fn beside_this_executable(var: &str, name: &str) -> Result<std::path::PathBuf, String> {
    if let Some(path) = std::env::var_os(var) {
        return Ok(path.into());
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| format!("cannot find the `{name}` binary (build it, or set {var})"))
}
