//! `read [-r] [-p PROMPT] [-a ARRAY] [NAME...]`: one line of stdin split
//! on `$IFS` into variables, the last taking the rest.

use std::collections::BTreeMap;

use crate::errors::Unwind;
use crate::interp::Shell;
use crate::interp::vars::Value;
use crate::streams::Io;

pub(crate) fn read(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let mut raw = false;
    let mut array = None;
    let mut names = Vec::new();
    let mut i = 1;
    while let Some(arg) = argv.get(i) {
        match arg.as_str() {
            "-r" => raw = true,
            "-s" => {}
            "-p" | "-t" | "-n" | "-N" | "-d" | "-u" => i += 1,
            "-a" => {
                i += 1;
                array = argv.get(i).cloned();
            }
            _ => names.push(arg.clone()),
        }
        i += 1;
    }
    let (line, complete) = read_logical_line(io, raw);
    // At end of input bash still assigns: every variable becomes empty
    // (so `while read x` leaves `x` empty after the loop).
    let line = line.unwrap_or_default();
    let ifs = shell.ifs();
    let result = if let Some(array) = array {
        let fields: BTreeMap<usize, String> =
            split_all(&line, &ifs).into_iter().enumerate().collect();
        shell.vars.set_value(&array, Value::Indexed(fields))
    } else if names.is_empty() {
        shell.vars.set("REPLY", line)
    } else {
        assign_fields(shell, &names, &line, &ifs)
    };
    if let Err(err) = result {
        return Err(shell.fail(io, &err));
    }
    Ok(if complete { 0 } else { 1 })
}

/// A line without its newline; backslash-newline joins lines unless `-r`.
/// The flag says whether a newline ended it (false at end of input).
fn read_logical_line(io: &Io, raw: bool) -> (Option<String>, bool) {
    let mut text = String::new();
    let mut got_any = false;
    loop {
        let Some(bytes) = io.stdin.borrow_mut().read_line() else {
            return (got_any.then_some(text), false);
        };
        got_any = true;
        let line = String::from_utf8_lossy(&bytes).into_owned();
        let (body, ended) = match line.strip_suffix('\n') {
            Some(b) => (b.to_string(), true),
            None => (line, false),
        };
        if raw {
            text.push_str(&body);
            return (Some(text), ended);
        }
        if let Some(joined) = body.strip_suffix('\\').filter(|_| ended) {
            text.push_str(&unescape(joined));
            continue;
        }
        text.push_str(&unescape(&body));
        return (Some(text), ended);
    }
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn is_ifs_space(c: char, ifs: &str) -> bool {
    ifs.contains(c) && c.is_whitespace()
}

fn split_all(line: &str, ifs: &str) -> Vec<String> {
    line.split(|c| ifs.contains(c))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
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
