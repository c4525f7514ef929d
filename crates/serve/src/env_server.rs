//! The environment server: sessions of phones over HTTP and WebSocket, shaped like OpenEnv.
//!
//! Each session is one [`PhoneSession`]: a phone playing a task instance (or a free phone).
//! `POST /reset` starts an episode (and a session, when none is named), `POST /step` takes one
//! action, `GET /state` describes the session; `/health`, `/metadata`, `/schema` and `/tasks`
//! describe the server. `GET /ws` is the same over one WebSocket per session, with OpenEnv's
//! message shapes (`{"type": "reset" | "step" | "state" | "close", "data": ...}` in,
//! `{"type": "observation" | "state" | "error", "data": ...}` out). The wire format is in
//! `docs/env-server.md`.
//!
//! What a client sends is untrusted: request bodies and WebSocket messages are capped in size,
//! sessions in number, idle sessions end; a bad request is a 4xx with a message. An action the
//! agent got wrong is not a bad request: it is the agent's format error, answered with an
//! observation that says what was wrong, and the episode goes on under its policy. On a
//! loopback address, requests naming another host or coming from a web page of another origin
//! are refused (DNS rebinding, cross-site WebSockets); anywhere else a bearer token is needed.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{DefaultBodyLimit, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine as _;
use phonebench_actions::json_action::{action_from_object, detect_dialect};
use phonebench_actions::syntax::json_type;
use phonebench_actions::{Action, ParseOptions, Syntax, canonical, parse_action_with};
use phonebench_agents::ReferenceAgent;
use phonebench_env::{EpisodeEnd, EpisodeOptions, FormatErrorPolicy};
use phonebench_observe::ObservationFormat;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio::sync::Mutex;

use crate::session::{
    Acted, PhoneServerConfig, PhoneSession, end_text, is_free_phone, prepare_free, prepare_task, verdict_json,
};
use crate::{SessionLimit, SessionTicket};

/// The limits and access rules of an environment server.
#[derive(Debug, Clone)]
pub struct EnvServerLimits {
    /// Most sessions alive at once (HTTP sessions and WebSocket connections together).
    pub max_sessions: usize,
    /// A session unused this long ends (its place is freed).
    pub idle: Duration,
    /// Largest request body or WebSocket message, in bytes.
    pub max_request_bytes: usize,
    /// The bearer token every request but `/health` must carry, if any.
    pub token: Option<String>,
    /// The server listens on loopback only: requests must name a loopback host, and web pages
    /// of other origins are refused.
    pub loopback: bool,
    /// Every session's screen.
    pub display: phonebench_phone::Display,
}

impl Default for EnvServerLimits {
    fn default() -> Self {
        EnvServerLimits {
            max_sessions: 256,
            idle: Duration::from_secs(600),
            max_request_bytes: 1 << 20,
            token: None,
            loopback: true,
            display: phonebench_phone::Display::default(),
        }
    }
}

/// One session: the phone, how its observations are shown, when it was last used.
struct Slot {
    id: String,
    phone: PhoneSession,
    view: View,
    reward: RewardKind,
    seed: u64,
    episode_id: Option<String>,
    /// The task's reference solution, replayed on request (`/expert`) for the current screen.
    expert: Option<ReferenceAgent>,
    /// The expert's suggestion for the current screen, once asked (asking again repeats it; a
    /// step moves on).
    expert_pending: Option<Value>,
    last_used: Instant,
    _ticket: SessionTicket,
}

impl Slot {
    fn new(ticket: SessionTicket) -> Slot {
        Slot {
            id: new_session_id(),
            phone: PhoneSession::default(),
            view: View::default(),
            reward: RewardKind::default(),
            seed: 0,
            episode_id: None,
            expert: None,
            expert_pending: None,
            last_used: Instant::now(),
            _ticket: ticket,
        }
    }
}

/// The server's shared state.
struct Shared {
    phone: PhoneServerConfig,
    limits: EnvServerLimits,
    places: SessionLimit,
    sessions: std::sync::Mutex<HashMap<String, Arc<Mutex<Slot>>>>,
}

/// A request that cannot be served: status and message (sent as `{"error": message}`).
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { status, code, message: message.into() }
    }

    fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Json(json!({ "error": self.message, "code": self.code }));
        if self.status == StatusCode::PAYLOAD_TOO_LARGE {
            // The rest of the body is not read, so the connection cannot be reused: say so,
            // or a client sending its next request on it meets a broken pipe.
            return (self.status, [(header::CONNECTION, "close")], body).into_response();
        }
        (self.status, body).into_response()
    }
}

/// A request body: a JSON object read as `T`; anything else is a 4xx saying what is wrong.
fn body<T: DeserializeOwned>(payload: Result<Json<Value>, JsonRejection>) -> Result<T, ApiError> {
    let value = payload.map(|Json(v)| v).map_err(|rejection| {
        let status = rejection.status();
        let code = match rejection {
            JsonRejection::MissingJsonContentType(_) => "UNSUPPORTED_MEDIA_TYPE",
            _ if status == StatusCode::PAYLOAD_TOO_LARGE => "PAYLOAD_TOO_LARGE",
            _ => "INVALID_JSON",
        };
        ApiError::new(status, code, rejection.body_text())
    })?;
    from_object(value)
}

/// Reads `T` from a JSON object. serde would also read a struct from an array, by position:
/// only objects are requests.
fn from_object<T: DeserializeOwned>(value: Value) -> Result<T, ApiError> {
    if !value.is_object() {
        return Err(ApiError::invalid(format!("expected a JSON object, not {}", json_type(&value))));
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        ApiError::invalid(if path == "." { inner.to_string() } else { format!("{path}: {inner}") })
    })
}

/// A query string read as `T`, or a 400 saying what is wrong.
fn query<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, ApiError> {
    q.map(|Query(t)| t).map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, "VALIDATION_ERROR", e.body_text()))
}

/// How a screenshot is sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum ScreenshotKind {
    /// No screenshot.
    #[default]
    None,
    /// A PNG file, base64.
    Png,
    /// Raw RGB bytes (row by row, 3 bytes a pixel), base64, with width and height.
    Rgb,
}

/// What an observation carries besides the text.
#[derive(Debug, Clone, Copy, Default)]
struct View {
    screenshot: ScreenshotKind,
    som: bool,
    elements: bool,
}

/// A request's view options: each one given replaces the session's, the others stay.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct ViewRequest {
    screenshot: Option<ScreenshotKind>,
    som: Option<bool>,
    elements: Option<bool>,
}

impl View {
    fn with(self, r: ViewRequest) -> View {
        View {
            screenshot: r.screenshot.unwrap_or(self.screenshot),
            som: r.som.unwrap_or(self.som),
            elements: r.elements.unwrap_or(self.elements),
        }
    }
}

/// What the episode's end pays.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
enum RewardKind {
    /// 1 for success, else 0.
    #[default]
    Success,
    /// The completion share (ACP): the share of criteria passed.
    Acp,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct ResetOptions {
    format: Option<String>,
    app: Option<String>,
    max_steps: Option<u32>,
    format_errors: Option<String>,
    stop_on_repetition: bool,
    reward: Option<RewardKind>,
    screenshot: Option<ScreenshotKind>,
    som: Option<bool>,
    elements: Option<bool>,
    disturbances: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct ResetRequest {
    session_id: Option<String>,
    task: Option<String>,
    seed: Option<u64>,
    instance: Option<u32>,
    episode_id: Option<String>,
    options: ResetOptions,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepRequest {
    #[serde(default)]
    session_id: Option<String>,
    action: Value,
    #[serde(default)]
    options: ViewRequest,
    /// OpenEnv's: accepted, not needed (a step takes milliseconds).
    #[serde(default)]
    #[allow(dead_code)]
    timeout_s: Option<f64>,
    /// OpenEnv's: echoed in `info`.
    #[serde(default)]
    request_id: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionRequest {
    session_id: String,
}

#[derive(Debug, Deserialize)]
struct SessionQuery {
    session_id: Option<String>,
    #[serde(default)]
    som: bool,
}

#[derive(Debug, Deserialize)]
struct TasksQuery {
    pattern: Option<String>,
}

/// The router of an environment server for `phone`'s suite, under `limits`.
pub fn router(phone: PhoneServerConfig, limits: EnvServerLimits) -> Router {
    let shared = Arc::new(Shared {
        places: SessionLimit::new(limits.max_sessions),
        phone,
        limits: limits.clone(),
        sessions: std::sync::Mutex::default(),
    });
    tokio::spawn(reap_idle(Arc::downgrade(&shared)));
    let guarded = Router::new()
        .route("/metadata", get(metadata))
        .route("/schema", get(schema))
        .route("/tasks", get(tasks))
        .route("/reset", post(reset))
        .route("/step", post(step))
        .route("/state", get(state))
        .route("/close", post(close))
        .route("/screenshot", get(screenshot))
        .route("/expert", post(expert))
        .route("/ws", get(websocket))
        .route_layer(axum::middleware::from_fn_with_state(shared.clone(), require_token));
    Router::new()
        .route("/health", get(health))
        .merge(guarded)
        .fallback(|| async {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "NOT_FOUND",
                "no such route (GET /schema and docs/env-server.md list them)",
            )
        })
        .method_not_allowed_fallback(|| async {
            ApiError::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "METHOD_NOT_ALLOWED",
                "this route takes another method (docs/env-server.md)",
            )
        })
        .layer(axum::middleware::from_fn_with_state(shared.clone(), check_origin))
        .layer(DefaultBodyLimit::max(limits.max_request_bytes))
        .with_state(shared)
}

/// Serves the environment on `listener` until the process ends.
pub async fn serve(
    listener: tokio::net::TcpListener,
    phone: PhoneServerConfig,
    mut limits: EnvServerLimits,
) -> std::io::Result<()> {
    limits.loopback = listener.local_addr()?.ip().is_loopback();
    if !limits.loopback && limits.token.is_none() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "serving beyond this machine needs a bearer token",
        ));
    }
    axum::serve(listener, router(phone, limits)).await
}

/// Every request but `/health` carries `Authorization: Bearer TOKEN` when the server has one.
async fn require_token(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let Some(expected) = &shared.limits.token else { return next.run(request).await };
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        // The scheme is case-insensitive (RFC 7235); the token is compared as given.
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim());
    if presented.is_some_and(|p| constant_time_eq(p.as_bytes(), expected.as_bytes())) {
        next.run(request).await
    } else {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            "a bearer token is required (Authorization: Bearer TOKEN)",
        )
        .into_response()
    }
}

/// Compares without stopping at the first difference, so timing does not reveal the token.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether `host` (a Host header or an origin's host, with or without a port) is this machine.
fn is_loopback_host(host: &str) -> bool {
    // `name`, `name:port`, `[v6]` or `[v6]:port`, the port all digits; anything else is not a
    // host this server answers to.
    let (name, port) = match host.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((name, after)) => {
                (name, after.strip_prefix(':').or(if after.is_empty() { Some("") } else { None }))
            }
            None => return false,
        },
        None => match host.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, Some("")),
        },
    };
    let port_ok = port.is_some_and(|p| p.chars().all(|c| c.is_ascii_digit()));
    port_ok
        && (name.eq_ignore_ascii_case("localhost")
            || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback()))
}

/// On a loopback server: the Host must be a loopback name (a page that rebinds its own name to
/// 127.0.0.1 is refused) and a browser's Origin, when sent, must be one too (a page elsewhere
/// cannot open a WebSocket or post to the phone).
async fn check_origin(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    if shared.limits.loopback {
        let headers = request.headers();
        let host_ok = headers.get(header::HOST).and_then(|v| v.to_str().ok()).is_none_or(is_loopback_host);
        // `Origin: null` (a sandboxed page, a file) has no host and is refused too.
        let origin_ok = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()).is_none_or(|origin| {
            origin.split_once("://").is_some_and(|(_, rest)| is_loopback_host(rest.trim_end_matches('/')))
        });
        if !host_ok || !origin_ok {
            return ApiError::new(
                StatusCode::FORBIDDEN,
                "FORBIDDEN",
                "this server listens on loopback and serves only this machine's clients (Host and Origin must be loopback)",
            )
            .into_response();
        }
    }
    next.run(request).await
}

/// Ends sessions left unused longer than the idle limit.
async fn reap_idle(shared: std::sync::Weak<Shared>) {
    loop {
        let Some(period) = shared
            .upgrade()
            .map(|s| (s.limits.idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30)))
        else {
            return;
        };
        tokio::time::sleep(period).await;
        let Some(shared) = shared.upgrade() else { return };
        let idle = shared.limits.idle;
        let slots: Vec<Arc<Mutex<Slot>>> =
            shared.sessions.lock().map(|m| m.values().cloned().collect()).unwrap_or_default();
        for slot in slots {
            // A session in use right now is not idle.
            let Ok(mut guard) = slot.try_lock() else { continue };
            if guard.last_used.elapsed() >= idle {
                let id = guard.id.clone();
                if let Ok(mut map) = shared.sessions.lock() {
                    map.remove(&id);
                }
                guard.phone.close().await;
            }
        }
    }
}

async fn health(State(shared): State<Arc<Shared>>) -> Json<Value> {
    Json(json!({
        "status": "healthy",
        "sessions": shared.places.live(),
        "max_sessions": shared.limits.max_sessions,
    }))
}

async fn metadata(State(shared): State<Arc<Shared>>) -> Json<Value> {
    let suite = &shared.phone.suite;
    let d = shared.limits.display;
    Json(json!({
        "name": "phonebench",
        "description": "A simulated Android phone playing benchmark tasks: screen as text (and pixels on request), actions as text or JSON, reward from the task's checks.",
        "version": env!("CARGO_PKG_VERSION"),
        "suite": suite.manifest.name,
        "tasks": suite.tasks.len(),
        "apps": shared.phone.catalog.apps().iter().map(|a| a.manifest.id.clone()).collect::<Vec<_>>(),
        "screen": { "width": d.width, "height": d.height, "dpi": d.dpi },
        "documentation_url": "docs/env-server.md",
    }))
}

async fn tasks(
    State(shared): State<Arc<Shared>>,
    q: Result<Query<TasksQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let q = query(q)?;
    let suite = &shared.phone.suite;
    let tasks: Vec<Value> = suite
        .select(q.pattern.as_deref())
        .iter()
        .map(|t| json!({ "id": t.id, "category": t.category.name(), "apps": t.apps }))
        .collect();
    Ok(Json(json!({ "suite": suite.manifest.name, "seed": suite.manifest.seed, "tasks": tasks })))
}

async fn schema() -> Json<Value> {
    Json(schema_json())
}

/// The JSON schemas of actions, observations and states.
pub fn schema_json() -> Value {
    json!({
        "action": {
            "description": "An action: agent text in any syntax phonebench reads (SPHINX `click [3]`, or JSON as a string), AndroidWorld/MobileWorld JSONAction (`action_type`), or canonical JSON (`action`). One that does not parse is the agent's format error, not a bad request.",
            "oneOf": [
                { "type": "string", "maxLength": 65536 },
                { "type": "object", "required": ["action_type"], "properties": {
                    "action_type": { "type": "string", "enum": ["click", "double_tap", "long_press", "input_text", "keyboard_enter", "navigate_home", "navigate_back", "scroll", "swipe", "open_app", "wait", "status", "answer", "unknown", "drag", "ask_user", "mcp", "finished"] },
                    "index": { "type": "integer" }, "x": { "type": "integer" }, "y": { "type": "integer" },
                    "text": { "type": "string" }, "direction": { "type": "string" }, "goal_status": { "type": "string" },
                    "app_name": { "type": "string" }, "keycode": { "type": "string" }, "clear_text": { "type": "boolean" } } },
                { "type": "object", "required": ["action"], "properties": { "action": { "type": "string", "enum": Action::KINDS } } }
            ]
        },
        "observation": {
            "type": "object",
            "required": ["text", "format", "goal", "step", "max_steps"],
            "properties": {
                "text": { "type": "string", "description": "the screen in the session's format; element indexes are what actions take" },
                "format": { "type": "string" },
                "text_truncated": { "type": "boolean" },
                "goal": { "type": "string" },
                "step": { "type": "integer" },
                "max_steps": { "type": "integer" },
                "message": { "type": ["string", "null"], "description": "feedback: a user's reply, a tool result, a rejection" },
                "last_action_error": { "type": ["string", "null"], "description": "why the last action did not parse (a format error)" },
                "elements": { "type": "array", "description": "on request: the indexed elements with bounds and flags" },
                "screenshot": { "type": "object", "description": "on request: {format: png|rgb, width, height, data: base64}" }
            }
        },
        "state": {
            "type": "object",
            "properties": {
                "session_id": { "type": "string" }, "episode_id": { "type": ["string", "null"] },
                "task_id": { "type": ["string", "null"] }, "instance": { "type": "integer" }, "seed": { "type": "integer" },
                "step_count": { "type": "integer" }, "max_steps": { "type": "integer" }, "done": { "type": "boolean" },
                "end": { "type": ["string", "null"] }, "verdict": { "type": ["object", "null"] }
            }
        }
    })
}

/// A fresh session id: 128 random bits in hex.
fn new_session_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No system randomness: ids then only need to be distinct (the token guards access).
        let n =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        bytes = n.to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn lookup(shared: &Shared, id: Option<&str>) -> Result<Arc<Mutex<Slot>>, ApiError> {
    let Some(id) = id else {
        return Err(ApiError::invalid("`session_id` is required (it is in the reset's `info.session_id`)"));
    };
    shared.sessions.lock().ok().and_then(|m| m.get(id).cloned()).ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "SESSION_ERROR",
            format!("no session `{id}` (it was closed, or ended after being idle)"),
        )
    })
}

fn full(shared: &Shared) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "CAPACITY_REACHED",
        format!(
            "all {} sessions are in use: close one (POST /close) or wait for an idle one to end",
            shared.limits.max_sessions
        ),
    )
}

async fn reset(
    State(shared): State<Arc<Shared>>,
    payload: Result<Json<Value>, JsonRejection>,
) -> Result<Response, ApiError> {
    let request: ResetRequest = body(payload)?;
    if let Some(id) = request.session_id.clone() {
        let slot = lookup(&shared, Some(&id))?;
        let mut slot = slot.lock().await;
        // Closed (or ended idle) while this request waited for it.
        lookup(&shared, Some(&id))?;
        let reply = reset_slot(&shared, &mut slot, request).await?;
        return Ok(Json(reply).into_response());
    }
    let ticket = shared.places.take().ok_or_else(|| full(&shared))?;
    let mut slot = Slot::new(ticket);
    // A reset that fails leaves no session behind.
    let reply = reset_slot(&shared, &mut slot, request).await?;
    let id = slot.id.clone();
    if let Ok(mut map) = shared.sessions.lock() {
        map.insert(id.clone(), Arc::new(Mutex::new(slot)));
    }
    Ok(([("x-session-id", id)], Json(reply)).into_response())
}

/// Starts an episode in `slot`; nothing changes when the request is refused.
async fn reset_slot(shared: &Shared, slot: &mut Slot, request: ResetRequest) -> Result<Value, ApiError> {
    let o = request.options;
    let format = match &o.format {
        None => ObservationFormat::SphinxTree,
        Some(name) => name
            .parse::<ObservationFormat>()
            .map_err(|e| ApiError::invalid(format!("options.format: {e}")))?,
    };
    let format_errors = match o.format_errors.as_deref() {
        None | Some("continue") => FormatErrorPolicy::Continue,
        Some("end") => FormatErrorPolicy::End,
        Some(other) => {
            return Err(ApiError::invalid(format!(
                "options.format_errors: `{other}` is not `continue` or `end`"
            )));
        }
    };
    if o.max_steps == Some(0) {
        return Err(ApiError::invalid("options.max_steps must be at least 1"));
    }
    let disturbances = match o.disturbances.as_deref() {
        None => phonebench_phone::Disturbances::None,
        Some(level) => {
            level.parse().map_err(|e: String| ApiError::invalid(format!("options.disturbances: {e}")))?
        }
    };
    let options = EpisodeOptions {
        format,
        format_errors,
        stop_on_repetition: o.stop_on_repetition,
        display: shared.limits.display,
        disturbances,
    };
    let seed = request.seed.unwrap_or(shared.phone.suite.manifest.seed);
    let prepared = match &request.task {
        Some(task) => {
            if o.app.is_some() {
                return Err(ApiError::invalid("options.app is for a free phone (no `task`)"));
            }
            prepare_task(&shared.phone, task, seed, request.instance.unwrap_or(0), options, o.max_steps).await
        }
        None => {
            if request.instance.is_some() {
                return Err(ApiError::invalid("`instance` needs a `task`"));
            }
            if o.reward.is_some() {
                return Err(ApiError::invalid("options.reward needs a `task` (a free phone has no verdict)"));
            }
            let free_seed = request.seed.unwrap_or(0);
            prepare_free(&shared.phone, o.app.clone(), free_seed, options, o.max_steps)
        }
    };
    let prepared = prepared.map_err(|e| {
        if e.starts_with("no task") {
            ApiError::new(StatusCode::NOT_FOUND, "UNKNOWN_TASK", e)
        } else {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "EXECUTION_ERROR", e)
        }
    })?;
    let tools: Vec<Value> = prepared
        .tools()
        .iter()
        .map(|t| json!({ "name": t.name, "description": t.description, "input_schema": t.input_schema }))
        .collect();
    let expert =
        (!is_free_phone(prepared.task())).then(|| ReferenceAgent::new(prepared.task().reference.clone()));
    slot.phone.install(prepared).await;
    slot.expert = expert;
    slot.expert_pending = None;
    slot.view =
        View::default().with(ViewRequest { screenshot: o.screenshot, som: o.som, elements: o.elements });
    slot.reward = o.reward.unwrap_or_default();
    slot.seed = if request.task.is_some() { seed } else { request.seed.unwrap_or(0) };
    slot.episode_id = request.episode_id;
    slot.last_used = Instant::now();
    let mut reply = reply_json(slot, slot.view, None, None);
    if let Some(info) = reply.get_mut("info").and_then(Value::as_object_mut) {
        info.insert("tools".into(), Value::Array(tools));
    }
    Ok(reply)
}

/// An action as sent: agent text (parsed in any syntax), a JSONAction object, or canonical
/// JSON. Returns what the agent said and the action, or why it is not one.
pub fn parse_sent_action(sent: &Value) -> (String, Result<Action, String>) {
    match sent {
        Value::String(text) => (
            text.clone(),
            parse_action_with(text, Syntax::Auto, &ParseOptions::default()).map_err(|e| e.to_string()),
        ),
        Value::Object(object) => {
            let raw = serde_json::to_string(sent).unwrap_or_default();
            let parsed = if object.contains_key("action_type") {
                // Python dataclasses send every field, the unset ones as null.
                let set: Map<String, Value> = object
                    .iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                action_from_object(&set, detect_dialect(&set)).map_err(|e| e.to_string())
            } else if object.contains_key("action") {
                canonical::from_canonical_value(sent.clone()).map_err(|e| e.to_string())
            } else {
                Err("an action object needs `action_type` (AndroidWorld/MobileWorld JSONAction) or `action` (canonical JSON)".into())
            };
            (raw, parsed)
        }
        other => (other.to_string(), Err(format!("an action is text or a JSON object, not {other}"))),
    }
}

async fn step(
    State(shared): State<Arc<Shared>>,
    payload: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let request: StepRequest = body(payload)?;
    let slot = lookup(&shared, request.session_id.as_deref())?;
    let mut slot = slot.lock().await;
    step_slot(&mut slot, request).await.map(Json)
}

async fn step_slot(slot: &mut Slot, request: StepRequest) -> Result<Value, ApiError> {
    slot.last_used = Instant::now();
    let (raw, parsed) = parse_sent_action(&request.action);
    let view = slot.view.with(request.options);
    slot.expert_pending = None;
    // How the episode stands afterwards (over, verdict, unscored) is the session's to say;
    // only the turn's own feedback comes from here.
    let (message, format_error) = match slot.phone.act(raw, parsed).await {
        Acted::NoEpisode(why) => return Err(ApiError::new(StatusCode::CONFLICT, "SESSION_ERROR", why)),
        Acted::Going { message, format_error, .. } | Acted::Over { message, format_error, .. } => {
            (message, format_error)
        }
        Acted::Unscored(_) => (None, None),
    };
    let mut reply = reply_json(slot, view, message, format_error);
    if let (Some(id), Some(info)) = (request.request_id, reply.get_mut("info").and_then(Value::as_object_mut))
    {
        info.insert("request_id".into(), Value::String(id));
    }
    Ok(reply)
}

/// `{observation, reward, done, truncated, info}`, read from the session as it is now: the
/// episode is over once the session has a task and no running episode, truncated when it ended
/// by budget or time, and pays per `slot.reward` once it has a verdict.
fn reply_json(slot: &mut Slot, view: View, message: Option<String>, format_error: Option<String>) -> Value {
    let phone = &slot.phone;
    let done = phone.task().is_some() && phone.episode().is_none();
    let truncated = matches!(phone.end(), Some(EpisodeEnd::Budget | EpisodeEnd::Timeout));
    let reward = match (phone.verdict(), slot.reward) {
        (Some(v), RewardKind::Success) => f64::from(u8::from(v.success)),
        (Some(v), RewardKind::Acp) => v.acp,
        (None, _) => 0.0,
    };
    let format_error_seen = format_error.is_some();
    let observation = observation_json(slot, view, message, format_error);
    let mut info = state_json(slot);
    if let Some(map) = info.as_object_mut() {
        map.insert("format_error".into(), Value::Bool(format_error_seen));
    }
    json!({ "observation": observation, "reward": reward, "done": done, "truncated": truncated, "info": info })
}

fn observation_json(
    slot: &mut Slot,
    view: View,
    message: Option<String>,
    format_error: Option<String>,
) -> Value {
    let phone = &mut slot.phone;
    let (goal, max_steps) = phone.task().map_or((String::new(), 0), |t| (t.goal.clone(), t.max_steps));
    let mut out = Map::new();
    if let Some(o) = phone.observation() {
        out.insert("text".into(), Value::String(o.text.clone()));
        out.insert("format".into(), Value::String(o.format.name().to_string()));
        out.insert("text_truncated".into(), Value::Bool(o.truncated));
    }
    out.insert("goal".into(), Value::String(goal));
    out.insert("step".into(), json!(phone.steps_taken()));
    out.insert("max_steps".into(), json!(max_steps));
    out.insert("message".into(), message.map_or(Value::Null, Value::String));
    out.insert("last_action_error".into(), format_error.map_or(Value::Null, Value::String));
    if view.elements {
        out.insert("elements".into(), elements_json(phone));
    }
    if view.screenshot != ScreenshotKind::None {
        let kind = view.screenshot;
        out.insert("screenshot".into(), screenshot_json(phone, kind, view.som));
    }
    Value::Object(out)
}

/// The observation's indexed elements: what each index names, with bounds and flags.
fn elements_json(phone: &PhoneSession) -> Value {
    let (Some(o), Some(tree)) = (phone.observation(), phone.tree()) else { return Value::Array(Vec::new()) };
    let elements = o
        .targets
        .iter()
        .enumerate()
        .filter_map(|(i, id)| {
            let n = tree.get(*id)?;
            let b = n.bounds;
            Some(json!({
                "index": i,
                "text": n.text,
                "content_desc": n.content_desc,
                "class_name": n.class,
                "resource_id": n.resource_id,
                "package": n.package,
                "bounds": [b.left, b.top, b.right, b.bottom],
                "clickable": n.clickable,
                "long_clickable": n.long_clickable,
                "editable": n.editable.unwrap_or(false),
                "scrollable": n.scrollable,
                "checkable": n.checkable,
                "checked": n.checked,
                "enabled": n.enabled,
                "focused": n.focused,
                "focusable": n.focusable,
                "visible": n.visible_to_user.unwrap_or(true),
                "selected": n.selected,
                "hint": n.hint,
            }))
        })
        .collect();
    Value::Array(elements)
}

fn screenshot_json(phone: &mut PhoneSession, kind: ScreenshotKind, som: bool) -> Value {
    let encode = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let pixmap = match phone.screen_pixmap(som) {
        Ok(p) => p,
        Err(e) => return json!({ "error": e }),
    };
    let (width, height) = (pixmap.width(), pixmap.height());
    match kind {
        ScreenshotKind::None => Value::Null,
        ScreenshotKind::Png => match phonebench_pixels::encode_png(&pixmap) {
            Ok(png) => json!({ "format": "png", "width": width, "height": height, "data": encode(&png) }),
            Err(e) => json!({ "error": e.to_string() }),
        },
        ScreenshotKind::Rgb => {
            // Opaque screens: premultiplied equals straight colour, so alpha is simply dropped.
            let rgb: Vec<u8> = pixmap.data().chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
            json!({ "format": "rgb", "width": width, "height": height, "data": encode(&rgb) })
        }
    }
}

/// The session as `/state` shows it.
fn state_json(slot: &Slot) -> Value {
    let phone = &slot.phone;
    let task = phone.task();
    let running = phone.episode().is_some();
    json!({
        "session_id": slot.id,
        "episode_id": slot.episode_id,
        "task_id": task.filter(|t| !is_free_phone(t)).map(|t| t.task_id.clone()),
        "instance": task.map_or(0, |t| t.instance),
        "seed": slot.seed,
        "step_count": phone.steps_taken(),
        "max_steps": task.map_or(0, |t| t.max_steps),
        "done": task.is_some() && !running,
        "end": phone.end().map(|e| end_text(Some(e))),
        "verdict": match (task, phone.verdict()) { (Some(t), Some(v)) => verdict_json(t, v), _ => Value::Null },
        "infrastructure_error": phone.unscored(),
    })
}

async fn state(
    State(shared): State<Arc<Shared>>,
    q: Result<Query<SessionQuery>, QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    let q = query(q)?;
    let slot = lookup(&shared, q.session_id.as_deref())?;
    let mut slot = slot.lock().await;
    slot.last_used = Instant::now();
    Ok(Json(state_json(&slot)))
}

async fn close(
    State(shared): State<Arc<Shared>>,
    payload: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let request: SessionRequest = body(payload)?;
    let slot = lookup(&shared, Some(&request.session_id))?;
    if let Ok(mut map) = shared.sessions.lock() {
        map.remove(&request.session_id);
    }
    slot.lock().await.phone.close().await;
    Ok(Json(json!({ "closed": request.session_id })))
}

async fn screenshot(
    State(shared): State<Arc<Shared>>,
    q: Result<Query<SessionQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let q = query(q)?;
    let slot = lookup(&shared, q.session_id.as_deref())?;
    let mut slot = slot.lock().await;
    slot.last_used = Instant::now();
    let png = slot
        .phone
        .screenshot_png(q.som)
        .map_err(|e| ApiError::new(StatusCode::CONFLICT, "SESSION_ERROR", e))?;
    Ok(([(header::CONTENT_TYPE, "image/png")], png).into_response())
}

async fn expert(
    State(shared): State<Arc<Shared>>,
    payload: Result<Json<Value>, JsonRejection>,
) -> Result<Json<Value>, ApiError> {
    let request: SessionRequest = body(payload)?;
    let slot = lookup(&shared, Some(&request.session_id))?;
    let mut slot = slot.lock().await;
    expert_action(&mut slot).map(Json)
}

/// The reference solution's next action for the current screen (canonical JSON), assuming the
/// expert's earlier actions were the ones taken: demonstrations for imitation learning, and a
/// way to check a client plays to success.
fn expert_action(slot: &mut Slot) -> Result<Value, ApiError> {
    slot.last_used = Instant::now();
    let conflict = |m: &str| ApiError::new(StatusCode::CONFLICT, "SESSION_ERROR", m);
    let Some(tree) = slot.phone.episode().map(|e| e.tree().clone()) else {
        return Err(conflict(&slot.phone.no_episode()));
    };
    if let Some(pending) = &slot.expert_pending {
        return Ok(pending.clone());
    }
    let Some(expert) = slot.expert.as_mut() else {
        return Err(conflict("a free phone has no reference solution"));
    };
    let action = expert.decide(&tree);
    let value = serde_json::to_value(&action).unwrap_or(Value::Null);
    let reply = json!({ "action": value, "gave_up": expert.failure });
    slot.expert_pending = Some(reply.clone());
    Ok(reply)
}

async fn websocket(
    State(shared): State<Arc<Shared>>,
    upgrade: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Response {
    let upgrade = match upgrade {
        Ok(u) => u,
        Err(e) => return ApiError::new(e.status(), "INVALID_REQUEST", e.body_text()).into_response(),
    };
    // A place is taken before upgrading, so a full server answers 503 at once.
    let Some(ticket) = shared.places.take() else { return full(&shared).into_response() };
    let max = shared.limits.max_request_bytes;
    upgrade
        .max_message_size(max)
        .max_frame_size(max)
        .on_upgrade(move |socket| run_socket(shared, socket, ticket))
}

/// One WebSocket: one session, alive as long as the connection, or until no message has come
/// (pings do not count) and no reply could be sent for the idle limit.
async fn run_socket(shared: Arc<Shared>, mut socket: WebSocket, ticket: SessionTicket) {
    use axum::extract::ws::{CloseFrame, close_code};
    let idle = shared.limits.idle;
    let mut slot = Slot::new(ticket);
    let mut last_message = tokio::time::Instant::now();
    let close = |code, reason: &'static str| Message::Close(Some(CloseFrame { code, reason: reason.into() }));
    loop {
        let next = match tokio::time::timeout_at(last_message + idle, socket.recv()).await {
            Err(_) => {
                let message = error_message("SESSION_ERROR", "idle for too long: the session ended");
                let _ = tokio::time::timeout(idle, socket.send(Message::Text(message.into()))).await;
                let _ = tokio::time::timeout(idle, socket.send(close(close_code::AWAY, "idle"))).await;
                break;
            }
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                // Over the size limit, or not a WebSocket frame: say so, then close.
                let message = error_message("PAYLOAD_TOO_LARGE", &format!("the message was refused: {e}"));
                let _ = tokio::time::timeout(idle, socket.send(Message::Text(message.into()))).await;
                let _ =
                    tokio::time::timeout(idle, socket.send(close(close_code::SIZE, "message refused"))).await;
                break;
            }
            Ok(Some(Ok(m))) => m,
        };
        let reply = match next {
            Message::Text(t) => ws_reply(&shared, &mut slot, t.as_str()).await,
            Message::Binary(_) => error_message("INVALID_JSON", "messages are JSON text"),
            Message::Close(_) => break,
            Message::Ping(_) | Message::Pong(_) => continue,
        };
        last_message = tokio::time::Instant::now();
        let closing = reply == CLOSED;
        // A client that stops reading cannot hold its place beyond the idle limit.
        if !matches!(tokio::time::timeout(idle, socket.send(Message::Text(reply.into()))).await, Ok(Ok(()))) {
            break;
        }
        if closing {
            // A normal close (1000), so clients see a clean end rather than a dropped line.
            let _ = tokio::time::timeout(idle, socket.send(close(close_code::NORMAL, "closed"))).await;
            break;
        }
    }
    slot.phone.close().await;
}

/// The reply to a `close` message, after which the connection ends.
const CLOSED: &str = r#"{"type":"closed","data":{}}"#;

fn error_message(code: &str, message: &str) -> String {
    json!({ "type": "error", "data": { "code": code, "message": message } }).to_string()
}

async fn ws_reply(shared: &Shared, slot: &mut Slot, text: &str) -> String {
    let message: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return error_message("INVALID_JSON", &format!("not JSON: {e}")),
    };
    let kind = message.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
    let data = message.get("data").cloned().unwrap_or_else(|| json!({}));
    let context = |e: ApiError| ApiError { message: format!("{kind}: {}", e.message), ..e };
    let result = match kind.as_str() {
        "reset" => match from_object::<ResetRequest>(data).map_err(context) {
            Ok(r) if r.session_id.is_some() => {
                Err(ApiError::invalid("a WebSocket is its own session: no `session_id`"))
            }
            Ok(r) => reset_slot(shared, slot, r).await.map(|d| ("observation", d)),
            Err(e) => Err(e),
        },
        "step" => match from_object::<StepRequest>(data).map_err(context) {
            Ok(r) => step_slot(slot, r).await.map(|d| ("observation", d)),
            Err(e) => Err(e),
        },
        "expert" => expert_action(slot).map(|d| ("expert", d)),
        "state" => {
            slot.last_used = Instant::now();
            Ok(("state", state_json(slot)))
        }
        "close" => return CLOSED.to_string(),
        other => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "UNKNOWN_TYPE",
            format!("unknown message type `{other}`: reset, step, state, expert or close"),
        )),
    };
    match result {
        Ok((kind, data)) => json!({ "type": kind, "data": data }).to_string(),
        Err(e) => error_message(e.code, &e.message),
    }
}
