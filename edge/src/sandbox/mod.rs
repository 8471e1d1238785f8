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
mod choose;
mod in_process;
mod microvm;
mod worker;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use ephemeral_runtime::Limits;
pub use ephemeral_worker::{ExecEvent, WorkerFailure as SandboxFailure};
use tokio::sync::mpsc;

pub(crate) use binaries::beside_this_executable;
pub use choose::{Choice, ChooseError, choose};
pub(crate) use microvm::kvm_config;
pub(crate) use worker::jail_config;

use crate::isolation::Isolation;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("the sandbox could not start: {0}")]
    Start(String),
}

/// One sandbox: a shell session whose state carries over from one command
/// to the next.
pub trait Sandbox: Send + Sync {
    /// Starts `command` with at most `timeout`; its output and its exit
    /// arrive on the returned channel. Commands run one at a time, in
    /// order.
    fn exec(&self, command: &str, timeout: Duration) -> mpsc::UnboundedReceiver<ExecEvent>;

    /// Resolves if the sandbox fails under its user (its worker crashed,
    /// was OOM-killed or hung); never if it is destroyed first.
    fn failure(&self) -> BoxFuture<'static, SandboxFailure>;

    /// Destroys the sandbox: at once, even with a command running, and
    /// nothing of it is left when this resolves (a worker on a thread ends
    /// after its command, which its own limits bound).
    fn destroy(self: Box<Self>) -> BoxFuture<'static, ()>;
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
