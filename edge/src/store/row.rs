//! Between a `runs` row and a `RunRecord`: the JSON columns and the status
//! text, shared by both backends.

use std::collections::BTreeMap;

use super::{Result, StoreError};
use crate::ledger::Settlement;
use crate::run::{Metered, Permissions, RunError, RunRecord, RunStatus, Usage};

/// A `runs` row read column by column (see `schema::RUN_COLUMNS`).
pub struct RunRow {
    pub id: String,
    pub org_id: String,
    pub status: String,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub ended_at: Option<i64>,
    pub expires_at: i64,
    pub model: String,
    pub isolation: Option<String>,
    pub permissions: String,
    pub metadata: String,
    pub prompt: Option<String>,
    pub output: Option<String>,
    pub error: Option<String>,
    pub reserved_micros: i64,
    pub metered: [i64; 3],
    pub usage: [i64; 3],
    pub settlement: Option<String>,
    pub node_id: String,
}

fn corrupt(what: &str, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what}: {e}"))
}

impl RunRow {
    pub fn into_record(self) -> Result<RunRecord> {
        let status =
            RunStatus::parse(&self.status).ok_or_else(|| corrupt("status", &self.status))?;
        let permissions: Permissions =
            serde_json::from_str(&self.permissions).map_err(|e| corrupt("permissions", e))?;
        let metadata: BTreeMap<String, String> =
            serde_json::from_str(&self.metadata).map_err(|e| corrupt("metadata", e))?;
        let error: Option<RunError> = match &self.error {
            Some(text) => Some(serde_json::from_str(text).map_err(|e| corrupt("error", e))?),
            None => None,
        };
        let settlement: Option<Settlement> = match &self.settlement {
            Some(text) => Some(serde_json::from_str(text).map_err(|e| corrupt("settlement", e))?),
            None => None,
        };
        Ok(RunRecord {
            id: self.id,
            org_id: self.org_id,
            status,
            created_at: self.created_at,
            started_at: self.started_at,
            ended_at: self.ended_at,
            expires_at: self.expires_at,
            model: self.model,
            isolation: self.isolation,
            permissions,
            usage: Usage {
                model_calls: self.usage[0],
                input_tokens: self.usage[1],
                output_tokens: self.usage[2],
            },
            reserved_micros: self.reserved_micros,
            metered: Metered {
                model_micros: self.metered[0],
                web_micros: self.metered[1],
                compute_micros: self.metered[2],
            },
            settlement,
            output: self.output,
            error,
            metadata,
            prompt: self.prompt,
            node_id: self.node_id,
        })
    }
}

/// The JSON columns of a new run.
pub fn json_columns(record: &RunRecord) -> (String, String) {
    let permissions = serde_json::to_string(&record.permissions).unwrap_or_else(|_| "{}".into());
    let metadata = serde_json::to_string(&record.metadata).unwrap_or_else(|_| "{}".into());
    (permissions, metadata)
}

pub fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

/// A stored file's content (base64 text) as bytes.
pub fn file_content(text: &str) -> Result<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| corrupt("file content", e))
}

/// A file's bytes as stored.
pub fn stored_content(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}
