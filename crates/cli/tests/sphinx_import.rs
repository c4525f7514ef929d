//! `phonebench import-sphinx` through the binary: SPHINX's data in `../shared/sphinx-data`
//! becomes a suite of device tasks whose criteria are the ground-truth evaluators; bad pairs are
//! skipped with a reason; hostile names and evaluator paths are refused.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use phonebench_eval::criteria_from_sphinx_json;
use phonebench_tasks::Suite;
use phonebench_testkit::shared;

/// A fresh folder under the temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("phonebench-import-sphinx-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `import-sphinx`: (exit status, stdout, stderr).
fn import(
    task_info: &Path,
    groundtruth: &Path,
    apk_info: Option<&Path>,
    out: &Path,
) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_phonebench"));
    cmd.arg("import-sphinx").arg("--task-info").arg(task_info).arg("--groundtruth").arg(groundtruth);
    if let Some(apk) = apk_info {
        cmd.arg("--apk-info").arg(apk);
    }
    let output = cmd.arg("--out").arg(out).output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn sphinx_data_imports_as_device_tasks_whose_criteria_are_the_evaluators() {
    let data = shared("sphinx-data");
    let tmp = TempDir::new("data");
    let out = tmp.0.join("sphinx");
    let (code, stdout, stderr) = import(
        &data.join("task_info.json"),
        &data.join("groundtruth"),
        Some(&data.join("apk-info.csv")),
        &out,
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("imported 8 tasks (0 skipped)"), "{stdout}");

    let suite = Suite::load(&out).unwrap();
    assert_eq!(suite.tasks.len(), 8);
    for task in &suite.tasks {
        let mut parts = task.id.splitn(3, '.');
        assert_eq!(parts.next(), Some("sphinx"));
        let (id, app) = (parts.next().unwrap(), parts.next().unwrap());
        let source = data.join("groundtruth").join(id).join(app).join("evaluator.json");
        let text = std::fs::read_to_string(&source).unwrap();
        assert_eq!(task.criteria, criteria_from_sphinx_json(&text).unwrap(), "{}", task.id);
        assert_eq!(task.imported_criteria, task.criteria.len());
        let copy = task.sphinx_evaluator.as_ref().unwrap();
        assert_eq!(std::fs::read(copy).unwrap(), std::fs::read(&source).unwrap(), "byte for byte");
        assert!(task.device && task.device_problems().is_empty());
        assert!(task.max_steps >= 10);
        assert_eq!(task.tags["apps"], ["single"]);
        assert_eq!(task.start.app.as_deref(), Some(task.apps[0].as_str()));
    }
    let a53 = suite.tasks.iter().find(|t| t.id == "sphinx.901.a53").unwrap();
    assert_eq!(a53.start.app.as_deref(), Some("com.tleapps.simpletipcalculator"));
    assert_eq!(a53.goal, "Calculate the amount to be paid when the total cost is 56.6 and tip rate is 10%");
    assert_eq!(a53.reference.len(), 3, "the ground truth as selectors");
    let budget = suite.tasks.iter().find(|t| t.id == "sphinx.101.home_budget").unwrap();
    assert_eq!(budget.max_steps, 20, "twice the ground truth's 10 actions");

    // Again into the same folder: an earlier import is replaced.
    let (code, stdout, _) = import(&data.join("task_info.json"), &data.join("groundtruth"), None, &out);
    assert_eq!(code, 0, "{stdout}");
    // Without apk-info.csv the package comes from the first screen.
    let again = Suite::load(&out).unwrap();
    let a53 = again.tasks.iter().find(|t| t.id == "sphinx.901.a53").unwrap();
    assert_eq!(a53.start.app.as_deref(), Some("com.tleapps.simpletipcalculator"));

    // A folder that is neither empty nor an earlier import is left alone.
    let other = tmp.0.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    let (code, _, stderr) = import(&data.join("task_info.json"), &data.join("groundtruth"), None, &other);
    assert_eq!(code, 1);
    assert!(stderr.contains("not an earlier SPHINX import"), "{stderr}");
    assert_eq!(std::fs::read_dir(&other).unwrap().count(), 1);
}

#[test]
fn bad_pairs_are_skipped_with_a_reason_and_hostile_paths_refused() {
    let tmp = TempDir::new("bad");
    let gt = tmp.0.join("groundtruth");
    let pair = |id: &str, app: &str, evaluator: &str| {
        let dir = gt.join(id).join(app);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("evaluator.json"), evaluator).unwrap();
        std::fs::write(dir.join("meta.json"), r#"[{"type":"back"},{"type":"stop"}]"#).unwrap();
        std::fs::write(
            dir.join("0.xml"),
            r#"<hierarchy rotation="0"><node package="com.example.good" class="android.widget.FrameLayout" bounds="[0,0][10,10]"/></hierarchy>"#,
        )
        .unwrap();
    };
    let good = r#"[{"type":"lastaction","check_type":"equal","check_rules":{"action_type":"back"}}]"#;
    pair("1", "good", good);
    pair(
        "2",
        "broken",
        r#"[{"type":"lastaction"},{"type":"rule","order":"present","evaluators":[{"type":"findelement"}]}]"#,
    );
    pair("3", "templ", good);
    std::fs::write(gt.join("secret.json"), good).unwrap();
    let task_info = tmp.0.join("task_info.json");
    std::fs::write(
        &task_info,
        r#"[{"id":1,"description":"Go back","apps":["good","absent"]},
            {"id":2,"description":"Broken","apps":["broken"]},
            {"id":3,"description":"Type {{ x }} here","apps":["templ"]},
            {"id":"..","description":"Escape","apps":["groundtruth"]}]"#,
    )
    .unwrap();
    let out = tmp.0.join("suite");
    let (code, stdout, stderr) = import(&task_info, &gt, None, &out);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stdout.contains("skipped 2/broken: evaluator [0] (lastaction): missing `check_type`"),
        "{stdout}"
    );
    assert!(stdout.contains("skipped ../groundtruth: the task id and app name must be"), "{stdout}");
    assert!(stdout.contains("imported 2 tasks (2 skipped)"), "{stdout}");
    assert!(!stdout.contains("absent"), "pairs without an evaluator are not tasks");

    let suite = Suite::load(&out).unwrap();
    let ids: Vec<&str> = suite.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["sphinx.1.good", "sphinx.3.templ"]);
    assert_eq!(suite.tasks[0].start.app.as_deref(), Some("com.example.good"));
    assert_eq!(suite.tasks[0].max_steps, 10);
    // Template syntax in a description stays text.
    let inst = suite.tasks[1].instantiate(0, 0, &mut |_, _| Err("no catalog".into())).unwrap();
    assert_eq!(inst.goal, "Type {{ x }} here");

    // A task file whose evaluator path leaves its folder does not load.
    let file = out.join("tasks/sphinx_1_good.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    for hostile in ["../../groundtruth/secret.json", "/etc/passwd"] {
        std::fs::write(&file, text.replace("evaluators/1_good.json", hostile)).unwrap();
        let errors = Suite::load(&out).unwrap_err();
        let message = errors[0].to_string();
        assert!(
            message.contains("sphinx_1_good.toml:") && message.contains("`sphinx_evaluator`"),
            "{message}"
        );
    }
}
