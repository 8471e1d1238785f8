//! The host's side of workers: making them ([`spawn`]), their cgroups
//! ([`cgroup`]), driving one through a run ([`WorkerHandle`]) and keeping a
//! few ready ([`WorkerPool`]).

mod body;
pub mod cgroup;
mod driver;
mod fork_server;
mod frames;
mod handle;
mod idle;
mod pool;
mod process;
mod spawn;

use std::path::PathBuf;
use std::time::Duration;

pub use cgroup::{CgroupLimits, CgroupVersion};
pub use fork_server::ForkServer;
pub use handle::{Command, ExecEvent, FileFailure, WorkerFailure, WorkerHandle, wait_failure};
pub use idle::{IdleWorker, StartError, guest_identity};
pub use pool::WorkerPool;
pub use process::{Exit, WorkerProcess};
pub use spawn::SpawnError;

use crate::entry::STREAM_FD;

/// How workers are made on this host.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// The binary and the arguments that make it a worker
    /// (`ephemeral worker`).
    pub program: PathBuf,
    /// Its arguments before the worker's own.
    pub program_args: Vec<String>,
    /// The precompiled component cache and the programs folder, bound
    /// read-only into every worker.
    pub cache_dir: PathBuf,
    /// The programs folder.
    pub programs_dir: PathBuf,
    /// Size cap of the worker's root tmpfs.
    pub tmpfs_bytes: u64,
    /// Memory a worker may use beyond its sandbox's cap: the engine, the
    /// compiled shell and programs, buffers.
    pub memory_overhead_bytes: u64,
    /// Threads and processes of one worker.
    pub max_tasks: u64,
    /// Open files of one worker at once.
    pub max_open_files: u64,
    /// CPU per wall second, in thousandths of a CPU.
    pub cpu_millis: u64,
    /// How long a new worker may take to be ready.
    pub ready_timeout: Duration,
    /// Which cgroup hierarchy this host has.
    pub cgroups: CgroupVersion,
    /// The program is a microVM's VMM (`ephemeral-vmm serve`) whose guest
    /// runs the worker: every `Start` then carries a guest identity — the
    /// host's time, fresh entropy, a run id — since a guest restored from
    /// a snapshot has the template's clock and random state.
    pub microvm: bool,
    /// The worker loads components precompiled for a portable CPU
    /// (`--portable`), as the server that shares its cache does.
    pub portable: bool,
    /// The pool makes its workers as copies of a fork server
    /// ([`ForkServer`]) rather than spawning each (never for microVMs:
    /// their VMM is another program). If the fork server cannot start here
    /// the pool spawns, and says why in its health.
    pub fork_server: bool,
}

/// Defaults: what a run's worker gets unless the server says otherwise.
pub const DEFAULT_TMPFS_BYTES: u64 = 4 << 20;
/// Default `memory_overhead_bytes`.
pub const DEFAULT_MEMORY_OVERHEAD_BYTES: u64 = 384 << 20;
/// Default `max_tasks`.
pub const DEFAULT_MAX_TASKS: u64 = 64;
/// Default `max_open_files`.
pub const DEFAULT_MAX_OPEN_FILES: u64 = 256;
/// Default `cpu_millis`: one whole CPU.
pub const DEFAULT_CPU_MILLIS: u64 = 1000;
/// Default `ready_timeout`.
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(60);

impl WorkerConfig {
    /// A configuration with the defaults, if this host can jail workers;
    /// otherwise why not.
    pub fn detect(
        program: PathBuf,
        program_args: Vec<String>,
        cache_dir: PathBuf,
        programs_dir: PathBuf,
    ) -> Result<WorkerConfig, String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("jailed workers need root (cgroups and uid maps)".into());
        }
        if !std::path::Path::new("/proc/self/ns/user").exists() {
            return Err("this kernel has no user namespaces".into());
        }
        let cgroups = cgroup::detect()
            .ok_or("no usable cgroups (v2 with memory and pids, or v1 memory, pids and cpu)")?;
        if !program.exists() {
            return Err(format!(
                "the worker binary {} does not exist",
                program.display()
            ));
        }
        cgroup::remove_stale(cgroups);
        Ok(WorkerConfig {
            program,
            program_args,
            cache_dir,
            programs_dir,
            tmpfs_bytes: DEFAULT_TMPFS_BYTES,
            memory_overhead_bytes: DEFAULT_MEMORY_OVERHEAD_BYTES,
            max_tasks: DEFAULT_MAX_TASKS,
            max_open_files: DEFAULT_MAX_OPEN_FILES,
            cpu_millis: DEFAULT_CPU_MILLIS,
            ready_timeout: DEFAULT_READY_TIMEOUT,
            cgroups,
            microvm: false,
            portable: false,
            fork_server: true,
        })
    }

    /// The worker's command line (see [`crate::WorkerArgs::parse`]).
    pub(crate) fn worker_args(&self) -> Vec<String> {
        let mut args = self.program_args.clone();
        args.extend([
            "--fd".into(),
            STREAM_FD.to_string(),
            "--tmpfs-bytes".into(),
            self.tmpfs_bytes.to_string(),
            "--max-threads".into(),
            self.max_tasks.to_string(),
            "--max-open-files".into(),
            self.max_open_files.to_string(),
        ]);
        if self.portable {
            args.push("--portable".into());
        }
        let mut bind = |source: &std::path::Path, name: &str| {
            if source.exists() {
                args.push("--bind".into());
                args.push(format!("{}={name}", source.display()));
            }
        };
        bind(&self.cache_dir, "cache");
        bind(&self.programs_dir, "programs");
        bind(&self.program, "worker");
        args
    }

    pub(crate) fn cgroup_limits(&self, sandbox_memory_bytes: u64) -> CgroupLimits {
        CgroupLimits {
            memory_bytes: sandbox_memory_bytes.saturating_add(self.memory_overhead_bytes),
            max_tasks: self.max_tasks,
            cpu_millis: self.cpu_millis,
        }
    }
}
