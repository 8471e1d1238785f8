//! `alias` and `unalias`: the table of aliases, which
//! `interp::alias` expands in command position when
//! `shopt -s expand_aliases` is on.

use crate::errors::Unwind;
use crate::interp::Shell;
use crate::programs::quoting::single_quote;
use crate::streams::Io;

/// `BASH_ALIASES` mirrors the table.
fn publish(shell: &mut Shell) {
    let map = shell.aliases.clone().into_iter().collect();
    let _ = shell
        .vars
        .set_value("BASH_ALIASES", crate::interp::vars::Value::Assoc(map));
}

fn definition(name: &str, value: &str) -> String {
    format!("alias {name}={}\n", single_quote(value))
}

pub(crate) fn alias(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let args: Vec<&String> = argv.iter().skip(1).filter(|a| *a != "-p").collect();
    let mut out = String::new();
    if args.is_empty() {
        for (name, value) in &shell.aliases {
            out.push_str(&definition(name, value));
        }
        io.out(out.as_bytes());
        return Ok(0);
    }
    let mut status = 0;
    for arg in args {
        match arg.split_once('=') {
            Some((name, value)) if valid_name(name) => {
                shell.aliases.insert(name.to_string(), value.to_string());
            }
            Some(_) => {
                shell.report(io, &format!("alias: `{arg}': invalid alias name"));
                status = 1;
            }
            None => match shell.aliases.get(arg.as_str()) {
                Some(value) => out.push_str(&definition(arg, value)),
                None => {
                    shell.report(io, &format!("alias: {arg}: not found"));
                    status = 1;
                }
            },
        }
    }
    io.out(out.as_bytes());
    publish(shell);
    Ok(status)
}

/// Alias names may not hold the characters that end or quote a word.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name
            .chars()
            .any(|c| c.is_whitespace() || "/$`=|&;()<>'\"\\".contains(c))
}

pub(crate) fn unalias(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let mut status = 0;
    for arg in argv.iter().skip(1) {
        if arg == "-a" {
            shell.aliases.clear();
        } else if shell.aliases.remove(arg.as_str()).is_none() {
            shell.report(io, &format!("unalias: {arg}: not found"));
            status = 1;
        }
    }
    publish(shell);
    Ok(status)
}
