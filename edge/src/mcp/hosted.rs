//! A server's `/mcp` route: each MCP session's sandbox is a sandbox
//! session of the key's organisation (`session/`), admitted and settled
//! like one made with `POST /v1/sandboxes`, and on its timeline.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use ephemeral_mcp::{
    BoxFuture, CommandOutput, FileEntry, SandboxFactory, SessionSandbox, ToolFailure,
};
use futures_util::StreamExt;
use serde_json::Map;

use super::{command_output, failure, file_entry};
use crate::api::organisation_of_key;
use crate::lifecycle::sandbox::{self as sandbox_admission, SandboxAsked, SessionAdmission};
use crate::lifecycle::{Refusal, within_rate};
use crate::session::{CommandRequest, EndReason, SandboxRequest, Session};
use crate::state::Edge;

/// The largest file `read_file` reads whole.
const MAX_READ: u64 = 16 << 20;

/// Sandboxes of this server, for the organisation of the session's key.
pub struct Hosted {
    pub edge: Arc<Edge>,
}

impl SandboxFactory for Hosted {
    fn create(
        &self,
        caller: Option<&str>,
    ) -> BoxFuture<'_, Result<Box<dyn SessionSandbox>, ToolFailure>> {
        let key = caller.map(str::to_string);
        Box::pin(async move {
            let key = key.ok_or_else(|| ToolFailure("no key".into()))?;
            let org = organisation_of_key(&self.edge, &key)
                .await
                .ok_or_else(|| ToolFailure("the member key is not valid".into()))?;
            within_rate(&self.edge, &org).map_err(|r| ToolFailure(refusal(&r)))?;
            let mcp = &self.edge.config.mcp;
            let timeout = self.edge.config.runs.max_timeout_seconds;
            let request = SandboxRequest {
                max_cost_micros: mcp.max_cost_micros.min(org.per_run_cap_micros),
                timeout_seconds: timeout,
                idle_timeout_seconds: mcp.idle_timeout_seconds.clamp(1, timeout),
                files: Vec::new(),
                zero_data_retention: false,
                metadata: [("via".to_string(), "mcp".to_string())].into(),
            };
            let body = Map::new();
            let asked = SandboxAsked {
                org: &org,
                request,
                body: &body,
                idempotency_key: None,
            };
            match sandbox_admission::admit(&self.edge, asked)
                .await
                .map_err(failure)?
            {
                SessionAdmission::Admitted(session) => Ok(Box::new(HostedSandbox {
                    session,
                    stall: Duration::from_secs(30),
                })
                    as Box<dyn SessionSandbox>),
                SessionAdmission::Refused(r) => Err(ToolFailure(refusal(&r))),
                SessionAdmission::Replayed { .. } => Err(ToolFailure("unexpected replay".into())),
            }
        })
    }

    fn authorize<'a>(&'a self, key: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(async move { organisation_of_key(&self.edge, key).await.is_some() })
    }
}

fn refusal(r: &Refusal) -> String {
    match r {
        Refusal::Draining => "the server is shutting down".into(),
        Refusal::RateLimited { per_minute, .. } => {
            format!("at most {per_minute} sandboxes a minute")
        }
        Refusal::KeyReused => "idempotency key reused".into(),
        Refusal::InsufficientFunds { asked, available } => {
            format!("a sandbox needs {asked} micros but the free balance is {available}")
        }
        Refusal::TooManyInFlight { limit } => format!("at most {limit} runs and sandboxes at once"),
    }
}

struct HostedSandbox {
    session: Arc<Session>,
    stall: Duration,
}

impl SessionSandbox for HostedSandbox {
    fn run(
        &self,
        command: String,
        stdin: Option<String>,
        timeout: Option<Duration>,
    ) -> BoxFuture<'_, Result<CommandOutput, ToolFailure>> {
        Box::pin(async move {
            let request = CommandRequest {
                command,
                timeout,
                stdin: stdin.map(String::into_bytes).unwrap_or_default(),
                env: Vec::new(),
            };
            let result = self.session.command(request, None).await.map_err(failure)?;
            Ok(command_output(result))
        })
    }

    fn write_file(
        &self,
        path: String,
        data: Vec<u8>,
    ) -> BoxFuture<'_, Result<String, ToolFailure>> {
        Box::pin(async move {
            let len = data.len() as u64;
            let body =
                futures_util::stream::once(
                    async move { Ok::<_, std::io::Error>(Bytes::from(data)) },
                );
            let file = self
                .session
                .write_file(&path, Some(len), body, self.stall)
                .await
                .map_err(failure)?;
            Ok(file.path)
        })
    }

    fn read_file(&self, path: String) -> BoxFuture<'_, Result<Vec<u8>, ToolFailure>> {
        Box::pin(async move {
            let info = self.session.file_info(&path).await.map_err(failure)?;
            if info.size > MAX_READ {
                return Err(ToolFailure(format!(
                    "{path} is {} bytes; read_file reads at most {MAX_READ}",
                    info.size
                )));
            }
            let mut chunks = std::pin::pin!(self.session.read_file(path, info.size));
            let mut bytes = Vec::new();
            while let Some(chunk) = chunks.next().await {
                bytes.extend_from_slice(&chunk.map_err(failure)?);
            }
            Ok(bytes)
        })
    }

    fn list_files(
        &self,
        dir: Option<String>,
    ) -> BoxFuture<'_, Result<Vec<FileEntry>, ToolFailure>> {
        Box::pin(async move {
            let dir = dir.unwrap_or_else(|| ".".into());
            let entries = self.session.list_files(&dir).await.map_err(failure)?;
            Ok(entries.iter().map(file_entry).collect())
        })
    }

    fn end(&self) -> BoxFuture<'static, ()> {
        let session = self.session.clone();
        Box::pin(async move { session.end_and_wait(EndReason::Deleted).await })
    }
}
