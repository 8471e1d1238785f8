//! The WASI sandbox every Ephemeral run stands on.
//!
//! This crate owns the wasmtime engine and its precompiled-component cache
//! ([`Runtime`]), the in-memory filesystem a sandbox sees ([`memfs`]), and
//! the per-run [`Sandbox`]: a fixed user `worker`, a scratch folder under
//! `/tmp`, no sockets and no host files, and limits on time, memory,
//! output and disk that are reported by name when hit. `exec` runs a
//! command with the shell component from `shell-wasi/`, streaming its
//! output. The same code runs in-process (isolation `wasm`) and, in later
//! layers, inside a jailed worker process or a microVM.

#![warn(missing_docs)]

mod bindings;
pub mod component_cache;
mod deadline_clock;
mod engine;
mod entropy;
mod error;
mod files;
mod launch;
pub mod limits;
mod linker;
pub mod memfs;
mod output;
mod process;
mod program_root;
mod programs;
mod sandbox;
mod shell_host;
mod stop;

pub use crate::component_cache::CacheOutcome;
pub use crate::engine::{
    PORTABLE_CPU_FLAGS, Program, Runtime, RuntimeConfig, SHELL_WASM, precompile_for_target,
};
pub use crate::error::Error;
pub use crate::files::{FileError, FileInfo, FileKind, MAX_CHUNK};
pub use crate::launch::{EXIT_MEMORY, EXIT_TIMEOUT, EXIT_TRAP};
pub use crate::limits::{LimitHit, Limits};
pub use crate::output::{OutputSink, Stream};
pub use crate::sandbox::{
    Captured, ExecOutcome, PATH, Sandbox, SandboxBuilder, SandboxUsage, USER,
};
