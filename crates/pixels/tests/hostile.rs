//! Hostile screens: arbitrary trees (deep, extreme or inverted bounds, control characters, huge
//! texts, many attributes) go through every observation format, the XML round trip, the
//! screenshot renderer and both set-of-marks styles without a panic, and every observation stays
//! within its size bound. Also the reproductions of issue #13's item 5: an extreme-bounds dump,
//! a million-deep dump, 200k attributes on one node.
//!
//! Case counts are small: this runs in CI's debug build on two cores.

use phonebench_observe::{
    MAX_OBSERVATION_BYTES, Observation, ObservationFormat, render as observe, render_with_limit,
};
use phonebench_pixels::{
    Align, Frame, Paint, Role, SomStyle, TextLook, Theme, Tone, draw_marks, encode_png, render,
    render_inferred,
};
use phonebench_uitree::{Bounds, Node, TreeBuilder, UiTree, read_xml, read_xml_bytes, write_xml};
use proptest::prelude::*;

/// Coordinates that break naive geometry: the i32 extremes, values past f32's exact integers,
/// around zero, and ordinary screen positions.
fn coordinate() -> impl Strategy<Value = i32> {
    prop_oneof![
        3 => prop::sample::select(vec![
            i32::MIN,
            i32::MIN + 1,
            i32::MAX,
            i32::MAX - 1,
            -16_777_217,
            16_777_217,
            -1,
            0,
            1,
            100_000_000,
        ]),
        5 => -50..500i32,
        1 => any::<i32>(),
    ]
}

/// Text with control characters, format characters, CJK, emoji, RTL, and sometimes a lot of it.
fn odd_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "\\PC{0,12}",
        2 => "[\u{0}-\u{1f}\u{7f}\u{200b}-\u{200f}\u{202a}-\u{202e}\u{fffe}\u{ffff}a-z 日本😀ش]{0,16}",
        1 => Just(String::new()),
        1 => ("[a-zA-Z ]{1,8}", 1_000..20_000usize).prop_map(|(s, n)| s.repeat(n / s.len().max(1))),
        1 => Just("\n".repeat(2_000)),
    ]
}

fn class() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "android.widget.FrameLayout",
        "android.widget.Button",
        "android.widget.TextView",
        "android.widget.EditText",
        "android.widget.Switch",
        "android.widget.CheckBox",
        "android.widget.RadioButton",
        "android.widget.SeekBar",
        "android.widget.ImageButton",
        "android.widget.ImageView",
        "android.widget.Toolbar",
        "android.widget.ScrollView",
        "x",
    ])
    .prop_map(str::to_string)
}

fn node() -> impl Strategy<Value = Node> {
    (
        (odd_text(), odd_text(), class(), prop::option::of(odd_text())),
        prop::collection::vec(any::<bool>(), 8),
        (coordinate(), coordinate(), coordinate(), coordinate()),
        (prop::option::of(any::<bool>()), prop::option::of(any::<i32>())),
        prop_oneof![4 => 0..3usize, 1 => 200..3_000usize],
    )
        .prop_map(|((text, desc, class, hint), f, (l, t, r, b), (visible, order), extras)| {
            let mut n = Node::new(class, "com.example", Bounds::new(l, t, r, b));
            n.text = text;
            n.content_desc = desc;
            n.hint = hint;
            (n.clickable, n.checkable, n.checked, n.scrollable) = (f[0], f[1], f[2], f[3]);
            (n.long_clickable, n.focused, n.selected, n.enabled) = (f[4], f[5], f[6], f[7]);
            n.visible_to_user = visible;
            n.drawing_order = order;
            for i in 0..extras {
                n.extra.set(&format!("x-attr{i}"), "v");
            }
            n
        })
}

/// A tree from a random sequence of open / leaf / close steps, sometimes with a deep chain.
fn tree() -> impl Strategy<Value = UiTree> {
    (prop::collection::vec((0..3u8, node()), 1..24), prop_oneof![3 => Just(0usize), 1 => 100..2_000usize])
        .prop_map(|(steps, chain)| {
            let mut b = TreeBuilder::new();
            for (step, n) in steps {
                let done = match step {
                    0 => b.open(n).map(drop),
                    1 => b.leaf(n).map(drop),
                    _ => b.close().map(drop),
                };
                // A close with nothing open is refused; the tree goes on.
                let _ = done;
            }
            for i in 0..chain {
                let bounds = Bounds::new(-(i as i32), i as i32, i32::MAX - i as i32, 10);
                let mut n = Node::new("android.widget.Button", "com.example", bounds);
                n.clickable = i % 2 == 0;
                let _ = b.open(n);
            }
            while b.open_depth() > 0 {
                let _ = b.close();
            }
            b.finish().unwrap_or_default()
        })
}

/// Every format's observation of `tree` at `limit`, checked against the bound.
fn observe_all(tree: &UiTree, limit: usize) -> Vec<Observation> {
    ObservationFormat::ALL
        .into_iter()
        .map(|format| {
            let obs = render_with_limit(tree, format, limit);
            // A few bytes past tiny limits: the empty XML document, or `[]`.
            assert!(obs.text.len() <= limit.max(100), "{format}: {} > {limit}", obs.text.len());
            if !obs.truncated {
                assert_eq!(obs.text, render_with_limit(tree, format, usize::MAX).text, "{format}");
            }
            if format == ObservationFormat::Uiautomator {
                let back = read_xml(&obs.text).expect("a cut uiautomator observation is still XML");
                assert!(back.len() <= tree.len());
            }
            obs
        })
        .collect()
}

fn screenshot(tree: &UiTree, width: u32, height: u32, density: f32) {
    let Ok(mut pixmap) = render_inferred(tree, width, height, density, &Theme::LIGHT) else { return };
    for (style, format) in [
        (SomStyle::AndroidWorld, ObservationFormat::AndroidWorld),
        (SomStyle::Sphinx, ObservationFormat::SphinxTree),
    ] {
        let targets = observe(tree, format).targets;
        draw_marks(&mut pixmap, tree, &targets, style);
    }
    encode_png(&pixmap).expect("a drawn frame encodes");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, max_shrink_iters: 200, ..ProptestConfig::default() })]

    #[test]
    fn hostile_trees_observe_round_trip_and_render(
        tree in tree(),
        limit in prop_oneof![Just(MAX_OBSERVATION_BYTES), 0..4_096usize],
        (width, height) in prop_oneof![3 => (1..240u32, 1..320u32), 1 => (1..3u32, 1..4_000u32)],
        density in prop_oneof![Just(1.0f32), Just(0.0), Just(-2.0), Just(f32::NAN), Just(1e30), 0.1..4.0f32],
    ) {
        observe_all(&tree, limit);
        let again = read_xml(&write_xml(&tree)).expect("written XML re-reads");
        prop_assert_eq!(again.len(), tree.len());
        screenshot(&tree, width, height, density);
    }
}

#[test]
fn extreme_bounds_dump_renders_with_both_set_of_marks_styles() {
    let extremes = [
        "[-2147483648,-2147483648][2147483647,2147483647]",
        "[2147483647,2147483647][-2147483648,-2147483648]",
        "[0,0][2147483647,2147483647]",
        "[-2147483648,0][0,10]",
        "[16777217,16777217][16777219,16777219]",
        "[0,0][0,0]",
    ];
    let classes =
        ["Button", "Switch", "CheckBox", "RadioButton", "SeekBar", "ImageButton", "ImageView", "EditText"];
    let mut doc = String::from(
        r#"<hierarchy rotation="0"><node class="android.widget.FrameLayout" package="p" bounds="[-2147483648,-2147483648][2147483647,2147483647]">"#,
    );
    for b in extremes {
        for c in classes {
            doc.push_str(&format!(
                r#"<node text="hi" content-desc="search" class="android.widget.{c}" package="p" clickable="true" checkable="true" scrollable="true" long-clickable="true" bounds="{b}"/>"#
            ));
        }
    }
    doc.push_str("</node></hierarchy>");
    let tree = read_xml(&doc).expect("the dump reads");
    for (w, h, density) in [(1080, 2400, 2.625), (1, 1, 1.0), (240, 320, 0.0), (64, 64, f32::MAX)] {
        let mut pixmap = render_inferred(&tree, w, h, density, &Theme::LIGHT).expect("drawn");
        for (style, format) in [
            (SomStyle::AndroidWorld, ObservationFormat::AndroidWorld),
            (SomStyle::Sphinx, ObservationFormat::SphinxTree),
        ] {
            let obs = observe(&tree, format);
            assert!(!obs.targets.is_empty());
            draw_marks(&mut pixmap, &tree, &obs.targets, style);
        }
        assert!(!encode_png(&pixmap).expect("encoded").is_empty());
    }
    // Zero-size screens are refused, not drawn.
    assert!(render_inferred(&tree, 0, 100, 1.0, &Theme::LIGHT).is_err());
}

/// A dump `depth` nodes deep, every node clickable and scrollable (so an element in every format).
fn deep_dump(depth: usize) -> String {
    let open = r#"<node class="a" package="p" clickable="true" scrollable="true" bounds="[0,0][10,10]">"#;
    let mut doc = String::with_capacity(20 + depth * (open.len() + 7));
    doc.push_str("<hierarchy>");
    for _ in 0..depth {
        doc.push_str(open);
    }
    for _ in 0..depth {
        doc.push_str("</node>");
    }
    doc.push_str("</hierarchy>");
    doc
}

#[test]
fn a_million_deep_dump_is_read_observed_and_drawn_within_bounds() {
    let depth = 1_000_000;
    let tree = read_xml_bytes(deep_dump(depth).as_bytes()).expect("the dump reads");
    assert_eq!(tree.len(), depth);
    for format in ObservationFormat::ALL {
        let obs = observe(&tree, format);
        assert!(obs.text.len() <= MAX_OBSERVATION_BYTES, "{format}: {}", obs.text.len());
        // Every format lists a million elements, far more than fit.
        assert!(obs.truncated, "{format}");
    }
    let tree_text = observe(&tree, ObservationFormat::SphinxTree).text;
    let deepest = tree_text.lines().map(|l| l.chars().take_while(|c| *c == '\t').count()).max();
    assert_eq!(deepest, Some(phonebench_observe::MAX_INDENT_DEPTH));
    let xml = observe(&tree, ObservationFormat::Uiautomator).text;
    assert!(read_xml(&xml).expect("well-formed").len() > 1_000);
    screenshot(&tree, 108, 240, 0.25);
}

#[test]
fn two_hundred_thousand_attributes_on_one_node_read_and_write_back() {
    let n = 200_000;
    let mut doc = String::from(r#"<hierarchy><node class="a" bounds="[0,0][10,10]""#);
    for i in 0..n {
        doc.push_str(&format!(r#" a{i}="{i}""#));
    }
    doc.push_str("/></hierarchy>");
    let tree = read_xml(&doc).expect("the dump reads");
    let node = tree.node(phonebench_uitree::NodeId(0));
    assert_eq!(node.extra.len(), n);
    assert_eq!(node.attribute("a0").as_deref(), Some("0"));
    assert_eq!(node.attribute("a123456").as_deref(), Some("123456"));
    assert_eq!(node.extra[n - 1], (format!("a{}", n - 1), (n - 1).to_string()));
    let back = read_xml(&write_xml(&tree)).expect("re-reads");
    assert_eq!(back, tree);
    let obs = observe(&tree, ObservationFormat::Uiautomator);
    assert!(!obs.truncated);
}

const ROLES: [Role; 36] = [
    Role::Plain,
    Role::Surface,
    Role::AppBar,
    Role::Card,
    Role::Avatar,
    Role::Fab,
    Role::FilledButton,
    Role::TonalButton,
    Role::OutlinedButton,
    Role::TextButton,
    Role::Chip,
    Role::Field,
    Role::SearchBar,
    Role::Switch,
    Role::CheckBox,
    Role::Radio,
    Role::Seek,
    Role::IconButton,
    Role::Image,
    Role::Divider,
    Role::BubbleIn,
    Role::BubbleOut,
    Role::Tab,
    Role::Badge,
    Role::TonalBox,
    Role::StatusBar,
    Role::Battery,
    Role::NavBar,
    Role::Keyboard,
    Role::Key,
    Role::Dialog,
    Role::Menu,
    Role::Toast,
    Role::Wallpaper,
    Role::LauncherIcon,
    Role::OverviewCard,
];

/// Floats that break naive geometry.
fn float() -> impl Strategy<Value = f32> {
    prop_oneof![
        2 => prop::sample::select(vec![
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MAX,
            f32::MIN,
            -1e20,
            1e20,
            2.147_483_6e9,
            -2.147_483_6e9,
            0.0,
            -0.0,
            f32::MIN_POSITIVE,
        ]),
        3 => -100.0..500.0f32,
        1 => any::<f32>(),
    ]
}

fn frame() -> impl Strategy<Value = Frame> {
    (float(), float(), float(), float()).prop_map(|(x, y, w, h)| Frame { x, y, w, h })
}

fn paint() -> impl Strategy<Value = Paint> {
    (
        prop::sample::select(ROLES.to_vec()),
        frame(),
        frame(),
        prop::option::of(prop::sample::select(vec!["search", "check", "no_such_icon", "image", "star"])),
        prop::option::of((float(), prop::option::of(0..4u32), any::<bool>())),
        float(),
        float(),
        prop::option::of(prop::sample::select(vec![
            "placeholder:a",
            "placeholder:",
            "placeholder:🙂",
            "asset:x",
        ])),
    )
        .prop_map(|(role, frame, content, icon, text, value, density, image)| Paint {
            role,
            frame,
            content,
            icon: icon.map(str::to_string),
            text: text.map(|(size_px, max_lines, bold)| TextLook {
                size_px,
                bold,
                max_lines,
                tone: Tone::Normal,
                align: if bold { Align::Center } else { Align::End },
            }),
            value,
            density,
            image: image.map(str::to_string),
            bg: (value > 0.5).then_some(phonebench_pixels::Swatch::Green),
            on: (value > 0.25).then_some(phonebench_pixels::Swatch::Inverse),
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, max_shrink_iters: 500, ..ProptestConfig::default() })]

    /// The simulated phone hands the renderer its own paints: nothing in them can panic it.
    #[test]
    fn arbitrary_paints_never_panic_the_renderer(
        tree in tree(),
        paints in prop::collection::vec(paint(), 64),
        (width, height) in (1..200u32, 1..300u32),
    ) {
        let paints: Vec<Paint> = (0..tree.len()).map(|i| paints[i % paints.len()].clone()).collect();
        if let Ok(mut pixmap) = render(&tree, &paints, width, height, &Theme::DARK) {
            let targets = observe(&tree, ObservationFormat::SphinxTree).targets;
            draw_marks(&mut pixmap, &tree, &targets, SomStyle::Sphinx);
        }
    }
}
