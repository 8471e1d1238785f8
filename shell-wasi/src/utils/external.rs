//! Programs the host runs as their own components (`python3`, …).
//!
//! WASI cannot spawn processes, so the shell hands the whole invocation to
//! the host (`process.run`): argv, the exported environment, the working
//! folder and all of stdin. Output that goes to the shell's own stdout or
//! stderr is streamed by the host directly; output going into a pipe, a
//! command substitution or a file is captured and written here.

use super::Process;
use crate::host::ProgramRequest;
use crate::streams::Sink;

pub(crate) fn run(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let Some(invoked) = argv.first() else {
        return 0;
    };
    let program = invoked.rsplit('/').next().unwrap_or(invoked).to_string();
    let capture_stdout = !is_terminal(&p.io.stdout);
    let capture_stderr = !is_terminal(&p.io.stderr);
    // Whatever the shell printed so far must come out before the program's.
    p.io.flush();
    let request = ProgramRequest {
        program,
        args: argv.to_vec(),
        env: p.env.to_vec(),
        cwd: p.cwd.to_string(),
        stdin: p.io.stdin.borrow_mut().read_all(),
        capture_stdout,
        capture_stderr,
    };
    match p.host.run_program(&request) {
        Ok(result) => {
            if capture_stdout {
                p.out(&result.stdout);
            }
            if capture_stderr {
                p.io.err(&result.stderr);
            }
            result.status
        }
        Err(message) => {
            p.error(&message);
            126
        }
    }
}

/// Whether a sink is the shell's own stdout/stderr (not a pipe or file).
fn is_terminal(sink: &crate::streams::SinkRef) -> bool {
    matches!(*sink.borrow(), Sink::Stream { .. })
}
