//! The edge: everything between a user and a sandbox.
//!
//! Today it holds the `ephemeral` command line (`exec`: one command in a
//! fresh sandbox, no model). The HTTP API, the streamed timeline, the store,
//! the ledger and the agent loop arrive with their issues and live here as
//! one module per concept (`api/`, `timeline.rs`, `ledger.rs`, `store/`,
//! `agent/`), assembled in one `Server`.

pub mod cli;
