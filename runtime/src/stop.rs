//! How a running program is told to stop: the command's deadline, a
//! `timeout` of its own, or a signal from `kill`.
//!
//! Every store holds one `Stop`. The epoch callback asks it on every tick
//! whether the guest must end, and the guest's timers (see
//! `deadline_clock`) wake early when it says so, so a guest blocked in
//! `sleep` ends as promptly as one spinning in a loop. A program started by
//! another one gets a child `Stop`: whatever stops the parent stops it too.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

/// Why a program must stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopReason {
    /// The command's own wall-time limit (a sandbox limit, reported by name).
    CommandDeadline,
    /// The `timeout` this program was started with (status 124, not a limit).
    OwnTimeout,
    /// `kill` sent this signal to it (status 128 + the signal).
    Signal(u32),
}

/// One program's reasons to stop, and its parent's.
pub(crate) struct Stop {
    command_deadline: Instant,
    own_deadline: Option<Instant>,
    /// The signal sent to it, 0 while none.
    signal: AtomicU32,
    woken: tokio::sync::Notify,
    parent: Option<Arc<Stop>>,
}

impl Stop {
    /// The top program of a command, which must end by `deadline`.
    pub(crate) fn command(deadline: Instant) -> Arc<Stop> {
        Arc::new(Stop {
            command_deadline: deadline,
            own_deadline: None,
            signal: AtomicU32::new(0),
            woken: tokio::sync::Notify::new(),
            parent: None,
        })
    }

    /// A program started by the one `parent` stops, optionally with a
    /// deadline of its own.
    pub(crate) fn child(parent: &Arc<Stop>, own_deadline: Option<Instant>) -> Arc<Stop> {
        Arc::new(Stop {
            command_deadline: parent.command_deadline,
            own_deadline,
            signal: AtomicU32::new(0),
            woken: tokio::sync::Notify::new(),
            parent: Some(parent.clone()),
        })
    }

    /// Why the program must stop now, if it must. A signal wins over a
    /// deadline; a parent's reason is the child's.
    pub(crate) fn reason(&self) -> Option<StopReason> {
        let now = Instant::now();
        match self.signal.load(Ordering::Acquire) {
            0 => {}
            signal => return Some(StopReason::Signal(signal)),
        }
        if let Some(parent) = &self.parent
            && let Some(reason) = parent.reason()
        {
            return Some(reason);
        }
        if now >= self.command_deadline {
            return Some(StopReason::CommandDeadline);
        }
        match self.own_deadline {
            Some(own) if now >= own => Some(StopReason::OwnTimeout),
            _ => None,
        }
    }

    /// The earliest moment a deadline (its own or an ancestor's) ends it.
    pub(crate) fn wake_at(&self) -> Instant {
        let mine = match self.own_deadline {
            Some(own) => own.min(self.command_deadline),
            None => self.command_deadline,
        };
        match &self.parent {
            Some(parent) => mine.min(parent.wake_at()),
            None => mine,
        }
    }

    /// Sends `signal` (non-zero): the program ends at its next epoch tick
    /// or as soon as its timers wake. The first signal sent is the one kept.
    pub(crate) fn send(&self, signal: u32) {
        let signal = signal.max(1);
        let _ = self
            .signal
            .compare_exchange(0, signal, Ordering::AcqRel, Ordering::Acquire);
        self.woken.notify_waiters();
    }

    /// Resolves once a signal reaches this program or an ancestor.
    pub(crate) async fn signalled(&self) {
        let mut chain: Vec<&Stop> = vec![self];
        let mut next = self.parent.as_deref();
        while let Some(p) = next {
            chain.push(p);
            next = p.parent.as_deref();
        }
        loop {
            // Register interest before checking, so a signal sent in
            // between is not missed.
            let waits: Vec<_> = chain.iter().map(|s| Box::pin(s.woken.notified())).collect();
            if chain.iter().any(|s| s.signal.load(Ordering::Acquire) != 0) {
                return;
            }
            futures_select_any(waits).await;
        }
    }
}

/// Waits until any of `futures` is ready.
async fn futures_select_any<F: std::future::Future<Output = ()> + Unpin>(mut futures: Vec<F>) {
    std::future::poll_fn(|cx| {
        for f in futures.iter_mut() {
            if std::pin::Pin::new(f).poll(cx).is_ready() {
                return std::task::Poll::Ready(());
            }
        }
        std::task::Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_child_stops_with_its_parent_and_on_its_own() {
        let parent = Stop::command(Instant::now() + Duration::from_secs(60));
        let child = Stop::child(&parent, Some(Instant::now() + Duration::from_secs(30)));
        assert_eq!(child.reason(), None);
        child.send(15);
        assert_eq!(child.reason(), Some(StopReason::Signal(15)));
        assert_eq!(parent.reason(), None);
        let other = Stop::child(&parent, None);
        parent.send(9);
        assert_eq!(other.reason(), Some(StopReason::Signal(9)));
    }

    #[test]
    fn deadlines_say_whose_they_were() {
        let past = Instant::now() - Duration::from_millis(1);
        let parent = Stop::command(Instant::now() + Duration::from_secs(60));
        let child = Stop::child(&parent, Some(past));
        assert_eq!(child.reason(), Some(StopReason::OwnTimeout));
        let ended = Stop::command(past);
        assert_eq!(
            Stop::child(&ended, None).reason(),
            Some(StopReason::CommandDeadline)
        );
        assert!(child.wake_at() <= past);
    }

    #[test]
    fn a_signal_wakes_a_waiter() {
        let stop = Stop::command(Instant::now() + Duration::from_secs(60));
        let child = Stop::child(&stop, None);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let waker = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                stop.send(2);
            })
        };
        rt.block_on(child.signalled());
        let _ = waker.join();
        assert_eq!(child.reason(), Some(StopReason::Signal(2)));
    }
}
