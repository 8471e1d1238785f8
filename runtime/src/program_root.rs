//! A program's read-only files: `NAME.root/` beside `NAME.wasm`, with
//! `NAME.preopens` saying where the program expects each of its folders.
//!
//! The scientific `python3` is one: its library (a 54 MB zip) and
//! matplotlib's data live outside the component, at the places its
//! pre-initialised interpreter already looked them up at build time. They
//! are laid into the runtime's system tree once, owned by root and
//! read-only, listed at once but read (or mapped) only when first read
//! (see `memfs::FileBytes`), so every
//! sandbox and every worker process shares the same bytes (the tree's files are
//! copy-on-write) and none pays for them against its disk quota.
//!
//! `NAME.preopens` has one line a folder, `HOST GUEST`: `HOST` a folder
//! of `NAME.root/`, `GUEST` the absolute path the program opens it at.
//! The program gets exactly these as its first preopens, in this order
//! (its snapshot numbered its descriptors so), then `/`. A folder whose
//! path lies inside a file of an earlier one (matplotlib's data "inside"
//! the zip) is laid in at `/usr/lib/NAME/HOST` and preopened at `GUEST`.

use std::path::{Path, PathBuf};

use crate::Error;
use crate::memfs::{FileBytes, FsErr, Tree};

/// One folder of a program's root.
#[derive(Debug, Clone)]
pub(crate) struct Mount {
    /// The folder on the host.
    host: PathBuf,
    /// Where the program opens it.
    pub(crate) guest: String,
}

/// A program's read-only folders, as read from its `.preopens`.
#[derive(Debug, Clone)]
pub(crate) struct ProgramRoot {
    pub(crate) program: String,
    pub(crate) mounts: Vec<Mount>,
}

/// Where a laid-in folder is, in the tree and for the program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Preopen {
    pub(crate) tree_path: String,
    pub(crate) guest: String,
}

impl ProgramRoot {
    /// The root of the program `wasm` (`DIR/NAME.wasm`), if it has one:
    /// `Ok(None)` when there is no `NAME.preopens`.
    pub(crate) fn find(wasm: &Path) -> Result<Option<ProgramRoot>, Error> {
        let (Some(dir), Some(name)) = (wasm.parent(), wasm.file_stem().and_then(|s| s.to_str()))
        else {
            return Ok(None);
        };
        let listing = dir.join(format!("{name}.preopens"));
        let Ok(text) = std::fs::read_to_string(&listing) else {
            return Ok(None);
        };
        let root = dir.join(format!("{name}.root"));
        let bad = |why: String| Error::Component(name.to_owned(), why);
        let mut mounts = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let (host, guest) = line.split_once(' ').ok_or_else(|| {
                bad(format!(
                    "{}: `{line}` is not `HOST GUEST`",
                    listing.display()
                ))
            })?;
            if host.contains("..") || host.starts_with('/') || !guest.starts_with('/') {
                return Err(bad(format!("{}: bad line `{line}`", listing.display())));
            }
            let host = root.join(host);
            if !host.is_dir() {
                return Err(bad(format!("{} is not a folder", host.display())));
            }
            mounts.push(Mount {
                host,
                guest: guest.to_owned(),
            });
        }
        Ok(Some(ProgramRoot {
            program: name.to_owned(),
            mounts,
        }))
    }

    /// Lays every folder into `tree` (root-owned, read-only) and returns
    /// the program's preopens, in order.
    pub(crate) fn lay_into(&self, tree: &mut Tree) -> Result<Vec<Preopen>, Error> {
        let mut preopens = Vec::new();
        for mount in &self.mounts {
            let folder = mount
                .host
                .file_name()
                .and_then(|s| s.to_str())
                .unwrap_or("data");
            let tree_path = match tree.mkdir_all(&mount.guest, 0o755) {
                Ok(_) => mount.guest.clone(),
                Err(FsErr::NotDirectory) => format!("/usr/lib/{}/{folder}", self.program),
                Err(e) => return Err(self.error(&mount.guest, &e.to_string())),
            };
            copy_folder(tree, &mount.host, &tree_path)
                .map_err(|e| self.error(&mount.host.display().to_string(), &e))?;
            preopens.push(Preopen {
                tree_path,
                guest: mount.guest.clone(),
            });
        }
        Ok(preopens)
    }

    fn error(&self, path: &str, why: &str) -> Error {
        Error::Component(
            self.program.clone(),
            format!("cannot lay in its files at {path}: {why}"),
        )
    }
}

/// Copies the host folder `from` into the tree at `to`, files read-only
/// (0444) and shared, folders 0555 so that nobody adds to them.
fn copy_folder(tree: &mut Tree, from: &Path, to: &str) -> Result<(), String> {
    tree.mkdir_all(to, 0o755).map_err(|e| e.to_string())?;
    let mut entries: Vec<_> = std::fs::read_dir(from)
        .map_err(|e| format!("{}: {e}", from.display()))?
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let path = entry.path();
        let inside = format!("{}/{name}", to.trim_end_matches('/'));
        let kind = entry.file_type().map_err(|e| e.to_string())?;
        if kind.is_dir() {
            copy_folder(tree, &path, &inside)?;
        } else if kind.is_file() {
            let len = entry
                .metadata()
                .map_err(|e| format!("{}: {e}", path.display()))?
                .len();
            tree.put_shared_file(&inside, FileBytes::lazy_host_file(path, len), 0o444)
                .map_err(|e| format!("{inside}: {e}"))?;
        }
    }
    let id = tree
        .lookup(crate::memfs::ROOT, to, true)
        .map_err(|e| e.to_string())?;
    tree.set_mode(id, 0o555).map_err(|e| e.to_string())
}
