//! The MCP server as rmcp sees it: the handshake's answer, `tools/list` and
//! `tools/call`; and serving one session over a pair of byte streams.

use std::borrow::Cow;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::ToolFailure;
use crate::session::{Session, Shared};
use crate::tools::{self, ToolName};

/// The handshake revisions served, oldest first. 2026-07-28 is left out on
/// purpose: it has no sessions (see the crate's documentation).
static SUPPORTED_VERSIONS: [ProtocolVersion; 4] = [
    ProtocolVersion::V_2024_11_05,
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
];

/// The revision from which tool results carry `structuredContent`.
const STRUCTURED_FROM: &str = "2025-06-18";

/// A request's session, put in the HTTP request's extensions by the HTTP
/// layer (it finds the session by its `Mcp-Session-Id`).
#[derive(Clone)]
pub(crate) struct SessionRef(pub(crate) Arc<Session>);

/// The MCP server of one session. Over stdio it holds its session; over
/// HTTP each request brings it (rmcp makes one handler per HTTP session, and
/// the HTTP layer keeps the sessions).
#[derive(Clone)]
pub(crate) struct Handler {
    shared: Arc<Shared>,
    session: Option<Arc<Session>>,
}

impl Handler {
    pub(crate) fn new(shared: Arc<Shared>, session: Option<Arc<Session>>) -> Self {
        Self { shared, session }
    }

    fn session(&self, context: &RequestContext<RoleServer>) -> Option<Arc<Session>> {
        if let Some(session) = &self.session {
            return Some(session.clone());
        }
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<SessionRef>())
            .map(|session| session.0.clone())
    }
}

fn tool_error(failure: &ToolFailure) -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text(failure.0.clone())]).into()
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_protocol_version(ProtocolVersion::V_2025_06_18)
            .with_server_info(
                Implementation::new("ephemeral", env!("CARGO_PKG_VERSION"))
                    .with_title("Ephemeral sandbox"),
            )
            .with_instructions(self.shared.instructions.clone())
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&SUPPORTED_VERSIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if let Some(session) = self.session(&context) {
            session.touch();
        }
        Ok(ListToolsResult::with_all_items(self.shared.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = ToolName::parse(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {}", request.name),
                None,
            ));
        };
        let Some(session) = self.session(&context) else {
            return Ok(tool_error(&ToolFailure(
                "no MCP session: send initialize first (and, over HTTP, its Mcp-Session-Id)".into(),
            )));
        };
        let structured = context
            .protocol_version()
            .is_some_and(|version| version.as_str() >= STRUCTURED_FROM);
        let call = match tools::parse(tool, request.arguments) {
            Ok(call) => call,
            Err(failure) => return Ok(tool_error(&failure)),
        };
        let _busy = session.begin_call();
        // Its own task, so that a panic in a sandbox becomes a tool error and
        // a cancelled request stops the work.
        let work = {
            let session = session.clone();
            tokio::spawn(async move {
                // Making the sandbox is not cancelled with the call: it runs
                // to its end in a task of its own, and the next call uses it.
                let making =
                    tokio::spawn(
                        async move { session.sandbox().await.map(|lease| (lease, session)) },
                    );
                let (lease, session) = making.await.map_err(|e| {
                    tracing::error!("making an mcp sandbox failed: {e}");
                    ToolFailure("could not start the sandbox".into())
                })??;
                let snippet = session.next_snippet();
                let result = tools::execute(call, lease.sandbox.as_ref(), snippet).await;
                // A new sandbox after an idle one ended says so first.
                match (lease.note, result) {
                    (None, result) => result,
                    (Some(note), Ok(reply)) => Ok(tools::Reply {
                        text: format!("{note}\n{}", reply.text),
                        ..reply
                    }),
                    (Some(note), Err(failure)) => Err(ToolFailure(format!("{note}\n{failure}"))),
                }
            })
        };
        let abort = work.abort_handle();
        let outcome = tokio::select! {
            joined = work => joined.unwrap_or_else(|e| {
                tracing::error!(tool = tool.as_str(), "mcp tool call failed: {e}");
                Err(ToolFailure(format!("{} failed unexpectedly", tool.as_str())))
            }),
            () = context.ct.cancelled() => {
                abort.abort();
                Err(ToolFailure("cancelled".into()))
            }
        };
        Ok(match outcome {
            Ok(reply) => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(reply.text)]);
                if structured {
                    result.structured_content = Some(reply.structured);
                }
                result.into()
            }
            Err(failure) => tool_error(&failure),
        })
    }
}

/// Serves one session over `reader` and `writer` until `reader` ends, then
/// ends its sandbox.
pub(crate) async fn serve_io<R, W>(shared: Arc<Shared>, reader: R, writer: W) -> std::io::Result<()>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let session = Session::new(shared.clone(), None);
    let reaper = tokio::spawn(crate::session::reap_idle_sandboxes(
        session.clone(),
        shared.idle_timeout,
    ));
    let handler = Handler::new(shared, Some(session.clone()));
    let result = match handler.serve((reader, writer)).await {
        Ok(running) => match running.waiting().await {
            Ok(reason) => {
                tracing::debug!(?reason, "mcp stdio session ended");
                Ok(())
            }
            Err(e) => Err(std::io::Error::other(format!(
                "the MCP session failed: {e}"
            ))),
        },
        // The client left (or spoke no MCP) before the handshake finished.
        Err(e) => {
            tracing::debug!("mcp stdio session ended before initialize: {e}");
            Ok(())
        }
    };
    reaper.abort();
    session.end().await;
    result
}
