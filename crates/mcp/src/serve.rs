//! Offline servers on MCP: [`OfflineHandler`] is an rmcp `ServerHandler` over any
//! [`OfflineServer`], served in-process (a duplex pipe: the client still speaks real JSON-RPC),
//! over stdio (`phonebench mcp-tools serve NAME`) or streamable HTTP (`--http ADDR`).

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::Value;

use crate::offline::{OfflineServer, ToolDef, check_arguments};

/// An offline server as an MCP server. Cloning shares the server (its state, for the tracker):
/// one handler is one server instance.
#[derive(Clone)]
pub struct OfflineHandler {
    name: &'static str,
    instructions: &'static str,
    tools: Arc<Vec<ToolDef>>,
    server: Arc<Mutex<Box<dyn OfflineServer>>>,
}

impl OfflineHandler {
    /// Wraps `server`.
    pub fn new(server: Box<dyn OfflineServer>) -> OfflineHandler {
        OfflineHandler {
            name: server.name(),
            instructions: server.instructions(),
            tools: Arc::new(server.tools()),
            server: Arc::new(Mutex::new(server)),
        }
    }

    /// The MCP form of the tools.
    pub fn mcp_tools(&self) -> Vec<Tool> {
        self.tools
            .iter()
            .map(|t| {
                let schema = t.input_schema.as_object().cloned().unwrap_or_default();
                Tool::new(t.name, t.description, Arc::new(schema))
            })
            .collect()
    }

    /// Calls a tool as `tools/call` would: unknown tools and bad arguments are tool errors
    /// (`isError`, text saying what is wrong), results are pretty JSON text plus the same value
    /// as structured content.
    pub fn call(&self, name: &str, arguments: Option<&serde_json::Map<String, Value>>) -> CallToolResult {
        let empty = serde_json::Map::new();
        let arguments = arguments.unwrap_or(&empty);
        let Some(def) = self.tools.iter().find(|t| t.name == name) else {
            let names: Vec<&str> = self.tools.iter().map(|t| t.name).collect();
            return CallToolResult::error(vec![ContentBlock::text(format!(
                "{} has no tool `{name}` (tools: {})",
                self.name,
                names.join(", ")
            ))]);
        };
        if let Err(e) = check_arguments(&def.input_schema, arguments) {
            return CallToolResult::error(vec![ContentBlock::text(format!("{name}: {e}"))]);
        }
        // A poisoned lock only means an earlier call panicked; the data is still whole.
        let mut server = self.server.lock().unwrap_or_else(|p| p.into_inner());
        match server.call(name, arguments) {
            Ok(value) => {
                let text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| value.to_string());
                let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
                result.structured_content = Some(value);
                result
            }
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!("{name}: {e}"))]),
        }
    }
}

impl ServerHandler for OfflineHandler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                format!("phonebench-{}", self.name),
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(self.instructions)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.mcp_tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(self.call(&request.name, request.arguments.as_ref()).into())
    }
}

/// Serves MCP over stdio until the client closes it.
pub async fn serve_stdio<S: ServerHandler>(handler: S) -> std::io::Result<()> {
    let running = rmcp::serve_server(handler, rmcp::transport::stdio())
        .await
        .map_err(|e| std::io::Error::other(format!("MCP over stdio: {e}")))?;
    running.waiting().await.map_err(|e| std::io::Error::other(format!("MCP over stdio: {e}")))?;
    Ok(())
}

/// Serves MCP over streamable HTTP at `/mcp` on `listener` until the process ends, one handler
/// from `factory` per MCP session. With `token`, every request must carry `Authorization:
/// Bearer TOKEN` (required by the callers for any address other than loopback).
pub async fn serve_http<S, F>(
    factory: F,
    listener: tokio::net::TcpListener,
    token: Option<String>,
) -> std::io::Result<()>
where
    S: ServerHandler + Send + 'static,
    F: Fn() -> Result<S, std::io::Error> + Send + Sync + 'static,
{
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
    let local = listener.local_addr()?;
    let mut config = StreamableHttpServerConfig::default();
    if !local.ip().is_loopback() {
        // The Host check guards loopback servers against DNS rebinding; a server bound to a
        // public address is guarded by its token instead.
        config.allowed_hosts.clear();
    }
    let service = StreamableHttpService::new(factory, Arc::new(LocalSessionManager::default()), config);
    let mut router = axum::Router::new().nest_service("/mcp", service);
    if let Some(token) = token {
        let expected = Arc::new(token);
        router = router.layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let expected = expected.clone();
                async move {
                    let given = request
                        .headers()
                        .get(axum::http::header::AUTHORIZATION)
                        .and_then(|v| v.to_str().ok());
                    // The scheme is case-insensitive (RFC 7235); the token is compared as given.
                    let presented = given
                        .and_then(|v| v.split_once(' '))
                        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                        .map(|(_, t)| t.trim());
                    if presented == Some(expected.as_str()) {
                        next.run(request).await
                    } else {
                        axum::response::IntoResponse::into_response((
                            axum::http::StatusCode::UNAUTHORIZED,
                            "a bearer token is required (Authorization: Bearer TOKEN)",
                        ))
                    }
                }
            },
        ));
    }
    axum::serve(listener, router).await
}
