//! Creating and removing: `mkdir`, `rmdir`, `rm`, `touch`.

use std::fs;
use std::path::Path;

use super::Process;
use super::quoting::single_quote;
use super::timefmt;
use crate::errors::strerror;

pub(crate) fn mkdir(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let (mode, rest) = match take_mode_option(argv.get(1..).unwrap_or_default()) {
        Ok(split) => split,
        Err(()) => {
            p.error("option requires an argument -- 'm'");
            p.try_help("mkdir");
            return 1;
        }
    };
    let (flags, operands) = super::parse_flags(&rest);
    let mut parents = false;
    let mut verbose = false;
    for flag in &flags {
        match flag.as_str() {
            "p" | "--parents" => parents = true,
            "v" | "--verbose" => verbose = true,
            other => return bad_option(p, "mkdir", other),
        }
    }
    let mode = match mode
        .as_deref()
        .map(|m| (m, super::chmod::mode_for_new(m, true)))
    {
        None => None,
        Some((_, Some(bits))) => Some(bits),
        Some((text, None)) => {
            p.error(&format!("invalid mode {}", p.quote(text)));
            return 1;
        }
    };
    if operands.is_empty() {
        return missing_operand(p, "mkdir");
    }
    let mut status = 0;
    for name in &operands {
        let path = p.resolve(name);
        let result = if parents {
            create_all(&path)
        } else {
            fs::create_dir(&path)
        };
        match result {
            Ok(()) => {
                if let Some(bits) = mode {
                    let _ = p.host.set_mode(&p.host_path(name), bits);
                }
                if verbose {
                    p.out(format!("mkdir: created directory {}\n", p.quote(name)).as_bytes());
                }
            }
            Err(e) => {
                p.error(&format!(
                    "cannot create directory {}: {}",
                    p.quote(name),
                    strerror(&e)
                ));
                status = 1;
            }
        }
    }
    status
}

/// `mkdir -p`: succeeds when the folder already exists, fails on a file.
fn create_all(path: &Path) -> std::io::Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    fs::create_dir_all(path)
}

pub(crate) fn rmdir(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let (_flags, operands) = super::parse_flags(argv.get(1..).unwrap_or_default());
    if operands.is_empty() {
        return missing_operand(p, "rmdir");
    }
    let mut status = 0;
    for name in &operands {
        if let Err(e) = fs::remove_dir(p.resolve(name)) {
            p.error(&format!(
                "failed to remove {}: {}",
                single_quote(name),
                strerror(&e)
            ));
            status = 1;
        }
    }
    status
}

pub(crate) fn rm(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let (flags, operands) = super::parse_flags(argv.get(1..).unwrap_or_default());
    let (mut recursive, mut force, mut verbose, mut dirs) = (false, false, false, false);
    for flag in &flags {
        match flag.as_str() {
            "r" | "R" | "--recursive" => recursive = true,
            "f" | "--force" => force = true,
            "v" | "--verbose" => verbose = true,
            "d" | "--dir" => dirs = true,
            "i" | "I" | "--no-preserve-root" | "--preserve-root" => {}
            other => return bad_option(p, "rm", other),
        }
    }
    if operands.is_empty() {
        return if force { 0 } else { missing_operand(p, "rm") };
    }
    let mut status = 0;
    for name in &operands {
        if recursive && p.host_path(name) == "/" {
            p.error(&format!(
                "it is dangerous to operate recursively on {}",
                single_quote("/")
            ));
            p.error("use --no-preserve-root to override this failsafe");
            status = 1;
            continue;
        }
        let path = p.resolve(name);
        let meta = match fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) => {
                if !force {
                    p.error(&format!(
                        "cannot remove {}: {}",
                        single_quote(name),
                        strerror(&e)
                    ));
                    status = 1;
                }
                continue;
            }
        };
        let result = if meta.is_dir() {
            if recursive {
                fs::remove_dir_all(&path)
            } else if dirs {
                fs::remove_dir(&path)
            } else {
                p.error(&format!(
                    "cannot remove {}: Is a directory",
                    single_quote(name)
                ));
                status = 1;
                continue;
            }
        } else {
            fs::remove_file(&path)
        };
        match result {
            Ok(()) if verbose => {
                let what = if meta.is_dir() {
                    "removed directory"
                } else {
                    "removed"
                };
                p.out(format!("{what} {}\n", single_quote(name)).as_bytes());
            }
            Ok(()) => {}
            Err(e) => {
                p.error(&format!(
                    "cannot remove {}: {}",
                    single_quote(name),
                    strerror(&e)
                ));
                status = 1;
            }
        }
    }
    status
}

pub(crate) fn touch(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = argv.get(1..).unwrap_or_default();
    let now_time = std::time::SystemTime::now();
    let now = timefmt::epoch_secs(now_time);
    let now_nanos = now_time
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let at = |(secs, nanos): (i64, u32)| {
        timefmt::system_time(secs) + std::time::Duration::from_nanos(u64::from(nanos))
    };
    let mut stamp = now_time;
    let mut no_create = false;
    // `-a`/`-m`: change only the access or the modification time.
    let mut only: Option<char> = None;
    let mut operands = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        match arg.as_str() {
            "-c" | "--no-create" => no_create = true,
            "-a" => only = Some('a'),
            "-m" => only = Some('m'),
            "-d" | "--date" | "-t" => {
                let Some(value) = args.get(i) else {
                    p.error(&format!(
                        "option requires an argument -- '{}'",
                        arg.trim_start_matches('-')
                    ));
                    p.try_help("touch");
                    return 1;
                };
                i += 1;
                let parsed = if arg == "-t" {
                    timefmt::parse_stamp(value, now).map(|s| at((s, 0)))
                } else {
                    crate::programs::coreutils::datetime::parse(value, now, now_nanos).map(at)
                };
                match parsed {
                    Some(t) => stamp = t,
                    None => {
                        p.error(&format!("invalid date format {}", p.quote(value)));
                        return 1;
                    }
                }
            }
            a if a.starts_with("--date=") => {
                match crate::programs::coreutils::datetime::parse(
                    a.trim_start_matches("--date="),
                    now,
                    now_nanos,
                )
                .map(at)
                {
                    Some(t) => stamp = t,
                    None => {
                        p.error(&format!(
                            "invalid date format {}",
                            p.quote(a.trim_start_matches("--date="))
                        ));
                        return 1;
                    }
                }
            }
            "--" => operands.extend(args.iter().skip(i).cloned()),
            a if a.starts_with('-') && a.len() > 1 => {
                return bad_option(p, "touch", a.trim_start_matches('-'));
            }
            a => operands.push(a.to_string()),
        }
        if arg == "--" {
            break;
        }
    }
    if operands.is_empty() {
        p.error("missing file operand");
        p.try_help("touch");
        return 1;
    }
    let mut status = 0;
    for name in &operands {
        if let Err(e) = touch_one(&p.resolve(name), stamp, no_create, only) {
            p.error(&format!(
                "cannot touch {}: {}",
                single_quote(name),
                strerror(&e)
            ));
            status = 1;
        }
    }
    status
}

fn touch_one(
    path: &Path,
    stamp: std::time::SystemTime,
    no_create: bool,
    only: Option<char>,
) -> std::io::Result<()> {
    let exists = fs::symlink_metadata(path).is_ok();
    if !exists && no_create {
        return Ok(());
    }
    let file = if path.is_dir() {
        fs::File::open(path)?
    } else {
        fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?
    };
    // Folders may refuse new times on some hosts; creating was the point.
    let mut times = fs::FileTimes::new();
    if only != Some('m') {
        times = times.set_accessed(stamp);
    }
    if only != Some('a') {
        times = times.set_modified(stamp);
    }
    let set = file.set_times(times);
    if path.is_dir() { Ok(()) } else { set }
}

fn bad_option(p: &Process<'_>, name: &str, flag: &str) -> i32 {
    if let Some(long) = flag.strip_prefix("--") {
        p.error(&format!("unrecognized option '--{long}'"));
    } else {
        p.error(&format!("invalid option -- '{flag}'"));
    }
    p.try_help(name);
    1
}

fn missing_operand(p: &Process<'_>, name: &str) -> i32 {
    p.error("missing operand");
    p.try_help(name);
    1
}

/// Takes `-m MODE`, `-mMODE` or `--mode=MODE` out of `args` (before `--`).
fn take_mode_option(args: &[String]) -> Result<(Option<String>, Vec<String>), ()> {
    let mut mode = None;
    let mut rest = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "--" {
            rest.push(arg.clone());
            rest.extend(iter.cloned());
            break;
        }
        if arg == "-m" || arg == "--mode" {
            mode = Some(iter.next().ok_or(())?.clone());
        } else if let Some(m) = arg.strip_prefix("--mode=") {
            mode = Some(m.to_string());
        } else if let Some(m) = arg.strip_prefix("-m").filter(|m| !m.is_empty()) {
            mode = Some(m.to_string());
        } else {
            rest.push(arg.clone());
        }
    }
    Ok((mode, rest))
}
