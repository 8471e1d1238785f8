//! Cross-node wake-ups for timeline readers: one `LISTEN ephemeral_events`
//! connection per node turns each `NOTIFY` (payload `<run_id>:<seq>`,
//! sent by `append_event` in the same statement as the insert) into a
//! `watch` update for the readers of that run on this node.
//!
//! Notifications are only a hint: a reader re-reads the store when woken
//! and still polls slowly, so a lost connection costs latency, not events.
//! After every (re)connect all readers are woken once, because whatever
//! was notified while nobody listened is gone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::watch;
use tokio_postgres::{AsyncMessage, NoTls};

/// The channel `append_event` notifies.
pub const CHANNEL: &str = "ephemeral_events";
/// Wait before reconnecting a lost listener connection, doubled after
/// each failure up to the maximum (a database down for long is not
/// knocked on every second).
const RECONNECT_MIN: Duration = Duration::from_secs(1);
const RECONNECT_MAX: Duration = Duration::from_secs(30);

/// The runs someone on this node is reading, each with its last notified seq.
#[derive(Default)]
pub struct Watchers {
    runs: Mutex<HashMap<String, watch::Sender<i64>>>,
}

impl Watchers {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, watch::Sender<i64>>> {
        self.runs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A receiver woken whenever `run_id` gets an event on any node.
    pub fn watch(&self, run_id: &str) -> watch::Receiver<i64> {
        let mut runs = self.lock();
        // Readers come and go; forget the runs nobody reads any more.
        runs.retain(|_, tx| tx.receiver_count() > 0);
        runs.entry(run_id.to_string())
            .or_insert_with(|| watch::channel(0).0)
            .subscribe()
    }

    /// Handles one notification payload, `<run_id>:<seq>`.
    fn notified(&self, payload: &str) {
        let Some((run_id, seq)) = payload.rsplit_once(':') else {
            tracing::debug!(payload, "ignoring a malformed notification");
            return;
        };
        let seq = seq.parse().unwrap_or(0);
        let mut runs = self.lock();
        if let Some(tx) = runs.get(run_id) {
            if tx.receiver_count() == 0 {
                runs.remove(run_id);
            } else {
                tx.send_replace(seq);
            }
        }
    }

    /// Wakes every reader (notifications may have been missed).
    fn wake_all(&self) {
        for tx in self.lock().values() {
            tx.send_modify(|_| {});
        }
    }
}

/// Listens for ever, reconnecting after failures; runs as one task.
pub async fn listen(config: tokio_postgres::Config, watchers: Arc<Watchers>) {
    let mut wait = RECONNECT_MIN;
    loop {
        let mut listened = false;
        match listen_once(&config, &watchers, &mut listened).await {
            Ok(()) => tracing::warn!("notification connection closed; reconnecting"),
            Err(e) => tracing::warn!(error = %e, "notification connection failed; reconnecting"),
        }
        watchers.wake_all();
        if listened {
            wait = RECONNECT_MIN;
        }
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(RECONNECT_MAX);
    }
}

/// One connection's life: `LISTEN` (then `listened` is set), then
/// dispatch until it ends.
async fn listen_once(
    config: &tokio_postgres::Config,
    watchers: &Watchers,
    listened: &mut bool,
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(NoTls).await?;
    // The connection must be polled for `LISTEN` to complete and for the
    // notifications to arrive, so one future does both.
    let drive = async {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => watchers.notified(n.payload()),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => return Ok(()),
            }
        }
    };
    tokio::pin!(drive);
    let listen = format!("LISTEN {CHANNEL}");
    tokio::select! {
        listened = client.batch_execute(&listen) => listened?,
        ended = &mut drive => return ended,
    }
    tracing::debug!("listening for timeline notifications");
    *listened = true;
    watchers.wake_all();
    drive.await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notification_wakes_the_readers_of_its_run_only() {
        let watchers = Watchers::default();
        let mut a = watchers.watch("run_a");
        let b = watchers.watch("run_b");
        watchers.notified("run_a:7");
        assert!(a.has_changed().unwrap_or(false));
        assert_eq!(*a.borrow_and_update(), 7);
        assert!(!b.has_changed().unwrap_or(true));
        watchers.notified("garbage");
        watchers.wake_all();
        assert!(b.has_changed().unwrap_or(false));
    }

    #[test]
    fn runs_nobody_reads_are_forgotten() {
        let watchers = Watchers::default();
        drop(watchers.watch("run_a"));
        watchers.notified("run_a:1");
        assert!(watchers.lock().is_empty());
    }
}
