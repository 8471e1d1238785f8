//! `truncate -s [+-<>/%]SIZE [-c] [-o] [-r REF] FILE...`: sets file sizes
//! (growing with zeros), relative to the current size or a reference
//! file, with GNU coreutils 9.1's size suffixes and messages.

use std::fs::OpenOptions;

use super::Process;
use super::args::{HasArg, Spec};
use crate::errors::strerror;
use crate::programs::quoting::single_quote;
use crate::programs::size::{SizeError, parse_size};

const SPEC: Spec<'static> = Spec {
    short: "cor:s:",
    long: &[
        ("no-create", 'c', HasArg::No),
        ("io-blocks", 'o', HasArg::No),
        ("reference", 'r', HasArg::Yes),
        ("size", 's', HasArg::Yes),
    ],
};

/// The block size `-o` counts in (the sandbox filesystem's).
const BLOCK: i64 = 4096;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Rel {
    Absolute,
    /// `+N`, `-N`
    Relative,
    /// `<N`: at most N.
    AtMost,
    /// `>N`: at least N.
    AtLeast,
    /// `/N`: round down to a multiple.
    RoundDown,
    /// `%N`: round up to a multiple.
    RoundUp,
}

/// `-s`: the mode and the signed size, or the exit status.
fn parse(p: &Process<'_>, text: &str) -> Result<(Rel, i64), i32> {
    let t = text.trim_start();
    let (mut rel, t) = match t.chars().next() {
        Some('<') => (Rel::AtMost, &t[1..]),
        Some('>') => (Rel::AtLeast, &t[1..]),
        Some('/') => (Rel::RoundDown, &t[1..]),
        Some('%') => (Rel::RoundUp, &t[1..]),
        _ => (Rel::Absolute, t),
    };
    let t = t.trim_start();
    let negative = t.starts_with('-');
    if t.starts_with(['+', '-']) {
        if rel != Rel::Absolute {
            return Err(super::usage(p, "multiple relative modifiers specified", 1));
        }
        rel = Rel::Relative;
    }
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    let value = if digits.starts_with(['+', '-']) {
        Err(SizeError::Invalid)
    } else {
        parse_size(digits, "EgGkKmMPtTYZ0")
            .and_then(|v| i64::try_from(v).map_err(|_| SizeError::Overflow))
    };
    let size = match value {
        Ok(v) if negative => -v,
        Ok(v) => v,
        Err(e) => {
            let reason = if e == SizeError::Overflow {
                ": Value too large for defined data type"
            } else {
                ""
            };
            p.error(&format!("Invalid number: {}{reason}", p.quote(text)));
            return Err(1);
        }
    };
    if matches!(rel, Rel::RoundUp | Rel::RoundDown) && size == 0 {
        p.error("division by zero");
        return Err(1);
    }
    Ok((rel, size))
}

pub(crate) fn truncate(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = match super::parse_args(p, &SPEC, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let mut sizes = None;
    for v in args.values('s') {
        match parse(p, v) {
            Ok(s) => sizes = Some(s),
            Err(status) => return status,
        }
    }
    let reference = args.value('r');
    if reference.is_none() && sizes.is_none() {
        let msg = format!(
            "you must specify either {} or {}",
            p.quote("--size"),
            p.quote("--reference")
        );
        return super::usage(p, &msg, 1);
    }
    if reference.is_some() && sizes.is_some_and(|(rel, _)| rel == Rel::Absolute) {
        let msg = format!(
            "you must specify a relative {} with {}",
            p.quote("--size"),
            p.quote("--reference")
        );
        return super::usage(p, &msg, 1);
    }
    if args.has('o') && sizes.is_none() {
        let msg = format!(
            "{} was specified but {} was not",
            p.quote("--io-blocks"),
            p.quote("--size")
        );
        return super::usage(p, &msg, 1);
    }
    if args.operands.is_empty() {
        return super::usage(p, "missing file operand", 1);
    }
    let mut ref_size = None;
    if let Some(r) = reference {
        match std::fs::metadata(p.resolve(r)) {
            Ok(m) => ref_size = Some(i64::try_from(m.len()).unwrap_or(i64::MAX)),
            Err(e) => {
                p.error(&format!(
                    "cannot stat {}: {}",
                    single_quote(r),
                    strerror(&e)
                ));
                return 1;
            }
        }
    }
    let (rel, mut size) = match (sizes, ref_size) {
        (Some(s), _) => s,
        (None, Some(r)) => (Rel::Absolute, r),
        (None, None) => (Rel::Absolute, 0),
    };
    if args.has('o') {
        size = match size.checked_mul(BLOCK) {
            Some(s) => s,
            None => {
                p.error(&format!(
                    "overflow in {size} * {BLOCK} byte blocks for file"
                ));
                return 1;
            }
        };
    }
    let mut status = 0;
    for name in &args.operands {
        status |= one(p, name, rel, size, ref_size, args.has('c'));
    }
    status
}

fn one(
    p: &Process<'_>,
    name: &str,
    rel: Rel,
    size: i64,
    ref_size: Option<i64>,
    no_create: bool,
) -> i32 {
    let path = p.resolve(name);
    if path.is_dir() {
        p.error(&format!(
            "cannot open {} for writing: Is a directory",
            single_quote(name)
        ));
        return 1;
    }
    let file = match OpenOptions::new()
        .write(true)
        .create(!no_create)
        .truncate(false)
        .open(&path)
    {
        Ok(f) => f,
        Err(e) if no_create && e.kind() == std::io::ErrorKind::NotFound => return 0,
        Err(e) => {
            p.error(&format!(
                "cannot open {} for writing: {}",
                single_quote(name),
                strerror(&e)
            ));
            return 1;
        }
    };
    let current = ref_size.unwrap_or_else(|| {
        file.metadata()
            .map_or(0, |m| i64::try_from(m.len()).unwrap_or(i64::MAX))
    });
    let new = match rel {
        Rel::Absolute => Some(size),
        Rel::AtLeast => Some(current.max(size)),
        Rel::AtMost => Some(current.min(size)),
        Rel::RoundDown => Some(current - current % size),
        Rel::RoundUp => {
            let r = current % size;
            current.checked_add(if r == 0 { 0 } else { size - r })
        }
        Rel::Relative => current.checked_add(size),
    };
    let Some(new) = new else {
        p.error(&format!(
            "overflow extending size of file {}",
            single_quote(name)
        ));
        return 1;
    };
    let new = new.max(0);
    if let Err(e) = file.set_len(u64::try_from(new).unwrap_or(0)) {
        p.error(&format!(
            "failed to truncate {} at {new} bytes: {}",
            single_quote(name),
            strerror(&e)
        ));
        return 1;
    }
    0
}
