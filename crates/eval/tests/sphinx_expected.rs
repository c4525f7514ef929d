//! SPHINX's own evaluators over SPHINX's own reference trajectories score as recorded in
//! `sphinx-data/DERIVED_expected_outcomes.json`: every entry of all three lists.

// Test helpers outside `#[test]` functions unwrap too (clippy only exempts the functions).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use phonebench_eval::{
    EvalContext, Semantics, Verdict, criteria_from_sphinx_json, evaluate, load_groundtruth, stop_after,
};
use serde_json::Value;

fn expected() -> Value {
    let path = phonebench_testkit::shared("sphinx-data/DERIVED_expected_outcomes.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn pair_dir(task: &Value, app: &Value) -> PathBuf {
    phonebench_testkit::shared(&format!("sphinx-data/groundtruth/{}/{}", task, app.as_str().unwrap()))
}

fn score(dir: &Path, evaluator: &str, stop: Option<usize>, semantics: Semantics) -> Verdict {
    let text = std::fs::read_to_string(dir.join(evaluator)).unwrap();
    let criteria = criteria_from_sphinx_json(&text).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut trajectory = load_groundtruth(dir).unwrap_or_else(|e| panic!("{e}"));
    if let Some(k) = stop {
        assert!(
            k < trajectory.steps.len(),
            "{}: prefix {k} is not shorter than the trajectory",
            dir.display()
        );
        trajectory = stop_after(&trajectory, k);
        assert_eq!(trajectory.steps.len(), k);
        assert_eq!(trajectory.screens.len(), k + 1);
    }
    evaluate(&criteria, &trajectory, &EvalContext { semantics, ..EvalContext::default() })
}

fn per_evaluator(v: &Verdict) -> Vec<bool> {
    v.criteria.iter().map(|c| c.passed).collect()
}

fn bools(v: &Value) -> Vec<bool> {
    v.as_array().unwrap().iter().map(|b| b.as_bool().unwrap()).collect()
}

fn assert_matches(
    what: &str,
    verdict: &Verdict,
    success: bool,
    acp: f64,
    per: &[bool],
) -> Result<(), String> {
    let got = per_evaluator(verdict);
    if verdict.success != success || (verdict.acp - acp).abs() > 1e-9 || got != per {
        return Err(format!(
            "{what}: got success {} acp {} per {:?}, expected success {success} acp {acp} per {per:?}\n{:#?}",
            verdict.success, verdict.acp, got, verdict.criteria
        ));
    }
    Ok(())
}

#[test]
fn reference_trajectories_score_as_expected() {
    let expected = expected();
    let list = expected["reference_trajectories"].as_array().unwrap();
    assert_eq!(list.len(), 11);
    let mut failures = Vec::new();
    for case in list {
        let dir = pair_dir(&case["task_id"], &case["app"]);
        let verdict = score(&dir, "evaluator.json", None, Semantics::Upstream);
        let trajectory = load_groundtruth(&dir).unwrap();
        assert_eq!(
            trajectory.steps.len() + 1,
            case["n_actions_incl_stop"].as_u64().unwrap() as usize,
            "{}: actions including stop",
            dir.display()
        );
        assert_eq!(verdict.criteria.len(), case["n_top_level_evaluators"].as_u64().unwrap() as usize);
        let r = assert_matches(
            &format!("{}/{}", case["task_id"], case["app"]),
            &verdict,
            case["expected_success"].as_bool().unwrap(),
            case["expected_acp"].as_f64().unwrap(),
            &bools(&case["per_evaluator"]),
        );
        failures.extend(r.err());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a53_evaluator_variants_score_as_expected() {
    let expected = expected();
    let list = expected["a53_evaluator_variants"].as_array().unwrap();
    assert_eq!(list.len(), 10);
    let dir = phonebench_testkit::shared("sphinx-data/groundtruth/901/a53");
    let mut failures = Vec::new();
    for case in list {
        let file = case["evaluator_file"].as_str().unwrap();
        let success = case["computed_success"].as_bool().unwrap();
        // The file name says what upstream meant; the derived figure must agree with it.
        assert_eq!(success, case["expected_by_filename"].as_bool().unwrap(), "{file}");
        let per = bools(&case["per_evaluator"]);
        let acp = per.iter().filter(|b| **b).count() as f64 / per.len() as f64;
        let verdict = score(&dir, file, None, Semantics::Upstream);
        failures.extend(assert_matches(file, &verdict, success, acp, &per).err());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn early_stop_prefixes_score_as_expected() {
    let expected = expected();
    let list = expected["early_stop_prefixes"].as_array().unwrap();
    assert_eq!(list.len(), 50);
    let mut failures = Vec::new();
    for case in list {
        let dir = pair_dir(&case["task_id"], &case["app"]);
        let k = case["k_actions_before_stop"].as_u64().unwrap() as usize;
        let verdict = score(&dir, "evaluator.json", Some(k), Semantics::Upstream);
        let r = assert_matches(
            &format!("{}/{} stopped after {k}", case["task_id"], case["app"]),
            &verdict,
            case["expected_success"].as_bool().unwrap(),
            case["expected_acp"].as_f64().unwrap(),
            &bools(&case["per_evaluator"]),
        );
        failures.extend(r.err());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The two reference trajectories that fail only because upstream checks the first match pass
/// when any match counts; authoring bugs (`101/home_budget`) and missing content (`23/fm4`) still
/// fail.
#[test]
fn any_match_semantics_fix_first_match_failures_only() {
    let fixed =
        |task: &str| score(&phonebench_testkit::shared(task), "evaluator.json", None, Semantics::AnyMatch);
    let upstream =
        |task: &str| score(&phonebench_testkit::shared(task), "evaluator.json", None, Semantics::Upstream);

    let fm1 = "sphinx-data/groundtruth/23/fm1";
    assert!(!upstream(fm1).success);
    let v = fixed(fm1);
    assert!(v.success, "{:#?}", v.criteria);
    assert_eq!(v.criteria[0].step, Some(1), "the Storage Analysis title is on the last screen");

    let todoist = "sphinx-data/groundtruth/2/todoist";
    assert_eq!(per_evaluator(&upstream(todoist)), [true, true, false]);
    let v = fixed(todoist);
    assert_eq!(per_evaluator(&v), [true, true, true], "{:#?}", v.criteria);
    assert_eq!(v.acp, 1.0);

    assert_eq!(per_evaluator(&fixed("sphinx-data/groundtruth/101/home_budget")), [true, false]);
    assert!(!fixed("sphinx-data/groundtruth/23/fm4").success);
    // What passes upstream passes with any-match too.
    for pass in ["901/a53", "101/money", "5/loseit", "20/fm3", "919/abc", "7/loseit", "203/weather"] {
        assert!(fixed(&format!("sphinx-data/groundtruth/{pass}")).success, "{pass}");
    }
    // a53's failed1 fails upstream only through first-match (the first total shown is $0.00).
    let a53 = phonebench_testkit::shared("sphinx-data/groundtruth/901/a53");
    assert!(!score(&a53, "evaluator_failed1.json", None, Semantics::Upstream).success);
    assert!(score(&a53, "evaluator_failed1.json", None, Semantics::AnyMatch).success);
}

/// Upstream fails findelement checks with the reason in the detail, and says where things matched.
#[test]
fn verdicts_explain_first_match_failures() {
    let v = score(
        &phonebench_testkit::shared("sphinx-data/groundtruth/23/fm1"),
        "evaluator.json",
        None,
        Semantics::Upstream,
    );
    let c = &v.criteria[0];
    assert!(!c.passed);
    assert!(c.detail.contains("first match on screen 0"), "{}", c.detail);
    assert!(c.detail.contains("resource-id=\"com.alphainventor.filemanager:id/title\""), "{}", c.detail);

    let v = score(
        &phonebench_testkit::shared("sphinx-data/groundtruth/919/abc"),
        "evaluator.json",
        None,
        Semantics::Upstream,
    );
    let c = &v.criteria[0];
    assert!(c.passed);
    // Both identical findactions are satisfied by the same click: sequential restarts inclusively.
    assert_eq!(c.children.len(), 2);
    assert_eq!(c.children[0].step, c.children[1].step);
    assert!(c.children[0].step.is_some());
}
