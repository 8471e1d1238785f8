//! `type` and `command`: what a name means to the shell.

use super::KEYWORDS;
use crate::errors::Unwind;
use crate::interp::Shell;
use crate::streams::Io;

/// What a command name resolves to, in bash's lookup order.
enum Kind {
    Keyword,
    Function,
    Builtin,
    File(String),
}

fn classify(shell: &Shell, name: &str, skip_functions: bool) -> Option<Kind> {
    if KEYWORDS.contains(&name) {
        return Some(Kind::Keyword);
    }
    if !skip_functions && shell.funcs.contains_key(name) {
        return Some(Kind::Function);
    }
    if super::lookup(name).is_some() {
        return Some(Kind::Builtin);
    }
    locate(shell, name).map(Kind::File)
}

/// Where `name` is found on `PATH` (`hash name`).
pub(crate) fn path_of(shell: &Shell, name: &str) -> Option<String> {
    locate(shell, name)
}

/// Every folder of `PATH` holding the program: utilities are in
/// `/usr/bin` and `/bin` (`type -a`).
fn all_paths(shell: &Shell, name: &str) -> Vec<String> {
    if name.contains('/') {
        return locate(shell, name).into_iter().collect();
    }
    let is_utility = crate::programs::find(&shell.host, name).is_some();
    let path = shell.vars.scalar("PATH").unwrap_or_default().to_string();
    let mut found = Vec::new();
    for dir in path.split(':').filter(|d| !d.is_empty()) {
        let full = crate::interp::normalize(&shell.cwd, &format!("{dir}/{name}"));
        let home = is_utility && (dir == "/usr/bin" || dir == "/bin");
        let file = shell
            .host
            .get_mode(&full, true)
            .is_ok_and(|m| m & crate::host::S_IFMT == crate::host::S_IFREG && m & 0o111 != 0);
        let shown = format!("{dir}/{name}");
        if (home || file) && !found.contains(&shown) {
            found.push(shown);
        }
    }
    found
}

fn locate(shell: &Shell, name: &str) -> Option<String> {
    if !name.contains('/') {
        return match shell.search_path(name)? {
            crate::interp::PathHit::File(path) => Some(path),
            crate::interp::PathHit::Utility => Some(format!("/usr/bin/{name}")),
        };
    }
    let env = shell.child_env();
    let dummy = crate::streams::Io {
        stdin: crate::streams::Source::bytes(Vec::new()),
        stdout: crate::streams::Sink::null(),
        stderr: crate::streams::Sink::null(),
        extra: Default::default(),
    };
    let process =
        crate::programs::Process::new(name, &shell.cwd, &env, &shell.host, &dummy, shell.depth);
    crate::programs::which::locate(&process, name)
}

/// `type [-afptP] name...`.
pub(crate) fn type_(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let mut flags = String::new();
    let mut status = 0;
    let mut out = String::new();
    for arg in argv.iter().skip(1) {
        // Options come before the names.
        if let Some(letters) = arg.strip_prefix('-').filter(|l| !l.is_empty())
            && out.is_empty()
            && status == 0
        {
            flags.push_str(letters);
            continue;
        }
        let lines = type_lines(shell, arg, &flags);
        // `type -p` of a builtin or function prints nothing, successfully.
        let known = KEYWORDS.contains(&arg.as_str())
            || shell.funcs.contains_key(arg)
            || super::lookup(arg).is_some();
        if lines.is_empty() && !(flags.contains('p') && !flags.contains('P') && known) {
            if !flags.contains(['t', 'p', 'P']) {
                io.out(out.as_bytes());
                out.clear();
                shell.report(io, &format!("type: {arg}: not found"));
            }
            status = 1;
        }
        out.push_str(&lines);
    }
    io.out(out.as_bytes());
    Ok(status)
}

/// What `type` says about one name with the given option letters.
fn type_lines(shell: &Shell, name: &str, flags: &str) -> String {
    let all = flags.contains('a');
    let terse = flags.contains('t');
    let hashed = shell.hashed.get(name).map(|h| h.path.clone());
    if flags.contains('P') {
        if let Some(path) = hashed {
            return format!("{path}\n");
        }
        let paths = if all {
            all_paths(shell, name)
        } else {
            locate(shell, name).into_iter().collect()
        };
        return paths.iter().map(|p| format!("{p}\n")).collect();
    }
    let mut kinds = Vec::new();
    if KEYWORDS.contains(&name) {
        kinds.push(Kind::Keyword);
    }
    if !flags.contains('f') && shell.funcs.contains_key(name) {
        kinds.push(Kind::Function);
    }
    if super::lookup(name).is_some() && !shell.disabled_builtins.contains(name) {
        kinds.push(Kind::Builtin);
    }
    if all {
        kinds.extend(all_paths(shell, name).into_iter().map(Kind::File));
    } else if kinds.is_empty() {
        match hashed {
            Some(path) if !terse && !flags.contains('p') => {
                return format!("{name} is hashed ({path})\n");
            }
            Some(path) => kinds.push(Kind::File(path)),
            None => kinds.extend(locate(shell, name).map(Kind::File)),
        }
    }
    if !all {
        kinds.truncate(1);
    }
    kinds
        .iter()
        .map(|kind| describe(shell, name, kind, terse, flags.contains('p')))
        .collect()
}

fn describe(shell: &Shell, name: &str, kind: &Kind, terse: bool, path_only: bool) -> String {
    match (kind, terse, path_only) {
        (Kind::File(path), _, true) => format!("{path}\n"),
        (_, _, true) => String::new(),
        (Kind::Keyword, true, _) => "keyword\n".to_string(),
        (Kind::Function, true, _) => "function\n".to_string(),
        (Kind::Builtin, true, _) => "builtin\n".to_string(),
        (Kind::File(_), true, _) => "file\n".to_string(),
        (Kind::Keyword, false, _) => format!("{name} is a shell keyword\n"),
        (Kind::Function, false, _) => {
            let body = shell
                .funcs
                .get(name)
                .map(|f| f.def.to_string())
                .unwrap_or_default();
            format!("{name} is a function\n{body}\n")
        }
        (Kind::Builtin, false, _) => format!("{name} is a shell builtin\n"),
        (Kind::File(path), false, _) => format!("{name} is {path}\n"),
    }
}

/// `command -v NAME`, `command -V NAME`, `command NAME ARGS` (skipping
/// functions).
pub(crate) fn command(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let mut i = 1;
    let mut mode = None;
    while let Some(arg) = argv.get(i) {
        match arg.as_str() {
            "-v" => mode = Some('v'),
            "-V" => mode = Some('V'),
            "-p" => {}
            "--" => {
                i += 1;
                break;
            }
            _ => break,
        }
        i += 1;
    }
    let rest = argv.get(i..).unwrap_or_default();
    match mode {
        None => {
            if rest.is_empty() {
                return Ok(0);
            }
            match rest.first().and_then(|n| super::lookup(n)) {
                Some(builtin) => builtin(shell, io, rest),
                None => Ok(shell.run_program(rest, io)),
            }
        }
        Some(letter) => {
            // bash succeeds if any name was found.
            let mut found = false;
            let mut out = String::new();
            for name in rest {
                match classify(shell, name, false) {
                    Some(Kind::File(path)) if letter == 'v' => {
                        found = true;
                        out.push_str(&format!("{path}\n"));
                    }
                    Some(_) if letter == 'v' => {
                        found = true;
                        out.push_str(&format!("{name}\n"));
                    }
                    Some(kind) => {
                        found = true;
                        out.push_str(&describe(shell, name, &kind, false, false));
                    }
                    None => {
                        if letter == 'V' {
                            io.out(out.as_bytes());
                            out.clear();
                            shell.report(io, &format!("command: {name}: not found"));
                        }
                    }
                }
            }
            io.out(out.as_bytes());
            Ok(i32::from(!found))
        }
    }
}

/// `caller [N]`: where the current function (or the Nth one up) was
/// called from.
pub(crate) fn caller(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let n = match argv.get(1) {
        None => None,
        Some(arg) => match arg.trim().parse::<usize>() {
            Ok(n) => Some(n),
            Err(_) => {
                shell.report(io, &format!("caller: {arg}: invalid number"));
                io.err_line("caller: usage: caller [expr]");
                return Ok(2);
            }
        },
    };
    match shell.caller_text(n) {
        Some(text) => {
            io.out(format!("{text}\n").as_bytes());
            Ok(0)
        }
        None => Ok(1),
    }
}
