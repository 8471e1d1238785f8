//! A sandbox's files as its user reaches them from outside: put a file a
//! chunk at a time (the quotas count each chunk as it arrives, and a file
//! that does not fit is removed, never left half-written), read it a chunk
//! at a time, see one, list a folder, remove one, and find the files that
//! match glob patterns (a run's `outputs`).
//!
//! A path is the user's: relative to the scratch folder, or absolute under
//! `/tmp`, with no `..` and no NUL. Everything is done as the sandbox's own
//! user, with its permissions: what a command of its own could not read or
//! write, this cannot either.

use std::time::Duration;

use crate::memfs::{FsErr, NodeType, OpenSpec, ROOT};
use crate::sandbox::Sandbox;

/// The most one read returns.
pub const MAX_CHUNK: usize = 1 << 20;

/// Why a file operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileError {
    /// The path is not one a user of the sandbox may name.
    #[error(
        "{0}: not a path in the sandbox (relative to the scratch folder, or under /tmp, without `..`)"
    )]
    BadPath(String),
    /// Nothing at the path.
    #[error("{0}: no such file or folder")]
    NotFound(String),
    /// A file was wanted and the path is a folder.
    #[error("{0}: is a folder")]
    IsFolder(String),
    /// A folder was wanted and the path is something else.
    #[error("{0}: not a folder")]
    NotFolder(String),
    /// The sandbox's user may not do this there.
    #[error("{0}: permission denied")]
    Denied(String),
    /// The sandbox's disk quota (bytes or files) is used up.
    #[error("{path}: {why}")]
    Quota {
        /// The path the operation was on.
        path: String,
        /// `NoSpace` for bytes, `Quota` for files, or `FileTooLarge`.
        why: FsErr,
    },
    /// Any other filesystem failure.
    #[error("{path}: {why}")]
    Other {
        /// The path the operation was on.
        path: String,
        /// The failure, by errno.
        why: FsErr,
    },
}

/// What kind of thing a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file (or a device).
    File,
    /// A folder.
    Dir,
    /// A symlink, not followed.
    Symlink,
}

/// One file or folder, as a listing shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// The absolute path, as the sandbox sees it.
    pub path: String,
    /// A file, folder or symlink.
    pub kind: FileKind,
    /// Bytes: a file's length, a symlink's target's, 4096 for a folder.
    pub size: u64,
    /// Permission bits (`0o644`).
    pub mode: u32,
    /// Last modified, since the Unix epoch.
    pub modified: Duration,
}

impl Sandbox {
    /// `path` made absolute and checked (see the module docs).
    pub fn user_path(&self, path: &str) -> Result<String, FileError> {
        let bad = || FileError::BadPath(path.to_string());
        if path.is_empty() || path.contains('\0') || path.split('/').any(|c| c == "..") {
            return Err(bad());
        }
        let full = match path.starts_with('/') {
            true => path.to_string(),
            false => format!("{}/{path}", self.scratch_dir()),
        };
        // `.` and doubled or trailing slashes name the same place: one
        // spelling of each path.
        let parts: Vec<&str> = full
            .split('/')
            .filter(|part| !part.is_empty() && *part != ".")
            .collect();
        let full = format!("/{}", parts.join("/"));
        let under_tmp = full == "/tmp" || full.starts_with("/tmp/");
        if !under_tmp {
            return Err(bad());
        }
        Ok(full)
    }

    /// Writes `data` at `offset` of the file at `path`: created (with its
    /// folders) or emptied when `offset` is 0, appended to otherwise. The
    /// quotas count the bytes as they arrive; a write that does not fit
    /// removes the file. Returns the file's size.
    pub fn write_file_at(
        &mut self,
        path: &str,
        offset: u64,
        data: &[u8],
    ) -> Result<u64, FileError> {
        let full = self.user_path(path)?;
        let mut fs = self.fs().lock();
        let start = offset == 0;
        if start && let Some((dir, _)) = full.rsplit_once('/') {
            mkdirs(&mut fs, dir).map_err(|e| fs_error(&full, e))?;
        }
        let spec = OpenSpec {
            follow: true,
            create: start,
            truncate: start,
            write: true,
            ..OpenSpec::default()
        };
        let written = fs.open(ROOT, &full, spec).and_then(|id| {
            if fs.node_type(id)? == NodeType::Dir {
                return Err(FsErr::IsDirectory);
            }
            fs.write(id, offset, data)?;
            Ok(fs.stat(id)?.size)
        });
        match written {
            Ok(size) => Ok(size),
            Err(e) => {
                // Nothing half-written remains of a file that did not fit.
                if matches!(e, FsErr::Quota | FsErr::NoSpace | FsErr::FileTooLarge) {
                    let _ = fs.unlink(ROOT, &full);
                }
                Err(fs_error(&full, e))
            }
        }
    }

    /// At most `len` bytes (and [`MAX_CHUNK`]) of the file at `path` from
    /// `offset`; empty at its end.
    pub fn read_file_at(&self, path: &str, offset: u64, len: usize) -> Result<Vec<u8>, FileError> {
        let full = self.user_path(path)?;
        let mut fs = self.fs().lock();
        let spec = OpenSpec {
            follow: true,
            read: true,
            ..OpenSpec::default()
        };
        fs.open(ROOT, &full, spec)
            .and_then(|id| match fs.node_type(id)? {
                NodeType::Dir => Err(FsErr::IsDirectory),
                _ => fs.read(id, offset, len.min(MAX_CHUNK)),
            })
            .map_err(|e| fs_error(&full, e))
    }

    /// What is at `path` (a link is not followed).
    pub fn file_info(&self, path: &str) -> Result<FileInfo, FileError> {
        let full = self.user_path(path)?;
        let fs = self.fs().lock();
        info(&fs, &full, false).map_err(|e| fs_error(&full, e))
    }

    /// The folder at `path`, entry by entry, sorted by name.
    pub fn list_dir(&self, path: &str) -> Result<Vec<FileInfo>, FileError> {
        let full = self.user_path(path)?;
        let fs = self.fs().lock();
        let listed = fs.lookup(ROOT, &full, true).and_then(|dir| {
            if !fs.may(dir, crate::memfs::MAY_READ)? {
                return Err(FsErr::Access);
            }
            let mut names = fs.readdir(dir)?;
            names.sort_by(|a, b| a.0.cmp(&b.0));
            names
                .into_iter()
                .map(|(name, _)| info(&fs, &format!("{full}/{name}"), false))
                .collect::<Result<Vec<_>, FsErr>>()
        });
        listed.map_err(|e| fs_error(&full, e))
    }

    /// Removes the file (or link) at `path`; a folder is refused.
    pub fn remove_file(&mut self, path: &str) -> Result<(), FileError> {
        let full = self.user_path(path)?;
        self.fs()
            .lock()
            .unlink(ROOT, &full)
            .map_err(|e| fs_error(&full, e))
    }

    /// The regular files that match any of `patterns` (relative to the
    /// scratch folder, or absolute under `/tmp`; `*` and `?` within a name,
    /// `**` across folders), sorted; the paths that matched but are not
    /// regular files are named apart.
    pub fn glob(&self, patterns: &[String]) -> Result<(Vec<FileInfo>, Vec<String>), FileError> {
        let fs = self.fs().lock();
        let mut found = Vec::new();
        let mut all = Vec::new();
        walk(&fs, "/tmp", &mut all);
        let mut others = Vec::new();
        for pattern in patterns {
            let full = self.user_path(pattern)?;
            for (path, kind) in &all {
                if matches_glob(&full, path) {
                    match kind {
                        NodeType::File => {
                            if let Ok(i) = info(&fs, path, false) {
                                found.push(i);
                            }
                        }
                        NodeType::Dir => {}
                        _ => others.push(path.clone()),
                    }
                }
            }
        }
        found.sort_by(|a, b| a.path.cmp(&b.path));
        found.dedup_by(|a, b| a.path == b.path);
        others.sort();
        others.dedup();
        Ok((found, others))
    }
}

fn mkdirs(fs: &mut crate::memfs::Tree, dir: &str) -> Result<(), FsErr> {
    let mut path = String::new();
    for part in dir.split('/').filter(|p| !p.is_empty()) {
        path.push('/');
        path.push_str(part);
        match fs.lookup(ROOT, &path, true) {
            Ok(id) if fs.node_type(id)? == NodeType::Dir => {}
            Ok(_) => return Err(FsErr::NotDirectory),
            Err(FsErr::NoEntry) => {
                fs.mkdir(ROOT, &path)?;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn info(fs: &crate::memfs::Tree, path: &str, follow: bool) -> Result<FileInfo, FsErr> {
    let id = fs.lookup(ROOT, path, follow)?;
    let stat = fs.stat(id)?;
    let kind = match stat.node_type {
        NodeType::Dir => FileKind::Dir,
        NodeType::Symlink => FileKind::Symlink,
        NodeType::File | NodeType::CharDevice => FileKind::File,
    };
    Ok(FileInfo {
        path: path.to_string(),
        kind,
        size: stat.size,
        mode: stat.mode & 0o7777,
        modified: stat.mtime,
    })
}

/// Every path under `dir` the walk can read, with its type.
fn walk(fs: &crate::memfs::Tree, dir: &str, out: &mut Vec<(String, NodeType)>) {
    let Ok(id) = fs.lookup(ROOT, dir, false) else {
        return;
    };
    if !fs.may(id, crate::memfs::MAY_READ).unwrap_or(false) {
        return;
    }
    let Ok(entries) = fs.readdir(id) else {
        return;
    };
    for (name, kind) in entries {
        let path = format!("{dir}/{name}");
        if kind == NodeType::Dir {
            walk(fs, &path, out);
        }
        out.push((path, kind));
    }
}

/// Whether `path` matches `pattern`: `*` and `?` within one name, `**` as
/// a whole name for any number of folders.
pub(crate) fn matches_glob(pattern: &str, path: &str) -> bool {
    let pat: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    let got: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    match_parts(&pat, &got)
}

fn match_parts(pat: &[&str], got: &[&str]) -> bool {
    match (pat.first(), got.first()) {
        (None, None) => true,
        (Some(&"**"), _) => {
            match_parts(&pat[1..], got) || (!got.is_empty() && match_parts(pat, &got[1..]))
        }
        (Some(p), Some(g)) => {
            match_name(p.as_bytes(), g.as_bytes()) && match_parts(&pat[1..], &got[1..])
        }
        _ => false,
    }
}

fn match_name(pat: &[u8], name: &[u8]) -> bool {
    match (pat.first(), name.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            match_name(&pat[1..], name) || (!name.is_empty() && match_name(pat, &name[1..]))
        }
        (Some(b'?'), Some(_)) => match_name(&pat[1..], &name[1..]),
        (Some(p), Some(n)) if p == n => match_name(&pat[1..], &name[1..]),
        _ => false,
    }
}

fn fs_error(path: &str, e: FsErr) -> FileError {
    let path = path.to_string();
    match e {
        FsErr::NoEntry => FileError::NotFound(path),
        FsErr::IsDirectory => FileError::IsFolder(path),
        FsErr::NotDirectory => FileError::NotFolder(path),
        FsErr::Access | FsErr::NotPermitted => FileError::Denied(path),
        FsErr::Quota | FsErr::NoSpace | FsErr::FileTooLarge => FileError::Quota { path, why: e },
        other => FileError::Other { path, why: other },
    }
}

#[cfg(test)]
mod tests {
    use super::matches_glob;

    #[test]
    fn globs_match_names_and_folders() {
        let s = "/tmp/r/scratch";
        assert!(matches_glob(
            &format!("{s}/*.png"),
            &format!("{s}/chart.png")
        ));
        assert!(!matches_glob(
            &format!("{s}/*.png"),
            &format!("{s}/out/chart.png")
        ));
        assert!(matches_glob(
            &format!("{s}/out/**"),
            &format!("{s}/out/a/b.txt")
        ));
        assert!(matches_glob(
            &format!("{s}/**/*.md"),
            &format!("{s}/report.md")
        ));
        assert!(matches_glob(
            &format!("{s}/**/*.md"),
            &format!("{s}/a/b/c.md")
        ));
        assert!(matches_glob(
            &format!("{s}/r?port.md"),
            &format!("{s}/report.md")
        ));
        assert!(!matches_glob(
            &format!("{s}/r?port.md"),
            &format!("{s}/rport.md")
        ));
        assert!(matches_glob("/tmp/*.txt", "/tmp/proof.txt"));
    }
}
