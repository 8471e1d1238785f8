//! `mapfile` / `readarray [-t] [-n COUNT] [-s SKIP] [-d DELIM] [ARRAY]`:
//! standard input, one element per line (default array `MAPFILE`).

use std::collections::BTreeMap;

use crate::errors::Unwind;
use crate::interp::Shell;
use crate::interp::vars::{Value, is_name};
use crate::streams::Io;

/// `-td,` and `-n5` written as separate words (`-t -d ,`, `-n 5`).
fn split_clusters(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut options = true;
    for (i, arg) in argv.iter().enumerate() {
        if i == 0 || !options || !arg.starts_with('-') || arg.len() <= 2 {
            if arg == "--" {
                options = false;
            }
            out.push(arg.clone());
            continue;
        }
        let body: Vec<char> = arg.chars().skip(1).collect();
        let mut j = 0;
        while let Some(&c) = body.get(j) {
            out.push(format!("-{c}"));
            j += 1;
            if "dnsOuCc".contains(c) {
                let rest: String = body.get(j..).unwrap_or_default().iter().collect();
                if !rest.is_empty() {
                    out.push(rest);
                }
                break;
            }
        }
    }
    out
}

pub(crate) fn mapfile(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let builtin = argv.first().map_or("mapfile", String::as_str).to_string();
    let (mut trim, mut count, mut skip, mut delim) = (false, 0usize, 0usize, b'\n');
    let mut origin = None;
    let mut name = "MAPFILE".to_string();
    let argv = split_clusters(argv);
    let mut args = argv.iter().skip(1);
    while let Some(arg) = args.next() {
        let mut number = |what: &str| -> Option<usize> {
            let value = args.next()?;
            value.parse().ok().or_else(|| {
                shell.report(io, &format!("{builtin}: {value}: invalid {what}"));
                None
            })
        };
        match arg.as_str() {
            "-t" => trim = true,
            "-n" => match number("line count") {
                Some(n) => count = n,
                None => return Ok(1),
            },
            "-s" => match number("line count") {
                Some(n) => skip = n,
                None => return Ok(1),
            },
            "-d" => delim = args.next().and_then(|d| d.bytes().next()).unwrap_or(0),
            "-O" => {
                let value = args.next().cloned().unwrap_or_default();
                match value.trim().parse::<usize>() {
                    Ok(n) => origin = Some(n),
                    Err(_) => {
                        shell.report(io, &format!("{builtin}: {value}: invalid array origin"));
                        return Ok(1);
                    }
                }
            }
            a if a.starts_with('-') => {
                shell.report(io, &format!("{builtin}: {a}: invalid option"));
                io.err_line(&format!(
                    "{builtin}: usage: {builtin} [-d delim] [-n count] [-O origin] [-s count] [-t] [-u fd] [-C callback] [-c quantum] [array]"
                ));
                return Ok(2);
            }
            a if is_name(a) => name = a.to_string(),
            a => {
                shell.report(io, &format!("{builtin}: `{a}': not a valid identifier"));
                return Ok(1);
            }
        }
    }
    if shell.vars.is_assoc(&name) {
        shell.report(io, &format!("{builtin}: {name}: not an indexed array"));
        return Ok(1);
    }
    let input = io.stdin.borrow_mut().read_all();
    // `-O` adds to the array from that index; otherwise it is replaced.
    let mut map = match (origin, shell.vars.value(&name)) {
        (Some(_), Some(Value::Indexed(m))) => m.clone(),
        (Some(_), Some(Value::Scalar(s))) => BTreeMap::from([(0, s.clone())]),
        _ => BTreeMap::new(),
    };
    let start = origin.unwrap_or(0);
    let pieces = input.split_inclusive(|&b| b == delim).skip(skip);
    for (i, piece) in pieces.enumerate() {
        if count > 0 && i >= count {
            break;
        }
        let piece = if trim {
            piece.strip_suffix(&[delim]).unwrap_or(piece)
        } else {
            piece
        };
        map.insert(
            start.saturating_add(i),
            String::from_utf8_lossy(piece).into_owned(),
        );
    }
    match shell.vars.set_value(&name, Value::Indexed(map)) {
        Ok(()) => Ok(0),
        Err(err) => {
            shell.report(io, &err.to_string());
            Ok(1)
        }
    }
}
