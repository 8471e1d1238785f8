//! `ephemeral:sandbox/process`: the shell asks, the host runs another
//! program (`python3`, …) as its own component in the same sandbox.
//!
//! The child shares the sandbox's filesystem, the command's deadline and
//! its output cap (for `inherit` streams); it gets its own store and memory
//! cap. It cannot start programs itself: only the shell imports this
//! interface.

use crate::bindings::process::{self, Command, Finished, OutputMode};
use crate::launch::{Launch, StoreState};
use crate::output::{Capture, OutputPipes, Stream};

/// The most output one `capture` stream may collect; the rest is dropped
/// and the stream closes, as for the command's own output cap.
const MAX_CAPTURE_BYTES: usize = 64 << 20;

impl process::Host for StoreState {
    fn programs(&mut self) -> Vec<String> {
        self.runtime.program_names()
    }

    fn run(&mut self, cmd: Command) -> Result<Finished, String> {
        if cmd.args.is_empty() || !cmd.cwd.starts_with('/') {
            return Err("argv must not be empty and cwd must be absolute".into());
        }
        let program = self
            .runtime
            .program(&cmd.program)
            .map_err(|e| e.to_string())?;
        let capture = Capture::default();
        let captured = OutputPipes::new(Box::new(capture.clone()), MAX_CAPTURE_BYTES);
        let pipe = |mode: OutputMode, stream: Stream| match mode {
            OutputMode::Inherit => self.pipes.pipe(stream),
            OutputMode::Capture => captured.pipe(stream),
        };
        let (stdout, stderr) = (
            pipe(cmd.stdout, Stream::Stdout),
            pipe(cmd.stderr, Stream::Stderr),
        );
        let runtime = self.runtime.clone();
        let fs = self.fs.clone();
        let ended = Launch {
            runtime: &runtime,
            fs: &fs,
            limits: self.limits,
            argv: &cmd.args,
            env: &cmd.env,
            cwd: &cmd.cwd,
            stdin: cmd.stdin,
            stdout,
            stderr,
            pipes: self.pipes.clone(),
            deadline: self.deadline,
        }
        .run(&program)
        .map_err(|e| e.to_string())?;
        if let Some(limit) = ended.limit {
            self.child_limit.get_or_insert(limit);
        }
        let (stdout, stderr) = capture.take();
        Ok(Finished {
            status: ended.exit_code,
            stdout,
            stderr,
        })
    }
}
