//! Shell builtins: the commands that must run inside the shell because
//! they change it (`cd`, `export`, `exit`, ...) or are part of the
//! language (`eval`, `source`, `command`, `read`).
//!
//! Builtins that bash also ships as programs (`echo`, `printf`, `test`,
//! ...) reuse the utility code with bash's message prefix.

mod alias;
mod compgen;
mod declare;
mod dirs;
mod enable;
mod flow;
mod getopts;
pub(crate) mod hash;
mod introspect;
mod jobs;
mod mapfile;
mod read;
pub(crate) mod shopt;
pub(crate) mod vars;

use crate::errors::Unwind;
use crate::interp::Shell;
use crate::programs::{self, Process, UtilityFn};
use crate::streams::Io;
pub(crate) use declare::declaration;

/// A builtin's entry point.
pub(crate) type BuiltinFn = fn(&mut Shell, &Io, &[String]) -> Result<i32, Unwind>;

/// Every builtin, sorted by name for binary search.
const BUILTINS: &[(&str, BuiltinFn)] = &[
    (".", flow::source),
    (":", flow::colon),
    ("[", bracket),
    ("alias", alias::alias),
    ("bg", jobs::no_job_control),
    ("break", flow::break_),
    ("builtin", builtin),
    ("caller", introspect::caller),
    ("cd", dirs::cd),
    ("command", introspect::command),
    ("compgen", compgen::compgen),
    ("continue", flow::continue_),
    ("declare", declare::declare),
    ("dirs", dirs::dirs),
    ("disown", jobs::disown),
    ("echo", echo),
    ("enable", enable::enable),
    ("eval", flow::eval),
    ("exec", flow::exec),
    ("exit", flow::exit),
    ("export", declare::export),
    ("false", false_),
    ("fg", jobs::no_job_control),
    ("getopts", getopts::getopts),
    ("hash", hash::hash),
    ("jobs", jobs::jobs),
    ("kill", jobs::kill),
    ("let", vars::let_),
    ("local", declare::local),
    ("mapfile", mapfile::mapfile),
    ("popd", dirs::popd),
    ("printf", printf),
    ("pushd", dirs::pushd),
    ("pwd", pwd),
    ("read", read::read),
    ("readarray", mapfile::mapfile),
    ("readonly", declare::readonly),
    ("return", flow::return_),
    ("set", vars::set),
    ("shift", vars::shift),
    ("shopt", shopt::shopt),
    ("source", flow::source),
    ("test", test),
    ("trap", flow::trap),
    ("true", true_),
    ("type", introspect::type_),
    ("typeset", declare::declare),
    ("umask", flow::umask),
    ("unalias", alias::unalias),
    ("unset", vars::unset),
    ("wait", jobs::wait),
];

/// Words the grammar reserves; `type` and `command -v` know them.
pub(crate) const KEYWORDS: &[&str] = &[
    "!", "[[", "]]", "case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for",
    "function", "if", "in", "select", "then", "time", "until", "while", "{", "}",
];

/// Every builtin's name, sorted.
pub(crate) fn builtin_names() -> Vec<String> {
    BUILTINS.iter().map(|(n, _)| n.to_string()).collect()
}

pub(crate) fn lookup(name: &str) -> Option<BuiltinFn> {
    BUILTINS
        .binary_search_by(|(n, _)| n.cmp(&name))
        .ok()
        .and_then(|i| BUILTINS.get(i))
        .map(|(_, f)| *f)
}

/// `builtin NAME [ARGS...]`: runs the builtin NAME, never a function or
/// program of that name.
fn builtin(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let Some(name) = argv.get(1) else {
        return Ok(0);
    };
    match lookup(name) {
        Some(run) => run(shell, io, argv.get(1..).unwrap_or_default()),
        None => {
            shell.report(io, &format!("builtin: {name}: not a shell builtin"));
            Ok(1)
        }
    }
}

/// Runs utility code as a builtin: same behaviour, bash's error prefix.
fn as_builtin(util: UtilityFn, shell: &mut Shell, io: &Io, argv: &[String]) -> i32 {
    let env = shell.child_env();
    let name = argv.first().cloned().unwrap_or_default();
    let mut process = Process::new(&name, &shell.cwd, &env, &shell.host, io, shell.depth);
    process.prefix = format!("{}: {name}", shell.prefix());
    util(&mut process, argv)
}

fn echo(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    Ok(as_builtin(programs::echo::echo, shell, io, argv))
}

fn pwd(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    Ok(as_builtin(programs::ident::pwd, shell, io, argv))
}

fn true_(_shell: &mut Shell, _io: &Io, _argv: &[String]) -> Result<i32, Unwind> {
    Ok(0)
}

fn false_(_shell: &mut Shell, _io: &Io, _argv: &[String]) -> Result<i32, Unwind> {
    Ok(1)
}

fn test(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    Ok(test_args(
        shell,
        io,
        "test",
        argv.get(1..).unwrap_or_default(),
    ))
}

fn bracket(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    match argv.get(1..).unwrap_or_default().split_last() {
        Some((last, inner)) if last == "]" => Ok(test_args(shell, io, "[", inner)),
        _ => {
            shell.report(io, "[: missing `]'");
            Ok(2)
        }
    }
}

/// `test` and `[` as builtins: they see the shell's variables (`-v`,
/// `-R`) and options (`-o`).
fn test_args(shell: &Shell, io: &Io, name: &str, args: &[String]) -> i32 {
    match shell.with_test_context(|ctx| programs::test::evaluate(args, ctx)) {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(msg) => {
            shell.report(io, &format!("{name}: {msg}"));
            2
        }
    }
}

/// `printf`, plus bash's `-v VAR` which stores the output in a variable.
fn printf(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let first = argv.get(1).map_or("", String::as_str);
    if first == "--" {
        let mut rest = vec!["printf".to_string()];
        rest.extend(argv.iter().skip(2).cloned());
        return Ok(as_builtin(programs::printf::printf, shell, io, &rest));
    }
    // `-v VAR` or `-vVAR`; any other option is an error.
    let (var, skip) = match first.strip_prefix("-v") {
        Some("") => match argv.get(2) {
            Some(var) => (var.clone(), 3),
            None => {
                shell.report(io, "printf: -v: option requires an argument");
                return Ok(2);
            }
        },
        Some(attached) => (attached.to_string(), 2),
        None if first.starts_with('-') && first.len() > 1 => {
            let bad: String = first.chars().take(2).collect();
            shell.report(io, &format!("printf: {bad}: invalid option"));
            io.err_line("printf: usage: printf [-v var] format [arguments]");
            return Ok(2);
        }
        None => return Ok(as_builtin(programs::printf::printf, shell, io, argv)),
    };
    let base = var.split_once('[').map_or(var.as_str(), |(b, _)| b);
    if !crate::interp::vars::is_name(base) || (base.len() != var.len() && !var.ends_with(']')) {
        shell.report(io, &format!("printf: `{var}': not a valid identifier"));
        return Ok(2);
    }
    let sink = crate::streams::Sink::memory();
    let capture = Io {
        stdin: io.stdin.clone(),
        stdout: sink.clone(),
        stderr: io.stderr.clone(),
        extra: io.extra.clone(),
    };
    let mut rest = vec!["printf".to_string()];
    rest.extend(argv.iter().skip(skip).cloned());
    let status = as_builtin(programs::printf::printf, shell, &capture, &rest);
    let text = String::from_utf8_lossy(&sink.borrow_mut().take()).into_owned();
    if let Err(err) = shell.vars.set(&var, text) {
        return Err(shell.fail(io, &err));
    }
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_for_lookup() {
        assert!(BUILTINS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(lookup("cd").is_some());
        assert!(lookup("ls").is_none());
    }
}
