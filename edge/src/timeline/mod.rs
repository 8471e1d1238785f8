//! The timeline: a run's events in order, each with its sequence number.
//!
//! One module a part: [`EventKind`] names every event type once
//! (`kind.rs`); the writer gives each event its number, stores it and
//! hands it to live readers (`writer.rs`); the hub keeps a live run's
//! events in memory for as long as the run lasts, shared by every reader
//! (`hub.rs`); the reader follows a run wherever its events are, the hub
//! or the store (`reader.rs`). The API only frames what the reader gives.
//! The data of the events a run's end writes (its outcome and the
//! settlement) is built here too, for the run's own end and a recovered
//! one alike.

mod hub;
mod kind;
mod reader;
mod writer;

pub use hub::{Hub, LiveTimeline};
pub use kind::EventKind;
pub use reader::Reader;
pub use writer::{RunEvents, Timeline};

use serde_json::{Map, Value, json};

use crate::ledger::Settlement;
use crate::run::{RunError, Usage};
use crate::store::StoredEvent;
use crate::timestamp::{now_ms, rfc3339};

/// One timeline event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub seq: i64,
    pub kind: EventKind,
    /// The event's JSON data, with `at` and `t_ms`.
    pub data: Value,
}

impl Event {
    /// Builds an event at `now`, for a run created at `created_at`.
    pub fn new(seq: i64, kind: EventKind, created_at: i64, fields: Value) -> Event {
        let now = now_ms();
        let mut data = match fields {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        data.insert("at".into(), json!(rfc3339(now)));
        data.insert("t_ms".into(), json!((now - created_at).max(0)));
        Event {
            seq,
            kind,
            data: Value::Object(data),
        }
    }

    pub fn to_stored(&self) -> StoredEvent {
        StoredEvent {
            seq: self.seq,
            kind: self.kind.name().to_string(),
            data: self.data.to_string(),
        }
    }

    /// The stored event, or `None` (logged) if its type is not one this
    /// server knows.
    pub fn from_stored(stored: StoredEvent) -> Option<Event> {
        let Some(kind) = EventKind::parse(&stored.kind) else {
            tracing::warn!(seq = stored.seq, kind = %stored.kind, "a stored event of an unknown type is left out");
            return None;
        };
        let data = serde_json::from_str(&stored.data).unwrap_or(Value::Null);
        Some(Event {
            seq: stored.seq,
            kind,
            data,
        })
    }

    /// The event as shown: a stored `run.succeeded` leaves its `output` to
    /// the run's record (kept once), and gets it back here.
    pub fn with_output(mut self, output: Option<&str>) -> Event {
        if self.kind == EventKind::RunSucceeded
            && let (Value::Object(map), Some(output)) = (&mut self.data, output)
        {
            map.entry("output").or_insert_with(|| json!(output));
        }
        self
    }

    /// As in `GET /v1/runs/{id}`'s timeline.
    pub fn to_json(&self) -> Value {
        json!({"seq": self.seq, "type": self.kind.name(), "data": self.data})
    }

    /// The last event of every run.
    pub fn is_last(&self) -> bool {
        self.kind.is_last()
    }
}

/// The data of a run's outcome event (`run.succeeded`, `run.failed`, …):
/// its model calls and tokens, and its error or else its output.
pub fn outcome_data(usage: &Usage, output: Option<&str>, error: Option<&RunError>) -> Value {
    let mut outcome = json!({
        "model_calls": usage.model_calls,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    });
    match (output, error) {
        (_, Some(error)) => outcome["error"] = json!(error),
        (Some(output), None) => outcome["output"] = json!(output),
        _ => {}
    }
    outcome
}

/// The data of `worker.destroyed`: the settlement.
pub fn destroyed_data(s: &Settlement) -> Value {
    json!({
        "charged_micros": s.charged,
        "released_micros": s.released,
        "cost": {"model": s.model, "web": s.web, "compute": s.compute},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_carry_time_and_offset() {
        let e = Event::new(
            1,
            EventKind::BudgetReserved,
            now_ms() - 5,
            json!({"reserved_micros": 40}),
        );
        assert_eq!(e.data["reserved_micros"], 40);
        assert!(e.data["t_ms"].as_i64().unwrap() >= 5);
        assert!(e.data["at"].as_str().unwrap().ends_with('Z'));
    }

    #[test]
    fn a_stored_outcome_gets_the_records_output_back() {
        let stored = Event::new(7, EventKind::RunSucceeded, 0, json!({"model_calls": 1}));
        let shown = stored.clone().with_output(Some("the answer"));
        assert_eq!(shown.data["output"], "the answer");
        let kept = Event::new(7, EventKind::RunSucceeded, 0, json!({"output": "own"}));
        assert_eq!(kept.with_output(Some("other")).data["output"], "own");
        let failed = Event::new(7, EventKind::RunFailed, 0, json!({}));
        assert!(failed.with_output(Some("x")).data.get("output").is_none());
        assert!(stored.with_output(None).data.get("output").is_none());
    }
}
