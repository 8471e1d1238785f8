//! Runs a node left in flight: after a crash (`kill -9`) the node finds its
//! own on start, and any node finds a silent node's through the heartbeat.
//! Each is ended `failed` with error `interrupted` (a sandbox: `end_reason`
//! `failed`) and settled from the usage metered so far, so the ledger's
//! invariants hold.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::ids::RecordKind;
use crate::run::{RunError, RunRecord, RunStatus};
use crate::state::Edge;
use crate::store::{Finish, StoredEvent};
use crate::timeline::{Event, EventKind, destroyed_data, outcome_data};
use crate::timestamp::now_ms;

/// How often a node says it is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(2);
/// Silence after which a node is presumed dead and its runs are settled.
pub const NODE_DEAD_AFTER: Duration = Duration::from_secs(10);

/// Settles this node's runs left from before the start.
pub async fn recover_own(edge: &Edge) -> usize {
    let runs = match edge.store.in_flight_on(&edge.node_id).await {
        Ok(runs) => runs,
        Err(e) => {
            tracing::error!(error = %e, "cannot list interrupted runs");
            return 0;
        }
    };
    let mut settled = 0;
    for run in runs {
        if edge.hub.get(&run.id).is_none() && settle_interrupted(edge, &run).await {
            settled += 1;
        }
    }
    if settled > 0 {
        tracing::warn!(settled, "settled runs interrupted by a restart");
    }
    settled
}

/// Beats, and settles the runs of nodes that stopped beating.
pub async fn heartbeat_loop(edge: Arc<Edge>) {
    let mut interval = tokio::time::interval(HEARTBEAT);
    loop {
        interval.tick().await;
        let now = now_ms();
        let stale_before = now - NODE_DEAD_AFTER.as_millis() as i64;
        let dead = match edge.store.heartbeat(&edge.node_id, now, stale_before).await {
            Ok(dead) => dead,
            Err(e) => {
                tracing::warn!(error = %e, "heartbeat failed");
                continue;
            }
        };
        for node in dead {
            adopt(&edge, &node).await;
        }
    }
}

/// Takes over a silent node's runs and settles them. Only those runs: this
/// node's own in flight may include one created a moment ago and not yet
/// registered, which `recover_own` would take for a crash's leftover.
async fn adopt(edge: &Edge, node: &str) {
    let runs = match edge.store.in_flight_on(node).await {
        Ok(runs) => runs,
        Err(e) => return tracing::warn!(node, error = %e, "cannot list a silent node's runs"),
    };
    match edge.store.adopt_runs(node, &edge.node_id).await {
        // Another node adopted them first (and settles them).
        Ok(0) => {}
        Ok(n) => {
            tracing::warn!(node, runs = n, "node is silent: settling its runs");
            for run in &runs {
                // At most once, whoever else tries: `finish_run` says.
                settle_interrupted(edge, run).await;
            }
        }
        Err(e) => tracing::warn!(node, error = %e, "cannot adopt runs"),
    }
}

async fn settle_interrupted(edge: &Edge, run: &RunRecord) -> bool {
    let sandbox = RecordKind::of(&run.id) == Some(RecordKind::Sandbox);
    let error = match sandbox {
        true => RunError::new("failed", "the server stopped while the sandbox was running"),
        false => RunError::new(
            "interrupted",
            "the server stopped while the run was in flight",
        ),
    };
    let finish = Finish {
        status: RunStatus::Failed,
        output: None,
        error: Some(error.clone()),
        ended_at: now_ms(),
        usage: run.usage,
        metered: run.metered,
    };
    let settlement = match edge.store.finish_run(&run.id, &finish).await {
        Ok(Some(s)) => s,
        Ok(None) => return false,
        Err(e) => {
            tracing::error!(run_id = %run.id, error = %e, "cannot settle an interrupted run");
            return false;
        }
    };
    let last = edge.store.last_seq(&run.id).await.unwrap_or(0);
    let (ending, outcome) = match sandbox {
        true => (EventKind::SandboxEnded, json!({"end_reason": "failed"})),
        false => (
            EventKind::ending(RunStatus::Failed),
            outcome_data(&run.usage, None, Some(&error)),
        ),
    };
    let events = [
        Event::new(last + 1, ending, run.created_at, outcome),
        Event::new(
            last + 2,
            EventKind::WorkerDestroyed,
            run.created_at,
            destroyed_data(&settlement),
        ),
    ];
    for event in events {
        let stored: StoredEvent = event.to_stored();
        if let Err(e) = edge.store.append_event(&run.id, &stored).await {
            tracing::error!(run_id = %run.id, error = %e, "cannot store the interrupted run's last events");
        }
    }
    edge.metrics.run_ended(RunStatus::Failed, Duration::ZERO);
    true
}
