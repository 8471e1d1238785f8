//! A run as the store keeps it and the API shows it (API.md, "The run object").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use crate::ledger::Metered;
use crate::ledger::Settlement;
use crate::timestamp::rfc3339;

/// Where a run (or sandbox) is in its life; all but `queued` and `running` are
/// final.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Admitted; not started yet.
    Queued,
    /// Started (`started_at` is set).
    Running,
    /// Ended with an answer.
    Succeeded,
    /// Ended by a failure: the model's, the sandbox's or the server's.
    Failed,
    /// Ran out of time (a sandbox: its lifetime or its idle timeout).
    TimedOut,
    /// Stopped before its cost would cross `max_cost_micros`.
    BudgetExceeded,
    /// Cancelled (a sandbox: deleted).
    Cancelled,
}

impl RunStatus {
    /// The API's name for it (`timed_out`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed => "failed",
            RunStatus::TimedOut => "timed_out",
            RunStatus::BudgetExceeded => "budget_exceeded",
            RunStatus::Cancelled => "cancelled",
        }
    }

    /// The status the API names `s`.
    pub fn parse(s: &str) -> Option<RunStatus> {
        RunStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
    }

    /// Every status.
    pub const ALL: [RunStatus; 7] = [
        RunStatus::Queued,
        RunStatus::Running,
        RunStatus::Succeeded,
        RunStatus::Failed,
        RunStatus::TimedOut,
        RunStatus::BudgetExceeded,
        RunStatus::Cancelled,
    ];

    /// Whether the run has ended: every status but `queued` and `running`.
    pub fn is_terminal(self) -> bool {
        !matches!(self, RunStatus::Queued | RunStatus::Running)
    }
}

/// What `POST /v1/runs` asked for, checked (API.md: every field's rule).
#[derive(Debug, Clone, PartialEq)]
pub struct RunRequest {
    /// The task for the agent.
    pub prompt: String,
    /// Whether the agent may run commands (in a sandbox).
    pub shell: bool,
    /// Whether the agent may use `web_fetch`.
    pub web: bool,
    /// Wall time of the whole run.
    pub timeout_seconds: u64,
    /// The budget: the most the run may be charged.
    pub max_cost_micros: i64,
    /// The model's catalogue id.
    pub model: String,
    /// Connections the agent may call, by name.
    pub connections: Vec<String>,
    /// Files written into the sandbox before the agent starts: path and bytes.
    pub files: Vec<(String, Vec<u8>)>,
    /// Glob patterns of the files collected when the agent is done.
    pub outputs: Vec<String>,
    /// Whether the store keeps none of its content (prompt, commands, output).
    pub zero_data_retention: bool,
    /// The caller's key-value pairs, kept with the run.
    pub metadata: BTreeMap<String, String>,
}

/// What the request allowed; echoed in the run object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Permissions {
    /// Commands in a sandbox.
    pub shell: bool,
    /// `web_fetch`.
    pub web: bool,
    /// Connections, by name.
    pub connections: Vec<String>,
    /// Paths of the files written before the agent starts.
    pub files: Vec<String>,
    /// Its wall-time limit (a sandbox: its lifetime).
    pub timeout_seconds: u64,
    /// Its budget.
    pub max_cost_micros: i64,
    /// Asked for, or forced by the organisation.
    pub zero_data_retention: bool,
    /// A sandbox's: ended after this long without a request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_seconds: Option<u64>,
    /// A run's `outputs`: glob patterns of the files collected at its end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<String>,
}

/// What a run's model calls used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Calls to the model.
    pub model_calls: i64,
    /// Tokens the model read, all calls together.
    pub input_tokens: i64,
    /// Tokens the model wrote, all calls together.
    pub output_tokens: i64,
}

/// Why a run failed, as the run object's `error` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunError {
    /// A stable code (`provider_error`, `sandbox_failed`, ...).
    pub code: String,
    /// What happened, for a person.
    pub message: String,
}

impl RunError {
    /// An error with `code` and `message`.
    pub fn new(code: &str, message: impl Into<String>) -> RunError {
        RunError {
            code: code.to_string(),
            message: message.into(),
        }
    }
}

/// One run, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    /// `run_…` or `sbx_…`.
    pub id: String,
    /// The organisation it belongs to.
    pub org_id: String,
    /// Where it is in its life.
    pub status: RunStatus,
    /// When it was admitted, in ms since the Unix epoch.
    pub created_at: i64,
    /// When it started (its sandbox up, if it has one), in ms since the Unix
    /// epoch.
    pub started_at: Option<i64>,
    /// When it ended, in ms since the Unix epoch.
    pub ended_at: Option<i64>,
    /// When retention deletes it, in ms since the Unix epoch.
    pub expires_at: i64,
    /// The model's catalogue id.
    pub model: String,
    /// `wasm`, `jail+wasm`, `kvm+wasm`, or `none` without a sandbox; unset
    /// until started.
    pub isolation: Option<String>,
    /// What the request allowed.
    pub permissions: Permissions,
    /// What its model calls used.
    pub usage: Usage,
    /// The budget held for it.
    pub reserved_micros: i64,
    /// What it has used so far, by kind.
    pub metered: Metered,
    /// Set once settled.
    pub settlement: Option<Settlement>,
    /// The agent's final answer.
    pub output: Option<String>,
    /// Why it failed, if it did.
    pub error: Option<RunError>,
    /// The caller's key-value pairs.
    pub metadata: BTreeMap<String, String>,
    /// The request's prompt; `None` under zero data retention.
    pub prompt: Option<String>,
    /// The node that runs it (another node adopts it if this one dies).
    pub node_id: String,
}

impl RunRecord {
    /// The run object of API.md.
    pub fn to_json(&self) -> Value {
        let cost = match &self.settlement {
            Some(s) => json!({
                "reserved_micros": s.reserved,
                "charged_micros": s.charged,
                "released_micros": s.released,
                "model_micros": s.model,
                "web_micros": s.web,
                "compute_micros": s.compute,
            }),
            None => json!({
                "reserved_micros": self.reserved_micros,
                "charged_micros": 0,
                "released_micros": 0,
                "model_micros": self.metered.model_micros,
                "web_micros": self.metered.web_micros,
                "compute_micros": self.metered.compute_micros,
            }),
        };
        json!({
            "id": self.id,
            "object": "run",
            "status": self.status.as_str(),
            "created_at": rfc3339(self.created_at),
            "started_at": self.started_at.map(rfc3339),
            "ended_at": self.ended_at.map(rfc3339),
            "expires_at": rfc3339(self.expires_at),
            "model": self.model,
            "isolation": self.isolation,
            "permissions": self.permissions,
            "usage": {
                "model_calls": self.usage.model_calls,
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
                "total_tokens": self.usage.input_tokens + self.usage.output_tokens,
            },
            "cost": cost,
            "output": self.output,
            "error": self.error,
            "metadata": self.metadata,
        })
    }
}
