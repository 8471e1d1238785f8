//! The agent: an LLM (or the scripted model) driving the run's sandbox
//! through tools, under the run's budget and deadline.
//!
//! Each step: price the worst case of the next model call and lower
//! `max_tokens` until it fits what is left (or end `budget_exceeded`),
//! call the model, meter what it reports (capped at what was left), then
//! run the tool calls in order and give their outputs back, truncated with
//! a note. A reply without tool calls is the answer.

pub mod budget;
pub mod openai;
pub mod prompt;
pub mod scripted;
pub mod transcript;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::broker::{Broker, ConnectionCall};
use crate::config::ConnectionConfig;
use crate::executor::{BoxFuture, Executor, Outcome, RunContext};
use crate::run::RunError;
use budget::{Prices, estimate_tokens};
use transcript::{Step, ToolCall, ToolOutput, Transcript};

/// Model calls a run may make.
pub const MAX_STEPS: usize = 24;
/// A shell command's time limit when the model gives none, and the most it may ask.
const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
const MAX_COMMAND_TIMEOUT: Duration = Duration::from_secs(300);
/// Tool output given back to the model; more is cut in the middle.
const MAX_TOOL_OUTPUT: usize = 16_000;

#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{0}")]
    Retryable(String),
    #[error("{0}")]
    Provider(String),
    #[error("the provider's response is malformed: {0}")]
    Protocol(String),
}

/// One model call's input.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    pub upstream: String,
    pub messages: Vec<Value>,
    pub tools: Vec<Value>,
    pub max_tokens: u32,
}

/// One model call's output.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelTurn {
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    /// `(input, output)` tokens as the provider reported them.
    pub usage: Option<(i64, i64)>,
}

/// Where a model's turns come from.
pub enum ModelBackend {
    OpenAi(openai::OpenAiClient),
    Scripted(scripted::Script),
}

pub struct AgentExecutor {
    pub backend: ModelBackend,
    pub broker: Arc<Broker>,
    pub prices: Prices,
    pub max_output_tokens: u32,
    /// The connections the request named, with their configuration.
    pub connections: Vec<(String, ConnectionConfig)>,
}

impl Executor for AgentExecutor {
    fn execute<'a>(&'a self, run: &'a RunContext) -> BoxFuture<'a, Outcome> {
        Box::pin(self.run(run))
    }
}

impl AgentExecutor {
    async fn run(&self, run: &RunContext) -> Outcome {
        let permissions = &run.spec.permissions;
        let mut transcript = Transcript {
            system: prompt::system(permissions),
            user: run.spec.prompt.clone(),
            steps: Vec::new(),
        };
        let tools = prompt::tools(permissions, &self.connections);
        let tools_chars: usize = tools.iter().map(|t| t.to_string().len()).sum();
        for n in 1..=MAX_STEPS {
            let prompt_tokens = estimate_tokens(transcript.chars() + tools_chars);
            let remaining = run.meter.remaining();
            let Some(max_tokens) =
                self.prices
                    .fit_max_tokens(prompt_tokens, self.max_output_tokens, remaining)
            else {
                return Outcome::BudgetExceeded(format!(
                    "the {remaining} micros left cannot pay for another model call (about {prompt_tokens} prompt tokens)"
                ));
            };
            let request = ModelRequest {
                upstream: run.spec.model.upstream.clone(),
                messages: transcript.messages(),
                tools: tools.clone(),
                max_tokens,
            };
            let started = Instant::now();
            let turn = match self.call(&request, &transcript, run.deadline).await {
                Ok(turn) => turn,
                Err(e) => return Outcome::Failed(RunError::new("provider_error", e.to_string())),
            };
            self.meter_call(run, n, &turn, prompt_tokens, started.elapsed())
                .await;
            if turn.tool_calls.is_empty() {
                return Outcome::Succeeded {
                    output: turn.content,
                };
            }
            transcript.steps.push(Step::Assistant {
                content: turn.content.clone(),
                tool_calls: turn.tool_calls.clone(),
            });
            for call in &turn.tool_calls {
                let output = self.run_tool(run, call).await;
                transcript.steps.push(Step::Tool {
                    call_id: call.id.clone(),
                    output,
                });
            }
        }
        Outcome::Failed(RunError::new(
            "step_limit",
            format!("the agent made {MAX_STEPS} model calls without answering"),
        ))
    }

    async fn call(
        &self,
        request: &ModelRequest,
        transcript: &Transcript,
        deadline: Instant,
    ) -> Result<ModelTurn, ModelError> {
        match &self.backend {
            ModelBackend::OpenAi(client) => client.complete(request, deadline).await,
            ModelBackend::Scripted(script) => script.next_turn(transcript),
        }
    }

    /// Meters a call at what the provider reported, never past the budget.
    async fn meter_call(
        &self,
        run: &RunContext,
        n: usize,
        turn: &ModelTurn,
        prompt_tokens: i64,
        took: Duration,
    ) {
        let output_chars = turn.content.len()
            + turn
                .tool_calls
                .iter()
                .map(|c| c.arguments.len() + c.name.len())
                .sum::<usize>();
        let (input, output) = turn
            .usage
            .unwrap_or((prompt_tokens, estimate_tokens(output_chars)));
        let cost = self.prices.cost(input, output);
        let charged = cost.min(run.meter.remaining().max(0));
        if charged < cost {
            tracing::warn!(run_id = %run.spec.run_id, cost, charged, "model call cost more than the budget left: charge capped");
        }
        run.meter.model_call(input, output, charged);
        run.events
            .emit(
                "model.call",
                json!({
                    "n": n,
                    "model": run.spec.model_id,
                    "input_tokens": input,
                    "output_tokens": output,
                    "cost_micros": charged,
                    "duration_ms": took.as_millis() as u64,
                }),
            )
            .await;
    }

    async fn run_tool(&self, run: &RunContext, call: &ToolCall) -> ToolOutput {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let permissions = &run.spec.permissions;
        match call.name.as_str() {
            "shell" if permissions.shell => match args["command"].as_str() {
                Some(command) => shell(run, call, command, &args).await,
                None => refusal("the shell tool needs {\"command\": \"…\"}"),
            },
            "web_fetch" if permissions.web => match args["url"].as_str() {
                Some(url) => self.broker.web_fetch(run, &call.id, url).await,
                None => refusal("web_fetch needs {\"url\": \"…\"}"),
            },
            "shell" | "web_fetch" => refusal(&format!(
                "the {} tool is not allowed in this run",
                call.name
            )),
            name if name.starts_with("conn_") => self.connection(run, call, &args).await,
            other => refusal(&format!("there is no tool named {other:?}")),
        }
    }
}

impl AgentExecutor {
    async fn connection(&self, run: &RunContext, call: &ToolCall, args: &Value) -> ToolOutput {
        let Some((name, conn)) = self
            .connections
            .iter()
            .find(|(n, _)| prompt::connection_tool(n) == call.name)
        else {
            return refusal(&format!(
                "there is no connection behind {:?} in this run",
                call.name
            ));
        };
        let (Some(method), Some(path)) = (args["method"].as_str(), args["path"].as_str()) else {
            return refusal("a connection call needs {\"method\": \"…\", \"path\": \"…\"}");
        };
        let request = ConnectionCall {
            name,
            method,
            path,
            body: args["body"].as_str(),
        };
        self.broker
            .call_connection(run, &call.id, conn, request)
            .await
    }
}

async fn shell(run: &RunContext, call: &ToolCall, command: &str, args: &Value) -> ToolOutput {
    let asked = args["timeout_seconds"]
        .as_u64()
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_COMMAND_TIMEOUT);
    let left = run.deadline.saturating_duration_since(Instant::now());
    let timeout = asked
        .min(MAX_COMMAND_TIMEOUT)
        .min(left)
        .max(Duration::from_millis(1));
    let result = run.shell(&call.id, command, timeout).await;
    let mut text = format!("exit code: {}\n", result.exit_code);
    if let Some(limit) = &result.limit {
        text.push_str(&format!("limit hit: {limit}\n"));
    }
    // One sequence, as a terminal shows it: which lines were errors is
    // told by their order next to the rest, not by two separate buffers.
    text.push_str("output (stdout and stderr, in the order written):\n");
    text.push_str(&result.output);
    ToolOutput {
        stdout: result.stdout,
        stderr: result.stderr,
        exit_code: i64::from(result.exit_code),
        for_model: truncate_for_model(&text),
        refused: false,
    }
}

fn refusal(message: &str) -> ToolOutput {
    ToolOutput {
        stderr: message.to_string(),
        exit_code: 1,
        for_model: format!("error: {message}"),
        refused: true,
        ..Default::default()
    }
}

/// Keeps the start and the end of a long output, saying what was cut.
pub fn truncate_for_model(text: &str) -> String {
    if text.len() <= MAX_TOOL_OUTPUT {
        return text.to_string();
    }
    let half = MAX_TOOL_OUTPUT / 2;
    let head_end = (0..=half)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let tail_start = (text.len() - half..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    let omitted = tail_start - head_end;
    format!(
        "{}\n[… {omitted} bytes omitted: the output was {} bytes; narrow the command (head, grep, tail) to see more …]\n{}",
        &text[..head_end],
        text.len(),
        &text[tail_start..]
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_outputs_keep_both_ends_with_a_note() {
        let text = format!("{}{}", "a".repeat(20_000), "zend");
        let cut = super::truncate_for_model(&text);
        assert!(cut.len() < 17_000);
        assert!(cut.starts_with("aaa") && cut.ends_with("zend"));
        assert!(cut.contains("bytes omitted"));
        assert_eq!(super::truncate_for_model("short"), "short");
    }
}
