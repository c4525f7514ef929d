//! The simulated phone served to outside clients.
//!
//! [`PhoneServer`] is an MCP server (rmcp `ServerHandler`): any MCP host (a desktop assistant, an
//! IDE, an agent framework, the official SDK clients) can start a task episode, observe the
//! screen as text or as a PNG image, tap, type, scroll, press keys, open apps, call the task's
//! own MCP tools, finish with an answer and read the verdict, all without code of ours. One
//! server value is one phone: over stdio one per process, over streamable HTTP one per MCP
//! session. Arguments are checked against each tool's JSON schema; bad ones get an MCP
//! `invalid params` error, a call that cannot be done now (no episode, episode over) a tool
//! error, and nothing a client sends can crash the server.

use std::sync::Arc;

use base64::Engine as _;
use phonebench_actions::{Action, Direction, FinishStatus, Key, Point, Target};
use phonebench_env::EpisodeOptions;
use phonebench_mcp::offline::check_arguments;
use phonebench_observe::ObservationFormat;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Map, Value, json};
use tokio::sync::Mutex;

pub mod env_server;
mod session;
pub mod vnc;

pub use session::{
    Acted, FREE_PHONE, PhoneServerConfig, PhoneSession, Prepared, end_text, is_free_phone, prepare_free,
    prepare_task, verdict_json,
};

/// One phone on MCP.
#[derive(Clone)]
pub struct PhoneServer {
    config: PhoneServerConfig,
    state: Arc<Mutex<PhoneSession>>,
    /// The HTTP session place this phone holds, if it was handed one.
    _ticket: Option<Arc<SessionTicket>>,
}

/// A tool's schema: `(name, type, description)` properties and the required ones.
fn schema(properties: &[(&str, &str, &str)], required: &[&str]) -> Value {
    let mut map = Map::new();
    for (name, kind, description) in properties {
        map.insert((*name).to_string(), json!({ "type": kind, "description": description }));
    }
    json!({ "type": "object", "properties": map, "required": required, "additionalProperties": false })
}

const FORMAT: (&str, &str, &str) = (
    "format",
    "string",
    "observation format: sphinx-tree (default), sphinx-list, androidworld, elements, uiautomator",
);
const INDEX: (&str, &str, &str) = ("index", "integer", "the element's index in the last observation");
const X: (&str, &str, &str) = ("x", "integer", "screen x in pixels (instead of index)");
const Y: (&str, &str, &str) = ("y", "integer", "screen y in pixels (instead of index)");

/// The tools: name, description, schema.
fn tool_defs() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "list_tasks",
            "List the suite's tasks (id, category, apps). `pattern` filters ids with * and ?.",
            schema(&[("pattern", "string", "id glob, e.g. contacts.*")], &[]),
        ),
        (
            "start_task",
            "Reset the phone to a fresh episode of a task and return its goal and first screen. Instances draw different parameters.",
            schema(
                &[
                    ("task_id", "string", "the task id"),
                    ("instance", "integer", "instance number (default 0)"),
                    ("seed", "integer", "suite seed (default the suite's)"),
                    FORMAT,
                ],
                &["task_id"],
            ),
        ),
        (
            "start_phone",
            "Reset to a free phone with no task (home screen, or an app opened): to explore or drive it; finish has no verdict then.",
            schema(
                &[
                    ("app", "string", "an app to open first"),
                    ("seed", "integer", "the phone's seed (default 0)"),
                    FORMAT,
                ],
                &[],
            ),
        ),
        ("get_goal", "The current task's goal, steps taken and step budget.", schema(&[], &[])),
        (
            "observe",
            "The current screen as text (in the format start_task chose), with the element indexes tap, type_text and scroll take.",
            schema(&[], &[]),
        ),
        (
            "screenshot",
            "The current screen as a PNG image; with som=true, numbered boxes mark the elements (set-of-marks).",
            schema(&[("som", "boolean", "draw set-of-marks numbers")], &[]),
        ),
        ("tap", "Tap an element (by index) or a point.", schema(&[INDEX, X, Y], &[])),
        ("long_press", "Long-press an element (by index) or a point.", schema(&[INDEX, X, Y], &[])),
        (
            "type_text",
            "Type text into a field (the focused one, or the one at index). clear=true replaces its content; enter=true presses Enter after.",
            schema(
                &[
                    ("text", "string", "the text"),
                    INDEX,
                    ("clear", "boolean", "clear the field first (default true)"),
                    ("enter", "boolean", "press Enter after"),
                ],
                &["text"],
            ),
        ),
        (
            "scroll",
            "Scroll content: direction down reveals what is below. index scrolls that element instead of the main list.",
            schema(&[("direction", "string", "up, down, left or right"), INDEX], &["direction"]),
        ),
        (
            "press_key",
            "Press a key: back, home, enter, app_switch, delete, …",
            schema(&[("key", "string", "the key's name")], &["key"]),
        ),
        (
            "open_app",
            "Open an app by id or name.",
            schema(&[("app", "string", "app id or name, e.g. contacts")], &["app"]),
        ),
        (
            "wait",
            "Let time pass on the phone (seconds, default a moment; at most a day).",
            schema(&[("seconds", "integer", "how long, 0 to 86400")], &[]),
        ),
        (
            "ask_user",
            "Ask the phone's user a question (for a fact only the user knows); the reply comes back.",
            schema(&[("question", "string", "the question")], &["question"]),
        ),
        (
            "task_tools",
            "The MCP tools the task itself offers (MCP tasks), with their schemas.",
            schema(&[], &[]),
        ),
        (
            "call_task_tool",
            "Call one of the task's own MCP tools (see task_tools).",
            schema(
                &[("tool", "string", "the tool's name"), ("arguments", "object", "its arguments")],
                &["tool"],
            ),
        ),
        (
            "finish",
            "End the episode: with `answer` for questions, infeasible=true when the task cannot be done. Returns the verdict.",
            schema(
                &[
                    ("answer", "string", "the answer, for retrieval tasks"),
                    ("infeasible", "boolean", "the task cannot be done"),
                    ("reason", "string", "why it cannot be done (with infeasible)"),
                ],
                &[],
            ),
        ),
        (
            "get_verdict",
            "The verdict of the finished episode: success, completion share (ACP) and each criterion.",
            schema(&[], &[]),
        ),
    ]
}

fn text_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

fn tool_error(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

fn format_of(args: &Map<String, Value>) -> Result<Option<ObservationFormat>, String> {
    match args.get("format").and_then(Value::as_str) {
        None => Ok(None),
        Some(name) => name.parse::<ObservationFormat>().map(Some).map_err(|e| e.to_string()),
    }
}

fn target_of(args: &Map<String, Value>) -> Result<Option<Target>, String> {
    let int = |k: &str| args.get(k).and_then(Value::as_i64);
    match (int("index"), int("x"), int("y")) {
        (Some(i), None, None) => u32::try_from(i)
            .map(|i| Some(Target::Index(i)))
            .map_err(|_| "`index` is out of range".to_string()),
        (None, Some(x), Some(y)) => match (i32::try_from(x), i32::try_from(y)) {
            (Ok(x), Ok(y)) => Ok(Some(Target::Point(Point { x, y }))),
            _ => Err("`x` and `y` are out of range".into()),
        },
        (None, None, None) => Ok(None),
        _ => Err("give either `index`, or both `x` and `y`".into()),
    }
}

impl PhoneServer {
    /// A phone serving `config`'s suite.
    pub fn new(config: PhoneServerConfig) -> PhoneServer {
        PhoneServer { config, state: Arc::new(Mutex::new(PhoneSession::default())), _ticket: None }
    }

    /// A phone that holds one of `sessions`' places while it lives (every clone shares it): the
    /// HTTP server's factory hands these out and refuses a session when none is left.
    pub fn with_ticket(config: PhoneServerConfig, sessions: &SessionLimit) -> Option<PhoneServer> {
        let ticket = sessions.take()?;
        Some(PhoneServer { _ticket: Some(Arc::new(ticket)), ..PhoneServer::new(config) })
    }

    /// Runs one tool call. `Err` is an MCP protocol error (unknown tool, bad arguments).
    pub async fn call(&self, name: &str, args: &Map<String, Value>) -> Result<CallToolResult, ErrorData> {
        let defs = tool_defs();
        let Some((_, _, schema)) = defs.iter().find(|d| d.0 == name) else {
            return Err(ErrorData::invalid_params(format!("no tool `{name}`"), None));
        };
        let invalid = |e: String| ErrorData::invalid_params(format!("{name}: {e}"), None);
        check_arguments(schema, args).map_err(|e| invalid(e.to_string()))?;
        // Everything about the arguments is checked before the state is looked at, so bad
        // arguments are always an `invalid params` error, with or without an episode.
        let action =
            if DEVICE_TOOLS.contains(&name) { Some(action_of(name, args).map_err(invalid)?) } else { None };
        match name {
            // Needs no phone: never waits for one that is busy.
            "list_tasks" => {
                let pattern = args.get("pattern").and_then(Value::as_str);
                let tasks: Vec<Value> = self
                    .config
                    .suite
                    .select(pattern)
                    .iter()
                    .map(|t| json!({ "id": t.id, "category": t.category.name(), "apps": t.apps }))
                    .collect();
                let listing = json!({ "suite": self.config.suite.manifest.name, "tasks": tasks });
                return Ok(text_result(serde_json::to_string_pretty(&listing).unwrap_or_default()));
            }
            "start_task" => return self.start_task(args).await.map_err(invalid),
            "start_phone" => return self.start_phone(args).await.map_err(invalid),
            _ => {}
        }
        let mut state = self.state.lock().await;
        if let Some(action) = action {
            return Ok(self.act(&mut state, action).await);
        }
        Ok(match name {
            "task_tools" => match state.tools() {
                Some(s) => text_result(serde_json::to_string_pretty(s.tools()).unwrap_or_default()),
                None => text_result("[]"),
            },
            "get_verdict" => match (state.task(), state.verdict(), state.unscored()) {
                (Some(task), Some(v), _) => {
                    text_result(serde_json::to_string_pretty(&verdict_json(task, v)).unwrap_or_default())
                }
                (Some(task), None, _) if is_free_phone(task) => {
                    tool_error("a free phone has no task, so no verdict")
                }
                (Some(_), None, Some(why)) => tool_error(format!("the episode ended unscored: {why}")),
                (Some(_), None, None) => tool_error("the episode is still running: `finish` ends it"),
                _ => tool_error("no episode: `start_task` starts one"),
            },
            _ => {
                let max_steps = state.task().map_or(0, |t| t.max_steps);
                let Some(episode) = state.episode() else { return Ok(no_episode(&state)) };
                match name {
                    "get_goal" => text_result(format!(
                        "{}\n(step {} of {})",
                        episode.goal(),
                        episode.steps_taken(),
                        max_steps
                    )),
                    // The episode's own observation: its indexes are the ones actions resolve.
                    "observe" => text_result(episode.observation().text.clone()),
                    "screenshot" => {
                        let som = args.get("som").and_then(Value::as_bool).unwrap_or(false);
                        match state.screenshot_png(som) {
                            Ok(png) => CallToolResult::success(vec![ContentBlock::image(
                                base64::engine::general_purpose::STANDARD.encode(png),
                                "image/png",
                            )]),
                            Err(e) => tool_error(format!("screenshot: {e}")),
                        }
                    }
                    other => tool_error(format!("no tool `{other}`")),
                }
            }
        })
    }

    /// Starts an episode. Everything is prepared (instance, the task's MCP servers, the phone)
    /// before the current episode is touched: a start that fails leaves it as it was, and a
    /// slow server never holds the phone while it is reached. `Err` is a bad argument.
    async fn start_task(&self, args: &Map<String, Value>) -> Result<CallToolResult, String> {
        let id = args.get("task_id").and_then(Value::as_str).unwrap_or_default();
        if !self.config.suite.tasks.iter().any(|t| t.id == id) {
            return Ok(tool_error(format!("no task `{id}` (`list_tasks` lists them)")));
        }
        let whole = |key: &str, max: u64| match args.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .filter(|n| *n <= max)
                .map(Some)
                .ok_or(format!("`{key}` must be a whole number from 0 to {max}")),
        };
        let instance = whole("instance", u64::from(u32::MAX))?.unwrap_or(0) as u32;
        let seed = whole("seed", u64::MAX)?.unwrap_or(self.config.suite.manifest.seed);
        let format = format_of(args)?.unwrap_or(ObservationFormat::SphinxTree);
        let options = EpisodeOptions { format, ..EpisodeOptions::default() };
        let prepared = match prepare_task(&self.config, id, seed, instance, options, None).await {
            Ok(p) => p,
            Err(e) => return Ok(tool_error(format!("{e} (the current episode goes on)"))),
        };
        let task = prepared.task();
        let text = format!(
            "Task {} (instance {instance}), at most {} steps.\nGoal: {}\n{}\n\n{}",
            task.task_id,
            task.max_steps,
            task.goal,
            if task.mcp_servers.is_empty() {
                String::new()
            } else {
                format!("The task offers {} MCP tools (task_tools, call_task_tool).", prepared.tools().len())
            },
            prepared.observation().text
        );
        self.state.lock().await.install(prepared).await;
        Ok(text_result(text))
    }

    /// Starts a free phone: an episode of no task (no goal, no criteria, every app tracked).
    async fn start_phone(&self, args: &Map<String, Value>) -> Result<CallToolResult, String> {
        let seed = match args.get("seed") {
            None => 0,
            Some(v) => v.as_u64().ok_or("`seed` must be a whole number, 0 or more")?,
        };
        let format = format_of(args)?.unwrap_or(ObservationFormat::SphinxTree);
        let app = args.get("app").and_then(Value::as_str).map(str::to_string);
        let options = EpisodeOptions { format, ..EpisodeOptions::default() };
        let prepared = match prepare_free(&self.config, app, seed, options, None) {
            Ok(p) => p,
            Err(e) => return Ok(tool_error(format!("{e} (the current episode goes on)"))),
        };
        let text = format!("A free phone (seed {seed}).\n\n{}", prepared.observation().text);
        self.state.lock().await.install(prepared).await;
        Ok(text_result(text))
    }

    /// One action on the episode; when it ends the episode, the verdict is computed and returned.
    async fn act(&self, state: &mut PhoneSession, action: Action) -> CallToolResult {
        let raw = serde_json::to_string(&action).unwrap_or_default();
        match state.act(raw, Ok(action)).await {
            Acted::NoEpisode(_) => no_episode(state),
            Acted::Unscored(why) => {
                tool_error(format!("The episode ended unscored (an infrastructure failure): {why}"))
            }
            Acted::Going { message, tool_failed, .. } => {
                let mut text = message.map(|m| format!("{m}\n\n")).unwrap_or_default();
                text.push_str(&state.observation().map(|o| o.text.clone()).unwrap_or_default());
                // A task tool that failed is an error to the MCP host as well.
                if tool_failed { tool_error(text) } else { text_result(text) }
            }
            Acted::Over { message, end, verdict, .. } => {
                let mut text = message.map(|m| format!("{m}\n\n")).unwrap_or_default();
                match (verdict, state.task()) {
                    (Some(verdict), Some(task)) => {
                        text.push_str(&format!("The episode is over ({}).\n", end_text(end.as_ref())));
                        text.push_str(
                            &serde_json::to_string_pretty(&verdict_json(task, &verdict)).unwrap_or_default(),
                        );
                    }
                    _ => text.push_str(&format!(
                        "The free phone's session is over ({}); it has no verdict.",
                        end_text(end.as_ref())
                    )),
                }
                text_result(text)
            }
        }
    }
}

/// The tools that act on the phone (each one agent turn).
const DEVICE_TOOLS: [&str; 10] = [
    "tap",
    "long_press",
    "type_text",
    "scroll",
    "press_key",
    "open_app",
    "wait",
    "ask_user",
    "call_task_tool",
    "finish",
];

/// What to say when a call needs an episode and there is none.
fn no_episode(state: &PhoneSession) -> CallToolResult {
    match (state.verdict(), state.unscored()) {
        (Some(_), _) => {
            tool_error("the episode is over: `get_verdict` reads the verdict, `start_task` starts another")
        }
        (None, Some(why)) => {
            tool_error(format!("the episode ended unscored ({why}): `start_task` starts another"))
        }
        _ => tool_error("no episode: `start_task` starts one (`list_tasks` lists them)"),
    }
}

/// Places for HTTP sessions: each live phone holds one.
#[derive(Debug, Clone)]
pub struct SessionLimit {
    live: Arc<std::sync::atomic::AtomicUsize>,
    max: usize,
}

/// One place of a [`SessionLimit`], given back when dropped.
#[derive(Debug)]
pub struct SessionTicket(Arc<std::sync::atomic::AtomicUsize>);

impl Drop for SessionTicket {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl SessionLimit {
    /// At most `max` phones at once.
    pub fn new(max: usize) -> SessionLimit {
        SessionLimit { live: Arc::default(), max }
    }

    /// A place, if one is free.
    pub fn take(&self) -> Option<SessionTicket> {
        use std::sync::atomic::Ordering;
        self.live
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < self.max).then_some(n + 1))
            .ok()
            .map(|_| SessionTicket(self.live.clone()))
    }

    /// Phones alive now.
    pub fn live(&self) -> usize {
        self.live.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The action a device tool asks for.
fn action_of(name: &str, args: &Map<String, Value>) -> Result<Action, String> {
    let target = target_of(args)?;
    let need = |t: Option<Target>| t.ok_or_else(|| "give `index`, or `x` and `y`".to_string());
    let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    Ok(match name {
        "tap" => Action::Tap { target: need(target)? },
        "long_press" => Action::LongPress { target: need(target)? },
        "type_text" => Action::Type {
            text: text("text"),
            target,
            clear: args.get("clear").and_then(Value::as_bool).unwrap_or(true),
            enter: args.get("enter").and_then(Value::as_bool).unwrap_or(false),
        },
        "scroll" => {
            let direction = match args.get("direction").and_then(Value::as_str).unwrap_or_default() {
                "up" => Direction::Up,
                "down" => Direction::Down,
                "left" => Direction::Left,
                "right" => Direction::Right,
                other => return Err(format!("`{other}` is not a direction (up, down, left, right)")),
            };
            Action::Scroll { direction, target }
        }
        "press_key" => Action::Key { key: Key::parse(&text("key"))? },
        "open_app" => Action::OpenApp { app: text("app") },
        "wait" => {
            let seconds = match args.get("seconds") {
                None => None,
                Some(v) => {
                    Some(v.as_u64().filter(|s| *s <= 86_400).ok_or("`seconds` must be 0 to 86400 (a day)")?)
                }
            };
            Action::Wait { ms: seconds.map(|s| s * 1000) }
        }
        "ask_user" => Action::AskUser { text: text("question") },
        "call_task_tool" => Action::McpCall {
            tool: text("tool"),
            arguments: args.get("arguments").and_then(Value::as_object).cloned().unwrap_or_default(),
        },
        "finish" => {
            let infeasible = args.get("infeasible").and_then(Value::as_bool) == Some(true);
            let reason = args.get("reason").and_then(Value::as_str).map(str::to_string);
            match args.get("answer").and_then(Value::as_str) {
                Some(_) if infeasible => return Err("give `answer` or `infeasible`, not both".into()),
                Some(answer) => Action::Answer { text: answer.to_string() },
                None if infeasible => Action::Finish { status: FinishStatus::Infeasible, reason },
                None => Action::Finish { status: FinishStatus::Complete, reason },
            }
        }
        other => return Err(format!("no tool `{other}`")),
    })
}

impl ServerHandler for PhoneServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("phonebench-phone", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "A simulated Android phone. list_tasks, then start_task to begin an episode; observe (or \
                 screenshot) shows the screen with element indexes; tap / type_text / scroll / press_key / \
                 open_app act; finish ends the episode (with `answer` for questions) and returns the verdict.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = tool_defs()
            .into_iter()
            .map(|(name, description, schema)| {
                Tool::new(name, description, Arc::new(schema.as_object().cloned().unwrap_or_default()))
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let empty = Map::new();
        let args = request.arguments.as_ref().unwrap_or(&empty);
        self.call(&request.name, args).await.map(Into::into)
    }
}
