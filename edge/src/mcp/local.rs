//! `ephemeral mcp` on this machine: each session's sandbox comes straight
//! from a sandbox source (the same choice of isolation as `exec`), no
//! server, no budget.

use std::sync::Arc;
use std::time::Duration;

use ephemeral_mcp::{
    BoxFuture, CommandOutput, FileEntry, SandboxFactory, SessionSandbox, ToolFailure,
};
use ephemeral_runtime::{Limits, Stream};

use super::{failure, file_entry};
use crate::sandbox::{Command, ExecEvent, FileOp, FileReply, Sandbox, SandboxSource};

/// The largest file `read_file` reads whole.
const MAX_READ: u64 = 16 << 20;
/// Bytes read from the sandbox at once.
const CHUNK: u32 = 1 << 20;

/// Sandboxes from `source`, with `limits`.
pub struct Local {
    pub source: Arc<dyn SandboxSource>,
    pub limits: Limits,
}

impl SandboxFactory for Local {
    fn create(
        &self,
        _caller: Option<&str>,
    ) -> BoxFuture<'_, Result<Box<dyn SessionSandbox>, ToolFailure>> {
        Box::pin(async move {
            let sandbox = self
                .source
                .start(self.limits, Vec::new())
                .await
                .map_err(failure)?;
            Ok(Box::new(LocalSandbox {
                sandbox,
                command_timeout: self.limits.command_timeout,
            }) as Box<dyn SessionSandbox>)
        })
    }

    fn authorize<'a>(&'a self, _key: &'a str) -> BoxFuture<'a, bool> {
        // Served over stdio only: whoever started the process is the caller.
        Box::pin(async { false })
    }
}

struct LocalSandbox {
    sandbox: Box<dyn Sandbox>,
    command_timeout: Duration,
}

impl SessionSandbox for LocalSandbox {
    fn run(
        &self,
        command: String,
        stdin: Option<String>,
        timeout: Option<Duration>,
    ) -> BoxFuture<'_, Result<CommandOutput, ToolFailure>> {
        Box::pin(async move {
            let command = Command {
                command,
                timeout: timeout.unwrap_or(self.command_timeout),
                stdin: stdin.map(String::into_bytes).unwrap_or_default(),
                env: Vec::new(),
            };
            collect(self.sandbox.run(command)).await
        })
    }

    fn write_file(
        &self,
        path: String,
        data: Vec<u8>,
    ) -> BoxFuture<'_, Result<String, ToolFailure>> {
        Box::pin(async move {
            let op = FileOp::Write {
                path: path.clone(),
                offset: 0,
                data,
            };
            self.sandbox.file(op).await.map_err(failure)?;
            match self
                .sandbox
                .file(FileOp::Info { path })
                .await
                .map_err(failure)?
            {
                FileReply::Info { info } => Ok(info.path),
                other => Err(ToolFailure(format!("unexpected reply {other:?}"))),
            }
        })
    }

    fn read_file(&self, path: String) -> BoxFuture<'_, Result<Vec<u8>, ToolFailure>> {
        Box::pin(async move { read_whole(self.sandbox.as_ref(), &path).await })
    }

    fn list_files(
        &self,
        dir: Option<String>,
    ) -> BoxFuture<'_, Result<Vec<FileEntry>, ToolFailure>> {
        Box::pin(async move {
            let path = dir.unwrap_or_else(|| ".".into());
            match self
                .sandbox
                .file(FileOp::List { path })
                .await
                .map_err(failure)?
            {
                FileReply::Listing { entries } => Ok(entries.iter().map(file_entry).collect()),
                other => Err(ToolFailure(format!("unexpected reply {other:?}"))),
            }
        })
    }

    fn end(&self) -> BoxFuture<'static, ()> {
        self.sandbox.destroy()
    }
}

/// A command's events gathered into its result.
async fn collect(
    mut events: tokio::sync::mpsc::UnboundedReceiver<ExecEvent>,
) -> Result<CommandOutput, ToolFailure> {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    while let Some(event) = events.recv().await {
        match event {
            ExecEvent::Output(Stream::Stdout, data) => stdout.extend(data),
            ExecEvent::Output(Stream::Stderr, data) => stderr.extend(data),
            ExecEvent::Exit(outcome) => {
                return Ok(CommandOutput {
                    exit_code: outcome.exit_code,
                    stdout: String::from_utf8_lossy(&stdout).into_owned(),
                    stderr: String::from_utf8_lossy(&stderr).into_owned(),
                    duration_ms: u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
                    truncated: outcome.truncated,
                    limit: outcome.limit.map(|l| l.name().to_string()),
                });
            }
            ExecEvent::Failed(why) => {
                return Err(ToolFailure(format!("the sandbox failed: {why}")));
            }
        }
    }
    Err(ToolFailure("the sandbox ended".into()))
}

/// A whole file, chunk by chunk, up to `MAX_READ`.
pub(super) async fn read_whole(sandbox: &dyn Sandbox, path: &str) -> Result<Vec<u8>, ToolFailure> {
    let size = match sandbox
        .file(FileOp::Info { path: path.into() })
        .await
        .map_err(failure)?
    {
        FileReply::Info { info } => info.size,
        other => return Err(ToolFailure(format!("unexpected reply {other:?}"))),
    };
    if size > MAX_READ {
        return Err(ToolFailure(format!(
            "{path} is {size} bytes; read_file reads at most {MAX_READ}"
        )));
    }
    let mut bytes = Vec::new();
    while (bytes.len() as u64) < size {
        let op = FileOp::Read {
            path: path.into(),
            offset: bytes.len() as u64,
            len: CHUNK,
        };
        match sandbox.file(op).await.map_err(failure)? {
            FileReply::Data { data } if data.is_empty() => break,
            FileReply::Data { data } => bytes.extend(data),
            other => return Err(ToolFailure(format!("unexpected reply {other:?}"))),
        }
    }
    Ok(bytes)
}
