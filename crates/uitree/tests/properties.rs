//! Property tests: the XML reader never panics, whatever it is fed, and trees round-trip.

use phonebench_testkit::real_xml_files;
use phonebench_uitree::{Bounds, Node, TreeBuilder, UiTree, read_xml, read_xml_bytes, write_xml};
use proptest::prelude::*;

/// Fragments that steer random input towards the reader's interesting paths.
const FRAGMENTS: &[&str] = &[
    "<",
    ">",
    "/>",
    "</",
    "\"",
    "'",
    "=",
    "&",
    ";",
    "&#",
    "&#x",
    "&amp;",
    "&#55357;",
    "&#56832;",
    "<hierarchy rotation=\"0\">",
    "</hierarchy>",
    "<node ",
    "</node>",
    "<node/>",
    " bounds=\"[0,0][10,10]\"",
    " bounds=\"[",
    " clickable=\"true\"",
    " index=\"",
    " text=\"",
    "<?xml version='1.0'?>",
    "<!--",
    "-->",
    "<![CDATA[",
    "]]>",
    "<android.widget.TextView ",
    "\n",
    "\u{FEFF}",
    "日本",
    "😀",
    "\u{0}",
];

fn fragment_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            prop::sample::select(FRAGMENTS).prop_map(str::to_string),
            "\\PC{0,6}",
            "[0-9,\\[\\]-]{0,6}",
        ],
        0..40,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn reader_never_panics_on_arbitrary_text(text in "\\PC*") {
        let _ = read_xml(&text);
    }

    #[test]
    fn reader_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        if let Err(e) = read_xml_bytes(&bytes) {
            // Errors are positioned: 1-based line and column.
            prop_assert!(e.line >= 1 && e.column >= 1, "{e}");
        }
    }

    #[test]
    fn reader_never_panics_on_markup_soup(text in fragment_soup()) {
        if let Ok(tree) = read_xml(&text) {
            // Whatever it accepted must survive a round trip.
            let again = read_xml(&write_xml(&tree)).expect("written XML re-reads");
            prop_assert_eq!(again, tree);
        }
    }
}

/// Random edits of real dumps: cut, duplicate or replace a slice with a markup fragment.
#[derive(Debug, Clone)]
enum Edit {
    Truncate(f64),
    Delete(f64, usize),
    Insert(f64, &'static str),
    Duplicate(f64, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (0.0..1.0f64).prop_map(Edit::Truncate),
        (0.0..1.0f64, 1..64usize).prop_map(|(a, n)| Edit::Delete(a, n)),
        (0.0..1.0f64, prop::sample::select(FRAGMENTS)).prop_map(|(a, f)| Edit::Insert(a, f)),
        (0.0..1.0f64, 1..200usize).prop_map(|(a, n)| Edit::Duplicate(a, n)),
    ]
}

fn apply(text: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut t = text.to_vec();
    let at = |t: &Vec<u8>, f: f64| ((t.len() as f64) * f) as usize;
    for e in edits {
        match *e {
            Edit::Truncate(f) => {
                let n = at(&t, f);
                t.truncate(n);
            }
            Edit::Delete(f, n) => {
                let s = at(&t, f);
                let end = (s + n).min(t.len());
                t.drain(s..end);
            }
            Edit::Insert(f, frag) => {
                let s = at(&t, f);
                t.splice(s..s, frag.bytes());
            }
            Edit::Duplicate(f, n) => {
                let s = at(&t, f);
                let end = (s + n).min(t.len());
                let piece = t[s..end].to_vec();
                t.splice(end..end, piece);
            }
        }
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn reader_never_panics_on_damaged_real_dumps(
        file in prop::sample::select(real_xml_files()),
        edits in prop::collection::vec(edit(), 1..6),
    ) {
        let original = std::fs::read(&file).expect("real dump readable");
        let damaged = apply(&original, &edits);
        match read_xml_bytes(&damaged) {
            Ok(tree) => {
                let again = read_xml(&write_xml(&tree)).expect("written XML re-reads");
                prop_assert_eq!(again, tree);
            }
            Err(e) => prop_assert!(e.line >= 1 && e.column >= 1, "{e}"),
        }
    }
}

/// Text as apps show it: XML-special characters, whitespace, CJK and emoji, but only characters
/// XML 1.0 can carry (the writer documents that others become U+FFFD).
fn app_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 &<>\"';#\n\t\r]{0,12}",
        "\\PC{0,8}",
        Just(String::new()),
        Just("'); DROP TABLE nodes; --".to_string()),
    ]
}

fn node() -> impl Strategy<Value = Node> {
    (
        (app_text(), app_text(), app_text(), "[a-z.]{1,30}", "[a-z.]{0,20}"),
        prop::collection::vec(any::<bool>(), 10),
        (any::<i32>(), any::<i32>(), any::<i32>(), any::<i32>(), -5..50i32),
        (prop::option::of(any::<bool>()), prop::option::of(any::<i32>()), prop::option::of(app_text())),
        (prop::option::of(0..4i32), prop::option::of(any::<bool>()), any::<bool>()),
        prop::collection::vec(("x-[a-z]{1,8}", app_text()), 0..3),
    )
        .prop_map(
            |(
                (text, rid, desc, class, package),
                flags,
                (l, t, r, b, index),
                (vis, order, hint),
                (display, editable, naf),
                extra,
            )| {
                let mut extra_unique: Vec<(String, String)> = Vec::new();
                for (k, v) in extra {
                    if !extra_unique.iter().any(|(ek, _)| *ek == k) {
                        extra_unique.push((k, v));
                    }
                }
                // Literal CR/LF/tab survive only through escaping; the writer escapes them, so the
                // model may hold them.
                Node {
                    index,
                    text,
                    resource_id: rid,
                    class,
                    package,
                    content_desc: desc,
                    checkable: flags[0],
                    checked: flags[1],
                    clickable: flags[2],
                    enabled: flags[3],
                    focusable: flags[4],
                    focused: flags[5],
                    scrollable: flags[6],
                    long_clickable: flags[7],
                    password: flags[8],
                    selected: flags[9],
                    bounds: Bounds::new(l, t, r, b),
                    visible_to_user: vis,
                    drawing_order: order,
                    hint,
                    display_id: display,
                    editable,
                    naf,
                    extra: extra_unique.into(),
                }
            },
        )
}

/// Shapes: 0 = open (descend), 1 = leaf, 2 = close.
fn tree() -> impl Strategy<Value = UiTree> {
    (prop::collection::vec((0..3u8, node()), 1..40), 0..4i32).prop_map(|(ops, rotation)| {
        let mut b = TreeBuilder::new();
        b.rotation(rotation);
        for (op, n) in ops {
            match op {
                0 => {
                    b.open(n).expect("open");
                }
                1 => {
                    b.leaf(n).expect("leaf");
                }
                _ => {
                    let _ = b.close();
                }
            }
        }
        while b.open_depth() > 0 {
            b.close().expect("close");
        }
        b.finish().expect("finish")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn generated_trees_round_trip(tree in tree()) {
        let xml = write_xml(&tree);
        let again = read_xml(&xml).map_err(|e| TestCaseError::fail(format!("{e}\n{xml}")))?;
        prop_assert_eq!(again, tree);
    }
}

#[test]
fn very_deep_nesting_does_not_overflow_the_stack() {
    let depth = 200_000;
    let mut doc = String::from("<hierarchy>");
    for _ in 0..depth {
        doc.push_str("<node class=\"a\">");
    }
    for _ in 0..depth {
        doc.push_str("</node>");
    }
    doc.push_str("</hierarchy>");
    let tree = read_xml(&doc).unwrap();
    assert_eq!(tree.len(), depth);
    let again = read_xml(&write_xml(&tree)).unwrap();
    assert_eq!(again.len(), depth);
    assert_eq!(tree.hit_test(0, 0), None);
}
