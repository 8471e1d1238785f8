//! Moving files around: `cp` (`-r -a -p -f -n -v -t -T`), `mv`
//! (`-f -n -v -t -T`), `ln` (`-s -f -n -v -r`) and `mktemp`
//! (`-d -p -t -u`, templates). Permission bits live in the host, not in
//! WASI, so new files get their source's mode through `Host::set_mode`.

use std::fs;
use std::path::{Path, PathBuf};

use super::Process;
use super::args::{HasArg, Parsed, Spec};
use crate::errors::strerror;
use crate::programs::quoting::single_quote;

/// The umask the sandbox applies to copied modes without `-p`.
const UMASK: u32 = 0o022;

/// How many names `mktemp` tries before giving up.
const MKTEMP_TRIES: usize = 100;

/// `cp`'s switches.
#[derive(Debug, Clone, Copy, Default)]
struct CpOptions {
    recursive: bool,
    preserve: bool,
    no_clobber: bool,
    verbose: bool,
    no_deref: bool,
    update: bool,
}

/// Splits operands into sources and destination, honouring `-t`/`-T`.
/// Returns `(sources, dest, dest_is_dir)` or the exit status on error.
fn sources_and_target(p: &Process<'_>, args: &Parsed) -> Result<(Vec<String>, String, bool), i32> {
    let mut ops = args.operands.clone();
    if let Some(dir) = args.value('t') {
        if !p.resolve(dir).is_dir() {
            p.error(&format!(
                "target directory {}: Not a directory",
                single_quote(dir)
            ));
            return Err(1);
        }
        if ops.is_empty() {
            return Err(super::usage(p, "missing file operand", 1));
        }
        return Ok((ops, dir.to_string(), true));
    }
    match ops.len() {
        0 => return Err(super::usage(p, "missing file operand", 1)),
        1 => {
            let only = ops.first().cloned().unwrap_or_default();
            return Err(super::usage(
                p,
                &format!(
                    "missing destination file operand after {}",
                    single_quote(&only)
                ),
                1,
            ));
        }
        _ => {}
    }
    let dest = ops.pop().unwrap_or_default();
    let is_dir = !args.has('T') && p.resolve(&dest).is_dir();
    if ops.len() > 1 && !is_dir {
        if args.has('T') {
            let extra = ops.get(1).cloned().unwrap_or_default();
            return Err(super::usage(
                p,
                &format!("extra operand {}", single_quote(&extra)),
                1,
            ));
        }
        let why = if p.resolve(&dest).exists() {
            "Not a directory"
        } else {
            "No such file or directory"
        };
        p.error(&format!("target {}: {why}", single_quote(&dest)));
        return Err(1);
    }
    Ok((ops, dest, is_dir))
}

/// Where a source lands: inside a folder destination, or at it.
fn landing(src: &str, dest: &str, dest_is_dir: bool) -> String {
    if dest_is_dir {
        let base = super::paths::base_name(src);
        format!("{}/{base}", dest.trim_end_matches('/'))
    } else {
        dest.to_string()
    }
}

/// True when `inner` is `outer` or below it (both as the process sees them).
fn is_within(p: &Process<'_>, inner: &str, outer: &str) -> bool {
    let inner = p.host_path(inner);
    let outer = p.host_path(outer);
    inner == outer || inner.starts_with(&format!("{}/", outer.trim_end_matches('/')))
}

/// Same file: same canonical path.
fn same_file(p: &Process<'_>, a: &str, b: &str) -> bool {
    use super::paths::{Existence, canonicalize};
    match (
        canonicalize(p.cwd, a, Existence::All),
        canonicalize(p.cwd, b, Existence::All),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

pub(crate) fn cp(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "rRapfnviuHLPdlsxTt:",
        long: &[
            ("recursive", 'r', HasArg::No),
            ("archive", 'a', HasArg::No),
            ("preserve", 'p', HasArg::Optional),
            ("force", 'f', HasArg::No),
            ("no-clobber", 'n', HasArg::No),
            ("verbose", 'v', HasArg::No),
            ("interactive", 'i', HasArg::No),
            ("update", 'u', HasArg::Optional),
            ("no-dereference", 'P', HasArg::No),
            ("dereference", 'L', HasArg::No),
            ("target-directory", 't', HasArg::Yes),
            ("no-target-directory", 'T', HasArg::No),
            ("no-preserve", 'N', HasArg::Yes),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let archive = args.has('a');
    let opts = CpOptions {
        recursive: archive || args.has('r') || args.has('R'),
        preserve: archive || args.has('p'),
        no_clobber: args.has('n'),
        verbose: args.has('v'),
        no_deref: archive || args.has('P') || args.has('d'),
        update: args.has('u'),
    };
    let (sources, dest, dest_is_dir) = match sources_and_target(p, &args) {
        Ok(t) => t,
        Err(status) => return status,
    };
    let mut status = 0;
    for src in &sources {
        let target = landing(src, &dest, dest_is_dir);
        let meta = match fs::symlink_metadata(p.resolve(src)) {
            Ok(m) => m,
            Err(e) => {
                p.error(&format!(
                    "cannot stat {}: {}",
                    single_quote(src),
                    strerror(&e)
                ));
                status = 1;
                continue;
            }
        };
        let is_dir = if meta.file_type().is_symlink() && !opts.no_deref && !opts.recursive {
            p.resolve(src).is_dir()
        } else {
            meta.is_dir()
        };
        if is_dir && !opts.recursive {
            p.error(&format!(
                "-r not specified; omitting directory {}",
                single_quote(src)
            ));
            status = 1;
            continue;
        }
        if is_dir && is_within(p, &target, src) {
            p.error(&format!(
                "cannot copy a directory, {}, into itself, {}",
                single_quote(src),
                single_quote(&target)
            ));
            status = 1;
            continue;
        }
        if !is_dir && same_file(p, src, &target) {
            p.error(&format!(
                "{} and {} are the same file",
                single_quote(src),
                single_quote(&target)
            ));
            status = 1;
            continue;
        }
        if copy_node(p, src, &target, opts).is_err() {
            status = 1;
        }
    }
    status
}

/// Copies one file, link or (recursively) folder; errors are reported.
fn copy_node(p: &Process<'_>, src: &str, dest: &str, opts: CpOptions) -> Result<(), ()> {
    let src_path = p.resolve(src);
    let dest_path = p.resolve(dest);
    let lmeta = fs::symlink_metadata(&src_path).map_err(|e| {
        p.error(&format!(
            "cannot stat {}: {}",
            single_quote(src),
            strerror(&e)
        ));
    })?;
    if lmeta.file_type().is_symlink() && (opts.no_deref || opts.recursive) {
        let target = fs::read_link(&src_path).map_err(|_| ())?;
        if fs::symlink_metadata(&dest_path).is_ok() {
            if opts.no_clobber {
                return Ok(());
            }
            let _ = fs::remove_file(&dest_path);
        }
        return symlink(&target, &dest_path).map_err(|e| {
            p.error(&format!(
                "cannot create symbolic link {}: {}",
                single_quote(dest),
                strerror(&e)
            ));
        });
    }
    let src_mode = p.host.get_mode(&p.host_path(src), true).unwrap_or(0o644);
    if src_path.is_dir() {
        let existed = dest_path.is_dir();
        if !existed {
            if let Err(e) = fs::create_dir(&dest_path) {
                p.error(&format!(
                    "cannot create directory {}: {}",
                    single_quote(dest),
                    strerror(&e)
                ));
                return Err(());
            }
            if opts.verbose {
                p.out(format!("{} -> {}\n", single_quote(src), single_quote(dest)).as_bytes());
            }
        }
        let mut names: Vec<String> = fs::read_dir(&src_path)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .filter_map(|e| e.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        let mut result = Ok(());
        for name in names {
            let s = format!("{}/{name}", src.trim_end_matches('/'));
            let d = format!("{}/{name}", dest.trim_end_matches('/'));
            if copy_node(p, &s, &d, opts).is_err() {
                result = Err(());
            }
        }
        if !existed || opts.preserve {
            let mode = if opts.preserve {
                src_mode
            } else {
                src_mode & !UMASK
            };
            let _ = p.host.set_mode(&p.host_path(dest), mode & 0o7777);
        }
        if opts.preserve {
            preserve_times(&src_path, &dest_path);
        }
        return result;
    }
    let existed = fs::symlink_metadata(&dest_path).is_ok();
    if existed && opts.no_clobber {
        return Ok(());
    }
    if existed && opts.update {
        let newer = |path: &Path| fs::metadata(path).and_then(|m| m.modified()).ok();
        if newer(&dest_path) >= newer(&src_path) {
            return Ok(());
        }
    }
    if dest_path.is_dir() {
        p.error(&format!(
            "cannot overwrite directory {} with non-directory",
            single_quote(dest)
        ));
        return Err(());
    }
    let data = fs::read(&src_path).map_err(|e| {
        p.error(&format!(
            "cannot open {} for reading: {}",
            single_quote(src),
            strerror(&e)
        ));
    })?;
    fs::write(&dest_path, &data).map_err(|e| {
        p.error(&format!(
            "cannot create regular file {}: {}",
            single_quote(dest),
            strerror(&e)
        ));
    })?;
    if !existed || opts.preserve {
        let mode = if opts.preserve {
            src_mode
        } else {
            src_mode & !UMASK
        };
        let _ = p.host.set_mode(&p.host_path(dest), mode & 0o7777);
    }
    if opts.preserve {
        preserve_times(&src_path, &dest_path);
    }
    if opts.verbose {
        p.out(format!("{} -> {}\n", single_quote(src), single_quote(dest)).as_bytes());
    }
    Ok(())
}

fn preserve_times(src: &Path, dest: &Path) {
    if let Ok(t) = fs::metadata(src).and_then(|m| m.modified())
        && let Ok(f) = fs::File::options()
            .append(true)
            .open(dest)
            .or_else(|_| fs::File::open(dest))
    {
        let _ = f.set_modified(t);
    }
}

#[cfg(unix)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// `std::os::wasi::fs::symlink_path` is unstable; `soft_link` is the
/// stable way to reach WASI's `symlink-at`.
#[cfg(not(unix))]
#[allow(deprecated)]
fn symlink(target: &Path, link: &Path) -> std::io::Result<()> {
    fs::soft_link(target, link)
}

pub(crate) fn mv(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "fnvibuTt:",
        long: &[
            ("force", 'f', HasArg::No),
            ("no-clobber", 'n', HasArg::No),
            ("verbose", 'v', HasArg::No),
            ("interactive", 'i', HasArg::No),
            ("update", 'u', HasArg::Optional),
            ("target-directory", 't', HasArg::Yes),
            ("no-target-directory", 'T', HasArg::No),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let (sources, dest, dest_is_dir) = match sources_and_target(p, &args) {
        Ok(t) => t,
        Err(status) => return status,
    };
    let mut status = 0;
    for src in &sources {
        let target = landing(src, &dest, dest_is_dir);
        let src_path = p.resolve(src);
        let meta = match fs::symlink_metadata(&src_path) {
            Ok(m) => m,
            Err(e) => {
                p.error(&format!(
                    "cannot stat {}: {}",
                    single_quote(src),
                    strerror(&e)
                ));
                status = 1;
                continue;
            }
        };
        if meta.is_dir() && is_within(p, &target, src) && p.host_path(&target) != p.host_path(src) {
            p.error(&format!(
                "cannot move {} to a subdirectory of itself, {}",
                single_quote(src),
                single_quote(&target)
            ));
            status = 1;
            continue;
        }
        let dest_path = p.resolve(&target);
        if fs::symlink_metadata(&dest_path).is_ok() {
            if args.has('n') {
                continue;
            }
            if same_file(p, src, &target) {
                p.error(&format!(
                    "{} and {} are the same file",
                    single_quote(src),
                    single_quote(&target)
                ));
                status = 1;
                continue;
            }
        }
        // Modes are kept by path in the host: read before, set after.
        let modes = collect_modes(p, &src_path, src);
        match fs::rename(&src_path, &dest_path) {
            Ok(()) => {
                for (rel, mode) in modes {
                    let path = if rel.is_empty() {
                        target.clone()
                    } else {
                        format!("{}/{rel}", target.trim_end_matches('/'))
                    };
                    let _ = p.host.set_mode(&p.host_path(&path), mode & 0o7777);
                }
                if args.has('v') {
                    p.out(
                        format!(
                            "renamed {} -> {}\n",
                            single_quote(src),
                            single_quote(&target)
                        )
                        .as_bytes(),
                    );
                }
            }
            Err(e) => {
                p.error(&format!(
                    "cannot move {} to {}: {}",
                    single_quote(src),
                    single_quote(&target),
                    strerror(&e)
                ));
                status = 1;
            }
        }
    }
    status
}

/// The modes of a node and everything below it, by relative path.
fn collect_modes(p: &Process<'_>, path: &Path, shown: &str) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    let mut stack: Vec<(PathBuf, String)> = vec![(path.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let full = if rel.is_empty() {
            shown.to_string()
        } else {
            format!("{}/{rel}", shown.trim_end_matches('/'))
        };
        let Ok(meta) = fs::symlink_metadata(&dir) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            continue;
        }
        if let Ok(mode) = p.host.get_mode(&p.host_path(&full), false) {
            out.push((rel.clone(), mode));
        }
        if meta.is_dir()
            && let Ok(rd) = fs::read_dir(&dir)
        {
            for e in rd.filter_map(Result::ok) {
                if let Ok(name) = e.file_name().into_string() {
                    let child = if rel.is_empty() {
                        name
                    } else {
                        format!("{rel}/{name}")
                    };
                    stack.push((e.path(), child));
                }
            }
        }
    }
    out
}

pub(crate) fn ln(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "sfnvrLPTt:",
        long: &[
            ("symbolic", 's', HasArg::No),
            ("force", 'f', HasArg::No),
            ("no-dereference", 'n', HasArg::No),
            ("verbose", 'v', HasArg::No),
            ("relative", 'r', HasArg::No),
            ("target-directory", 't', HasArg::Yes),
            ("no-target-directory", 'T', HasArg::No),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let symbolic = args.has('s');
    // `ln -s TARGET` links into the current folder.
    let (sources, dest, dest_is_dir) = if args.operands.len() == 1 && !args.has('t') {
        (args.operands.clone(), ".".to_string(), true)
    } else {
        match sources_and_target(p, &args) {
            Ok(t) => t,
            Err(status) => return status,
        }
    };
    let no_deref = args.has('n');
    let dest_is_dir = dest_is_dir
        && !(no_deref
            && fs::symlink_metadata(p.resolve(&dest)).is_ok_and(|m| m.file_type().is_symlink()));
    let mut status = 0;
    for target in &sources {
        let link = landing(target, &dest, dest_is_dir);
        let link_path = p.resolve(&link);
        if fs::symlink_metadata(&link_path).is_ok() {
            if args.has('f') {
                if link_path.is_dir()
                    && !fs::symlink_metadata(&link_path).is_ok_and(|m| m.file_type().is_symlink())
                {
                    p.error(&format!(
                        "{}: cannot overwrite directory",
                        single_quote(&link)
                    ));
                    status = 1;
                    continue;
                }
                let _ = fs::remove_file(&link_path);
            } else {
                let what = if symbolic {
                    "symbolic link"
                } else {
                    "hard link"
                };
                p.error(&format!(
                    "failed to create {what} {}: File exists",
                    single_quote(&link)
                ));
                status = 1;
                continue;
            }
        }
        let result = if symbolic {
            let text = if args.has('r') {
                relative_target(p, target, &link)
            } else {
                target.clone()
            };
            symlink(Path::new(&text), &link_path)
        } else {
            if p.resolve(target).is_dir() {
                p.error(&format!(
                    "{}: hard link not allowed for directory",
                    single_quote(target)
                ));
                status = 1;
                continue;
            }
            fs::hard_link(p.resolve(target), &link_path)
        };
        match result {
            Ok(()) => {
                if args.has('v') {
                    let arrow = if symbolic { "->" } else { "=>" };
                    p.out(
                        format!("{} {arrow} {}\n", single_quote(&link), single_quote(target))
                            .as_bytes(),
                    );
                }
            }
            Err(e) => {
                if symbolic {
                    p.error(&format!(
                        "failed to create symbolic link {}: {}",
                        single_quote(&link),
                        strerror(&e)
                    ));
                } else if fs::symlink_metadata(p.resolve(target)).is_err() {
                    p.error(&format!(
                        "failed to access {}: {}",
                        single_quote(target),
                        strerror(&e)
                    ));
                } else {
                    p.error(&format!(
                        "failed to create hard link {} => {}: {}",
                        single_quote(&link),
                        single_quote(target),
                        strerror(&e)
                    ));
                }
                status = 1;
            }
        }
    }
    status
}

/// `ln -r`: the target as a path relative to the link's folder.
fn relative_target(p: &Process<'_>, target: &str, link: &str) -> String {
    let t = p.host_path(target);
    let l = p.host_path(link);
    let dir = super::paths::dir_name(&l);
    let tc: Vec<&str> = t.split('/').filter(|c| !c.is_empty()).collect();
    let dc: Vec<&str> = dir.split('/').filter(|c| !c.is_empty()).collect();
    let common = tc.iter().zip(&dc).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; dc.len() - common];
    parts.extend(tc.iter().skip(common));
    parts.join("/")
}

pub(crate) fn mktemp(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "dqtup:",
        long: &[
            ("directory", 'd', HasArg::No),
            ("quiet", 'q', HasArg::No),
            ("dry-run", 'u', HasArg::No),
            ("tmpdir", 'p', HasArg::Optional),
            ("suffix", 's', HasArg::Yes),
        ],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    if args.operands.len() > 1 {
        return super::usage(p, "too many templates", 1);
    }
    let explicit = args.operands.first().cloned();
    let template = explicit
        .clone()
        .unwrap_or_else(|| "tmp.XXXXXXXXXX".to_string());
    let suffix = args.value('s').unwrap_or("").to_string();
    let tmpdir = p
        .var("TMPDIR")
        .filter(|d| !d.is_empty())
        .unwrap_or("/tmp")
        .to_string();
    let dir = if args.has('p') {
        Some(
            args.value('p')
                .filter(|d| !d.is_empty())
                .map_or(tmpdir.clone(), str::to_string),
        )
    } else if args.has('t') || explicit.is_none() {
        Some(tmpdir)
    } else {
        None
    };
    if dir.is_some() && template.contains('/') && explicit.is_some() {
        p.error(&format!(
            "invalid template, {}, contains directory separator",
            p.quote(&template)
        ));
        return 1;
    }
    let full = match &dir {
        Some(d) => format!("{}/{template}", d.trim_end_matches('/')),
        None => template.clone(),
    };
    let xs = full.len() - full.trim_end_matches('X').len();
    if xs < 3 {
        p.error(&format!("too few X's in template {}", p.quote(&full)));
        return 1;
    }
    let stem = full.get(..full.len() - xs).unwrap_or("").to_string();
    let mut seed = seed();
    for _ in 0..MKTEMP_TRIES {
        let name: String = (0..xs)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let chars = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
                let i = usize::try_from((seed >> 33) % 62).unwrap_or(0);
                char::from(chars.get(i).copied().unwrap_or(b'x'))
            })
            .collect();
        let candidate = format!("{stem}{name}{suffix}");
        let path = p.resolve(&candidate);
        if args.has('u') {
            p.out(format!("{candidate}\n").as_bytes());
            return 0;
        }
        let created = if args.has('d') {
            fs::create_dir(&path).map(|()| {
                let _ = p.host.set_mode(&p.host_path(&candidate), 0o700);
            })
        } else {
            fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .map(|_| {
                    let _ = p.host.set_mode(&p.host_path(&candidate), 0o600);
                })
        };
        match created {
            Ok(()) => {
                p.out(format!("{candidate}\n").as_bytes());
                return 0;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                if !args.has('q') {
                    let what = if args.has('d') { "directory" } else { "file" };
                    p.error(&format!(
                        "failed to create {what} via template {}: {}",
                        p.quote(&full),
                        strerror(&e)
                    ));
                }
                return 1;
            }
        }
    }
    p.error(&format!(
        "failed to create file via template {}: File exists",
        p.quote(&full)
    ));
    1
}

/// Randomness for names: the clock and a hash seeded by the platform.
fn seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}
