//! Tasks written for a real device: `device = true`, `adb_setup` commands, criteria imported from
//! a SPHINX evaluator file (`sphinx_evaluator`, an untrusted path), and what a device can judge.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use phonebench_tasks::sphinx::criteria_from_sphinx_json;
use phonebench_tasks::{CriterionKind, TaskSpec};

const DEVICE: &str = r#"
id = "todo.add"
goal = "Add a task titled 'milk' in {{ app_name }}."
category = "completion"
device = true
apps = ["com.todoist"]
start = { app = "com.todoist" }
adb_setup = ["am force-stop com.todoist", "pm clear com.todoist"]
reference = ["tap \"Add\""]

[params]
app_name = { value = "Todoist" }

[[criteria]]
name = "the task is listed"
element = { text = "milk" }
"#;

/// One evaluator entry with a template-looking operand: imported criteria are literal.
const EVALUATOR: &str = r#"[
  {"type":"findelement","match_type":"equal","match_rules":{"text":"{{ milk }}"},"check_type":"equal","check_rules":{}},
  {"type":"rule","order":"sequential","evaluators":[
    {"type":"findaction","match_type":"equal","match_rules":{"action_type":"click"},"check_type":"include","check_rules":{"text":"Add"}}
  ]}
]"#;

fn parse(text: &str) -> Result<TaskSpec, String> {
    TaskSpec::parse(Path::new("suite/tasks/t.toml"), text).map_err(|e| e.to_string())
}

fn no_rows(_app: &str, _sql: &str) -> Result<Vec<serde_json::Value>, String> {
    Err("instantiating a device task needs no catalog".into())
}

/// A fresh folder under the temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("phonebench-device-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let file = self.0.join(relative);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, text).unwrap();
        file
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The device task with `sphinx_evaluator = "<path>"` and no `[[criteria]]` of its own.
fn with_evaluator(path: &str) -> String {
    let head = DEVICE.split("[[criteria]]").next().unwrap();
    head.replace("[params]", &format!("sphinx_evaluator = \"{path}\"\n\n[params]"))
}

#[test]
fn the_device_flag_and_adb_setup_reach_the_instance() {
    let spec = parse(DEVICE).unwrap();
    assert!(spec.device);
    assert_eq!(spec.adb_setup, ["am force-stop com.todoist", "pm clear com.todoist"]);
    assert_eq!(spec.lines.adb_setup, [8, 8]);
    assert!(spec.device_problems().is_empty());
    let inst = spec.instantiate(0, 0, &mut no_rows).unwrap();
    assert!(inst.device);
    assert_eq!(inst.adb_setup, spec.adb_setup);
    assert_eq!(inst.start.app.as_deref(), Some("com.todoist"));
    assert!(inst.device_problems().is_empty());

    let plain = parse(&DEVICE.replace("device = true\n", "").replace("adb_setup = [", "# [")).unwrap();
    assert!(!plain.device && plain.adb_setup.is_empty());
    assert!(!plain.instantiate(0, 0, &mut no_rows).unwrap().device);
}

#[test]
fn adb_setup_commands_are_literal_and_bounded() {
    // Never rendered: a shell command's `{{` stays as written.
    let spec = parse(&DEVICE.replace("pm clear com.todoist", "echo {{ app_name }}")).unwrap();
    assert_eq!(spec.instantiate(0, 0, &mut no_rows).unwrap().adb_setup[1], "echo {{ app_name }}");

    let err = |commands: &str| {
        parse(&DEVICE.replace(r#"["am force-stop com.todoist", "pm clear com.todoist"]"#, commands))
            .unwrap_err()
    };
    let e = err(r#"["ls\nrm -rf /sdcard"]"#);
    assert!(e.starts_with("suite/tasks/t.toml:8: adb_setup:") && e.contains("line break"), "{e}");
    assert!(err(r#"["ls\u0000x"]"#).contains("NUL"));
    assert!(err(r#"["  "]"#).contains("empty"));
    let long = format!(r#"["echo {}"]"#, "x".repeat(4096));
    assert!(err(&long).contains("more than 4096"), "{}", err(&long));
    let ok = format!(r#"["{}"]"#, "x".repeat(4096));
    assert!(parse(&DEVICE.replace(r#"["am force-stop com.todoist", "pm clear com.todoist"]"#, &ok)).is_ok());
    let many = format!("[{}]", vec!["\"true\""; 65].join(", "));
    assert!(err(&many).contains("65 commands, more than 64"), "{}", err(&many));
    let e = parse(&DEVICE.replace("device = true\n", "")).unwrap_err();
    assert!(e.contains("t.toml:7:") && e.contains("`device = true`"), "{e}");
}

#[test]
fn a_device_task_may_leave_out_the_reference_but_others_may_not() {
    let without = DEVICE.replace("reference = [\"tap \\\"Add\\\"\"]\n", "");
    assert!(parse(&without).unwrap().reference.is_empty());
    let e = parse(&without.replace("device = true\n", "").replace("adb_setup = [", "# [")).unwrap_err();
    assert!(e.contains("`reference` is empty"), "{e}");
}

#[test]
fn evaluator_criteria_come_after_the_written_ones_and_stay_literal() {
    let dir = TempDir::new("import");
    dir.write("evaluators/2-todoist.json", EVALUATOR);
    let text = DEVICE.replace("[params]", "sphinx_evaluator = \"evaluators/2-todoist.json\"\n\n[params]");
    let file = dir.write("t.toml", &text);
    let spec = TaskSpec::load(&file).unwrap();
    assert_eq!(spec.sphinx_evaluator.as_deref(), Some(dir.0.join("evaluators/2-todoist.json").as_path()));
    assert_eq!((spec.criteria.len(), spec.imported_criteria), (3, 2));
    assert_eq!(spec.criteria[0].label(), "the task is listed");
    assert_eq!(spec.criteria[1..], criteria_from_sphinx_json(EVALUATOR).unwrap()[..]);
    assert_eq!(spec.lines.criteria[1..], [spec.lines.sphinx_evaluator; 2]);
    let inst = spec.instantiate(0, 0, &mut no_rows).unwrap();
    assert_eq!(inst.criteria[1..], criteria_from_sphinx_json(EVALUATOR).unwrap()[..]);
    let CriterionKind::Element(e) = &inst.criteria[1].kind else { panic!("findelement") };
    assert_eq!(e.find.0[0].1.operand(), "{{ milk }}");

    // Only the evaluator's criteria: no `[[criteria]]` needed.
    let file = dir.write("only.toml", &with_evaluator("evaluators/2-todoist.json"));
    assert_eq!(TaskSpec::load(&file).unwrap().criteria.len(), 2);
}

#[test]
fn evaluator_paths_outside_the_task_folder_are_refused() {
    let root = TempDir::new("escape");
    root.write("outside.json", EVALUATOR);
    let suite = root.0.join("suite");
    let task = |path: &str| {
        let file = root.write("suite/t.toml", &with_evaluator(path));
        TaskSpec::load(&file).unwrap_err().to_string()
    };
    let e = task("../outside.json");
    assert!(e.contains("t.toml:11: `sphinx_evaluator` `../outside.json`: `..` leaves"), "{e}");
    assert!(task("sub/../../outside.json").contains("`..` leaves"));
    let absolute = root.0.join("outside.json");
    let e = task(&absolute.display().to_string());
    assert!(e.contains("absolute path"), "{e}");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(root.0.join("outside.json"), suite.join("link.json")).unwrap();
        let e = task("link.json");
        assert!(e.contains("is a symbolic link"), "{e}");
        std::os::unix::fs::symlink(&root.0, suite.join("up")).unwrap();
        let e = task("up/outside.json");
        assert!(e.contains("is a symbolic link"), "{e}");
    }
    let e = task("missing.json");
    assert!(e.contains("t.toml:11:") && e.contains("cannot read"), "{e}");
    std::fs::create_dir_all(suite.join("folder.json")).unwrap();
    assert!(task("folder.json").contains("not a regular file"));
    let big = format!("[{}]", " ".repeat(4 * 1024 * 1024));
    root.write("suite/big.json", &big);
    assert!(task("big.json").contains("more than the 4194304"), "{}", task("big.json"));
}

#[test]
fn evaluator_errors_name_the_task_file_its_line_and_the_entry() {
    let dir = TempDir::new("bad");
    dir.write(
        "bad.json",
        r#"[{"type":"lastaction","check_type":"equal","check_rules":{}},
            {"type":"rule","order":"present","evaluators":[{"type":"findelement","match_type":"equal","match_rules":{}}]}]"#,
    );
    dir.write("broken.json", "[{");
    let file = dir.write("t.toml", &with_evaluator("bad.json"));
    let e = TaskSpec::load(&file).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}:11: `sphinx_evaluator` `bad.json`: ", file.display())), "{e}");
    assert!(e.contains("evaluator [1] (rule).evaluators[0] (findelement): missing `check_type`"), "{e}");
    let file = dir.write("t.toml", &with_evaluator("broken.json"));
    let e = TaskSpec::load(&file).unwrap_err().to_string();
    assert!(e.contains(":11: `sphinx_evaluator` `broken.json`: evaluator is not valid JSON"), "{e}");
}

#[test]
fn device_problems_name_every_criterion_a_device_cannot_judge() {
    let text = r#"
id = "sim.only"
goal = "Add a contact."
category = "completion"
apps = ["contacts"]
reference = ["tap #add"]

[[setup]]
app = "contacts"
sql = "DELETE FROM contacts"

[[criteria]]
name = "the row is there"
state = { app = "contacts", sql = "SELECT 1" }

[[criteria]]
changes = { app = "contacts", table = "contacts", added = 1 }

[[criteria]]
name = "saved, then shown"
sequence = [
  { text = "Saved" },
  { not = { event = { app = "contacts", name = "contact_saved" } } },
]

[[criteria]]
answer = { contains = "done" }
"#;
    let spec = parse(text).unwrap();
    let problems = spec.device_problems();
    assert_eq!(problems.len(), 4, "{problems:#?}");
    assert_eq!(
        problems[0],
        "`[[setup]]` runs SQL on app `contacts`'s database, which a device cannot do; on a device prepare \
         the phone with `adb_setup` shell commands"
    );
    assert_eq!(
        problems[1],
        "criterion `the row is there` is a `state` check (SQL over the app's database), which a device \
         cannot provide; on a device use screen checks (element, text, near, time, screen) or the answer"
    );
    assert!(
        problems[2].starts_with("criterion `contacts.contacts changes` is a `changes` check"),
        "{}",
        problems[2]
    );
    assert!(
        problems[3].starts_with("criterion `saved, then shown` holds `event contact_saved `, an `event` check (app events of the simulated apps)"),
        "{}",
        problems[3]
    );
    let inst = spec.instantiate(0, 0, &mut no_rows).unwrap();
    assert_eq!(inst.device_problems(), problems);

    // Device-capable kinds: no problem.
    assert!(parse(DEVICE).unwrap().device_problems().is_empty());
}

#[test]
fn a_device_task_with_a_state_criterion_is_a_load_error_at_its_line() {
    let text = DEVICE.to_string()
        + "\n[[criteria]]\nname = \"the row is there\"\nstate = { app = \"com.todoist\", sql = \"SELECT 1\" }\n";
    let e = parse(&text).unwrap_err();
    assert!(
        e.starts_with("suite/tasks/t.toml:18: a `device = true` task must be one a device can judge: "),
        "{e}"
    );
    assert!(e.contains("criterion `the row is there` is a `state` check"), "{e}");
    let e = parse(&DEVICE.replace("[params]", "[[setup]]\napp = \"x\"\nsql = \"SELECT 1\"\n\n[params]"))
        .unwrap_err();
    assert!(e.contains("t.toml:11:") && e.contains("`[[setup]]` runs SQL"), "{e}");
}

#[test]
fn a_pixels_only_device_refuses_adb_setup_and_checks_that_read_the_tree() {
    let inst = parse(DEVICE).unwrap().instantiate(0, 0, &mut no_rows).unwrap();
    assert!(inst.device_problems().is_empty());
    let problems = inst.pixels_problems();
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("adb_setup"), "{problems:?}");
    assert!(
        problems[1].contains("`the task is listed`") && problems[1].contains("`element` check"),
        "{problems:?}"
    );

    // Text checks run on what the detector read; the answer needs no screen at all.
    let text_only = DEVICE.replace("adb_setup = [", "# [").replace(
        "element = { text = \"milk\" }",
        "text = \"milk\"\n\n[[criteria]]\nname = \"said\"\nanswer = { contains = \"milk\" }",
    );
    let inst = parse(&text_only).unwrap().instantiate(0, 0, &mut no_rows).unwrap();
    assert_eq!(inst.pixels_problems(), Vec::<String>::new());

    // Nested under `all`, a `screen` check is found too.
    let nested = text_only
        .replace("text = \"milk\"", "all = [{ text = \"milk\" }, { screen = { app = \"com.todoist\" } }]");
    let problems = parse(&nested).unwrap().instantiate(0, 0, &mut no_rows).unwrap().pixels_problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("`screen` check"), "{problems:?}");
}
