//! What a run has used, as it goes: model calls and tokens, and micros by
//! kind. The edge persists it every tick and watches it against the
//! reservation; crossing the reservation ends the run `budget_exceeded`.

use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::run::{Metered, Usage};

#[derive(Clone)]
pub struct Meter {
    state: Arc<Mutex<(Usage, Metered)>>,
    reserved: i64,
    exceeded: watch::Sender<bool>,
}

impl Meter {
    pub fn new(reserved: i64, usage: Usage, metered: Metered) -> Meter {
        Meter {
            state: Arc::new(Mutex::new((usage, metered))),
            reserved,
            exceeded: watch::channel(false).0,
        }
    }

    pub fn model_call(&self, input_tokens: i64, output_tokens: i64, cost_micros: i64) {
        self.update(|usage, metered| {
            usage.model_calls += 1;
            usage.input_tokens += input_tokens;
            usage.output_tokens += output_tokens;
            metered.model_micros = metered.model_micros.saturating_add(cost_micros);
        });
    }

    pub fn web(&self, cost_micros: i64) {
        self.update(|_, metered| {
            metered.web_micros = metered.web_micros.saturating_add(cost_micros)
        });
    }

    /// Compute is measured, not added: the latest total.
    pub fn set_compute(&self, micros: i64) {
        self.update(|_, metered| metered.compute_micros = micros);
    }

    pub fn snapshot(&self) -> (Usage, Metered) {
        *self.lock()
    }

    /// Micros left before the reservation is used up.
    pub fn remaining(&self) -> i64 {
        self.reserved - self.lock().1.total()
    }

    /// Resolves once usage passes the reservation.
    pub fn exceeded(&self) -> watch::Receiver<bool> {
        self.exceeded.subscribe()
    }

    fn update(&self, f: impl FnOnce(&mut Usage, &mut Metered)) {
        let total = {
            let mut state = self.lock();
            let (usage, metered) = &mut *state;
            f(usage, metered);
            metered.total()
        };
        if total > self.reserved {
            self.exceeded.send_replace(true);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (Usage, Metered)> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passing_the_reservation_is_signalled() {
        let meter = Meter::new(1_000, Usage::default(), Metered::default());
        let rx = meter.exceeded();
        meter.model_call(10, 5, 600);
        assert!(!*rx.borrow());
        meter.set_compute(400);
        assert!(!*rx.borrow(), "using exactly the reservation is fine");
        meter.web(1);
        assert!(*rx.borrow());
        assert_eq!(meter.snapshot().0.model_calls, 1);
    }
}
