//! The small coreutils, as they behave for the sandbox's one
//! unprivileged user (`worker`, uid 1000) without a terminal: `dd`,
//! `link`, `unlink`, `sync`, `tty`, `logname`, `groups`, `users`, `who`,
//! `arch`, `hostid`, `nice`, `nohup`, `stdbuf`, `pathchk`, and the
//! privileged ones that fail as on Linux (`chown`/`chgrp` to another
//! owner, `chroot`, `stty` without a terminal).

use super::Process;
use crate::errors::strerror;
use crate::programs::quoting::single_quote;

/// The sandbox's user and group, by name and number.
const OWN: &[&str] = &["worker", "1000"];

pub(crate) fn tty(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let silent = argv
        .iter()
        .skip(1)
        .any(|a| a == "-s" || a == "--silent" || a == "--quiet");
    if !silent {
        p.out(b"not a tty\n");
    }
    1
}

pub(crate) fn logname(p: &mut Process<'_>, _argv: &[String]) -> i32 {
    // No login session: getlogin() finds no utmp entry.
    p.error("no login name");
    1
}

pub(crate) fn groups(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let mut status = 0;
    let users = argv.get(1..).unwrap_or_default();
    if users.is_empty() {
        p.out(b"worker\n");
        return 0;
    }
    for u in users {
        if OWN.contains(&u.as_str()) {
            p.out(format!("{u} : worker\n").as_bytes());
        } else if u == "root" {
            p.out(b"root : root\n");
        } else {
            p.error(&format!("{}: no such user", p.quote(u)));
            status = 1;
        }
    }
    status
}

/// `users` and `who`: nobody is logged in.
pub(crate) fn users(_p: &mut Process<'_>, _argv: &[String]) -> i32 {
    0
}

pub(crate) fn arch(p: &mut Process<'_>, _argv: &[String]) -> i32 {
    p.out(b"x86_64\n");
    0
}

pub(crate) fn hostid(p: &mut Process<'_>, _argv: &[String]) -> i32 {
    p.out(b"007f0100\n");
    0
}

pub(crate) fn sync(_p: &mut Process<'_>, _argv: &[String]) -> i32 {
    0
}

pub(crate) fn link(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let ops = argv.get(1..).unwrap_or_default();
    match ops {
        [] => super::usage(p, "missing operand", 1),
        [a] => super::usage(p, &format!("missing operand after {}", p.quote(a)), 1),
        [a, b] => match std::fs::hard_link(p.resolve(a), p.resolve(b)) {
            Ok(()) => 0,
            Err(e) => {
                p.error(&format!(
                    "cannot create link {} to {}: {}",
                    single_quote(b),
                    single_quote(a),
                    strerror(&e)
                ));
                1
            }
        },
        [_, _, extra, ..] => super::usage(p, &format!("extra operand {}", p.quote(extra)), 1),
    }
}

pub(crate) fn unlink(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let ops = argv.get(1..).unwrap_or_default();
    match ops {
        [] => super::usage(p, "missing operand", 1),
        [a] => {
            let path = p.resolve(a);
            let result = if path.is_dir() && !path.is_symlink() {
                Err(std::io::Error::from(std::io::ErrorKind::IsADirectory))
            } else {
                std::fs::remove_file(&path)
            };
            match result {
                Ok(()) => 0,
                Err(e) => {
                    p.error(&format!(
                        "cannot unlink {}: {}",
                        single_quote(a),
                        strerror(&e)
                    ));
                    1
                }
            }
        }
        [_, extra, ..] => super::usage(p, &format!("extra operand {}", p.quote(extra)), 1),
    }
}

/// Runs `argv` as a child with the parent's streams (nice, nohup,
/// stdbuf); 127 when there is no such program.
fn run_command(p: &Process<'_>, argv: &[String]) -> i32 {
    match super::run_child(p, argv, None) {
        Some(status) => status,
        None => {
            let name = argv.first().cloned().unwrap_or_default();
            p.error(&format!(
                "failed to run command {}: No such file or directory",
                p.quote(&name)
            ));
            127
        }
    }
}

pub(crate) fn nice(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let mut i = 1;
    let mut adjustment = 10i64;
    while let Some(a) = argv.get(i) {
        if a == "-n" || a == "--adjustment" {
            adjustment = argv.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or(10);
            i += 2;
        } else if let Some(v) = a
            .strip_prefix("--adjustment=")
            .or_else(|| a.strip_prefix("-n"))
        {
            adjustment = v.parse().unwrap_or(10);
            i += 1;
        } else if a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| c.is_ascii_digit()) {
            adjustment = a[1..].parse().unwrap_or(10);
            i += 1;
        } else if a == "--" {
            i += 1;
            break;
        } else {
            break;
        }
    }
    let command = argv.get(i..).unwrap_or_default();
    if command.is_empty() {
        p.out(b"0\n");
        return 0;
    }
    if adjustment < 0 {
        // Only root may raise priority; the command still runs.
        p.error("cannot set niceness: Permission denied");
    }
    run_command(p, command)
}

pub(crate) fn nohup(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let command = argv.get(1..).unwrap_or_default();
    let command = if command.first().is_some_and(|a| a == "--") {
        &command[1..]
    } else {
        command
    };
    if command.is_empty() {
        p.error("missing operand");
        p.try_help("nohup");
        return 125;
    }
    // Output is not a terminal here, so nohup neither redirects nor says so.
    run_command(p, command)
}

pub(crate) fn stdbuf(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let mut i = 1;
    while let Some(a) = argv.get(i) {
        if matches!(a.as_str(), "-i" | "-o" | "-e") {
            i += 2;
        } else if a.starts_with('-') && a.len() > 1 && a != "--" {
            i += 1;
        } else {
            if a == "--" {
                i += 1;
            }
            break;
        }
    }
    let command = argv.get(i..).unwrap_or_default();
    if command.is_empty() {
        p.error("missing operand");
        p.try_help("stdbuf");
        return 125;
    }
    run_command(p, command)
}

/// `chown` and `chgrp`: giving a file to anyone else needs root.
fn change_owner(p: &Process<'_>, argv: &[String], group: bool) -> i32 {
    let args: Vec<&String> = argv
        .iter()
        .skip(1)
        .filter(|a| !a.starts_with('-') || a.as_str() == "-")
        .collect();
    let Some((owner, files)) = args.split_first() else {
        return super::usage(p, "missing operand", 1);
    };
    if files.is_empty() {
        return super::usage(p, &format!("missing operand after {}", p.quote(owner)), 1);
    }
    let (user, grp) = if group {
        (None, Some(owner.as_str()))
    } else {
        match owner.split_once([':', '.']) {
            Some((u, g)) => (
                Some(u).filter(|u| !u.is_empty()),
                Some(g).filter(|g| !g.is_empty()),
            ),
            None => (Some(owner.as_str()), None),
        }
    };
    let known = |n: &str| OWN.contains(&n) || n == "root" || n.chars().all(|c| c.is_ascii_digit());
    if let Some(u) = user.filter(|u| !known(u)) {
        p.error(&format!("invalid user: {}", p.quote(u)));
        return 1;
    }
    if let Some(g) = grp.filter(|g| !known(g)) {
        p.error(&format!("invalid group: {}", p.quote(g)));
        return 1;
    }
    let foreign = user.is_some_and(|u| !OWN.contains(&u)) || grp.is_some_and(|g| !OWN.contains(&g));
    let mut status = 0;
    for f in files {
        if p.resolve(f).symlink_metadata().is_err() {
            p.error(&format!(
                "cannot access {}: No such file or directory",
                single_quote(f)
            ));
            status = 1;
        } else if foreign {
            let what = if group || user.is_none() {
                "changing group of"
            } else {
                "changing ownership of"
            };
            p.error(&format!(
                "{what} {}: Operation not permitted",
                single_quote(f)
            ));
            status = 1;
        }
    }
    status
}

pub(crate) fn chown(p: &mut Process<'_>, argv: &[String]) -> i32 {
    change_owner(p, argv, false)
}

pub(crate) fn chgrp(p: &mut Process<'_>, argv: &[String]) -> i32 {
    change_owner(p, argv, true)
}

pub(crate) fn chroot(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let Some(dir) = argv.iter().skip(1).find(|a| !a.starts_with('-')) else {
        p.error("missing operand");
        p.try_help("chroot");
        return 125;
    };
    p.error(&format!(
        "cannot change root directory to {}: Operation not permitted",
        single_quote(dir)
    ));
    125
}

pub(crate) fn stty(p: &mut Process<'_>, _argv: &[String]) -> i32 {
    p.error("'standard input': Inappropriate ioctl for device");
    1
}

pub(crate) fn pathchk(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let portable = argv
        .iter()
        .skip(1)
        .any(|a| a == "-p" || a == "--portability");
    let names: Vec<&String> = argv
        .iter()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if names.is_empty() {
        return super::usage(p, "missing operand", 1);
    }
    let mut status = 0;
    for name in names {
        if portable
            && let Some(c) = name
                .chars()
                .find(|c| !(c.is_ascii_alphanumeric() || "._-/".contains(*c)))
        {
            p.error(&format!(
                "nonportable character {} in file name {}",
                p.quote(&c.to_string()),
                single_quote(name)
            ));
            status = 1;
            continue;
        }
        let limit = if portable { 14 } else { 255 };
        if let Some(long) = name.split('/').find(|c| c.len() > limit) {
            if portable {
                p.error(&format!(
                    "limit {limit} exceeded by length {} of file name component {}",
                    long.len(),
                    p.quote(long)
                ));
            } else {
                p.error(&format!("{name}: File name too long"));
            }
            status = 1;
        }
    }
    status
}

/// One `dd` operand's byte count: `N`, `NxM`, with dd's suffixes.
fn dd_number(text: &str) -> Option<u64> {
    let mut total: u64 = 1;
    for part in text.split('x') {
        let v = crate::programs::size::parse_size(part, "bcEGkKMPTwYZ0").ok()?;
        total = total.checked_mul(v)?;
    }
    Some(total)
}

/// `1.0 kB, 1000 B` as dd reports sizes of 1000 bytes and more.
fn dd_sizes(n: u64) -> String {
    if n < 1000 {
        return String::new();
    }
    let human = |base: f64, units: &[&str]| {
        let mut v = n as f64;
        let mut u = 0;
        while v >= base && u + 1 < units.len() {
            v /= base;
            u += 1;
        }
        let s = if v < 10.0 {
            format!("{v:.1}")
        } else {
            format!("{v:.0}")
        };
        format!("{s} {}", units[u])
    };
    let si = human(1000.0, &["B", "kB", "MB", "GB", "TB"]);
    let iec = human(1024.0, &["B", "KiB", "MiB", "GiB", "TiB"]);
    if n < 1024 {
        format!(" ({si}, {n} B)")
    } else {
        format!(" ({si}, {iec})")
    }
}

pub(crate) fn dd(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let (mut input, mut output) = (None::<String>, None::<String>);
    let (mut ibs, mut obs) = (512u64, 512u64);
    let (mut count, mut skip, mut seek) = (None::<u64>, 0u64, 0u64);
    let mut conv: Vec<String> = Vec::new();
    let mut status_level = "default".to_string();
    for arg in argv.iter().skip(1) {
        let Some((key, value)) = arg.split_once('=') else {
            return super::usage(p, &format!("unrecognized operand {}", p.quote(arg)), 1);
        };
        let num = |p: &Process<'_>| {
            dd_number(value).ok_or_else(|| {
                p.error(&format!("invalid number: {}", p.quote(value)));
                1
            })
        };
        let r: Result<(), i32> = (|| {
            match key {
                "if" => input = Some(value.to_string()),
                "of" => output = Some(value.to_string()),
                "bs" => {
                    let n = num(p)?;
                    ibs = n;
                    obs = n;
                }
                "ibs" => ibs = num(p)?,
                "obs" => obs = num(p)?,
                "count" => count = Some(num(p)?),
                "skip" | "iseek" => skip = num(p)?,
                "seek" | "oseek" => seek = num(p)?,
                "conv" => conv.extend(value.split(',').map(str::to_string)),
                "status" => status_level = value.to_string(),
                "iflag" | "oflag" | "cbs" => {}
                _ => {
                    return Err(super::usage(
                        p,
                        &format!("unrecognized operand {}", p.quote(arg)),
                        1,
                    ));
                }
            }
            Ok(())
        })();
        if let Err(s) = r {
            return s;
        }
    }
    if ibs == 0 || obs == 0 {
        p.error(&format!("invalid number: {}", p.quote("0")));
        return 1;
    }
    // With a count, only what is needed is read (`if=/dev/zero`).
    let needed = count.map(|c| skip.saturating_add(c).saturating_mul(ibs));
    let data = match input.as_deref() {
        None | Some("-") => p.io.stdin.borrow_mut().read_all(),
        Some(f) => match super::read_input_limited(p, f, needed) {
            Ok(d) => d,
            Err(e) => {
                p.error(&format!(
                    "failed to open {}: {}",
                    single_quote(f),
                    strerror(&e)
                ));
                return 1;
            }
        },
    };
    let ibs_u = usize::try_from(ibs).unwrap_or(usize::MAX);
    let start = usize::try_from(skip.saturating_mul(ibs))
        .unwrap_or(usize::MAX)
        .min(data.len());
    let mut rest = data.get(start..).unwrap_or_default();
    if let Some(c) = count {
        let limit = usize::try_from(c.saturating_mul(ibs)).unwrap_or(usize::MAX);
        rest = rest.get(..limit.min(rest.len())).unwrap_or_default();
    }
    let (full_in, partial_in) = (rest.len() / ibs_u, usize::from(rest.len() % ibs_u != 0));
    let mut body: Vec<u8> = Vec::with_capacity(rest.len());
    for block in rest.chunks(ibs_u) {
        body.extend_from_slice(block);
        if conv.iter().any(|c| c == "sync") && block.len() < ibs_u {
            body.resize(body.len() + ibs_u - block.len(), 0);
        }
    }
    for c in &conv {
        match c.as_str() {
            "ucase" => body.make_ascii_uppercase(),
            "lcase" => body.make_ascii_lowercase(),
            "swab" => {
                for pair in body.chunks_mut(2) {
                    if pair.len() == 2 {
                        pair.swap(0, 1);
                    }
                }
            }
            _ => {}
        }
    }
    let obs_u = usize::try_from(obs).unwrap_or(usize::MAX);
    let (full_out, partial_out) = (
        body.len() / obs_u,
        usize::from(!body.len().is_multiple_of(obs_u)),
    );
    match output.as_deref() {
        None | Some("-") => {
            super::write_all(p, &body);
        }
        Some(f) => {
            let path = p.resolve(f);
            let offset = usize::try_from(seek.saturating_mul(obs)).unwrap_or(usize::MAX);
            let mut file = std::fs::read(&path).unwrap_or_default();
            let notrunc = conv.iter().any(|c| c == "notrunc");
            if !notrunc {
                file.truncate(offset.min(file.len()));
            }
            if file.len() < offset {
                file.resize(offset, 0);
            }
            let end = offset + body.len();
            if file.len() < end {
                file.resize(end, 0);
            }
            file[offset..end].copy_from_slice(&body);
            if let Err(e) = std::fs::write(&path, &file) {
                p.error(&format!(
                    "failed to open {}: {}",
                    single_quote(f),
                    strerror(&e)
                ));
                return 1;
            }
        }
    }
    if status_level != "none" {
        let mut report =
            format!("{full_in}+{partial_in} records in\n{full_out}+{partial_out} records out\n");
        if status_level != "noxfer" {
            let n = body.len() as u64;
            let plural = if n == 1 { "byte" } else { "bytes" };
            // The sandbox has no meaningful clock for this: a nominal
            // millisecond.
            report.push_str(&format!(
                "{n} {plural}{} copied, 0.001 s, {} kB/s\n",
                dd_sizes(n),
                n
            ));
        }
        p.io.err(report.as_bytes());
    }
    0
}
