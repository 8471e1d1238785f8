//! The seam between the edge and a run's work. The edge reserves, starts
//! the sandbox, enforces the deadline, cancels, settles and writes the
//! run's first and last events; an `Executor` does the work in between:
//! it emits the events of what it does (`model.call`, `shell.*`, `web.*`)
//! and meters what it uses. The agent loop is one executor; `script` (the
//! prompt's lines run as shell commands, no model) is another.

mod meter;
mod script;
mod shell_tool;

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

pub use meter::Meter;
pub use script::ScriptExecutor;
pub use shell_tool::{OutputTap, Runs, ShellResult, run_command};

use crate::config::ModelConfig;
use crate::run::{Permissions, RunError};
use crate::sandbox::Sandbox;
use crate::timeline::RunEvents;

/// What a run was asked to do. Lives in memory only: under zero data
/// retention nothing here reaches the store.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub run_id: String,
    pub prompt: String,
    /// The catalogue id of the run's model, and its entry.
    pub model_id: String,
    pub model: ModelConfig,
    pub permissions: Permissions,
}

/// Everything an executor may touch.
pub struct RunContext {
    pub spec: RunSpec,
    pub events: RunEvents,
    pub meter: Meter,
    /// The run's sandbox: there is one only when the shell is on.
    pub sandbox: Option<Box<dyn Sandbox>>,
    /// When the run must end.
    pub deadline: Instant,
}

/// How the executor's part of a run ended (deadline, cancel and budget are
/// the edge's to decide).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Succeeded {
        output: String,
    },
    Failed(RunError),
    /// Nothing useful fits in what is left of the budget.
    BudgetExceeded(String),
}

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

pub trait Executor: Send + Sync {
    fn execute<'a>(&'a self, run: &'a RunContext) -> BoxFuture<'a, Outcome>;
}

/// A model this server cannot call (no key, unknown provider): the run
/// fails with the reason and is settled like any other.
pub struct Unavailable(pub String);

impl Executor for Unavailable {
    fn execute<'a>(&'a self, _run: &'a RunContext) -> BoxFuture<'a, Outcome> {
        Box::pin(
            async move { Outcome::Failed(RunError::new("provider_unavailable", self.0.clone())) },
        )
    }
}
