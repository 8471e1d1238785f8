//! `unzip [-lvtpZ1qonj] ARCHIVE[.zip] [MEMBER…] [-x MEMBER…] [-d DIR]`:
//! extracts (asking before it replaces a file, as Info-ZIP does without a
//! terminal: an answer from stdin, end of input is "[N]one"), lists,
//! tests or pipes the members that match the wildcards. A member's name
//! never leads out of the folder: a leading `/` and every `..` are
//! dropped with Info-ZIP's warnings.

use std::io::{Cursor, Read};
use std::path::Path;

use ::zip::{CompressionMethod, ZipArchive};

use super::super::Process;
use super::super::coreutils::tar::{glob, make_symlink};
use super::super::timefmt::system_time;
use super::{MAX_ARCHIVE, epoch_of, listing_time, percent};
use crate::errors::strerror;

/// Info-ZIP's exit statuses.
const WARNING: i32 = 1;
const ERROR: i32 = 2;
const NOT_FOUND: i32 = 9;
const BAD_USAGE: i32 = 10;
const NO_MATCH: i32 = 11;

const USAGE: &str = "UnZip 6.00 of 20 April 2009, by Debian. Original by Info-ZIP.\n\n\
Usage: unzip [-Z] [-opts[modifiers]] file[.zip] [list] [-x xlist] [-d exdir]\n  \
Default action is to extract files in list, except those in xlist, to exdir;\n  \
file[.zip] may be a wildcard.  -Z => ZipInfo mode (\"unzip -Z\" for usage).\n\n  \
-p  extract files to pipe, no messages     -l  list files (short format)\n  \
-f  freshen existing files, create none    -t  test compressed archive data\n  \
-u  update files, create if necessary      -z  display archive comment only\n  \
-v  list verbosely/show version info       -T  timestamp archive to latest\n  \
-x  exclude files that follow (in xlist)   -d  extract files into exdir\n\
modifiers:\n  \
-n  never overwrite existing files         -q  quiet mode (-qq => quieter)\n  \
-o  overwrite files WITHOUT prompting      -a  auto-convert any text files\n  \
-j  junk paths (do not make directories)   -aa treat ALL files as text\n";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Extract,
    List,
    Verbose,
    Test,
    Pipe,
    Names,
}

struct Opts {
    mode: Mode,
    quiet: u32,
    /// `-o` (true), `-n` (false), or ask.
    overwrite: Option<bool>,
    junk_paths: bool,
    dir: Option<String>,
    archive: Option<String>,
    members: Vec<String>,
    excludes: Vec<String>,
}

fn parse(argv: &[String]) -> Result<Opts, char> {
    let mut opts = Opts {
        mode: Mode::Extract,
        quiet: 0,
        overwrite: None,
        junk_paths: false,
        dir: None,
        archive: None,
        members: Vec::new(),
        excludes: Vec::new(),
    };
    let mut excluding = false;
    let mut args = argv.get(1..).unwrap_or_default().iter();
    while let Some(arg) = args.next() {
        if arg.len() > 1 && arg.starts_with('-') {
            let flags: Vec<char> = arg.chars().skip(1).collect();
            for (i, &c) in flags.iter().enumerate() {
                match c {
                    'l' => opts.mode = Mode::List,
                    'v' => opts.mode = Mode::Verbose,
                    't' => opts.mode = Mode::Test,
                    'p' => opts.mode = Mode::Pipe,
                    'Z' | '1' => opts.mode = Mode::Names,
                    'q' => opts.quiet += 1,
                    'o' => opts.overwrite = Some(true),
                    'n' => opts.overwrite = Some(false),
                    'j' => opts.junk_paths = true,
                    'x' => excluding = true,
                    'd' => {
                        let rest: String = flags.get(i + 1..).unwrap_or_default().iter().collect();
                        opts.dir = if rest.is_empty() {
                            args.next().cloned()
                        } else {
                            Some(rest)
                        };
                        break;
                    }
                    // Accepted, meaningless here: text conversion, case,
                    // owners, freshen/update (replace what is named).
                    'a' | 'C' | 'L' | 'X' | 'K' | 'U' | 'V' | 'f' | 'u' | 'D' | 'T' => {}
                    other => return Err(other),
                }
            }
        } else if opts.archive.is_none() {
            opts.archive = Some(arg.clone());
        } else if excluding {
            opts.excludes.push(arg.clone());
        } else {
            opts.members.push(arg.clone());
        }
    }
    Ok(opts)
}

pub(crate) fn unzip(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let opts = match parse(argv) {
        Ok(opts) => opts,
        Err(_) => {
            p.out(USAGE.as_bytes());
            return BAD_USAGE;
        }
    };
    let Some(name) = opts.archive.clone() else {
        p.out(USAGE.as_bytes());
        return 0;
    };
    let Some((shown, raw)) = find_archive(p, &name) else {
        p.io.err_line(&format!(
            "unzip:  cannot find or open {name}, {name}.zip or {name}.ZIP."
        ));
        return NOT_FOUND;
    };
    if opts.mode != Mode::Pipe && opts.mode != Mode::Names && opts.quiet == 0 {
        p.out(format!("Archive:  {shown}\n").as_bytes());
    }
    let Ok(archive) = ZipArchive::new(Cursor::new(raw)) else {
        p.io.err_line(
            "  End-of-central-directory signature not found.  Either this file is not\n  \
             a zipfile, or it constitutes one disk of a multi-part archive.  In the\n  \
             latter case the central directory and zipfile comment will be found on\n  \
             the last disk(s) of this archive.",
        );
        p.io.err_line(&format!(
            "unzip:  cannot find zipfile directory in one of {name} or\n        \
             {name}.zip, and cannot find {name}.ZIP, period."
        ));
        return NOT_FOUND;
    };
    let mut unzipper = Unzipper {
        p: &*p,
        opts,
        archive,
        shown,
        status: 0,
    };
    unzipper.run()
}

/// The archive's name as found (`NAME`, `NAME.zip`, `NAME.ZIP`) and its
/// bytes.
fn find_archive(p: &Process<'_>, name: &str) -> Option<(String, Vec<u8>)> {
    [
        name.to_string(),
        format!("{name}.zip"),
        format!("{name}.ZIP"),
    ]
    .into_iter()
    .find_map(|candidate| {
        let path = p.resolve(&candidate);
        if !path.is_file() || path.metadata().ok()?.len() > MAX_ARCHIVE as u64 {
            return None;
        }
        std::fs::read(&path).ok().map(|raw| (candidate, raw))
    })
}

struct Unzipper<'p, 'a> {
    p: &'p Process<'a>,
    opts: Opts,
    archive: ZipArchive<Cursor<Vec<u8>>>,
    shown: String,
    status: i32,
}

/// What a listing needs of a member.
struct Entry {
    index: usize,
    name: String,
    size: u64,
    packed: u64,
    stored: bool,
    crc: u32,
    time: Option<::zip::DateTime>,
    symlink: bool,
    mode: Option<u32>,
}

impl Unzipper<'_, '_> {
    fn run(&mut self) -> i32 {
        let entries = self.selected();
        match self.opts.mode {
            Mode::List => self.list(&entries),
            Mode::Verbose => self.list_verbose(&entries),
            Mode::Names => {
                for e in &entries {
                    self.p.out(format!("{}\n", e.name).as_bytes());
                }
            }
            Mode::Test => self.test(&entries),
            Mode::Pipe => self.pipe(&entries),
            Mode::Extract => self.extract(&entries),
        }
        self.status
    }

    fn warn(&mut self, status: i32) {
        self.status = self.status.max(status);
    }

    /// The members the wildcards choose, in the archive's order; the
    /// patterns that chose none are named.
    fn selected(&mut self) -> Vec<Entry> {
        let mut matched = vec![false; self.opts.members.len()];
        let mut out = Vec::new();
        for index in 0..self.archive.len() {
            let Ok(file) = self.archive.by_index_raw(index) else {
                continue;
            };
            let Ok(name) = file.name().map(|n| n.into_owned()) else {
                continue;
            };
            let hits = |pat: &String| glob(pat.as_bytes(), name.as_bytes());
            let mut chosen = self.opts.members.is_empty();
            for (i, pat) in self.opts.members.iter().enumerate() {
                if hits(pat) {
                    matched[i] = true;
                    chosen = true;
                }
            }
            if !chosen || self.opts.excludes.iter().any(hits) {
                continue;
            }
            out.push(Entry {
                index,
                size: file.size(),
                packed: file.compressed_size(),
                stored: file.compression() == CompressionMethod::Stored,
                crc: file.crc32(),
                time: file.last_modified(),
                symlink: file.is_symlink(),
                mode: file.unix_mode(),
                name,
            });
        }
        // The listings count a pattern that chose nothing in the status
        // only, as Info-ZIP does.
        let listing = matches!(self.opts.mode, Mode::List | Mode::Verbose);
        for (pat, hit) in self.opts.members.clone().iter().zip(matched) {
            if !hit {
                if !listing {
                    self.p
                        .io
                        .err_line(&format!("caution: filename not matched:  {pat}"));
                }
                self.warn(NO_MATCH);
            }
        }
        out
    }

    fn list(&self, entries: &[Entry]) {
        let mut text = String::from(
            "  Length      Date    Time    Name\n---------  ---------- -----   ----\n",
        );
        for e in entries {
            text.push_str(&format!(
                "{:>9}  {}   {}\n",
                e.size,
                listing_time(e.time),
                e.name
            ));
        }
        let total: u64 = entries.iter().map(|e| e.size).sum();
        text.push_str(&format!(
            "---------                     -------\n{total:>9}                     {}\n",
            count(entries.len())
        ));
        self.p.out(text.as_bytes());
    }

    fn list_verbose(&self, entries: &[Entry]) {
        let mut text = String::from(
            " Length   Method    Size  Cmpr    Date    Time   CRC-32   Name\n\
             --------  ------  ------- ---- ---------- ----- --------  ----\n",
        );
        for e in entries {
            let method = if e.stored { "Stored" } else { "Defl:N" };
            text.push_str(&format!(
                "{:>8}  {method}  {:>7} {:>3}% {} {:08x}  {}\n",
                e.size,
                e.packed,
                percent(e.size, e.packed),
                listing_time(e.time),
                e.crc,
                e.name
            ));
        }
        let size: u64 = entries.iter().map(|e| e.size).sum();
        let packed: u64 = entries.iter().map(|e| e.packed).sum();
        text.push_str(&format!(
            "--------          -------  ---                            -------\n\
             {size:>8}          {packed:>7} {:>3}%                            {}\n",
            percent(size, packed),
            count(entries.len())
        ));
        self.p.out(text.as_bytes());
    }

    /// A member's contents; `None` (said) when they do not decompress.
    fn contents(&mut self, e: &Entry) -> Option<Vec<u8>> {
        let mut data = Vec::new();
        let read = self
            .archive
            .by_index(e.index)
            .map_err(|err| err.to_string())
            .and_then(|mut f| f.read_to_end(&mut data).map_err(|err| err.to_string()));
        match read {
            Ok(_) => Some(data),
            Err(why) => {
                self.p.io.err_line(&format!("  error:  {}: {why}", e.name));
                self.warn(ERROR);
                None
            }
        }
    }

    fn test(&mut self, entries: &[Entry]) {
        let mut bad = 0;
        for e in entries {
            let ok = self.contents(e).is_some();
            if !ok {
                bad += 1;
            }
            if self.opts.quiet == 0 {
                let verdict = if ok { "OK" } else { "bad" };
                self.p
                    .out(format!("    testing: {:<22}   {verdict}\n", e.name).as_bytes());
            }
        }
        if bad == 0 && self.status == 0 {
            self.p.out(
                format!("No errors detected in compressed data of {}.\n", self.shown).as_bytes(),
            );
        } else {
            self.p
                .out(format!("At least one error was detected in {}.\n", self.shown).as_bytes());
        }
    }

    fn pipe(&mut self, entries: &[Entry]) {
        for e in entries {
            if e.name.ends_with('/') {
                continue;
            }
            if let Some(data) = self.contents(e)
                && !self.p.out(&data)
            {
                return;
            }
        }
    }

    fn extract(&mut self, entries: &[Entry]) {
        if let Some(dir) = self.opts.dir.clone() {
            let path = self.p.resolve(&dir);
            if !path.is_dir()
                && let Err(e) = std::fs::create_dir(&path)
            {
                self.p.io.err_line(&format!(
                    "checkdir:  cannot create extraction directory: {dir}\n           {}",
                    strerror(&e)
                ));
                self.warn(ERROR);
                return;
            }
        }
        for e in entries {
            if !self.extract_one(e) {
                return;
            }
        }
    }

    /// The relative path a member is written to, with Info-ZIP's
    /// warnings for what was dropped.
    fn safe_path(&mut self, name: &str) -> String {
        if name.starts_with('/') {
            self.p.io.err_line(&format!(
                "warning:  stripped absolute path spec from {name}"
            ));
            self.warn(WARNING);
        }
        let parts: Vec<&str> = name
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        if parts.contains(&"..") {
            self.p.io.err_line(&format!(
                "warning:  skipped \"../\" path component(s) in {name}"
            ));
            self.warn(WARNING);
        }
        let kept: Vec<&str> = parts.into_iter().filter(|c| *c != "..").collect();
        if self.opts.junk_paths {
            kept.last().copied().unwrap_or_default().to_string()
        } else {
            kept.join("/")
        }
    }

    /// Writes one member; false when the reader of the output is gone.
    fn extract_one(&mut self, e: &Entry) -> bool {
        let is_dir = e.name.ends_with('/');
        if is_dir && self.opts.junk_paths {
            return true;
        }
        let rel = self.safe_path(&e.name);
        if rel.is_empty() {
            return true;
        }
        let shown = match &self.opts.dir {
            Some(dir) => format!("{}/{rel}", dir.trim_end_matches('/')),
            None => rel,
        };
        let path = self.p.resolve(&shown);
        if is_dir {
            if !path.is_dir() {
                if let Err(err) = std::fs::create_dir_all(&path) {
                    self.cannot_create(&shown, &err);
                    return true;
                }
                return self.say(&format!("   creating: {shown}/"));
            }
            return true;
        }
        if path.symlink_metadata().is_ok() {
            match self.may_replace(&shown) {
                Replace::Yes => {}
                Replace::No => return true,
                Replace::Rename(other) => {
                    let renamed = self.p.resolve(&other);
                    return self.write_member(e, &renamed, &other);
                }
            }
        }
        self.write_member(e, &path, &shown)
    }

    fn write_member(&mut self, e: &Entry, path: &Path, shown: &str) -> bool {
        let verb = if e.stored {
            " extracting: "
        } else {
            "  inflating: "
        };
        let Some(data) = self.contents(e) else {
            return true;
        };
        if let Some(parent) = path.parent()
            && let Err(err) = std::fs::create_dir_all(parent)
        {
            self.cannot_create(shown, &err);
            return true;
        }
        if path.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
            let _ = std::fs::remove_file(path);
        }
        if e.symlink {
            let target = String::from_utf8_lossy(&data).into_owned();
            if let Err(err) = make_symlink(&target, path) {
                self.cannot_create(shown, &err);
                return true;
            }
            return self.say(&format!("    linking: {shown}  -> {target} "));
        }
        if !self.say(&format!("{verb}{shown:<22}  ")) {
            return false;
        }
        let written = std::fs::File::create(path).and_then(|mut f| {
            std::io::Write::write_all(&mut f, &data)?;
            if let Some(t) = e.time {
                let _ = f.set_modified(system_time(epoch_of(t)));
            }
            Ok(())
        });
        match written {
            Ok(()) => {
                if let Some(mode) = e.mode {
                    let _ = self
                        .p
                        .host
                        .set_mode(&self.p.host_path(&path.to_string_lossy()), mode & 0o7777);
                }
            }
            Err(err) => self.cannot_create(shown, &err),
        }
        true
    }

    fn cannot_create(&mut self, shown: &str, err: &std::io::Error) {
        self.p.io.err_line(&format!(
            "error:  cannot create {shown}\n        {}",
            strerror(err)
        ));
        self.warn(WARNING);
    }

    /// A progress line (unless `-q`); false once stdout is gone.
    fn say(&self, line: &str) -> bool {
        self.opts.quiet > 0 || self.p.out(format!("{line}\n").as_bytes())
    }

    /// Info-ZIP's question before it replaces a file, answered from
    /// stdin; `-o`/`-n` and the answers `A`/`N` decide for the rest.
    fn may_replace(&mut self, shown: &str) -> Replace {
        match self.opts.overwrite {
            Some(true) => return Replace::Yes,
            Some(false) => return Replace::No,
            None => {}
        }
        self.p
            .io
            .err(format!("replace {shown}? [y]es, [n]o, [A]ll, [N]one, [r]ename: ").as_bytes());
        let Some(answer) = self.read_line() else {
            self.p
                .io
                .err_line(" NULL\n(EOF or read error, treating as \"[N]one\" ...)");
            self.opts.overwrite = Some(false);
            self.warn(WARNING);
            return Replace::No;
        };
        match answer.trim() {
            "y" | "Y" => Replace::Yes,
            "A" => {
                self.opts.overwrite = Some(true);
                Replace::Yes
            }
            "N" => {
                self.opts.overwrite = Some(false);
                Replace::No
            }
            "r" | "R" => {
                self.p.io.err(b"new name: ");
                match self.read_line().map(|l| l.trim().to_string()) {
                    Some(name) if !name.is_empty() => Replace::Rename(name),
                    _ => Replace::No,
                }
            }
            _ => Replace::No,
        }
    }

    /// One line of stdin; `None` at its end.
    fn read_line(&self) -> Option<String> {
        let mut line = Vec::new();
        let mut stdin = self.p.io.stdin.borrow_mut();
        loop {
            match stdin.read_byte() {
                Some(b'\n') => break,
                Some(b) => line.push(b),
                None if line.is_empty() => return None,
                None => break,
            }
        }
        Some(String::from_utf8_lossy(&line).into_owned())
    }
}

enum Replace {
    Yes,
    No,
    Rename(String),
}

/// `1 file`, `4 files`.
fn count(n: usize) -> String {
    if n == 1 {
        "1 file".to_string()
    } else {
        format!("{n} files")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn members_excludes_and_the_folder() {
        let o = parse(&argv("unzip -oq a.zip d/* -x d/b -d out")).unwrap();
        assert_eq!(o.archive.as_deref(), Some("a.zip"));
        assert_eq!(o.members, ["d/*"]);
        assert_eq!(o.excludes, ["d/b"]);
        assert_eq!(o.dir.as_deref(), Some("out"));
        assert_eq!(o.overwrite, Some(true));
        assert_eq!(o.quiet, 1);
        assert!(parse(&argv("unzip -Z1 a.zip")).unwrap().mode == Mode::Names);
        assert_eq!(
            parse(&argv("unzip -dout a.zip")).unwrap().dir.as_deref(),
            Some("out")
        );
        assert!(parse(&argv("unzip -% a.zip")).is_err());
    }
}
