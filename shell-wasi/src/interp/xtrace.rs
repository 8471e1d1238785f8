//! `set -x` traces: `PS4` (its first character repeated once per level
//! of `eval`, `source`, trap or `$( )`) and the command as it runs.

use super::Shell;
use crate::programs::quoting::trace_quote;
use crate::streams::Io;

impl Shell {
    /// `+ `, `++ `, ... for the current level.
    fn trace_prefix(&self) -> String {
        let ps4 = self.vars.scalar("PS4").unwrap_or("+ ");
        let mut chars = ps4.chars();
        let Some(first) = chars.next() else {
            return String::new();
        };
        let level = self.trace_level.clamp(1, super::MAX_NESTING);
        let mut prefix: String = std::iter::repeat_n(first, level).collect();
        prefix.push_str(chars.as_str());
        prefix
    }

    /// Prints one trace line when `set -x` is on: to stderr, or to the
    /// descriptor `BASH_XTRACEFD` names.
    pub(crate) fn xtrace(&self, text: &str, io: &Io) {
        if !self.opts.xtrace {
            return;
        }
        let line = format!("{}{text}", self.trace_prefix());
        match self.trace_sink(io) {
            Some(sink) => {
                let mut sink = sink.borrow_mut();
                let _ = sink.write_bytes(format!("{line}\n").as_bytes());
                let _ = sink.flush();
            }
            None => io.err_line(&line),
        }
    }

    /// The output `BASH_XTRACEFD` selects, if it names an open one.
    fn trace_sink(&self, io: &Io) -> Option<crate::streams::SinkRef> {
        let fd: i32 = self.vars.scalar("BASH_XTRACEFD")?.trim().parse().ok()?;
        let entry = match fd {
            1 => return Some(io.stdout.clone()),
            2 => return None,
            n => self.exec_fds.get(&n).or_else(|| io.extra.get(&n))?,
        };
        match entry {
            crate::streams::Fd::Out(sink) => Some(sink.clone()),
            crate::streams::Fd::In(_) => None,
        }
    }

    /// A command's words, quoted where needed.
    pub(crate) fn xtrace_words(&self, words: &[String], io: &Io) {
        if self.opts.xtrace {
            let words: Vec<String> = words.iter().map(|w| trace_quote(w)).collect();
            self.xtrace(&words.join(" "), io);
        }
    }

    /// `export a=1` and `readonly a=1` also trace each assignment.
    pub(crate) fn xtrace_declared(&self, argv: &[String], io: &Io) {
        if !self.opts.xtrace {
            return;
        }
        let command = argv
            .iter()
            .position(|w| w != "command" && w != "builtin")
            .and_then(|i| argv.get(i..))
            .unwrap_or_default();
        let Some((name, args)) = command.split_first() else {
            return;
        };
        if name != "export" && name != "readonly" {
            return;
        }
        for arg in args {
            if let Some((var, value)) = arg.split_once('=')
                && super::vars::is_name(var.trim_end_matches('+'))
            {
                self.xtrace(&format!("{var}={}", trace_quote(value)), io);
            }
        }
    }
}
