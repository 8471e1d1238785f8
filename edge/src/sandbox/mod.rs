//! A run's sandbox as the edge sees it: a shell session in a WASI sandbox
//! that runs commands (their output as it comes, then their exit), may
//! fail under the run, and is destroyed — whatever holds it. The edge
//! never asks which.
//!
//! Every isolation holds its sandbox in a worker driven by the worker
//! crate's one loop over one protocol (`ephemeral_worker::guest::serve`):
//! - `kvm+wasm`: the worker is a microVM's init, behind a jailed VMM
//!   process restored from a template snapshot (`microvm.rs`);
//! - `jail+wasm`: the worker is a jailed process of its own;
//! - `wasm`: the worker is a thread of the server (development only,
//!   `in_process.rs`).
//!
//! Which one this host offers, and whether that meets the operator's
//! minimum, is decided once at start (`choose.rs`); the programs it runs
//! are found by `binaries.rs`.

mod binaries;
pub(crate) use binaries::beside_this_executable;
mod choose;
mod in_process;
mod microvm;
mod worker;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use ephemeral_runtime::Limits;
pub use ephemeral_worker::host::{Command, FileFailure};
pub use ephemeral_worker::protocol::{FileOp, FileRefusal, FileReply, WireFileInfo, WireFileKind};
pub use ephemeral_worker::{ExecEvent, WorkerFailure as SandboxFailure};
use tokio::sync::mpsc;

pub use choose::{Choice, ChooseError, choose, jailed_from_warm_cache};

use crate::isolation::Isolation;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why an isolation cannot be had on this host, in one line each.
#[derive(Debug, thiserror::Error)]
pub enum Unavailable {
    #[error(transparent)]
    Kvm(#[from] crate::isolation::KvmUnavailable),
    #[error("cannot find the `{name}` binary (build it, or set {var})")]
    Binary {
        name: &'static str,
        var: &'static str,
    },
    #[error("cannot find this executable: {0}")]
    CurrentExe(std::io::Error),
    #[error(
        "no guest kernel at {} (a release has it in lib/ephemeral/guest; from source, vm-fallback/guest/build-kernel makes it; or set EPHEMERAL_GUEST_DIR)",
        .0.display()
    )]
    NoKernel(std::path::PathBuf),
    #[error(
        "no static guest worker at {} (a release has it in lib/ephemeral/guest; from source, ./dev dist builds it; or set EPHEMERAL_GUEST_WORKER)",
        .0.display()
    )]
    NoGuestWorker(std::path::PathBuf),
    #[error("cannot precompile the guest's components: {0}")]
    Precompile(ephemeral_runtime::Error),
    #[error("cannot run {}: {source}", .path.display())]
    Vmm {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("the microVM template did not boot: {0}")]
    Template(String),
    /// What the worker crate finds missing on this host (namespaces,
    /// cgroups, the worker binary's folders).
    #[error("{0}")]
    Host(String),
}

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the sandbox could not start: {0}")]
    Start(String),
}

/// One sandbox: a shell session whose state carries over from one command
/// to the next, and its files.
pub trait Sandbox: Send + Sync {
    /// Starts `command` (with its standard input and environment, at most
    /// its timeout); its output and its exit arrive on the returned
    /// channel. Commands and file operations are carried out one at a
    /// time, in the order they were asked for.
    fn run(&self, command: Command) -> mpsc::UnboundedReceiver<ExecEvent>;

    /// A file operation as the sandbox's own user.
    fn file(&self, op: FileOp) -> BoxFuture<'_, Result<FileReply, FileFailure>>;

    /// Resolves if the sandbox fails under its user (its worker crashed,
    /// was OOM-killed or hung); never if it is destroyed first.
    fn failure(&self) -> BoxFuture<'static, SandboxFailure>;

    /// Destroys the sandbox: at once, even with a command running, and
    /// nothing of it is left when this resolves (a worker on a thread ends
    /// after its command, which its own limits bound).
    fn destroy(&self) -> BoxFuture<'static, ()>;

    /// [`Sandbox::run`] of a plain command.
    fn exec(&self, command: &str, timeout: Duration) -> mpsc::UnboundedReceiver<ExecEvent> {
        self.run(Command {
            command: command.to_string(),
            timeout,
            ..Command::default()
        })
    }
}

/// Where a server's sandboxes come from: one kind a host, chosen at start.
pub trait SandboxSource: Send + Sync {
    /// The isolation every sandbox from here has.
    fn isolation(&self) -> Isolation;

    /// A fresh sandbox with `files` in its scratch folder.
    fn start(
        &self,
        limits: Limits,
        files: Vec<(String, Vec<u8>)>,
    ) -> BoxFuture<'_, Result<Box<dyn Sandbox>, SandboxError>>;

    /// What a health check shows of the source (a pool's workers).
    fn health(&self) -> Option<serde_json::Value> {
        None
    }
}
