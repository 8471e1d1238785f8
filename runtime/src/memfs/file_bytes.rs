//! A file's bytes in the tree: owned, a host file mapped read-only, or a
//! host file not read yet.
//!
//! All are shared copy-on-write: a sandbox cloned from the system layout
//! holds the same bytes until it writes the file. A mapped file (a
//! program's read-only root, tens of MB) is also shared between worker
//! processes through the page cache, so a hundred jailed workers cost its
//! size once rather than a hundred times, and a worker that never runs the
//! program never reads it.
//!
//! A program's root is laid in *lazily*: each file is listed (name, size)
//! when the runtime starts and read or mapped the first time anyone reads
//! it. Opening and reading matplotlib's ~200 data files was a tenth of a
//! worker process's start, for files most sandboxes never open.

use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

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
    /// A host file listed but not yet read: read or mapped on first use.
    Lazy(Arc<LazyHostFile>),
}

/// A host file of a known size, loaded on first use (see the module docs).
pub struct LazyHostFile {
    path: PathBuf,
    len: usize,
    bytes: OnceLock<FileBytes>,
}

impl LazyHostFile {
    /// The file's bytes, exactly as many as it was listed with: a file
    /// replaced or gone since (the programs folder is only ever replaced
    /// whole, by a rename) must not change a size the tree already
    /// reported, so it is cut or padded, and the change logged.
    fn bytes(&self) -> &FileBytes {
        self.bytes
            .get_or_init(|| match FileBytes::from_host_file(&self.path) {
                Ok(bytes) if bytes.len() == self.len => bytes,
                outcome => {
                    tracing::warn!(
                        path = %self.path.display(),
                        listed = self.len,
                        now = ?outcome.as_ref().map(|b| b.len()).map_err(|e| e.to_string()),
                        "a program's file changed after it was listed"
                    );
                    let mut bytes = outcome.map(|b| b.to_vec()).unwrap_or_default();
                    bytes.resize(self.len, 0);
                    FileBytes::from(bytes)
                }
            })
    }
}

impl FileBytes {
    /// The bytes of the host file at `path`, mapped when it is large.
    ///
    /// The file must not change while it is mapped: it is one of the
    /// programs folder's read-only files, which the runtime never writes
    /// and the build replaces only by renaming a new file over it (the
    /// mapping keeps the old one).
    pub fn from_host_file(path: &Path) -> std::io::Result<FileBytes> {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        if len < MAP_FROM_BYTES {
            let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
            file.read_to_end(&mut bytes)?;
            return Ok(FileBytes::Owned(Arc::new(bytes)));
        }
        // SAFETY: the mapping is read-only and private to this process;
        // the file is never written in place (see above), so its bytes do
        // not change under the slices handed out.
        let map = unsafe { Mmap::map(&file) }?;
        Ok(FileBytes::Mapped(Arc::new(map)))
    }

    /// The host file at `path`, `len` bytes long, read or mapped the first
    /// time its bytes are used (the same conditions as
    /// [`FileBytes::from_host_file`] apply then).
    pub fn lazy_host_file(path: PathBuf, len: u64) -> FileBytes {
        FileBytes::Lazy(Arc::new(LazyHostFile {
            path,
            len: usize::try_from(len).unwrap_or(usize::MAX),
            bytes: OnceLock::new(),
        }))
    }

    /// The number of bytes, without loading a lazy file.
    pub fn len(&self) -> usize {
        match self {
            FileBytes::Lazy(file) => file.len,
            _ => self.deref().len(),
        }
    }

    /// Whether there are no bytes, without loading a lazy file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes to change in place, copied first if anyone else holds
    /// them or they are mapped.
    pub fn make_mut(&mut self) -> &mut Vec<u8> {
        if !matches!(self, FileBytes::Owned(_)) {
            *self = FileBytes::Owned(Arc::new(self.to_vec()));
        }
        match self {
            FileBytes::Owned(bytes) => Arc::make_mut(bytes),
            FileBytes::Mapped(_) | FileBytes::Lazy(_) => unreachable!("replaced just above"),
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
            FileBytes::Lazy(file) => file.bytes(),
        }
    }
}

impl std::fmt::Debug for FileBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self {
            FileBytes::Owned(_) => "owned",
            FileBytes::Mapped(_) => "mapped",
            FileBytes::Lazy(file) if file.bytes.get().is_none() => "lazy, not read",
            FileBytes::Lazy(_) => "lazy, read",
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
    fn a_lazy_file_is_read_on_first_use_and_keeps_its_listed_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("later");
        std::fs::write(&path, b"abc").unwrap();
        let bytes = FileBytes::lazy_host_file(path.clone(), 3);
        let shared = bytes.clone();
        std::fs::write(&path, b"xyz").unwrap();
        assert_eq!(bytes.len(), 3);
        assert!(
            format!("{bytes:?}").contains("not read"),
            "len() reads nothing"
        );
        assert_eq!(&*bytes, b"xyz", "read at first use");
        assert_eq!(&*shared, b"xyz", "once, for every holder");

        let gone = FileBytes::lazy_host_file(dir.path().join("gone"), 2);
        assert_eq!(&*gone, &[0, 0], "a vanished file keeps its size");
        let grown = dir.path().join("grown");
        std::fs::write(&grown, b"abcdef").unwrap();
        let mut grown = FileBytes::lazy_host_file(grown, 4);
        assert_eq!(&*grown, b"abcd");
        grown.make_mut().push(b'!');
        assert_eq!(&*grown, b"abcd!");
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
