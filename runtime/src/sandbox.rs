//! One run's sandbox: its own in-memory filesystem, environment and shell
//! state, and `exec` to run a command in it.
//!
//! Between commands a sandbox is only data (the tree, the working folder,
//! the exported variables): no wasm instance stays alive, so an idle
//! sandbox costs a few kilobytes. Each `exec` instantiates the pre-linked
//! shell in a fresh store with the sandbox's limits, runs it, and keeps
//! the state the shell hands back.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::Error;
use crate::engine::{Program, Runtime};
use crate::launch::{EXIT_TIMEOUT, Launch, SavedState};
use crate::limits::{LimitHit, Limits};
use crate::memfs::{FsErr, MemFs, Quota, ROOT, SANDBOX_UID, Tree};
use crate::output::{OutputPipes, OutputSink, Stream};
use crate::process::ProcessTable;
use crate::stop::Stop;

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
/// The umask every command starts with, as a login shell's on Debian.
const DEFAULT_UMASK: u32 = 0o022;
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
    /// How it ended.
    pub outcome: ExecOutcome,
    /// Its stdout, up to the output cap.
    pub stdout: Vec<u8>,
    /// Its stderr, up to the output cap.
    pub stderr: Vec<u8>,
}

/// Totals of a destroyed sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxUsage {
    /// Commands run.
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

    /// The limits it runs under (default: [`Limits::default`]).
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

    /// Makes the sandbox: the system layout, a new run folder, its files.
    pub fn build(self) -> Result<Sandbox, Error> {
        let mut limits = self.limits;
        limits.memory_bytes = limits
            .memory_bytes
            .min(self.runtime.config.max_memory_bytes);
        let scratch = format!("/tmp/ephemeral-run-{}/scratch", random_suffix());
        let mut tree = self.runtime.system_tree().clone();
        lay_out_run(&mut tree, &scratch, &limits)?;
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
/// cloned for each sandbox, all owned by root: a writable `/tmp` and
/// `/var/tmp` (sticky), read-only `/etc`, `/usr` and `/bin`, the devices
/// programs read (`/dev/null`, `zero`, `full`, `random`, `urandom`,
/// `stdin`, `stdout`, `stderr`, `fd/N`), the files of a Linux system that
/// scripts read, and `/usr/bin` listing every program (empty executable
/// stubs: the shell runs the real thing).
pub(crate) fn system_tree(bin_names: &[String]) -> Result<Tree, Error> {
    let group = format!("root:x:0:\n{USER}:x:1000:\n");
    let mut tree = Tree::new(Quota::UNLIMITED);
    let result = (|| {
        tree.mkdir_all("/tmp", 0o1777)?;
        tree.mkdir_all("/var/tmp", 0o1777)?;
        for dir in SYSTEM_DIRS {
            tree.mkdir_all(dir, 0o755)?;
        }
        tree.mkdir_all("/root", 0o700)?;
        // Debian's merged /usr: /bin is /usr/bin, and so on.
        for (link, target) in [("bin", "usr/bin"), ("sbin", "usr/sbin"), ("lib", "usr/lib")] {
            tree.symlink(target, ROOT, link)?;
        }
        for name in bin_names {
            tree.put_file(&format!("/usr/bin/{name}"), b"", 0o755)?;
        }
        put_devices(&mut tree)?;
        tree.put_file("/etc/group", group.as_bytes(), 0o644)?;
        for (path, contents) in SYSTEM_FILES {
            tree.put_file(path, contents.as_bytes(), 0o644)?;
        }
        Ok(())
    })();
    result.map_err(|e: FsErr| layout_error(&e))?;
    Ok(tree)
}

/// Folders of the system layout besides `/tmp`, `/var/tmp` and `/root`.
const SYSTEM_DIRS: &[&str] = &[
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/share",
    "/usr/local/bin",
    "/usr/local/lib",
    "/usr/local/share",
    "/etc",
    "/home",
    "/opt",
    "/srv",
    "/mnt",
    "/run",
    "/var/lib",
    "/var/log",
    "/var/cache",
    "/proc/self",
];

/// Files of the system layout: what the sandbox is, said honestly (it is
/// not Debian, it behaves like Debian 12), and the rest scripts look for.
const SYSTEM_FILES: &[(&str, &str)] = &[
    ("/etc/hostname", "sandbox\n"),
    (
        "/etc/os-release",
        "PRETTY_NAME=\"Ephemeral sandbox (Debian 12 compatible)\"\n\
         NAME=\"Ephemeral\"\n\
         ID=ephemeral\n\
         ID_LIKE=debian\n\
         VERSION_ID=\"12\"\n\
         VERSION=\"12 (bookworm compatible)\"\n\
         VERSION_CODENAME=bookworm\n\
         HOME_URL=\"https://example.invalid/ephemeral\"\n",
    ),
    ("/etc/debian_version", "12.0\n"),
    (
        "/etc/hosts",
        "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\tsandbox\n",
    ),
    ("/etc/resolv.conf", "# This sandbox has no network.\n"),
    (
        "/etc/shells",
        "# /etc/shells: valid login shells\n/bin/sh\n/usr/bin/sh\n/bin/bash\n/usr/bin/bash\n",
    ),
    ("/etc/timezone", "Etc/UTC\n"),
    (
        "/etc/issue",
        "Ephemeral sandbox (Debian 12 compatible) \\n \\l\n",
    ),
    (
        "/proc/version",
        "Linux version 6.1.0-ephemeral (sandbox) #1 SMP PREEMPT_DYNAMIC\n",
    ),
    ("/proc/self/cgroup", "0::/\n"),
    ("/proc/mounts", "memfs / memfs rw 0 0\n"),
    ("/proc/filesystems", "nodev\tmemfs\n"),
];

/// `/dev`: the devices, `std*` standing for each program's own streams.
fn put_devices(tree: &mut Tree) -> Result<(), FsErr> {
    use crate::memfs::NodeKind;
    for (name, kind) in [
        ("null", NodeKind::Null),
        ("zero", NodeKind::Zero),
        ("full", NodeKind::Full),
        ("random", NodeKind::Random),
        ("urandom", NodeKind::Random),
    ] {
        tree.put_device("/dev", name, kind, 0o666)?;
    }
    for (fd, name) in ["stdin", "stdout", "stderr"].iter().enumerate() {
        let fd = u8::try_from(fd).unwrap_or(0);
        tree.put_device("/dev", name, NodeKind::Stdio(fd), 0o666)?;
        tree.put_device("/dev/fd", &fd.to_string(), NodeKind::Stdio(fd), 0o666)?;
    }
    tree.mkdir_all("/dev/shm", 0o1777)?;
    Ok(())
}

/// The run's own part of the tree: its private folder, the scratch folder
/// and the user entry whose home it is (the sandbox user's), and the
/// `/proc` files that describe this sandbox (root's).
fn lay_out_run(tree: &mut Tree, scratch: &str, limits: &Limits) -> Result<(), Error> {
    let run_dir = scratch.trim_end_matches("/scratch");
    let passwd =
        format!("root:x:0:0:root:/root:/bin/bash\n{USER}:x:1000:1000:{USER}:{scratch}:/bin/bash\n");
    let booted = SystemTime::now();
    let result = (|| {
        tree.mkdir_all("/tmp", 0o1777)?;
        tree.put_file("/etc/passwd", passwd.as_bytes(), 0o644)?;
        tree.put_file("/proc/meminfo", meminfo(limits).as_bytes(), 0o444)?;
        tree.put_file("/proc/cpuinfo", CPUINFO.as_bytes(), 0o444)?;
        tree.put_file("/proc/self/status", PROC_STATUS.as_bytes(), 0o444)?;
        tree.put_file("/proc/stat", proc_stat(booted).as_bytes(), 0o444)?;
        tree.put_file("/proc/loadavg", LOADAVG.as_bytes(), 0o444)?;
        tree.set_actor(SANDBOX_UID);
        tree.mkdir_all(run_dir, 0o700)?;
        tree.mkdir_all(scratch, 0o755)?;
        Ok(())
    })();
    result.map_err(|e: FsErr| layout_error(&e))
}

/// `/proc/stat` of a sandbox: it booted (`btime`) when it was made, and
/// its one CPU has done nothing yet as far as anyone outside can tell.
fn proc_stat(booted: SystemTime) -> String {
    let btime = booted
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let idle = "0 0 0 0 0 0 0 0 0 0";
    format!(
        "cpu  {idle}\ncpu0 {idle}\nintr 0\nctxt 0\nbtime {btime}\nprocesses 2\n\
         procs_running 1\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n"
    )
}

/// One thing runs in a sandbox: its load is its own, not the host's.
const LOADAVG: &str = "0.00 0.00 0.00 1/1 2\n";

/// `/proc/meminfo` of a sandbox: its memory cap is all the memory it has.
fn meminfo(limits: &Limits) -> String {
    let kib = limits.memory_bytes / 1024;
    format!(
        "MemTotal:       {kib:>8} kB\nMemFree:        {kib:>8} kB\nMemAvailable:   {kib:>8} kB\n\
         Buffers:               0 kB\nCached:                0 kB\nSwapTotal:             0 kB\n\
         SwapFree:              0 kB\n"
    )
}

/// One CPU: what a sandbox is given (and priced for).
const CPUINFO: &str = "processor\t: 0\nvendor_id\t: Ephemeral\nmodel name\t: WebAssembly sandbox vCPU\n\
    cpu MHz\t\t: 1000.000\ncpu cores\t: 1\nflags\t\t:\n\n";

/// `/proc/self/status` as a program of the sandbox sees itself.
const PROC_STATUS: &str = "Name:\tbash\nState:\tR (running)\nPid:\t2\nPPid:\t1\n\
    Uid:\t1000\t1000\t1000\t1000\nGid:\t1000\t1000\t1000\t1000\nThreads:\t1\n";

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

    /// The limits it runs under, memory capped at the runtime's maximum.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The sandbox's filesystem (`files.rs` reaches files through it).
    pub(crate) fn fs(&self) -> &MemFs {
        &self.fs
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

    /// [`Sandbox::exec`] with `stdin` as the command's standard input and
    /// `env` added to (or replacing in) its environment, for this command
    /// only.
    pub fn exec_with(
        &mut self,
        command: &str,
        stdin: Vec<u8>,
        env: &[(String, String)],
        sink: impl OutputSink,
    ) -> Result<ExecOutcome, Error> {
        let shell = self.runtime.shell.clone();
        if env.is_empty() {
            return self.run_with_input(&shell, &["bash", "-c", command], stdin, sink);
        }
        let saved = self.env.clone();
        for (name, value) in env {
            self.env.retain(|(n, _)| n != name);
            self.env.push((name.clone(), value.clone()));
        }
        let outcome = self.run_with_input(&shell, &["bash", "-c", command], stdin, sink);
        // The command's own exports are kept; only what was added for it
        // goes (as with `VAR=value command` in a shell).
        for (name, _) in env {
            let before = saved.iter().find(|(n, _)| n == name).cloned();
            self.env.retain(|(n, _)| n != name);
            if let Some(kept) = before {
                self.env.push(kept);
            }
        }
        outcome
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
        let processes = ProcessTable::new();
        let launched = Launch {
            runtime: self.runtime.clone(),
            fs: self.fs.clone(),
            limits: self.limits,
            argv: argv.iter().map(|a| a.to_string()).collect(),
            env: self.env.clone(),
            cwd: self.cwd.clone(),
            stdin,
            stdout: pipes.pipe(Stream::Stdout),
            stderr: pipes.pipe(Stream::Stderr),
            pipes: pipes.clone(),
            umask: DEFAULT_UMASK,
            stop: Stop::command(Instant::now() + timeout),
            processes: processes.clone(),
        }
        .run(program);
        // What the command started and left running ends with it.
        processes.end_all();
        let ended = launched?;
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
