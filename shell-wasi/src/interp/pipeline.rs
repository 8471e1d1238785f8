//! Pipelines without processes: stages run one after another, each
//! writing into a byte buffer the next one reads as stdin.
//!
//! As in bash, every stage of a multi-stage pipeline runs in a subshell
//! (a clone), so `echo x | read v` leaves `v` unset. A stage whose output
//! pipe overflows sees a broken pipe and stops, like SIGPIPE would.

use std::collections::BTreeMap;

use brush_parser::ast;

use super::Shell;
use super::vars::Value;
use crate::errors::Unwind;
use crate::streams::{Io, Sink, Source};

/// Status of a stage killed by SIGPIPE (128 + 13).
const SIGPIPE_STATUS: i32 = 141;

impl Shell {
    pub(crate) fn run_pipeline(
        &mut self,
        pipeline: &ast::Pipeline,
        io: &Io,
    ) -> Result<i32, Unwind> {
        if pipeline.bang {
            self.in_condition += 1;
        }
        let result = if pipeline.seq.len() == 1 {
            self.run_single_stage(pipeline, io)
        } else {
            self.run_stages(&pipeline.seq, io)
        };
        if pipeline.bang {
            self.in_condition -= 1;
        }
        let mut status = result?;
        if pipeline.bang {
            status = i32::from(status == 0);
        }
        self.status = status;
        self.run_err_trap(status, pipeline.bang, io)?;
        self.check_errexit(status, pipeline.bang)?;
        Ok(status)
    }

    /// One command runs in this shell, so `cd` and assignments stick.
    fn run_single_stage(&mut self, pipeline: &ast::Pipeline, io: &Io) -> Result<i32, Unwind> {
        let Some(cmd) = pipeline.seq.first() else {
            return Ok(0);
        };
        let status = self.run_command(cmd, io)?;
        self.set_pipestatus(&[status]);
        Ok(status)
    }

    fn run_stages(&mut self, stages: &[ast::Command], io: &Io) -> Result<i32, Unwind> {
        let mut statuses = Vec::with_capacity(stages.len());
        let mut stdin = io.stdin.clone();
        for (i, cmd) in stages.iter().enumerate() {
            let last = i + 1 == stages.len();
            let stdout = if last {
                io.stdout.clone()
            } else {
                Sink::pipe()
            };
            let stage_io = Io {
                stdin: stdin.clone(),
                stdout: stdout.clone(),
                stderr: io.stderr.clone(),
                extra: io.extra.clone(),
            };
            let status = self.run_stage(cmd, &stage_io);
            let broken = stdout.borrow().is_broken();
            statuses.push(if broken { SIGPIPE_STATUS } else { status });
            if !last {
                stdin = Source::piped(stdout.borrow_mut().take(), broken);
            }
        }
        self.set_pipestatus(&statuses);
        let status = if self.opts.pipefail {
            statuses
                .iter()
                .rev()
                .copied()
                .find(|&s| s != 0)
                .unwrap_or(0)
        } else {
            statuses.last().copied().unwrap_or(0)
        };
        Ok(status)
    }

    /// A stage is a subshell: whatever it does, only its status returns.
    fn run_stage(&mut self, cmd: &ast::Command, io: &Io) -> i32 {
        let mut child = self.clone();
        child.exit_trap_inherited = true;
        let status = match child.run_command(cmd, io) {
            Ok(status) => status,
            Err(Unwind::Exit(s) | Unwind::Abort(s) | Unwind::Return(s)) => s,
            Err(Unwind::Break(_) | Unwind::Continue(_)) => 0,
        };
        self.rejoin(&child);
        status
    }

    fn set_pipestatus(&mut self, statuses: &[i32]) {
        let map: BTreeMap<usize, String> = statuses
            .iter()
            .enumerate()
            .map(|(i, s)| (i, s.to_string()))
            .collect();
        let _ = self.vars.set_value("PIPESTATUS", Value::Indexed(map));
    }
}
