//! `ephemeral:sandbox/process`: a program asks, the host runs another one
//! (`python3`, `node`, the shell and its utilities) as its own component
//! instance in the same sandbox — to completion (`run`), or alongside the
//! caller (`spawn`, then `wait` and `kill`).
//!
//! A child shares the sandbox's filesystem, the command's deadline and its
//! output cap (for `inherit` streams); it gets its own store, memory cap and
//! `Stop`. Whatever stops the caller stops the child, and everything a
//! command started is stopped when the command ends (`table.rs`).

mod table;

use std::time::{Duration, Instant};

pub(crate) use self::table::ProcessTable;
use crate::bindings::process::{self, Command, Finished, OutputMode};
use crate::engine::Program;
use crate::launch::{Launch, StoreState};
use crate::limits::LimitHit;
use crate::output::{Capture, OutputPipe, OutputPipes, Stream};
use crate::stop::Stop;

/// The most output one `capture` stream may collect; the rest is dropped
/// and the stream closes, as for the command's own output cap.
const MAX_CAPTURE_BYTES: usize = 64 << 20;
/// The highest signal number `kill` takes (Linux's SIGRTMAX).
const MAX_SIGNAL: u32 = 64;

/// A child ready to run: its launch, and where its captured output lands.
struct Prepared {
    launch: Launch,
    program: Program,
    capture: Capture,
}

impl StoreState {
    /// Everything a child needs, from the caller's state and the request.
    fn prepare(&self, cmd: Command) -> Result<Prepared, String> {
        if cmd.args.is_empty() || !cmd.cwd.starts_with('/') {
            return Err("argv must not be empty and cwd must be absolute".into());
        }
        let program = self.program_for(&cmd.program)?;
        let capture = Capture::default();
        let captured = OutputPipes::new(Box::new(capture.clone()), MAX_CAPTURE_BYTES);
        let discarded = OutputPipes::new(Box::new(|_: Stream, _: &[u8]| {}), usize::MAX);
        let pipe = |mode: OutputMode, stream: Stream| -> OutputPipe {
            match mode {
                OutputMode::Inherit => self.pipes.pipe(stream),
                OutputMode::Capture => captured.pipe(stream),
                OutputMode::Discard => discarded.pipe(stream),
            }
        };
        let stdout = pipe(cmd.stdout, Stream::Stdout);
        // `2>&1`: the child's stderr writes into its stdout's pipe, as the
        // stdout stream, so both keep their one order.
        let stderr = if cmd.stderr_to_stdout {
            pipe(cmd.stdout, Stream::Stdout)
        } else {
            pipe(cmd.stderr, Stream::Stderr)
        };
        let own_deadline = cmd
            .timeout_ms
            .map(|ms| Instant::now() + Duration::from_millis(ms));
        let launch = Launch {
            runtime: self.runtime.clone(),
            fs: self.fs.clone(),
            limits: self.limits,
            argv: cmd.args,
            env: cmd.env,
            cwd: cmd.cwd,
            stdin: cmd.stdin,
            stdout,
            stderr,
            pipes: self.pipes.clone(),
            umask: self.umask,
            stop: Stop::child(&self.stop, own_deadline),
            processes: self.processes.clone(),
        };
        Ok(Prepared {
            launch,
            program,
            capture,
        })
    }

    /// A component program by name; any other name is the shell's, which
    /// runs its utilities, scripts and `sh -c` as a multi-call program.
    fn program_for(&self, name: &str) -> Result<Program, String> {
        let base = name.rsplit('/').next().unwrap_or(name);
        if self.runtime.program_names().iter().any(|p| p == base) {
            self.runtime.program(base).map_err(|e| e.to_string())
        } else {
            Ok(self.runtime.shell.clone())
        }
    }
}

impl Prepared {
    /// Runs the child to its end on this thread.
    fn run(self) -> (Finished, Option<LimitHit>) {
        let ended = self.launch.run(&self.program);
        let (stdout, stderr) = self.capture.take();
        match ended {
            Ok(ended) => {
                let finished = Finished {
                    status: ended.exit_code,
                    stdout,
                    stderr,
                    limit: ended.limit.map(|l| l.name().to_owned()),
                };
                (finished, ended.limit)
            }
            Err(e) => {
                // The host could not run it at all (e.g. no free instance):
                // what a shell reports for a program that cannot start.
                let mut stderr = stderr;
                stderr.extend_from_slice(format!("cannot run the program: {e}\n").as_bytes());
                let finished = Finished {
                    status: 126,
                    stdout,
                    stderr,
                    limit: None,
                };
                (finished, None)
            }
        }
    }
}

impl process::Host for StoreState {
    fn programs(&mut self) -> Vec<String> {
        self.runtime.program_names()
    }

    fn run(&mut self, cmd: Command) -> Result<Finished, String> {
        let (finished, limit) = self.prepare(cmd)?.run();
        if let Some(limit) = limit {
            self.child_limit.get_or_insert(limit);
        }
        Ok(finished)
    }

    fn spawn(&mut self, cmd: Command) -> Result<u32, String> {
        let prepared = self.prepare(cmd)?;
        let stop = prepared.launch.stop.clone();
        self.processes
            .spawn(stop, move || prepared.run().0)
            .map_err(|e| e.to_string())
    }

    fn wait(&mut self, pid: u32, timeout_ms: Option<u64>) -> Result<Option<Finished>, String> {
        let timeout = timeout_ms.map(Duration::from_millis);
        let finished = self
            .processes
            .wait(pid, timeout, &self.stop)
            .map_err(|e| e.to_string())?;
        if let Some(limit) = finished
            .as_ref()
            .and_then(|f| f.limit.as_deref())
            .and_then(LimitHit::from_name)
        {
            self.child_limit.get_or_insert(limit);
        }
        Ok(finished)
    }

    fn kill(&mut self, pid: u32, signal: u32) -> Result<(), String> {
        if signal > MAX_SIGNAL {
            return Err(format!("invalid signal {signal}"));
        }
        self.processes.kill(pid, signal).map_err(|e| e.to_string())
    }
}
