//! What every request handler and run task shares: the edge's parts, by
//! name. Assembled once by `server.rs`; nothing here knows how a run goes.

use std::sync::Arc;

use ephemeral_runtime::Runtime;

use crate::broker::{Broker, Scrubber};
use crate::config::{Config, PricesConfig};
use crate::in_flight::InFlight;
use crate::isolation::Isolation;
use crate::metrics::Metrics;
use crate::ratelimit::RateLimiter;
use crate::sandbox::SandboxSource;
use crate::session::{self, Sessions};
use crate::store::Store;
use crate::timeline::Hub;

/// The edge's shared state.
pub struct Edge {
    pub(crate) config: Config,
    /// Organisations, runs, timelines and the ledger.
    pub store: Arc<dyn Store>,
    /// Live runs' timelines.
    pub(crate) hub: Arc<Hub>,
    /// The sandbox runtime of this process (its cache, its programs).
    pub(crate) runtime: Arc<Runtime>,
    /// Where sandboxes come from (microVMs, jailed workers, or threads).
    pub(crate) sandboxes: Arc<dyn SandboxSource>,
    /// The sandboxes their callers drive, held by this node.
    pub(crate) sessions: Sessions,
    /// What this node has in flight, and its drain.
    pub(crate) in_flight: InFlight,
    pub(crate) node_id: String,
    /// This node's metrics.
    pub metrics: Metrics,
    pub(crate) rate: RateLimiter,
    /// The only holder of credentials.
    pub(crate) broker: Arc<Broker>,
    /// `GET /v1/runtime`'s answer, worked out on its first call.
    pub(crate) runtime_description: tokio::sync::OnceCell<serde_json::Value>,
}

impl Edge {
    /// The isolation every sandbox of this node has.
    pub fn isolation(&self) -> Isolation {
        self.sandboxes.isolation()
    }
}

impl session::Node for Edge {
    fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    fn hub(&self) -> &Hub {
        &self.hub
    }

    fn scrubber(&self) -> Arc<Scrubber> {
        self.broker.scrubber()
    }

    fn sandboxes(&self) -> &dyn SandboxSource {
        self.sandboxes.as_ref()
    }

    fn in_flight(&self) -> &InFlight {
        &self.in_flight
    }

    fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    fn prices(&self) -> &PricesConfig {
        &self.config.prices
    }

    fn sessions(&self) -> &Sessions {
        &self.sessions
    }
}
