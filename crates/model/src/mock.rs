//! A mock OpenAI-compatible server (axum) that answers from a script or a function: the model
//! server of tests and dry runs. It records every request it receives so tests can check what
//! went over the wire (texts, images).
//!
//! Answers depend only on the request, never on arrival order, so episodes running in parallel
//! get the same answers in any schedule, and runs against the mock are deterministic.
//!
//! Script files (`phonebench mock-model --script FILE`) are TOML: rules tried in order, the
//! first whose conditions all hold answers.
//!
//! ```toml
//! [[rule]]
//! model = "planner"                 # the request's model equals this (optional)
//! contains = "Add contact"          # the scope's text contains this (optional)
//! regex = '\[(\d+)\] a View \(text: Add' # the scope's text matches; `$1`, `${name}` expand in `reply`
//! scope = "last-user"               # "last-user" (default), "system" or "all"
//! images = true                     # the request has (true) or has no (false) image (optional)
//! reply = "In summary, the next action I will perform is ```click [$1]```"
//! reasoning = "..."                 # optional `reasoning_content`
//! # instead of reply: tool_call = { name = "tap", arguments = '{"index": 3}' }
//! # or an HTTP error:  status = 503            (body = "...", retry_after = 1)
//! # or a raw 200 body: body = "not json"
//! delay_ms = 0                      # wait before answering (optional)
//! ```
//! A request no rule matches gets HTTP 500 naming the problem.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use regex::Regex;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::types::{ChatResponse, TokenUsage, ToolCall};

/// What the mock answers to one request.
#[derive(Debug, Clone, PartialEq)]
pub enum MockReply {
    /// A chat completion. Zero usage is replaced by an estimate from the request and answer
    /// (4 characters a token, 256 tokens an image), so token accounting has numbers to add.
    Message(ChatResponse),
    /// An HTTP error.
    Status {
        /// The status code.
        code: u16,
        /// The body.
        body: String,
        /// A `Retry-After` header in seconds.
        retry_after: Option<u64>,
    },
    /// HTTP 200 with this body as it is (garbage for error-path tests).
    Raw(String),
    /// Wait, then answer.
    Delay {
        /// Milliseconds.
        ms: u64,
        /// The answer.
        then: Box<MockReply>,
    },
}

impl MockReply {
    /// A plain text answer.
    pub fn text(content: impl Into<String>) -> MockReply {
        MockReply::Message(ChatResponse { content: content.into(), ..ChatResponse::default() })
    }
}

/// Decides the answer to a request body.
pub trait Responder: Send + Sync + 'static {
    /// The answer to `request` (the chat-completions JSON body).
    fn respond(&self, request: &Value) -> MockReply;
}

impl<F> Responder for F
where
    F: Fn(&Value) -> MockReply + Send + Sync + 'static,
{
    fn respond(&self, request: &Value) -> MockReply {
        self(request)
    }
}

/// The text of one message's content (string or typed parts).
fn content_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

fn messages(request: &Value) -> &[Value] {
    request.get("messages").and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// The text of the last user message of a request.
pub fn last_user_text(request: &Value) -> String {
    messages(request)
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .map(content_text)
        .unwrap_or_default()
}

/// The text of the system messages of a request.
pub fn system_text(request: &Value) -> String {
    messages(request)
        .iter()
        .filter(|m| m.get("role").and_then(Value::as_str) == Some("system"))
        .map(content_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every message's text, in order.
pub fn all_text(request: &Value) -> String {
    messages(request).iter().map(content_text).collect::<Vec<_>>().join("\n")
}

/// The image URLs of a request, in order.
pub fn image_urls(request: &Value) -> Vec<String> {
    messages(request)
        .iter()
        .filter_map(|m| m.get("content").and_then(Value::as_array))
        .flatten()
        .filter_map(|p| p.get("image_url").and_then(|i| i.get("url")).and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// The usage a server might report: 4 characters a token for text, 256 tokens an image.
pub fn estimate_usage(request: &Value, response: &ChatResponse) -> TokenUsage {
    let chars = all_text(request).chars().count() as u64;
    let images = image_urls(request).len() as u64;
    let answer: u64 = response.content.chars().count() as u64
        + response
            .tool_calls
            .iter()
            .map(|c| (c.name.len() + c.arguments.chars().count()) as u64)
            .sum::<u64>();
    TokenUsage {
        prompt_tokens: chars.div_ceil(4) + 256 * images,
        completion_tokens: answer.div_ceil(4).max(1),
    }
}

/// A running mock server.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Value>>>,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

struct Shared {
    responder: Box<dyn Responder>,
    requests: Arc<Mutex<Vec<Value>>>,
    log: Option<Mutex<std::fs::File>>,
}

impl MockServer {
    /// Starts a server on a free loopback port.
    pub async fn start(responder: impl Responder) -> std::io::Result<MockServer> {
        MockServer::bind("127.0.0.1:0".parse().map_err(std::io::Error::other)?, responder, None).await
    }

    /// Starts a server on `addr`, appending every request as a JSON line to `log` if given.
    pub async fn bind(
        addr: SocketAddr,
        responder: impl Responder,
        log: Option<&Path>,
    ) -> std::io::Result<MockServer> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = match log {
            Some(path) => Some(Mutex::new(std::fs::OpenOptions::new().create(true).append(true).open(path)?)),
            None => None,
        };
        let shared = Arc::new(Shared { responder: Box::new(responder), requests: requests.clone(), log });
        let app = Router::new()
            .route("/v1/chat/completions", post(completions))
            .route("/v1/models", get(models))
            // Requests carry screenshots: allow far more than axum's 2 MB default.
            .layer(DefaultBodyLimit::max(256 * 1024 * 1024))
            .with_state(shared);
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        Ok(MockServer { addr, requests, shutdown: Some(tx), task: Some(task) })
    }

    /// The base URL to give clients: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request body received so far, in arrival order.
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// How many requests arrived.
    pub fn request_count(&self) -> usize {
        self.requests.lock().map(|r| r.len()).unwrap_or(0)
    }

    /// Stops the server: graceful shutdown, which waits for open keep-alive connections for two
    /// seconds at most before the server task is aborted.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(std::time::Duration::from_secs(2), &mut task).await.is_err()
        {
            task.abort();
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

async fn models() -> Response {
    axum::Json(
        json!({"object": "list", "data": [{"id": "mock", "object": "model", "owned_by": "phonebench"}]}),
    )
    .into_response()
}

fn error(code: StatusCode, message: &str) -> Response {
    (code, axum::Json(json!({"error": {"message": message, "type": "mock_error"}}))).into_response()
}

async fn completions(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let request: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("the body is not JSON: {e}")),
    };
    if let Ok(mut r) = shared.requests.lock() {
        r.push(request.clone());
    }
    if let Some(log) = &shared.log
        && let Ok(mut file) = log.lock()
    {
        use std::io::Write as _;
        let _ = writeln!(file, "{request}");
    }
    let mut reply = shared.responder.respond(&request);
    loop {
        match reply {
            MockReply::Delay { ms, then } => {
                tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                reply = *then;
            }
            MockReply::Message(mut response) => {
                if response.usage == TokenUsage::default() {
                    response.usage = estimate_usage(&request, &response);
                }
                let model = request.get("model").and_then(Value::as_str).unwrap_or("mock");
                return axum::Json(response.to_body(model)).into_response();
            }
            MockReply::Status { code, body, retry_after } => {
                let status = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                let mut response = (status, body).into_response();
                if let Some(secs) = retry_after
                    && let Ok(v) = HeaderValue::from_str(&secs.to_string())
                {
                    response.headers_mut().insert(header::RETRY_AFTER, v);
                }
                return response;
            }
            MockReply::Raw(body) => {
                return ([(header::CONTENT_TYPE, "application/json")], body).into_response();
            }
        }
    }
}

/// Why a script file could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ScriptError {
    /// The file.
    pub file: PathBuf,
    /// The 1-based line (0 when the file could not be read).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptFile {
    #[serde(default)]
    rule: Vec<toml::Spanned<RuleSpec>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    model: Option<String>,
    contains: Option<String>,
    regex: Option<String>,
    scope: Option<String>,
    images: Option<bool>,
    reply: Option<String>,
    reasoning: Option<String>,
    tool_call: Option<ToolCallSpec>,
    status: Option<u16>,
    body: Option<String>,
    retry_after: Option<u64>,
    delay_ms: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolCallSpec {
    name: String,
    arguments: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    LastUser,
    System,
    All,
}

#[derive(Debug)]
enum Answer {
    Reply { text: String, reasoning: Option<String>, tool_call: Option<ToolCall> },
    Status { code: u16, body: String, retry_after: Option<u64> },
    Raw(String),
}

#[derive(Debug)]
struct Rule {
    model: Option<String>,
    contains: Option<String>,
    regex: Option<Regex>,
    scope: Scope,
    images: Option<bool>,
    answer: Answer,
    delay_ms: u64,
}

/// Answers from the rules of a script file (see the module docs).
#[derive(Debug)]
pub struct ScriptResponder {
    rules: Vec<Rule>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

impl ScriptResponder {
    /// Reads a script file.
    pub fn load(path: &Path) -> Result<ScriptResponder, ScriptError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScriptError {
            file: path.to_path_buf(),
            line: 0,
            message: e.to_string(),
        })?;
        ScriptResponder::parse(&text, path)
    }

    /// Parses script text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<ScriptResponder, ScriptError> {
        let err = |line: usize, message: String| ScriptError { file: path.to_path_buf(), line, message };
        let file: ScriptFile = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| line_of(text, s.start));
            err(line, e.message().to_string())
        })?;
        if file.rule.is_empty() {
            return Err(err(1, "no [[rule]] tables: the mock would answer nothing".into()));
        }
        let mut rules = Vec::new();
        for spanned in file.rule {
            let line = line_of(text, spanned.span().start);
            let spec = spanned.into_inner();
            let regex = match &spec.regex {
                Some(r) => Some(Regex::new(r).map_err(|e| err(line, format!("bad regex: {e}")))?),
                None => None,
            };
            let scope = match spec.scope.as_deref() {
                None | Some("last-user") => Scope::LastUser,
                Some("system") => Scope::System,
                Some("all") => Scope::All,
                Some(other) => {
                    return Err(err(line, format!("unknown scope `{other}` (last-user, system, all)")));
                }
            };
            let kinds = [
                spec.reply.is_some() || spec.tool_call.is_some(),
                spec.status.is_some(),
                spec.body.is_some(),
            ];
            let answer = match kinds {
                [true, false, false] => Answer::Reply {
                    text: spec.reply.unwrap_or_default(),
                    reasoning: spec.reasoning,
                    tool_call: spec.tool_call.map(|t| ToolCall {
                        id: "call_0".into(),
                        name: t.name,
                        arguments: t.arguments,
                    }),
                },
                [false, true, _] => Answer::Status {
                    code: spec
                        .status
                        .filter(|c| (100..600).contains(c))
                        .ok_or_else(|| err(line, "status must be 100..599".into()))?,
                    body: spec.body.unwrap_or_default(),
                    retry_after: spec.retry_after,
                },
                [false, false, true] => Answer::Raw(spec.body.unwrap_or_default()),
                _ => {
                    return Err(err(
                        line,
                        "a rule answers with exactly one of: reply/tool_call, status (with an optional body), body".into(),
                    ));
                }
            };
            rules.push(Rule {
                model: spec.model,
                contains: spec.contains,
                regex,
                scope,
                images: spec.images,
                answer,
                delay_ms: spec.delay_ms.unwrap_or(0),
            });
        }
        Ok(ScriptResponder { rules })
    }
}

impl Responder for ScriptResponder {
    fn respond(&self, request: &Value) -> MockReply {
        for rule in &self.rules {
            if let Some(m) = &rule.model
                && request.get("model").and_then(Value::as_str) != Some(m.as_str())
            {
                continue;
            }
            if let Some(want) = rule.images
                && want == image_urls(request).is_empty()
            {
                continue;
            }
            let text = match rule.scope {
                Scope::LastUser => last_user_text(request),
                Scope::System => system_text(request),
                Scope::All => all_text(request),
            };
            if let Some(c) = &rule.contains
                && !text.contains(c.as_str())
            {
                continue;
            }
            let captures = match &rule.regex {
                Some(re) => match re.captures(&text) {
                    Some(c) => Some(c),
                    None => continue,
                },
                None => None,
            };
            let reply = match &rule.answer {
                Answer::Reply { text: template, reasoning, tool_call } => {
                    let content = match &captures {
                        Some(c) => {
                            let mut out = String::new();
                            c.expand(template, &mut out);
                            out
                        }
                        None => template.clone(),
                    };
                    MockReply::Message(ChatResponse {
                        content,
                        reasoning: reasoning.clone(),
                        tool_calls: tool_call.iter().cloned().collect(),
                        ..ChatResponse::default()
                    })
                }
                Answer::Status { code, body, retry_after } => {
                    MockReply::Status { code: *code, body: body.clone(), retry_after: *retry_after }
                }
                Answer::Raw(body) => MockReply::Raw(body.clone()),
            };
            return if rule.delay_ms > 0 {
                MockReply::Delay { ms: rule.delay_ms, then: Box::new(reply) }
            } else {
                reply
            };
        }
        MockReply::Status {
            code: 500,
            body: "mock script: no rule matches this request".into(),
            retry_after: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(model: &str, user: &str) -> Value {
        json!({"model": model, "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": user}]})
    }

    #[test]
    fn rules_match_in_order_with_captures() {
        let script = r#"
[[rule]]
model = "grounder"
reply = "<tool_call>{}</tool_call>"

[[rule]]
regex = '\[(\d+)\] a View \(text: Add'
reply = "```click [$1]```"

[[rule]]
contains = "boom"
status = 503
retry_after = 2

[[rule]]
reply = "```press [back]```"
"#;
        let r = ScriptResponder::parse(script, Path::new("s.toml")).unwrap();
        let text = |reply: MockReply| match reply {
            MockReply::Message(m) => m.content,
            other => panic!("{other:?}"),
        };
        assert_eq!(text(r.respond(&request("grounder", "x"))), "<tool_call>{}</tool_call>");
        assert_eq!(
            text(r.respond(&request("m", "[0] a View\n[7] a View (text: Add contact)"))),
            "```click [7]```"
        );
        assert_eq!(
            r.respond(&request("m", "boom")),
            MockReply::Status { code: 503, body: String::new(), retry_after: Some(2) }
        );
        assert_eq!(text(r.respond(&request("m", "anything"))), "```press [back]```");
    }

    #[test]
    fn script_errors_name_the_line() {
        let e = ScriptResponder::parse(
            "[[rule]]\nreply = \"a\"\n\n[[rule]]\nregex = '('\nreply = \"b\"\n",
            Path::new("s.toml"),
        )
        .unwrap_err();
        assert_eq!((e.line, e.file.clone()), (4, PathBuf::from("s.toml")), "{e}");
        assert!(e.message.contains("regex"), "{e}");
        let e = ScriptResponder::parse("[[rule]]\nreply = \"a\"\nstatus = 500\n", Path::new("s.toml"))
            .unwrap_err();
        assert!(e.message.contains("exactly one"), "{e}");
        let e = ScriptResponder::parse("[[rule]]\nreplly = \"a\"\n", Path::new("s.toml")).unwrap_err();
        assert!(e.to_string().starts_with("s.toml:"), "{e}");
        assert!(e.message.contains("replly"), "{e}");
        assert!(ScriptResponder::parse("", Path::new("s.toml")).unwrap_err().message.contains("no [[rule]]"));
    }

    #[test]
    fn usage_estimates_count_text_and_images() {
        let req = json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "abcdefgh"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]}]});
        let u = estimate_usage(&req, &ChatResponse { content: "abcde".into(), ..ChatResponse::default() });
        assert_eq!(u, TokenUsage { prompt_tokens: 2 + 256, completion_tokens: 2 });
        assert_eq!(image_urls(&req).len(), 1);
    }
}
