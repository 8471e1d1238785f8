//! The `script` executor (model `ephemeral/script`): no model at all; each
//! non-empty line of the prompt that is not a `#` comment is run as a shell
//! command, in order, and the answer is what the commands printed. For
//! tests, benchmarks and trying a server without a provider key.

use std::time::{Duration, Instant};

use super::{BoxFuture, Executor, Outcome, RunContext};
use crate::run::RunError;

/// Each command's time limit when the run has more left.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

pub struct ScriptExecutor;

impl Executor for ScriptExecutor {
    fn execute<'a>(&'a self, run: &'a RunContext) -> BoxFuture<'a, Outcome> {
        Box::pin(async move {
            if !run.spec.permissions.shell || run.sandbox.is_none() {
                return Outcome::Failed(RunError::new(
                    "shell_disabled",
                    "the script model runs shell commands, and this run has the shell off",
                ));
            }
            let mut output = String::new();
            let commands = run
                .spec
                .prompt
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'));
            for (n, command) in commands.enumerate() {
                let left = run.deadline.saturating_duration_since(Instant::now());
                let result = run
                    .shell(
                        &format!("call_{}", n + 1),
                        command,
                        left.min(COMMAND_TIMEOUT),
                    )
                    .await;
                output.push_str(&result.stdout);
            }
            Outcome::Succeeded { output }
        })
    }
}
