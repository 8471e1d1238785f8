//! The per-run worker process: the second wall around a run's sandbox.
//!
//! This crate owns
//! - the worker protocol ([`protocol`]): framed, versioned messages between
//!   the host and a worker over one byte stream, pure and fuzzable, and the
//!   blocking frame I/O of the worker's side ([`channel`]);
//! - the worker itself ([`entry`], [`guest`]): jail, warm engine, one sandbox
//!   served frame by frame — the same loop later runs as a microVM's init;
//! - the fork server (`fork_server.rs`): a jailed, warm worker that makes
//!   copies of itself, each jailed in namespaces of its own, so a ready
//!   worker costs a `clone` instead of an `execve` and a warm-up;
//! - the jail ([`jail`]): namespaces, a tmpfs root, no capabilities,
//!   `no_new_privs`, Landlock, rlimits and a seccomp allow-list;
//! - the host's side ([`host`]): spawning into namespaces and a cgroup,
//!   driving a worker through a run, and a pool of ready workers.
//!
//! It does not decide isolation levels or talk HTTP: that is the edge's.

#![warn(missing_docs)]

pub mod channel;
pub mod entry;
mod fork_server;
pub mod guest;
mod guest_init;
pub mod host;
/// The jail (its own crate: the microVM's VMM uses it too).
pub use ephemeral_jail as jail;
pub mod probe;
pub mod protocol;
mod wire;

pub use entry::{WorkerArgs, WorkerError, run};
pub use host::{ExecEvent, IdleWorker, WorkerConfig, WorkerFailure, WorkerHandle, WorkerPool};
