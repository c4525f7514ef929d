//! `phonebench sphinx-eval` through the binary, over every SPHINX ground-truth folder in
//! `../shared/sphinx-data`, against `DERIVED_expected_outcomes.json` (reference trajectories,
//! the 901/a53 evaluator variants, early-stop prefixes).

use std::process::Command;

use phonebench_testkit::shared_dir;

fn sphinx_eval(args: &[&str]) -> (i32, Vec<serde_json::Value>, String) {
    let out =
        Command::new(env!("CARGO_BIN_EXE_phonebench")).arg("sphinx-eval").args(args).output().expect("runs");
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    (out.status.code().unwrap_or(-1), lines, String::from_utf8_lossy(&out.stderr).to_string())
}

#[test]
fn agrees_with_the_expected_outcomes_file() {
    let data = shared_dir().join("sphinx-data");
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("DERIVED_expected_outcomes.json")).unwrap())
            .unwrap();
    let dir = |task: &serde_json::Value, app: &serde_json::Value| {
        data.join("groundtruth").join(task.to_string()).join(app.as_str().unwrap()).display().to_string()
    };
    let mut checked = 0;
    for case in expected["reference_trajectories"].as_array().unwrap() {
        let (code, lines, err) = sphinx_eval(&[&dir(&case["task_id"], &case["app"])]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(lines[0]["success"], case["expected_success"], "{case}");
        assert_eq!(lines[0]["per_evaluator"], case["per_evaluator"], "{case}");
        let acp = lines[0]["acp"].as_f64().unwrap();
        assert!((acp - case["expected_acp"].as_f64().unwrap()).abs() < 1e-9, "{case}");
        checked += 1;
    }
    let a53 = data.join("groundtruth/901/a53");
    for case in expected["a53_evaluator_variants"].as_array().unwrap() {
        let file = a53.join(case["evaluator_file"].as_str().unwrap());
        let (code, lines, err) = sphinx_eval(&[a53.to_str().unwrap(), "--evaluator", file.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(lines[0]["success"], case["computed_success"], "{case}");
        assert_eq!(lines[0]["success"], case["expected_by_filename"], "{case}");
        assert_eq!(lines[0]["per_evaluator"], case["per_evaluator"], "{case}");
        checked += 1;
    }
    for case in expected["early_stop_prefixes"].as_array().unwrap() {
        let k = case["k_actions_before_stop"].to_string();
        let (code, lines, err) = sphinx_eval(&[&dir(&case["task_id"], &case["app"]), "--stop-after", &k]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(lines[0]["success"], case["expected_success"], "{case}");
        assert_eq!(lines[0]["per_evaluator"], case["per_evaluator"], "{case}");
        checked += 1;
    }
    assert_eq!(checked, 71);
}

#[test]
fn fixed_semantics_and_bad_folders() {
    let gt = shared_dir().join("sphinx-data/groundtruth");
    let fm1 = gt.join("23/fm1");
    let (_, upstream, _) = sphinx_eval(&[fm1.to_str().unwrap()]);
    let (_, fixed, _) = sphinx_eval(&[fm1.to_str().unwrap(), "--semantics", "fixed"]);
    assert_eq!(upstream[0]["success"], false, "first match fails upstream");
    assert_eq!(fixed[0]["success"], true, "any-match finds the later element");

    let missing = gt.join("no/such");
    let (code, lines, err) = sphinx_eval(&[missing.to_str().unwrap(), fm1.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(lines.len(), 1, "the good folder still prints");
    assert!(err.contains("no/such"), "{err}");
}
