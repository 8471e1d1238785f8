//! The files a run leaves behind (API.md, "outputs"): when the agent is
//! done, before the sandbox is destroyed, the regular files matching the
//! run's patterns are read out — at most so many files and bytes, what is
//! over named in `skipped`, never dropped silently — and announced by one
//! `files.collected` event. They are stored with the run's record, or,
//! under zero data retention, sent once on the live stream (`file.content`)
//! and kept nowhere.

use base64::Engine;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::sandbox::{FileOp, FileReply, Sandbox, WireFileInfo};
use crate::store::{RunFile, Store};
use crate::timeline::{EventKind, RunEvents};

/// Bytes read from the sandbox at once.
const CHUNK: u32 = 1 << 20;

/// What may be collected.
pub struct Collect<'a> {
    pub run_id: &'a str,
    pub patterns: &'a [String],
    pub max_files: usize,
    pub max_bytes: u64,
    pub zero_data_retention: bool,
}

/// A file not collected, and why (`too_many_files`, `too_large`,
/// `not_a_regular_file`, `unreadable`).
struct Skipped {
    path: String,
    reason: &'static str,
}

/// Collects the run's outputs from `sandbox`, writes `files.collected`
/// (and `file.content` events under zero data retention), and stores the
/// files with the run.
pub async fn collect(
    sandbox: &dyn Sandbox,
    store: &dyn Store,
    events: &RunEvents,
    what: Collect<'_>,
) {
    let scratch = scratch_folder(sandbox).await;
    let (found, others) = match sandbox
        .file(FileOp::Glob {
            patterns: what.patterns.to_vec(),
        })
        .await
    {
        Ok(FileReply::Globbed { files, others }) => (files, others),
        Ok(_) | Err(_) => (Vec::new(), Vec::new()),
    };
    let mut skipped: Vec<Skipped> = others
        .into_iter()
        .map(|path| Skipped {
            path: shown(&scratch, &path),
            reason: "not_a_regular_file",
        })
        .collect();
    let mut files: Vec<(RunFile, Vec<u8>)> = Vec::new();
    let mut total = 0u64;
    for info in found {
        let path = shown(&scratch, &info.path);
        let reason = if files.len() >= what.max_files {
            Some("too_many_files")
        } else if total.saturating_add(info.size) > what.max_bytes {
            Some("too_large")
        } else {
            None
        };
        if let Some(reason) = reason {
            skipped.push(Skipped { path, reason });
            continue;
        }
        match read_whole(sandbox, &info, what.max_bytes - total).await {
            Some(bytes) => {
                total += bytes.len() as u64;
                files.push((described(path, &bytes), bytes));
            }
            None => skipped.push(Skipped {
                path,
                reason: "unreadable",
            }),
        }
    }
    announce(events, &files, &skipped).await;
    if what.zero_data_retention {
        for (file, bytes) in &files {
            let content = base64::engine::general_purpose::STANDARD.encode(bytes);
            let data = json!({"path": file.path, "size": file.size, "sha256": file.sha256, "content_base64": content});
            events.emit(EventKind::FileContent, data).await;
        }
    } else if !files.is_empty()
        && let Err(e) = store.put_run_files(what.run_id, &files).await
    {
        tracing::error!(run_id = %what.run_id, error = %e, "cannot store the run's output files");
    }
}

async fn announce(events: &RunEvents, files: &[(RunFile, Vec<u8>)], skipped: &[Skipped]) {
    let files: Vec<Value> = files
        .iter()
        .map(|(f, _)| json!({"path": f.path, "size": f.size, "sha256": f.sha256}))
        .collect();
    let skipped: Vec<Value> = skipped
        .iter()
        .map(|s| json!({"path": s.path, "reason": s.reason}))
        .collect();
    events
        .emit(
            EventKind::FilesCollected,
            json!({"files": files, "skipped": skipped}),
        )
        .await;
}

/// A collected file as listed: its path, size, sha256 and type.
fn described(path: String, bytes: &[u8]) -> RunFile {
    RunFile {
        content_type: content_type(&path),
        size: bytes.len() as i64,
        sha256: hex::encode(Sha256::digest(bytes)),
        path,
    }
}

/// The content type a file's name suggests.
pub fn content_type(path: &str) -> String {
    mime_guess::from_path(path)
        .first_or_octet_stream()
        .to_string()
}

/// The sandbox's scratch folder (absolute), to show paths relative to it.
async fn scratch_folder(sandbox: &dyn Sandbox) -> Option<String> {
    match sandbox.file(FileOp::Info { path: ".".into() }).await {
        Ok(FileReply::Info { info }) => Some(info.path),
        _ => None,
    }
}

/// `path` as the run's files show it: relative to the scratch folder when
/// inside it, absolute otherwise.
fn shown(scratch: &Option<String>, path: &str) -> String {
    scratch
        .as_deref()
        .and_then(|s| path.strip_prefix(s))
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|rest| !rest.is_empty())
        .map_or_else(|| path.to_string(), str::to_string)
}

/// The whole file, if it can be read and is still within `room` bytes.
async fn read_whole(sandbox: &dyn Sandbox, info: &WireFileInfo, room: u64) -> Option<Vec<u8>> {
    let mut bytes = Vec::with_capacity(usize::try_from(info.size.min(room)).ok()?);
    loop {
        let op = FileOp::Read {
            path: info.path.clone(),
            offset: bytes.len() as u64,
            len: CHUNK,
        };
        match sandbox.file(op).await {
            Ok(FileReply::Data { data }) if data.is_empty() => return Some(bytes),
            Ok(FileReply::Data { data }) => {
                bytes.extend_from_slice(&data);
                if bytes.len() as u64 > room {
                    return None;
                }
                if bytes.len() as u64 >= info.size {
                    return Some(bytes);
                }
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_the_scratch_folder_are_shown_relative() {
        let scratch = Some("/tmp/ephemeral-run-abc123/scratch".to_string());
        assert_eq!(
            shown(&scratch, "/tmp/ephemeral-run-abc123/scratch/out/a.png"),
            "out/a.png"
        );
        assert_eq!(shown(&scratch, "/tmp/report.md"), "/tmp/report.md");
        assert_eq!(
            shown(&scratch, "/tmp/ephemeral-run-abc123/scratchy"),
            "/tmp/ephemeral-run-abc123/scratchy"
        );
        assert_eq!(shown(&None, "/tmp/x"), "/tmp/x");
    }

    #[test]
    fn content_types_come_from_names() {
        assert_eq!(content_type("chart.png"), "image/png");
        assert_eq!(content_type("report.md"), "text/markdown");
        assert_eq!(content_type("data"), "application/octet-stream");
    }
}
