//! Sandboxes their callers drive (API.md, "Sandboxes"): the door for
//! agents that bring their own loop.
//!
//! [`admit`] takes a sandbox as `lifecycle` takes a run — one store
//! transaction checks the idempotency claim and the organisation's runs
//! in flight (runs and sandboxes share the limit), reserves the budget
//! and stores the record (`sbx_…` in the runs table) with its first
//! event — then starts the sandbox and answers once it is up. From then
//! on the [`Session`] (`live.rs`) holds it: commands and file operations
//! one at a time, in order, until it ends — deleted, its lifetime or
//! idle timeout, its budget (before the cap is crossed), or its failure —
//! and is settled once, exactly as a run is. `files.rs` streams files in
//! and out.

mod files;
mod live;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

pub use files::WrittenFile;
pub use live::{CommandRequest, EndReason, Session, SessionError};

use crate::ids::new_sandbox_id;
use crate::lifecycle::{Refusal, idempotency_claim};
use crate::retention::expires_at;
use crate::run::{Permissions, RunRecord, RunStatus, Usage};
use crate::state::Edge;
use crate::store::{Created, NewRun, Org, StoreError};
use crate::timeline::{Event, EventKind};
use crate::timestamp::{now_ms, rfc3339};

/// What `POST /v1/sandboxes` asked for, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxRequest {
    pub max_cost_micros: i64,
    /// The sandbox's lifetime.
    pub timeout_seconds: u64,
    pub idle_timeout_seconds: u64,
    pub files: Vec<(String, Vec<u8>)>,
    pub zero_data_retention: bool,
    pub metadata: BTreeMap<String, String>,
}

/// The sandboxes this node holds, by id.
#[derive(Default)]
pub struct Sessions {
    live: Mutex<HashMap<String, Arc<Session>>>,
}

impl Sessions {
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.lock().get(id).cloned()
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn insert(&self, session: Arc<Session>) {
        self.lock().insert(session.id.clone(), session);
    }

    fn remove(&self, id: &str) {
        self.lock().remove(id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A sandbox request as admission takes it.
pub struct SandboxAsked<'a> {
    pub org: &'a Org,
    pub request: SandboxRequest,
    /// The body as parsed: what an `Idempotency-Key` is bound to.
    pub body: &'a Map<String, Value>,
    pub idempotency_key: Option<String>,
}

/// What admission gave.
pub enum SessionAdmission {
    /// A new sandbox: up, or ended `failed` if it could not start.
    Admitted(Arc<Session>),
    /// The key was used before with the same request: that sandbox.
    Replayed {
        id: String,
    },
    Refused(Refusal),
}

/// Takes a sandbox: its record and reservation in one transaction, then
/// its start, awaited.
pub async fn admit(
    edge: &Arc<Edge>,
    asked: SandboxAsked<'_>,
) -> Result<SessionAdmission, StoreError> {
    let SandboxAsked {
        org,
        request,
        body,
        idempotency_key,
    } = asked;
    let record = new_record(edge, org, &request);
    // A replay answers with the sandbox as it is then, not as it was.
    let claim = idempotency_key.map(|key| idempotency_claim(key, body, String::new()));
    let first = Event::new(
        1,
        EventKind::BudgetReserved,
        record.created_at,
        json!({"reserved_micros": record.reserved_micros}),
    );
    let new = NewRun {
        record: record.clone(),
        idempotency: claim,
        max_in_flight: i64::from(edge.config.limits.concurrent_runs),
        first_event: Some(first.to_stored()),
    };
    Ok(match edge.store.create_run(&new).await? {
        Created::Created => {
            tracing::info!(sandbox_id = %record.id, org = %org.id, "sandbox created");
            let session = Session::open(edge.clone(), record, first);
            edge.sessions.insert(session.clone());
            session.clone().start(request.files).await;
            SessionAdmission::Admitted(session)
        }
        Created::Replayed { run_id, .. } => SessionAdmission::Replayed { id: run_id },
        Created::KeyReused => SessionAdmission::Refused(Refusal::KeyReused),
        Created::InsufficientFunds { available } => {
            SessionAdmission::Refused(Refusal::InsufficientFunds {
                asked: request.max_cost_micros,
                available,
            })
        }
        Created::TooManyInFlight => SessionAdmission::Refused(Refusal::TooManyInFlight {
            limit: edge.config.limits.concurrent_runs,
        }),
    })
}

fn new_record(edge: &Edge, org: &Org, request: &SandboxRequest) -> RunRecord {
    let created_at = now_ms();
    let zdr = request.zero_data_retention || org.zero_data_retention;
    RunRecord {
        id: new_sandbox_id(),
        org_id: org.id.clone(),
        status: RunStatus::Queued,
        created_at,
        started_at: None,
        ended_at: None,
        expires_at: expires_at(created_at, edge.config.retention.days),
        model: String::new(),
        isolation: None,
        permissions: Permissions {
            shell: true,
            web: false,
            connections: Vec::new(),
            files: request.files.iter().map(|(p, _)| p.clone()).collect(),
            timeout_seconds: request.timeout_seconds,
            max_cost_micros: request.max_cost_micros,
            zero_data_retention: zdr,
            idle_timeout_seconds: Some(request.idle_timeout_seconds),
            outputs: Vec::new(),
        },
        usage: Usage::default(),
        reserved_micros: request.max_cost_micros,
        metered: Default::default(),
        settlement: None,
        output: None,
        error: None,
        metadata: request.metadata.clone(),
        prompt: None,
        node_id: edge.node_id.clone(),
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
