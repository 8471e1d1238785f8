//! The worker process from its first instruction: close what it inherited
//! by accident, jail itself, warm its engine, lock itself, then serve.
//! `ephemeral worker` calls [`run`]; so will the microVM's init.

use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::Arc;

use ephemeral_runtime::{Runtime, RuntimeConfig};

use crate::channel::{ChannelError, write_frame};
use crate::jail::{self, JailError, JailPlan};
use crate::protocol::FromWorker;

/// The stream's descriptor number in a spawned worker.
pub const STREAM_FD: RawFd = 3;

/// Why the worker stopped before or while serving.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The jail could not be put up.
    #[error(transparent)]
    Jail(#[from] JailError),
    /// The runtime could not be made.
    #[error("the sandbox runtime: {0}")]
    Runtime(#[from] ephemeral_runtime::Error),
    /// Serving the stream failed.
    #[error(transparent)]
    Channel(#[from] ChannelError),
    /// The stream could not be set up.
    #[error("the stream: {0}")]
    Stream(#[from] std::io::Error),
}

/// How the worker was started.
#[derive(Debug, Clone)]
pub struct WorkerArgs {
    /// The stream's descriptor (default [`STREAM_FD`]).
    pub fd: RawFd,
    /// `None`: no jail (the microVM's init, or a development run).
    pub jail: Option<JailPlan>,
    /// The precompiled component cache.
    pub cache_dir: PathBuf,
    /// The programs folder (`python3.wasm`…).
    pub programs_dir: PathBuf,
    /// Speak the protocol over this device (a microVM's `/dev/hvc0`)
    /// instead of the inherited descriptor.
    pub channel: Option<PathBuf>,
    /// This process is a microVM's init: mount what a guest needs first,
    /// and reboot (the VMM's "done") when the run is over.
    pub guest_init: bool,
    /// Load components precompiled for a portable CPU baseline (what a
    /// host prepares for its guests; see `RuntimeConfig::portable_target`).
    pub portable: bool,
    /// Be a fork server (`fork_server.rs`): make jailed copies of this warm
    /// worker on the host's request instead of serving one run.
    pub fork_server: bool,
}

/// This binary's own target triple, for portable precompiled components.
pub const TARGET_TRIPLE: &str = if cfg!(target_env = "musl") {
    "x86_64-unknown-linux-musl"
} else {
    "x86_64-unknown-linux-gnu"
};

/// Components a worker may run at once: the shell and a program it starts.
const COMPONENTS_AT_ONCE: u32 = 4;

/// The worker's life: jail, warm engine, lock, then serve the stream until the
/// run is over. A microVM's init reboots at the end instead of returning.
pub fn run(args: WorkerArgs) -> Result<(), WorkerError> {
    if args.guest_init {
        let result = crate::guest_init::run(&args);
        if let Err(e) = &result {
            eprintln!("ephemeral-worker: {e}");
        }
        crate::guest_init::reboot();
    }
    close_inherited(args.fd);
    // SAFETY: the host handed us this descriptor, open, for us alone.
    let stream = unsafe { UnixStream::from_raw_fd(args.fd) };
    if args.fork_server {
        return crate::fork_server::run(&args, stream);
    }
    match start(&args) {
        Ok(runtime) => Ok(crate::guest::serve(
            runtime,
            stream.try_clone()?,
            stream,
            false,
        )?),
        Err(e) => {
            // Tell the host why, so the run's error names the cause.
            let _ = write_frame(
                &mut &stream,
                &FromWorker::Error {
                    message: e.to_string(),
                },
            );
            Err(e)
        }
    }
}

pub(crate) fn start(args: &WorkerArgs) -> Result<Arc<Runtime>, WorkerError> {
    let runtime = warm(args)?;
    if args.jail.is_some() {
        jail::lock(&jail::seccomp::AllowList::worker()?)?;
    }
    Ok(runtime)
}

/// Steps 1 and 2 of the jail (see `ephemeral_jail`): jailed, engine warm,
/// not yet locked.
pub(crate) fn warm(args: &WorkerArgs) -> Result<Arc<Runtime>, WorkerError> {
    if let Some(plan) = &args.jail {
        let landlock = jail::enter(plan)?;
        tracing::debug!(?landlock, "jail entered");
    }
    runtime(args)
}

/// The engine, warm: the shell loaded, the programs' trees laid in.
fn runtime(args: &WorkerArgs) -> Result<Arc<Runtime>, WorkerError> {
    Ok(Runtime::new(runtime_config(args))?)
}

/// What a worker's engine is made with.
pub(crate) fn runtime_config(args: &WorkerArgs) -> RuntimeConfig {
    RuntimeConfig {
        cache_dir: Some(args.cache_dir.clone()),
        programs_dir: Some(args.programs_dir.clone()),
        max_concurrent: COMPONENTS_AT_ONCE,
        portable_target: args.portable.then(|| TARGET_TRIPLE.to_string()),
        ..RuntimeConfig::default()
    }
}

/// Closes every descriptor but stdio and the stream: a descriptor the host
/// forgot to mark close-on-exec must not reach the sandbox.
fn close_inherited(keep: RawFd) {
    for fd in 3..=keep.max(3) {
        if fd != keep {
            // SAFETY: closing a descriptor number we do not use.
            unsafe { libc::close(fd) };
        }
    }
    // SAFETY: close_range with integer arguments.
    unsafe { libc::syscall(libc::SYS_close_range, keep + 1, u32::MAX, 0) };
}

impl WorkerArgs {
    /// Parses what [`crate::host::WorkerConfig`] puts on the command line:
    /// `--fd N [--no-jail] [--tmpfs-bytes N] [--max-threads N]
    /// [--max-open-files N] [--bind SOURCE=NAME]…`.
    pub fn parse(args: &[String]) -> Result<WorkerArgs, String> {
        let mut fd = STREAM_FD;
        let mut jail = true;
        let mut channel = None;
        let mut guest_init = false;
        let mut portable = false;
        let mut fork_server = false;
        let mut plan = JailPlan {
            tmpfs_bytes: crate::host::DEFAULT_TMPFS_BYTES,
            binds: Vec::new(),
            max_open_files: crate::host::DEFAULT_MAX_OPEN_FILES,
            max_threads: crate::host::DEFAULT_MAX_TASKS,
        };
        let mut cache_dir = None;
        let mut programs_dir = None;
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            // A guest kernel hands init the command-line words it did not
            // take itself; they are not ours.
            if !flag.starts_with("--") {
                continue;
            }
            match flag.as_str() {
                "--no-jail" => {
                    jail = false;
                    continue;
                }
                // A microVM's init: the VM is the wall, no jail inside.
                "--guest-init" => {
                    guest_init = true;
                    jail = false;
                    continue;
                }
                "--portable" => {
                    portable = true;
                    continue;
                }
                "--fork-server" => {
                    fork_server = true;
                    continue;
                }
                _ => {}
            }
            let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
            let number = || {
                value
                    .parse::<u64>()
                    .map_err(|_| format!("{flag}: {value:?} is not a number"))
            };
            match flag.as_str() {
                "--fd" => fd = number()? as RawFd,
                "--tmpfs-bytes" => plan.tmpfs_bytes = number()?,
                "--max-threads" => plan.max_threads = number()?,
                "--max-open-files" => plan.max_open_files = number()?,
                "--channel" => channel = Some(PathBuf::from(value)),
                "--bind" => {
                    let (source, name) = value
                        .split_once('=')
                        .ok_or_else(|| format!("--bind {value:?}: expected SOURCE=NAME"))?;
                    match name {
                        "cache" => cache_dir = Some(PathBuf::from(source)),
                        "programs" => programs_dir = Some(PathBuf::from(source)),
                        _ => {}
                    }
                    plan.binds.push(jail::Bind {
                        source: PathBuf::from(source),
                        name: name.to_string(),
                    });
                }
                other => return Err(format!("unknown worker option {other}")),
            }
        }
        // Inside the jail the binds sit at `/NAME`; without it, where they are.
        let place = |dir: Option<PathBuf>, name: &str| match (jail, dir) {
            (true, _) => jail::inside(name),
            (false, Some(dir)) => dir,
            (false, None) => jail::inside(name),
        };
        Ok(WorkerArgs {
            fd,
            cache_dir: place(cache_dir, "cache"),
            programs_dir: place(programs_dir, "programs"),
            jail: jail.then_some(plan),
            channel,
            guest_init,
            portable,
            fork_server,
        })
    }
}
