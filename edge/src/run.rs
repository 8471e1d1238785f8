//! A run as the store keeps it and the API shows it (API.md, "The run object").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use crate::ledger::Metered;
use crate::ledger::Settlement;
use crate::timestamp::rfc3339;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Queued,
    Running,
    Succeeded,
    Failed,
    TimedOut,
    BudgetExceeded,
    Cancelled,
}

impl RunStatus {
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

    pub fn parse(s: &str) -> Option<RunStatus> {
        RunStatus::ALL
            .into_iter()
            .find(|status| status.as_str() == s)
    }

    pub const ALL: [RunStatus; 7] = [
        RunStatus::Queued,
        RunStatus::Running,
        RunStatus::Succeeded,
        RunStatus::Failed,
        RunStatus::TimedOut,
        RunStatus::BudgetExceeded,
        RunStatus::Cancelled,
    ];

    pub fn is_terminal(self) -> bool {
        !matches!(self, RunStatus::Queued | RunStatus::Running)
    }
}

/// What `POST /v1/runs` asked for, checked (API.md: every field's rule).
#[derive(Debug, Clone, PartialEq)]
pub struct RunRequest {
    pub prompt: String,
    pub shell: bool,
    pub web: bool,
    pub timeout_seconds: u64,
    pub max_cost_micros: i64,
    pub model: String,
    pub connections: Vec<String>,
    pub files: Vec<(String, Vec<u8>)>,
    /// Glob patterns of the files collected when the agent is done.
    pub outputs: Vec<String>,
    pub zero_data_retention: bool,
    pub metadata: BTreeMap<String, String>,
}

/// What the request allowed; echoed in the run object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Permissions {
    pub shell: bool,
    pub web: bool,
    pub connections: Vec<String>,
    /// Paths of the files written before the agent starts.
    pub files: Vec<String>,
    pub timeout_seconds: u64,
    pub max_cost_micros: i64,
    pub zero_data_retention: bool,
    /// A sandbox's: ended after this long without a request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_seconds: Option<u64>,
    /// A run's `outputs`: glob patterns of the files collected at its end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub model_calls: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunError {
    pub code: String,
    pub message: String,
}

impl RunError {
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
    pub id: String,
    pub org_id: String,
    pub status: RunStatus,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub ended_at: Option<i64>,
    pub expires_at: i64,
    pub model: String,
    pub isolation: Option<String>,
    pub permissions: Permissions,
    pub usage: Usage,
    pub reserved_micros: i64,
    pub metered: Metered,
    /// Set once settled.
    pub settlement: Option<Settlement>,
    pub output: Option<String>,
    pub error: Option<RunError>,
    pub metadata: BTreeMap<String, String>,
    /// The request's prompt; `None` under zero data retention.
    pub prompt: Option<String>,
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
