//! The runs and sandboxes this node has in flight, each with its cancel
//! signal, and the node's drain: when the server stops it waits for them
//! (or cancels them) and then ends every open event stream.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::{Notify, watch};

/// Whatever this node has in flight, by id.
pub struct InFlight {
    cancels: Mutex<HashMap<String, watch::Sender<bool>>>,
    draining: AtomicBool,
    idle: Notify,
    /// Set when the drain is over: open event streams end then, so that no
    /// reader keeps the process alive after its runs settled (finding D3).
    streams_end: watch::Sender<bool>,
}

impl Default for InFlight {
    fn default() -> InFlight {
        InFlight {
            cancels: Mutex::new(HashMap::new()),
            draining: AtomicBool::new(false),
            idle: Notify::new(),
            streams_end: watch::channel(false).0,
        }
    }
}

impl InFlight {
    /// Registers `id` in flight; its cancel signal.
    pub fn register(&self, id: &str) -> watch::Receiver<bool> {
        let (tx, rx) = watch::channel(false);
        self.lock().insert(id.to_string(), tx);
        rx
    }

    /// `id` is no longer in flight.
    pub fn forget(&self, id: &str) {
        let empty = {
            let mut cancels = self.lock();
            cancels.remove(id);
            cancels.is_empty()
        };
        if empty {
            self.idle.notify_waiters();
        }
    }

    /// Cancels `id` if it is in flight here; `false` when it is not.
    pub fn cancel(&self, id: &str) -> bool {
        match self.lock().get(id) {
            Some(tx) => {
                tx.send_replace(true);
                true
            }
            None => false,
        }
    }

    /// Cancels everything in flight, naming each in the log.
    pub fn cancel_all(&self) {
        for (id, tx) in self.lock().iter() {
            tracing::info!(id = %id, "cancelling");
            tx.send_replace(true);
        }
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The node takes nothing new from now on.
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Waits until nothing is in flight, or `limit` passes; whether it
    /// emptied.
    pub async fn drain(&self, limit: Duration) -> bool {
        let wait = async {
            loop {
                let idle = self.idle.notified();
                if self.is_empty() {
                    return;
                }
                idle.await;
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }

    /// Ends every open event stream (the drain is over).
    pub fn end_streams(&self) {
        self.streams_end.send_replace(true);
    }

    /// Resolves when event streams must end.
    pub fn streams_ending(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut end = self.streams_end.subscribe();
        async move {
            let _ = end.wait_for(|v| *v).await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, watch::Sender<bool>>> {
        self.cancels.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_drain_ends_when_the_last_one_is_forgotten() {
        let in_flight = InFlight::default();
        let cancel = in_flight.register("run_a");
        assert!(in_flight.cancel("run_a"));
        assert!(*cancel.borrow());
        assert!(!in_flight.cancel("run_b"));
        assert!(!in_flight.drain(Duration::from_millis(10)).await);
        in_flight.forget("run_a");
        assert!(in_flight.drain(Duration::from_millis(10)).await);
    }
}
