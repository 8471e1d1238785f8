//! Ephemeral's own interfaces for its components (`wit/sandbox.wit`):
//! the mode bits WASI 0.2 lacks, and the shell's hand-over of its state.

use crate::bindings::fs_meta;
use crate::bindings::sandbox_types::FsError;
use crate::bindings::session;
use crate::launch::{SavedState, StoreState};
use crate::memfs::{FsErr, ROOT};

fn fs_error(e: FsErr) -> FsError {
    match e {
        FsErr::NotDirectory => FsError::NotDirectory,
        FsErr::Loop => FsError::Loop,
        FsErr::Access | FsErr::NotPermitted => FsError::Access,
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
}

impl session::Host for StoreState {
    fn save_state(&mut self, cwd: String, exported: Vec<(String, String)>) {
        self.saved = Some(SavedState { cwd, exported });
    }
}
