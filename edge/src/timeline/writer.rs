//! Writing a run's timeline: each event gets the next sequence number, is
//! appended to the store, then handed to live readers, in that order, so a
//! reader that falls back to the store never misses what it saw live.
//!
//! Under zero data retention only events without user content reach the
//! store (and `output` is left out of the outcome event); live readers
//! still get everything.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::Mutex;

use super::{Event, EventKind, LiveTimeline};
use crate::broker::Scrubber;
use crate::store::Store;

/// The most a run's timeline holds in `shell.output` events, counted as
/// stored (data and framing). Past it, output events are dropped, after one
/// `timeline.truncated` event that says so (finding G3: a run that wrote a
/// byte at a time stored 240 MB, and reading it back took the server down).
/// The command's own output cap and `shell.exit`'s `truncated` still apply.
pub const MAX_OUTPUT_EVENT_BYTES: usize = 16 << 20;
/// The most a run's whole timeline holds, counted the same way. Past it,
/// only status and billing events are kept, after one more
/// `timeline.truncated` event: a run that makes command after command
/// (each within the output cap) cannot grow its record without bound.
pub const MAX_TIMELINE_BYTES: usize = 32 << 20;
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
    store: Arc<dyn Store>,
    live: Arc<LiveTimeline>,
    tally: Mutex<Tally>,
    /// Every event's data is scrubbed of the broker's secrets before it
    /// is stored or shown: the last line behind the broker's own scrubbing.
    scrubber: Arc<Scrubber>,
}

/// The timeline so far: the next sequence number and what its events weigh.
struct Tally {
    next_seq: i64,
    output_bytes: usize,
    total_bytes: usize,
    /// Output events are dropped.
    output_full: bool,
    /// Everything but status and billing is dropped.
    full: bool,
}

/// Whose timeline a writer writes, and from where on.
pub struct Timeline<'a> {
    pub run_id: &'a str,
    pub created_at: i64,
    pub zero_data_retention: bool,
    /// The sequence number of the next event (1 for a new run's first).
    pub next_seq: i64,
}

impl RunEvents {
    pub fn new(
        timeline: Timeline<'_>,
        store: Arc<dyn Store>,
        live: Arc<LiveTimeline>,
        scrubber: Arc<Scrubber>,
    ) -> RunEvents {
        RunEvents {
            inner: Arc::new(Inner {
                run_id: timeline.run_id.to_string(),
                created_at: timeline.created_at,
                zero_data_retention: timeline.zero_data_retention,
                store,
                live,
                tally: Mutex::new(Tally {
                    next_seq: timeline.next_seq,
                    output_bytes: 0,
                    total_bytes: 0,
                    output_full: false,
                    full: false,
                }),
                scrubber,
            }),
        }
    }

    /// Appends an event. A store failure is logged, not fatal: live readers
    /// still get the event, and the run still ends and settles.
    pub async fn emit(&self, kind: EventKind, mut fields: Value) {
        self.inner.scrubber.scrub_json(&mut fields);
        let mut tally = self.inner.tally.lock().await;
        if kind.is_live_only() {
            return self.append(&mut tally, kind, fields).await;
        }
        let vital = kind.is_status_or_billing();
        let output = kind == EventKind::ShellOutput;
        if (tally.full && !vital) || (tally.output_full && output) {
            return;
        }
        let size = fields.to_string().len() + EVENT_FRAMING_BYTES;
        if output && tally.output_bytes + size > MAX_OUTPUT_EVENT_BYTES {
            tally.output_full = true;
            let marker = json!({"limit_bytes": MAX_OUTPUT_EVENT_BYTES, "dropped": kind.name()});
            return self
                .append(&mut tally, EventKind::TimelineTruncated, marker)
                .await;
        }
        if !vital && tally.total_bytes + size > MAX_TIMELINE_BYTES {
            tally.full = true;
            let marker =
                json!({"limit_bytes": MAX_TIMELINE_BYTES, "dropped": "all but status and billing"});
            return self
                .append(&mut tally, EventKind::TimelineTruncated, marker)
                .await;
        }
        if output {
            tally.output_bytes += size;
        }
        tally.total_bytes += size;
        self.append(&mut tally, kind, fields).await;
    }

    async fn append(&self, tally: &mut Tally, kind: EventKind, fields: Value) {
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

    /// The stored form of `event`: none for content under zero data
    /// retention, and the outcome without `output`, which the run's
    /// record holds (stored once: `Event::with_output` puts it back).
    fn storable(&self, event: &Event) -> Option<Event> {
        let zdr = self.inner.zero_data_retention;
        if event.kind.is_live_only() || (zdr && !event.kind.is_status_or_billing()) {
            return None;
        }
        let mut event = event.clone();
        if (zdr || event.kind == EventKind::RunSucceeded)
            && let Value::Object(map) = &mut event.data
        {
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
        let (_dir, store, live, events) = events_for(false).await;
        let chunk = "x".repeat(64 << 10);
        let floods = MAX_OUTPUT_EVENT_BYTES / chunk.len() + 10;
        for _ in 0..floods {
            let data = json!({"call_id": "c1", "stream": "stdout", "data": chunk});
            events.emit(EventKind::ShellOutput, data).await;
        }
        events
            .emit(
                EventKind::ShellExit,
                json!({"call_id": "c1", "exit_code": 0}),
            )
            .await;
        let stored = store.events("run_x", 0).await.expect("events");
        let kinds: Vec<&str> = stored.iter().map(|e| e.kind.as_str()).collect();
        let output = EventKind::ShellOutput.name();
        let outputs = kinds.iter().filter(|k| **k == output).count();
        assert!(outputs < floods, "{outputs} of {floods} stored");
        let tail = [EventKind::TimelineTruncated, EventKind::ShellExit].map(EventKind::name);
        assert_eq!(&kinds[outputs..], tail);
        let bytes: usize = stored.iter().map(|e| e.data.len()).sum();
        assert!(bytes <= MAX_OUTPUT_EVENT_BYTES + 4096, "{bytes}");
        // Sequence numbers stay contiguous: nothing was skipped silently.
        let seqs: Vec<i64> = stored.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, (1..=stored.len() as i64).collect::<Vec<_>>());
        assert_eq!(live.after(0).len(), stored.len());
    }

    async fn events_for(
        zdr: bool,
    ) -> (
        tempfile::TempDir,
        Arc<dyn Store>,
        Arc<LiveTimeline>,
        RunEvents,
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = crate::store::open(None, &dir.path().join("runs.db"))
            .await
            .expect("store");
        let live = Hub::default().open("run_x");
        let scrubber = Arc::new(Scrubber::new());
        let timeline = Timeline {
            run_id: "run_x",
            created_at: 0,
            zero_data_retention: zdr,
            next_seq: 1,
        };
        let events = RunEvents::new(timeline, store.clone(), live.clone(), scrubber);
        (dir, store, live, events)
    }

    /// Command after command, each small, still ends at the timeline's
    /// cap; status and billing events are kept past it.
    #[tokio::test]
    async fn the_whole_timeline_stops_at_its_cap_but_keeps_status_and_billing() {
        let (_dir, store, _live, events) = events_for(false).await;
        let command = "x".repeat(32 << 10);
        let n = MAX_TIMELINE_BYTES / command.len() + 10;
        for i in 0..n {
            let call = format!("call_{i}");
            events
                .emit(
                    EventKind::ShellCommand,
                    json!({"call_id": call, "command": command}),
                )
                .await;
        }
        events
            .emit(
                EventKind::RunSucceeded,
                json!({"model_calls": 0, "output": "done"}),
            )
            .await;
        events
            .emit(EventKind::WorkerDestroyed, json!({"charged_micros": 1}))
            .await;
        let stored = store.events("run_x", 0).await.expect("events");
        let kinds: Vec<&str> = stored.iter().map(|e| e.kind.as_str()).collect();
        let command_kind = EventKind::ShellCommand.name();
        let commands = kinds.iter().filter(|k| **k == command_kind).count();
        assert!(commands < n, "{commands} of {n} stored");
        assert_eq!(
            &kinds[commands..],
            [
                EventKind::TimelineTruncated,
                EventKind::RunSucceeded,
                EventKind::WorkerDestroyed
            ]
            .map(EventKind::name)
        );
        let bytes: usize = stored.iter().map(|e| e.data.len()).sum();
        assert!(bytes <= MAX_TIMELINE_BYTES + 4096, "{bytes}");
        // The output is the record's to keep, not the event's.
        assert!(
            !stored[commands + 1].data.contains("done"),
            "{:?}",
            stored[commands + 1]
        );
    }
}
