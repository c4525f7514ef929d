//! The binary as a user runs it.

use std::process::{Command, Output};

use phonebench_testkit::shared;

fn phonebench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_phonebench")).args(args).output().expect("binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is UTF-8")
}

#[test]
fn observe_xml_prints_every_format() {
    let file = shared("sphinx-data/groundtruth/901/a53/0.xml");
    let file = file.to_str().unwrap();
    let out = phonebench(&["observe-xml", file, "--format", "sphinx-list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with(
        "[0] a View (resource-id: editTextBill, text: 100.00, class: android.widget.EditText) to text\n"
    ));
    for format in ["uiautomator", "sphinx-tree", "androidworld", "elements"] {
        let out = phonebench(&["observe-xml", file, "--format", format]);
        assert!(out.status.success(), "{format}: {}", stderr(&out));
        assert!(!stdout(&out).trim().is_empty(), "{format}");
    }
    let out = phonebench(&["observe-xml", file, "--format", "sphinx-list", "--targets"]);
    assert!(
        stderr(&out).contains("[364,232][704,317]") && stderr(&out).contains("editTextBill"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn observe_xml_reports_bad_files_with_location() {
    let dir = std::env::temp_dir().join(format!("phonebench-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.xml");
    std::fs::write(&bad, "<hierarchy>\n  <node clickable=\"maybe\"/>\n</hierarchy>").unwrap();
    let out = phonebench(&["observe-xml", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("bad.xml:2:3: <node>: attribute `clickable` must be true or false"), "{err}");
    let out = phonebench(&["observe-xml", dir.join("missing.xml").to_str().unwrap()]);
    assert!(stderr(&out).contains("cannot read"), "{}", stderr(&out));
    let out = phonebench(&["observe-xml", bad.to_str().unwrap(), "--format", "html"]);
    assert!(!out.status.success());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn parse_action_prints_canonical_json_or_the_problem() {
    let out = phonebench(&["parse-action", "text [3] [hello] [world]"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(json["action"], "type");
    assert_eq!(json["text"], "hello] [world");
    assert_eq!(json["target"]["index"], 3);

    let out = phonebench(&["parse-action", r#"{"action_type":"click","x":12,"y":34}"#]);
    let json: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(json, serde_json::json!({"action": "tap", "target": {"x": 12, "y": 34}}));

    let out = phonebench(&["parse-action", "--syntax", "sphinx", "--to", "androidworld", "press [back]"]);
    assert_eq!(stdout(&out).trim(), r#"{"action_type":"navigate_back"}"#);

    let out = phonebench(&["parse-action", "click[3]"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("space"), "{}", stderr(&out));

    let out = phonebench(&["parse-action", "--syntax", "json", r#"{"action_type":"tapp"}"#]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("tapp"), "{}", stderr(&out));
}

#[test]
fn observe_xml_prints_the_observation_byte_for_byte() {
    // The tree format ends with a newline of its own; the CLI must not add another.
    let file = shared("sphinx-data/groundtruth/101/money/1.xml");
    let out = phonebench(&["observe-xml", file.to_str().expect("UTF-8 path"), "--format", "sphinx-tree"]);
    let golden = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../observe/tests/golden/sphinx/money_1.tree.txt"),
    )
    .expect("golden file");
    assert_eq!(stdout(&out), golden);
}

#[test]
fn targets_table_has_a_header_and_one_row_per_element() {
    let file = shared("sphinx-data/groundtruth/901/a53/0.xml");
    let out = phonebench(&[
        "observe-xml",
        file.to_str().expect("UTF-8 path"),
        "--format",
        "sphinx-list",
        "--targets",
    ]);
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert!(
        lines[0].contains("index") && lines[0].contains("bounds") && lines[0].contains("resource-id / text")
    );
    assert_eq!(lines.len(), 1 + stdout(&out).lines().count());
    assert!(lines[1].trim_start().starts_with("0  [364,232][704,317]  EditText"), "{}", lines[1]);
}

#[test]
fn parse_action_options_change_how_sphinx_is_read() {
    let out = phonebench(&["parse-action", "press [home]"]);
    assert_eq!(stdout(&out).trim(), r#"{"action":"restart_app"}"#);
    let out = phonebench(&["parse-action", "--home-is-home", "press [home]"]);
    assert_eq!(stdout(&out).trim(), r#"{"action":"key","key":"home"}"#);
    let out = phonebench(&["parse-action", "--lenient", "Click[3]"]);
    assert_eq!(stdout(&out).trim(), r#"{"action":"tap","target":{"index":3}}"#);
    let out = phonebench(&["parse-action", "--sphinx-mode", "index", "click [3,4]"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("index mode"), "{}", stderr(&out));
}

#[test]
fn parse_action_reports_actions_a_syntax_cannot_express() {
    let out =
        phonebench(&["parse-action", "--to", "sphinx", r#"{"action_type":"scroll","direction":"down"}"#]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("SPHINX cannot express this `scroll` action"), "{}", stderr(&out));
    // SPHINX's text never presses Enter: MobileWorld's input_text says the same, AndroidWorld's cannot.
    let out = phonebench(&["parse-action", "--to", "mobileworld", "text [2] [hi]"]);
    assert_eq!(
        stdout(&out).trim(),
        r#"{"action_type":"input_text","index":2,"text":"hi","clear_text":true}"#
    );
    let out = phonebench(&["parse-action", "--to", "androidworld", "text [2] [hi]"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("AndroidWorld's input_text always presses Enter"), "{}", stderr(&out));
    let out = phonebench(&[
        "parse-action",
        "--to",
        "sphinx",
        r#"{"action":"type","text":"a] [b","target":{"index":1},"clear":true}"#,
    ]);
    assert_eq!(stdout(&out).trim(), "text [1] [a] [b]");
}
