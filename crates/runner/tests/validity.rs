//! Validity of the scores: on the starter suite, doing nothing earns nothing (SR 0 and ACP 0:
//! "do no harm" criteria are guards) while the reference earns everything (SR 100%);
//! `validate` rejects a task on which doing nothing earns progress; SQL that cannot run in a
//! task's setup or criteria is reported with the file and line it is written on.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use phonebench_agents::NoopAgent;
use phonebench_env::EpisodeOptions;
use phonebench_phone::Catalog;
use phonebench_runner::episode::reference_run;
use phonebench_runner::validate::{instantiate, sql_problems};
use phonebench_runner::{Limits, run_episode, validate_task};
use phonebench_tasks::{Suite, TaskSpec};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn catalog() -> Catalog {
    Catalog::load_dir(&repo().join("apps")).expect("the apps load")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime")
}

/// A task file written to a fresh temporary folder (removed when the test passes).
struct TempTask {
    dir: PathBuf,
    file: PathBuf,
}

impl TempTask {
    fn new(name: &str, text: &str) -> TempTask {
        let dir = std::env::temp_dir().join(format!("phonebench-validity-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("{name}.toml"));
        std::fs::write(&file, text).unwrap();
        TempTask { dir, file }
    }

    fn spec(&self) -> TaskSpec {
        TaskSpec::load(&self.file).unwrap()
    }

    /// `file:line: ` as errors start.
    fn at(&self, line: usize) -> String {
        format!("{}:{line}: ", self.file.display())
    }
}

impl Drop for TempTask {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// What playing one task found (empty when all is as it must be).
#[derive(Default)]
struct Findings {
    noop_success: bool,
    noop_progress: Vec<String>,
    noop_acp: f64,
    reference_failure: Option<String>,
    heavy_failure: Option<String>,
    random_success: bool,
}

/// Instance 0 of `task`: noop, the reference, the reference under heavy disturbances (taking the
/// standard dismiss step), and random play under them.
async fn play_task(catalog: Catalog, task: TaskSpec, seed: u64) -> Findings {
    let options = EpisodeOptions::default();
    let heavy = EpisodeOptions { disturbances: phonebench_phone::Disturbances::Heavy, ..options };
    let mut f = Findings::default();
    let inst = instantiate(&catalog, &task, seed, 0).expect("instance 0");
    let noop = run_episode(&catalog, &inst, &mut NoopAgent, options, Limits::default())
        .await
        .unwrap_or_else(|e| panic!("{}: noop episode: {e}", task.id));
    f.noop_success = noop.verdict.success;
    f.noop_acp = noop.verdict.acp;
    for c in noop.verdict.criteria.iter().filter(|c| c.passed && !c.guard) {
        f.noop_progress.push(format!("{}: {}", task.id, c.label));
    }
    for (options, slot) in [(options, &mut f.reference_failure), (heavy, &mut f.heavy_failure)] {
        *slot = match reference_run(&catalog, &inst, options).await {
            Ok((_, finished)) if finished.verdict.success => None,
            Ok((_, finished)) => Some(format!("{}: {:?}", task.id, finished.verdict)),
            Err(e) => Some(format!("{}: {e}", task.id)),
        };
    }
    let mut random = phonebench_agents::RandomAgent::new(inst.seed);
    let limits = Limits { max_steps: Some(phonebench_runner::validate::RANDOM_STEPS), ..Limits::default() };
    f.random_success =
        run_episode(&catalog, &inst, &mut random, heavy, limits).await.is_ok_and(|r| r.verdict.success);
    f
}

/// Every task of `full`: noop earns nothing, the reference everything, and the reference taking
/// the standard dismiss step still everything under heavy disturbances (a disturbance never
/// makes a task impossible); random play under heavy disturbances almost never succeeds.
#[test]
fn on_the_full_suite_noop_earns_nothing_and_the_reference_everything_even_disturbed() {
    let catalog = catalog();
    let suite = Suite::load(&repo().join("suites/full")).expect("the full suite loads");
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let findings: Vec<(String, Findings)> = rt.block_on(async {
        let mut set = tokio::task::JoinSet::new();
        let permits = phonebench_runner::cpu_permits();
        for task in &suite.tasks {
            let (catalog, task, seed, permits) =
                (catalog.clone(), task.clone(), suite.manifest.seed, permits.clone());
            set.spawn(async move {
                let _permit = permits.acquire_owned().await;
                (task.id.clone(), play_task(catalog, task, seed).await)
            });
        }
        let mut all = Vec::new();
        while let Some(joined) = set.join_next().await {
            all.push(joined.expect("a task's play panicked"));
        }
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    });
    let noop_successes: Vec<&String> =
        findings.iter().filter(|(_, f)| f.noop_success).map(|(id, _)| id).collect();
    let noop_progress: Vec<&String> = findings.iter().flat_map(|(_, f)| &f.noop_progress).collect();
    let acp_sum: f64 = findings.iter().map(|(_, f)| f.noop_acp).sum();
    let reference_failures: Vec<&String> =
        findings.iter().filter_map(|(_, f)| f.reference_failure.as_ref()).collect();
    let heavy_failures: Vec<&String> =
        findings.iter().filter_map(|(_, f)| f.heavy_failure.as_ref()).collect();
    let random_successes: Vec<&String> =
        findings.iter().filter(|(_, f)| f.random_success).map(|(id, _)| id).collect();
    assert!(suite.tasks.len() >= 350, "the whole full suite ({} tasks)", suite.tasks.len());
    assert_eq!(noop_successes, Vec::<&String>::new(), "noop SR must be 0");
    assert_eq!(noop_progress, Vec::<&String>::new(), "noop ACP must be 0: these criteria hold untouched");
    assert_eq!(acp_sum, 0.0);
    assert_eq!(reference_failures, Vec::<&String>::new(), "reference SR must be 100%");
    assert_eq!(heavy_failures, Vec::<&String>::new(), "reference + dismiss SR under heavy must be 100%");
    assert!(
        random_successes.len() * 50 < suite.tasks.len(),
        "random play under heavy disturbances must stay under 2%: {random_successes:?}"
    );
    // Guards are in use (the suite's "do no harm" checks), and each task has something to achieve.
    let guards = suite.tasks.iter().flat_map(|t| &t.criteria).filter(|c| c.guard).count();
    assert!(guards >= 8, "{guards} guards");
    assert!(suite.tasks.iter().all(|t| t.criteria.iter().any(|c| !c.guard)));
}

/// A Settings task (id `t.<id>`) whose goal is to rename the phone; `rest` adds parameters and
/// criteria after the first (the name is set).
fn rename_task(id: &str, rest: &str) -> String {
    format!(
        r#"id = "t.{id}"
category = "completion"
goal = "Rename this phone to \"{{{{ name }}}}\"."
apps = ["settings"]
start = {{ app = "settings" }}
reference = [
  'scroll_to "About phone"',
  'tap "About phone"',
  'tap "Device name"',
  'type #edittext "{{{{ name }}}}"',
  'tap "OK"',
]

[params.name]
pool = ["Kitchen Phone", "Alex P8"]

[[criteria]]
state = {{ app = "settings", sql = "SELECT value FROM settings WHERE key = 'device_name'", equals = "{{{{ name }}}}" }}
{rest}"#
    )
}

/// The rename task with a criterion that holds untouched (the `[[criteria]]` on line 20).
const BLUETOOTH_STAYS_ON: &str = r#"
[[criteria]]
name = "Bluetooth stays on"
state = { app = "settings", sql = "SELECT value FROM settings WHERE key = 'bluetooth'", equals = "1" }
"#;

#[test]
fn validate_rejects_a_task_on_which_doing_nothing_earns_progress() {
    let catalog = catalog();
    let task = TempTask::new("noop_acp", &rename_task("progress_for_nothing", BLUETOOTH_STAYS_ON));
    let v = runtime().block_on(validate_task(&catalog, &task.spec(), 0));
    assert!(!v.ok(), "noop earns ACP 50%: the task is invalid");
    assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
    let problem = &v.problems[0];
    assert!(problem.starts_with(&task.at(20)), "at the criterion's line: {problem}");
    for words in ["`Bluetooth stays on`", "does nothing", "ACP 50.0%", "guard = true"] {
        assert!(problem.contains(words), "{words:?} in: {problem}");
    }
}

/// A task with a setup and criteria whose SQL is filled in per test (`SETUP`, `STATE`).
const SQL_TASK: &str = r#"id = "t.sql"
category = "completion"
goal = "Rename this phone."
apps = ["settings"]
reference = ["back"]

[[setup]]
app = "settings"
sql = """
UPDATE settings SET value = 'x' WHERE key = 'device_name';
SETUP;
"""

[[criteria]]
name = "renamed"
state = { app = "settings", sql = "SELECT value FROM settings WHERE key = 'device_name'", equals = "y" }

[[criteria]]
any = [
  { text = "nothing" },
  { name = "the checked one", state = { app = "settings", sql = "STATE" } },
]
"#;

/// A setup statement that runs and changes nothing (setup runs statements, it does not query).
const NO_OP: &str = "UPDATE settings SET value = value WHERE 0";

fn sql_task_problems(name: &str, setup: &str, state: &str) -> (TempTask, Vec<String>) {
    let task = TempTask::new(name, &SQL_TASK.replace("SETUP", setup).replace("STATE", state));
    let catalog = catalog();
    let spec = task.spec();
    let inst = instantiate(&catalog, &spec, 0, 0).unwrap();
    let problems = sql_problems(&catalog, &spec, &inst);
    (task, problems)
}

#[test]
fn setup_and_criterion_sql_errors_name_file_and_line() {
    // Good SQL everywhere: nothing to report.
    let (_, problems) =
        sql_task_problems("good", "UPDATE settings SET value = '0' WHERE key = 'wifi'", "SELECT 1");
    assert_eq!(problems, Vec::<String>::new());

    // A criterion (inside a combinator) reading a table that does not exist: its SQL's line.
    let (task, problems) = sql_task_problems("criterion", NO_OP, "SELECT count(*) FROM no_such_table");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with(&task.at(21)), "{}", problems[0]);
    assert!(problems[0].contains("criterion `the checked one`: "), "{}", problems[0]);
    assert!(problems[0].contains("no such table: no_such_table"), "{}", problems[0]);

    // The second statement of a setup: its own line, not the entry's.
    let (task, problems) = sql_task_problems("setup", "DELETE FROM no_such_table", "SELECT 1");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with(&task.at(11)), "{}", problems[0]);
    assert!(problems[0].contains("setup: "), "{}", problems[0]);
    assert!(problems[0].contains("no such table: no_such_table"), "{}", problems[0]);

    // `validate` reports them before running any agent.
    let v = runtime().block_on(validate_task(&catalog(), &task.spec(), 0));
    assert_eq!(v.problems, problems);
}

#[test]
fn attach_in_criterion_or_setup_sql_is_refused_with_file_and_line() {
    let target =
        std::env::temp_dir().join(format!("phonebench-validity-{}-attached.sqlite", std::process::id()));
    let attach = format!("ATTACH DATABASE '{}' AS other", target.display());

    let (task, problems) = sql_task_problems("attach_criterion", NO_OP, &attach);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with(&task.at(21)), "{}", problems[0]);
    assert!(problems[0].contains("criterion `the checked one`: "), "{}", problems[0]);
    assert!(problems[0].contains("ATTACH is not allowed"), "{}", problems[0]);

    let (task, problems) = sql_task_problems("attach_setup", &attach, "SELECT 1");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].starts_with(&task.at(11)), "{}", problems[0]);
    assert!(problems[0].contains("ATTACH is not allowed"), "{}", problems[0]);
    assert!(!target.exists(), "nothing was created on the host");
}

#[test]
fn stored_criteria_mark_guards_and_older_results_still_load() {
    use phonebench_runner::results::CriterionResult;
    let old = r#"{"label":"kept","passed":true,"step":null,"detail":""}"#;
    let read: CriterionResult = serde_json::from_str(old).unwrap();
    assert!(!read.guard, "results written before guards existed read as non-guards");
    let guard = CriterionResult { guard: true, ..read.clone() };
    let json = serde_json::to_string(&guard).unwrap();
    assert!(json.contains(r#""guard":true"#), "{json}");
    assert_eq!(serde_json::to_string(&read).unwrap(), old, "non-guards are stored as before");
}

/// For the rename task: a criterion that holds untouched only when the drawn `trick` is "yes".
const A_TRICK_ON_SOME_INSTANCES: &str = r#"
[params.trick]
pool = ["no", "yes"]

[[criteria]]
name = "renamed, or a trick"
state = { app = "settings", sql = "SELECT :trick = 'yes' OR value = :name FROM settings WHERE key = 'device_name'", equals = 1 }
"#;

#[test]
fn doing_nothing_is_checked_on_every_instance_not_only_the_first() {
    let catalog = catalog();
    let task = TempTask::new(
        "noop_later_instance",
        &rename_task("progress_on_some_instances", A_TRICK_ON_SOME_INSTANCES),
    );
    let spec = task.spec();
    let trick = |seed: u64, instance: u32| {
        let inst = instantiate(&catalog, &spec, seed, instance).unwrap();
        inst.params["trick"].as_str().unwrap_or_default().to_string()
    };
    // A suite seed whose first instance draws "no" and a later one "yes".
    let seed = (0..200u64)
        .find(|&s| trick(s, 0) == "no" && (1..3).any(|i| trick(s, i) == "yes"))
        .expect("some seed draws no, then yes");
    let v = runtime().block_on(validate_task(&catalog, &spec, seed));
    assert!(!v.ok(), "noop earns progress on a later instance: the task is invalid");
    assert!(
        v.problems.iter().any(|p| p.contains("`renamed, or a trick`") && p.contains("does nothing")),
        "{:?}",
        v.problems
    );
}
