//! `zip [-rqjDmy0-9] ARCHIVE[.zip] FILE… [-x PATTERN…] [-i PATTERN…]`:
//! `-` as the archive writes it to stdout (the messages then go to
//! stderr), `-` as a file stores stdin. An existing archive is updated as
//! Info-ZIP does: its members keep their order, a named one is replaced
//! (`updating:`), a new one is appended (`  adding:`).

use std::io::{Cursor, Read, Write};
use std::path::PathBuf;

use ::zip::write::SimpleFileOptions;
use ::zip::{CompressionMethod, ZipArchive, ZipWriter};
use flate2::Compression;
use flate2::write::DeflateEncoder;

use super::super::Process;
use super::super::coreutils::tar::{glob, same_file};
use super::super::timefmt::epoch_secs;
use super::{MAX_ARCHIVE, dos_time, percent};
use crate::errors::strerror;

/// Info-ZIP's exit statuses.
const NOTHING_TO_DO: i32 = 12;
const BAD_ARGUMENTS: i32 = 16;
const BAD_ARCHIVE: i32 = 3;
const WRITE_FAILED: i32 = 14;
const CANNOT_CREATE: i32 = 15;
const CANNOT_READ: i32 = 18;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    Symlink,
}

/// One member of the archive being written.
struct Member {
    name: String,
    /// Contents; a symbolic link's target.
    data: Vec<u8>,
    time: ::zip::DateTime,
    /// Permission bits.
    mode: u32,
    kind: Kind,
    /// Deflate makes it smaller (decided once, when it is put in).
    deflate: bool,
}

struct Opts {
    recurse: bool,
    quiet: bool,
    junk_paths: bool,
    no_dir_entries: bool,
    move_files: bool,
    store_links: bool,
    level: u32,
    excludes: Vec<String>,
    includes: Vec<String>,
    archive: Option<String>,
    files: Vec<String>,
}

/// Where arguments that are not options go.
#[derive(Clone, Copy)]
enum Operands {
    Names,
    Excludes,
    Includes,
}

fn parse(argv: &[String]) -> Result<Opts, String> {
    let mut opts = Opts {
        recurse: false,
        quiet: false,
        junk_paths: false,
        no_dir_entries: false,
        move_files: false,
        store_links: false,
        level: 6,
        excludes: Vec::new(),
        includes: Vec::new(),
        archive: None,
        files: Vec::new(),
    };
    let mut into = Operands::Names;
    let mut options_done = false;
    for arg in argv.get(1..).unwrap_or_default() {
        if !options_done && arg == "--" {
            options_done = true;
        } else if !options_done && arg.starts_with("--") {
            into = long_option(&mut opts, arg)?;
        } else if !options_done && arg.len() > 1 && arg.starts_with('-') {
            into = Operands::Names;
            for c in arg.chars().skip(1) {
                if let Some(list) = short_option(&mut opts, c)? {
                    into = list;
                }
            }
        } else {
            match into {
                Operands::Excludes => opts.excludes.push(arg.clone()),
                Operands::Includes => opts.includes.push(arg.clone()),
                Operands::Names if opts.archive.is_none() => opts.archive = Some(arg.clone()),
                Operands::Names => opts.files.push(arg.clone()),
            }
        }
    }
    Ok(opts)
}

/// Applies `-c`; `Some` when the arguments after it are a pattern list.
fn short_option(opts: &mut Opts, c: char) -> Result<Option<Operands>, String> {
    match c {
        'r' | 'R' => opts.recurse = true,
        'q' => opts.quiet = true,
        'j' => opts.junk_paths = true,
        'D' => opts.no_dir_entries = true,
        'm' => opts.move_files = true,
        'y' => opts.store_links = true,
        '0'..='9' => opts.level = c.to_digit(10).unwrap_or(6),
        'x' => return Ok(Some(Operands::Excludes)),
        'i' => return Ok(Some(Operands::Includes)),
        // Accepted and meaningless here: extra attributes, test after
        // writing, update/freshen (every run replaces what it names).
        'X' | 'T' | 'u' | 'f' | 'o' | 'v' => {}
        _ => {
            return Err(format!(
                "Invalid command arguments (short option '{c}' not supported)"
            ));
        }
    }
    Ok(None)
}

fn long_option(opts: &mut Opts, arg: &str) -> Result<Operands, String> {
    match arg.trim_start_matches("--") {
        "recurse-paths" => opts.recurse = true,
        "quiet" => opts.quiet = true,
        "junk-paths" => opts.junk_paths = true,
        "no-dir-entries" => opts.no_dir_entries = true,
        "move" => opts.move_files = true,
        "symlinks" => opts.store_links = true,
        "exclude" => return Ok(Operands::Excludes),
        "include" => return Ok(Operands::Includes),
        "test" | "no-extra" | "update" | "freshen" => {}
        other => {
            return Err(format!(
                "Invalid command arguments (long option '{other}' not supported)"
            ));
        }
    }
    Ok(Operands::Names)
}

pub(crate) fn zip(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let opts = match parse(argv) {
        Ok(opts) => opts,
        Err(msg) => {
            p.out(format!("zip error: {msg}\n").as_bytes());
            return BAD_ARGUMENTS;
        }
    };
    let Some(archive) = opts.archive.clone() else {
        p.out(
            b"Copyright (c) 1990-2008 Info-ZIP - Type 'zip \"-L\"' for software license.\n\
              Zip 3.0 (July 5th 2008). Usage:\n\
              zip [-options] [-b path] [-t mmddyyyy] [-n suffixes] [zipfile list] [-xi list]\n",
        );
        return 0;
    };
    let mut zipper = Zipper {
        archive: with_suffix(archive),
        opts,
        p: &*p,
        members: Vec::new(),
        existing: 0,
        news: Vec::new(),
        changed: 0,
        added_paths: Vec::new(),
        bytes: 0,
        status: 0,
    };
    zipper.run()
}

/// Info-ZIP adds `.zip` to an archive name without a suffix.
fn with_suffix(name: String) -> String {
    let last = name.rsplit('/').next().unwrap_or_default();
    if name == "-" || last.contains('.') {
        name
    } else {
        format!("{name}.zip")
    }
}

struct Zipper<'p, 'a> {
    p: &'p Process<'a>,
    opts: Opts,
    archive: String,
    members: Vec<Member>,
    /// How many members the archive had before.
    existing: usize,
    /// The members this run added or replaced, and how each was stored.
    news: Vec<(usize, String)>,
    /// Members added or replaced by this run.
    changed: usize,
    /// What `-m` removes once the archive is written.
    added_paths: Vec<(PathBuf, bool)>,
    bytes: usize,
    status: i32,
}

impl Zipper<'_, '_> {
    fn run(&mut self) -> i32 {
        let to_stdout = self.archive == "-";
        let archive_path = (!to_stdout).then(|| self.p.resolve(&self.archive));
        if let Some(path) = &archive_path
            && path.exists()
            && let Err(status) = self.load(path)
        {
            return status;
        }
        // Info-ZIP finds every name before it adds any.
        let mut found = Vec::new();
        for file in self.opts.files.clone() {
            if file != "-" && self.p.resolve(&file).symlink_metadata().is_err() {
                self.say(&format!("\tzip warning: name not matched: {file}"));
            } else {
                found.push(file);
            }
        }
        for file in found {
            if file == "-" {
                self.add_stdin();
            } else if !self.add_path(&file, archive_path.as_deref()) {
                return WRITE_FAILED;
            }
        }
        self.report();
        if self.changed == 0 {
            self.say(&format!("\nzip error: Nothing to do! ({})", self.archive));
            return NOTHING_TO_DO;
        }
        let bytes = match self.write() {
            Ok(bytes) => bytes,
            Err(e) => {
                self.say(&format!("zip I/O error: {e}"));
                self.say("zip error: Output file write failure (write error on zip file)");
                return WRITE_FAILED;
            }
        };
        match &archive_path {
            None => {
                self.p.out(&bytes);
            }
            Some(path) => {
                if let Err(e) = std::fs::write(path, &bytes) {
                    self.say(&format!("zip I/O error: {}", strerror(&e)));
                    self.say(&format!(
                        "zip error: Could not create output file ({})",
                        self.archive
                    ));
                    return CANNOT_CREATE;
                }
            }
        }
        if self.opts.move_files {
            self.remove_added();
        }
        self.status
    }

    /// An existing archive's members, to be kept or replaced.
    fn load(&mut self, path: &std::path::Path) -> Result<(), i32> {
        let invalid = |z: &Self| {
            z.say(&format!(
                "\nzip error: Zip file structure invalid ({})",
                z.archive
            ));
            BAD_ARCHIVE
        };
        let raw = std::fs::read(path).map_err(|_| invalid(self))?;
        let mut zip = ZipArchive::new(Cursor::new(raw)).map_err(|_| invalid(self))?;
        for i in 0..zip.len() {
            let mut entry = zip.by_index(i).map_err(|_| invalid(self))?;
            let name = entry.name().map_err(|_| invalid(self))?.into_owned();
            let kind = if entry.is_dir() {
                Kind::Dir
            } else if entry.is_symlink() {
                Kind::Symlink
            } else {
                Kind::File
            };
            let mut data = Vec::new();
            entry.read_to_end(&mut data).map_err(|_| invalid(self))?;
            let deflate = kind == Kind::File && self.deflated_size(&data).is_some();
            self.members.push(Member {
                name,
                data,
                time: entry.last_modified().unwrap_or_default(),
                mode: entry.unix_mode().unwrap_or(0o644) & 0o7777,
                kind,
                deflate,
            });
        }
        self.existing = self.members.len();
        Ok(())
    }

    fn add_stdin(&mut self) {
        let data = self.p.io.stdin.borrow_mut().read_all();
        let now = epoch_secs(std::time::SystemTime::now());
        self.put(Member {
            name: "-".into(),
            data,
            time: dos_time(now),
            mode: 0o600,
            kind: Kind::File,
            deflate: false,
        });
    }

    fn add_path(&mut self, path: &str, archive: Option<&std::path::Path>) -> bool {
        let real = self.p.resolve(path);
        if archive.is_some_and(|a| same_file(a, &real)) {
            return true;
        }
        let link = real.symlink_metadata().is_ok_and(|m| m.is_symlink());
        let meta = if link && self.opts.store_links {
            real.symlink_metadata()
        } else {
            real.metadata()
        };
        let meta = match meta {
            Ok(meta) => meta,
            Err(e) => {
                self.warn_unreadable(path, &e);
                return true;
            }
        };
        let follow = !(link && self.opts.store_links);
        let mode = self
            .p
            .host
            .get_mode(&self.p.host_path(path), follow)
            .map_or(0o644, |m| m & 0o7777);
        let time = dos_time(meta.modified().map_or(0, epoch_secs));
        let name = self.member_name(path);
        if meta.is_dir() {
            return self.add_dir(path, name, time, mode, archive);
        }
        let data = if link && self.opts.store_links {
            std::fs::read_link(&real).map(|t| t.to_string_lossy().into_owned().into_bytes())
        } else {
            std::fs::read(&real)
        };
        let data = match data {
            Ok(data) => data,
            Err(e) => {
                self.warn_unreadable(path, &e);
                return true;
            }
        };
        if self.excluded(&name, false) {
            return true;
        }
        self.bytes = self.bytes.saturating_add(data.len());
        if self.bytes > MAX_ARCHIVE {
            self.say("zip I/O error: File too large");
            return false;
        }
        let kind = if link && self.opts.store_links {
            Kind::Symlink
        } else {
            Kind::File
        };
        self.added_paths.push((real, false));
        self.put(Member {
            name,
            data,
            time,
            mode,
            kind,
            deflate: false,
        })
    }

    fn add_dir(
        &mut self,
        path: &str,
        name: String,
        time: ::zip::DateTime,
        mode: u32,
        archive: Option<&std::path::Path>,
    ) -> bool {
        let real = self.p.resolve(path);
        let entry = format!("{}/", name.trim_end_matches('/'));
        let listed = !self.opts.junk_paths && !self.opts.no_dir_entries && !name.is_empty();
        if listed && !self.excluded(&entry, true) {
            self.put(Member {
                name: entry,
                data: Vec::new(),
                time,
                mode,
                kind: Kind::Dir,
                deflate: false,
            });
        }
        if !self.opts.recurse {
            return true;
        }
        let mut children: Vec<String> = match std::fs::read_dir(&real) {
            Ok(rd) => rd
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
            Err(e) => {
                self.warn_unreadable(path, &e);
                return true;
            }
        };
        children.sort();
        for child in children {
            let child_path = format!("{}/{child}", path.trim_end_matches('/'));
            if !self.add_path(&child_path, archive) {
                return false;
            }
        }
        self.added_paths.push((real, true));
        true
    }

    fn warn_unreadable(&mut self, path: &str, e: &std::io::Error) {
        self.say(&format!(
            "\tzip warning: could not open for reading: {path} ({})",
            strerror(e)
        ));
        self.status = CANNOT_READ;
    }

    /// The member name of a path: relative, without `./`, or only the
    /// file's name with `-j`.
    fn member_name(&self, path: &str) -> String {
        let parts: Vec<&str> = path
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        if self.opts.junk_paths {
            parts.last().copied().unwrap_or_default().to_string()
        } else {
            parts.join("/")
        }
    }

    fn excluded(&self, name: &str, dir: bool) -> bool {
        let matches = |pat: &String| {
            glob(pat.as_bytes(), name.as_bytes())
                || (dir && glob(pat.as_bytes(), name.trim_end_matches('/').as_bytes()))
        };
        self.opts.excludes.iter().any(matches)
            || (!self.opts.includes.is_empty() && !self.opts.includes.iter().any(matches))
    }

    /// Adds or replaces a member and says so, as Info-ZIP does.
    fn put(&mut self, mut member: Member) -> bool {
        let packed = match member.kind {
            Kind::File => self.deflated_size(&member.data),
            _ => None,
        };
        member.deflate = packed.is_some();
        let how = match packed {
            Some(packed) => format!("deflated {}%", percent(member.data.len() as u64, packed)),
            None => "stored 0%".to_string(),
        };
        let at = match self.members.iter().position(|m| m.name == member.name) {
            Some(i) => {
                self.members[i] = member;
                i
            }
            None => {
                self.members.push(member);
                self.members.len() - 1
            }
        };
        self.news.retain(|(i, _)| *i != at);
        self.news.push((at, how));
        self.changed += 1;
        true
    }

    /// What changed, as Info-ZIP says it: the replaced members in the
    /// archive's order, then the added ones.
    fn report(&mut self) {
        if self.opts.quiet {
            return;
        }
        let mut news = std::mem::take(&mut self.news);
        news.sort_by_key(|(i, _)| *i);
        for (i, how) in news {
            let Some(m) = self.members.get(i) else {
                continue;
            };
            let verb = if i < self.existing {
                "updating"
            } else {
                "  adding"
            };
            self.say(&format!("{verb}: {} ({how})", m.name));
        }
    }

    /// Progress, warnings and errors go to stdout, or to stderr when
    /// stdout is the archive (as Info-ZIP does without a terminal).
    fn say(&self, line: &str) {
        if self.archive == "-" {
            self.p.io.err_line(line);
        } else {
            self.p.out(format!("{line}\n").as_bytes());
        }
    }

    /// The Deflate size of `data` at our level, when it is smaller.
    fn deflated_size(&self, data: &[u8]) -> Option<u64> {
        if self.opts.level == 0 || data.is_empty() {
            return None;
        }
        let mut encoder = DeflateEncoder::new(Vec::new(), Compression::new(self.opts.level));
        encoder.write_all(data).ok()?;
        let packed = encoder.finish().ok()?.len();
        (packed < data.len()).then_some(packed as u64)
    }

    fn write(&self) -> ::zip::result::ZipResult<Vec<u8>> {
        let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
        for m in &self.members {
            let options = SimpleFileOptions::default()
                .last_modified_time(m.time)
                .unix_permissions(m.mode);
            match m.kind {
                Kind::Dir => writer.add_directory(m.name.trim_end_matches('/'), options)?,
                Kind::Symlink => writer.add_symlink(
                    m.name.as_str(),
                    String::from_utf8_lossy(&m.data).into_owned(),
                    options,
                )?,
                Kind::File => {
                    let options = if m.deflate {
                        options
                            .compression_method(CompressionMethod::Deflated)
                            .compression_level(Some(i64::from(self.opts.level)))
                    } else {
                        options.compression_method(CompressionMethod::Stored)
                    };
                    writer.start_file(m.name.as_str(), options)?;
                    writer.write_all(&m.data)?;
                }
            }
        }
        Ok(writer.finish()?.into_inner())
    }

    /// `-m`: the files, then the folders, that went into the archive.
    fn remove_added(&self) {
        for (path, dir) in &self.added_paths {
            let _ = if *dir {
                std::fs::remove_dir(path)
            } else {
                std::fs::remove_file(path)
            };
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
    fn options_and_pattern_lists() {
        let o = parse(&argv("zip -r9q out d -x d/sub/* -i *.txt")).unwrap();
        assert!(o.recurse && o.quiet);
        assert_eq!(o.level, 9);
        assert_eq!(o.archive.as_deref(), Some("out"));
        assert_eq!(o.files, ["d"]);
        assert_eq!(o.excludes, ["d/sub/*"]);
        assert_eq!(o.includes, ["*.txt"]);
        assert!(parse(&argv("zip -Z a b")).is_err());
        assert_eq!(with_suffix("out".into()), "out.zip");
        assert_eq!(with_suffix("dir.d/out".into()), "dir.d/out.zip");
        assert_eq!(with_suffix("out.jar".into()), "out.jar");
        assert_eq!(with_suffix("-".into()), "-");
    }
}
