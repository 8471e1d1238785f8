//! One run's sandbox: its own in-memory filesystem, environment and shell
//! state, and `exec` to run a command in it.
//!
//! Between commands a sandbox is only data (the tree, the working folder,
//! the exported variables): no wasm instance stays alive, so an idle
//! sandbox costs a few kilobytes. Each `exec` instantiates the pre-linked
//! shell in a fresh store with the sandbox's limits, runs it, and keeps
//! the state the shell hands back.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::Rng;
use wasmtime::component::ResourceTable;
use wasmtime::{Store, Trap};
use wasmtime_wasi::{I32Exit, WasiCtx};

use crate::Error;
use crate::engine::{EPOCH_TICK, Program, Runtime};
use crate::limits::{LimitHit, Limits, MemoryLimiter};
use crate::memfs::MemFs;
use crate::output::{OutputPipes, OutputSink, Stream};

/// The sandbox user, as `whoami` and `ls -l` show it.
pub const USER: &str = "worker";
/// Where commands look for programs.
pub const PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// Exit status of a command stopped at its time limit (as GNU `timeout`).
pub const EXIT_TIMEOUT: i32 = 124;
/// Exit status of a command stopped at its memory cap (as after SIGKILL
/// from the kernel's OOM killer).
pub const EXIT_MEMORY: i32 = 137;
/// Exit status of a command whose component trapped (as after SIGABRT).
pub const EXIT_TRAP: i32 = 134;
/// The most state (bytes of names, values and folder) the shell may hand
/// from one command to the next; more is ignored.
const MAX_SAVED_STATE: usize = 1 << 20;
/// Characters of the random part of the run folder's name (as `mktemp`).
const RUN_DIR_ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// What the shell leaves for the next command.
#[derive(Debug, Clone)]
pub(crate) struct SavedState {
    pub(crate) cwd: String,
    pub(crate) exported: Vec<(String, String)>,
}

/// The data of a store while one command runs.
pub(crate) struct StoreState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) fs: MemFs,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) saved: Option<SavedState>,
    /// When the running command must stop (for timers, see `deadline_clock`).
    pub(crate) deadline: Instant,
}

/// How one command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutcome {
    /// The command's exit status (124 after a timeout, 137 after the
    /// memory cap, as on Linux).
    pub exit_code: i32,
    /// Wall time from instantiation to exit.
    pub duration: Duration,
    /// The limit the command ran into, if any.
    pub limit: Option<LimitHit>,
    /// Whether stdout/stderr were cut at the output cap.
    pub truncated: bool,
}

/// A command's outcome with its output collected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    pub outcome: ExecOutcome,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Totals of a destroyed sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxUsage {
    pub commands: u64,
    /// Wall time spent running commands.
    pub busy: Duration,
    /// Wall time from creation to destruction.
    pub lifetime: Duration,
}

/// Describes a sandbox before it exists: its limits and the files it
/// starts with. Nothing else is configurable, on purpose: there is no
/// switch for network, host folders or host environment.
pub struct SandboxBuilder {
    runtime: Arc<Runtime>,
    limits: Limits,
    files: Vec<(String, Vec<u8>)>,
}

impl SandboxBuilder {
    pub(crate) fn new(runtime: Arc<Runtime>) -> SandboxBuilder {
        SandboxBuilder {
            runtime,
            limits: Limits::default(),
            files: Vec::new(),
        }
    }

    pub fn limits(mut self, limits: Limits) -> SandboxBuilder {
        self.limits = limits;
        self
    }

    /// A file written before the first command: relative paths are inside
    /// the scratch folder, absolute ones anywhere in the sandbox.
    pub fn file(mut self, path: impl Into<String>, contents: impl Into<Vec<u8>>) -> SandboxBuilder {
        self.files.push((path.into(), contents.into()));
        self
    }

    pub fn build(self) -> Result<Sandbox, Error> {
        let mut limits = self.limits;
        limits.memory_bytes = limits
            .memory_bytes
            .min(self.runtime.config.max_memory_bytes);
        let fs = MemFs::new(limits.quota());
        let scratch = format!("/tmp/ephemeral-run-{}/scratch", random_suffix());
        lay_out(&fs, &scratch)?;
        let mut sandbox = Sandbox {
            env: initial_env(&scratch),
            cwd: scratch.clone(),
            scratch,
            runtime: self.runtime,
            fs,
            limits,
            created: Instant::now(),
            busy: Duration::ZERO,
            commands: 0,
        };
        for (path, contents) in self.files {
            sandbox.put_file(&path, &contents)?;
        }
        Ok(sandbox)
    }
}

fn random_suffix() -> String {
    let mut rng = rand::rng();
    (0..6)
        .map(|_| RUN_DIR_ALPHABET[rng.random_range(0..RUN_DIR_ALPHABET.len())] as char)
        .collect()
}

/// The sandbox's starting tree: a writable `/tmp`, the run's private
/// folder with its scratch folder, `/dev/null`, and the few files of a
/// Linux system that programs read to learn who they are.
fn lay_out(fs: &MemFs, scratch: &str) -> Result<(), Error> {
    let run_dir = scratch.trim_end_matches("/scratch");
    let passwd =
        format!("root:x:0:0:root:/root:/bin/bash\n{USER}:x:1000:1000:{USER}:{scratch}:/bin/bash\n");
    let group = format!("root:x:0:\n{USER}:x:1000:\n");
    let mut tree = fs.lock();
    let result = (|| {
        tree.mkdir_all("/tmp", 0o1777)?;
        tree.mkdir_all(run_dir, 0o700)?;
        tree.mkdir_all(scratch, 0o755)?;
        for dir in ["/bin", "/usr/bin", "/usr/local/bin", "/home"] {
            tree.mkdir_all(dir, 0o755)?;
        }
        tree.put_dev_null("/dev")?;
        tree.put_file("/etc/passwd", passwd.as_bytes(), 0o644)?;
        tree.put_file("/etc/group", group.as_bytes(), 0o644)?;
        tree.put_file("/etc/hostname", b"sandbox\n", 0o644)?;
        Ok(())
    })();
    result.map_err(|e: crate::memfs::FsErr| Error::PutFile {
        path: "/".into(),
        reason: format!("cannot lay out the sandbox (quota too small?): {e}"),
    })
}

fn initial_env(scratch: &str) -> Vec<(String, String)> {
    [
        ("HOME", scratch),
        ("USER", USER),
        ("LOGNAME", USER),
        ("PATH", PATH),
        ("LANG", "C.UTF-8"),
        ("TZ", "UTC"),
        ("SHELL", "/bin/bash"),
        ("HOSTNAME", "sandbox"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect()
}

/// One run's sandbox. Dropping it (or [`Sandbox::destroy`]) frees all of
/// it; nothing of it was ever on the host disk.
pub struct Sandbox {
    runtime: Arc<Runtime>,
    fs: MemFs,
    limits: Limits,
    scratch: String,
    cwd: String,
    env: Vec<(String, String)>,
    created: Instant,
    busy: Duration,
    commands: u64,
}

impl Sandbox {
    /// The run's scratch folder, e.g. `/tmp/ephemeral-run-s2TPIy/scratch`.
    pub fn scratch_dir(&self) -> &str {
        &self.scratch
    }

    /// The working folder the next command starts in.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Bytes and files stored in the sandbox.
    pub fn disk_usage(&self) -> (u64, u64) {
        self.fs.lock().usage()
    }

    /// Writes a file (creating its folders): relative paths are inside the
    /// scratch folder. Counts against the disk quota.
    pub fn put_file(&mut self, path: &str, contents: &[u8]) -> Result<(), Error> {
        let full = if path.starts_with('/') {
            path.to_owned()
        } else {
            format!("{}/{}", self.scratch, path)
        };
        let err = |reason: String| Error::PutFile {
            path: path.to_owned(),
            reason,
        };
        if path.is_empty() || path.ends_with('/') || path.split('/').any(|c| c == "..") {
            return Err(err("not a plain file path".into()));
        }
        self.fs
            .lock()
            .put_file(&full, contents, 0o644)
            .map(|_| ())
            .map_err(|e| err(e.to_string()))
    }

    /// Runs `command` with the shell, streaming its output to `sink`.
    pub fn exec(&mut self, command: &str, sink: impl OutputSink) -> Result<ExecOutcome, Error> {
        let shell = self.runtime.shell.clone();
        self.run(&shell, &["bash", "-c", command], sink)
    }

    /// Runs any program (a command component loaded with
    /// [`Runtime::load_program`]) with `argv`, in this sandbox's filesystem,
    /// environment and working folder, under the same limits.
    pub fn run(
        &mut self,
        program: &Program,
        argv: &[&str],
        sink: impl OutputSink,
    ) -> Result<ExecOutcome, Error> {
        let Some(timeout) = self.time_left() else {
            return Ok(ExecOutcome {
                exit_code: EXIT_TIMEOUT,
                duration: Duration::ZERO,
                limit: Some(LimitHit::SandboxTimeout),
                truncated: false,
            });
        };
        let pipes = OutputPipes::new(Box::new(sink), self.limits.output_bytes);
        let mut store = self.store(argv, &pipes, Instant::now() + timeout);
        store.set_epoch_deadline(deadline_ticks(timeout));
        let started = Instant::now();
        let result = program
            .pre
            .instantiate(&mut store)
            .and_then(|cmd| cmd.wasi_cli_run().call_run(&mut store));
        let duration = started.elapsed();
        self.busy += duration;
        self.commands += 1;

        let state = store.into_data();
        if let Some(saved) = state.saved {
            self.keep_state(saved);
        }
        let (exit_code, limit) = self.classify(result, &state.limiter, timeout)?;
        let limit = limit.or(pipes.truncated().then_some(LimitHit::Output));
        let limit = limit.or_else(|| self.fs.lock().quota_hit().map(LimitHit::from_quota));
        Ok(ExecOutcome {
            exit_code,
            duration,
            limit,
            truncated: pipes.truncated(),
        })
    }

    /// Runs `command` and collects its output.
    pub fn exec_captured(&mut self, command: &str) -> Result<Captured, Error> {
        let shell = self.runtime.shell.clone();
        self.run_captured(&shell, &["bash", "-c", command])
    }

    /// Runs a program and collects its output.
    pub fn run_captured(&mut self, program: &Program, argv: &[&str]) -> Result<Captured, Error> {
        let (tx, rx) = std::sync::mpsc::channel::<(Stream, Vec<u8>)>();
        let outcome = self.run(program, argv, move |s: Stream, d: &[u8]| {
            let _ = tx.send((s, d.to_vec()));
        })?;
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        for (stream, data) in rx.try_iter() {
            match stream {
                Stream::Stdout => stdout.extend_from_slice(&data),
                Stream::Stderr => stderr.extend_from_slice(&data),
            }
        }
        Ok(Captured {
            outcome,
            stdout,
            stderr,
        })
    }

    /// Ends the sandbox; everything in it is gone.
    pub fn destroy(self) -> SandboxUsage {
        SandboxUsage {
            commands: self.commands,
            busy: self.busy,
            lifetime: self.created.elapsed(),
        }
    }

    /// The wall time the next command may use, or `None` if the sandbox's
    /// own time is spent.
    fn time_left(&self) -> Option<Duration> {
        let left = self
            .limits
            .sandbox_timeout
            .checked_sub(self.created.elapsed())?;
        (!left.is_zero()).then(|| left.min(self.limits.command_timeout))
    }

    fn store(&self, argv: &[&str], pipes: &OutputPipes, deadline: Instant) -> Store<StoreState> {
        let mut wasi = WasiCtx::builder();
        wasi.args(argv)
            .envs(&self.env)
            .env("PWD", &self.cwd)
            .stdout(pipes.pipe(Stream::Stdout))
            .stderr(pipes.pipe(Stream::Stderr))
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        let state = StoreState {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            fs: self.fs.clone(),
            limiter: MemoryLimiter::new(self.limits.memory_bytes),
            saved: None,
            deadline,
        };
        let mut store = Store::new(self.runtime.engine(), state);
        store.limiter(|s| &mut s.limiter);
        store
    }

    fn keep_state(&mut self, saved: SavedState) {
        let size: usize = saved.cwd.len()
            + saved
                .exported
                .iter()
                .map(|(k, v)| k.len() + v.len())
                .sum::<usize>();
        if size > MAX_SAVED_STATE || !saved.cwd.starts_with('/') {
            tracing::warn!(size, "shell state too large or malformed; not kept");
            return;
        }
        self.cwd = saved.cwd;
        self.env = saved
            .exported
            .into_iter()
            .filter(|(k, _)| k != "PWD" && !k.is_empty() && !k.contains('='))
            .collect();
    }

    /// Turns how the guest ended into an exit status and the limit it hit.
    fn classify(
        &self,
        result: wasmtime::Result<Result<(), ()>>,
        limiter: &MemoryLimiter,
        timeout: Duration,
    ) -> Result<(i32, Option<LimitHit>), Error> {
        let err = match result {
            Ok(Ok(())) => return Ok((0, None)),
            Ok(Err(())) => return Ok((1, None)),
            Err(e) => e,
        };
        if let Some(exit) = err.downcast_ref::<I32Exit>() {
            return Ok((exit.0, None));
        }
        if let Some(Trap::Interrupt) = err.downcast_ref::<Trap>() {
            let hit = if timeout < self.limits.command_timeout {
                LimitHit::SandboxTimeout
            } else {
                LimitHit::CommandTimeout
            };
            return Ok((EXIT_TIMEOUT, Some(hit)));
        }
        if limiter.hit {
            return Ok((EXIT_MEMORY, Some(LimitHit::Memory)));
        }
        if is_pool_exhausted(&err) {
            return Err(Error::Busy);
        }
        // Any other trap is the guest's own crash (e.g. `unreachable` after
        // a panic): the command failed, the host is fine.
        tracing::debug!(error = %format!("{err:#}"), "guest trapped");
        Ok((EXIT_TRAP, None))
    }
}

fn deadline_ticks(timeout: Duration) -> u64 {
    let ticks = timeout.as_nanos() / EPOCH_TICK.as_nanos();
    u64::try_from(ticks).unwrap_or(u64::MAX).max(1)
}

fn is_pool_exhausted(err: &wasmtime::Error) -> bool {
    let text = format!("{err:#}");
    text.contains("maximum concurrent") || text.contains("pooling allocator")
}
