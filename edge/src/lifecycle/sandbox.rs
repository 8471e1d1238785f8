//! A sandbox's admission: taken as a run is — one store transaction
//! checks the idempotency claim and the organisation's runs in flight
//! (runs and sandboxes share the limit), reserves the budget and stores
//! the record (`sbx_…` in the runs table) with its first event — then
//! started, and answered once it is up. From then on its `Session` holds
//! it.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{Refusal, idempotency_claim};
use crate::ids::new_sandbox_id;
use crate::retention::expires_at;
use crate::run::{Permissions, RunRecord, RunStatus, Usage};
use crate::session::{SandboxRequest, Session};
use crate::state::Edge;
use crate::store::{Created, NewRun, Org, StoreError};
use crate::timeline::{Event, EventKind};
use crate::timestamp::now_ms;

/// A sandbox request as admission takes it.
pub struct SandboxAsked<'a> {
    /// The organisation asking.
    pub org: &'a Org,
    /// The request, checked.
    pub request: SandboxRequest,
    /// The body as parsed: what an `Idempotency-Key` is bound to.
    pub body: &'a Map<String, Value>,
    /// The `Idempotency-Key` header, if sent.
    pub idempotency_key: Option<String>,
}

/// What admission gave.
pub enum SessionAdmission {
    /// A new sandbox: up, or ended `failed` if it could not start.
    Admitted(Arc<Session>),
    /// The key was used before with the same request: that sandbox.
    Replayed {
        /// The sandbox the key created.
        id: String,
    },
    /// Not taken, and why.
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
        request: (!record.permissions.zero_data_retention)
            .then(|| Value::Object(body.clone()).to_string()),
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
