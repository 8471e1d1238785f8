//! `hash`: the table of where programs were found on `PATH`, which
//! running a program fills and `type` consults.

use crate::errors::Unwind;
use crate::interp::Shell;
use crate::streams::Io;

/// A remembered program: its path and how often it ran from there.
#[derive(Debug, Clone)]
pub(crate) struct Hashed {
    pub(crate) path: String,
    pub(crate) hits: u32,
}

pub(crate) fn hash(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let mut args = argv.iter().skip(1).peekable();
    let (mut path, mut mode, mut as_commands) = (None, None, false);
    while let Some(arg) = args.next_if(|a| a.starts_with('-') && a.len() > 1) {
        match arg.as_str() {
            "-p" => path = args.next().cloned(),
            "-l" => as_commands = true,
            "-r" | "-t" | "-d" => mode = arg.chars().nth(1),
            "--" => break,
            other => {
                shell.report(io, &format!("hash: {other}: invalid option"));
                io.err_line("hash: usage: hash [-lr] [-p pathname] [-dt] [name ...]");
                return Ok(2);
            }
        }
    }
    let names: Vec<String> = args.cloned().collect();
    if mode == Some('r') {
        shell.hashed.clear();
    }
    if names.is_empty() {
        return Ok(match mode {
            Some('r') => 0,
            _ => list(shell, io, as_commands),
        });
    }
    let mut status = 0;
    let many = names.len() > 1;
    let mut out = String::new();
    for name in &names {
        let found = match (mode, &path) {
            (_, Some(p)) => {
                let entry = Hashed {
                    path: p.clone(),
                    hits: 0,
                };
                shell.hashed.insert(name.clone(), entry);
                true
            }
            (Some('t'), None) => match shell.hashed.get(name) {
                Some(h) if as_commands => {
                    out.push_str(&format!("builtin hash -p {} {name}\n", h.path));
                    true
                }
                Some(h) if many => {
                    out.push_str(&format!("{name}\t{}\n", h.path));
                    true
                }
                Some(h) => {
                    out.push_str(&format!("{}\n", h.path));
                    true
                }
                None => false,
            },
            (Some('d'), None) => shell.hashed.remove(name).is_some(),
            _ => remember(shell, name),
        };
        if !found {
            shell.report(io, &format!("hash: {name}: not found"));
            status = 1;
        }
    }
    io.out(out.as_bytes());
    Ok(status)
}

/// `hash name`: searches `PATH` again, forgetting a stale entry. A name
/// with a slash is not searched for, so it is never "not found".
fn remember(shell: &mut Shell, name: &str) -> bool {
    shell.hashed.remove(name);
    if name.contains('/') {
        return true;
    }
    if super::lookup(name).is_some() {
        return true;
    }
    match super::introspect::path_of(shell, name) {
        Some(path) => {
            shell
                .hashed
                .insert(name.to_string(), Hashed { path, hits: 0 });
            true
        }
        None => false,
    }
}

fn list(shell: &Shell, io: &Io, as_commands: bool) -> i32 {
    if shell.hashed.is_empty() {
        shell.report(io, "hash: hash table empty");
        return 0;
    }
    let mut out = String::new();
    if !as_commands {
        out.push_str("hits\tcommand\n");
    }
    for (name, h) in &shell.hashed {
        if as_commands {
            out.push_str(&format!("builtin hash -p {} {name}\n", h.path));
        } else {
            out.push_str(&format!("{:4}\t{}\n", h.hits, h.path));
        }
    }
    io.out(out.as_bytes());
    0
}
