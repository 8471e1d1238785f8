//! `/metrics` in the Prometheus text format: runs by status, run duration
//! and stage latencies as histograms, active runs, SSE readers, and the
//! ledger's totals (read from the store at scrape time).

use std::sync::atomic::AtomicI64;
use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use crate::run::RunStatus;
use crate::store::LedgerTotals;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabel {
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StageLabel {
    stage: String,
}

/// This node's Prometheus metrics, served at `/metrics`.
pub struct Metrics {
    registry: Registry,
    runs: Family<StatusLabel, Counter>,
    duration: Histogram,
    stages: Family<StageLabel, Histogram>,
    active: Gauge,
    readers: Gauge,
    ledger: [Gauge<i64, AtomicI64>; 4],
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Every metric registered, at zero.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("ephemeral");
        let runs = Family::<StatusLabel, Counter>::default();
        registry.register("runs", "Runs ended on this node, by status", runs.clone());
        let duration = Histogram::new(exponential_buckets(0.01, 2.0, 18));
        registry.register(
            "run_duration_seconds",
            "Wall time of runs, creation to settlement",
            duration.clone(),
        );
        let stages = Family::<StageLabel, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.0001, 2.0, 20))
        });
        registry.register(
            "stage_latency_seconds",
            "Time from a run's creation to each stage",
            stages.clone(),
        );
        let active = Gauge::default();
        registry.register("active_runs", "Runs in flight on this node", active.clone());
        let readers = Gauge::default();
        registry.register(
            "sse_readers",
            "Open timeline streams on this node",
            readers.clone(),
        );
        let ledger: [Gauge<i64, AtomicI64>; 4] = Default::default();
        let names = [
            ("ledger_balance_micros", "Sum of organisations' balances"),
            (
                "ledger_held_micros",
                "Sum of reservations of runs in flight",
            ),
            ("ledger_charged_micros", "Sum of all charges"),
            ("ledger_reserved_micros", "Sum of all reservations"),
        ];
        for ((name, help), gauge) in names.iter().zip(ledger.iter()) {
            registry.register(*name, *help, gauge.clone());
        }
        Metrics {
            registry,
            runs,
            duration,
            stages,
            active,
            readers,
            ledger,
        }
    }

    /// Records that a run reached `stage` this long after it was created.
    pub fn stage(&self, stage: &str, since_created: Duration) {
        self.stages
            .get_or_create(&StageLabel {
                stage: stage.into(),
            })
            .observe(since_created.as_secs_f64());
    }

    /// A run (or sandbox) is now in flight.
    pub fn run_started(&self) {
        self.active.inc();
    }

    /// Counts an end by `status`; a zero `duration` (a run recovered after a
    /// crash) is not observed.
    pub fn run_ended(&self, status: RunStatus, duration: Duration) {
        self.runs
            .get_or_create(&StatusLabel {
                status: status.as_str().into(),
            })
            .inc();
        if !duration.is_zero() {
            self.duration.observe(duration.as_secs_f64());
        }
    }

    /// A run (or sandbox) is no longer in flight.
    pub fn run_forgotten(&self) {
        self.active.dec();
    }

    /// A timeline stream opened.
    pub fn reader_opened(&self) {
        self.readers.inc();
    }

    /// A timeline stream closed.
    pub fn reader_closed(&self) {
        self.readers.dec();
    }

    /// Timeline streams open now.
    pub fn readers(&self) -> i64 {
        self.readers.get()
    }

    /// The text exposition, with the ledger's totals as of now.
    pub fn render(&self, totals: LedgerTotals) -> String {
        let values = [
            totals.balance_micros,
            totals.held_micros,
            totals.charged_micros,
            totals.reserved_micros,
        ];
        for (gauge, value) in self.ledger.iter().zip(values) {
            gauge.set(value);
        }
        let mut out = String::new();
        let _ = encode(&mut out, &self.registry);
        out
    }

    /// Runs and sandboxes in flight now.
    pub fn active(&self) -> i64 {
        self.active.get()
    }
}
