//! GNU coreutils beyond the shell's first few: file, text and system
//! utilities, with GNU's flags, messages and exit codes.
//!
//! Each utility reads whole inputs into memory (stdin already is: pipes are
//! buffers) and writes with `Process::out`, stopping when the reader is
//! gone. Nothing here spawns a process: `xargs`, `find -exec` and `timeout`
//! run other programs through the shell's own table (`super::find`).

pub(crate) mod args;
mod base64;
mod basenc;
mod cksum;
mod column;
mod copy;
mod csplit;
pub(crate) mod date;
pub(crate) mod datetime;
mod diff;
mod digest;
mod expr;
mod factor;
mod fields;
mod file;
mod find;
pub(crate) mod gzip;
mod head_tail;
mod install;
mod join;
mod lines;
mod misc;
mod numfmt;
mod od;
mod paths;
mod seq;
mod shuf;
mod sort;
mod split;
mod stat;
pub(crate) mod sys;
mod tabs;
pub(crate) mod tar;
mod text;
mod timing;
mod tr;
mod truncate;
mod tsort;
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
    ("arch", misc::arch),
    ("b2sum", digest::b2sum),
    ("base32", basenc::base32),
    ("base64", base64::base64),
    ("basename", paths::basename),
    ("basenc", basenc::basenc),
    ("chgrp", misc::chgrp),
    ("chown", misc::chown),
    ("chroot", misc::chroot),
    ("cksum", cksum::cksum),
    ("cmp", diff::cmp),
    ("column", column::column),
    ("comm", lines::comm),
    ("cp", copy::cp),
    ("csplit", csplit::csplit),
    ("cut", text::cut),
    ("date", date::date),
    ("dd", misc::dd),
    ("df", sys::df),
    ("diff", diff::diff),
    ("dirname", paths::dirname),
    ("du", sys::du),
    ("expand", tabs::expand),
    ("expr", expr::expr),
    ("factor", factor::factor),
    ("file", file::file),
    ("find", find::find),
    ("fold", text::fold),
    ("groups", misc::groups),
    ("gunzip", gzip::gunzip),
    ("gzip", gzip::gzip),
    ("head", head_tail::head),
    ("hostid", misc::hostid),
    ("hostname", sys::hostname),
    ("install", install::install),
    ("join", join::join),
    ("link", misc::link),
    ("ln", copy::ln),
    ("logname", misc::logname),
    ("md5sum", digest::md5sum),
    ("mktemp", copy::mktemp),
    ("mv", copy::mv),
    ("nice", misc::nice),
    ("nl", lines::nl),
    ("nohup", misc::nohup),
    ("nproc", sys::nproc),
    ("numfmt", numfmt::numfmt),
    ("od", od::od),
    ("paste", lines::paste),
    ("pathchk", misc::pathchk),
    ("readlink", paths::readlink),
    ("realpath", paths::realpath),
    ("rev", lines::rev),
    ("seq", seq::seq),
    ("sha1sum", digest::sha1sum),
    ("sha224sum", digest::sha224sum),
    ("sha256sum", digest::sha256sum),
    ("sha384sum", digest::sha384sum),
    ("sha512sum", digest::sha512sum),
    ("shuf", shuf::shuf),
    ("sleep", timing::sleep),
    ("sort", sort::sort),
    ("split", split::split),
    ("stat", stat::stat),
    ("stdbuf", misc::stdbuf),
    ("stty", misc::stty),
    ("sum", cksum::sum),
    ("sync", misc::sync),
    ("tac", lines::tac),
    ("tail", head_tail::tail),
    ("tar", tar::tar),
    ("tee", seq::tee),
    ("timeout", timing::timeout),
    ("tr", tr::tr),
    ("truncate", truncate::truncate),
    ("tsort", tsort::tsort),
    ("tty", misc::tty),
    ("uname", sys::uname),
    ("unexpand", tabs::unexpand),
    ("uniq", sort::uniq),
    ("unlink", misc::unlink),
    ("users", misc::users),
    ("wc", wc::wc),
    ("who", misc::users),
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

/// gnulib's XARGMATCH: the index of `value` in `choices` (exact, or an
/// unambiguous prefix), or GNU's message with the valid arguments and
/// status 1.
pub(crate) fn argmatch(
    p: &Process<'_>,
    option: &str,
    value: &str,
    choices: &[&str],
) -> Result<usize, i32> {
    let ids: Vec<usize> = (0..choices.len()).collect();
    argmatch_synonyms(p, option, value, choices, &ids)
}

/// XARGMATCH over synonyms: `ids[i]` is what `choices[i]` means; the
/// result is that id. Synonyms share a line of the valid-argument list
/// and a prefix of several synonyms is not ambiguous.
pub(crate) fn argmatch_synonyms(
    p: &Process<'_>,
    option: &str,
    value: &str,
    choices: &[&str],
    ids: &[usize],
) -> Result<usize, i32> {
    let id = |i: usize| ids.get(i).copied().unwrap_or(i);
    if let Some(i) = choices.iter().position(|c| *c == value) {
        return Ok(id(i));
    }
    let mut prefixed: Vec<usize> = (0..choices.len())
        .filter(|&i| !value.is_empty() && choices[i].starts_with(value))
        .map(id)
        .collect();
    prefixed.dedup();
    if let [only] = prefixed.as_slice() {
        return Ok(*only);
    }
    let kind = if prefixed.is_empty() {
        "invalid"
    } else {
        "ambiguous"
    };
    Err(argmatch_failure(p, kind, option, value, choices, ids))
}

/// XARGMATCH_EXACT: like `argmatch`, without abbreviations.
pub(crate) fn argmatch_exact(
    p: &Process<'_>,
    option: &str,
    value: &str,
    choices: &[&str],
) -> Result<usize, i32> {
    let ids: Vec<usize> = (0..choices.len()).collect();
    choices
        .iter()
        .position(|c| *c == value)
        .ok_or_else(|| argmatch_failure(p, "invalid", option, value, choices, &ids))
}

/// argmatch_die: the message, the valid arguments (synonyms on one
/// line) and the usage hint; returns status 1.
fn argmatch_failure(
    p: &Process<'_>,
    kind: &str,
    option: &str,
    value: &str,
    choices: &[&str],
    ids: &[usize],
) -> i32 {
    let id = |i: usize| ids.get(i).copied().unwrap_or(i);
    p.error(&format!(
        "{kind} argument {} for {}",
        p.quote(value),
        p.quote(option)
    ));
    let mut list = String::from("Valid arguments are:");
    for (i, c) in choices.iter().enumerate() {
        if i > 0 && id(i) == id(i - 1) {
            list.push_str(&format!(", {}", p.quote(c)));
        } else {
            list.push_str(&format!("\n  - {}", p.quote(c)));
        }
    }
    p.io.err_line(&list);
    let name = p.prefix.clone();
    p.try_help(&name);
    1
}

/// gnulib's xdectoumax: a size operand between `min` and `max`, or
/// `WHAT: ‘TEXT’` (with the errno text GNU adds) and status 1.
pub(crate) fn size_operand(
    p: &Process<'_>,
    text: &str,
    suffixes: &str,
    (min, max): (u64, u64),
    what: &str,
) -> Result<u64, i32> {
    use crate::programs::size::{SizeError, parse_size};
    let reason = match parse_size(text, suffixes) {
        Ok(v) if v < min => ": Numerical result out of range",
        // gnulib tells a type overflow from a tighter limit by size.
        Ok(v) if v > max && v > i32::MAX as u64 / 2 => ": Value too large for defined data type",
        Ok(v) if v > max => ": Numerical result out of range",
        Ok(v) => return Ok(v),
        Err(SizeError::Overflow) => ": Value too large for defined data type",
        Err(SizeError::Invalid) => "",
    };
    p.error(&format!("{what}: {}{reason}", p.quote(text)));
    Err(1)
}

/// The bytes of an operand: a file, or stdin for `-`.
pub(crate) fn read_input(p: &Process<'_>, name: &str) -> std::io::Result<Vec<u8>> {
    read_input_until(p, name, |_| false)
}

/// [`read_input`], where a device that never ends (`/dev/zero`,
/// `/dev/urandom`) is read only until `enough` says so, or up to what a
/// pipe holds: as from a pipe whose reader has what it wanted.
pub(crate) fn read_input_until(
    p: &Process<'_>,
    name: &str,
    enough: impl FnMut(&[u8]) -> bool,
) -> std::io::Result<Vec<u8>> {
    if Process::is_stdin(name) {
        return Ok(p.io.stdin.borrow_mut().read_until(enough));
    }
    let path = p.resolve(name);
    if path.is_dir() {
        return Err(std::io::Error::from(std::io::ErrorKind::IsADirectory));
    }
    if super::devices::is_device(p, name) {
        return super::devices::read_device(&path, enough);
    }
    std::fs::read(path)
}

/// At most `limit` bytes of an operand (all of it for `None`), so that
/// `/dev/zero` and `/dev/urandom` can be read a little at a time.
pub(crate) fn read_input_limited(
    p: &Process<'_>,
    name: &str,
    limit: Option<u64>,
) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let Some(limit) = limit else {
        return read_input(p, name);
    };
    if name == "-" {
        let mut data = p.io.stdin.borrow_mut().read_all();
        data.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        return Ok(data);
    }
    let path = p.resolve(name);
    if path.is_dir() {
        return Err(std::io::Error::from(std::io::ErrorKind::IsADirectory));
    }
    let mut out = Vec::new();
    std::fs::File::open(path)?
        .take(limit)
        .read_to_end(&mut out)?;
    Ok(out)
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
    fn lines_split_like_gnu() {
        assert_eq!(split_lines(b"a\nb\n", b'\n'), vec![&b"a"[..], b"b"]);
        assert_eq!(split_lines(b"a\nb", b'\n'), vec![&b"a"[..], b"b"]);
        assert!(split_lines(b"", b'\n').is_empty());
        assert_eq!(split_lines(b"\n", b'\n'), vec![&b""[..]]);
    }
}
