//! GNU coreutils beyond the shell's first few: file, text and system
//! utilities, with GNU's flags, messages and exit codes.
//!
//! Each utility reads whole inputs into memory (stdin already is: pipes are
//! buffers) and writes with `Process::out`, stopping when the reader is
//! gone. Nothing here spawns a process: `xargs`, `find -exec` and `timeout`
//! run other programs through the shell's own table (`super::find`).

mod args;
mod base64;
mod column;
mod copy;
pub(crate) mod date;
mod diff;
mod digest;
mod expr;
mod file;
mod find;
mod gzip;
mod head_tail;
mod lines;
mod od;
mod paths;
mod seq;
mod sort;
mod stat;
pub(crate) mod sys;
mod tar;
mod text;
mod timing;
mod tr;
mod wc;
mod xargs;

use std::cell::Cell;
use std::time::Instant;

use super::{Process, Table};
use crate::errors::strerror;
use crate::streams::{Io, Source};
use args::{Parsed, Spec};

/// This family's utilities, sorted by name.
pub(crate) const TABLE: Table = &[
    ("base64", base64::base64),
    ("basename", paths::basename),
    ("cmp", diff::cmp),
    ("column", column::column),
    ("comm", lines::comm),
    ("cp", copy::cp),
    ("cut", text::cut),
    ("date", date::date),
    ("df", sys::df),
    ("diff", diff::diff),
    ("dirname", paths::dirname),
    ("du", sys::du),
    ("expr", expr::expr),
    ("file", file::file),
    ("find", find::find),
    ("fold", text::fold),
    ("gunzip", gzip::gunzip),
    ("gzip", gzip::gzip),
    ("head", head_tail::head),
    ("hostname", sys::hostname),
    ("ln", copy::ln),
    ("md5sum", digest::md5sum),
    ("mktemp", copy::mktemp),
    ("mv", copy::mv),
    ("nl", lines::nl),
    ("nproc", sys::nproc),
    ("od", od::od),
    ("paste", lines::paste),
    ("readlink", paths::readlink),
    ("realpath", paths::realpath),
    ("rev", lines::rev),
    ("seq", seq::seq),
    ("sha1sum", digest::sha1sum),
    ("sha256sum", digest::sha256sum),
    ("sha512sum", digest::sha512sum),
    ("sleep", timing::sleep),
    ("sort", sort::sort),
    ("stat", stat::stat),
    ("tac", lines::tac),
    ("tail", head_tail::tail),
    ("tar", tar::tar),
    ("tee", seq::tee),
    ("timeout", timing::timeout),
    ("tr", tr::tr),
    ("uname", sys::uname),
    ("uniq", sort::uniq),
    ("wc", wc::wc),
    ("xargs", xargs::xargs),
    ("yes", seq::yes),
    ("zcat", gzip::zcat),
];

/// Widest padding a format directive may ask for (`%99999999d` would
/// otherwise allocate without bound).
pub(crate) const MAX_FIELD_WIDTH: usize = 4096;

thread_local! {
    /// When the innermost `timeout` runs out. Long-running utilities
    /// (`sleep`, `yes`, `seq`) stop when it passes.
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// True once an enclosing `timeout` has expired.
pub(crate) fn deadline_passed() -> bool {
    DEADLINE.with(|d| d.get().is_some_and(|t| Instant::now() >= t))
}

/// The enclosing `timeout`'s deadline, if any.
pub(crate) fn deadline() -> Option<Instant> {
    DEADLINE.with(Cell::get)
}

/// Sets the deadline, returning the previous one for restoring.
pub(crate) fn set_deadline(t: Option<Instant>) -> Option<Instant> {
    DEADLINE.with(|d| d.replace(t))
}

/// Parses arguments, or prints getopt's message and the usage hint and
/// returns `status`.
pub(crate) fn parse_args(
    p: &Process<'_>,
    spec: &Spec<'_>,
    argv: &[String],
    status: i32,
) -> Result<Parsed, i32> {
    spec.parse(argv.get(1..).unwrap_or_default())
        .map_err(|msg| usage(p, &msg, status))
}

/// `NAME: MESSAGE` and `Try 'NAME --help'…`; returns `status`.
pub(crate) fn usage(p: &Process<'_>, msg: &str, status: i32) -> i32 {
    p.error(msg);
    let name = p.prefix.clone();
    p.try_help(&name);
    status
}

/// The bytes of an operand: a file, or stdin for `-`.
pub(crate) fn read_input(p: &Process<'_>, name: &str) -> std::io::Result<Vec<u8>> {
    if name == "-" {
        return Ok(p.io.stdin.borrow_mut().read_all());
    }
    let path = p.resolve(name);
    if path.is_dir() {
        return Err(std::io::Error::from(std::io::ErrorKind::IsADirectory));
    }
    std::fs::read(path)
}

/// `NAME: FILE: strerror`, the common GNU read error (quotef style).
pub(crate) fn file_error(p: &Process<'_>, name: &str, err: &std::io::Error) {
    p.error(&format!(
        "{}: {}",
        super::quoting::quote_if_needed(name),
        strerror(err)
    ));
}

/// Writes `bytes` in chunks; false once the reader is gone.
pub(crate) fn write_all(p: &Process<'_>, bytes: &[u8]) -> bool {
    bytes.chunks(64 * 1024).all(|c| p.out(c))
}

/// Runs the program `argv` as a child of `p` (for `xargs`, `find -exec`,
/// `timeout`): stdin as given, stdout and stderr shared with `p`. Returns
/// `None` when there is no such program.
pub(crate) fn run_child(p: &Process<'_>, argv: &[String], stdin: Option<Vec<u8>>) -> Option<i32> {
    let name = argv.first()?;
    let program = name.rsplit('/').next().unwrap_or(name);
    let util = super::find(p.host, program)?;
    let io = Io {
        stdin: match stdin {
            Some(bytes) => Source::bytes(bytes),
            None => std::rc::Rc::clone(&p.io.stdin),
        },
        stdout: std::rc::Rc::clone(&p.io.stdout),
        stderr: std::rc::Rc::clone(&p.io.stderr),
        extra: Default::default(),
    };
    let mut child = Process::new(name, p.cwd, p.env, p.host, &io, p.depth + 1);
    Some(util(&mut child, argv))
}

/// Splits data into lines on `sep`, each without its separator; a final
/// unterminated line is kept.
pub(crate) fn split_lines(data: &[u8], sep: u8) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = data.split(|&b| b == sep).collect();
    if data.last() == Some(&sep) || data.is_empty() {
        lines.pop();
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted() {
        assert!(TABLE.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn lines_split_like_gnu() {
        assert_eq!(split_lines(b"a\nb\n", b'\n'), vec![&b"a"[..], b"b"]);
        assert_eq!(split_lines(b"a\nb", b'\n'), vec![&b"a"[..], b"b"]);
        assert!(split_lines(b"", b'\n').is_empty());
        assert_eq!(split_lines(b"\n", b'\n'), vec![&b""[..]]);
    }
}
