//! Process substitution, `<(cmd)` and `>(cmd)`, without processes.
//!
//! `<(cmd)` runs `cmd` first (in a subshell, output collected) and puts its
//! output in a file under `/tmp`, whose name becomes the word; `>(cmd)`
//! names an empty file and runs `cmd` on whatever the command wrote there
//! once it is done. As a redirection, `< <(cmd)` needs no file at all. The
//! files live in the sandbox's own filesystem and are removed afterwards.

use brush_parser::ast;

use super::Shell;
use crate::errors::Unwind;
use crate::streams::{Io, Sink, Source};

/// A `>(cmd)` still to run, on the file the command wrote.
pub(crate) struct PendingWrite {
    path: String,
    sub: ast::SubshellCommand,
}

impl Shell {
    /// Runs a subshell with stdout collected; returns the bytes.
    pub(crate) fn collect_output(
        &mut self,
        sub: &ast::SubshellCommand,
        io: &Io,
    ) -> Result<Vec<u8>, Unwind> {
        let out = Sink::memory();
        let sub_io = Io {
            stdin: io.stdin.clone(),
            stdout: out.clone(),
            stderr: io.stderr.clone(),
            extra: io.extra.clone(),
        };
        self.run_subshell(&sub.list, &sub_io)?;
        let bytes = out.borrow_mut().take();
        Ok(bytes)
    }

    /// The word a process substitution stands for: a file's path.
    pub(crate) fn process_substitution(
        &mut self,
        kind: &ast::ProcessSubstitutionKind,
        sub: &ast::SubshellCommand,
        io: &Io,
        pending: &mut Vec<PendingWrite>,
        files: &mut Vec<String>,
    ) -> Result<String, Unwind> {
        self.psub_count += 1;
        let path = format!(
            "/tmp/.ephemeral-psub-{}-{}",
            super::SHELL_PID,
            self.psub_count
        );
        let contents = match kind {
            ast::ProcessSubstitutionKind::Read => self.collect_output(sub, io)?,
            ast::ProcessSubstitutionKind::Write => {
                pending.push(PendingWrite {
                    path: path.clone(),
                    sub: sub.clone(),
                });
                Vec::new()
            }
        };
        if let Err(err) = std::fs::write(&path, contents) {
            self.report(io, &format!("{path}: {}", crate::errors::strerror(&err)));
        }
        files.push(path.clone());
        Ok(path)
    }

    /// After the command: feeds each `>(cmd)` what was written for it, then
    /// removes the files.
    pub(crate) fn finish_process_substitutions(
        &mut self,
        pending: Vec<PendingWrite>,
        files: Vec<String>,
        io: &Io,
    ) -> Result<(), Unwind> {
        for write in pending {
            let data = std::fs::read(&write.path).unwrap_or_default();
            let sub_io = Io {
                stdin: Source::bytes(data),
                stdout: io.stdout.clone(),
                stderr: io.stderr.clone(),
                extra: io.extra.clone(),
            };
            self.run_subshell(&write.sub.list, &sub_io)?;
        }
        for path in files {
            let _ = std::fs::remove_file(path);
        }
        Ok(())
    }
}
