//! The sandbox's filesystem: a tree in memory, served to components as
//! `wasi:filesystem`.
//!
//! It replaces wasmtime-wasi's host-directory filesystem on purpose: there is
//! no host path behind any descriptor, so `..`, absolute paths and symlinks
//! can only ever reach nodes of this tree, nothing is written to the host
//! disk, and dropping the tree is the whole clean-up. Mode bits and quotas
//! live here too, because WASI 0.2 has neither.

mod error;
mod file_bytes;
mod streams;
mod tree;
mod wasi;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use wasmtime::component::{HasData, Linker, ResourceTable};

pub use self::error::FsErr;
pub use self::file_bytes::FileBytes;
pub use self::tree::{
    MAY_EXEC, MAY_READ, MAY_WRITE, NodeId, NodeKind, NodeType, OpenSpec, Quota, QuotaHit, ROOT,
    ROOT_UID, S_IFDIR, S_IFLNK, S_IFREG, SANDBOX_UID, Stat, TimeSet, Tree,
};
use crate::bindings;

/// A handle on one sandbox's tree, shared by every component the sandbox
/// runs (the shell now, the programs it starts later).
#[derive(Clone)]
pub struct MemFs(Arc<Mutex<Tree>>);

impl MemFs {
    /// A handle on a new empty tree with `quota`.
    pub fn new(quota: Quota) -> MemFs {
        MemFs::from_tree(Tree::new(quota))
    }

    /// A handle on an existing tree (such as a clone of a template).
    pub fn from_tree(tree: Tree) -> MemFs {
        MemFs(Arc::new(Mutex::new(tree)))
    }

    /// Locks the tree. A panic while it was held cannot leave it half-edited
    /// in a way that matters more than the panic itself, so poisoning is
    /// ignored rather than spread to every later call.
    pub fn lock(&self) -> MutexGuard<'_, Tree> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// An open file or folder of the tree, as a component holds it.
pub struct Descriptor {
    node: NodeId,
    readable: bool,
    writable: bool,
}

/// The rest of a folder listing being read by a component.
pub struct DirEntries {
    entries: std::vec::IntoIter<bindings::fs_types::DirectoryEntry>,
}

/// What the WASI filesystem functions need from the store.
pub struct MemFsView<'a> {
    /// The sandbox's tree.
    pub fs: &'a MemFs,
    /// Folders the program is given before `/`, with the path it sees
    /// each at (most programs: none).
    pub preopens: &'a [(NodeId, String)],
    /// The store's resource table, where descriptors and listings live.
    pub table: &'a mut ResourceTable,
    /// The program's umask: taken from the mode of what it creates.
    pub umask: u32,
    /// What `/dev/stdin`, `/dev/stdout` and `/dev/stderr` are for it.
    pub stdio: &'a Stdio,
}

/// Makes one of a program's own streams, for a `/dev/std*` it opens.
pub type StreamMaker<T> = Box<dyn Fn() -> T + Send + Sync>;

/// The streams the `Stdio` nodes of the tree stand for in one program:
/// opening `/dev/stdout` writes where its stdout goes.
pub struct Stdio {
    /// What `/dev/stdin` opens.
    pub stdin: StreamMaker<wasmtime_wasi::p2::DynInputStream>,
    /// What `/dev/stdout` opens.
    pub stdout: StreamMaker<wasmtime_wasi::p2::DynOutputStream>,
    /// What `/dev/stderr` opens.
    pub stderr: StreamMaker<wasmtime_wasi::p2::DynOutputStream>,
}

impl Stdio {
    /// Streams that read nothing and swallow writes (for tests).
    pub fn empty() -> Stdio {
        Stdio {
            stdin: Box::new(|| Box::new(wasmtime_wasi::p2::pipe::ClosedInputStream)),
            stdout: Box::new(|| Box::new(wasmtime_wasi::p2::pipe::SinkOutputStream)),
            stderr: Box::new(|| Box::new(wasmtime_wasi::p2::pipe::SinkOutputStream)),
        }
    }
}

struct HasMemFs;

impl HasData for HasMemFs {
    type Data<'a> = MemFsView<'a>;
}

/// Links `wasi:filesystem/{types,preopens}` over the tree `getter` returns.
pub fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    getter: fn(&mut T) -> MemFsView<'_>,
) -> wasmtime::Result<()> {
    bindings::fs_types::add_to_linker::<T, HasMemFs>(linker, getter)?;
    bindings::preopens::add_to_linker::<T, HasMemFs>(linker, getter)?;
    Ok(())
}
