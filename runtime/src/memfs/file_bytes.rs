//! A file's bytes in the tree: owned, or a host file mapped read-only.
//!
//! Both are shared copy-on-write: a sandbox cloned from the system layout
//! holds the same bytes until it writes the file. A mapped file (a
//! program's read-only root, tens of MB) is also shared between worker
//! processes through the page cache, so a hundred jailed workers cost its
//! size once rather than a hundred times, and a worker that never runs the
//! program never reads it.

use std::fs::File;
use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

use memmap2::Mmap;

/// Files smaller than this are read: a mapping costs a page at least and a
/// syscall to set up, which a few hundred bytes do not repay.
const MAP_FROM_BYTES: u64 = 64 << 10;

/// A file's contents: read into memory, or mapped from a host file.
#[derive(Clone)]
pub enum FileBytes {
    /// Bytes in memory: small host files, and every file once written.
    Owned(Arc<Vec<u8>>),
    /// A large host file, mapped read-only; copied into memory on first write.
    Mapped(Arc<Mmap>),
}

impl FileBytes {
    /// The bytes of the host file at `path`, mapped when it is large.
    ///
    /// The file must not change while it is mapped: it is one of the
    /// programs folder's read-only files, which the runtime never writes
    /// and the build replaces only by renaming a new file over it (the
    /// mapping keeps the old one).
    pub fn from_host_file(path: &Path) -> std::io::Result<FileBytes> {
        let file = File::open(path)?;
        if file.metadata()?.len() < MAP_FROM_BYTES {
            return std::fs::read(path).map(|bytes| FileBytes::Owned(Arc::new(bytes)));
        }
        // SAFETY: the mapping is read-only and private to this process;
        // the file is never written in place (see above), so its bytes do
        // not change under the slices handed out.
        let map = unsafe { Mmap::map(&file) }?;
        Ok(FileBytes::Mapped(Arc::new(map)))
    }

    /// The bytes to change in place, copied first if anyone else holds
    /// them or they are mapped.
    pub fn make_mut(&mut self) -> &mut Vec<u8> {
        if let FileBytes::Mapped(map) = self {
            *self = FileBytes::Owned(Arc::new(map.to_vec()));
        }
        match self {
            FileBytes::Owned(bytes) => Arc::make_mut(bytes),
            FileBytes::Mapped(_) => unreachable!("replaced just above"),
        }
    }
}

impl Default for FileBytes {
    fn default() -> Self {
        FileBytes::Owned(Arc::default())
    }
}

impl Deref for FileBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Owned(bytes) => bytes,
            FileBytes::Mapped(map) => map,
        }
    }
}

impl std::fmt::Debug for FileBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            FileBytes::Owned(_) => "owned",
            FileBytes::Mapped(_) => "mapped",
        };
        write!(f, "FileBytes({kind}, {} bytes)", self.len())
    }
}

impl From<Vec<u8>> for FileBytes {
    fn from(bytes: Vec<u8>) -> Self {
        FileBytes::Owned(Arc::new(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_file_is_mapped_and_copied_on_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        std::fs::write(&path, vec![7u8; MAP_FROM_BYTES as usize]).unwrap();
        let mut bytes = FileBytes::from_host_file(&path).unwrap();
        assert!(matches!(bytes, FileBytes::Mapped(_)));
        let shared = bytes.clone();
        bytes.make_mut()[0] = 1;
        assert_eq!(
            (bytes[0], shared[0]),
            (1, 7),
            "the other holder keeps its bytes"
        );
        assert_eq!(
            std::fs::read(&path).unwrap()[0],
            7,
            "the host file is untouched"
        );
    }

    #[test]
    fn a_small_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("small");
        std::fs::write(&path, b"abc").unwrap();
        let bytes = FileBytes::from_host_file(&path).unwrap();
        assert!(matches!(bytes, FileBytes::Owned(_)));
        assert_eq!(&*bytes, b"abc");
    }
}
