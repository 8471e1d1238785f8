//! Records are kept `retention.days` (30 by default), then purged with
//! their timelines by this background task; idempotency keys after 24 h.

use std::sync::Arc;
use std::time::Duration;

use crate::state::Edge;
use crate::timestamp::now_ms;

/// How long an `Idempotency-Key` is remembered (API.md).
pub const IDEMPOTENCY_TTL: Duration = Duration::from_secs(24 * 3600);

pub fn expires_at(created_at: i64, days: u32) -> i64 {
    created_at + i64::from(days) * 86_400_000
}

pub async fn purge_loop(edge: Arc<Edge>) {
    let every = Duration::from_secs(edge.config.retention.purge_interval_seconds.max(1));
    let mut interval = tokio::time::interval(every);
    loop {
        interval.tick().await;
        purge_once(&edge).await;
    }
}

pub async fn purge_once(edge: &Edge) -> u64 {
    let now = now_ms();
    let idempotency_before = now - IDEMPOTENCY_TTL.as_millis() as i64;
    match edge.store.purge(now, idempotency_before).await {
        Ok(n) => {
            if n > 0 {
                tracing::info!(runs = n, "purged expired runs");
            }
            n
        }
        Err(e) => {
            tracing::warn!(error = %e, "purge failed");
            0
        }
    }
}
