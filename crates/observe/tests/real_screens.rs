//! Every real dump renders in every format, with index tables that agree with the text.

use phonebench_actions::{Point, Target};
use phonebench_observe::{ObservationFormat, render};
use phonebench_testkit::{display_name, real_xml_files};
use phonebench_uitree::{UiTree, read_xml_bytes};

fn trees() -> Vec<(String, UiTree)> {
    real_xml_files()
        .into_iter()
        .map(|p| {
            let name = display_name(&p);
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{name}: {e}"));
            let tree = read_xml_bytes(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, tree)
        })
        .collect()
}

#[test]
fn every_format_renders_every_real_screen_consistently() {
    for (name, tree) in trees() {
        for format in ObservationFormat::ALL {
            let obs = render(&tree, format);
            match format {
                ObservationFormat::Uiautomator => {
                    assert_eq!(obs.targets.len(), tree.len(), "{name}");
                    assert_eq!(phonebench_uitree::read_xml(&obs.text).unwrap(), tree, "{name}");
                }
                ObservationFormat::SphinxList => {
                    let n = if obs.text.is_empty() { 0 } else { obs.text.lines().count() };
                    // Text with newlines adds lines; it never removes any.
                    assert!(n >= obs.targets.len(), "{name}");
                    for (i, id) in obs.targets.iter().enumerate() {
                        assert!(obs.text.contains(&format!("[{i}] ")), "{name}: [{i}] missing");
                        assert!(tree.node(*id).is_visible());
                    }
                }
                ObservationFormat::SphinxTree => {
                    for root in tree.windows().iter().map(|w| w.root) {
                        let system = tree.node(root).package == "com.android.systemui";
                        assert!(
                            obs.targets.iter().all(|t| !system || !tree.is_in_subtree(root, *t)),
                            "{name}"
                        );
                    }
                }
                ObservationFormat::AndroidWorld => {
                    for line in obs.text.lines().filter(|l| l.starts_with("UI element ")) {
                        let index: usize =
                            line["UI element ".len()..].split(':').next().unwrap().parse().unwrap();
                        assert!(index < obs.targets.len(), "{name}: {line}");
                    }
                }
                ObservationFormat::Elements => {
                    let parsed: serde_json::Value = serde_json::from_str(&obs.text).unwrap();
                    let list = parsed.as_array().unwrap();
                    assert_eq!(list.len(), obs.targets.len(), "{name}");
                    for (i, e) in list.iter().enumerate() {
                        assert_eq!(e["id"], i, "{name}");
                        assert!(e["type"].is_string() && e["box"].as_array().unwrap().len() == 4);
                    }
                }
            }
        }
    }
}

#[test]
fn tapping_an_indexed_element_hits_that_element_or_something_inside_or_on_top() {
    // Resolving index i gives node i's centre; hit-testing that centre must land on node i, one
    // of its descendants, or a node in a window stacked above it (e.g. a keyboard over a field).
    let mut checked = 0;
    for (name, tree) in trees() {
        let obs = render(&tree, ObservationFormat::SphinxList);
        for (i, &id) in obs.targets.iter().enumerate() {
            if tree.node(id).bounds.is_empty() {
                continue;
            }
            let r = obs.resolve_target(&tree, &Target::Index(i as u32)).unwrap();
            let (x, y) = r.point;
            let hit = obs.resolve_target(&tree, &Target::Point(Point::new(x, y))).unwrap().node.unwrap();
            let same_window = tree.window_of(hit) == tree.window_of(id);
            if same_window && !tree.is_in_subtree(id, hit) {
                // A sibling drawn later may cover it; then the hit node must not be an ancestor.
                assert!(!tree.is_in_subtree(hit, id), "{name}: [{i}] centre hits its ancestor {hit:?}");
            }
            checked += 1;
        }
    }
    assert!(checked > 500, "checked {checked}");
}
