//! `tar` (GNU tar 1.34): `-c`, `-x`, `-t` with `-v -f ARCHIVE -C DIR -z
//! -j -J -O --exclude=PAT --strip-components=N`, old-style bundles (`tar czf a.tgz d`) and `-` for
//! stdin/stdout. Archives are GNU format owned by `worker` (1000/1000);
//! modes come from and go to the host. Reading detects gzip by itself.
//! Extraction never leaves the target folder: leading `/` and `..`
//! prefixes are removed with GNU's warning, and paths through symbolic
//! links are refused.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::Process;
use super::gzip;
use crate::errors::strerror;
use crate::host::{S_IFDIR, S_IFLNK, S_IFMT};

/// The owner archives record.
const OWNER: &str = "worker";
const OWNER_ID: u64 = 1000;

/// The biggest archive read or written (the pipe budget).
const MAX_ARCHIVE: usize = crate::streams::MAX_PIPE_BYTES;

const TRY: &str = "Try 'tar --help' or 'tar --usage' for more information.";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Create,
    Extract,
    List,
}

#[derive(Default)]
struct Opts {
    mode: Option<Mode>,
    verbose: u32,
    file: Option<String>,
    dir: Option<String>,
    gzip: bool,
    /// `-j`/`-J`/`--lzma`: bzip2, xz or lzma instead of gzip.
    other: Option<crate::programs::compress::codec::Format>,
    to_stdout: bool,
    excludes: Vec<String>,
    /// `--strip-components=N`: leading folders dropped on extraction.
    strip: usize,
    operands: Vec<String>,
    /// The `-C` folder in effect where each operand was given (GNU
    /// changes folder in order: `-C a x -C .. y`).
    operand_dirs: Vec<Option<String>>,
    /// `--owner=NAME[:ID]` and `--group=NAME[:ID]`.
    owner: Option<(String, u64)>,
    group: Option<(String, u64)>,
}

/// `NAME[:ID]`; a bare number is an id without a name.
fn owner_spec(v: &str) -> (String, u64) {
    match v.split_once(':') {
        Some((n, id)) => (n.to_string(), id.parse().unwrap_or(OWNER_ID)),
        None => match v.parse::<u64>() {
            Ok(id) => (String::new(), id),
            Err(_) => (v.to_string(), OWNER_ID),
        },
    }
}

/// A usage error: message, then the hint; exit 2 (64 for getopt's).
fn usage(p: &Process<'_>, msg: &str, status: i32) -> i32 {
    p.error(msg);
    p.io.err_line(TRY);
    status
}

fn set_mode(opts: &mut Opts, m: Mode) -> Result<(), String> {
    if opts.mode.is_some_and(|old| old != m) {
        return Err(
            "You may not specify more than one '-Acdtrux', '--delete' or  '--test-label' option"
                .to_string(),
        );
    }
    opts.mode = Some(m);
    Ok(())
}

/// Applies a flag that takes no value; false if unknown.
fn flag(opts: &mut Opts, c: char) -> Result<bool, String> {
    match c {
        'c' => set_mode(opts, Mode::Create)?,
        'x' => set_mode(opts, Mode::Extract)?,
        't' => set_mode(opts, Mode::List)?,
        'v' => opts.verbose += 1,
        'z' => opts.gzip = true,
        'j' => opts.other = Some(crate::programs::compress::codec::Format::Bzip2),
        'J' => opts.other = Some(crate::programs::compress::codec::Format::Xz),
        'O' => opts.to_stdout = true,
        'p' | 'o' | 'm' => {}
        _ => return Ok(false),
    }
    Ok(true)
}

fn value(opts: &mut Opts, c: char, v: String) {
    if c == 'f' {
        opts.file = Some(v);
    } else {
        set_dir(opts, v);
    }
}

/// `-C DIR`: relative to the folder a previous `-C` chose.
fn set_dir(opts: &mut Opts, v: String) {
    opts.dir = Some(match &opts.dir {
        Some(old) if !v.starts_with('/') => format!("{}/{v}", old.trim_end_matches('/')),
        _ => v,
    });
}

/// Parses tar's command line; `Err((message, status))` on misuse.
fn parse(argv: &[String]) -> Result<Opts, (String, i32)> {
    let mut opts = Opts::default();
    let mut args: Vec<String> = argv.get(1..).unwrap_or_default().to_vec();
    let m2 = |e: String| (e, 2);
    // An old-style bundle: `tar czf a.tgz d`.
    if let Some(first) = args.first().cloned()
        && !first.starts_with('-')
    {
        args.remove(0);
        let mut taken = 0;
        for c in first.chars() {
            if c == 'f' || c == 'C' {
                let Some(v) = args.get(taken).cloned() else {
                    return Err((format!("Old option '{c}' requires an argument."), 2));
                };
                args.remove(taken);
                value(&mut opts, c, v);
                taken = 0;
            } else if !flag(&mut opts, c).map_err(m2)? {
                return Err((format!("invalid option -- '{c}'"), 64));
            }
        }
    }
    let mut i = 0;
    let mut only_operands = false;
    while let Some(arg) = args.get(i).cloned() {
        i += 1;
        if only_operands || arg == "-" || !arg.starts_with('-') {
            opts.operands.push(arg);
            opts.operand_dirs.push(opts.dir.clone());
            continue;
        }
        if arg == "--" {
            only_operands = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let mut need = |key: char| -> Result<String, (String, i32)> {
                if let Some(v) = inline.clone() {
                    return Ok(v);
                }
                let v = args
                    .get(i)
                    .cloned()
                    .ok_or_else(|| (format!("option '--{name}' requires an argument"), 64))?;
                i += 1;
                let _ = key;
                Ok(v)
            };
            match name {
                "create" => set_mode(&mut opts, Mode::Create).map_err(m2)?,
                "extract" | "get" => set_mode(&mut opts, Mode::Extract).map_err(m2)?,
                "list" => set_mode(&mut opts, Mode::List).map_err(m2)?,
                "verbose" => opts.verbose += 1,
                "gzip" | "gunzip" | "ungzip" => opts.gzip = true,
                "bzip2" => {
                    opts.other = Some(crate::programs::compress::codec::Format::Bzip2);
                }
                "xz" => opts.other = Some(crate::programs::compress::codec::Format::Xz),
                "lzma" => opts.other = Some(crate::programs::compress::codec::Format::Lzma),
                "to-stdout" => opts.to_stdout = true,
                "file" => opts.file = Some(need('f')?),
                "directory" => {
                    let v = need('C')?;
                    set_dir(&mut opts, v);
                }
                "owner" => opts.owner = Some(owner_spec(&need('o')?)),
                "group" => opts.group = Some(owner_spec(&need('g')?)),
                "exclude" => {
                    let v = need('X')?;
                    opts.excludes.push(v);
                }
                "strip-components" | "strip" => {
                    let v = need('s')?;
                    opts.strip = v
                        .parse()
                        .map_err(|_| (format!("{v}: Invalid number of elements"), 2))?;
                }
                "no-same-owner"
                | "no-same-permissions"
                | "same-permissions"
                | "preserve-permissions"
                | "touch" => {}
                _ => return Err((format!("unrecognized option '{arg}'"), 64)),
            }
            continue;
        }
        let body: Vec<char> = arg.chars().skip(1).collect();
        let mut j = 0;
        while let Some(&c) = body.get(j) {
            j += 1;
            if c == 'f' || c == 'C' {
                let rest: String = body.get(j..).unwrap_or_default().iter().collect();
                let v = if rest.is_empty() {
                    let v = args
                        .get(i)
                        .cloned()
                        .ok_or_else(|| (format!("option requires an argument -- '{c}'"), 64))?;
                    i += 1;
                    v
                } else {
                    rest
                };
                value(&mut opts, c, v);
                break;
            }
            if !flag(&mut opts, c).map_err(m2)? {
                return Err((format!("invalid option -- '{c}'"), 64));
            }
        }
    }
    Ok(opts)
}

pub(crate) fn tar(p: &mut Process<'_>, argv: &[String]) -> i32 {
    p.prefix = "tar".to_string();
    let opts = match parse(argv) {
        Ok(o) => o,
        Err((msg, status)) => return usage(p, &msg, status),
    };
    let mut t = Tar {
        p,
        opts: &opts,
        failed: false,
        warned: BTreeSet::new(),
        ugswidth: 19,
    };
    match opts.mode {
        None => usage(
            t.p,
            "You must specify one of the '-Acdtrux', '--delete' or '--test-label' options",
            2,
        ),
        Some(Mode::Create) => t.create(),
        Some(mode) => t.read(mode),
    }
}

/// One run's state.
struct Tar<'a, 'b> {
    p: &'a Process<'b>,
    opts: &'a Opts,
    /// An error that makes the exit status 2 at the end.
    failed: bool,
    /// Prefixes already reported as removed.
    warned: BTreeSet<String>,
    /// GNU's growing width of `user/group size`.
    ugswidth: usize,
}

/// `Error is not recoverable: exiting now`, exit 2.
fn fatal(p: &Process<'_>, msg: &str) -> i32 {
    p.error(msg);
    p.error("Error is not recoverable: exiting now");
    2
}

impl Tar<'_, '_> {
    fn archive_name(&self) -> &str {
        self.opts.file.as_deref().unwrap_or("-")
    }

    /// Where verbose names go: stderr when the archive is stdout.
    fn say(&self, line: &str) -> bool {
        if self.opts.mode == Some(Mode::Create) && self.archive_name() == "-" || self.opts.to_stdout
        {
            self.p.io.err_line(line);
            true
        } else {
            self.p.out(format!("{line}\n").as_bytes())
        }
    }

    fn finish(&self) -> i32 {
        if self.failed {
            self.p
                .error("Exiting with failure status due to previous errors");
            2
        } else {
            0
        }
    }

    /// GNU's unanchored `--exclude`: the pattern matches the leading
    /// folders of the name from any component on (`feb` excludes
    /// `data/feb/b.csv`, `src/*.o` excludes `p/src/x.o`).
    fn excluded(&self, member: &str) -> bool {
        let trimmed = member.trim_end_matches('/');
        let starts = std::iter::once(0).chain(trimmed.match_indices('/').map(|(i, _)| i + 1));
        let suffixes: Vec<&str> = starts.filter_map(|i| trimmed.get(i..)).collect();
        self.opts.excludes.iter().any(|pat| {
            let pat = pat.trim_end_matches('/');
            suffixes.iter().any(|suffix| {
                let ends = suffix
                    .match_indices('/')
                    .map(|(i, _)| i)
                    .chain(std::iter::once(suffix.len()));
                ends.filter_map(|e| suffix.get(..e))
                    .any(|lead| glob(pat.as_bytes(), lead.as_bytes()))
            })
        })
    }

    /// Removes what GNU removes from a member name, warning once per kind.
    fn safe_name(&mut self, name: &str) -> String {
        let mut prefix_end = 0;
        let bytes = name.as_bytes();
        // Leading `/`, and everything up to the last `..` component.
        let mut i = 0;
        while i < bytes.len() {
            let end = bytes
                .get(i..)
                .and_then(|r| r.iter().position(|&b| b == b'/'))
                .map_or(bytes.len(), |e| i + e);
            if bytes.get(i..end) == Some(b"..") {
                prefix_end = (end + 1).min(bytes.len());
            }
            i = end + 1;
        }
        let mut prefix = name.get(..prefix_end).unwrap_or_default().to_string();
        let mut rest = name.get(prefix_end..).unwrap_or_default();
        let slashes = rest.len() - rest.trim_start_matches('/').len();
        if slashes > 0 {
            prefix.push_str(rest.get(..slashes).unwrap_or_default());
            rest = rest.get(slashes..).unwrap_or_default();
        }
        if !prefix.is_empty() {
            let shown = if prefix_end == 0 {
                "/".to_string()
            } else {
                prefix
            };
            if self.warned.insert(shown.clone()) {
                self.p
                    .error(&format!("Removing leading `{shown}' from member names"));
            }
        }
        if rest.is_empty() && !name.is_empty() {
            return ".".to_string();
        }
        rest.to_string()
    }

    fn create(&mut self) -> i32 {
        if self.opts.operands.is_empty() {
            return usage(self.p, "Cowardly refusing to create an empty archive", 2);
        }
        let archive_path =
            (self.archive_name() != "-").then(|| self.p.resolve(self.archive_name()));
        for dir in self.opts.operand_dirs.iter().flatten() {
            if !self.p.resolve(dir).is_dir() {
                return fatal(
                    self.p,
                    &format!("{dir}: Cannot open: No such file or directory"),
                );
            }
        }
        // GNU opens the archive first, so it is there to skip while scanning.
        if let Some(path) = &archive_path
            && let Err(e) = std::fs::File::create(path)
        {
            let name = self.archive_name().to_string();
            return fatal(self.p, &format!("{name}: Cannot open: {}", strerror(&e)));
        }
        let mut builder = tar::Builder::new(Vec::new());
        let operands = self.opts.operands.clone();
        for (i, operand) in operands.iter().enumerate() {
            let base = self
                .opts
                .operand_dirs
                .get(i)
                .cloned()
                .flatten()
                .unwrap_or_else(|| ".".to_string());
            let member = self.safe_name(operand);
            let rel = if Path::new(operand).is_absolute() {
                operand.clone()
            } else {
                format!("{base}/{operand}")
            };
            if !self.add(
                &mut builder,
                &rel,
                operand,
                &member,
                archive_path.as_deref(),
            ) {
                return 2;
            }
        }
        let mut data = match builder.into_inner() {
            Ok(d) => d,
            Err(e) => return fatal(self.p, strerror(&e)),
        };
        if let Some(format) = self.opts.other {
            data = crate::programs::compress::codec::encode(format, &data, 6);
        } else if self.opts.gzip {
            data = gzip::compress(&data, 6, None, 0);
        }
        if let Some(path) = archive_path {
            if let Err(e) = std::fs::write(&path, &data) {
                let name = self.archive_name().to_string();
                return fatal(self.p, &format!("{name}: Cannot open: {}", strerror(&e)));
            }
        } else {
            super::write_all(self.p, &data);
        }
        self.finish()
    }

    /// Appends `path` (shown as `shown`) as `member`, recursing into
    /// folders; false when the output is gone.
    fn add(
        &mut self,
        b: &mut tar::Builder<Vec<u8>>,
        path: &str,
        shown: &str,
        member: &str,
        archive: Option<&Path>,
    ) -> bool {
        if self.excluded(member) {
            return true;
        }
        let real = self.p.resolve(path);
        let meta = match real.symlink_metadata() {
            Ok(m) => m,
            Err(e) => {
                self.p
                    .error(&format!("{shown}: Cannot stat: {}", strerror(&e)));
                self.failed = true;
                return true;
            }
        };
        if archive.is_some_and(|a| same_file(a, &real)) {
            self.p
                .error(&format!("{shown}: file is the archive; not dumped"));
            return true;
        }
        let host_mode = self.p.host.get_mode(&self.p.host_path(path), false).ok();
        let kind = host_mode.map_or(0, |m| m & S_IFMT);
        let mtime = meta
            .modified()
            .map_or(0, crate::programs::timefmt::epoch_secs);
        let mut h = tar::Header::new_gnu();
        let default = (OWNER.to_string(), OWNER_ID);
        let (uname, uid) = self.opts.owner.clone().unwrap_or_else(|| default.clone());
        let (gname, gid) = self.opts.group.clone().unwrap_or(default);
        h.set_uid(uid);
        h.set_gid(gid);
        let _ = h.set_username(&uname);
        let _ = h.set_groupname(&gname);
        h.set_mtime(u64::try_from(mtime).unwrap_or(0));
        let perm = host_mode.map_or(0o644, |m| m & 0o7777);
        h.set_mode(perm);
        let ft = meta.file_type();
        let shown_member;
        if ft.is_symlink() || kind == S_IFLNK {
            let target = std::fs::read_link(&real).unwrap_or_default();
            h.set_entry_type(tar::EntryType::Symlink);
            h.set_mode(0o777);
            h.set_size(0);
            shown_member = member.to_string();
            let target = target.to_string_lossy();
            if append_raw(b, &mut h, member, Some(&target), &[]).is_err() {
                self.long_name_error(shown);
                return true;
            }
        } else if ft.is_dir() || kind == S_IFDIR {
            let name = if member.ends_with('/') {
                member.to_string()
            } else {
                format!("{member}/")
            };
            h.set_entry_type(tar::EntryType::Directory);
            h.set_size(0);
            if append_raw(b, &mut h, &name, None, &[]).is_err() {
                self.long_name_error(shown);
                return true;
            }
            shown_member = name.clone();
            if self.opts.verbose > 0 && !self.say(&shown_member) {
                return false;
            }
            let mut children: Vec<String> = match std::fs::read_dir(&real) {
                Ok(rd) => rd
                    .filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect(),
                Err(e) => {
                    self.p
                        .error(&format!("{shown}: Cannot open: {}", strerror(&e)));
                    self.failed = true;
                    return true;
                }
            };
            children.sort();
            for c in children {
                let child_path = format!("{}/{c}", path.trim_end_matches('/'));
                let child_shown = format!("{}/{c}", shown.trim_end_matches('/'));
                let child_member = format!("{name}{c}");
                if !self.add(b, &child_path, &child_shown, &child_member, archive) {
                    return false;
                }
            }
            return true;
        } else {
            let data = match std::fs::read(&real) {
                Ok(d) => d,
                Err(e) => {
                    self.p
                        .error(&format!("{shown}: Cannot open: {}", strerror(&e)));
                    self.failed = true;
                    return true;
                }
            };
            if b.get_ref().len().saturating_add(data.len()) > MAX_ARCHIVE {
                self.p.error(&format!("{shown}: File too large"));
                self.failed = true;
                return true;
            }
            h.set_entry_type(tar::EntryType::Regular);
            h.set_size(data.len() as u64);
            if append_raw(b, &mut h, member, None, &data).is_err() {
                self.long_name_error(shown);
                return true;
            }
            shown_member = member.to_string();
        }
        self.opts.verbose == 0 || self.say(&shown_member)
    }

    fn long_name_error(&mut self, shown: &str) {
        self.p.error(&format!("{shown}: file name is too long"));
        self.failed = true;
    }

    /// Reads the archive for `-t` and `-x`.
    fn load(&self) -> Result<(Vec<u8>, bool), i32> {
        let name = self.archive_name();
        let raw = if name == "-" {
            self.p.io.stdin.borrow_mut().read_all()
        } else {
            let path = self.p.resolve(name);
            if path.is_dir() {
                return Err(fatal(
                    self.p,
                    &format!("{name}: Cannot read: Is a directory"),
                ));
            }
            match std::fs::read(&path) {
                Ok(d) => d,
                Err(e) => {
                    return Err(fatal(
                        self.p,
                        &format!("{name}: Cannot open: {}", strerror(&e)),
                    ));
                }
            }
        };
        if let Some(format) = crate::programs::compress::codec::detect(&raw)
            .filter(|f| *f != crate::programs::compress::codec::Format::Gzip)
            .or(self.opts.other)
        {
            return crate::programs::compress::codec::decode(format, &raw)
                .map(|d| (d, true))
                .map_err(|_| {
                    let (tool, status) = match format {
                        crate::programs::compress::codec::Format::Bzip2 => {
                            ("bzip2: (stdin) is not a bzip2 file.", 2)
                        }
                        _ => ("xz: (stdin): File format not recognized", 1),
                    };
                    self.p.io.err_line(tool);
                    fatal(self.p, &format!("Child returned status {status}"))
                });
        }
        if self.opts.gzip || raw.starts_with(&[0x1f, 0x8b]) {
            return match gzip::decompress_all(&raw) {
                Ok(d) => Ok((d.data, true)),
                Err(e) => {
                    self.p.io.err(b"\n");
                    self.p.io.err_line(&format!("gzip: stdin: {}", e.message()));
                    Err(fatal(self.p, "Child returned status 1"))
                }
            };
        }
        Ok((raw, false))
    }

    fn read(&mut self, mode: Mode) -> i32 {
        let target = match &self.opts.dir {
            Some(dir) if mode == Mode::Extract => {
                let path = self.p.resolve(dir);
                if !path.is_dir() {
                    let why = if path.exists() {
                        "Not a directory"
                    } else {
                        "No such file or directory"
                    };
                    return fatal(self.p, &format!("{dir}: Cannot open: {why}"));
                }
                dir.clone()
            }
            _ => ".".to_string(),
        };
        let (data, unzipped) = match self.load() {
            Ok(d) => d,
            Err(s) => return s,
        };
        if unzipped && data.len() < 512 {
            // GNU reads a short decompressed stream as an empty archive.
            return 0;
        }
        if data.len() < 512 || !valid_header(data.get(..512).unwrap_or_default()) {
            if data.get(..512).is_some_and(|b| b.iter().all(|&x| x == 0)) {
                return 0;
            }
            self.p.error("This does not look like a tar archive");
            self.failed = true;
            return self.finish();
        }
        let mut wanted: Vec<(String, bool)> = self
            .opts
            .operands
            .iter()
            .map(|o| (o.trim_end_matches('/').to_string(), false))
            .collect();
        let mut archive = tar::Archive::new(data.as_slice());
        let entries = match archive.entries() {
            Ok(e) => e,
            Err(_) => {
                self.p.error("This does not look like a tar archive");
                self.failed = true;
                return self.finish();
            }
        };
        let mut dir_modes: Vec<(String, u32)> = Vec::new();
        for entry in entries {
            let mut entry = match entry {
                Ok(e) => e,
                Err(_) => {
                    self.p.error("Skipping to next header");
                    self.failed = true;
                    break;
                }
            };
            let raw_name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
            if self.excluded(&raw_name) {
                continue;
            }
            if !wanted.is_empty() {
                let trimmed = raw_name.trim_end_matches('/');
                let mut hit = false;
                for (w, seen) in &mut wanted {
                    if trimmed == w.as_str()
                        || trimmed
                            .strip_prefix(w.as_str())
                            .is_some_and(|r| r.starts_with('/'))
                    {
                        *seen = true;
                        hit = true;
                    }
                }
                if !hit {
                    continue;
                }
            }
            let member = if mode == Mode::Extract && self.opts.strip > 0 {
                match strip_components(&raw_name, self.opts.strip) {
                    Some(rest) => self.safe_name(&rest),
                    None => continue,
                }
            } else {
                self.safe_name(&raw_name)
            };
            if mode == Mode::Extract
                && !self.opts.to_stdout
                && raw_name.split('/').any(|c| c == "..")
            {
                self.p
                    .error(&format!("{raw_name}: Member name contains '..'"));
                self.failed = true;
                continue;
            }
            let link = entry
                .link_name_bytes()
                .map(|l| String::from_utf8_lossy(&l).into_owned());
            let header = entry.header().clone();
            let kind = header.entry_type();
            if mode == Mode::List || self.opts.verbose > 0 {
                let line = if self.opts.verbose > (u32::from(mode == Mode::Extract)) {
                    self.long_line(&header, &raw_name, link.as_deref())
                } else {
                    raw_name.clone()
                };
                if !self.say(&line) {
                    return self.finish();
                }
            }
            if mode == Mode::List {
                continue;
            }
            let mut body = Vec::new();
            if (kind.is_file() || kind == tar::EntryType::Continuous)
                && let Err(e) = std::io::Read::read_to_end(&mut entry, &mut body)
            {
                self.p
                    .error(&format!("{raw_name}: Read error: {}", strerror(&e)));
                self.failed = true;
                break;
            }
            if self.opts.to_stdout {
                if kind.is_file() && !super::write_all(self.p, &body) {
                    return self.finish();
                }
                continue;
            }
            let perm = header.mode().unwrap_or(0o644) & 0o7777;
            let mtime = header.mtime().unwrap_or(0);
            self.extract_one(
                &target,
                &member,
                kind,
                &body,
                link.as_deref(),
                perm,
                mtime,
                &mut dir_modes,
            );
        }
        for (path, mode) in dir_modes.iter().rev() {
            let _ = self.p.host.set_mode(&self.p.host_path(path), *mode);
        }
        for (w, seen) in &wanted {
            if !seen {
                self.p.error(&format!("{w}: Not found in archive"));
                self.failed = true;
            }
        }
        self.finish()
    }

    #[allow(clippy::too_many_arguments)]
    fn extract_one(
        &mut self,
        target: &str,
        member: &str,
        kind: tar::EntryType,
        body: &[u8],
        link: Option<&str>,
        perm: u32,
        mtime: u64,
        dir_modes: &mut Vec<(String, u32)>,
    ) {
        let member = member.trim_end_matches('/');
        if member.is_empty() || member == "." {
            return;
        }
        let rel = format!("{target}/{member}");
        let path = self.p.resolve(&rel);
        if let Err(why) = self.check_parents(target, member) {
            self.p.error(&format!("{member}: Cannot open: {why}"));
            self.failed = true;
            return;
        }
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let result = match kind {
            tar::EntryType::Directory => {
                let r = if path.is_dir() {
                    Ok(())
                } else {
                    std::fs::create_dir_all(&path)
                };
                if r.is_ok() {
                    dir_modes.push((rel.clone(), perm));
                }
                r.map_err(|e| ("Cannot mkdir", e))
            }
            tar::EntryType::Symlink => {
                let target_text = link.unwrap_or_default();
                let _ = std::fs::remove_file(&path);
                make_symlink(target_text, &path).map_err(|e| ("Cannot create symlink to", e))
            }
            tar::EntryType::Link => {
                let to = link.unwrap_or_default().to_string();
                let to = if self.opts.strip > 0 {
                    strip_components(&to, self.opts.strip).unwrap_or(to)
                } else {
                    to
                };
                let to = self.safe_name(&to);
                if self.check_parents(target, &to).is_err() {
                    Err((
                        "Cannot hard link to",
                        std::io::Error::from(std::io::ErrorKind::PermissionDenied),
                    ))
                } else {
                    let _ = std::fs::remove_file(&path);
                    std::fs::hard_link(self.p.resolve(&format!("{target}/{to}")), &path)
                        .map_err(|e| ("Cannot hard link to", e))
                }
            }
            k if k.is_file() || k == tar::EntryType::Continuous => {
                if path.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
                    let _ = std::fs::remove_file(&path);
                }
                let r = std::fs::File::create(&path).and_then(|mut f| {
                    std::io::Write::write_all(&mut f, body)?;
                    let _ = f.set_modified(crate::programs::timefmt::system_time(
                        i64::try_from(mtime).unwrap_or(0),
                    ));
                    Ok(())
                });
                if r.is_ok() {
                    let _ = self.p.host.set_mode(&self.p.host_path(&rel), perm);
                }
                r.map_err(|e| ("Cannot open", e))
            }
            _ => Ok(()),
        };
        if let Err((what, e)) = result {
            let msg = if what == "Cannot hard link to" || what == "Cannot create symlink to" {
                format!(
                    "{member}: {what} '{}': {}",
                    link.unwrap_or_default(),
                    strerror(&e)
                )
            } else {
                format!("{member}: {what}: {}", strerror(&e))
            };
            self.p.error(&msg);
            self.failed = true;
        }
    }

    /// Refuses a member whose folders (below the target) are symbolic
    /// links or not folders.
    fn check_parents(&self, target: &str, member: &str) -> Result<(), &'static str> {
        let mut prefix = target.to_string();
        let parts: Vec<&str> = member.split('/').filter(|s| !s.is_empty()).collect();
        for part in parts.iter().take(parts.len().saturating_sub(1)) {
            if *part == ".." {
                return Err("Permission denied");
            }
            prefix = format!("{prefix}/{part}");
            match self.p.resolve(&prefix).symlink_metadata() {
                Ok(m) if m.file_type().is_symlink() => return Err("Not a directory"),
                Ok(m) if !m.is_dir() => return Err("Not a directory"),
                _ => {}
            }
        }
        Ok(())
    }

    /// `-rw-r--r-- worker/worker     14 2026-11-29 12:00 dir/f`
    fn long_line(&mut self, h: &tar::Header, name: &str, link: Option<&str>) -> String {
        let kind = h.entry_type();
        let type_char = match kind {
            tar::EntryType::Directory => 'd',
            tar::EntryType::Symlink => 'l',
            tar::EntryType::Char => 'c',
            tar::EntryType::Block => 'b',
            tar::EntryType::Fifo => 'p',
            tar::EntryType::Link => 'h',
            _ => '-',
        };
        let perm = h.mode().unwrap_or(0);
        let mut mode = String::from(if type_char == 'h' { '-' } else { type_char });
        mode.push_str(&perm_string(perm));
        let user = h
            .username()
            .ok()
            .flatten()
            .filter(|u| !u.is_empty())
            .map_or_else(|| h.uid().unwrap_or(0).to_string(), str::to_string);
        let group = h
            .groupname()
            .ok()
            .flatten()
            .filter(|g| !g.is_empty())
            .map_or_else(|| h.gid().unwrap_or(0).to_string(), str::to_string);
        let size = h.size().unwrap_or(0).to_string();
        let width = user.len() + 1 + group.len() + 1 + size.len();
        if width > self.ugswidth {
            self.ugswidth = width;
        }
        let pad = " ".repeat(self.ugswidth - width);
        let t = crate::programs::timefmt::civil_from_secs(
            i64::try_from(h.mtime().unwrap_or(0)).unwrap_or(0),
        );
        let mut line = format!(
            "{mode} {user}/{group}{pad} {size} {:04}-{:02}-{:02} {:02}:{:02} {name}",
            t.year, t.month, t.day, t.hour, t.minute
        );
        match (type_char, link) {
            ('l', Some(l)) => line.push_str(&format!(" -> {l}")),
            ('h', Some(l)) => line.push_str(&format!(" link to {l}")),
            _ => {}
        }
        line
    }
}

/// Appends an entry named exactly `name` (GNU keeps `./` prefixes),
/// with `././@LongLink` records for names over 100 bytes.
/// A member name without its first `n` components (`None` when nothing
/// is left, as GNU skips such members).
fn strip_components(name: &str, n: usize) -> Option<String> {
    let parts: Vec<&str> = name.split('/').filter(|c| !c.is_empty()).collect();
    let rest = parts.get(n..).filter(|r| !r.is_empty())?;
    let mut out = rest.join("/");
    if name.ends_with('/') {
        out.push('/');
    }
    Some(out)
}

fn append_raw(
    b: &mut tar::Builder<Vec<u8>>,
    h: &mut tar::Header,
    name: &str,
    link: Option<&str>,
    data: &[u8],
) -> std::io::Result<()> {
    for (text, kind) in [(Some(name), b'L'), (link, b'K')] {
        let Some(text) = text else { continue };
        if text.len() > 100 {
            let mut long = tar::Header::new_gnu();
            fill(&mut long.as_old_mut().name, b"././@LongLink");
            long.set_mode(0o644);
            long.set_uid(0);
            long.set_gid(0);
            long.set_mtime(0);
            long.set_entry_type(tar::EntryType::new(kind));
            let mut body = text.as_bytes().to_vec();
            body.push(0);
            long.set_size(body.len() as u64);
            long.set_cksum();
            b.append(&long, body.as_slice())?;
        }
    }
    fill(&mut h.as_old_mut().name, name.as_bytes());
    if let Some(l) = link {
        fill(&mut h.as_old_mut().linkname, l.as_bytes());
    }
    h.set_cksum();
    b.append(h, data)
}

/// Copies as much of `src` as fits into a NUL-padded header field.
fn fill(field: &mut [u8], src: &[u8]) {
    for (i, dst) in field.iter_mut().enumerate() {
        *dst = src.get(i).copied().unwrap_or(0);
    }
}

/// Whether a 512-byte block is a tar header (its checksum holds).
fn valid_header(block: &[u8]) -> bool {
    let Some(stored) = block.get(148..156) else {
        return false;
    };
    let text: String = stored
        .iter()
        .map(|&b| b as char)
        .filter(|c| c.is_ascii_digit())
        .collect();
    let Ok(want) = u32::from_str_radix(&text, 8) else {
        return false;
    };
    let sum: u32 = block
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u32::from(b)
            }
        })
        .sum();
    sum == want
}

/// `rwxr-xr-x` with setuid, setgid and sticky letters.
fn perm_string(mode: u32) -> String {
    let mut s = String::new();
    for (shift, special, (set, unset)) in [
        (6, 0o4000, ('s', 'S')),
        (3, 0o2000, ('s', 'S')),
        (0, 0o1000, ('t', 'T')),
    ] {
        let bits = (mode >> shift) & 7;
        s.push(if bits & 4 != 0 { 'r' } else { '-' });
        s.push(if bits & 2 != 0 { 'w' } else { '-' });
        let x = bits & 1 != 0;
        s.push(match (mode & special != 0, x) {
            (true, true) => set,
            (true, false) => unset,
            (false, true) => 'x',
            (false, false) => '-',
        });
    }
    s
}

pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| PathBuf::from(p));
    canon(a) == canon(b)
}

#[cfg(unix)]
pub(crate) fn make_symlink(target: &str, path: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, path)
}

#[cfg(not(unix))]
pub(crate) fn make_symlink(_target: &str, _path: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

/// fnmatch(3) without flags: `*`, `?` and `[...]`.
pub(crate) fn glob(pat: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pat.get(p) {
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
                continue;
            }
            Some(b'?') => {
                p += 1;
                t += 1;
                continue;
            }
            Some(b'[') => {
                if let Some((ok, next)) = class(pat, p, text.get(t).copied().unwrap_or(0))
                    && ok
                {
                    p = next;
                    t += 1;
                    continue;
                }
            }
            Some(&c) if Some(&c) == text.get(t) => {
                p += 1;
                t += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, st)) => {
                p = sp + 1;
                t = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    pat.get(p..).unwrap_or_default().iter().all(|&c| c == b'*')
}

/// Matches `c` against the bracket expression at `pat[start]`.
fn class(pat: &[u8], start: usize, c: u8) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negate = matches!(pat.get(i), Some(b'!' | b'^'));
    if negate {
        i += 1;
    }
    let mut hit = false;
    let mut first = true;
    loop {
        let a = *pat.get(i)?;
        if a == b']' && !first {
            return Some((hit != negate, i + 1));
        }
        first = false;
        if pat.get(i + 1) == Some(&b'-') && pat.get(i + 2).is_some_and(|&b| b != b']') {
            let b = *pat.get(i + 2)?;
            hit |= a <= c && c <= b;
            i += 3;
        } else {
            hit |= a == c;
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_bundles_and_dashes() {
        let o = parse(&argv("tar czf a.tgz d")).expect("ok");
        assert_eq!(o.mode, Some(Mode::Create));
        assert!(o.gzip);
        assert_eq!(o.file.as_deref(), Some("a.tgz"));
        assert_eq!(o.operands, vec!["d"]);
        let o = parse(&argv("tar -xzf a.tgz -C out x")).expect("ok");
        assert_eq!(o.mode, Some(Mode::Extract));
        assert_eq!(o.dir.as_deref(), Some("out"));
        assert_eq!(o.operands, vec!["x"]);
        let o = parse(&argv("tar --list --file=a.tar --exclude=*.o")).expect("ok");
        assert_eq!(o.mode, Some(Mode::List));
        assert_eq!(o.excludes, vec!["*.o"]);
        assert!(parse(&argv("tar xf")).is_err());
        assert_eq!(parse(&argv("tar -q")).err().map(|e| e.1), Some(64));
        assert!(parse(&argv("tar cxf a")).is_err());
    }

    #[test]
    fn globs_and_modes() {
        assert!(glob(b"*.o", b"a.o"));
        assert!(!glob(b"*.o", b"a.c"));
        assert!(glob(b"a?[0-9]", b"ab7"));
        assert!(glob(b"[!a]*", b"bc"));
        assert_eq!(perm_string(0o755), "rwxr-xr-x");
        assert_eq!(perm_string(0o4644), "rwSr--r--");
        assert!(!valid_header(&[0u8; 512]));
        assert!(!valid_header(b"junk"));
    }
}
