//! What one sandbox may use, and how a limit that was hit is reported.
//!
//! Every limit is enforced by the runtime, not by the guest's good will:
//! wall time by wasmtime's epoch deadlines, memory by a `ResourceLimiter`,
//! output by the stdout/stderr pipes, disk by the in-memory tree's quota.
//! Hitting one ends or refuses the guest's work and is reported by name;
//! it never harms the host process or the next sandbox.

use std::time::Duration;

use wasmtime::ResourceLimiter;

use crate::memfs::{Quota, QuotaHit};

/// Caps for one sandbox. `Default` gives the values used when a run does
/// not say otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall time of one command.
    pub command_timeout: Duration,
    /// Wall time of all the sandbox's commands together.
    pub sandbox_timeout: Duration,
    /// Linear memory of one running component (bytes).
    pub memory_bytes: usize,
    /// stdout and stderr of one command together (bytes); more is dropped
    /// and the command's output streams close.
    pub output_bytes: usize,
    /// File contents stored in the sandbox (bytes).
    pub disk_bytes: u64,
    /// Files, folders and symlinks in the sandbox.
    pub disk_files: u64,
}

/// Default wall time of one command.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
/// Default wall time of a whole sandbox (the API's default run timeout).
pub const DEFAULT_SANDBOX_TIMEOUT: Duration = Duration::from_secs(120);
/// Default memory cap: room for CPython and its standard library.
pub const DEFAULT_MEMORY_BYTES: usize = 512 << 20;
/// Default output cap of one command.
pub const DEFAULT_OUTPUT_BYTES: usize = 1 << 20;
/// Default disk quota.
pub const DEFAULT_DISK_BYTES: u64 = 64 << 20;
/// Default node quota.
pub const DEFAULT_DISK_FILES: u64 = 10_000;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            command_timeout: DEFAULT_COMMAND_TIMEOUT,
            sandbox_timeout: DEFAULT_SANDBOX_TIMEOUT,
            memory_bytes: DEFAULT_MEMORY_BYTES,
            output_bytes: DEFAULT_OUTPUT_BYTES,
            disk_bytes: DEFAULT_DISK_BYTES,
            disk_files: DEFAULT_DISK_FILES,
        }
    }
}

impl Limits {
    pub(crate) fn quota(&self) -> Quota {
        Quota {
            max_bytes: self.disk_bytes,
            max_nodes: self.disk_files,
        }
    }
}

/// The limit a command ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LimitHit {
    /// The command ran past its own wall-time limit.
    CommandTimeout,
    /// The sandbox's total wall time ran out.
    SandboxTimeout,
    /// The component asked for more memory than allowed.
    Memory,
    /// stdout+stderr exceeded the output cap and were truncated.
    Output,
    /// The sandbox's disk byte quota refused a write.
    DiskBytes,
    /// The sandbox's file-count quota refused a new file.
    DiskFiles,
    /// A pipe between two stages of a shell pipeline filled its buffer
    /// (the stages run one after another): what came after was cut.
    Pipe,
    /// A program overflowed its wasm stack (deep recursion, deeply nested
    /// input): it ended with `EXIT_TRAP` and a line on stderr.
    Stack,
}

impl LimitHit {
    /// A stable name, as reported on the timeline and by the CLI.
    pub fn name(self) -> &'static str {
        match self {
            LimitHit::CommandTimeout => "command_timeout",
            LimitHit::SandboxTimeout => "sandbox_timeout",
            LimitHit::Memory => "memory",
            LimitHit::Output => "output",
            LimitHit::DiskBytes => "disk_bytes",
            LimitHit::DiskFiles => "disk_files",
            LimitHit::Pipe => "pipe",
            LimitHit::Stack => "stack",
        }
    }

    /// Every limit, for lookups by name.
    pub const ALL: [LimitHit; 8] = [
        LimitHit::CommandTimeout,
        LimitHit::SandboxTimeout,
        LimitHit::Memory,
        LimitHit::Output,
        LimitHit::DiskBytes,
        LimitHit::DiskFiles,
        LimitHit::Pipe,
        LimitHit::Stack,
    ];

    /// The limit called `name` (see [`LimitHit::name`]).
    pub fn from_name(name: &str) -> Option<LimitHit> {
        LimitHit::ALL.into_iter().find(|l| l.name() == name)
    }

    pub(crate) fn from_quota(hit: QuotaHit) -> LimitHit {
        match hit {
            QuotaHit::Bytes => LimitHit::DiskBytes,
            QuotaHit::Nodes => LimitHit::DiskFiles,
        }
    }
}

impl std::fmt::Display for LimitHit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Most table elements one component may have; tables hold function
/// references and grow only with code size, so this only stops abuse.
const MAX_TABLE_ELEMENTS: usize = 1 << 20;

/// Caps a store's memories and remembers whether the cap was hit.
pub(crate) struct MemoryLimiter {
    max_bytes: usize,
    pub(crate) hit: bool,
}

impl MemoryLimiter {
    pub(crate) fn new(max_bytes: usize) -> MemoryLimiter {
        MemoryLimiter {
            max_bytes,
            hit: false,
        }
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max_bytes {
            self.hit = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}
