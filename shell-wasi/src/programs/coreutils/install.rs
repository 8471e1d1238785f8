//! `install [-bCDdpTv] [-m MODE] [-t DIR] [-S SUFFIX] SOURCE... DEST` and
//! `install -d DIR...`: copies files and sets their mode (0755 unless
//! `-m`), creating folders with `-d` and leading folders with `-D`, with
//! GNU coreutils 9.1's messages. Owners cannot change in the sandbox
//! (one user), so `-o`/`-g` other than the sandbox user fail as they do
//! for an unprivileged user.

use std::fs;
use std::path::{Path, PathBuf};

use super::Process;
use super::args::{HasArg, Parsed, Spec};
use crate::errors::strerror;
use crate::programs::quoting::single_quote;

const SPEC: Spec<'static> = Spec {
    short: "bcCsDdg:m:o:pt:TvS:Z",
    long: &[
        ("backup", 'B', HasArg::Optional),
        ("compare", 'C', HasArg::No),
        ("directory", 'd', HasArg::No),
        ("group", 'g', HasArg::Yes),
        ("mode", 'm', HasArg::Yes),
        ("owner", 'o', HasArg::Yes),
        ("preserve-timestamps", 'p', HasArg::No),
        ("strip", 's', HasArg::No),
        ("strip-program", 'P', HasArg::Yes),
        ("suffix", 'S', HasArg::Yes),
        ("target-directory", 't', HasArg::Yes),
        ("no-target-directory", 'T', HasArg::No),
        ("verbose", 'v', HasArg::No),
        ("preserve-context", 'X', HasArg::No),
        ("context", 'Z', HasArg::Optional),
    ],
};

/// The one user and group of the sandbox.
const USERS: &[&str] = &["worker", "1000"];

/// How an existing destination is kept (`--backup`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Backup {
    None,
    Simple,
    Numbered,
    Existing,
}

struct Install<'p, 'a> {
    p: &'p Process<'a>,
    mode: u32,
    verbose: bool,
    compare: bool,
    preserve: bool,
    backup: Backup,
    suffix: String,
    /// `-o`/`-g` name someone else: only root may give files away.
    foreign_owner: bool,
    out: Vec<u8>,
}

impl Install<'_, '_> {
    fn set_mode(&self, name: &str, mode: u32) -> Result<(), i32> {
        self.p
            .host
            .set_mode(&self.p.host_path(name), mode)
            .map_err(|e| {
                self.p.error(&format!(
                    "cannot change permissions of {}: {}",
                    self.p.quote(name),
                    e.message()
                ));
                1
            })
    }

    /// `mkdir -p` that says what it creates with `-v`.
    fn make_dirs(&mut self, name: &str, last_mode: Option<u32>) -> Result<(), i32> {
        let path = self.p.resolve(name);
        let mut missing = Vec::new();
        let mut cur: Option<&Path> = Some(&path);
        while let Some(c) = cur {
            if c.as_os_str().is_empty() || c.exists() {
                break;
            }
            missing.push(c.to_path_buf());
            cur = c.parent();
        }
        if missing.is_empty() {
            if path.is_dir() {
                if let Some(mode) = last_mode {
                    self.set_mode(name, mode)?;
                }
                return Ok(());
            }
            self.p.error(&format!(
                "cannot create directory {}: File exists",
                self.p.quote(name)
            ));
            return Err(1);
        }
        let total = missing.len();
        for (i, dir) in missing.iter().rev().enumerate() {
            let shown = shown_name(name, &path, dir);
            if let Err(e) = fs::create_dir(dir) {
                self.p.error(&format!(
                    "cannot create directory {}: {}",
                    self.p.quote(&shown),
                    strerror(&e)
                ));
                return Err(1);
            }
            if self.verbose {
                self.out.extend(
                    format!("install: creating directory {}\n", single_quote(&shown)).bytes(),
                );
            }
            if i + 1 == total
                && let Some(mode) = last_mode
            {
                self.set_mode(&shown, mode)?;
            }
        }
        Ok(())
    }

    fn backup_name(&self, dest: &Path) -> Option<PathBuf> {
        let name = dest.to_string_lossy().into_owned();
        let numbered = |n: u32| PathBuf::from(format!("{name}.~{n}~"));
        let highest = (1..).take_while(|&n| numbered(n).exists()).last();
        match self.backup {
            Backup::None => None,
            Backup::Simple => Some(PathBuf::from(format!("{name}{}", self.suffix))),
            Backup::Numbered => Some(numbered(highest.map_or(1, |n| n + 1))),
            Backup::Existing => Some(match highest {
                Some(n) => numbered(n + 1),
                None => PathBuf::from(format!("{name}{}", self.suffix)),
            }),
        }
    }

    /// Copies one file to `dest_name`.
    fn copy(&mut self, src: &str, dest_name: &str) -> Result<(), i32> {
        let p = self.p;
        let src_path = p.resolve(src);
        let dest = p.resolve(dest_name);
        let meta = fs::metadata(&src_path).map_err(|e| {
            p.error(&format!(
                "cannot stat {}: {}",
                single_quote(src),
                strerror(&e)
            ));
            1
        })?;
        if meta.is_dir() {
            p.error(&format!("omitting directory {}", single_quote(src)));
            return Err(1);
        }
        if let (Ok(a), Ok(b)) = (fs::canonicalize(&src_path), fs::canonicalize(&dest))
            && a == b
        {
            p.error(&format!(
                "{} and {} are the same file",
                single_quote(src),
                single_quote(dest_name)
            ));
            return Err(1);
        }
        if dest.is_dir() {
            p.error(&format!(
                "cannot overwrite directory {} with non-directory",
                single_quote(dest_name)
            ));
            return Err(1);
        }
        let data = fs::read(&src_path).map_err(|e| {
            p.error(&format!(
                "cannot open {} for reading: {}",
                single_quote(src),
                strerror(&e)
            ));
            1
        })?;
        if self.compare
            && fs::read(&dest).is_ok_and(|old| old == data)
            && p.host
                .get_mode(&p.host_path(dest_name), true)
                .ok()
                .map(|m| m & 0o7777)
                == Some(self.mode)
        {
            return Ok(());
        }
        let mut backed_up = None;
        if dest.exists()
            && let Some(backup) = self.backup_name(&dest)
        {
            fs::rename(&dest, &backup).map_err(|e| {
                p.error(&format!(
                    "cannot backup {}: {}",
                    single_quote(dest_name),
                    strerror(&e)
                ));
                1
            })?;
            backed_up = Some(backup);
        }
        let _ = fs::remove_file(&dest);
        fs::write(&dest, &data).map_err(|e| {
            p.error(&format!(
                "cannot create regular file {}: {}",
                single_quote(dest_name),
                strerror(&e)
            ));
            1
        })?;
        if self.preserve
            && let Ok(mtime) = meta.modified()
            && let Ok(f) = fs::File::options().write(true).open(&dest)
        {
            let times = fs::FileTimes::new()
                .set_modified(mtime)
                .set_accessed(meta.accessed().unwrap_or(mtime));
            let _ = f.set_times(times);
        }
        if self.foreign_owner {
            p.error(&format!(
                "cannot change ownership of {}: Operation not permitted",
                single_quote(dest_name)
            ));
            return Err(1);
        }
        self.set_mode(dest_name, self.mode)?;
        if self.verbose {
            let mut line = format!("{} -> {}", single_quote(src), single_quote(dest_name));
            if let Some(b) = backed_up {
                let b = b.to_string_lossy();
                let shown = b.rsplit('/').next().unwrap_or(&b).to_string();
                let base = Path::new(dest_name)
                    .parent()
                    .map(|d| d.to_string_lossy().into_owned());
                let shown = match base {
                    Some(d) if !d.is_empty() => format!("{d}/{shown}"),
                    _ => shown,
                };
                line.push_str(&format!(" (backup: {})", single_quote(&shown)));
            }
            line.push('\n');
            self.out.extend(line.bytes());
        }
        Ok(())
    }
}

/// `dir` as the user wrote it: the operand's own spelling for the part
/// it covers.
fn shown_name(operand: &str, full: &Path, dir: &Path) -> String {
    let full_s = full.to_string_lossy();
    let dir_s = dir.to_string_lossy();
    let cut = full_s.len().saturating_sub(dir_s.len());
    let trimmed = operand.trim_end_matches('/');
    trimmed
        .get(..trimmed.len().saturating_sub(cut))
        .unwrap_or(trimmed)
        .to_string()
}

fn settings<'p, 'a>(p: &'p Process<'a>, args: &Parsed) -> Result<Install<'p, 'a>, i32> {
    let mode = match args.value('m') {
        None => 0o755,
        Some(m) => crate::programs::chmod::absolute_mode(m, args.has('d')).ok_or_else(|| {
            p.error(&format!("invalid mode {}", p.quote(m)));
            1
        })?,
    };
    let mut foreign_owner = false;
    for (key, what) in [('o', "user"), ('g', "group")] {
        match args.value(key) {
            Some(v) if USERS.contains(&v) => {}
            Some(v) if v == "root" || v.chars().all(|c| c.is_ascii_digit()) => foreign_owner = true,
            Some(v) => {
                p.error(&format!("invalid {what} {}", p.quote(v)));
                return Err(1);
            }
            None => {}
        }
    }
    let backup = match args
        .opts
        .iter()
        .rev()
        .find(|o| o.key == 'B' || o.key == 'b')
    {
        None => Backup::None,
        Some(o) if o.key == 'b' => Backup::Simple,
        Some(o) => match o.value.as_deref() {
            None => Backup::Existing,
            Some(v) => {
                let choices = [
                    "none", "off", "simple", "never", "existing", "nil", "numbered", "t",
                ];
                let i = super::argmatch_synonyms(
                    p,
                    "backup type",
                    v,
                    &choices,
                    &[0, 0, 1, 1, 2, 2, 3, 3],
                )?;
                [
                    Backup::None,
                    Backup::Simple,
                    Backup::Existing,
                    Backup::Numbered,
                ][i]
            }
        },
    };
    let suffix = args
        .value('S')
        .map(str::to_string)
        .or_else(|| p.var("SIMPLE_BACKUP_SUFFIX").map(str::to_string))
        .unwrap_or_else(|| "~".to_string());
    Ok(Install {
        p,
        mode,
        verbose: args.has('v'),
        compare: args.has('C'),
        preserve: args.has('p'),
        backup,
        suffix,
        foreign_owner,
        out: Vec::new(),
    })
}

pub(crate) fn install(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = match super::parse_args(p, &SPEC, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let mut inst = match settings(p, &args) {
        Ok(i) => i,
        Err(status) => return status,
    };
    let status = match run(&mut inst, &args) {
        Ok(()) => 0,
        Err(status) => status,
    };
    let out = std::mem::take(&mut inst.out);
    super::write_all(p, &out);
    status
}

fn run(inst: &mut Install<'_, '_>, args: &Parsed) -> Result<(), i32> {
    let p = inst.p;
    let ops = &args.operands;
    if args.has('d') {
        if ops.is_empty() {
            return Err(super::usage(p, "missing file operand", 1));
        }
        let mut status = Ok(());
        for dir in ops {
            if let Err(s) = inst.make_dirs(dir, Some(inst.mode)) {
                status = Err(s);
            }
        }
        return status;
    }
    if args.has('s') {
        p.error("cannot run 'strip': No such file or directory");
        return Err(1);
    }
    let target = args.value('t').map(str::to_string);
    let no_target = args.has('T');
    if target.is_some() && no_target {
        return Err(super::usage(
            p,
            "cannot combine --target-directory (-t) and --no-target-directory (-T)",
            1,
        ));
    }
    let (sources, dest_dir, dest_file): (Vec<String>, Option<String>, Option<String>) =
        match &target {
            Some(t) => {
                if ops.is_empty() {
                    return Err(super::usage(p, "missing file operand", 1));
                }
                (ops.clone(), Some(t.clone()), None)
            }
            None => match ops.as_slice() {
                [] => return Err(super::usage(p, "missing file operand", 1)),
                [only] => {
                    let msg = format!(
                        "missing destination file operand after {}",
                        single_quote(only)
                    );
                    return Err(super::usage(p, &msg, 1));
                }
                [src, dest] if no_target || !p.resolve(dest).is_dir() || args.has('D') => {
                    if no_target && p.resolve(dest).is_dir() && !p.resolve(src).is_dir() {
                        p.error(&format!(
                            "cannot overwrite directory {} with non-directory",
                            single_quote(dest)
                        ));
                        return Err(1);
                    }
                    (vec![src.clone()], None, Some(dest.clone()))
                }
                [.., last] => {
                    if no_target {
                        let extra = ops.get(2).cloned().unwrap_or_default();
                        return Err(super::usage(
                            p,
                            &format!("extra operand {}", single_quote(&extra)),
                            1,
                        ));
                    }
                    let srcs = ops[..ops.len() - 1].to_vec();
                    (srcs, Some(last.clone()), None)
                }
            },
        };
    if let Some(file) = dest_file {
        if args.has('D')
            && let Some(parent) = Path::new(&file).parent()
            && !parent.as_os_str().is_empty()
        {
            inst.make_dirs(&parent.to_string_lossy(), None)?;
        }
        return inst.copy(&sources[0], &file);
    }
    let dir = dest_dir.unwrap_or_default();
    if args.has('D') && target.is_some() {
        inst.make_dirs(&dir, None)?;
    }
    if !p.resolve(&dir).is_dir() {
        let what = if target.is_some() {
            format!("failed to access {}", single_quote(&dir))
        } else {
            format!("target {}", single_quote(&dir))
        };
        let reason = if p.resolve(&dir).exists() {
            "Not a directory"
        } else {
            "No such file or directory"
        };
        p.error(&format!("{what}: {reason}"));
        return Err(1);
    }
    let mut status = Ok(());
    for src in &sources {
        let base = src.trim_end_matches('/').rsplit('/').next().unwrap_or(src);
        let dest = format!("{}/{base}", dir.trim_end_matches('/'));
        let dest = if dir.ends_with('/') {
            format!("{dir}{base}")
        } else {
            dest
        };
        if let Err(s) = inst.copy(src, &dest) {
            status = Err(s);
        }
    }
    status
}
