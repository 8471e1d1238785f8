//! A reader of one run's timeline. It follows the run wherever its events
//! are: the hub's memory while this node hosts it live, the store
//! otherwise (a finished run, or one hosted by another node, then woken by
//! the store's notifications with a slow poll as the safety net). It ends
//! after the last event (`worker.destroyed`).
//!
//! A reader holds at most one page of events: handles shared with every
//! other reader of a live run, or a few of its own copies read from the
//! store, so a reader that does not read never holds a whole timeline
//! (finding D2).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::{Event, EventKind, Hub};
use crate::store::Store;
use crate::timestamp::now_ms;

/// The most events a reader takes at once from a live run (handles) and
/// from the store (its own copies, at most 64 KiB each).
const LIVE_PAGE: usize = 256;
const STORED_PAGE: i64 = 32;
/// How often a reader of a run hosted elsewhere looks at the store when the
/// store has no notifications.
const REMOTE_POLL: Duration = Duration::from_millis(500);
/// The same when it has: only a safety net for a lost notification.
const NOTIFIED_POLL: Duration = Duration::from_secs(3);
/// A finished run whose last event never got stored (a crash between
/// settling and writing it) is closed after this long.
const ORPHAN_AFTER_MS: i64 = 10_000;

/// One reader of one run's timeline, from after a sequence number on.
pub struct Reader {
    store: Arc<dyn Store>,
    hub: Arc<Hub>,
    run_id: String,
    last: i64,
    queue: VecDeque<Arc<Event>>,
    done: bool,
    /// The run's output, read from its record when a stored outcome
    /// (which leaves it to the record) is about to be sent.
    output: Option<Option<String>>,
}

impl Reader {
    /// A reader of `run_id`'s events after `after` (0: from the first).
    pub fn new(store: Arc<dyn Store>, hub: Arc<Hub>, run_id: String, after: i64) -> Reader {
        Reader {
            store,
            hub,
            run_id,
            last: after,
            queue: VecDeque::new(),
            done: false,
            output: None,
        }
    }

    /// The next event, waiting for it if the run is live; `None` after
    /// the last one (or when there will be none).
    pub async fn next(&mut self) -> Option<Arc<Event>> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                self.last = self.last.max(event.seq);
                self.done = event.is_last();
                return Some(event);
            }
            if self.done {
                return None;
            }
            if !self.refill().await {
                return None;
            }
        }
    }

    /// Waits for events after `last`; `false` when there will be none.
    async fn refill(&mut self) -> bool {
        if let Some(live) = self.hub.get(&self.run_id) {
            let mut changed = live.subscribe();
            loop {
                let events = live.page(self.last, LIVE_PAGE);
                if !events.is_empty() {
                    self.queue.extend(events);
                    return true;
                }
                // A reader already past the last event (a `Last-Event-ID`
                // beyond the end) has nothing to wait for (finding G9).
                if live.has_ended() {
                    return false;
                }
                // The run was closed: what is left is in the store.
                if changed.changed().await.is_err() {
                    break;
                }
            }
        }
        // Subscribed before reading, so an event stored between the read
        // and the wait still wakes the reader.
        let mut woken = self.store.watch_run(&self.run_id);
        loop {
            let stored = match self
                .store
                .events_page(&self.run_id, self.last, STORED_PAGE)
                .await
            {
                Ok(events) => events,
                Err(e) => {
                    tracing::warn!(run_id = %self.run_id, error = %e, "timeline read failed");
                    return false;
                }
            };
            if !stored.is_empty() {
                // Past every event of this page, whatever is left out.
                self.last = stored.last().map_or(self.last, |e| e.seq);
                for event in stored.into_iter().filter_map(Event::from_stored) {
                    let event = self.shown(event).await;
                    self.queue.push_back(Arc::new(event));
                }
                return true;
            }
            if self.finished_without_more().await {
                return false;
            }
            if self.hub.get(&self.run_id).is_some() {
                return true;
            }
            wait_for_store(&mut woken).await;
        }
    }

    /// A stored event as readers see it: the outcome with the run's output.
    async fn shown(&mut self, event: Event) -> Event {
        if event.kind != EventKind::RunSucceeded {
            return event;
        }
        if self.output.is_none() {
            let record = self.store.run(&self.run_id).await;
            self.output = Some(record.ok().flatten().and_then(|r| r.output));
        }
        event.with_output(self.output.as_ref().and_then(|o| o.as_deref()))
    }

    /// The run has ended and its last event is behind the reader.
    async fn finished_without_more(&self) -> bool {
        let run = match self.store.run(&self.run_id).await {
            Ok(Some(run)) => run,
            _ => return true,
        };
        if !run.status.is_terminal() {
            return false;
        }
        // The reader has the last event, or is past it (a `Last-Event-ID`
        // beyond the end, finding G9).
        let seen_last = match self.store.last_seq(&self.run_id).await {
            Ok(last) if last <= self.last => {
                match self.store.events(&self.run_id, last - 1).await {
                    Ok(events) => events.first().is_some_and(|e| is_last(&e.kind)),
                    Err(_) => true,
                }
            }
            Ok(_) => false,
            Err(_) => true,
        };
        seen_last || now_ms() - run.ended_at.unwrap_or(0) > ORPHAN_AFTER_MS
    }
}

/// Waits until the store says the run has news, or the poll interval passes.
async fn wait_for_store(woken: &mut Option<watch::Receiver<i64>>) {
    let Some(rx) = woken else {
        return tokio::time::sleep(REMOTE_POLL).await;
    };
    match tokio::time::timeout(NOTIFIED_POLL, rx.changed()).await {
        Ok(Ok(())) | Err(_) => {}
        // The store stopped notifying: fall back to polling.
        Ok(Err(_)) => *woken = None,
    }
}

/// Whether a stored event's type is the timeline's last.
fn is_last(kind: &str) -> bool {
    EventKind::parse(kind).is_some_and(EventKind::is_last)
}
