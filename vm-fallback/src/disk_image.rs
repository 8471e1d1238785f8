//! The microVM's read-only disk image: a folder of the host's files made
//! into an ext2 filesystem by e2fsprogs' `mke2fs -d` (Debian's e2fsprogs
//! is on every system), which the guest mounts read-only. ext2 because the
//! guest kernel needs nothing more to read it (no journal, no checksums to
//! compute) and every VM maps its files from the page cache of the one
//! device.
//!
//! Files keep their modes and modification seconds (a component cache's
//! index knows a program's file by them); everything is owned by root.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Block size of the filesystem: a page, so a mapped file's pages are
/// whole blocks.
const BLOCK: u64 = 4096;
/// Room for the filesystem's own structures beyond the files' blocks.
const SLACK_BYTES: u64 = 16 << 20;

/// Why the disk image could not be made.
#[derive(Debug, thiserror::Error)]
pub enum DiskImageError {
    /// A file or folder could not be read, or the image put in place.
    #[error("{path}: {source}")]
    Io {
        /// The path concerned.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    #[error(
        "mke2fs (Debian's e2fsprogs) is needed to make the microVM's disk and was not found: {0}"
    )]
    /// `mke2fs` could not be started.
    NoMke2fs(std::io::Error),
    /// `mke2fs` ran and failed.
    #[error("mke2fs failed on {path}: {why}")]
    Mke2fs {
        /// The image it was making.
        path: PathBuf,
        /// What it printed on stderr.
        why: String,
    },
}

/// Makes `out` (replaced) an ext2 image holding the folder `dir`. Returns
/// its size in bytes.
pub fn build(dir: &Path, out: &Path) -> Result<u64, DiskImageError> {
    let (bytes, inodes) = measure(dir)?;
    // Each file rounds up to a block, plus a tenth for indirect blocks.
    let size = (bytes + bytes / 10 + SLACK_BYTES).div_ceil(BLOCK) * BLOCK;
    let staged = out.with_extension("new");
    let _ = std::fs::remove_file(&staged);
    let result = Command::new(mke2fs())
        .args(["-q", "-F", "-t", "ext2", "-m", "0", "-b"])
        .arg(BLOCK.to_string())
        .arg("-N")
        .arg((inodes + 64).to_string())
        .args(["-E", "root_owner=0:0", "-L", "ephemeral", "-d"])
        .arg(dir)
        .arg(&staged)
        .arg(format!("{}k", size / 1024))
        .output()
        .map_err(DiskImageError::NoMke2fs)?;
    if !result.status.success() {
        let _ = std::fs::remove_file(&staged);
        return Err(DiskImageError::Mke2fs {
            path: out.to_path_buf(),
            why: String::from_utf8_lossy(&result.stderr).trim().to_string(),
        });
    }
    std::fs::rename(&staged, out).map_err(|source| DiskImageError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    Ok(size)
}

/// `mke2fs` from PATH, else where Debian puts it (root's PATH has it,
/// another user's may not).
fn mke2fs() -> PathBuf {
    ["/usr/sbin/mke2fs", "/sbin/mke2fs"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("mke2fs"))
}

/// Bytes (each file rounded up to a block) and entries under `dir`,
/// following no symbolic link.
fn measure(dir: &Path) -> Result<(u64, u64), DiskImageError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DiskImageError::Io { path, source }
    };
    let (mut bytes, mut inodes) = (0, 1);
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let meta = entry.metadata().map_err(io(&entry.path()))?;
        inodes += 1;
        if meta.is_dir() {
            let (b, i) = measure(&entry.path())?;
            bytes += b + BLOCK;
            inodes += i;
        } else {
            bytes += meta.len().div_ceil(BLOCK) * BLOCK;
        }
    }
    Ok((bytes, inodes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_becomes_an_ext2_image() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir_all(src.join("programs/x.root")).unwrap();
        std::fs::write(src.join("programs/x.wasm"), vec![7u8; 100_000]).unwrap();
        std::fs::write(src.join("programs/x.root/lib.zip"), b"zip").unwrap();
        let out = dir.path().join("disk");
        let size = build(&src, &out).unwrap();
        let image = std::fs::read(&out).unwrap();
        assert_eq!(image.len() as u64, size);
        assert_eq!(size % BLOCK, 0);
        // The ext2 superblock sits at byte 1024; its magic at offset 56.
        assert_eq!(&image[1024 + 56..1024 + 58], &[0x53, 0xEF]);
        assert!(!out.with_extension("new").exists());
    }
}
