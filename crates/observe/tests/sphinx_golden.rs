//! Golden SPHINX renderings of real SPHINX screens.
//!
//! How the golden files were derived and checked: written by our renderer, then compared byte for
//! byte with `tools/sphinx_reference.py --check`, an independent re-derivation of the upstream
//! rules in Python over a different XML parser (all 14 files agree), and read by hand against
//! upstream's own example (`901/a53/0.xml`'s list is the one quoted in the SPHINX notes, and its
//! `[0]`, `[1]`, `[7]` lines match). After an intended change, regenerate with
//! `PHONEBENCH_BLESS=1 cargo test -p phonebench-observe --test sphinx_golden`, run the Python
//! check, and review the diff. The screen list is kept in step with the Python tool's.

use std::path::PathBuf;

use phonebench_observe::{ObservationFormat, render};
use phonebench_testkit::shared;
use phonebench_uitree::read_xml_bytes;

/// (screen in ../shared/sphinx-data, golden name, why it is here)
const SCREENS: &[(&str, &str)] = &[
    // The upstream example: EditTexts (`to text`) and buttons, nav bar and status bar dropped.
    ("groundtruth/901/a53/0.xml", "a53_0"),
    // NAF nodes and an action bar with image buttons; status/nav bars listed first.
    ("groundtruth/101/home_budget/1.xml", "home_budget_1"),
    // A popup window whose root is not at the origin.
    ("groundtruth/101/money/1.xml", "money_1"),
    // A keyboard window (com.google.android.inputmethod.latin) is kept, as upstream does.
    ("groundtruth/2/todoist/1.xml", "todoist_1"),
    // The largest SPHINX screen: deep tree, non-monotonic indexes.
    ("groundtruth/203/weather/1.xml", "weather_1"),
    // A grounding-task screen whose first window is the navigation bar.
    ("lowlevel_tasks/310.xml", "lowlevel_310"),
    // WeChat (fork): Chinese text, a MIUI launcher strip and uiautomator2's floating window.
    ("_fork_wumengz_Sphinx_Tencent/groundtruth/2/wechat/3.xml", "wechat_3"),
];

fn golden_path(name: &str, kind: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/sphinx/{name}.{kind}.txt"))
}

#[test]
fn sphinx_renderings_match_the_golden_files() {
    let bless = std::env::var_os("PHONEBENCH_BLESS").is_some();
    let mut mismatches = Vec::new();
    for (screen, name) in SCREENS {
        let bytes = std::fs::read(shared(&format!("sphinx-data/{screen}"))).unwrap();
        let tree = read_xml_bytes(&bytes).unwrap();
        for (format, kind) in
            [(ObservationFormat::SphinxTree, "tree"), (ObservationFormat::SphinxList, "list")]
        {
            let got = render(&tree, format).text;
            let path = golden_path(name, kind);
            if bless {
                std::fs::write(&path, &got).unwrap();
                continue;
            }
            let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!("{}: {e} (run with PHONEBENCH_BLESS=1 to create)", path.display())
            });
            if got != want {
                let line = got.lines().zip(want.lines()).position(|(a, b)| a != b);
                mismatches.push(format!("{name}.{kind}: first difference at line {line:?}"));
            }
        }
    }
    assert!(mismatches.is_empty(), "{mismatches:#?}");
}

#[test]
fn tree_and_list_share_one_index_table() {
    for (screen, _) in SCREENS {
        let bytes = std::fs::read(shared(&format!("sphinx-data/{screen}"))).unwrap();
        let tree = read_xml_bytes(&bytes).unwrap();
        let t = render(&tree, ObservationFormat::SphinxTree);
        let l = render(&tree, ObservationFormat::SphinxList);
        assert_eq!(t.targets, l.targets, "{screen}");
        // Every index appears exactly once in each text.
        for i in 0..l.targets.len() {
            let tag = format!("[{i}] ");
            assert_eq!(l.text.lines().filter(|x| x.starts_with(&tag)).count(), 1, "{screen} list {tag}");
            assert_eq!(
                t.text.lines().filter(|x| x.trim_start().starts_with(&tag)).count(),
                1,
                "{screen} tree {tag}"
            );
        }
    }
}
