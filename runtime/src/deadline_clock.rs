//! `wasi:clocks/monotonic-clock` whose sleeps never outlast the program.
//!
//! Epoch deadlines stop wasm code, but a guest blocked in a host call
//! (`sleep 3600` is one long `poll`) runs no wasm to interrupt. So every
//! timer a guest subscribes to is cut at its deadline and wakes at once
//! when the program is sent a signal (`kill`, see `stop.rs`): the guest
//! wakes, and the first wasm it runs traps with the epoch interrupt.
//! Time itself is reported truthfully; only waiting is bounded.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::clocks::WasiClocksCtxView;
use wasmtime_wasi::p2::bindings::clocks::monotonic_clock::{
    self, Duration as WasiDuration, Instant as WasiInstant,
};
use wasmtime_wasi::p2::{DynPollable, Pollable, subscribe};

use crate::engine::EPOCH_TICK;
use crate::stop::Stop;

/// The store's clocks together with what stops the running program.
pub(crate) struct DeadlineClock<'a> {
    pub(crate) clocks: WasiClocksCtxView<'a>,
    pub(crate) stop: &'a Arc<Stop>,
}

pub(crate) struct HasDeadlineClock;

impl HasData for HasDeadlineClock {
    type Data<'a> = DeadlineClock<'a>;
}

impl DeadlineClock<'_> {
    /// A timer for `wanted`, or less if the deadline (plus two epoch
    /// ticks, so the epoch has surely passed it on waking) comes first,
    /// that also wakes when the program is signalled.
    fn sleep(&mut self, wanted: Duration) -> wasmtime::Result<Resource<DynPollable>> {
        let left = self
            .stop
            .wake_at()
            .saturating_duration_since(Instant::now())
            + 2 * EPOCH_TICK;
        let now = tokio::time::Instant::now();
        let timer = StopAwareTimer {
            until: now.checked_add(wanted.min(left)),
            yielded: false,
            stop: self.stop.clone(),
        };
        let resource = self.clocks.table.push(timer)?;
        subscribe(self.clocks.table, resource)
    }
}

/// A guest's timer: ready at `until` (`None`: never, for times too far
/// to represent) or when a signal stops the program.
struct StopAwareTimer {
    until: Option<tokio::time::Instant>,
    /// A zero-length timer yields once, so a guest polling in a busy loop
    /// does not starve the runtime (as wasmtime-wasi's own timers do).
    yielded: bool,
    stop: Arc<Stop>,
}

#[wasmtime_wasi::async_trait]
impl Pollable for StopAwareTimer {
    async fn ready(&mut self) {
        if let Some(until) = self.until
            && until <= tokio::time::Instant::now()
        {
            if !self.yielded {
                self.yielded = true;
                tokio::task::yield_now().await;
            }
            return;
        }
        let until = self.until;
        let mut timer = std::pin::pin!(async move {
            match until {
                Some(until) => tokio::time::sleep_until(until).await,
                None => std::future::pending().await,
            }
        });
        let mut signalled = std::pin::pin!(self.stop.signalled());
        std::future::poll_fn(|cx| {
            if timer.as_mut().poll(cx).is_ready() || signalled.as_mut().poll(cx).is_ready() {
                std::task::Poll::Ready(())
            } else {
                std::task::Poll::Pending
            }
        })
        .await
    }
}

impl monotonic_clock::Host for DeadlineClock<'_> {
    fn now(&mut self) -> wasmtime::Result<WasiInstant> {
        self.clocks.now()
    }

    fn resolution(&mut self) -> wasmtime::Result<WasiInstant> {
        self.clocks.resolution()
    }

    fn subscribe_instant(&mut self, when: WasiInstant) -> wasmtime::Result<Resource<DynPollable>> {
        let now = self.clocks.now()?;
        self.sleep(Duration::from_nanos(when.saturating_sub(now)))
    }

    fn subscribe_duration(
        &mut self,
        wanted: WasiDuration,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        self.sleep(Duration::from_nanos(wanted))
    }
}
