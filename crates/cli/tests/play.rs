//! The acceptance session: `phonebench play` driven through stdin as an agent would, by element
//! index. The indexes are not hard-coded: each is read from the observation the session printed
//! just before (by running the script so far), found by text, resource id or content-desc.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `phonebench play --app contacts --format sphinx-tree` with `script` on stdin.
fn play(script: &[String], extra: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_phonebench"))
        .args(["play", "--app", "contacts", "--format", "sphinx-tree"])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut input = script.join("\n");
    input.push('\n');
    child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write the script");
    let out = child.wait_with_output().expect("the session ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "play failed ({}):\nscript:\n{}\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        script.join("\n"),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains("\n!!! "), "a line was rejected:\n{stdout}");
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

/// The last observation of a session's output: its `=== app/screen (n elements)` header and body,
/// up to the end or the first JSON line (`--query` / `--events` output).
fn last_observation(text: &str) -> String {
    let start = text.rfind("=== ").expect("an observation was printed");
    text[start..].lines().take_while(|l| !l.starts_with('{')).collect::<Vec<_>>().join("\n")
}

/// The `[i]` of the first element named `key` (text, resource-id or content-desc) in a sphinx-tree
/// observation.
fn index_of(observation: &str, key: &str) -> u32 {
    let wanted =
        [format!("text: {key}, "), format!("content-desc: {key}, "), format!("resource-id: {key}, ")];
    observation
        .lines()
        .map(str::trim_start)
        .filter(|line| wanted.iter().any(|w| line.contains(w.as_str())))
        .find_map(|line| line.strip_prefix('[')?.split_once(']')?.0.parse().ok())
        .unwrap_or_else(|| panic!("no element `{key}` with an index in:\n{observation}"))
}

/// Runs the script so far and returns the screen it ends on.
fn screen_after(script: &[String]) -> String {
    last_observation(&stdout(&play(script, &[])))
}

/// Appends the action `make` builds from the index of `key` on the current screen.
fn step(script: &mut Vec<String>, key: &str, make: impl FnOnce(u32) -> String) -> String {
    let screen = screen_after(script);
    script.push(make(index_of(&screen, key)));
    screen
}

/// The session up to Zed Quill's conversation in Messages: create the contact, then "Send
/// message" from the contact's details.
fn to_conversation() -> Vec<String> {
    let mut script = Vec::new();
    let list = step(&mut script, "Create contact", |i| format!("click [{i}]"));
    assert!(list.starts_with("=== contacts/list"), "{list}");
    let editor = step(&mut script, "first_name", |i| format!("text [{i}] [Zed]"));
    assert!(editor.starts_with("=== contacts/edit"), "{editor}");
    step(&mut script, "last_name", |i| format!("text [{i}] [Quill]"));
    step(&mut script, "phone", |i| format!("text [{i}] [+1 555-0199]"));
    step(&mut script, "Save", |i| format!("click [{i}]"));
    let detail = step(&mut script, "Send message", |i| format!("click [{i}]"));
    assert!(detail.starts_with("=== contacts/detail"), "{detail}");
    assert!(detail.contains("text: Zed Quill, "), "{detail}");
    assert!(detail.contains("text: +1 555-0199, "), "{detail}");
    let conversation = screen_after(&script);
    assert!(conversation.starts_with("=== messages/conversation"), "{conversation}");
    assert!(
        conversation.contains("resource-id: conversation_title, text: Zed Quill, "),
        "the conversation is with the new contact:\n{conversation}"
    );
    script
}

const TRICKY: [&str; 7] = [
    "See you at 6",
    "\"a\" 'b'",
    "'); DROP TABLE messages; --",
    "{{ 7*7 }}",
    "{% if %}",
    "😀👍",
    "你好，世界",
];

#[test]
fn new_contact_then_send_message_through_messages_keeps_text_verbatim() {
    let prefix = to_conversation();
    for text in TRICKY {
        let mut script = prefix.clone();
        step(&mut script, "compose_message_text", |i| {
            serde_json::json!({"action": "type", "text": text, "target": {"index": i}}).to_string()
        });
        let typed = step(&mut script, "Send SMS", |i| format!("click [{i}]"));
        assert!(typed.contains(&format!("text: {text}, ")), "the field shows `{text}`:\n{typed}");

        let query = "messages:SELECT body FROM messages ORDER BY id DESC LIMIT 1";
        let out = stdout(&play(&script, &["--query", query, "--events"]));
        let sent = last_observation(&out);
        assert!(sent.starts_with("=== messages/conversation"), "{sent}");
        assert!(
            sent.contains(&format!("resource-id: message_text, text: {text}, ")),
            "the bubble shows `{text}`:\n{sent}"
        );

        let rows: Vec<serde_json::Value> = out
            .lines()
            .filter(|l| l.starts_with('{'))
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        let bodies: Vec<&serde_json::Value> = rows.iter().filter(|r| r.get("body").is_some()).collect();
        assert_eq!(bodies.len(), 1, "one query row: {rows:?}");
        assert_eq!(bodies[0]["body"], text, "the stored message is the typed text verbatim");

        let event = |name: &str| rows.iter().find(|r| r["name"] == name).cloned();
        let created = event("contact_created").expect("contact_created event");
        assert_eq!(created["data"]["name"], "Zed Quill");
        assert_eq!(created["data"]["phone"], "+1 555-0199");
        let message = event("message_sent").expect("message_sent event");
        assert_eq!(message["data"]["body"], text);
        assert_eq!(message["data"]["name"], "Zed Quill");
    }
}
