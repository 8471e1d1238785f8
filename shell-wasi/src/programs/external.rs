//! Programs the host runs as their own components (`python3`, …).
//!
//! WASI cannot spawn processes, so the shell hands the whole invocation to
//! the host (`process.run`): argv, the exported environment, the working
//! folder and all of stdin. Output that goes to the shell's own stdout or
//! stderr is streamed by the host directly; output going into a pipe, a
//! command substitution or a file is captured and written here.

use super::Process;
use crate::host::{Output, ProgramRequest};

/// The scientific python's program name (`runtime/python/scientific/`).
const SCIENTIFIC_PYTHON: &str = "python3-sci";

pub(crate) fn run(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let Some(invoked) = argv.first() else {
        return 0;
    };
    let mut program = invoked.rsplit('/').next().unwrap_or(invoked).to_string();
    // The scientific python is started by python3 (argv[0] stays
    // `python3-sci`), which hands it the command line with the bootstrap
    // that ends a run without tearing down its pre-imported modules and
    // answers sockets as a machine without a network does.
    if program == SCIENTIFIC_PYTHON {
        program = "python3".into();
    }
    let stdout_mode = p.io.stdout.borrow().host_output();
    let stderr_mode = p.io.stderr.borrow().host_output();
    let capture_stdout = stdout_mode == Output::Capture;
    let capture_stderr = stderr_mode == Output::Capture;
    // Whatever the shell printed so far must come out before the program's.
    p.io.flush();
    let mut request = ProgramRequest::new(argv.to_vec(), p.env.to_vec(), p.cwd.to_string());
    request.program = program;
    request.stdin = p.io.stdin.borrow_mut().read_all();
    request.stdout = stdout_mode;
    request.stderr = stderr_mode;
    // `2>&1` (into a pipe, a file or the shell's own stdout): one stream,
    // in the order written.
    request.stderr_to_stdout = std::rc::Rc::ptr_eq(&p.io.stdout, &p.io.stderr);
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

/// `pip` and `pip3`: `python3 -m pip`, the sandbox's offline pip (it
/// installs wheel files that were brought in; there is no network).
pub(crate) fn pip(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let mut full = vec!["python3".to_string(), "-m".into(), "pip".into()];
    full.extend(argv.iter().skip(1).cloned());
    run(p, &full)
}

/// `sqlite3`: `python3 -m sandbox_sqlite3`, the sqlite3 command line of
/// Debian (its options, modes, dot-commands and error lines) on python3's
/// own SQLite.
pub(crate) fn sqlite3(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let mut full = vec!["python3".to_string(), "-m".into(), "sandbox_sqlite3".into()];
    full.extend(argv.iter().skip(1).cloned());
    run(p, &full)
}
