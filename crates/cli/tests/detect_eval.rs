//! `phonebench detect-eval --json` on two small apps: the line shapes, figures in [0, 1], and a
//! total that agrees with the per-app lines, the same bytes twice, and the bar (80% of
//! clickable elements found at IoU >= 0.5) held on this sample. Needs `tesseract` (Debian
//! `tesseract-ocr`, which tools/test.sh installs); without it the test fails.

use std::process::Command;

use serde_json::Value;

const FIGURES: [&str; 6] =
    ["precision", "recall", "mean_iou", "clickable_recall", "clickable_recall_predicted", "text_accuracy"];

#[test]
fn detect_eval_json_lines_agree() {
    let tesseract = Command::new("tesseract").arg("--version").output();
    assert!(
        tesseract.is_ok_and(|o| o.status.success()),
        "tesseract is missing: tools/test.sh installs it (apt-get install tesseract-ocr tesseract-ocr-eng)"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_phonebench"))
        .args(["detect-eval", "--app", "contacts", "--app", "camera", "--max-states", "3", "--json"])
        .output()
        .expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    let lines: Vec<Value> = stdout.lines().map(|l| serde_json::from_str(l).expect("JSON line")).collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    // Apps in catalog order, then the total.
    assert_eq!(lines[0]["kind"], "app");
    assert_eq!(lines[0]["app"], "camera");
    assert_eq!(lines[1]["app"], "contacts");
    assert_eq!(lines[2]["kind"], "total");
    for line in &lines {
        for key in FIGURES {
            let v = line[key].as_f64().unwrap_or_else(|| panic!("{key} missing in {line}"));
            assert!((0.0..=1.0).contains(&v), "{key} = {v} in {line}");
        }
        assert!(line["per_kind"].is_object(), "{line}");
        for (kind, counts) in line["per_kind"].as_object().expect("object") {
            for key in ["recall", "precision"] {
                let v = &counts[key];
                assert!(
                    v.is_null() || (0.0..=1.0).contains(&v.as_f64().expect("number")),
                    "{kind} {key}: {v}"
                );
            }
        }
    }
    let apps = &lines[..2];
    assert!(apps.iter().all(|l| l["screens"].as_u64().is_some_and(|n| (1..=3).contains(&n))));
    let sum = |key: &str| apps.iter().map(|l| l[key].as_u64().expect("count")).sum::<u64>();
    for key in ["screens", "truth", "detected", "matched", "clickable_truth"] {
        assert_eq!(lines[2][key].as_u64(), Some(sum(key)), "total {key}");
    }
    // Micro averages: the total's recall is the matched share of all truth elements.
    let total = &lines[2];
    let recall = sum("matched") as f64 / sum("truth") as f64;
    assert!((total["recall"].as_f64().expect("recall") - recall).abs() < 1e-9);
    let clickable: f64 = apps
        .iter()
        .map(|l| l["clickable_recall"].as_f64().expect("f") * l["clickable_truth"].as_f64().expect("n"))
        .sum::<f64>()
        / sum("clickable_truth") as f64;
    assert!((total["clickable_recall"].as_f64().expect("f") - clickable).abs() < 1e-9);
    // The bar, on this sample (the whole catalog's figure is in docs/detect.md).
    assert!(clickable >= 0.8, "clickable recall {clickable} under 0.8: {stdout}");

    // The same run twice gives the same bytes.
    let again = Command::new(env!("CARGO_BIN_EXE_phonebench"))
        .args(["detect-eval", "--app", "contacts", "--app", "camera", "--max-states", "3", "--json"])
        .output()
        .expect("runs");
    assert_eq!(String::from_utf8_lossy(&again.stdout), stdout);
}

#[test]
fn detect_eval_rejects_an_unknown_app() {
    let out = Command::new(env!("CARGO_BIN_EXE_phonebench"))
        .args(["detect-eval", "--app", "no-such-app", "--json"])
        .output()
        .expect("runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-app"));
}
