//! Sandboxes their callers drive (API.md, "Sandboxes"): the door for
//! agents that bring their own loop.
//!
//! `lifecycle::sandbox` admits a sandbox as a run is admitted, then hands
//! it to a [`Session`] (`live.rs`), which holds it: commands and file operations
//! one at a time, in order, until it ends — deleted, its lifetime or
//! idle timeout, its budget (before the cap is crossed), or its failure —
//! and is settled once, exactly as a run is. `files.rs` streams files in
//! and out.

mod files;
mod live;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

pub use files::WrittenFile;
pub use live::{CommandRequest, EndReason, Session, SessionError};

use crate::broker::Scrubber;
use crate::config::PricesConfig;
use crate::in_flight::InFlight;
use crate::metrics::Metrics;
use crate::run::RunRecord;
use crate::sandbox::SandboxSource;
use crate::store::Store;
use crate::timeline::Hub;
use crate::timestamp::rfc3339;

/// What `POST /v1/sandboxes` asked for, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxRequest {
    /// The budget: the most it may be charged.
    pub max_cost_micros: i64,
    /// The sandbox's lifetime.
    pub timeout_seconds: u64,
    /// It ends after this long without a request.
    pub idle_timeout_seconds: u64,
    /// Files written before it is answered: path and bytes.
    pub files: Vec<(String, Vec<u8>)>,
    /// Whether the store keeps none of its content.
    pub zero_data_retention: bool,
    /// The caller's key-value pairs, kept with the sandbox.
    pub metadata: BTreeMap<String, String>,
}

/// What a session needs of the node that holds it (`state::Edge` is
/// one): named here, so that sessions sit below the node's state, which
/// holds them, rather than in a circle with it.
pub trait Node: Send + Sync {
    /// Where the session's record and events go.
    fn store(&self) -> &Arc<dyn Store>;
    /// Live timelines.
    fn hub(&self) -> &Hub;
    /// Cuts the broker's secrets out of the session's events.
    fn scrubber(&self) -> Arc<Scrubber>;
    /// Where its sandbox comes from.
    fn sandboxes(&self) -> &dyn SandboxSource;
    /// Where it is registered while in flight (and hears the node's drain).
    fn in_flight(&self) -> &InFlight;
    /// The node's metrics.
    fn metrics(&self) -> &Metrics;
    /// What its compute and memory cost.
    fn prices(&self) -> &PricesConfig;
    /// This node's sessions, where it is listed while it lives.
    fn sessions(&self) -> &Sessions;
}

/// The sandboxes this node holds, by id.
#[derive(Default)]
pub struct Sessions {
    live: Mutex<HashMap<String, Arc<Session>>>,
}

impl Sessions {
    /// The session of sandbox `id`, if this node holds it.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.lock().get(id).cloned()
    }

    /// Sessions this node holds.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn insert(&self, session: Arc<Session>) {
        self.lock().insert(session.id.clone(), session);
    }

    fn remove(&self, id: &str) {
        self.lock().remove(id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The sandbox object (docs/api-shapes.md) of a stored record; while it
/// runs, `compute_so_far` is what its session metered (the record's is at
/// most a tick old).
pub fn sandbox_json(record: &RunRecord, compute_so_far: Option<i64>) -> Value {
    let p = &record.permissions;
    let limits = ephemeral_runtime::Limits::default();
    let ended = record.status.is_terminal();
    let cost = match &record.settlement {
        Some(s) => json!({
            "reserved_micros": s.reserved,
            "charged_micros": s.charged,
            "released_micros": s.released,
            "compute_micros": s.compute,
        }),
        None => json!({
            "reserved_micros": record.reserved_micros,
            "charged_micros": 0,
            "released_micros": 0,
            "compute_micros": compute_so_far.unwrap_or(record.metered.compute_micros),
        }),
    };
    let lifetime_ms = i64::try_from(p.timeout_seconds.saturating_mul(1000)).unwrap_or(i64::MAX);
    json!({
        "id": record.id,
        "object": "sandbox",
        "status": if ended { "ended" } else { "running" },
        "isolation": record.isolation,
        "created_at": rfc3339(record.created_at),
        "expires_at": rfc3339(record.created_at.saturating_add(lifetime_ms)),
        "ended_at": record.ended_at.map(rfc3339),
        "end_reason": if ended { record.error.as_ref().map(|e| e.code.clone()) } else { None },
        "limits": {
            "timeout_seconds": p.timeout_seconds,
            "idle_timeout_seconds": p.idle_timeout_seconds,
            "command_timeout_seconds": limits.command_timeout.as_secs(),
            "memory_bytes": limits.memory_bytes,
            "output_bytes": limits.output_bytes,
            "disk_bytes": limits.disk_bytes,
            "disk_files": limits.disk_files,
        },
        "cost": cost,
        "metadata": record.metadata,
    })
}
