//! The traps bash runs around commands: DEBUG before each command,
//! RETURN when a function or sourced file ends, ERR after a failure and
//! EXIT at the end of a (sub)shell, with `BASH_COMMAND`, `LINENO` and
//! `$?` as the trapped command sees them.

use super::Shell;
use crate::errors::Unwind;
use crate::streams::Io;

impl Shell {
    /// Runs trap text as if at the trapped command: its line numbers count
    /// from that command's line, and `$?` is kept.
    pub(crate) fn run_trap_text(&mut self, text: &str, io: &Io) -> Result<i32, Unwind> {
        let saved_location = self.location.clone();
        let saved_status = self.status;
        self.location.base += self.location.line.saturating_sub(1);
        self.location.line = 1;
        self.in_trap += 1;
        self.trace_level += 1;
        let result = self.run_text(text, io);
        self.trace_level -= 1;
        self.in_trap -= 1;
        self.location = saved_location;
        self.status = saved_status;
        result
    }

    /// Whether functions and subshells run the DEBUG and RETURN traps
    /// (`set -T`, `shopt -s extdebug`).
    pub(crate) fn traces_functions(&self) -> bool {
        self.opts.functrace || self.shopt_on("extdebug")
    }

    /// Before each command: `BASH_COMMAND` and the DEBUG trap, when a trap
    /// could see them (the text is only made then). `Ok(true)`: skip it.
    pub(crate) fn before_command(
        &mut self,
        text: impl FnOnce() -> String,
        io: &Io,
    ) -> Result<bool, Unwind> {
        let no_trap = self.debug_trap.is_none() && self.err_trap.is_none();
        if no_trap && self.exit_trap.is_none() {
            return Ok(false);
        }
        self.debug_trap(&text(), io)
    }

    /// Runs the DEBUG trap before a command whose text is `command`.
    /// `Ok(true)`: skip the command (`extdebug` and a failing trap).
    pub(crate) fn debug_trap(&mut self, command: &str, io: &Io) -> Result<bool, Unwind> {
        // A trap's own commands leave `BASH_COMMAND` the trapped one.
        if self.in_trap > 0 {
            return Ok(false);
        }
        let _ = self.vars.set("BASH_COMMAND", command.to_string());
        if !self.debug_enabled {
            return Ok(false);
        }
        let Some(trap) = self.debug_trap.clone() else {
            return Ok(false);
        };
        let status = match self.run_trap_text(&trap, io) {
            Ok(status) => status,
            Err(Unwind::Exit(code)) => return Err(Unwind::Exit(code)),
            Err(Unwind::Return(status) | Unwind::Abort(status)) => status,
            Err(Unwind::Break(_) | Unwind::Continue(_)) => 0,
        };
        // The command is then run with `BASH_COMMAND` still its own.
        let _ = self.vars.set("BASH_COMMAND", command.to_string());
        Ok(status != 0 && self.shopt_on("extdebug"))
    }

    /// Runs the RETURN trap as a function or sourced file ends.
    /// `$?` there is the status of the last command before the return.
    pub(crate) fn run_return_trap(&mut self, io: &Io) -> Result<(), Unwind> {
        if self.in_trap > 0 {
            return Ok(());
        }
        let Some(trap) = self.return_trap.clone() else {
            return Ok(());
        };
        match self.run_trap_text(&trap, io) {
            Err(Unwind::Exit(code)) => Err(Unwind::Exit(code)),
            _ => Ok(()),
        }
    }

    /// A copy of the shell for `( )`, `$( )` and `<( )`: the EXIT trap is
    /// its own, and DEBUG runs there only with `set -T`.
    pub(crate) fn subshell(&self) -> Shell {
        let mut child = self.clone();
        child.exit_trap_inherited = true;
        child.subshell_level += 1;
        let pid = self.pids.get() + 1;
        self.pids.set(pid);
        child.bashpid = pid;
        // The subshell's standard descriptors are the ones it is given.
        child.exec_fds.retain(|fd, _| *fd > 2);
        if !self.traces_functions() {
            child.debug_enabled = false;
        }
        if !self.opts.errtrace {
            child.err_trap_inherited = true;
        }
        child
    }

    /// Ends a subshell: its EXIT trap runs, and may change the status.
    pub(crate) fn finish_subshell(&mut self, status: i32, io: &Io) -> i32 {
        if self.exit_trap_inherited {
            return status;
        }
        let Some(trap) = self.exit_trap.take() else {
            return status;
        };
        self.status = status;
        match self.run_text(&trap, io) {
            Err(Unwind::Exit(code)) => code,
            _ => status,
        }
    }
}
