//! `wasi:clocks/monotonic-clock` whose sleeps never outlast the command.
//!
//! Epoch deadlines stop wasm code, but a guest blocked in a host call
//! (`sleep 3600` is one long `poll`) runs no wasm to interrupt. So every
//! timer a guest subscribes to is cut at the command's deadline: the guest
//! wakes then, and the first wasm it runs traps with the epoch interrupt.
//! Time itself is reported truthfully; only waiting is bounded.

use std::time::{Duration, Instant};

use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::clocks::WasiClocksCtxView;
use wasmtime_wasi::p2::DynPollable;
use wasmtime_wasi::p2::bindings::clocks::monotonic_clock::{
    self, Duration as WasiDuration, Instant as WasiInstant,
};

use crate::engine::EPOCH_TICK;

/// The store's clocks together with the running command's deadline.
pub(crate) struct DeadlineClock<'a> {
    pub(crate) clocks: WasiClocksCtxView<'a>,
    pub(crate) deadline: Instant,
}

pub(crate) struct HasDeadlineClock;

impl HasData for HasDeadlineClock {
    type Data<'a> = DeadlineClock<'a>;
}

impl DeadlineClock<'_> {
    /// `wanted`, or less if the deadline (plus two epoch ticks, so the
    /// epoch has surely passed it on waking) comes first.
    fn bounded(&self, wanted: Duration) -> WasiDuration {
        let left = self.deadline.saturating_duration_since(Instant::now()) + 2 * EPOCH_TICK;
        u64::try_from(wanted.min(left).as_nanos()).unwrap_or(u64::MAX)
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
        let wanted = Duration::from_nanos(when.saturating_sub(now));
        let bounded = self.bounded(wanted);
        self.clocks.subscribe_duration(bounded)
    }

    fn subscribe_duration(
        &mut self,
        wanted: WasiDuration,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        let bounded = self.bounded(Duration::from_nanos(wanted));
        self.clocks.subscribe_duration(bounded)
    }
}
