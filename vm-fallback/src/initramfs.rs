//! The guest's initramfs, generated here (newc cpio, uncompressed): the
//! init program and what it needs, plus the one device node the kernel
//! wants before init runs, `/dev/console`, since devtmpfs is not mounted
//! over an initramfs. Everything is owned by root; nothing comes from the
//! host's filesystem but the files named.

use std::io::{self, Write};

use cpio::newc::Builder;

/// Character device numbers of `/dev/console` (devices.txt: 5, 1).
const CONSOLE_MAJOR: u32 = 5;
const CONSOLE_MINOR: u32 = 1;
const S_IFDIR: u32 = 0o040_000;
const S_IFREG: u32 = 0o100_000;
const S_IFCHR: u32 = 0o020_000;
const S_IFLNK: u32 = 0o120_000;

/// One entry of the archive.
#[derive(Debug, Clone)]
pub enum Entry {
    /// A folder, mode 0755.
    Dir {
        /// Its path in the archive, with no leading `/`.
        path: String,
    },
    /// A regular file.
    File {
        /// Its path in the archive, with no leading `/`.
        path: String,
        /// Permission bits.
        mode: u32,
        /// Its contents.
        data: Vec<u8>,
        /// Modification time, seconds since the epoch: a copied file keeps
        /// its own (what a component cache's index knows it by).
        mtime: u32,
    },
    /// A symbolic link at `path` to `target`.
    Symlink {
        /// Its path in the archive, with no leading `/`.
        path: String,
        /// What it points at.
        target: String,
    },
}

/// An archive with `init` as `/init`, the folders a guest expects, and
/// `files`.
pub fn build(init: &[u8], files: &[Entry]) -> io::Result<Vec<u8>> {
    let mut entries = vec![
        Entry::Dir { path: "dev".into() },
        Entry::Dir {
            path: "proc".into(),
        },
        Entry::Dir { path: "sys".into() },
        Entry::Dir { path: "tmp".into() },
        Entry::File {
            path: "init".into(),
            mode: 0o755,
            data: init.to_vec(),
            mtime: 0,
        },
    ];
    entries.extend_from_slice(files);
    let mut out = Vec::with_capacity(init.len() + 4096);
    let mut ino = 1;
    for entry in &entries {
        ino += 1;
        out = write_entry(out, entry, ino)?;
    }
    ino += 1;
    let console = Builder::new("dev/console")
        .ino(ino)
        .mode(S_IFCHR | 0o600)
        .nlink(1)
        .rdev_major(CONSOLE_MAJOR)
        .rdev_minor(CONSOLE_MINOR);
    out = console.write(out, 0).finish()?;
    cpio::newc::trailer(out)
}

fn write_entry(out: Vec<u8>, entry: &Entry, ino: u32) -> io::Result<Vec<u8>> {
    match entry {
        Entry::Dir { path } => Builder::new(path)
            .ino(ino)
            .mode(S_IFDIR | 0o755)
            .nlink(2)
            .write(out, 0)
            .finish(),
        Entry::File {
            path,
            mode,
            data,
            mtime,
        } => {
            let len = u32::try_from(data.len())
                .map_err(|_| io::Error::other(format!("{path} is too big for a cpio archive")))?;
            let mut w = Builder::new(path)
                .ino(ino)
                .mode(S_IFREG | mode)
                .nlink(1)
                .mtime(*mtime)
                .write(out, len);
            w.write_all(data)?;
            w.finish()
        }
        Entry::Symlink { path, target } => {
            let len = u32::try_from(target.len())
                .map_err(|_| io::Error::other(format!("{path}: link too long")))?;
            let mut w = Builder::new(path)
                .ino(ino)
                .mode(S_IFLNK | 0o777)
                .nlink(1)
                .write(out, len);
            w.write_all(target.as_bytes())?;
            w.finish()
        }
    }
}

/// When `path` was last modified, in whole seconds (0 if unknown): what
/// an archive keeps of a copied file's time.
pub fn mtime_seconds(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path)
        .ok()
        .and_then(|m| u32::try_from(m.mtime()).ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_archive_holds_init_and_the_console() {
        let link = Entry::Symlink {
            path: "link".into(),
            target: "/disk/x".into(),
        };
        let archive = build(b"\x7fELF...", &[link]).unwrap();
        let mut names = Vec::new();
        let mut rest: &[u8] = &archive;
        loop {
            let reader = cpio::NewcReader::new(rest).unwrap();
            if reader.entry().is_trailer() {
                break;
            }
            names.push((reader.entry().name().to_string(), reader.entry().mode()));
            rest = reader.finish().unwrap();
        }
        assert!(names.contains(&("init".to_string(), S_IFREG | 0o755)));
        assert!(names.contains(&("link".to_string(), S_IFLNK | 0o777)));
        assert!(names.contains(&("dev/console".to_string(), S_IFCHR | 0o600)));
        assert_eq!(archive.len() % 4, 0);
    }
}
