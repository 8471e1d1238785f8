//! Sandboxes in workers of a pool (`jail+wasm`, and `kvm+wasm`, whose
//! "worker" is a jailed VMM whose guest runs the worker), and the one
//! handle every isolation's sandbox is driven through.

use std::path::PathBuf;
use std::sync::Arc;

use ephemeral_runtime::{Limits, Runtime};
use ephemeral_worker::{ExecEvent, WorkerConfig, WorkerHandle, WorkerPool};
use serde_json::json;
use tokio::sync::mpsc;

use super::{
    BoxFuture, Command, FileFailure, FileOp, FileReply, Sandbox, SandboxError, SandboxFailure,
    SandboxSource, Unavailable,
};
use crate::isolation::Isolation;

impl Sandbox for WorkerHandle {
    fn run(&self, command: Command) -> mpsc::UnboundedReceiver<ExecEvent> {
        WorkerHandle::run(self, command)
    }

    fn file(&self, op: FileOp) -> BoxFuture<'_, Result<FileReply, FileFailure>> {
        Box::pin(WorkerHandle::file(self, op))
    }

    fn failure(&self) -> BoxFuture<'static, SandboxFailure> {
        Box::pin(ephemeral_worker::host::wait_failure(self.failure_watch()))
    }

    fn destroy(&self) -> BoxFuture<'static, ()> {
        let ending = self.end();
        Box::pin(async move {
            ending.await;
        })
    }
}

/// A pool of ready workers (or VMMs) and what they give.
pub(crate) struct Pooled {
    pub(crate) pool: Arc<WorkerPool>,
}

impl SandboxSource for Pooled {
    fn isolation(&self) -> Isolation {
        match self.pool.config().microvm {
            true => Isolation::Kvm,
            false => Isolation::Jail,
        }
    }

    fn start(
        &self,
        limits: Limits,
        files: Vec<(String, Vec<u8>)>,
    ) -> BoxFuture<'_, Result<Box<dyn Sandbox>, SandboxError>> {
        Box::pin(async move {
            let start = |e: &dyn std::fmt::Display| SandboxError::Start(e.to_string());
            let worker = self.pool.take().await.map_err(|e| start(&e))?;
            let handle = worker.start(limits, files).await.map_err(|e| start(&e))?;
            Ok(Box::new(handle) as Box<dyn Sandbox>)
        })
    }

    fn health(&self) -> Option<serde_json::Value> {
        Some(json!({
            "pool_size": self.pool.size(),
            "ready": self.pool.ready(),
            "last_error": self.pool.last_error(),
            "fork_server": match self.pool.fork_server() {
                Some(Ok(pid)) => json!({"pid": pid}),
                Some(Err(why)) => json!({"unavailable": why}),
                None => serde_json::Value::Null,
            },
        }))
    }
}

/// How this host's jailed workers are made, or why it cannot make them.
/// The worker binary: `binary`, else the one `binaries.rs` finds.
pub(crate) fn jail_config(
    runtime: &Runtime,
    binary: Option<PathBuf>,
) -> Result<WorkerConfig, Unavailable> {
    jail_config_for(
        runtime.cache().dir().to_path_buf(),
        runtime.programs_dir(),
        runtime.portable_target().is_some(),
        binary,
    )
}

/// As [`jail_config`], from the folders themselves.
pub(crate) fn jail_config_for(
    cache_dir: PathBuf,
    programs_dir: PathBuf,
    portable: bool,
    binary: Option<PathBuf>,
) -> Result<WorkerConfig, Unavailable> {
    let program = match binary {
        Some(path) => path,
        None => super::binaries::worker_binary()?,
    };
    let mut config = WorkerConfig::detect(program, vec!["worker".into()], cache_dir, programs_dir)
        .map_err(Unavailable::Host)?;
    config.portable = portable;
    Ok(config)
}
