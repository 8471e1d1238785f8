//! `wasi:io` streams over one file of the tree, for `read-via-stream`,
//! `write-via-stream` and `append-via-stream` (how wasi-libc does `read(2)`
//! and `write(2)`).

use bytes::Bytes;
use wasmtime_wasi::p2::{InputStream, OutputStream, Pollable, StreamError, StreamResult};

use super::{FsErr, MemFs, NodeId};

/// The most one stream call moves; bigger reads come back in pieces, as
/// from a pipe, which every reader already handles.
const MAX_CHUNK: usize = 1 << 20;

pub struct FileReader {
    fs: MemFs,
    node: NodeId,
    pos: u64,
}

impl FileReader {
    pub fn new(fs: MemFs, node: NodeId, pos: u64) -> Result<FileReader, FsErr> {
        fs.lock().retain(node)?;
        Ok(FileReader { fs, node, pos })
    }
}

impl Drop for FileReader {
    fn drop(&mut self) {
        self.fs.lock().release(self.node);
    }
}

#[wasmtime_wasi::async_trait]
impl InputStream for FileReader {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        let data = self
            .fs
            .lock()
            .read(self.node, self.pos, size.min(MAX_CHUNK))
            .map_err(failed)?;
        if data.is_empty() && size > 0 {
            return Err(StreamError::Closed);
        }
        self.pos += data.len() as u64;
        Ok(Bytes::from(data))
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for FileReader {
    async fn ready(&mut self) {}
}

/// Writes at a position that advances, or always at the end (`append`).
pub struct FileWriter {
    fs: MemFs,
    node: NodeId,
    pos: Option<u64>,
}

impl FileWriter {
    pub fn new(fs: MemFs, node: NodeId, pos: Option<u64>) -> Result<FileWriter, FsErr> {
        fs.lock().retain(node)?;
        Ok(FileWriter { fs, node, pos })
    }
}

impl Drop for FileWriter {
    fn drop(&mut self) {
        self.fs.lock().release(self.node);
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for FileWriter {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        let mut tree = self.fs.lock();
        let written = match self.pos {
            Some(pos) => tree.write(self.node, pos, &bytes),
            None => tree.append(self.node, &bytes),
        }
        .map_err(failed)?;
        if let Some(pos) = &mut self.pos {
            *pos += written as u64;
        }
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    /// All of any write: a short write is data lost to a writer that does
    /// not retry (CPython's unbuffered stdout, finding G5); the quota
    /// still holds in `write`.
    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(1 << 30)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for FileWriter {
    async fn ready(&mut self) {}
}

/// A failed stream call carries the `FsErr`, so `filesystem-error-code`
/// can give the guest the right errno (ENOSPC for a full sandbox).
fn failed(e: FsErr) -> StreamError {
    StreamError::LastOperationFailed(wasmtime::Error::new(e))
}
