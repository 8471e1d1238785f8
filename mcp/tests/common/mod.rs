//! Helpers shared by the tests: the fake factory and a bare JSON-RPC client.

#![allow(dead_code)]

pub mod fake;

use std::future::Future;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream, Lines};

/// Waits until `check` holds, failing the test after a generous bound.
pub async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !check() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Bounds a step of a test.
pub async fn within<T>(what: &str, future: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), future)
        .await
        .unwrap_or_else(|_| panic!("timed out: {what}"))
}

/// A JSON-RPC client over newline-delimited JSON.
pub struct LineClient {
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    writer: tokio::io::WriteHalf<DuplexStream>,
    next_id: i64,
}

impl LineClient {
    pub fn new(stream: DuplexStream) -> Self {
        let (reader, writer) = tokio::io::split(stream);
        Self {
            lines: BufReader::new(reader).lines(),
            writer,
            next_id: 0,
        }
    }

    pub async fn send_raw(&mut self, line: &str) {
        self.writer
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write to the server");
        self.writer.flush().await.expect("flush");
    }

    /// The next message the server writes.
    pub async fn receive(&mut self) -> Value {
        let line = within("a line from the server", self.lines.next_line())
            .await
            .expect("read from the server")
            .expect("the server closed its output");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Sends a request and returns its whole response (result or error).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(&message.to_string()).await;
        loop {
            let message = self.receive().await;
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
        }
    }

    pub async fn notify(&mut self, method: &str) {
        let message = json!({"jsonrpc": "2.0", "method": method});
        self.send_raw(&message.to_string()).await;
    }

    /// `initialize` at `version`, then `notifications/initialized`.
    pub async fn handshake(&mut self, version: &str) -> Value {
        let response = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "test", "version": "0"}
                }),
            )
            .await;
        self.notify("notifications/initialized").await;
        response
    }

    /// `tools/call`, returning the result (panics on a protocol error).
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        response
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("tools/call {tool} failed: {response}"))
    }

    /// Closes the client's side (the server sees EOF).
    pub async fn close(mut self) {
        let _ = self.writer.shutdown().await;
    }
}

/// The text of a tool result's first content block.
pub fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

pub fn is_error(result: &Value) -> bool {
    result["isError"].as_bool().unwrap_or(false)
}
