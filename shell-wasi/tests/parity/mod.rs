//! What every parity table shares: a recorded case, running a script
//! through the interpreter natively in a folder, and comparing the result
//! with what bash printed (the folder's path written `$DIR`).

#![allow(dead_code)]

use std::cell::RefCell;
use std::io::Write;
use std::path::Path;
use std::rc::Rc;

use ephemeral_shell::{FakeHost, Invocation};

/// A command string and what `bash -c` did with it.
pub struct Case {
    pub script: &'static str,
    pub stdout: &'static str,
    pub stderr: &'static str,
    pub status: i32,
}

/// A `Write` whose bytes the test can read after the run.
#[derive(Clone, Default)]
struct Capture(Rc<RefCell<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Capture {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.borrow()).into_owned()
    }
}

/// What one run printed, with the folder's path written `$DIR`.
pub struct Ran {
    pub stdout: String,
    pub stderr: String,
    pub status: i32,
}

/// Runs `script` in `dir` with the environment the recordings had.
pub fn run_script(dir: &Path, script: &str) -> Ran {
    let path = dir.to_string_lossy().into_owned();
    let env = vec![
        ("HOME".to_string(), path.clone()),
        ("PATH".to_string(), "/usr/bin:/bin".to_string()),
        ("USER".to_string(), "worker".to_string()),
        ("LANG".to_string(), "C.UTF-8".to_string()),
        ("PWD".to_string(), path.clone()),
    ];
    let invocation = Invocation {
        script: script.to_string(),
        arg0: "bash".to_string(),
        args: Vec::new(),
        env,
        stdin: Some(Vec::new()),
    };
    let (out, err) = (Capture::default(), Capture::default());
    let status = ephemeral_shell::run(
        invocation,
        Rc::new(FakeHost::new()),
        Box::new(out.clone()),
        Box::new(err.clone()),
    );
    Ran {
        stdout: out.text().replace(&path, "$DIR"),
        stderr: err.text().replace(&path, "$DIR"),
        status,
    }
}

/// `Ok` when the run matches the case, else a report of both.
pub fn compare(case: &Case, ran: &Ran) -> Result<(), String> {
    if ran.stdout == case.stdout && ran.stderr == case.stderr && ran.status == case.status {
        return Ok(());
    }
    Err(format!(
        "script: {:?}\n  stdout: {:?}\n  wanted: {:?}\n  stderr: {:?}\n  wanted: {:?}\n  status: {}, wanted {}",
        case.script, ran.stdout, case.stdout, ran.stderr, case.stderr, ran.status, case.status
    ))
}

/// Runs `setup` then the case in a fresh temporary folder and compares.
pub fn run_case_after(case: &Case, setup: &str) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    compare(
        case,
        &run_script(dir.path(), &format!("{setup}{}", case.script)),
    )
}

/// Runs the case in a fresh temporary folder and compares.
pub fn run_case(case: &Case) -> Result<(), String> {
    run_case_after(case, "")
}
