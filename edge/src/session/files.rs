//! Files in and out of a session's sandbox, streamed: an upload goes in
//! as it arrives, a chunk at a time, with the sandbox's quota enforced on
//! each (so an upload over it fails at the chunk that crosses, and what
//! was written is removed); a download comes out a chunk at a time.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::{Stream, StreamExt};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::live::{Session, SessionError};
use crate::sandbox::{FileFailure, FileOp, FileRefusal, FileReply, Sandbox, WireFileInfo};
use crate::timeline::EventKind;

/// Bytes moved to or from the sandbox at once: large enough that a file
/// costs few round trips, small enough to hold a few per session.
const CHUNK: usize = 1 << 20;

/// A file put into a sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenFile {
    /// As the sandbox sees it (absolute).
    pub path: String,
    /// In bytes.
    pub size: u64,
    /// Lowercase hex.
    pub sha256: String,
}

impl Session {
    /// Writes `body` to `path` as it arrives. `declared` is the body's
    /// announced length: over the quota, nothing is written at all. Each
    /// chunk must arrive within `stall`.
    pub async fn write_file<S, E>(
        &self,
        path: &str,
        declared: Option<u64>,
        body: S,
        stall: Duration,
    ) -> Result<WrittenFile, SessionError>
    where
        S: Stream<Item = Result<Bytes, E>> + Send,
        E: std::fmt::Display,
    {
        let _active = self.active();
        let _turn = self.turn.lock().await;
        let sandbox = self.sandbox().await?;
        let limit = self.limits.disk_bytes;
        if declared.is_some_and(|len| len > limit) {
            return Err(SessionError::Quota { limit });
        }
        let written = match copy_in(&*sandbox, path, body, stall, limit).await {
            Ok(written) => written,
            Err(e) => {
                // Nothing half-written remains.
                let _ = sandbox.file(FileOp::Remove { path: path.into() }).await;
                return Err(e);
            }
        };
        let info = file_info(&*sandbox, path, limit).await?;
        let file = WrittenFile {
            path: info.path,
            size: written.0,
            sha256: written.1,
        };
        let event = json!({"path": file.path, "size": file.size, "sha256": file.sha256});
        self.events.emit(EventKind::FileWritten, event).await;
        Ok(file)
    }

    /// What is at `path`.
    pub async fn file_info(&self, path: &str) -> Result<WireFileInfo, SessionError> {
        let _active = self.active();
        let sandbox = self.sandbox().await?;
        file_info(&*sandbox, path, self.limits.disk_bytes).await
    }

    /// The entries of the folder at `path`.
    pub async fn list_files(&self, path: &str) -> Result<Vec<WireFileInfo>, SessionError> {
        let _active = self.active();
        let _turn = self.turn.lock().await;
        let sandbox = self.sandbox().await?;
        match file_op(&*sandbox, FileOp::List { path: path.into() }, path, 0).await? {
            FileReply::Listing { entries } => Ok(entries),
            other => Err(unexpected(&other)),
        }
    }

    /// Removes the file or link at `path`; a folder is refused.
    pub async fn remove_file(&self, path: &str) -> Result<(), SessionError> {
        let _active = self.active();
        let _turn = self.turn.lock().await;
        let sandbox = self.sandbox().await?;
        file_op(&*sandbox, FileOp::Remove { path: path.into() }, path, 0).await?;
        Ok(())
    }

    /// The file at `path`, `size` bytes of it, read a chunk at a time as
    /// the stream is polled. Reads are not held to the session's turn (a
    /// slow reader must not stall its commands): each chunk is what the
    /// file held when it was read.
    pub fn read_file(
        self: &Arc<Self>,
        path: String,
        size: u64,
    ) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
        let session = self.clone();
        futures_util::stream::unfold(Some(0u64), move |offset| {
            let (session, path) = (session.clone(), path.clone());
            async move {
                let offset = offset?;
                if offset >= size {
                    return None;
                }
                let len = (size - offset).min(CHUNK as u64) as u32;
                match session.read_chunk(&path, offset, len).await {
                    Ok(data) if data.is_empty() => {
                        let short = std::io::Error::other("the file shrank while it was read");
                        Some((Err(short), None))
                    }
                    Ok(data) => {
                        let next = offset + data.len() as u64;
                        Some((Ok(Bytes::from(data)), Some(next)))
                    }
                    Err(e) => Some((Err(std::io::Error::other(e.to_string())), None)),
                }
            }
        })
    }

    async fn read_chunk(&self, path: &str, offset: u64, len: u32) -> Result<Vec<u8>, SessionError> {
        let _active = self.active();
        let sandbox = self.sandbox().await?;
        let op = FileOp::Read {
            path: path.into(),
            offset,
            len,
        };
        match file_op(&*sandbox, op, path, 0).await? {
            FileReply::Data { data } => Ok(data),
            other => Err(unexpected(&other)),
        }
    }
}

/// Copies `body` into `path`; its size and sha256.
async fn copy_in<S, E>(
    sandbox: &dyn Sandbox,
    path: &str,
    body: S,
    stall: Duration,
    limit: u64,
) -> Result<(u64, String), SessionError>
where
    S: Stream<Item = Result<Bytes, E>> + Send,
    E: std::fmt::Display,
{
    let mut body = std::pin::pin!(body);
    let mut hasher = Sha256::new();
    let mut pending: Vec<u8> = Vec::with_capacity(CHUNK);
    let mut offset = 0u64;
    loop {
        let next = tokio::time::timeout(stall, body.next())
            .await
            .map_err(|_| {
                SessionError::Body(format!("the body stalled for {} s", stall.as_secs()))
            })?;
        let chunk = match next {
            Some(chunk) => {
                chunk.map_err(|e| SessionError::Body(format!("the body broke off ({e})")))?
            }
            None => break,
        };
        hasher.update(&chunk);
        pending.extend_from_slice(&chunk);
        while pending.len() >= CHUNK {
            let rest = pending.split_off(CHUNK);
            let data = std::mem::replace(&mut pending, rest);
            offset = write_at(sandbox, path, offset, data, limit).await?;
        }
    }
    // The last chunk, or the only one: a write at 0 creates (or empties)
    // the file even when the body was empty.
    if !pending.is_empty() || offset == 0 {
        offset = write_at(sandbox, path, offset, pending, limit).await?;
    }
    Ok((offset, hex::encode(hasher.finalize())))
}

/// Writes `data` at `offset`; the offset after it.
async fn write_at(
    sandbox: &dyn Sandbox,
    path: &str,
    offset: u64,
    data: Vec<u8>,
    limit: u64,
) -> Result<u64, SessionError> {
    let end = offset + data.len() as u64;
    let op = FileOp::Write {
        path: path.into(),
        offset,
        data,
    };
    match file_op(sandbox, op, path, limit).await? {
        FileReply::Written { .. } => Ok(end),
        other => Err(unexpected(&other)),
    }
}

async fn file_info(
    sandbox: &dyn Sandbox,
    path: &str,
    limit: u64,
) -> Result<WireFileInfo, SessionError> {
    match file_op(sandbox, FileOp::Info { path: path.into() }, path, limit).await? {
        FileReply::Info { info } => Ok(info),
        other => Err(unexpected(&other)),
    }
}

/// One file operation, its refusal as the session's error.
async fn file_op(
    sandbox: &dyn Sandbox,
    op: FileOp,
    path: &str,
    limit: u64,
) -> Result<FileReply, SessionError> {
    sandbox.file(op).await.map_err(|failure| match failure {
        FileFailure::Gone(why) => SessionError::Sandbox(why),
        FileFailure::Refused { refusal, message } => match refusal {
            FileRefusal::BadPath => SessionError::BadPath(message),
            FileRefusal::NotFound => SessionError::NotFound(path.into()),
            FileRefusal::IsFolder => SessionError::IsFolder(path.into()),
            FileRefusal::NotFolder => SessionError::NotFolder(path.into()),
            FileRefusal::Denied => SessionError::Denied(message),
            FileRefusal::Quota => SessionError::Quota { limit },
            FileRefusal::Other => SessionError::Sandbox(message),
        },
    })
}

fn unexpected(reply: &FileReply) -> SessionError {
    SessionError::Sandbox(format!("unexpected reply from the sandbox: {reply:?}"))
}
