//! `ephemeral run --download DIR`: the files a run collected, saved under
//! DIR — from the live stream under zero data retention (they are kept
//! nowhere else), else from `GET /v1/runs/{id}/files`, each checked
//! against its sha256 before it is written.

use std::path::{Component, Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::Value;
use sha2::Digest;

use super::timeline_view::{Follow, Followed};

/// Saves the run's files into `dir`; how many.
pub async fn save(follow: &Follow, run: &Followed, dir: &Path) -> anyhow::Result<usize> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    if !run.live_files.is_empty() {
        for (path, bytes) in &run.live_files {
            write(dir, path, bytes)?;
        }
        return Ok(run.live_files.len());
    }
    let client = reqwest::Client::new();
    let base = format!("{}/v1/runs/{}/files", follow.base, run.run_id);
    let list: Value = client
        .get(&base)
        .bearer_auth(&follow.key)
        .send()
        .await
        .with_context(|| format!("cannot reach {}", follow.base))?
        .error_for_status()
        .context("cannot list the run's files")?
        .json()
        .await?;
    let files = list["data"].as_array().cloned().unwrap_or_default();
    for file in &files {
        let path = file["path"].as_str().unwrap_or_default();
        let url = format!("{base}/{}", crate::api::encode_file_path(path));
        let bytes = client
            .get(&url)
            .bearer_auth(&follow.key)
            .send()
            .await?
            .error_for_status()
            .with_context(|| format!("cannot download {path}"))?
            .bytes()
            .await?;
        let sha256 = hex::encode(sha2::Sha256::digest(&bytes));
        if Some(sha256.as_str()) != file["sha256"].as_str() {
            bail!("{path}: the download does not match its sha256");
        }
        write(dir, path, &bytes)?;
    }
    Ok(files.len())
}

/// Writes `bytes` at `path` under `dir`; a path that would leave `dir` is
/// refused (it cannot come from an honest server).
fn write(dir: &Path, path: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let relative = PathBuf::from(path.trim_start_matches('/'));
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        bail!("refusing to write {path:?} outside {}", dir.display());
    }
    let target = dir.join(relative);
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(&target, bytes).with_context(|| format!("cannot write {}", target.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_written_outside_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        assert!(write(dir.path(), "../escape", b"x").is_err());
        assert!(write(dir.path(), "a/../../escape", b"x").is_err());
        write(dir.path(), "/tmp/report.md", b"ok").unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("tmp/report.md")).unwrap(),
            b"ok"
        );
    }
}
