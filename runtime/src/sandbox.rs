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

use crate::Error;
use crate::engine::{Program, Runtime};
use crate::launch::{EXIT_TIMEOUT, Launch, SavedState};
use crate::limits::{LimitHit, Limits};
use crate::memfs::{FsErr, MemFs, Quota, ROOT, Tree};
use crate::output::{OutputPipes, OutputSink, Stream};

/// The sandbox user, as `whoami` and `ls -l` show it.
pub const USER: &str = "worker";
/// Where commands look for programs.
pub const PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// The most state (bytes of names, values and folder) the shell may hand
/// from one command to the next; more is ignored.
const MAX_SAVED_STATE: usize = 1 << 20;
/// Deadlines closer than this are the same deadline: a command started
/// right after its sandbox, with equal limits, hit its own time limit.
const SAME_DEADLINE: Duration = Duration::from_millis(50);
/// Characters of the random part of the run folder's name (as `mktemp`).
const RUN_DIR_ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

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
        let scratch = format!("/tmp/ephemeral-run-{}/scratch", random_suffix());
        let mut tree = self.runtime.system_tree().clone();
        lay_out_run(&mut tree, &scratch)?;
        tree.start_quota(limits.quota());
        let fs = MemFs::from_tree(tree);
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

/// Six characters from the kernel's generator (never a generator in this
/// process: see `entropy.rs`); a byte modulo 62 is slightly biased,
/// which a folder name can afford.
fn random_suffix() -> String {
    crate::entropy::random_bytes::<6>()
        .iter()
        .map(|b| RUN_DIR_ALPHABET[usize::from(*b) % RUN_DIR_ALPHABET.len()] as char)
        .collect()
}

/// The system part of every sandbox's tree, built once per runtime and
/// cloned for each sandbox: a writable `/tmp`, `/dev/null`, the few files
/// of a Linux system that programs read, and `/usr/bin` listing every
/// program (empty executable stubs: the shell runs the real thing).
pub(crate) fn system_tree(bin_names: &[String]) -> Result<Tree, Error> {
    let group = format!("root:x:0:\n{USER}:x:1000:\n");
    let mut tree = Tree::new(Quota::UNLIMITED);
    let result = (|| {
        tree.mkdir_all("/tmp", 0o1777)?;
        for dir in ["/usr/bin", "/usr/local/bin", "/home"] {
            tree.mkdir_all(dir, 0o755)?;
        }
        // Debian's merged /usr: /bin is /usr/bin.
        tree.symlink("usr/bin", ROOT, "bin")?;
        for name in bin_names {
            tree.put_file(&format!("/usr/bin/{name}"), b"", 0o755)?;
        }
        tree.put_dev_null("/dev")?;
        tree.put_file("/etc/group", group.as_bytes(), 0o644)?;
        tree.put_file("/etc/hostname", b"sandbox\n", 0o644)?;
        Ok(())
    })();
    result.map_err(|e: FsErr| layout_error(&e))?;
    Ok(tree)
}

/// The run's own part of the tree: its private folder, the scratch folder
/// and the user entry whose home it is.
fn lay_out_run(tree: &mut Tree, scratch: &str) -> Result<(), Error> {
    let run_dir = scratch.trim_end_matches("/scratch");
    let passwd =
        format!("root:x:0:0:root:/root:/bin/bash\n{USER}:x:1000:1000:{USER}:{scratch}:/bin/bash\n");
    let result = (|| {
        tree.mkdir_all(run_dir, 0o700)?;
        tree.mkdir_all(scratch, 0o755)?;
        tree.put_file("/etc/passwd", passwd.as_bytes(), 0o644)?;
        Ok(())
    })();
    result.map_err(|e: FsErr| layout_error(&e))
}

fn layout_error(e: &FsErr) -> Error {
    Error::PutFile {
        path: "/".into(),
        reason: format!("cannot lay out the sandbox: {e}"),
    }
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

    /// Sets the wall-time limit of the next commands (still bounded by
    /// what is left of the sandbox's own time).
    pub fn set_command_timeout(&mut self, timeout: Duration) {
        self.limits.command_timeout = timeout;
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
        self.run_with_input(program, argv, Vec::new(), sink)
    }

    /// [`Sandbox::run`] with `stdin` as the program's standard input.
    pub fn run_with_input(
        &mut self,
        program: &Program,
        argv: &[&str],
        stdin: Vec<u8>,
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
        let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
        let ended = Launch {
            runtime: &self.runtime,
            fs: &self.fs,
            limits: self.limits,
            argv: &argv,
            env: &self.env,
            cwd: &self.cwd,
            stdin,
            stdout: pipes.pipe(Stream::Stdout),
            stderr: pipes.pipe(Stream::Stderr),
            pipes: pipes.clone(),
            deadline: Instant::now() + timeout,
        }
        .run(program)?;
        self.busy += ended.duration;
        self.commands += 1;
        if let Some(saved) = ended.saved {
            self.keep_state(saved);
        }
        let limit = match ended.limit {
            // The deadline was the sandbox's when less than a command's
            // time was left.
            Some(LimitHit::CommandTimeout)
                if timeout + SAME_DEADLINE < self.limits.command_timeout =>
            {
                Some(LimitHit::SandboxTimeout)
            }
            other => other,
        };
        let limit = limit.or(pipes.truncated().then_some(LimitHit::Output));
        let limit = limit.or_else(|| self.fs.lock().quota_hit().map(LimitHit::from_quota));
        Ok(ExecOutcome {
            exit_code: ended.exit_code,
            duration: ended.duration,
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
        self.run_captured_with_input(program, argv, Vec::new())
    }

    /// Runs a program with `stdin` as its input and collects its output.
    pub fn run_captured_with_input(
        &mut self,
        program: &Program,
        argv: &[&str],
        stdin: Vec<u8>,
    ) -> Result<Captured, Error> {
        let (tx, rx) = std::sync::mpsc::channel::<(Stream, Vec<u8>)>();
        let outcome = self.run_with_input(program, argv, stdin, move |s: Stream, d: &[u8]| {
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

    /// What the sandbox has used so far.
    pub fn usage(&self) -> SandboxUsage {
        SandboxUsage {
            commands: self.commands,
            busy: self.busy,
            lifetime: self.created.elapsed(),
        }
    }

    /// Ends the sandbox; everything in it is gone.
    pub fn destroy(self) -> SandboxUsage {
        self.usage()
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
}
