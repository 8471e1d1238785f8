//! `getopts OPTSTRING NAME [ARGS...]`: one option per call, as bash does:
//! `OPTIND` names the next argument, `OPTARG` holds an option's argument,
//! NAME gets the option letter, `?` on an error, and the status is 1 once
//! the options are over. A leading `:` in OPTSTRING makes errors silent
//! (`?` with OPTARG = the letter, `:` for a missing argument).

use crate::errors::Unwind;
use crate::interp::Shell;
use crate::streams::Io;

pub(crate) fn getopts(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let (Some(spec), Some(name)) = (argv.get(1), argv.get(2)) else {
        shell.report(io, "getopts: usage: getopts optstring name [arg ...]");
        return Ok(2);
    };
    let args: Vec<String> = match argv.get(3..) {
        Some(rest) if !rest.is_empty() => rest.to_vec(),
        _ => shell.positional.clone(),
    };
    if !crate::interp::vars::is_name(name) {
        shell.report(io, &format!("getopts: `{name}': not a valid identifier"));
        return Ok(1);
    }
    let silent = spec.starts_with(':');
    let raw_optind = shell
        .vars
        .scalar("OPTIND")
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(1);
    // `OPTIND=0` (or 1) starts over, even inside a group like `-abc`.
    if raw_optind <= 1 && shell.getopts_pos != (1, 1) && raw_optind != shell.getopts_pos.0 {
        shell.getopts_pos = (1, 1);
    }
    let optind = raw_optind.max(1);
    if optind > args.len() + 1 {
        return finish(shell, name, args.len() + 1, 1);
    }
    let mut pos = if shell.getopts_pos.0 == optind {
        shell.getopts_pos.1
    } else {
        1
    };
    let Some(word) = args
        .get(optind - 1)
        .filter(|w| w.len() > 1 && w.starts_with('-'))
    else {
        return finish(shell, name, optind, 1);
    };
    if word == "--" {
        return finish(shell, name, optind + 1, 1);
    }
    let chars: Vec<char> = word.chars().collect();
    let Some(&letter) = chars.get(pos) else {
        return finish(shell, name, optind, 1);
    };
    pos += 1;
    let at_end = pos >= chars.len();
    let (mut next_optind, mut next_pos) = if at_end {
        (optind + 1, 1)
    } else {
        (optind, pos)
    };
    let takes_arg = spec
        .char_indices()
        .find(|(_, c)| *c == letter && *c != ':')
        .map(|(i, _)| spec[i + letter.len_utf8()..].starts_with(':'));
    let mut value = letter.to_string();
    let _ = shell.vars.unset("OPTARG");
    match takes_arg {
        None => {
            value = "?".into();
            if silent {
                let _ = shell.vars.set("OPTARG", letter.to_string());
            } else {
                io.err_line(&format!("{}: illegal option -- {letter}", shell.arg0));
            }
        }
        Some(true) if !at_end => {
            let _ = shell.vars.set("OPTARG", chars[pos..].iter().collect());
            (next_optind, next_pos) = (optind + 1, 1);
        }
        Some(true) => match args.get(optind) {
            Some(arg) => {
                let _ = shell.vars.set("OPTARG", arg.clone());
                next_optind = optind + 2;
            }
            None if silent => {
                value = ":".into();
                let _ = shell.vars.set("OPTARG", letter.to_string());
            }
            None => {
                value = "?".into();
                io.err_line(&format!(
                    "{}: option requires an argument -- {letter}",
                    shell.arg0
                ));
            }
        },
        Some(false) => {}
    }
    shell.getopts_pos = (next_optind, next_pos);
    let _ = shell.vars.set("OPTIND", next_optind.to_string());
    let _ = shell.vars.set(name, value);
    Ok(0)
}

/// The options are over: NAME is `?`, OPTIND points past them.
fn finish(shell: &mut Shell, name: &str, optind: usize, status: i32) -> Result<i32, Unwind> {
    shell.getopts_pos = (optind, 1);
    let _ = shell.vars.unset("OPTARG");
    let _ = shell.vars.set("OPTIND", optind.to_string());
    let _ = shell.vars.set(name, "?".to_string());
    Ok(status)
}
