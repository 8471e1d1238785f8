//! The MCP server: `ephemeral mcp` and the edge's `/mcp` route.
//!
//! This crate owns
//! - the five tools a model sees (`tools`): `run_shell`, `run_python`,
//!   `write_file`, `read_file` and `list_files`, their JSON schemas, their
//!   descriptions of the sandbox (from [`About`]) and how their results read;
//! - the MCP session (`session`): one sandbox per session, created on the
//!   first `tools/call` (never at `initialize`, so listing tools costs
//!   nothing), ended with the session or after its idle timeout;
//! - the two transports: stdio ([`serve_stdio`], [`serve_io`]) and
//!   streamable HTTP at `/mcp` ([`http_router`]) with Bearer keys, one
//!   session per `Mcp-Session-Id`, bound to the key that opened it.
//!
//! It does not own sandboxes, keys or organisations: the edge implements
//! [`SandboxFactory`] and [`SessionSandbox`] and wires the CLI and the route.
//!
//! # Protocol: rmcp
//!
//! JSON-RPC framing, the `initialize` handshake, version negotiation, stdio
//! (newline-delimited JSON) and the streamable-HTTP session layer come from
//! `rmcp`, the official Rust MCP SDK (pinned to 3.11.0, MSRV 1.88). It was
//! checked in a scratch project before it was chosen: it builds with Rust
//! 1.95 and adds 13 crates to the workspace's lock; its HTTP server is a
//! plain `http`/`tower` service with no axum or hyper of its own, so it sits
//! inside our axum 0.8 router; it hands a tool handler the HTTP request's
//! parts (headers and extensions), which is how a tool call finds its
//! session and so the Bearer key that opened it; and the official Python
//! client (`mcp` on PyPI) talks to it over both transports (`tests/python`).
//! What it does not give us we keep here, in a thin layer in front of it:
//! Bearer authentication (401), binding a session to its key (another key
//! gets 404), ending a session's sandbox on DELETE (204), and the idle
//! timeout, which counts a tool call still running as activity. rmcp answers
//! a POSTed request with a short `text/event-stream` (the spec allows it or
//! JSON) and serves a session's GET event stream.
//!
//! The server speaks the handshake revisions 2024-11-05, 2025-03-26,
//! 2025-06-18 and 2025-11-25 (the client's choice when it names one of them,
//! else 2025-06-18). It does not offer 2026-07-28, the stateless revision:
//! that one has no sessions, and a session is what a sandbox lives in; a
//! client that probes `server/discover` is told so and falls back to the
//! handshake. Tool results carry `structuredContent` from 2025-06-18 on.

#![warn(missing_docs)]

mod handler;
mod session;
mod streamable;
mod tools;

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};

pub use streamable::MCP_PATH;

/// A future that a sandbox or a factory returns.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// A command's result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandOutput {
    /// The command's exit code (a non-zero one is a normal result).
    pub exit_code: i32,
    /// What it wrote to standard output, as text.
    pub stdout: String,
    /// What it wrote to standard error, as text.
    pub stderr: String,
    /// How long it ran.
    pub duration_ms: u64,
    /// Whether stdout or stderr were cut to the sandbox's output limit.
    pub truncated: bool,
    /// The limit that stopped the command, if one did (for example
    /// `"timeout"` or `"memory"`).
    pub limit: Option<String>,
}

/// An entry of a folder listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileEntry {
    /// The entry's path as the sandbox sees it.
    pub path: String,
    /// `"file"`, `"dir"` or `"symlink"`.
    pub kind: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its permission bits in octal, as `"0644"`.
    pub mode: String,
    /// When it last changed (RFC 3339).
    pub modified_at: String,
}

/// Why a tool could not do its work: shown to the model as a tool error
/// (`isError: true`), never a protocol crash.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolFailure(pub String);

/// One sandbox, as the tools use it (one per MCP session).
///
/// Calls may overlap (a client may send several tool calls at once), and a
/// call's future may be dropped before it finishes (the client cancelled the
/// request): dropping it should stop that work and leave the sandbox usable.
/// [`SandboxFactory::create`]'s future is never dropped early.
pub trait SessionSandbox: Send + Sync {
    /// Runs `command` with `sh -c` in the sandbox, `stdin` as its standard
    /// input, stopped after `timeout` (the sandbox's default when `None`).
    fn run(
        &self,
        command: String,
        stdin: Option<String>,
        timeout: Option<Duration>,
    ) -> BoxFuture<'_, Result<CommandOutput, ToolFailure>>;
    /// Writes `data` to `path` (relative to the working folder, or
    /// absolute), creating missing parent folders. Returns the absolute path
    /// as the sandbox sees it.
    fn write_file(&self, path: String, data: Vec<u8>)
    -> BoxFuture<'_, Result<String, ToolFailure>>;
    /// Reads the file at `path`.
    fn read_file(&self, path: String) -> BoxFuture<'_, Result<Vec<u8>, ToolFailure>>;
    /// Lists the folder `dir` (the working folder when `None`).
    fn list_files(&self, dir: Option<String>)
    -> BoxFuture<'_, Result<Vec<FileEntry>, ToolFailure>>;
    /// Ends the sandbox (the MCP session ended).
    fn end(&self) -> BoxFuture<'static, ()>;
}

/// Where sessions' sandboxes come from. `caller` is who asked: `None` over
/// stdio, `Some(bearer key)` over HTTP.
pub trait SandboxFactory: Send + Sync {
    /// Creates the sandbox of one MCP session (on its first tool call).
    fn create(
        &self,
        caller: Option<&str>,
    ) -> BoxFuture<'_, Result<Box<dyn SessionSandbox>, ToolFailure>>;
    /// Whether `key` may open an MCP session at all (HTTP only; checked
    /// before anything is created, on every request).
    fn authorize<'a>(&'a self, key: &'a str) -> BoxFuture<'a, bool>;
}

/// What the tool descriptions say about the sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct About {
    /// The isolation level, as `ephemeral` names it (`"wasm"`, `"jail"`,
    /// `"kvm"`).
    pub isolation: String,
    /// The programs on the shell's `PATH`.
    pub shell_programs: Vec<String>,
    /// `python3 --version`'s number, if Python is there.
    pub python_version: Option<String>,
    /// Installed Python packages: (name, version).
    pub python_packages: Vec<(String, String)>,
    /// `node --version`'s number, if Node.js is there.
    pub node_version: Option<String>,
}

/// Serves one MCP session over this process's stdin and stdout until stdin
/// ends, then ends the session's sandbox.
///
/// The sandbox is created on the first tool call with `caller` `None`. After
/// `idle_timeout` without a request it is ended; a later tool call starts a
/// new one and says so in its result.
pub async fn serve_stdio(
    factory: Arc<dyn SandboxFactory>,
    about: About,
    idle_timeout: Duration,
) -> std::io::Result<()> {
    serve_io(
        factory,
        about,
        idle_timeout,
        tokio::io::stdin(),
        tokio::io::stdout(),
    )
    .await
}

/// [`serve_stdio`] over any byte streams: newline-delimited JSON-RPC read
/// from `reader` and written to `writer`, one MCP session, until `reader`
/// ends.
pub async fn serve_io<R, W>(
    factory: Arc<dyn SandboxFactory>,
    about: About,
    idle_timeout: Duration,
    reader: R,
    writer: W,
) -> std::io::Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    handler::serve_io(
        session::Shared::new(factory, about, idle_timeout),
        reader,
        writer,
    )
    .await
}

/// The streamable-HTTP MCP endpoint at [`MCP_PATH`] (`/mcp`), for the edge
/// to `.merge()` into its router.
///
/// Every request needs `Authorization: Bearer KEY` with a key that
/// [`SandboxFactory::authorize`] accepts, else 401 with `WWW-Authenticate:
/// Bearer`. A POSTed `initialize` opens a session and answers with its
/// `Mcp-Session-Id`; later requests name it, with the same key (another key,
/// or an unknown or ended id, gets 404). The session's sandbox is created on
/// its first tool call with `caller` `Some(key)`, and ends on DELETE or after
/// `idle_timeout` without a request (a tool call still running counts as
/// one).
///
/// Host-header checks are off (the edge serves on names of its own; keys are
/// what guard it).
pub fn http_router(
    factory: Arc<dyn SandboxFactory>,
    about: About,
    idle_timeout: Duration,
) -> axum::Router {
    streamable::router(session::Shared::new(factory, about, idle_timeout))
}
