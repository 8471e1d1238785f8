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
mod tools;
pub mod transcript;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::broker::Broker;
use crate::config::ConnectionConfig;
use crate::executor::{BoxFuture, Executor, Outcome, RunContext};
use crate::run::RunError;
use crate::timeline::EventKind;
use budget::{Prices, estimate_tokens};
use transcript::{Step, ToolCall, ToolOutput, Transcript};

/// Model calls a run may make.
pub const MAX_STEPS: usize = 24;

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
    Scripted(Arc<scripted::Script>),
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
                EventKind::ModelCall,
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
        tools::run(&self.broker, &self.connections, run, call).await
    }
}
