//! The timeline: a run's events in order, each with its sequence number.
//!
//! A live run's events are kept in memory by the `Hub` for as long as the
//! run lasts, so a reader, however slow, reads them at its own pace from
//! that buffer and never makes the run wait or lose an event; a finished
//! run's events come from the store. Readers are woken by a `watch`
//! channel holding the last sequence number.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio::sync::watch;

use crate::store::StoredEvent;
use crate::timestamp::{now_ms, rfc3339};

/// One timeline event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub seq: i64,
    pub kind: String,
    /// The event's JSON data, with `at` and `t_ms`.
    pub data: Value,
}

impl Event {
    /// Builds an event at `now`, for a run created at `created_at`.
    pub fn new(seq: i64, kind: &str, created_at: i64, fields: Value) -> Event {
        let now = now_ms();
        let mut data = match fields {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        data.insert("at".into(), json!(rfc3339(now)));
        data.insert("t_ms".into(), json!((now - created_at).max(0)));
        Event {
            seq,
            kind: kind.to_string(),
            data: Value::Object(data),
        }
    }

    pub fn to_stored(&self) -> StoredEvent {
        StoredEvent {
            seq: self.seq,
            kind: self.kind.clone(),
            data: self.data.to_string(),
        }
    }

    pub fn from_stored(stored: StoredEvent) -> Event {
        let data = serde_json::from_str(&stored.data).unwrap_or(Value::Null);
        Event {
            seq: stored.seq,
            kind: stored.kind,
            data,
        }
    }

    /// The event as shown: a stored `run.succeeded` leaves its `output` to
    /// the run's record (kept once), and gets it back here.
    pub fn with_output(mut self, output: Option<&str>) -> Event {
        if self.kind == "run.succeeded"
            && let (Value::Object(map), Some(output)) = (&mut self.data, output)
        {
            map.entry("output").or_insert_with(|| json!(output));
        }
        self
    }

    /// As in `GET /v1/runs/{id}`'s timeline.
    pub fn to_json(&self) -> Value {
        json!({"seq": self.seq, "type": self.kind, "data": self.data})
    }

    /// The last event of every run.
    pub fn is_last(&self) -> bool {
        self.kind == "worker.destroyed"
    }
}

/// A live run's events and the signal readers wait on. Readers share the
/// events (a page is a list of handles), so a reader that does not read
/// costs its page's handles, never a copy of the timeline (finding D2).
pub struct LiveTimeline {
    events: Mutex<Vec<Arc<Event>>>,
    latest: watch::Sender<i64>,
}

impl LiveTimeline {
    fn new() -> LiveTimeline {
        LiveTimeline {
            events: Mutex::new(Vec::new()),
            latest: watch::channel(0).0,
        }
    }

    pub fn push(&self, event: Event) {
        let seq = event.seq;
        self.lock().push(Arc::new(event));
        self.latest.send_replace(seq);
    }

    /// Events with a sequence number above `after`.
    pub fn after(&self, after: i64) -> Vec<Arc<Event>> {
        self.page(after, usize::MAX)
    }

    /// At most `limit` events with a sequence number above `after`.
    pub fn page(&self, after: i64, limit: usize) -> Vec<Arc<Event>> {
        let events = self.lock();
        let start = events.partition_point(|e| e.seq <= after);
        let end = start.saturating_add(limit).min(events.len());
        events[start..end].to_vec()
    }

    /// The run's last event is in: nothing will follow it.
    pub fn has_ended(&self) -> bool {
        self.lock().last().is_some_and(|e| e.is_last())
    }

    pub fn subscribe(&self) -> watch::Receiver<i64> {
        self.latest.subscribe()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Event>>> {
        self.events
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Every live run of this node, by id.
#[derive(Default)]
pub struct Hub {
    runs: Mutex<HashMap<String, Arc<LiveTimeline>>>,
}

impl Hub {
    pub fn open(&self, run_id: &str) -> Arc<LiveTimeline> {
        let timeline = Arc::new(LiveTimeline::new());
        self.lock().insert(run_id.to_string(), timeline.clone());
        timeline
    }

    pub fn get(&self, run_id: &str) -> Option<Arc<LiveTimeline>> {
        self.lock().get(run_id).cloned()
    }

    /// Forgets a finished run: readers still holding it finish from memory,
    /// new ones read the store.
    pub fn close(&self, run_id: &str) {
        self.lock().remove(run_id);
    }

    pub fn live_runs(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<LiveTimeline>>> {
        self.runs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_carry_time_and_offset() {
        let e = Event::new(
            1,
            "budget.reserved",
            now_ms() - 5,
            json!({"reserved_micros": 40}),
        );
        assert_eq!(e.data["reserved_micros"], 40);
        assert!(e.data["t_ms"].as_i64().unwrap() >= 5);
        assert!(e.data["at"].as_str().unwrap().ends_with('Z'));
    }

    #[test]
    fn readers_take_what_they_have_not_seen() {
        let live = LiveTimeline::new();
        for seq in 1..=5 {
            live.push(Event::new(seq, "x", 0, json!({})));
        }
        let seqs: Vec<i64> = live.after(3).iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [4, 5]);
        assert!(live.after(5).is_empty());
    }

    #[test]
    fn a_page_is_bounded() {
        let live = LiveTimeline::new();
        for seq in 1..=10 {
            live.push(Event::new(seq, "x", 0, json!({})));
        }
        let seqs =
            |after, limit| -> Vec<i64> { live.page(after, limit).iter().map(|e| e.seq).collect() };
        assert_eq!(seqs(2, 3), [3, 4, 5]);
        assert_eq!(seqs(8, 3), [9, 10]);
        assert!(seqs(10, 3).is_empty());
        assert!(!live.has_ended());
        live.push(Event::new(11, "worker.destroyed", 0, json!({})));
        assert!(live.has_ended());
    }

    #[test]
    fn readers_share_the_events_they_page() {
        let live = LiveTimeline::new();
        live.push(Event::new(
            1,
            "shell.output",
            0,
            json!({"data": "x".repeat(1000)}),
        ));
        let (a, b) = (live.page(0, 8), live.page(0, 8));
        assert!(Arc::ptr_eq(&a[0], &b[0]));
    }

    #[test]
    fn a_stored_outcome_gets_the_records_output_back() {
        let stored = Event::new(7, "run.succeeded", 0, json!({"model_calls": 1}));
        let shown = stored.clone().with_output(Some("the answer"));
        assert_eq!(shown.data["output"], "the answer");
        let kept = Event::new(7, "run.succeeded", 0, json!({"output": "own"}));
        assert_eq!(kept.with_output(Some("other")).data["output"], "own");
        let failed = Event::new(7, "run.failed", 0, json!({}));
        assert!(failed.with_output(Some("x")).data.get("output").is_none());
        assert!(stored.with_output(None).data.get("output").is_none());
    }
}
