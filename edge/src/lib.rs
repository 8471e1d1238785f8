//! The edge: everything between a user and a sandbox.
//!
//! The path of a run, in four files: the route of `POST /v1/runs`
//! (`api/runs.rs`: HTTP only), the run's life from admission to
//! settlement with its executor (`lifecycle.rs`, `executor/`), the sandbox
//! it runs commands in (`sandbox/mod.rs`), and the worker's loop that
//! holds the sandbox (`ephemeral_worker::guest`).
//!
//! A sandbox its caller drives (`POST /v1/sandboxes`) takes the same
//! admission and settlement with no executor: `api/sandboxes.rs`, then
//! `session/` holds it until it ends.
//!
//! Around it: the timeline (`timeline/`: event kinds, writer, live hub,
//! reader), what a model id means (`models.rs`), the agent loop
//! (`agent/`), the only holder of credentials (`broker/`), the ledger's
//! rule (`ledger.rs`) and the store that applies it (`store/`), what is in
//! flight (`in_flight.rs`), connections (`listener.rs`), and the
//! `ephemeral` command line (`cli/`). `server.rs` assembles the parts into
//! [`state::Edge`]; nothing below it imports it.

#![warn(missing_docs)]

pub(crate) mod agent;
pub mod api;
pub mod broker;
pub mod cli;
pub mod config;
pub(crate) mod executor;
pub mod ids;
pub(crate) mod in_flight;
pub mod install;
pub mod isolation;
pub(crate) mod ledger;
pub mod lifecycle;
pub(crate) mod listener;
pub(crate) mod mcp;
pub mod metrics;
pub mod models;
pub(crate) mod outputs;
pub(crate) mod pricing;
pub(crate) mod ratelimit;
pub(crate) mod recovery;
pub(crate) mod retention;
pub mod run;
pub mod samples;
pub(crate) mod sandbox;
pub mod server;
pub mod session;
pub(crate) mod state;
pub mod store;
pub(crate) mod timeline;
pub mod timestamp;
