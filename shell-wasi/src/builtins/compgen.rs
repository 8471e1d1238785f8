//! `compgen`: the completions programmable completion would offer for a
//! word — names of commands, files, variables, ... and word lists —
//! filtered (`-X`), decorated (`-P`, `-S`) and printed one a line.

use crate::errors::Unwind;
use crate::interp::Shell;
use crate::interp::vars::Value;
use crate::streams::Io;

/// What to complete, from the options.
#[derive(Default)]
struct Spec {
    actions: Vec<String>,
    words: Option<String>,
    glob: Option<String>,
    function: Option<String>,
    prefix: String,
    suffix: String,
    filter: Option<String>,
    options: Vec<String>,
}

/// `-a` and friends: shorthands for `-A NAME`.
fn action_letter(c: char) -> Option<&'static str> {
    Some(match c {
        'a' => "alias",
        'b' => "builtin",
        'c' => "command",
        'd' => "directory",
        'e' => "export",
        'f' => "file",
        'g' => "group",
        'j' => "job",
        'k' => "keyword",
        's' => "service",
        'u' => "user",
        'v' => "variable",
        _ => return None,
    })
}

/// Parses the options; `Err` is the message for a bad one.
fn parse(argv: &[String]) -> Result<(Spec, String), String> {
    let mut spec = Spec::default();
    let mut i = 1;
    while let Some(arg) = argv.get(i) {
        if arg == "--" {
            i += 1;
            break;
        }
        if !arg.starts_with('-') || arg.len() < 2 {
            break;
        }
        let mut letters = arg.chars().skip(1);
        while let Some(c) = letters.next() {
            if let Some(action) = action_letter(c) {
                spec.actions.push(action.to_string());
                continue;
            }
            let rest: String = letters.by_ref().collect();
            let value = if rest.is_empty() {
                i += 1;
                argv.get(i)
                    .cloned()
                    .ok_or_else(|| format!("-{c}: option requires an argument"))?
            } else {
                rest
            };
            match c {
                'A' => spec.actions.push(value),
                'W' => spec.words = Some(value),
                'G' => spec.glob = Some(value),
                'F' | 'C' => spec.function = Some(value),
                'P' => spec.prefix = value,
                'S' => spec.suffix = value,
                'X' => spec.filter = Some(value),
                'o' => spec.options.push(value),
                _ => return Err(format!("-{c}: invalid option")),
            }
        }
        i += 1;
    }
    let word = argv.get(i).cloned().unwrap_or_default();
    Ok((spec, word))
}

pub(crate) fn compgen(shell: &mut Shell, io: &Io, argv: &[String]) -> Result<i32, Unwind> {
    let (spec, word) = match parse(argv) {
        Ok(parsed) => parsed,
        Err(msg) => {
            shell.report(io, &format!("compgen: {msg}"));
            io.err_line("compgen: usage: compgen [-abcdefgjksuv] [-o option] [-A action] [-G globpat] [-W wordlist] [-F function] [-C command] [-X filterpat] [-P prefix] [-S suffix] [word]");
            return Ok(2);
        }
    };
    let mut found = Vec::new();
    for action in &spec.actions {
        found.extend(action_candidates(shell, action, &word));
    }
    if let Some(glob) = &spec.glob {
        found.extend(crate::interp::expand_glob(shell, glob));
    }
    if let Some(words) = &spec.words {
        let list = match shell.split_word_list(words, io) {
            Ok(list) => list,
            Err(err) => return Err(shell.fail(io, &err)),
        };
        found.extend(list.into_iter().filter(|w| w.starts_with(word.as_str())));
    }
    if let Some(function) = &spec.function {
        found.extend(call_completer(shell, io, function, &word)?);
    }
    if let Some(filter) = &spec.filter {
        found.retain(|c| !filtered_out(filter, &word, c));
    }
    let has = |o: &str| spec.options.iter().any(|x| x == o);
    if found.is_empty() && has("default") {
        found = files(shell, &word, false);
    } else if found.is_empty() && has("dirnames") {
        found = files(shell, &word, true);
    }
    let mut lines: Vec<String> = found
        .into_iter()
        .map(|c| format!("{}{c}{}", spec.prefix, spec.suffix))
        .collect();
    if has("plusdirs") {
        lines.extend(files(shell, &word, true));
    }
    if lines.is_empty() {
        return Ok(1);
    }
    let mut out = lines.join("\n");
    out.push('\n');
    io.out(out.as_bytes());
    Ok(0)
}

/// `-X pattern`: `&` stands for the word, a leading `!` inverts.
fn filtered_out(filter: &str, word: &str, candidate: &str) -> bool {
    // A leading `!` inverts, unless it starts an extglob `!(...)`.
    let (negate, pattern) = match filter.strip_prefix('!') {
        Some(rest) if !filter.starts_with("!(") => (true, rest),
        _ => (false, filter),
    };
    let mut expanded = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    if next != '&' {
                        expanded.push('\\');
                    }
                    expanded.push(next);
                }
            }
            '&' => crate::interp::escape_glob(word, &mut expanded),
            c => expanded.push(c),
        }
    }
    crate::interp::pattern_matches(&expanded, candidate) != negate
}

/// The names one `-A` action offers for `word`.
fn action_candidates(shell: &Shell, action: &str, word: &str) -> Vec<String> {
    let names: Vec<String> = match action {
        "alias" => shell.aliases.keys().cloned().collect(),
        "builtin" | "enabled" | "helptopic" => super::builtin_names(),
        "keyword" => super::KEYWORDS.iter().map(|s| s.to_string()).collect(),
        "function" => sorted(shell.funcs.keys().cloned().collect()),
        "variable" => shell.vars.names(),
        "export" => shell
            .vars
            .names()
            .into_iter()
            .filter(|n| shell.vars.get_raw(n).is_some_and(|v| v.exported))
            .collect(),
        "arrayvar" => shell
            .vars
            .names()
            .into_iter()
            .filter(|n| {
                matches!(
                    shell.vars.value(n),
                    Some(Value::Indexed(_) | Value::Assoc(_))
                )
            })
            .collect(),
        "setopt" => super::vars::option_names()
            .iter()
            .map(|s| s.to_string())
            .collect(),
        "shopt" => super::shopt::NAMES.iter().map(|s| s.to_string()).collect(),
        "user" => vec![crate::programs::ident::USER.to_string()],
        "file" => return files(shell, word, false),
        "directory" => return files(shell, word, true),
        "command" => return commands(shell, word),
        _ => Vec::new(),
    };
    names.into_iter().filter(|n| n.starts_with(word)).collect()
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

/// Builtins, keywords, functions, aliases and programs on `PATH`.
fn commands(shell: &Shell, word: &str) -> Vec<String> {
    let mut names = super::builtin_names();
    names.extend(super::KEYWORDS.iter().map(|s| s.to_string()));
    names.extend(shell.funcs.keys().cloned());
    names.extend(shell.aliases.keys().cloned());
    let path = shell.vars.scalar("PATH").unwrap_or_default().to_string();
    for dir in path.split(':').filter(|d| !d.is_empty()) {
        let Ok(entries) = std::fs::read_dir(shell.resolve(dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let full = crate::interp::normalize(&shell.cwd, &format!("{dir}/{name}"));
            let executable = shell
                .host
                .get_mode(&full, true)
                .is_ok_and(|m| m & crate::host::S_IFMT != crate::host::S_IFDIR && m & 0o111 != 0);
            if executable {
                names.push(name);
            }
        }
    }
    names.retain(|n| n.starts_with(word));
    names.sort();
    names.dedup();
    names
}

/// File (or folder) names completing `word`, which may name a folder
/// (`dir/pre`, `~/pre`); they keep the word's folder part as written.
fn files(shell: &Shell, word: &str, dirs_only: bool) -> Vec<String> {
    let (dir, name) = match word.rfind('/') {
        Some(i) => word.split_at(i + 1),
        None => ("", word),
    };
    let on_disk = match dir.strip_prefix("~/") {
        Some(rest) => format!("{}/{rest}", shell.vars.scalar("HOME").unwrap_or_default()),
        None if dir.is_empty() => ".".to_string(),
        None => dir.to_string(),
    };
    let Ok(entries) = std::fs::read_dir(shell.resolve(&on_disk)) else {
        return Vec::new();
    };
    let mut out: Vec<String> = entries
        .flatten()
        .filter(|e| !dirs_only || e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(name))
        .map(|n| format!("{dir}{n}"))
        .collect();
    out.sort();
    out
}

/// `-F function`: runs it as completion would, then reads `COMPREPLY`.
fn call_completer(
    shell: &mut Shell,
    io: &Io,
    function: &str,
    word: &str,
) -> Result<Vec<String>, Unwind> {
    shell.report(io, "compgen: warning: -F option may not work as you expect");
    for (name, value) in [("COMP_KEY", "0"), ("COMP_TYPE", "0")] {
        let _ = shell.vars.set(name, value.to_string());
    }
    let argv = vec![function.to_string(), String::new(), word.to_string()];
    shell.dispatch(&argv, io)?;
    Ok(shell
        .vars
        .value("COMPREPLY")
        .map(Value::elements)
        .unwrap_or_default())
}
