//! `phonebench vnc-server` driven by a real VNC client we did not write: vncdotool (PyPI, in the
//! tools/py venv that tools/test.sh makes). It captures a screenshot equal to `phonebench
//! screenshot` of the same state, and drives a starter task to success by clicks and key
//! presses alone; the server's own verdict (printed when the client leaves) says so.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

use phonebench_actions::{Action, Key, Target};
use phonebench_agents::ReferenceAgent;
use phonebench_env::{Episode, EpisodeOptions, TurnInput};
use phonebench_phone::Catalog;
use phonebench_tasks::Suite;
use phonebench_testkit::workspace_root;
use serde_json::{Value, json};

/// The server, killed when the test ends however it ends.
struct Server {
    child: Child,
    lines: BufReader<ChildStdout>,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(args: &[&str]) -> Server {
        Server::start_with_env(args, &[])
    }

    fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_phonebench"))
            .envs(env.iter().copied())
            .arg("vnc-server")
            .args(["--listen", "127.0.0.1:0", "--once", "--log-actions"])
            .args(args)
            .current_dir(workspace_root())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("phonebench runs");
        let stdout = child.stdout.take().unwrap();
        let mut server = Server { child, lines: BufReader::new(stdout), port: 0 };
        let first = server.next_line();
        assert_eq!(first["event"], "listening", "{first}");
        let address: std::net::SocketAddr = first["address"].as_str().unwrap().parse().unwrap();
        server.port = address.port();
        server
    }

    fn next_line(&mut self) -> Value {
        let mut line = String::new();
        let n = self.lines.read_line(&mut line).unwrap();
        assert!(n > 0, "the server ended early");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// The lines printed once the client left, up to the last one (the verdict or why none).
    fn lines_until_end(&mut self) -> Vec<Value> {
        let mut lines = Vec::new();
        loop {
            let line = self.next_line();
            let event = line["event"].as_str().unwrap_or_default().to_string();
            lines.push(line);
            if ["verdict", "unscored", "ended"].contains(&event.as_str()) {
                return lines;
            }
        }
    }
}

/// A fresh folder of this test process's own.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-vnc-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `ops` (JSON) through vncdotool against the server on `port`.
fn vncdotool(port: u16, ops: &Value, dir: &Path) {
    let output = vncdotool_with(port, ops, dir, None);
    assert!(
        output.status.success(),
        "vncdotool failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs `ops` through vncdotool (with `password`), whatever comes of it.
fn vncdotool_with(port: u16, ops: &Value, dir: &Path, password: Option<&str>) -> std::process::Output {
    let script = r#"
import json, os, sys
from vncdotool import api

port, ops = int(sys.argv[1]), json.loads(sys.argv[2])
password = sys.argv[3] if len(sys.argv) > 3 else None
client = api.connect(f"127.0.0.1::{port}", password=password, timeout=float(os.environ.get("VNC_TIMEOUT", "30")))
try:
    for op in ops:
        kind = op[0]
        if kind == "capture":
            client.captureScreen(op[1])
        elif kind == "click":
            client.mouseMove(op[1], op[2])
            client.mousePress(1)
        elif kind == "key":
            client.keyPress(op[1])
        elif kind == "type":
            for ch in op[1]:
                client.keyPress(ch)
        else:
            raise SystemExit(f"unknown op {op!r}")
    # Seeing the screen types what is pending: the last text is on it before leaving.
    client.refreshScreen()
finally:
    client.disconnect()
    api.shutdown()
"#;
    Command::new(phonebench_testkit::venv_python())
        .args(["-c", script, &port.to_string(), &ops.to_string()])
        .args(password)
        // A refused password leaves vncdotool waiting for its timeout.
        .env("VNC_TIMEOUT", if password == Some("guess") { "5" } else { "30" })
        .current_dir(dir)
        .output()
        .expect("python runs")
}

/// Decodes a PNG to RGB with PIL (what vncdotool writes is RGB; ours too).
fn rgb_pixels(png: &Path) -> (u32, u32, Vec<u8>) {
    let script = r#"
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert("RGB")
sys.stdout.write(f"{im.width} {im.height}\n")
sys.stdout.flush()
sys.stdout.buffer.write(im.tobytes())
"#;
    let output = Command::new(phonebench_testkit::venv_python())
        .args(["-c", script, &png.to_string_lossy()])
        .output()
        .expect("python runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let newline = output.stdout.iter().position(|&b| b == b'\n').unwrap();
    let header = String::from_utf8_lossy(&output.stdout[..newline]).to_string();
    let (w, h) = header.split_once(' ').unwrap();
    (w.parse().unwrap(), h.parse().unwrap(), output.stdout[newline + 1..].to_vec())
}

#[test]
fn vncdotool_captures_the_same_pixels_as_phonebench_screenshot() {
    let dir = scratch("capture");
    let mut server = Server::start(&["--app", "contacts"]);
    vncdotool(server.port, &json!([["capture", "vnc.png"]]), &dir);
    let lines = server.lines_until_end();
    assert_eq!(lines.last().unwrap()["event"], "ended", "{lines:?}");

    let expected = dir.join("expected.png");
    let status = Command::new(env!("CARGO_BIN_EXE_phonebench"))
        .args(["screenshot", "--app", "contacts", "--out"])
        .arg(&expected)
        .current_dir(workspace_root())
        .status()
        .unwrap();
    assert!(status.success());
    let (w, h, vnc) = rgb_pixels(&dir.join("vnc.png"));
    let (ew, eh, ours) = rgb_pixels(&expected);
    assert_eq!((w, h), (ew, eh), "the VNC screen has the screenshot's size");
    assert_eq!((w, h), (1080, 2400));
    let differing = vnc.chunks(3).zip(ours.chunks(3)).filter(|(a, b)| a != b).count();
    assert_eq!(differing, 0, "{differing} pixels differ between the VNC capture and `phonebench screenshot`");
}

/// What a VNC client does for one reference action: clicks and key presses only.
fn vnc_ops(action: &Action) -> Vec<Value> {
    let click = |target: &Target| match target {
        Target::Point(p) => json!(["click", p.x, p.y]),
        other => panic!("the reference agent gives points, not {other:?}"),
    };
    match action {
        Action::Tap { target } => vec![click(target)],
        // `clear` needs nothing: this task's fields are empty when typed into (the verdict
        // would say otherwise).
        Action::Type { text, target, enter, .. } => {
            let mut ops: Vec<Value> = target.iter().map(click).collect();
            ops.push(json!(["type", text]));
            if *enter {
                ops.push(json!(["key", "enter"]));
            }
            ops
        }
        Action::Key { key: Key::Enter } => vec![json!(["key", "enter"])],
        Action::Key { key: Key::Back } => vec![json!(["key", "esc"])],
        other => panic!("this task's reference needs no {other:?}"),
    }
}

/// The task both drive tests play.
const TASK: &str = "contacts.add_email";

/// The reference of [`TASK`], played in process on the episode the server starts too: its goal,
/// the VNC operations (clicks, typed text, keys) and the same turns as canonical actions at
/// points. A VNC client only sees pixels, so the reference gives the points to click.
fn reference_plan() -> (String, Vec<Value>, Vec<Action>) {
    let task_id = TASK;
    let root = workspace_root();
    let suite = Suite::load(&root.join("suites/full")).unwrap();
    let spec = suite.tasks.iter().find(|t| t.id == task_id).unwrap();
    let catalog = Catalog::load_dir(&root.join("apps")).unwrap();
    let task = phonebench_runner::instantiate(&catalog, spec, suite.manifest.seed, 0).unwrap();

    // The reference, played in process on the episode the server starts too, gives the points
    // to click: a VNC client only sees pixels.
    let mut episode = Episode::start(&catalog, &task, EpisodeOptions::default()).unwrap();
    let mut agent = ReferenceAgent::new(task.reference.clone());
    let mut ops = Vec::new();
    let mut actions = Vec::new();
    loop {
        let action = agent.decide(episode.tree());
        assert!(agent.failure.is_none(), "{:?}", agent.failure);
        if matches!(action, Action::Finish { .. }) {
            break;
        }
        ops.extend(vnc_ops(&action));
        // The server types after the tap into the field, as a separate turn: so does this.
        let turns: Vec<Action> = match action {
            Action::Type { text, target: Some(target), enter, .. } => {
                vec![Action::Tap { target }, Action::Type { text, target: None, clear: false, enter }]
            }
            other => vec![other],
        };
        for turn in turns {
            actions.push(turn.clone());
            let raw = serde_json::to_string(&turn).unwrap();
            let feedback = episode.step_turn(TurnInput::new(raw, Ok(turn))).unwrap();
            assert!(!feedback.done);
        }
    }
    assert!(ops.len() >= 6, "{ops:?}");
    (task.goal, ops, actions)
}

#[test]
fn vncdotool_drives_a_starter_task_to_success_with_clicks_and_keys() {
    let task_id = TASK;
    let (goal, ops, _) = reference_plan();

    let dir = scratch("task");
    let mut server = Server::start(&["--suite", "starter", "--task", task_id]);
    vncdotool(server.port, &Value::Array(ops), &dir);
    let lines = server.lines_until_end();
    assert_eq!(lines[0]["event"], "connected", "{lines:#?}");
    assert_eq!(lines[0]["goal"], goal.as_str());
    let verdict = lines.last().unwrap();
    assert_eq!(verdict["event"], "verdict", "{lines:#?}");
    assert_eq!(verdict["task_id"], task_id);
    assert_eq!(verdict["success"], true, "{lines:#?}");
    // Every turn was a click or typed text, and the text came in one `type` each.
    let actions: Vec<&Value> =
        lines.iter().filter(|l| l["event"] == "action").map(|l| &l["action"]).collect();
    let typed: Vec<&str> =
        actions.iter().filter(|a| a["action"] == "type").map(|a| a["text"].as_str().unwrap()).collect();
    assert_eq!(typed.len(), 2, "{actions:#?}");
    assert!(typed[1].contains('@'), "the email was typed whole: {typed:?}");
    assert!(
        actions.iter().all(|a| ["tap", "type", "finish"].contains(&a["action"].as_str().unwrap())),
        "{actions:#?}"
    );
}

/// Our own VNC device backend (`--device vnc:`) against the server: `phonebench play` sees the
/// detected elements only (pixels, OCR), and the same turns at points bring the task to success.
#[test]
fn play_on_a_vnc_device_drives_the_served_task_to_success() {
    let (_, _, actions) = reference_plan();
    let mut server = Server::start(&["--suite", "starter", "--task", TASK]);
    let input: String = actions.iter().map(|a| serde_json::to_string(a).unwrap() + "\n").collect();
    let mut play = Command::new(env!("CARGO_BIN_EXE_phonebench"))
        .args(["play", "--format", "elements", "--device-settle-ms", "0", "--device"])
        .arg(format!("vnc:127.0.0.1:{}", server.port))
        .current_dir(workspace_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let mut stdin = play.stdin.take().unwrap();
        stdin.write_all(input.as_bytes()).unwrap();
    }
    let output = play.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    // What play showed is what the detector found in the pixels: UINavBench's element kinds,
    // and text read by OCR from the contact list.
    assert!(stdout.contains("pixels.detected"), "{stdout}");
    assert!(stdout.contains("\"type\":\"Container\""), "{stdout}");
    let lines = server.lines_until_end();
    let verdict = lines.last().unwrap();
    assert_eq!(verdict["success"], true, "{lines:#?}\n{stdout}");
    let taken = lines.iter().filter(|l| l["event"] == "action").count();
    assert_eq!(taken, actions.len() + 1, "every turn, then the finish when play left: {lines:#?}");
}

/// `--password-env`: VNC authentication; a client with the wrong password is refused without
/// touching the episode, and the next client (with the right one) gets it.
#[test]
fn vnc_server_asks_for_the_password_from_the_environment() {
    let dir = scratch("password");
    let mut server = Server::start_with_env(
        &["--app", "clock", "--password-env", "VNC_TEST_PASSWORD"],
        &[("VNC_TEST_PASSWORD", "s3cret")],
    );
    let wrong = vncdotool_with(server.port, &json!([["capture", "wrong.png"]]), &dir, Some("guess"));
    assert!(!wrong.status.success(), "a wrong password is refused");
    assert!(!dir.join("wrong.png").exists());
    let refused = server.next_line();
    assert_eq!(refused["event"], "connected", "{refused}");
    let error = server.next_line();
    assert_eq!(error["event"], "client_error", "{error}");
    assert!(error["error"].as_str().unwrap().to_lowercase().contains("auth"), "{error}");
    // --once counts only a client that got in.
    vncdotool_with(server.port, &json!([["capture", "right.png"]]), &dir, Some("s3cret"));
    let lines = server.lines_until_end();
    assert_eq!(lines[0]["event"], "connected", "{lines:?}");
    assert_eq!(lines.last().unwrap()["event"], "ended", "{lines:?}");
    assert_eq!(lines.last().unwrap()["steps"], 1, "only the finish: {lines:?}");
    assert!(std::fs::metadata(dir.join("right.png")).unwrap().len() > 1000);
}

/// `phonebench run --device vnc:` against the server: the run refuses up front a task whose
/// checks need the real tree, and plays one that a pixels-only device can judge (its episode
/// scored, not an infrastructure failure).
#[test]
fn run_on_a_vnc_device_refuses_tree_checks_and_scores_the_rest() {
    let out = scratch("run");
    let run = |tasks: &str, port: u16| {
        Command::new(env!("CARGO_BIN_EXE_phonebench"))
            .args(["run", "--suite", "device", "--agent", "noop", "--fresh", "--tasks", tasks, "--out"])
            .arg(out.join(tasks))
            .arg("--device")
            .arg(format!("vnc:127.0.0.1:{port}"))
            .current_dir(workspace_root())
            .output()
            .unwrap()
    };
    // Refused before any connection: nothing listens on port 9.
    let refused = run("chat.test_search_modifiers", 9);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(stderr.contains("pixels-only") && stderr.contains("`screen` check"), "{stderr}");

    let task = "contacts.note_lookup";
    let mut server = Server::start(&["--suite", "device", "--task", task]);
    let played = run(task, server.port);
    assert!(played.status.success(), "{}", String::from_utf8_lossy(&played.stderr));
    let episodes = std::fs::read_to_string(out.join(task).join("episodes.jsonl")).unwrap();
    let episode: Value = serde_json::from_str(episodes.lines().next().unwrap()).unwrap();
    assert_eq!(episode["end"], "finished (complete)", "{episode}");
    assert_eq!(episode["infrastructure_error"], Value::Null);
    assert_eq!(episode["success"], false, "noop gives no answer");
    let lines = server.lines_until_end();
    assert_eq!(lines.last().unwrap()["task_id"], task, "{lines:?}");
}
