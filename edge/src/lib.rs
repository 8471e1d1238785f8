//! The edge: everything between a user and a sandbox.
//!
//! The HTTP API of API.md (`api/`), the run's path from reservation to
//! settlement (`lifecycle.rs`), the timeline (`timeline.rs`), the ledger's
//! rule (`ledger.rs`) and the store that applies it (`store/`), the seam to
//! the run's work (`executor/`), and the `ephemeral` command line (`cli/`).
//! `listener.rs` owns connections (caps, timeouts); `server.rs` assembles
//! them.

pub mod agent;
pub mod api;
pub mod broker;
pub mod cli;
pub mod config;
pub mod executor;
pub mod ids;
pub mod isolation;
pub mod ledger;
pub mod lifecycle;
pub mod listener;
pub mod metrics;
pub mod microvm_host;
pub mod ratelimit;
pub mod recovery;
pub mod retention;
pub mod run;
pub mod sandbox_host;
pub mod server;
pub mod store;
pub mod timeline;
pub mod timestamp;
