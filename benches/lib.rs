//! Shared set-up for the benchmarks in `benches/`: each figure of the
//! README's performance table comes from one of them.
//!
//! - `sandbox` (criterion): fresh sandbox + `echo hi` + destroy; one command
//!   in an existing sandbox; the shell loaded from the cache vs compiled.
//! - `percentiles`: the same runs as p50/p99 over many iterations, plus the
//!   memory an idle sandbox costs.

use std::sync::Arc;

use ephemeral_runtime::{Runtime, RuntimeConfig};

/// A runtime whose component cache lives in cargo's target folder, warm
/// after the first run like a long-lived server's.
pub fn runtime() -> Arc<Runtime> {
    let cache = std::env::temp_dir().join("ephemeral-bench-cache");
    Runtime::new(RuntimeConfig {
        cache_dir: Some(cache),
        ..RuntimeConfig::default()
    })
    .expect("runtime starts")
}

/// Resident memory of this process in bytes, from `/proc/self/statm`.
pub fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}
