//! `ephemeral mcp --url URL --key KEY`: each MCP session's sandbox is a
//! sandbox of a server, driven over its HTTP API (`/v1/sandboxes`), and
//! deleted when the session ends.

use std::time::Duration;

use ephemeral_mcp::{
    BoxFuture, CommandOutput, FileEntry, SandboxFactory, SessionSandbox, ToolFailure,
};
use serde_json::{Value, json};

use super::failure;

/// A server's sandboxes, with one key.
pub struct Remote {
    pub base: String,
    pub key: String,
    pub max_cost_micros: i64,
    pub idle_timeout_seconds: u64,
    pub client: reqwest::Client,
}

impl Remote {
    pub fn new(base: &str, key: &str, max_cost_micros: i64, idle_timeout_seconds: u64) -> Remote {
        Remote {
            base: base.trim_end_matches('/').to_string(),
            key: key.to_string(),
            max_cost_micros,
            idle_timeout_seconds,
            client: reqwest::Client::new(),
        }
    }
}

impl SandboxFactory for Remote {
    fn create(
        &self,
        _caller: Option<&str>,
    ) -> BoxFuture<'_, Result<Box<dyn SessionSandbox>, ToolFailure>> {
        Box::pin(async move {
            let body = json!({
                "max_cost_micros": self.max_cost_micros,
                "idle_timeout_seconds": self.idle_timeout_seconds,
                "metadata": {"via": "mcp"},
            });
            let request = self
                .client
                .post(format!("{}/v1/sandboxes", self.base))
                .json(&body);
            let sandbox = answer(request.bearer_auth(&self.key)).await?;
            let id = sandbox["id"]
                .as_str()
                .ok_or_else(|| ToolFailure("the server gave no sandbox id".into()))?;
            Ok(Box::new(RemoteSandbox {
                url: format!("{}/v1/sandboxes/{id}", self.base),
                key: self.key.clone(),
                client: self.client.clone(),
            }) as Box<dyn SessionSandbox>)
        })
    }

    fn authorize<'a>(&'a self, _key: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(async { false })
    }
}

struct RemoteSandbox {
    url: String,
    key: String,
    client: reqwest::Client,
}

impl RemoteSandbox {
    fn file_url(&self, path: &str) -> String {
        format!("{}/files/{}", self.url, crate::api::encode_file_path(path))
    }
}

impl SessionSandbox for RemoteSandbox {
    fn run(
        &self,
        command: String,
        stdin: Option<String>,
        timeout: Option<Duration>,
    ) -> BoxFuture<'_, Result<CommandOutput, ToolFailure>> {
        Box::pin(async move {
            let mut body = json!({"command": command});
            if let Some(stdin) = stdin {
                body["stdin"] = json!(stdin);
            }
            if let Some(t) = timeout {
                body["timeout_seconds"] = json!(t.as_secs().max(1));
            }
            let request = self
                .client
                .post(format!("{}/commands", self.url))
                .json(&body);
            let r = answer(request.bearer_auth(&self.key)).await?;
            Ok(CommandOutput {
                exit_code: r["exit_code"].as_i64().unwrap_or(-1) as i32,
                stdout: r["stdout"].as_str().unwrap_or_default().to_string(),
                stderr: r["stderr"].as_str().unwrap_or_default().to_string(),
                duration_ms: r["duration_ms"].as_u64().unwrap_or(0),
                truncated: r["truncated"].as_bool().unwrap_or(false),
                limit: r["limit"].as_str().map(str::to_string),
            })
        })
    }

    fn write_file(
        &self,
        path: String,
        data: Vec<u8>,
    ) -> BoxFuture<'_, Result<String, ToolFailure>> {
        Box::pin(async move {
            let request = self.client.put(self.file_url(&path)).body(data);
            let written = answer(request.bearer_auth(&self.key)).await?;
            Ok(written["path"].as_str().unwrap_or(&path).to_string())
        })
    }

    fn read_file(&self, path: String) -> BoxFuture<'_, Result<Vec<u8>, ToolFailure>> {
        Box::pin(async move {
            let response = self
                .client
                .get(self.file_url(&path))
                .bearer_auth(&self.key)
                .send()
                .await
                .map_err(failure)?;
            if !response.status().is_success() {
                return Err(problem(response).await);
            }
            Ok(response.bytes().await.map_err(failure)?.to_vec())
        })
    }

    fn list_files(
        &self,
        dir: Option<String>,
    ) -> BoxFuture<'_, Result<Vec<FileEntry>, ToolFailure>> {
        Box::pin(async move {
            let mut request = self.client.get(format!("{}/files", self.url));
            if let Some(dir) = dir {
                request = request.query(&[("dir", dir)]);
            }
            let list = answer(request.bearer_auth(&self.key)).await?;
            let entries = list["data"].as_array().cloned().unwrap_or_default();
            Ok(entries
                .iter()
                .map(|e| FileEntry {
                    path: e["path"].as_str().unwrap_or_default().to_string(),
                    kind: e["type"].as_str().unwrap_or_default().to_string(),
                    size: e["size"].as_u64().unwrap_or(0),
                    mode: e["mode"].as_str().unwrap_or_default().to_string(),
                    modified_at: e["modified_at"].as_str().unwrap_or_default().to_string(),
                })
                .collect())
        })
    }

    fn end(&self) -> BoxFuture<'static, ()> {
        let request = self.client.delete(&self.url).bearer_auth(&self.key);
        Box::pin(async move {
            if let Err(e) = request.send().await {
                tracing::warn!(error = %e, "cannot delete the MCP session's sandbox");
            }
        })
    }
}

/// A JSON answer, or the problem's detail as the tool's failure.
async fn answer(request: reqwest::RequestBuilder) -> Result<Value, ToolFailure> {
    let response = request
        .send()
        .await
        .map_err(|e| ToolFailure(format!("cannot reach the server: {e}")))?;
    if !response.status().is_success() {
        return Err(problem(response).await);
    }
    response.json().await.map_err(failure)
}

async fn problem(response: reqwest::Response) -> ToolFailure {
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    let detail = body["detail"].as_str().unwrap_or("no detail");
    ToolFailure(format!("{status}: {detail}"))
}
