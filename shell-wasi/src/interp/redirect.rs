//! Redirections: building the descriptors one command runs with.
//!
//! Descriptors 0, 1 and 2 are the `Io`'s own; others (`3<file`, `4>out`,
//! `>&4`) live in its `extra` table, and `exec` without a command keeps
//! them for the commands after it.

use std::fs::OpenOptions;

use brush_parser::ast;

use super::Shell;
use crate::errors::{Unwind, strerror};
use crate::streams::{Fd, Io, Sink, SinkRef, Source};

/// How a file is opened for output.
#[derive(Clone, Copy)]
enum OutMode {
    Truncate,
    Append,
}

impl Shell {
    /// Applies redirections left to right on a copy of `io`. The inner
    /// `Err` is a failed redirection (already reported) with its status.
    pub(crate) fn open_redirects(
        &mut self,
        items: &[&ast::IoRedirect],
        io: &Io,
    ) -> Result<Result<Io, i32>, Unwind> {
        let mut cmd_io = io.clone();
        for (fd, entry) in self.exec_fds.range(3..) {
            cmd_io.extra.entry(*fd).or_insert_with(|| entry.clone());
        }
        for item in items {
            if let Err(msg) = self.apply_redirect(item, &mut cmd_io)? {
                self.report(io, &msg);
                return Ok(Err(1));
            }
        }
        Ok(Ok(cmd_io))
    }

    /// One redirection. `Ok(Err(msg))` is a failure bash reports as
    /// `bash: line N: msg`.
    fn apply_redirect(
        &mut self,
        item: &ast::IoRedirect,
        io: &mut Io,
    ) -> Result<Result<(), String>, Unwind> {
        use ast::IoFileRedirectKind as K;
        use ast::IoRedirect as R;
        match item {
            R::File(fd, kind, target) => {
                let target = match target {
                    ast::IoFileRedirectTarget::Filename(w) => w,
                    ast::IoFileRedirectTarget::Duplicate(w) => {
                        let text = self.expand_or_fail(w, io)?;
                        return Ok(self.duplicate(*fd, kind, &text, io));
                    }
                    ast::IoFileRedirectTarget::Fd(n) => {
                        return Ok(self.duplicate(*fd, kind, &n.to_string(), io));
                    }
                    // `< <(cmd)`: the output is the input, no file needed.
                    ast::IoFileRedirectTarget::ProcessSubstitution(
                        ast::ProcessSubstitutionKind::Read,
                        sub,
                    ) if matches!(kind, K::Read) && fd.unwrap_or(0) == 0 => {
                        let data = self.collect_output(sub, io)?;
                        io.stdin = crate::streams::Source::bytes(data);
                        return Ok(Ok(()));
                    }
                    ast::IoFileRedirectTarget::ProcessSubstitution(..) => {
                        return Ok(Err(
                            "process substitution: only `< <(command)` is supported as a redirection"
                                .into(),
                        ));
                    }
                };
                let path = match self.redirect_target(target, io)? {
                    Ok(p) => p,
                    Err(msg) => return Ok(Err(msg)),
                };
                Ok(match kind {
                    K::Read | K::ReadAndWrite => self.redirect_input(*fd, &path, io),
                    K::Write if self.clobber_refused(&path) => {
                        Err(format!("{path}: cannot overwrite existing file"))
                    }
                    K::Write | K::Clobber => {
                        self.redirect_output(fd.unwrap_or(1), &path, OutMode::Truncate, io)
                    }
                    K::Append => self.redirect_output(fd.unwrap_or(1), &path, OutMode::Append, io),
                    K::DuplicateOutput | K::DuplicateInput => self.duplicate(*fd, kind, &path, io),
                })
            }
            R::OutputAndError(target, append) => {
                let path = match self.redirect_target(target, io)? {
                    Ok(p) => p,
                    Err(msg) => return Ok(Err(msg)),
                };
                let mode = if *append {
                    OutMode::Append
                } else {
                    OutMode::Truncate
                };
                if !*append && self.clobber_refused(&path) {
                    return Ok(Err(format!("{path}: cannot overwrite existing file")));
                }
                Ok(self.redirect_output(1, &path, mode, io).map(|()| {
                    io.stderr = io.stdout.clone();
                }))
            }
            R::HereDocument(fd, doc) => {
                let mut text = if doc.requires_expansion {
                    match self.expand_heredoc(&doc.doc.value, io) {
                        Ok(t) => t,
                        Err(err) => return Err(self.fail(io, &err)),
                    }
                } else {
                    doc.doc.value.clone()
                };
                if doc.remove_tabs {
                    text = text
                        .lines()
                        .map(|l| format!("{}\n", l.trim_start_matches('\t')))
                        .collect();
                }
                set_input(io, fd.unwrap_or(0), Source::bytes(text.into_bytes()));
                Ok(Ok(()))
            }
            R::HereString(fd, word) => {
                let mut text = self.expand_or_fail(word, io)?;
                text.push('\n');
                set_input(io, fd.unwrap_or(0), Source::bytes(text.into_bytes()));
                Ok(Ok(()))
            }
        }
    }

    fn expand_or_fail(&mut self, word: &ast::Word, io: &Io) -> Result<String, Unwind> {
        self.expand_string(word, io)
            .map_err(|err| self.fail(io, &err))
    }

    /// A redirection target must expand to exactly one word.
    fn redirect_target(
        &mut self,
        word: &ast::Word,
        io: &Io,
    ) -> Result<Result<String, String>, Unwind> {
        let fields = match self.expand_words(std::slice::from_ref(word), io) {
            Ok(f) => f,
            Err(err) => return Err(self.fail(io, &err)),
        };
        match fields.as_slice() {
            [one] => Ok(Ok(one.clone())),
            _ => Ok(Err(format!("{}: ambiguous redirect", word.value))),
        }
    }

    fn redirect_input(&self, fd: Option<i32>, path: &str, io: &mut Io) -> Result<(), String> {
        // As bash does, `/dev/stdin` and `/dev/fd/N` name this shell's own
        // descriptors, whatever the filesystem has.
        if let Some(n) = dev_fd(path) {
            let n = n.to_string();
            return self.duplicate(fd, &ast::IoFileRedirectKind::DuplicateInput, &n, io);
        }
        let full = self.resolve(path);
        let device = self
            .host
            .get_mode(&super::normalize(&self.cwd, path), true)
            .is_ok_and(|m| m & crate::host::S_IFMT == crate::host::S_IFCHR);
        let data = match path {
            "/dev/null" => Vec::new(),
            // A device never ends: as much as a pipe holds.
            _ if device => crate::programs::devices::read_device(&full, |_| false)
                .map_err(|e| format!("{path}: {}", strerror(&e)))?,
            _ => std::fs::read(full).map_err(|e| format!("{path}: {}", strerror(&e)))?,
        };
        set_input(io, fd.unwrap_or(0), Source::bytes(data));
        Ok(())
    }

    fn redirect_output(
        &self,
        fd: i32,
        path: &str,
        mode: OutMode,
        io: &mut Io,
    ) -> Result<(), String> {
        if let Some(n) = dev_fd(path) {
            let n = n.to_string();
            return self.duplicate(Some(fd), &ast::IoFileRedirectKind::DuplicateOutput, &n, io);
        }
        let sink = match path {
            "/dev/null" => Sink::null(),
            "/dev/full" => std::rc::Rc::new(std::cell::RefCell::new(Sink::Full(false))),
            _ => self.open_output(path, mode)?,
        };
        set_fd(io, fd, sink);
        Ok(())
    }

    /// `set -C`: `>` may not truncate an existing regular file (devices
    /// such as `/dev/null` are fine).
    fn clobber_refused(&self, path: &str) -> bool {
        self.opts.noclobber
            && std::fs::metadata(self.resolve(path)).is_ok_and(|m| m.is_file())
            && !path.starts_with("/dev/")
    }

    fn open_output(&self, path: &str, mode: OutMode) -> Result<SinkRef, String> {
        let mut options = OpenOptions::new();
        options.write(true).create(true);
        match mode {
            OutMode::Truncate => options.truncate(true),
            OutMode::Append => options.append(true),
        };
        let full = self.resolve(path);
        if full.is_dir() {
            return Err(format!("{path}: Is a directory"));
        }
        let file = options
            .open(full)
            .map_err(|e| format!("{path}: {}", strerror(&e)))?;
        Ok(Sink::file(file))
    }

    /// `2>&1`, `>&2`, `>&-`, `<&3`, `4<&-`, and `>& file` (which bash
    /// reads as `&>`).
    fn duplicate(
        &self,
        fd: Option<i32>,
        kind: &ast::IoFileRedirectKind,
        target: &str,
        io: &mut Io,
    ) -> Result<(), String> {
        let input = matches!(kind, ast::IoFileRedirectKind::DuplicateInput);
        let fd = fd.unwrap_or(if input { 0 } else { 1 });
        if target == "-" {
            close_fd(io, fd);
            return Ok(());
        }
        if let Ok(from) = target.parse::<i32>() {
            let entry = match from {
                0 => Some(Fd::In(io.stdin.clone())),
                1 => Some(Fd::Out(io.stdout.clone())),
                2 => Some(Fd::Out(io.stderr.clone())),
                n => io.extra.get(&n).cloned(),
            };
            return match entry {
                Some(Fd::In(source)) => {
                    set_input(io, fd, source);
                    Ok(())
                }
                Some(Fd::Out(sink)) => {
                    set_fd(io, fd, sink);
                    Ok(())
                }
                None => Err(format!("{target}: Bad file descriptor")),
            };
        }
        if input {
            return Err(format!("{target}: ambiguous redirect"));
        }
        let sink = self.open_output(target, OutMode::Truncate)?;
        set_fd(io, 2, sink.clone());
        set_fd(io, fd, sink);
        Ok(())
    }
}

/// Points descriptor `fd` at an input.
fn set_input(io: &mut Io, fd: i32, source: crate::streams::InputRef) {
    if fd == 0 {
        io.stdin = source;
    } else {
        io.extra.insert(fd, Fd::In(source));
    }
}

/// `N>&-`: the descriptor goes; a standard one reads or writes nothing.
fn close_fd(io: &mut Io, fd: i32) {
    match fd {
        0 => io.stdin = Source::bytes(Vec::new()),
        1 => io.stdout = Sink::null(),
        2 => io.stderr = Sink::null(),
        n => {
            io.extra.remove(&n);
        }
    }
}

fn set_fd(io: &mut Io, fd: i32, sink: SinkRef) {
    match fd {
        0 => {}
        1 => io.stdout = sink,
        2 => io.stderr = sink,
        n => {
            io.extra.insert(n, Fd::Out(sink));
        }
    }
}

/// The descriptor `/dev/stdin`, `/dev/stdout`, `/dev/stderr` or
/// `/dev/fd/N` names.
fn dev_fd(path: &str) -> Option<i32> {
    match path {
        "/dev/stdin" => Some(0),
        "/dev/stdout" => Some(1),
        "/dev/stderr" => Some(2),
        _ => path.strip_prefix("/dev/fd/")?.parse().ok(),
    }
}
