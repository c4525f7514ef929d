//! The environment server over real HTTP and WebSocket connections on loopback: tasks played to
//! their verdicts, agent mistakes answered as observations, bad requests as 4xx with messages,
//! the token, the loopback guard, the session cap and idle ending, and a bounded load test of
//! many concurrent WebSocket sessions.

#![allow(clippy::unwrap_used)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use phonebench_phone::Catalog;
use phonebench_serve::PhoneServerConfig;
use phonebench_serve::env_server::{EnvServerLimits, router, serve};
use phonebench_tasks::Suite;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn config() -> PhoneServerConfig {
    PhoneServerConfig {
        catalog: Catalog::load_dir(&repo().join("apps")).unwrap(),
        suite: Arc::new(Suite::load(&repo().join("suites/starter")).unwrap()),
        mcp: Arc::default(),
    }
}

/// Starts a server on a free loopback port.
async fn start(limits: EnvServerLimits) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = router(config(), limits);
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

fn client() -> reqwest::Client {
    phonebench_model::install_crypto_provider();
    reqwest::Client::new()
}

/// POSTs JSON; returns the status and the JSON reply.
async fn post(addr: SocketAddr, path: &str, body: Value) -> (u16, Value) {
    let r = client().post(format!("http://{addr}{path}")).json(&body).send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

async fn get(addr: SocketAddr, path: &str) -> (u16, Value) {
    let r = client().get(format!("http://{addr}{path}")).send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap_or(Value::Null))
}

/// The suite's task ids of `category`.
fn tasks_of(category: &str) -> Vec<String> {
    let suite = Suite::load(&repo().join("suites/starter")).unwrap();
    suite.tasks.iter().filter(|t| t.category.name() == category).map(|t| t.id.clone()).collect()
}

/// Plays the session to its end with the expert's actions; returns the last reply.
async fn play_expert(addr: SocketAddr, session: &str) -> Value {
    for _ in 0..200 {
        let (status, expert) = post(addr, "/expert", json!({ "session_id": session })).await;
        assert_eq!(status, 200, "{expert}");
        let (status, reply) =
            post(addr, "/step", json!({ "session_id": session, "action": expert["action"] })).await;
        assert_eq!(status, 200, "{reply}");
        if reply["done"] == true {
            return reply;
        }
    }
    panic!("the expert did not finish in 200 steps");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plays_tasks_over_http_to_their_verdicts() {
    let addr = start(EnvServerLimits::default()).await;
    let (_, health) = get(addr, "/health").await;
    assert_eq!(health["status"], "healthy");
    // One task of each kind the server must carry through: plain, ask_user, MCP.
    for task in
        [tasks_of("completion")[0].clone(), tasks_of("ask_user")[0].clone(), tasks_of("mcp")[0].clone()]
    {
        let (status, reset) =
            post(addr, "/reset", json!({ "task": task, "options": { "elements": true } })).await;
        assert_eq!(status, 200, "{reset}");
        assert_eq!(reset["done"], false);
        assert_eq!(reset["reward"], 0.0);
        assert!(!reset["observation"]["text"].as_str().unwrap().is_empty());
        assert!(!reset["observation"]["goal"].as_str().unwrap().is_empty());
        assert!(reset["observation"]["elements"][0]["bounds"].is_array());
        let session = reset["info"]["session_id"].as_str().unwrap().to_string();
        let last = play_expert(addr, &session).await;
        assert_eq!(last["reward"], 1.0, "{task}: {last}");
        assert_eq!(last["truncated"], false);
        assert_eq!(last["info"]["verdict"]["success"], true);
        // The last screen stays observable; a step after the end is refused with a reason.
        let (_, state) = get(addr, &format!("/state?session_id={session}")).await;
        assert_eq!(state["done"], true);
        assert_eq!(state["task_id"], task.as_str());
        let (status, refused) =
            post(addr, "/step", json!({ "session_id": session, "action": "press [back]" })).await;
        assert_eq!(status, 409);
        assert!(refused["error"].as_str().unwrap().contains("over"), "{refused}");
        let png = client()
            .get(format!("http://{addr}/screenshot?session_id={session}&som=true"))
            .send()
            .await
            .unwrap();
        assert_eq!(png.headers()["content-type"], "image/png");
        assert!(png.bytes().await.unwrap().starts_with(b"\x89PNG"));
        let (status, _) = post(addr, "/close", json!({ "session_id": session })).await;
        assert_eq!(status, 200);
    }
    let (_, health) = get(addr, "/health").await;
    assert_eq!(health["sessions"], 0, "closed sessions free their places");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_budget_truncates_and_acp_rewards_partial_work() {
    let addr = start(EnvServerLimits::default()).await;
    let task = &tasks_of("completion")[0];
    let (_, reset) =
        post(addr, "/reset", json!({ "task": task, "options": { "max_steps": 2, "reward": "acp" } })).await;
    let session = reset["info"]["session_id"].as_str().unwrap();
    assert_eq!(reset["observation"]["max_steps"], 2);
    post(addr, "/step", json!({ "session_id": session, "action": "press [back]" })).await;
    let (_, last) = post(addr, "/step", json!({ "session_id": session, "action": "press [back]" })).await;
    assert_eq!(last["done"], true);
    assert_eq!(last["truncated"], true, "{last}");
    let acp = last["reward"].as_f64().unwrap();
    assert!((0.0..1.0).contains(&acp));
    assert_eq!(last["info"]["verdict"]["acp"].as_f64().unwrap(), acp);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_mistakes_are_format_errors_in_the_observation() {
    let addr = start(EnvServerLimits::default()).await;
    let task = &tasks_of("completion")[0];
    let (_, reset) = post(addr, "/reset", json!({ "task": task })).await;
    let session = reset["info"]["session_id"].as_str().unwrap();
    let mistakes = [
        json!("klick [3"),
        json!(""),
        json!(42),
        json!(null),
        json!({ "foo": 1 }),
        json!({ "action_type": "click", "index": 1, "bogus": true }),
        json!({ "action_type": "teleport" }),
        json!({ "action": "fly" }),
    ];
    for (i, action) in mistakes.iter().enumerate() {
        let (status, reply) = post(addr, "/step", json!({ "session_id": session, "action": action })).await;
        assert_eq!(status, 200, "{action}: {reply}");
        assert_eq!(reply["info"]["format_error"], true, "{action}");
        assert!(!reply["observation"]["last_action_error"].as_str().unwrap().is_empty(), "{action}");
        assert_eq!(reply["observation"]["step"], i + 1, "a format error is a step");
        assert_eq!(reply["done"], false);
    }
    // AndroidWorld's JSONAction as a Python dataclass dumps it (unset fields null) is fine.
    let aw = json!({ "action_type": "navigate_back", "index": null, "x": null, "y": null, "text": null });
    let (_, reply) = post(addr, "/step", json!({ "session_id": session, "action": aw })).await;
    assert_eq!(reply["info"]["format_error"], false, "{reply}");
    assert!(reply["observation"]["last_action_error"].is_null());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_a_4xx_with_a_message() {
    let addr = start(EnvServerLimits { max_request_bytes: 4096, ..EnvServerLimits::default() }).await;
    let raw = |path: &'static str, body: &'static str| async move {
        let r = client()
            .post(format!("http://{addr}{path}"))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.json::<Value>().await.unwrap_or(Value::Null))
    };
    let (status, reply) = raw("/reset", "{not json").await;
    assert_eq!(status, 400);
    assert!(!reply["error"].as_str().unwrap().is_empty());
    let task = tasks_of("completion")[0].clone();
    let (_, reset) = post(addr, "/reset", json!({ "task": task })).await;
    let session = reset["info"]["session_id"].as_str().unwrap().to_string();
    let cases = [
        ("/step", json!({ "session_id": session }), 422, "action"),
        ("/step", json!({ "action": "press [back]" }), 422, "session_id"),
        ("/step", json!({ "session_id": "nope", "action": "press [back]" }), 404, "nope"),
        ("/reset", json!({ "task": "no.such.task" }), 404, "no.such.task"),
        ("/reset", json!({ "task": task, "options": { "fromat": "x" } }), 422, "fromat"),
        ("/reset", json!({ "task": task, "options": { "format": "xml" } }), 422, "format"),
        ("/reset", json!({ "task": task, "options": { "max_steps": 0 } }), 422, "max_steps"),
        ("/reset", json!({ "task": task, "instance": -1 }), 422, "instance"),
        ("/reset", json!({ "instance": 2 }), 422, "task"),
        ("/close", json!({ "session_id": "nope" }), 404, "nope"),
    ];
    for (path, body, want, mentions) in cases {
        let (status, reply) = post(addr, path, body.clone()).await;
        assert_eq!(status, want, "{path} {body}: {reply}");
        let message = reply["error"].as_str().unwrap();
        let code = reply["code"].as_str().unwrap();
        let want_code = match want {
            404 if path == "/reset" => "UNKNOWN_TASK",
            404 => "SESSION_ERROR",
            _ => "VALIDATION_ERROR",
        };
        assert_eq!(code, want_code, "{path} {body}: {reply}");
        assert!(message.contains(mentions), "{path} {body}: `{message}` should mention `{mentions}`");
    }
    let big = format!("{{\"session_id\": \"{session}\", \"action\": \"{}\"}}", "a".repeat(10_000));
    let r = client()
        .post(format!("http://{addr}/step"))
        .header("content-type", "application/json")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 413);
    // The unread rest of the body makes the connection unusable: the reply says so.
    assert_eq!(r.headers()["connection"], "close");
    // Nothing above hurt the session.
    let (status, _) = post(addr, "/step", json!({ "session_id": session, "action": "press [back]" })).await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_guards_everything_but_health() {
    let limits = EnvServerLimits { token: Some("s3cret".into()), ..EnvServerLimits::default() };
    let addr = start(limits).await;
    let reset = |auth: Option<&'static str>| async move {
        let mut request = client().post(format!("http://{addr}/reset")).json(&json!({}));
        if let Some(auth) = auth {
            request = request.header("authorization", auth);
        }
        request.send().await.unwrap().status().as_u16()
    };
    assert_eq!(reset(None).await, 401);
    assert_eq!(reset(Some("Bearer wrong")).await, 401);
    assert_eq!(reset(Some("Basic s3cret")).await, 401);
    assert_eq!(reset(Some("Bearer s3cret")).await, 200);
    assert_eq!(reset(Some("bearer s3cret")).await, 200);
    assert_eq!(get(addr, "/health").await.0, 200);
    assert_eq!(get(addr, "/tasks").await.0, 401);
    // WebSocket too.
    let refused = tokio_tungstenite::connect_async(format!("ws://{addr}/ws")).await;
    assert!(refused.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn beyond_loopback_a_token_is_required() {
    let listener = tokio::net::TcpListener::bind("0.0.0.0:0").await.unwrap();
    let refused = serve(listener, config(), EnvServerLimits::default()).await;
    let e = refused.unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
    assert!(e.to_string().contains("token"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loopback_serves_only_this_machines_clients() {
    let addr = start(EnvServerLimits::default()).await;
    let with = |name: &'static str, value: &'static str| async move {
        client()
            .get(format!("http://{addr}/tasks"))
            .header(name, value)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
    };
    assert_eq!(with("host", "evil.example:8000").await, 403);
    assert_eq!(with("origin", "https://evil.example").await, 403);
    assert_eq!(with("origin", "null").await, 403);
    assert_eq!(with("origin", "http://localhost:3000").await, 200);
    assert_eq!(with("origin", "http://127.0.0.1:8888").await, 200);
    assert_eq!(with("host", "[::1]:8000").await, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_capped_and_idle_ones_end() {
    let limits =
        EnvServerLimits { max_sessions: 2, idle: Duration::from_millis(400), ..EnvServerLimits::default() };
    let addr = start(limits).await;
    for _ in 0..2 {
        assert_eq!(post(addr, "/reset", json!({})).await.0, 200);
    }
    let (status, full) = post(addr, "/reset", json!({})).await;
    assert_eq!(status, 503);
    assert!(full["error"].as_str().unwrap().contains("2 sessions"), "{full}");
    assert!(tokio_tungstenite::connect_async(format!("ws://{addr}/ws")).await.is_err());
    // Idle sessions end and free their places.
    let deadline = Instant::now() + Duration::from_secs(20);
    while get(addr, "/health").await.1["sessions"] != 0 {
        assert!(Instant::now() < deadline, "idle sessions never ended");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(post(addr, "/reset", json!({})).await.0, 200);
}

type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn send(ws: &mut Socket, message: Value) -> Value {
    ws.send(Message::Text(message.to_string().into())).await.unwrap();
    receive(ws).await
}

async fn receive(ws: &mut Socket) -> Value {
    loop {
        match ws.next().await.unwrap().unwrap() {
            Message::Text(t) => return serde_json::from_str(t.as_str()).unwrap(),
            Message::Close(_) => return Value::Null,
            _ => continue,
        }
    }
}

/// Plays `task` over a WebSocket with the expert; returns the final reply's data and the
/// observation texts seen.
async fn play_ws(addr: SocketAddr, task: &str) -> (Value, Vec<String>) {
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws")).await.unwrap();
    let reset = send(&mut ws, json!({ "type": "reset", "data": { "task": task } })).await;
    assert_eq!(reset["type"], "observation", "{reset}");
    let mut texts = vec![reset["data"]["observation"]["text"].as_str().unwrap().to_string()];
    for _ in 0..200 {
        let expert = send(&mut ws, json!({ "type": "expert" })).await;
        assert_eq!(expert["type"], "expert", "{expert}");
        let reply =
            send(&mut ws, json!({ "type": "step", "data": { "action": expert["data"]["action"] } })).await;
        assert_eq!(reply["type"], "observation", "{reply}");
        texts.push(reply["data"]["observation"]["text"].as_str().unwrap_or_default().to_string());
        if reply["data"]["done"] == true {
            let closed = send(&mut ws, json!({ "type": "close" })).await;
            assert_eq!(closed["type"], "closed");
            return (reply["data"].clone(), texts);
        }
    }
    panic!("{task}: the expert did not finish");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_sessions_play_and_survive_bad_messages() {
    let addr = start(EnvServerLimits::default()).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws")).await.unwrap();
    for (message, code) in [
        ("not json".to_string(), "INVALID_JSON"),
        (json!({ "type": "teleport" }).to_string(), "UNKNOWN_TYPE"),
        (json!({ "type": "step", "data": { "action": "press [back]" } }).to_string(), "SESSION_ERROR"),
        (json!({ "type": "reset", "data": { "task": "no.such.task" } }).to_string(), "UNKNOWN_TASK"),
        (json!({ "type": "reset", "data": { "tsak": "x" } }).to_string(), "VALIDATION_ERROR"),
    ] {
        ws.send(Message::Text(message.clone().into())).await.unwrap();
        let reply = receive(&mut ws).await;
        assert_eq!(reply["type"], "error", "{message}: {reply}");
        assert_eq!(reply["data"]["code"], code, "{message}: {reply}");
        assert!(!reply["data"]["message"].as_str().unwrap().is_empty());
    }
    ws.send(Message::Binary(vec![1, 2, 3].into())).await.unwrap();
    assert_eq!(receive(&mut ws).await["data"]["code"], "INVALID_JSON");
    let state = send(&mut ws, json!({ "type": "state" })).await;
    assert_eq!(state["type"], "state");
    drop(ws);
    let task = tasks_of("retrieval")[0].clone();
    let (last, _) = play_ws(addr, &task).await;
    assert_eq!(last["reward"], 1.0, "{last}");
}

/// Many sessions at once, each its own phone: every one plays its task to success, and two
/// sessions of the same task see the same screens (sessions share nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_many_concurrent_websocket_sessions() {
    const SESSIONS: usize = 64;
    let addr = start(EnvServerLimits { max_sessions: SESSIONS, ..EnvServerLimits::default() }).await;
    let suite = Suite::load(&repo().join("suites/starter")).unwrap();
    let tasks: Vec<String> = suite.tasks.iter().map(|t| t.id.clone()).take(SESSIONS / 2).collect();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..SESSIONS {
        let task = tasks[i % tasks.len()].clone();
        set.spawn(async move { (task.clone(), play_ws(addr, &task).await) });
    }
    let mut seen: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    let mut played = 0;
    while let Some(joined) = set.join_next().await {
        let (task, (last, texts)) = joined.unwrap();
        assert_eq!(last["reward"], 1.0, "{task}: {last}");
        if let Some(other) = seen.insert(task.clone(), texts.clone()) {
            assert_eq!(other, texts, "{task}: two sessions of one task saw different screens");
        }
        played += 1;
    }
    assert_eq!(played, SESSIONS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_options_expert_and_free_phones_behave_as_documented() {
    let addr = start(EnvServerLimits::default()).await;
    let task = &tasks_of("completion")[0];
    let options = json!({ "screenshot": "png", "elements": true });
    let (_, reset) = post(addr, "/reset", json!({ "task": task, "options": options })).await;
    let session = reset["info"]["session_id"].as_str().unwrap().to_string();
    assert_eq!(reset["observation"]["screenshot"]["format"], "png");
    // A step's options replace only the keys they name.
    let (_, r) =
        post(addr, "/step", json!({ "session_id": session, "action": "wait", "options": { "som": true } }))
            .await;
    assert_eq!(r["observation"]["screenshot"]["format"], "png", "{r}");
    assert!(r["observation"]["elements"].is_array());
    let (_, r) = post(
        addr,
        "/step",
        json!({ "session_id": session, "action": "wait", "options": { "screenshot": "none" } }),
    )
    .await;
    assert!(r["observation"].get("screenshot").is_none());
    assert!(r["observation"]["elements"].is_array());
    // Asking the expert again without a step repeats its suggestion.
    let (_, first) = post(addr, "/expert", json!({ "session_id": session })).await;
    let (_, again) = post(addr, "/expert", json!({ "session_id": session })).await;
    assert_eq!(first, again);
    assert!(first["gave_up"].is_null());

    // A free phone takes a step budget, and refuses a reward it could never pay.
    let (_, free) = post(addr, "/reset", json!({ "options": { "app": "contacts", "max_steps": 2 } })).await;
    assert_eq!(free["observation"]["max_steps"], 2, "{free}");
    assert!(free["info"]["task_id"].is_null());
    let (status, refused) = post(addr, "/reset", json!({ "options": { "reward": "acp" } })).await;
    assert_eq!(status, 422);
    assert!(refused["error"].as_str().unwrap().contains("reward"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refusal_is_json() {
    let addr = start(EnvServerLimits::default()).await;
    // serde would read a struct from an array by position: only objects are requests.
    let (status, r) = post(addr, "/reset", json!([])).await;
    assert_eq!((status, r["code"].as_str()), (422, Some("VALIDATION_ERROR")), "{r}");
    assert!(r["error"].as_str().unwrap().contains("array"));
    let (status, r) = post(addr, "/step", json!(["id", "wait"])).await;
    assert_eq!(status, 422, "{r}");
    for (path, want) in [("/nowhere", 404), ("/reset", 405), ("/state?session_id=a&session_id=b", 400)] {
        let (status, r) = get(addr, path).await;
        assert_eq!(status, want, "{path}");
        assert!(!r["error"].as_str().unwrap().is_empty(), "{path}: {r}");
    }
    let r = client().post(format!("http://{addr}/reset")).body("{}").send().await.unwrap();
    assert_eq!(r.status().as_u16(), 415);
    assert_eq!(r.json::<Value>().await.unwrap()["code"], "UNSUPPORTED_MEDIA_TYPE");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_websocket_message_is_refused_with_a_reason() {
    let addr = start(EnvServerLimits { max_request_bytes: 4096, ..EnvServerLimits::default() }).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws")).await.unwrap();
    let reply = send(&mut ws, json!({ "type": "reset", "data": [] })).await;
    assert_eq!(reply["data"]["code"], "VALIDATION_ERROR", "{reply}");
    let big = json!({ "type": "step", "data": { "action": "a".repeat(10_000) } });
    ws.send(Message::Text(big.to_string().into())).await.unwrap();
    let reply = receive(&mut ws).await;
    assert_eq!(reply["data"]["code"], "PAYLOAD_TOO_LARGE", "{reply}");
    match ws.next().await {
        Some(Ok(Message::Close(Some(frame)))) => assert_eq!(u16::from(frame.code), 1009),
        other => panic!("expected a close frame with 1009, got {other:?}"),
    }
    let (_, health) = get(addr, "/health").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut sessions = health["sessions"].clone();
    while sessions != 0 {
        assert!(Instant::now() < deadline, "the refused connection kept its place");
        tokio::time::sleep(Duration::from_millis(20)).await;
        sessions = get(addr, "/health").await.1["sessions"].clone();
    }
}
