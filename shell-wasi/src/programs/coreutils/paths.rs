//! Path names: `basename` (`-a -s -z`), `dirname`, `realpath`
//! (`-e -m -s --relative-to`) and `readlink` (`-f -e -m -n`). Links are
//! resolved by hand with `read_link`: WASI has no realpath(3).

use std::path::Path;

use super::Process;
use super::args::{HasArg, Spec};
use crate::errors::strerror;

/// Most links followed while resolving one path (Linux's limit).
const MAX_LINKS: usize = 40;

pub(crate) fn basename(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "as:z",
        long: &[
            ("multiple", 'a', HasArg::No),
            ("suffix", 's', HasArg::Yes),
            ("zero", 'z', HasArg::No),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let ops = &args.operands;
    if ops.is_empty() {
        return super::usage(p, "missing operand", 1);
    }
    let end = if args.has('z') { "\0" } else { "\n" };
    let multiple = args.has('a') || args.has('s');
    let (names, suffix): (Vec<&String>, Option<&str>) = if multiple {
        (ops.iter().collect(), args.value('s'))
    } else {
        if ops.len() > 2 {
            let extra = ops.get(2).cloned().unwrap_or_default();
            return super::usage(p, &format!("extra operand {}", p.quote(&extra)), 1);
        }
        (ops.iter().take(1).collect(), ops.get(1).map(String::as_str))
    };
    let mut out = String::new();
    for name in names {
        let mut base = base_name(name);
        if let Some(s) = suffix
            && base.len() > s.len()
            && base.ends_with(s)
        {
            base.truncate(base.len() - s.len());
        }
        out.push_str(&base);
        out.push_str(end);
    }
    p.out(out.as_bytes());
    0
}

/// The last component, as POSIX basename(1) computes it.
pub(crate) fn base_name(name: &str) -> String {
    let trimmed = name.trim_end_matches('/');
    if trimmed.is_empty() {
        return if name.is_empty() {
            String::new()
        } else {
            "/".to_string()
        };
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
}

/// Everything before the last component.
pub(crate) fn dir_name(name: &str) -> String {
    let trimmed = name.trim_end_matches('/');
    if trimmed.is_empty() {
        return if name.starts_with('/') { "/" } else { "." }.to_string();
    }
    match trimmed.rfind('/') {
        None => ".".to_string(),
        Some(i) => {
            let dir = trimmed.get(..i).unwrap_or("").trim_end_matches('/');
            if dir.is_empty() { "/" } else { dir }.to_string()
        }
    }
}

pub(crate) fn dirname(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "z",
        long: &[("zero", 'z', HasArg::No)],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    if args.operands.is_empty() {
        return super::usage(p, "missing operand", 1);
    }
    let end = if args.has('z') { "\0" } else { "\n" };
    let out: String = args
        .operands
        .iter()
        .map(|n| format!("{}{end}", dir_name(n)))
        .collect();
    p.out(out.as_bytes());
    0
}

/// How much of a path must exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Existence {
    /// `-e`: every component.
    All,
    /// The default: all but the last.
    AllButLast,
    /// `-m`: none.
    None,
}

/// The canonical absolute form of `path` (relative to `cwd`), following
/// links. Errors carry the strerror text.
pub(crate) fn canonicalize(cwd: &str, path: &str, need: Existence) -> Result<String, &'static str> {
    let mut pending: Vec<String> = Vec::new();
    let start = if path.starts_with('/') { "" } else { cwd };
    push_components(&mut pending, path);
    let mut resolved: Vec<String> = start
        .split('/')
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect();
    let mut links = 0;
    while let Some(comp) = pending.pop() {
        match comp.as_str() {
            "." => continue,
            ".." => {
                resolved.pop();
                continue;
            }
            _ => {}
        }
        let candidate = format!("/{}", {
            let mut v = resolved.clone();
            v.push(comp.clone());
            v.join("/")
        });
        let is_last = pending.iter().all(|c| c == ".");
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return Err("Too many levels of symbolic links");
                }
                let target = std::fs::read_link(&candidate)
                    .map_err(|e| strerror(&e))?
                    .to_string_lossy()
                    .into_owned();
                if target.starts_with('/') {
                    resolved.clear();
                }
                push_components(&mut pending, &target);
            }
            Ok(meta) => {
                if !is_last && !meta.is_dir() && need != Existence::None {
                    return Err("Not a directory");
                }
                resolved.push(comp);
            }
            Err(e) => {
                let missing_ok = match need {
                    Existence::None => true,
                    Existence::AllButLast => is_last,
                    Existence::All => false,
                };
                if !missing_ok {
                    return Err(strerror(&e));
                }
                resolved.push(comp);
            }
        }
    }
    Ok(format!("/{}", resolved.join("/")))
}

/// Pushes `path`'s components so that the first is popped first.
fn push_components(stack: &mut Vec<String>, path: &str) {
    for comp in path.split('/').filter(|c| !c.is_empty()).rev() {
        stack.push(comp.to_string());
    }
}

/// `target` relative to the folder `base` (both absolute, canonical).
fn relative_to(target: &str, base: &str) -> String {
    let t: Vec<&str> = target.split('/').filter(|c| !c.is_empty()).collect();
    let b: Vec<&str> = base.split('/').filter(|c| !c.is_empty()).collect();
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<&str> = vec![".."; b.len() - common];
    parts.extend(t.iter().skip(common));
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

pub(crate) fn realpath(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "emsLPqz",
        long: &[
            ("canonicalize-existing", 'e', HasArg::No),
            ("canonicalize-missing", 'm', HasArg::No),
            ("strip", 's', HasArg::No),
            ("no-symlinks", 's', HasArg::No),
            ("logical", 'L', HasArg::No),
            ("physical", 'P', HasArg::No),
            ("quiet", 'q', HasArg::No),
            ("zero", 'z', HasArg::No),
            ("relative-to", 'R', HasArg::Yes),
            ("relative-base", 'B', HasArg::Yes),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    if args.operands.is_empty() {
        return super::usage(p, "missing operand", 1);
    }
    let need = if args.has('e') {
        Existence::All
    } else if args.has('m') {
        Existence::None
    } else {
        Existence::AllButLast
    };
    let end = if args.has('z') { "\0" } else { "\n" };
    let base = match args.value('R') {
        Some(r) => match canonicalize(p.cwd, r, need) {
            Ok(b) => Some(b),
            Err(msg) => {
                p.error(&format!("{r}: {msg}"));
                return 1;
            }
        },
        None => None,
    };
    let mut status = 0;
    let mut out = String::new();
    for name in &args.operands {
        let result = if args.has('s') {
            Ok(p.host_path(name)).and_then(|path| {
                if need != Existence::None && !Path::new(&dir_name(&path)).exists() {
                    Err("No such file or directory")
                } else {
                    Ok(path)
                }
            })
        } else {
            canonicalize(p.cwd, name, need)
        };
        match result {
            Ok(path) => {
                let shown = match &base {
                    Some(b) => relative_to(&path, b),
                    None => path,
                };
                out.push_str(&shown);
                out.push_str(end);
            }
            Err(msg) => {
                if !args.has('q') {
                    p.out(out.as_bytes());
                    out.clear();
                    p.error(&format!("{name}: {msg}"));
                }
                status = 1;
            }
        }
    }
    p.out(out.as_bytes());
    status
}

pub(crate) fn readlink(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "femnqsvz",
        long: &[
            ("canonicalize", 'f', HasArg::No),
            ("canonicalize-existing", 'e', HasArg::No),
            ("canonicalize-missing", 'm', HasArg::No),
            ("no-newline", 'n', HasArg::No),
            ("quiet", 'q', HasArg::No),
            ("silent", 's', HasArg::No),
            ("verbose", 'v', HasArg::No),
            ("zero", 'z', HasArg::No),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    if args.operands.is_empty() {
        return super::usage(p, "missing operand", 1);
    }
    let mode = args
        .opts
        .iter()
        .rev()
        .find(|o| matches!(o.key, 'f' | 'e' | 'm'))
        .map(|o| o.key);
    let end = if args.has('z') {
        "\0"
    } else if args.has('n') && args.operands.len() == 1 {
        ""
    } else {
        "\n"
    };
    let verbose = args.has('v');
    let mut status = 0;
    let mut out = String::new();
    for name in &args.operands {
        let result = match mode {
            Some('f') => canonicalize(p.cwd, name, Existence::AllButLast),
            Some('e') => canonicalize(p.cwd, name, Existence::All),
            Some(_) => canonicalize(p.cwd, name, Existence::None),
            None => std::fs::read_link(p.resolve(name))
                .map(|t| t.to_string_lossy().into_owned())
                .map_err(|e| {
                    if e.kind() == std::io::ErrorKind::InvalidInput {
                        "Invalid argument"
                    } else {
                        strerror(&e)
                    }
                }),
        };
        match result {
            Ok(text) => {
                out.push_str(&text);
                out.push_str(end);
            }
            Err(msg) => {
                if verbose {
                    p.error(&format!("{name}: {msg}"));
                }
                status = 1;
            }
        }
    }
    p.out(out.as_bytes());
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_like_posix() {
        assert_eq!(base_name("/a/b/"), "b");
        assert_eq!(base_name("/"), "/");
        assert_eq!(dir_name("/a/b"), "/a");
        assert_eq!(dir_name("a"), ".");
        assert_eq!(dir_name("/a"), "/");
        assert_eq!(dir_name("a//b//"), "a");
        assert_eq!(relative_to("/tmp/cu/a", "/tmp"), "cu/a");
        assert_eq!(relative_to("/a", "/b/c"), "../../a");
    }

    #[test]
    fn canonicalizes_missing_paths() {
        assert_eq!(
            canonicalize("/", "/definitely/not/here/../x", Existence::None),
            Ok("/definitely/not/x".to_string())
        );
        assert!(canonicalize("/", "/definitely/not/here", Existence::AllButLast).is_err());
    }
}
