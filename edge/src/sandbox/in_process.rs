//! Sandboxes on threads of the server itself (isolation `wasm`, for
//! development): the worker's own loop over a socket pair, so they behave
//! exactly as a jailed worker's, without the jail.

use std::sync::Arc;
use std::time::Duration;

use ephemeral_runtime::{Limits, Runtime};
use ephemeral_worker::IdleWorker;

use super::{BoxFuture, Sandbox, SandboxError, SandboxSource};
use crate::isolation::Isolation;

/// How long a thread's worker may take to be ready (it loads nothing the
/// runtime has not loaded already).
const READY_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) struct InProcess {
    pub(crate) runtime: Arc<Runtime>,
}

impl SandboxSource for InProcess {
    fn isolation(&self) -> Isolation {
        Isolation::Wasm
    }

    fn start(
        &self,
        limits: Limits,
        files: Vec<(String, Vec<u8>)>,
    ) -> BoxFuture<'_, Result<Box<dyn Sandbox>, SandboxError>> {
        Box::pin(async move {
            let start = |e: &dyn std::fmt::Display| SandboxError::Start(e.to_string());
            let worker = IdleWorker::in_process(self.runtime.clone(), READY_TIMEOUT)
                .await
                .map_err(|e| start(&e))?;
            let handle = worker.start(limits, files).await.map_err(|e| start(&e))?;
            Ok(Box::new(handle) as Box<dyn Sandbox>)
        })
    }
}
