//! Ephemeral's own interfaces for its components (`wit/sandbox.wit`):
//! the mode bits, owners, permission checks, umask and quota WASI 0.2
//! lacks, and the shell's hand-over of its state.

use crate::bindings::fs_meta;
use crate::bindings::sandbox_types::FsError;
use crate::bindings::session;
use crate::launch::{SavedState, StoreState};
use crate::memfs::{FsErr, ROOT};

fn fs_error(e: FsErr) -> FsError {
    match e {
        FsErr::NotDirectory => FsError::NotDirectory,
        FsErr::Loop => FsError::Loop,
        FsErr::Access => FsError::Access,
        FsErr::NotPermitted => FsError::NotPermitted,
        FsErr::NoEntry | FsErr::BadDescriptor => FsError::NoEntry,
        _ => FsError::Invalid,
    }
}

/// Only absolute paths are accepted: the shell resolves its own working
/// folder, and guessing one here would hide its bugs.
fn absolute(path: &str) -> Result<&str, FsError> {
    if path.starts_with('/') {
        Ok(path)
    } else {
        Err(FsError::Invalid)
    }
}

impl crate::bindings::sandbox_types::Host for StoreState {}

impl fs_meta::Host for StoreState {
    fn get_mode(&mut self, path: String, follow: bool) -> Result<u32, FsError> {
        let tree = self.fs.lock();
        let node = tree
            .lookup(ROOT, absolute(&path)?, follow)
            .map_err(fs_error)?;
        tree.st_mode(node).map_err(fs_error)
    }

    fn set_mode(&mut self, path: String, mode: u32) -> Result<(), FsError> {
        let mut tree = self.fs.lock();
        let node = tree
            .lookup(ROOT, absolute(&path)?, true)
            .map_err(fs_error)?;
        tree.set_mode(node, mode).map_err(fs_error)
    }

    fn get_owner(&mut self, path: String, follow: bool) -> Result<u32, FsError> {
        let tree = self.fs.lock();
        let node = tree
            .lookup(ROOT, absolute(&path)?, follow)
            .map_err(fs_error)?;
        Ok(tree.stat(node).map_err(fs_error)?.uid)
    }

    fn access(&mut self, path: String, want: u32) -> Result<(), FsError> {
        let tree = self.fs.lock();
        let node = tree
            .lookup(ROOT, absolute(&path)?, true)
            .map_err(fs_error)?;
        match tree.may(node, want & 7).map_err(fs_error)? {
            true => Ok(()),
            false => Err(FsError::Access),
        }
    }

    fn set_umask(&mut self, mask: u32) -> u32 {
        std::mem::replace(&mut self.umask, mask & 0o777)
    }

    fn disk_usage(&mut self) -> fs_meta::QuotaUsage {
        let tree = self.fs.lock();
        let (bytes_used, files_used) = tree.usage();
        let quota = tree.quota();
        fs_meta::QuotaUsage {
            bytes_used,
            bytes_max: quota.max_bytes,
            files_used,
            files_max: quota.max_nodes,
        }
    }
}

impl session::Host for StoreState {
    fn save_state(&mut self, cwd: String, exported: Vec<(String, String)>) {
        self.saved = Some(SavedState { cwd, exported });
    }

    fn limit_hit(&mut self, name: String) {
        if let Some(limit) = crate::limits::LimitHit::from_name(&name) {
            self.child_limit.get_or_insert(limit);
        }
    }
}
