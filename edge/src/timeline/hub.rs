//! The hub: every live run of this node, each with its events in memory
//! for as long as the run lasts, so a reader, however slow, reads them at
//! its own pace and never makes the run wait or lose an event. Readers are
//! woken by a `watch` channel holding the last sequence number.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use super::Event;

/// A live run's events and the signal readers wait on. Readers share the
/// events (a page is a list of handles), so a reader that does not read
/// costs its page's handles, never a copy of the timeline (finding D2).
pub struct LiveTimeline {
    events: Mutex<Vec<Arc<Event>>>,
    latest: watch::Sender<i64>,
}

impl LiveTimeline {
    pub(crate) fn new() -> LiveTimeline {
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
    #[cfg(test)]
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

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<LiveTimeline>>> {
        self.runs
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::timeline::EventKind;

    #[test]
    fn readers_take_what_they_have_not_seen() {
        let live = LiveTimeline::new();
        for seq in 1..=5 {
            live.push(Event::new(seq, EventKind::ShellOutput, 0, json!({})));
        }
        let seqs: Vec<i64> = live.after(3).iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [4, 5]);
        assert!(live.after(5).is_empty());
    }

    #[test]
    fn a_page_is_bounded() {
        let live = LiveTimeline::new();
        for seq in 1..=10 {
            live.push(Event::new(seq, EventKind::ShellOutput, 0, json!({})));
        }
        let seqs =
            |after, limit| -> Vec<i64> { live.page(after, limit).iter().map(|e| e.seq).collect() };
        assert_eq!(seqs(2, 3), [3, 4, 5]);
        assert_eq!(seqs(8, 3), [9, 10]);
        assert!(seqs(10, 3).is_empty());
        assert!(!live.has_ended());
        live.push(Event::new(11, EventKind::WorkerDestroyed, 0, json!({})));
        assert!(live.has_ended());
    }

    #[test]
    fn readers_share_the_events_they_page() {
        let live = LiveTimeline::new();
        live.push(Event::new(
            1,
            EventKind::ShellOutput,
            0,
            json!({"data": "x".repeat(1000)}),
        ));
        let (a, b) = (live.page(0, 8), live.page(0, 8));
        assert!(Arc::ptr_eq(&a[0], &b[0]));
    }
}
