//! `read [-rs] [-d DELIM] [-n|-N COUNT] [-p PROMPT] [-a ARRAY] [NAME...]`:
//! one line (or up to DELIM, or COUNT characters) of stdin split on `$IFS`
//! into variables, the last taking the rest.

use std::collections::BTreeMap;

use crate::errors::Unwind;
use crate::interp::Shell;
use crate::interp::vars::Value;
use crate::streams::Io;

/// What `read` was asked to do.
struct Request {
    raw: bool,
    /// `-d`: the byte that ends the input (NUL for `-d ''`).
    delim: u8,
    /// `-n N` (stop early) or `-N N` (exactly N, ignoring the delimiter).
    count: Option<usize>,
    exact: bool,
    array: Option<String>,
    names: Vec<String>,
    /// `-u FD`: read from that descriptor instead of stdin.
    fd: Option<i32>,
}

/// Parses the options; `Err` is a message for a bad one.
fn parse(argv: &[String]) -> Result<Request, String> {
    let mut req = Request {
        raw: false,
        delim: b'\n',
        count: None,
        exact: false,
        array: None,
        names: Vec::new(),
        fd: None,
    };
    let mut args = argv.iter().skip(1);
    while let Some(arg) = args.next() {
        let Some(flags) = arg
            .strip_prefix('-')
            .filter(|f| !f.is_empty() && req.names.is_empty())
        else {
            req.names.push(arg.clone());
            continue;
        };
        let mut chars = flags.chars();
        while let Some(c) = chars.next() {
            if matches!(c, 'r' | 's' | 'e') {
                req.raw |= c == 'r';
                continue;
            }
            let attached: String = chars.by_ref().collect();
            let value = if attached.is_empty() {
                args.next()
                    .cloned()
                    .ok_or(format!("-{c}: option requires an argument"))?
            } else {
                attached
            };
            match c {
                'd' => req.delim = value.bytes().next().unwrap_or(0),
                'n' | 'N' => {
                    let n = value
                        .trim()
                        .parse()
                        .map_err(|_| format!("{value}: invalid number"))?;
                    req.count = Some(n);
                    req.exact = c == 'N';
                }
                'a' => req.array = Some(value),
                'u' => {
                    let n = value
                        .trim()
                        .parse()
                        .map_err(|_| format!("{value}: invalid file descriptor specification"))?;
                    req.fd = Some(n);
                }
                'p' | 't' | 'i' => {}
                _ => return Err(format!("-{c}: invalid option")),
            }
        }
    }
    Ok(req)
}

pub(crate) fn read(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let req = match parse(argv) {
        Ok(req) => req,
        Err(msg) => {
            shell.report(io, &format!("read: {msg}"));
            return Ok(2);
        }
    };
    let input = match req.fd {
        None | Some(0) => io.stdin.clone(),
        Some(fd) => match io.extra.get(&fd) {
            Some(crate::streams::Fd::In(source)) => source.clone(),
            _ => {
                shell.report(
                    io,
                    &format!("read: {fd}: invalid file descriptor: Bad file descriptor"),
                );
                return Ok(1);
            }
        },
    };
    let (line, complete) = read_input(&input, &req);
    // At end of input bash still assigns: every variable becomes empty
    // (so `while read x` leaves `x` empty after the loop).
    let ifs = shell.ifs();
    let result = if let Some(array) = &req.array {
        let fields = if req.exact {
            vec![line]
        } else {
            split_all(&line, &ifs)
        };
        let fields: BTreeMap<usize, String> = fields.into_iter().enumerate().collect();
        shell.vars.set_value(array, Value::Indexed(fields))
    } else if req.names.is_empty() {
        shell.vars.set("REPLY", line)
    } else if let Some(name) = req.names.first().filter(|_| req.exact) {
        shell.vars.set(name, line)
    } else {
        assign_fields(shell, &req.names, &line, &ifs)
    };
    if let Err(err) = result {
        return Err(shell.fail(io, &err));
    }
    Ok(if complete { 0 } else { 1 })
}

/// The input up to the delimiter (not included) or the count; without
/// `-r`, backslash escapes the next character and backslash-delimiter
/// continues the input. The flag says whether it ended as asked (false
/// at end of input).
fn read_input(input: &crate::streams::InputRef, req: &Request) -> (String, bool) {
    let mut bytes = Vec::new();
    let mut chars = 0usize;
    let mut stdin = input.borrow_mut();
    let complete = loop {
        if req.count.is_some_and(|n| chars >= n) {
            break true;
        }
        let Some(b) = stdin.read_byte() else {
            break false;
        };
        if b == req.delim && !req.exact {
            break true;
        }
        if b == b'\\' && !req.raw {
            match stdin.read_byte() {
                Some(next) if next == req.delim && !req.exact => continue,
                Some(next) => bytes.push(next),
                None => break false,
            }
        } else {
            bytes.push(b);
        }
        // Count characters, not the continuation bytes of UTF-8.
        if b & 0xC0 != 0x80 {
            chars += 1;
        }
    };
    (String::from_utf8_lossy(&bytes).into_owned(), complete)
}

fn is_ifs_space(c: char, ifs: &str) -> bool {
    ifs.contains(c) && c.is_whitespace()
}

/// Every field, as `read -a` splits: white space in IFS runs together,
/// each other IFS character ends one field (so `a||b` has an empty one).
fn split_all(line: &str, ifs: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut rest = line.trim_start_matches(|c| is_ifs_space(c, ifs));
    while !rest.is_empty() {
        let end = rest.find(|c| ifs.contains(c)).unwrap_or(rest.len());
        let (field, after) = rest.split_at(end);
        fields.push(field.to_string());
        let after = after.trim_start_matches(|c| is_ifs_space(c, ifs));
        let mut chars = after.chars();
        rest = match chars.next() {
            Some(c) if ifs.contains(c) => {
                chars.as_str().trim_start_matches(|c| is_ifs_space(c, ifs))
            }
            _ => after,
        };
    }
    fields
}

fn assign_fields(
    shell: &mut Shell,
    names: &[String],
    line: &str,
    ifs: &str,
) -> Result<(), crate::errors::ShellError> {
    let mut rest = line.trim_start_matches(|c| is_ifs_space(c, ifs));
    for (i, name) in names.iter().enumerate() {
        let last = i + 1 == names.len();
        if last {
            let value = rest.trim_end_matches(|c| is_ifs_space(c, ifs));
            shell.vars.set(name, value.to_string())?;
            break;
        }
        let end = rest.find(|c| ifs.contains(c)).unwrap_or(rest.len());
        let (field, after) = rest.split_at(end);
        shell.vars.set(name, field.to_string())?;
        let mut after_chars = after.chars();
        // One delimiter, plus surrounding IFS white space.
        if after_chars.next().is_some() {
            rest = after_chars
                .as_str()
                .trim_start_matches(|c| is_ifs_space(c, ifs));
        } else {
            rest = "";
        }
    }
    Ok(())
}
