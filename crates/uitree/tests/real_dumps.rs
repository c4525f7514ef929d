//! Every real dump under `../shared/realdata` and `../shared/sphinx-data` reads, round-trips
//! losslessly, and agrees attribute-for-attribute with an independent XML parser (roxmltree).
//! The folders are walked, so new files are picked up without touching this test.

use phonebench_testkit::{display_name, real_xml_files, shared};
use phonebench_uitree::{Bounds, NodeId, UiTree, WindowKind, read_xml, read_xml_bytes, write_xml};

fn read(path: &std::path::Path) -> UiTree {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", display_name(path)));
    read_xml_bytes(&bytes).unwrap_or_else(|e| panic!("{}: {e}", display_name(path)))
}

#[test]
fn there_are_real_dumps_to_test() {
    // Guards against the walk silently finding nothing.
    assert!(real_xml_files().len() >= 90, "found {}", real_xml_files().len());
}

#[test]
fn every_real_dump_round_trips_losslessly() {
    for path in real_xml_files() {
        let name = display_name(&path);
        let tree = read(&path);
        assert!(!tree.is_empty(), "{name}: no nodes");
        let written = write_xml(&tree);
        let again = read_xml(&written).unwrap_or_else(|e| panic!("{name}: re-read failed: {e}"));
        assert_eq!(again, tree, "{name}: read → write → read changed the tree");
        assert_eq!(write_xml(&again), written, "{name}: writing is not stable");
    }
}

/// One element as roxmltree sees it.
struct IndependentElement {
    tag: String,
    attributes: Vec<(String, String)>,
    ancestors: usize,
}

/// The elements roxmltree sees, in document order, excluding `<hierarchy>`.
fn independent_elements(text: &str) -> Vec<IndependentElement> {
    let doc = roxmltree::Document::parse(text).expect("roxmltree reads every real dump");
    doc.descendants()
        .filter(|n| n.is_element() && n.tag_name().name() != "hierarchy")
        .map(|n| {
            let attributes = n.attributes().map(|a| (a.name().to_string(), a.value().to_string())).collect();
            IndependentElement {
                tag: n.tag_name().name().to_string(),
                attributes,
                ancestors: n.ancestors().count(),
            }
        })
        .collect()
}

#[test]
fn every_attribute_matches_an_independent_parser() {
    for path in real_xml_files() {
        let name = display_name(&path);
        let text = std::fs::read_to_string(&path).unwrap();
        let tree = read(&path);
        let expected = independent_elements(&text);
        assert_eq!(tree.len(), expected.len(), "{name}: node count");
        let min_ancestors = expected.iter().map(|e| e.ancestors).min().unwrap_or(0);
        for ((id, node), IndependentElement { tag, attributes, ancestors }) in tree.iter().zip(&expected) {
            assert_eq!(tree.depth(id) as usize, ancestors - min_ancestors, "{name}: depth of {id:?}");
            for (attr, value) in attributes {
                let ours = node.attribute(attr).unwrap_or_else(|| panic!("{name}: {id:?} lost `{attr}`"));
                assert_eq!(&*ours, value, "{name}: {id:?} attribute `{attr}`");
            }
            if tag != "node" {
                assert_eq!(&node.class, tag, "{name}: Appium class from tag");
            }
        }
    }
}

#[test]
fn dialect_specifics_are_read_right() {
    // NAF nodes (classic uiautomator) keep their mark.
    let t = read(&shared("sphinx-data/groundtruth/101/home_budget/1.xml"));
    assert_eq!(t.iter().filter(|(_, n)| n.naf).count(), 6);

    // Appium page source: class-named tags, hierarchy width/height, extra attributes kept.
    let t = read(&shared("realdata/xml/ivi_quick_settings_appium_pagesource.xml"));
    assert_eq!(t.screen_bounds(), Bounds::new(0, 0, 1920, 957));
    let root = t.node(t.windows()[0].root);
    assert_eq!(root.class, "android.widget.FrameLayout");
    assert_eq!(root.attribute("a11y-important").as_deref(), Some("true"));

    // A root not at the origin (a dialog window).
    let t = read(&shared("realdata/xml/ivi_setupwizard_dialog_offset_root.xml"));
    assert_eq!(t.node(NodeId(0)).bounds, Bounds::new(678, 312, 1242, 767));

    // uiautomator2 multi-window dump: six roots, kinds inferred, app window found.
    let t = read(&shared("realdata/xml/u2_multiwindow_indrive_6roots_1080x2388.xml"));
    assert_eq!(t.windows().len(), 6);
    let kinds: Vec<_> = t.windows().iter().map(|w| w.kind).collect();
    assert_eq!(kinds.iter().filter(|k| **k == WindowKind::SystemUi).count(), 2);
    assert_eq!(kinds[2], WindowKind::Application);
    assert_eq!(t.window_package(phonebench_uitree::WindowId(2)), "sinet.startup.inDriver");

    // Keyboard window listed after the app still stacks above it for hit-testing.
    let t = read(&shared("sphinx-data/groundtruth/2/todoist/1.xml"));
    let ime = t.windows().iter().position(|w| w.kind == WindowKind::InputMethod).unwrap();
    let hit = t.hit_test(384, 900).unwrap();
    assert_eq!(t.window_of(hit).get(), ime);

    // Entities and non-ASCII text decode.
    let any_emoji = real_xml_files()
        .iter()
        .any(|p| read(p).iter().any(|(_, n)| n.text.chars().any(|c| c as u32 >= 0x1F300)));
    assert!(any_emoji, "the realdata emoji character references decode to emoji");
    let t = read(&shared("sphinx-data/_fork_wumengz_Sphinx_Tencent/groundtruth/2/wechat/0.xml"));
    assert!(t.iter().any(|(_, n)| n.text.chars().any(|c| ('\u{4E00}'..='\u{9FFF}').contains(&c))));
}

#[test]
fn zero_area_bounds_are_kept_as_they_are() {
    let mut zero = 0;
    for path in real_xml_files() {
        for (_, n) in read(&path).iter() {
            if n.bounds.is_empty() {
                zero += 1;
            }
        }
    }
    assert!(zero >= 41, "expected the zero-area nodes of the real dumps, found {zero}");
}
