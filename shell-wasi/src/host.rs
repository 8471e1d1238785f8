//! The sandbox's extra imports (`runtime/wit/sandbox.wit`) behind one trait.
//!
//! WASI 0.2 has no permission bits and no way to hand state to the next
//! command, so the host offers `fs-meta` and `session`. On `wasm32-wasip2`
//! `WasiHost` calls those imports; everywhere else `FakeHost` keeps the modes
//! in memory over the real filesystem so the interpreter can be tested
//! natively. Paths given to a `Host` are always absolute.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;

/// File-type bits of `st_mode` (see `sandbox.wit`, `get-mode`).
pub const S_IFMT: u32 = 0o170_000;
/// A regular file.
pub const S_IFREG: u32 = 0o100_000;
/// A directory.
pub const S_IFDIR: u32 = 0o040_000;
/// A symbolic link.
pub const S_IFLNK: u32 = 0o120_000;
/// A character device (`/dev/null`, `/dev/zero`, …).
pub const S_IFCHR: u32 = 0o020_000;

/// The sandbox user's uid and gid (`worker`).
pub const SANDBOX_UID: u32 = 1000;

/// Permission bits the sandbox's filesystem gives new files (umask 022).
pub const DEFAULT_FILE_MODE: u32 = 0o644;
/// Permission bits the sandbox's filesystem gives new folders.
pub const DEFAULT_DIR_MODE: u32 = 0o755;

/// Why a metadata call failed; mirrors `types.fs-error` in `sandbox.wit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsError {
    /// ENOENT
    NoEntry,
    /// ENOTDIR
    NotDirectory,
    /// ELOOP
    Loop,
    /// EINVAL
    Invalid,
    /// EACCES
    Access,
    /// EPERM
    NotPermitted,
}

impl FsError {
    /// The strerror(3) text GNU tools print for this error.
    pub fn message(self) -> &'static str {
        match self {
            Self::NoEntry => "No such file or directory",
            Self::NotDirectory => "Not a directory",
            Self::Loop => "Too many levels of symbolic links",
            Self::Invalid => "Invalid argument",
            Self::Access => "Permission denied",
            Self::NotPermitted => "Operation not permitted",
        }
    }
}

/// What the shell needs from the sandbox beyond WASI.
pub trait Host {
    /// The full `st_mode` (type and permission bits) of an absolute path.
    fn get_mode(&self, path: &str, follow: bool) -> Result<u32, FsError>;
    /// Sets the permission bits (low 0o7777) of an absolute path.
    fn set_mode(&self, path: &str, mode: u32) -> Result<(), FsError>;
    /// Hands the working folder and exported variables to the next command.
    fn save_state(&self, cwd: &str, exported: &[(String, String)]);
    /// Tells the host the shell ran into a sandbox limit (`pipe`).
    fn limit_hit(&self, _name: &str) {}
    /// The owner's uid of an absolute path (0 root, 1000 the sandbox user).
    fn get_owner(&self, _path: &str, _follow: bool) -> Result<u32, FsError> {
        Ok(SANDBOX_UID)
    }
    /// access(2) as the sandbox user: `want` is 4 read, 2 write, 1 search
    /// or execute (0: exists). By default, the owner's bits decide.
    fn access(&self, path: &str, want: u32) -> Result<(), FsError> {
        let mode = self.get_mode(path, true)?;
        if (mode >> 6) & want == want {
            Ok(())
        } else {
            Err(FsError::Access)
        }
    }
    /// Sets the umask of this program (and of what it starts); the old one.
    fn set_umask(&self, _mask: u32) -> u32 {
        0o022
    }
    /// `(bytes used, bytes allowed, files used, files allowed)` of the
    /// sandbox's disk, for `df`; `None` where there is no quota to tell.
    fn disk_usage(&self) -> Option<(u64, u64, u64, u64)> {
        None
    }
    /// Programs the host runs as their own components (`python3`, …).
    fn programs(&self) -> Vec<String> {
        Vec::new()
    }
    /// Runs a program to completion: one of `programs`, or any other
    /// name, which the host runs with this shell (a new instance of it).
    fn run_program(&self, request: &ProgramRequest) -> Result<ProgramResult, String> {
        Err(format!("{}: no such program", request.program))
    }
    /// Whether programs can run alongside this shell (`spawn_program`);
    /// where they cannot, `&` runs the job to its end first.
    fn can_spawn(&self) -> bool {
        false
    }
    /// Starts a program that runs alongside this shell; its process id.
    fn spawn_program(&self, request: &ProgramRequest) -> Result<u32, String> {
        Err(format!("{}: cannot start processes here", request.program))
    }
    /// Waits for a spawned program at most `timeout_ms` (`None`: until it
    /// ends); `None` while it still runs. Each process is waited for once.
    fn wait_program(
        &self,
        pid: u32,
        _timeout_ms: Option<u64>,
    ) -> Result<Option<ProgramResult>, String> {
        Err(format!("no such process: {pid}"))
    }
    /// Sends `signal` to a spawned program (0: only checks it exists).
    fn kill_program(&self, pid: u32, _signal: u32) -> Result<(), String> {
        Err(format!("no such process: {pid}"))
    }
}

/// Where a host program's output stream goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Straight to the shell's own stdout or stderr.
    Inherit,
    /// Collected and returned in its `ProgramResult`.
    Capture,
    /// Thrown away.
    Discard,
}

/// A program run by the host (`process` in `sandbox.wit`).
#[derive(Debug, Clone)]
pub struct ProgramRequest {
    /// A name from `programs`, or any other program name or path.
    pub program: String,
    /// The whole argv, argv[0] included.
    pub args: Vec<String>,
    /// Its whole environment.
    pub env: Vec<(String, String)>,
    /// Absolute working folder.
    pub cwd: String,
    /// All of its standard input.
    pub stdin: Vec<u8>,
    /// Where its stdout goes.
    pub stdout: Output,
    /// Where its stderr goes (ignored with `stderr_to_stdout`).
    pub stderr: Output,
    /// stderr goes where stdout goes, in write order (`2>&1`).
    pub stderr_to_stdout: bool,
    /// Stop it after this long, as `timeout` does (status 124).
    pub timeout_ms: Option<u64>,
}

impl ProgramRequest {
    /// A request for `args` with this shell's environment and folder,
    /// both streams captured, no stdin and no time limit of its own.
    pub fn new(args: Vec<String>, env: Vec<(String, String)>, cwd: String) -> Self {
        Self {
            program: args.first().cloned().unwrap_or_default(),
            args,
            env,
            cwd,
            stdin: Vec::new(),
            stdout: Output::Capture,
            stderr: Output::Capture,
            stderr_to_stdout: false,
            timeout_ms: None,
        }
    }
}

/// How a host program ended, with what was captured.
#[derive(Debug, Clone, Default)]
pub struct ProgramResult {
    /// Exit status as a shell sees it: 124 after its timeout, 128+N after
    /// signal N.
    pub status: i32,
    /// Its stdout, when captured.
    pub stdout: Vec<u8>,
    /// Its stderr, when captured.
    pub stderr: Vec<u8>,
    /// The sandbox limit it ran into, by name.
    pub limit: Option<String>,
}

/// What `save_state` hands over: the working folder and exported variables.
pub type SavedState = (String, Vec<(String, String)>);

/// A `Host` over the real filesystem with an in-memory mode table, for
/// native runs and tests. New nodes get the sandbox's default modes.
#[derive(Debug, Default)]
pub struct FakeHost {
    modes: RefCell<HashMap<String, u32>>,
    saved: RefCell<Option<SavedState>>,
}

impl FakeHost {
    /// A host with no modes set yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// What the last `save_state` call handed over, if any.
    pub fn saved_state(&self) -> Option<SavedState> {
        self.saved.borrow().clone()
    }

    /// The key under which a node's mode is kept: its canonical path, so
    /// `a/../b` and symlinks to `b` share one entry.
    fn key(path: &str) -> String {
        std::fs::canonicalize(path)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| path.to_string())
    }
}

fn fs_error(err: &std::io::Error) -> FsError {
    match err.kind() {
        std::io::ErrorKind::NotFound => FsError::NoEntry,
        std::io::ErrorKind::NotADirectory => FsError::NotDirectory,
        std::io::ErrorKind::PermissionDenied => FsError::Access,
        _ => FsError::Invalid,
    }
}

impl Host for FakeHost {
    fn get_mode(&self, path: &str, follow: bool) -> Result<u32, FsError> {
        let p = Path::new(path);
        let meta = if follow {
            p.metadata()
        } else {
            p.symlink_metadata()
        };
        let meta = meta.map_err(|e| fs_error(&e))?;
        let ft = meta.file_type();
        if ft.is_symlink() {
            return Ok(S_IFLNK | 0o777);
        }
        let (kind, default) = if ft.is_dir() {
            (S_IFDIR, DEFAULT_DIR_MODE)
        } else {
            (S_IFREG, DEFAULT_FILE_MODE)
        };
        let perm = self.modes.borrow().get(&Self::key(path)).copied();
        Ok(kind | perm.unwrap_or(default))
    }

    fn set_mode(&self, path: &str, mode: u32) -> Result<(), FsError> {
        Path::new(path).metadata().map_err(|e| fs_error(&e))?;
        self.modes
            .borrow_mut()
            .insert(Self::key(path), mode & 0o7777);
        Ok(())
    }

    fn save_state(&self, cwd: &str, exported: &[(String, String)]) {
        *self.saved.borrow_mut() = Some((cwd.to_string(), exported.to_vec()));
    }
}

#[cfg(target_os = "wasi")]
mod wasi {
    //! The real imports, generated from `sandbox.wit`.

    wit_bindgen::generate!({
        path: "../runtime/wit",
        world: "ephemeral:sandbox/shell",
        with: { "wasi:cli/exit@0.2.12": generate },
    });

    use ephemeral::sandbox::types::FsError as WitError;
    use ephemeral::sandbox::{fs_meta, process, session};

    pub(super) fn exit_with_code(code: u8) {
        self::wasi::cli::exit::exit_with_code(code);
    }

    fn convert(err: WitError) -> super::FsError {
        match err {
            WitError::NoEntry => super::FsError::NoEntry,
            WitError::NotDirectory => super::FsError::NotDirectory,
            WitError::Loop => super::FsError::Loop,
            WitError::Invalid => super::FsError::Invalid,
            WitError::Access => super::FsError::Access,
            WitError::NotPermitted => super::FsError::NotPermitted,
        }
    }

    /// The sandbox host, reached through the component's imports.
    #[derive(Debug, Default)]
    pub struct WasiHost {
        /// The host's program list, asked for once per shell.
        programs: std::cell::OnceCell<Vec<String>>,
    }

    impl super::Host for WasiHost {
        fn get_mode(&self, path: &str, follow: bool) -> Result<u32, super::FsError> {
            fs_meta::get_mode(path, follow).map_err(convert)
        }

        fn set_mode(&self, path: &str, mode: u32) -> Result<(), super::FsError> {
            fs_meta::set_mode(path, mode).map_err(convert)
        }

        fn save_state(&self, cwd: &str, exported: &[(String, String)]) {
            session::save_state(cwd, exported);
        }

        fn limit_hit(&self, name: &str) {
            session::limit_hit(name);
        }

        fn get_owner(&self, path: &str, follow: bool) -> Result<u32, super::FsError> {
            fs_meta::get_owner(path, follow).map_err(convert)
        }

        fn access(&self, path: &str, want: u32) -> Result<(), super::FsError> {
            fs_meta::access(path, want).map_err(convert)
        }

        fn set_umask(&self, mask: u32) -> u32 {
            fs_meta::set_umask(mask)
        }

        fn disk_usage(&self) -> Option<(u64, u64, u64, u64)> {
            let u = fs_meta::disk_usage();
            Some((u.bytes_used, u.bytes_max, u.files_used, u.files_max))
        }

        fn programs(&self) -> Vec<String> {
            self.programs.get_or_init(process::programs).clone()
        }

        fn run_program(
            &self,
            request: &super::ProgramRequest,
        ) -> Result<super::ProgramResult, String> {
            process::run(&command(request)).map(result)
        }

        fn can_spawn(&self) -> bool {
            true
        }

        fn spawn_program(&self, request: &super::ProgramRequest) -> Result<u32, String> {
            process::spawn(&command(request))
        }

        fn wait_program(
            &self,
            pid: u32,
            timeout_ms: Option<u64>,
        ) -> Result<Option<super::ProgramResult>, String> {
            process::wait(pid, timeout_ms).map(|done| done.map(result))
        }

        fn kill_program(&self, pid: u32, signal: u32) -> Result<(), String> {
            process::kill(pid, signal)
        }
    }

    fn mode(output: super::Output) -> process::OutputMode {
        match output {
            super::Output::Inherit => process::OutputMode::Inherit,
            super::Output::Capture => process::OutputMode::Capture,
            super::Output::Discard => process::OutputMode::Discard,
        }
    }

    fn command(request: &super::ProgramRequest) -> process::Command {
        process::Command {
            program: request.program.clone(),
            args: request.args.clone(),
            env: request.env.clone(),
            cwd: request.cwd.clone(),
            stdin: request.stdin.clone(),
            stdout: mode(request.stdout),
            stderr: mode(request.stderr),
            stderr_to_stdout: request.stderr_to_stdout,
            timeout_ms: request.timeout_ms,
        }
    }

    fn result(finished: process::Finished) -> super::ProgramResult {
        super::ProgramResult {
            status: finished.status,
            stdout: finished.stdout,
            stderr: finished.stderr,
            limit: finished.limit,
        }
    }
}

#[cfg(target_os = "wasi")]
pub use wasi::WasiHost;

/// Ends the process with `status` (taken modulo 256, as by a real shell's
/// parent). On WASI this uses `exit-with-code`: wasi-libc's `exit` can only
/// say success or failure, which would turn `exit 6` into 1.
pub fn exit(status: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    #[cfg(target_os = "wasi")]
    wasi::exit_with_code((status & 0xff) as u8);
    std::process::exit(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fake_host_defaults_and_remembers_modes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("f");
        std::fs::write(&file, b"x").expect("write");
        let path = file.to_string_lossy().into_owned();
        let host = FakeHost::new();
        assert_eq!(host.get_mode(&path, true), Ok(S_IFREG | 0o644));
        host.set_mode(&path, 0o755).expect("set");
        assert_eq!(host.get_mode(&path, true), Ok(S_IFREG | 0o755));
        let missing = dir.path().join("nope").to_string_lossy().into_owned();
        assert_eq!(host.get_mode(&missing, true), Err(FsError::NoEntry));
        let dir_path = dir.path().to_string_lossy().into_owned();
        assert_eq!(host.get_mode(&dir_path, true), Ok(S_IFDIR | 0o755));
    }
}
