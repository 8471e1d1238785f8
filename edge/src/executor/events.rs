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

use crate::broker::Scrubber;
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

/// The most a run's timeline holds in `shell.output` events, counted as
/// stored (data and framing). Past it, output events are dropped, after one
/// `timeline.truncated` event that says so (finding G3: a run that wrote a
/// byte at a time stored 240 MB, and reading it back took the server down).
/// The command's own output cap and `shell.exit`'s `truncated` still apply.
pub const MAX_OUTPUT_EVENT_BYTES: usize = 16 << 20;
/// What one stored event costs besides its data (sequence, type, keys).
const EVENT_FRAMING_BYTES: usize = 64;

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
    tally: Mutex<Tally>,
    /// Every event's data is scrubbed of the broker's secrets before it
    /// is stored or shown: the last line behind the broker's own scrubbing.
    scrubber: Arc<Scrubber>,
}

/// The timeline so far: the next sequence number and what its output
/// events weigh.
struct Tally {
    next_seq: i64,
    output_bytes: usize,
    truncated: bool,
}

impl RunEvents {
    pub fn new(
        run_id: &str,
        created_at: i64,
        zero_data_retention: bool,
        store: Arc<Store>,
        live: Arc<LiveTimeline>,
        first_seq: i64,
        scrubber: Arc<Scrubber>,
    ) -> RunEvents {
        RunEvents {
            inner: Arc::new(Inner {
                run_id: run_id.to_string(),
                created_at,
                zero_data_retention,
                store,
                live,
                tally: Mutex::new(Tally {
                    next_seq: first_seq,
                    output_bytes: 0,
                    truncated: false,
                }),
                scrubber,
            }),
        }
    }

    pub fn created_at(&self) -> i64 {
        self.inner.created_at
    }

    /// Appends an event. A store failure is logged, not fatal: live readers
    /// still get the event, and the run still ends and settles.
    pub async fn emit(&self, kind: &str, mut fields: Value) {
        self.inner.scrubber.scrub_json(&mut fields);
        let mut tally = self.inner.tally.lock().await;
        if kind == "shell.output" {
            if tally.truncated {
                return;
            }
            let size = fields.to_string().len() + EVENT_FRAMING_BYTES;
            if tally.output_bytes + size > MAX_OUTPUT_EVENT_BYTES {
                tally.truncated = true;
                let marker = serde_json::json!({
                    "limit_bytes": MAX_OUTPUT_EVENT_BYTES,
                    "dropped": "shell.output",
                });
                self.append(&mut tally, "timeline.truncated", marker).await;
                return;
            }
            tally.output_bytes += size;
        }
        self.append(&mut tally, kind, fields).await;
    }

    async fn append(&self, tally: &mut Tally, kind: &str, fields: Value) {
        let inner = &self.inner;
        let event = Event::new(tally.next_seq, kind, inner.created_at, fields);
        tally.next_seq += 1;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::Hub;
    use serde_json::json;

    /// A run that floods its output keeps a bounded timeline: output
    /// events stop at the cap after one marker, everything else goes on.
    #[tokio::test]
    async fn output_events_stop_at_the_cap_with_a_marker() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = Arc::new(
            Store::open(None, &dir.path().join("runs.db"))
                .await
                .expect("store"),
        );
        let live = Hub::default().open("run_x");
        let scrubber = Arc::new(Scrubber::new());
        let events = RunEvents::new("run_x", 0, false, store.clone(), live.clone(), 1, scrubber);
        let chunk = "x".repeat(64 << 10);
        let floods = MAX_OUTPUT_EVENT_BYTES / chunk.len() + 10;
        for _ in 0..floods {
            let data = json!({"call_id": "c1", "stream": "stdout", "data": chunk});
            events.emit("shell.output", data).await;
        }
        events
            .emit("shell.exit", json!({"call_id": "c1", "exit_code": 0}))
            .await;
        let stored = store.events("run_x", 0).await.expect("events");
        let kinds: Vec<&str> = stored.iter().map(|e| e.kind.as_str()).collect();
        let outputs = kinds.iter().filter(|k| **k == "shell.output").count();
        assert!(outputs < floods, "{outputs} of {floods} stored");
        assert_eq!(&kinds[outputs..], ["timeline.truncated", "shell.exit"]);
        let bytes: usize = stored.iter().map(|e| e.data.len()).sum();
        assert!(bytes <= MAX_OUTPUT_EVENT_BYTES + 4096, "{bytes}");
        // Sequence numbers stay contiguous: nothing was skipped silently.
        let seqs: Vec<i64> = stored.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, (1..=stored.len() as i64).collect::<Vec<_>>());
        assert_eq!(live.after(0).len(), stored.len());
    }
}
