//! Writing a run's timeline: each event gets the next sequence number, is
//! appended to the store, then handed to live readers, in that order, so a
//! reader that falls back to the store never misses what it saw live.
//!
//! Under zero data retention only events without user content reach the
//! store (and `output` is left out of the outcome event); live readers
//! still get everything.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::Mutex;

use crate::store::Store;
use crate::timeline::{Event, LiveTimeline};

/// Events a zero-data-retention run may store: billing figures and status.
const ZDR_STORED: &[&str] = &[
    "budget.reserved",
    "vm.ready",
    "worker.started",
    "model.call",
    "vm.destroyed",
    "run.succeeded",
    "run.failed",
    "run.timed_out",
    "run.budget_exceeded",
    "run.cancelled",
    "worker.destroyed",
];

#[derive(Clone)]
pub struct RunEvents {
    inner: Arc<Inner>,
}

struct Inner {
    run_id: String,
    created_at: i64,
    zero_data_retention: bool,
    store: Arc<Store>,
    live: Arc<LiveTimeline>,
    next_seq: Mutex<i64>,
}

impl RunEvents {
    pub fn new(
        run_id: &str,
        created_at: i64,
        zero_data_retention: bool,
        store: Arc<Store>,
        live: Arc<LiveTimeline>,
        first_seq: i64,
    ) -> RunEvents {
        RunEvents {
            inner: Arc::new(Inner {
                run_id: run_id.to_string(),
                created_at,
                zero_data_retention,
                store,
                live,
                next_seq: Mutex::new(first_seq),
            }),
        }
    }

    pub fn created_at(&self) -> i64 {
        self.inner.created_at
    }

    /// Appends an event. A store failure is logged, not fatal: live readers
    /// still get the event, and the run still ends and settles.
    pub async fn emit(&self, kind: &str, fields: Value) {
        let inner = &self.inner;
        let mut next = inner.next_seq.lock().await;
        let event = Event::new(*next, kind, inner.created_at, fields);
        *next += 1;
        if let Some(stored) = self.storable(&event)
            && let Err(e) = inner
                .store
                .append_event(&inner.run_id, &stored.to_stored())
                .await
        {
            tracing::error!(run_id = %inner.run_id, error = %e, "cannot store event {kind}");
        }
        inner.live.push(event);
    }

    fn storable(&self, event: &Event) -> Option<Event> {
        if !self.inner.zero_data_retention {
            return Some(event.clone());
        }
        if !ZDR_STORED.contains(&event.kind.as_str()) {
            return None;
        }
        let mut event = event.clone();
        if let Value::Object(map) = &mut event.data {
            map.remove("output");
        }
        Some(event)
    }
}
