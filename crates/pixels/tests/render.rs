//! The renderer on hand-built trees: roles draw where they should, clipping holds, output is
//! deterministic, PNG round-trips, set-of-marks boxes sit on the numbered nodes.

use phonebench_pixels::{
    Align, Frame, Paint, Role, SomStyle, TextLook, Theme, Tone, decode_png, draw_marks, encode_png, render,
    render_inferred,
};
use phonebench_uitree::{Bounds, Node, NodeId, TreeBuilder, UiTree, WindowKind};

const W: u32 = 400;
const H: u32 = 600;
const D: f32 = 1.0;

fn frame(b: Bounds) -> Frame {
    Frame::new(b.left as f32, b.top as f32, b.width() as f32, b.height() as f32)
}

fn paint(role: Role, b: Bounds) -> Paint {
    Paint { role, frame: frame(b), content: frame(b), density: D, ..Paint::default() }
}

fn text_look() -> TextLook {
    TextLook { size_px: 16.0, bold: false, max_lines: None, tone: Tone::Normal, align: Align::Start }
}

/// A screen: a surface root, a filled button, a text, and an icon button; returns the tree and
/// paints.
fn screen() -> (UiTree, Vec<Paint>) {
    let root = Bounds::new(0, 0, W as i32, H as i32);
    let button = Bounds::new(20, 20, 200, 68);
    let label = Bounds::new(20, 100, 380, 130);
    let icon = Bounds::new(300, 20, 348, 68);
    let mut b = TreeBuilder::new();
    b.open_window(Node::new("android.widget.FrameLayout", "p", root), WindowKind::Application, 0)
        .expect("open");
    let mut n = Node::new("android.widget.Button", "p", button);
    n.text = "Save".into();
    n.clickable = true;
    b.leaf(n).expect("leaf");
    let mut n = Node::new("android.widget.TextView", "p", label);
    n.text = "Hello phone".into();
    b.leaf(n).expect("leaf");
    let mut n = Node::new("android.widget.ImageButton", "p", icon);
    n.content_desc = "Search".into();
    n.clickable = true;
    b.leaf(n).expect("leaf");
    b.close().expect("close");
    let tree = b.finish().expect("tree");
    let mut paints = vec![paint(Role::Surface, root), paint(Role::FilledButton, button)];
    paints[1].text = Some(TextLook { align: Align::Center, ..text_look() });
    paints.push(Paint { text: Some(text_look()), ..paint(Role::Plain, label) });
    paints.push(Paint { icon: Some("search".into()), ..paint(Role::IconButton, icon) });
    (tree, paints)
}

fn pixel(p: &phonebench_pixels::Pixmap, x: u32, y: u32) -> [u8; 4] {
    let i = ((y * p.width() + x) * 4) as usize;
    let d = p.data();
    [d[i], d[i + 1], d[i + 2], d[i + 3]]
}

fn rgb(c: [u8; 4]) -> [u8; 3] {
    [c[0], c[1], c[2]]
}

#[test]
fn roles_draw_their_theme_colours() {
    let (tree, paints) = screen();
    let light = render(&tree, &paints, W, H, &Theme::LIGHT).expect("render");
    // Background, button fill (away from its centred label), and ink somewhere in the label.
    assert_eq!(rgb(pixel(&light, 390, 590)), rgb(Theme::LIGHT.surface));
    assert_eq!(rgb(pixel(&light, 40, 44)), rgb(Theme::LIGHT.primary));
    let label_ink =
        (20..380).any(|x| (100..130).any(|y| rgb(pixel(&light, x, y)) != rgb(Theme::LIGHT.surface)));
    assert!(label_ink, "the label's text is drawn");
    let icon_ink =
        (300..348).any(|x| (20..68).any(|y| rgb(pixel(&light, x, y)) != rgb(Theme::LIGHT.surface)));
    assert!(icon_ink, "the search icon is drawn");

    let dark = render(&tree, &paints, W, H, &Theme::DARK).expect("render");
    assert_eq!(rgb(pixel(&dark, 390, 590)), rgb(Theme::DARK.surface));
    assert_eq!(rgb(pixel(&dark, 40, 44)), rgb(Theme::DARK.primary));
}

#[test]
fn identical_input_gives_identical_bytes() {
    let (tree, paints) = screen();
    let a = encode_png(&render(&tree, &paints, W, H, &Theme::LIGHT).expect("render")).expect("png");
    let b = encode_png(&render(&tree, &paints, W, H, &Theme::LIGHT).expect("render")).expect("png");
    assert_eq!(a, b);
}

#[test]
fn png_round_trips() {
    let (tree, paints) = screen();
    let frame = render(&tree, &paints, W, H, &Theme::LIGHT).expect("render");
    let png = encode_png(&frame).expect("png");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let back = decode_png(&png).expect("decode");
    assert_eq!((back.width(), back.height()), (W, H));
    assert!(back.data() == frame.data(), "opaque frames survive RGB encoding exactly");
    assert!(decode_png(b"not a png").is_err());
}

#[test]
fn a_node_scrolled_partly_out_of_view_is_clipped_to_its_bounds() {
    // The card's frame starts above its visible bounds (scrolled): nothing may land above them.
    let root = Bounds::new(0, 0, W as i32, H as i32);
    let visible = Bounds::new(20, 100, 380, 160);
    let mut b = TreeBuilder::new();
    b.open_window(Node::new("android.widget.FrameLayout", "p", root), WindowKind::Application, 0)
        .expect("open");
    let mut n = Node::new("android.widget.TextView", "p", visible);
    n.text = "Line one\nLine two\nLine three".into();
    b.leaf(n).expect("leaf");
    b.close().expect("close");
    let tree = b.finish().expect("tree");
    let card = Paint {
        role: Role::Card,
        frame: Frame::new(20.0, 40.0, 360.0, 120.0),
        content: Frame::new(28.0, 40.0, 344.0, 120.0),
        text: Some(text_look()),
        density: D,
        ..Paint::default()
    };
    let paints = vec![paint(Role::Surface, root), card];
    let p = render(&tree, &paints, W, H, &Theme::LIGHT).expect("render");
    for y in 0..100 {
        for x in 0..W {
            assert_eq!(rgb(pixel(&p, x, y)), rgb(Theme::LIGHT.surface), "ink at ({x},{y}) above the bounds");
        }
    }
    assert_eq!(rgb(pixel(&p, 200, 150)), rgb(Theme::LIGHT.surface_container), "the card shows inside");
}

#[test]
fn wrong_inputs_are_errors_not_panics() {
    let (tree, paints) = screen();
    assert!(render(&tree, &paints[..2], W, H, &Theme::LIGHT).is_err());
    assert!(render(&tree, &paints, 0, H, &Theme::LIGHT).is_err());
}

#[test]
fn real_dumps_render_with_inferred_looks() {
    let (tree, _) = screen();
    let p = render_inferred(&tree, W, H, 1.0, &Theme::LIGHT).expect("render");
    // The Button is drawn outlined: its border differs from the background.
    assert_ne!(rgb(pixel(&p, 110, 20)), rgb(Theme::LIGHT.surface));
}

#[test]
fn marks_box_the_numbered_nodes() {
    let (tree, paints) = screen();
    let targets: Vec<NodeId> = vec![NodeId(1), NodeId(3)];
    for style in [SomStyle::AndroidWorld, SomStyle::Sphinx] {
        let mut p = render(&tree, &paints, W, H, &Theme::LIGHT).expect("render");
        let before = p.clone();
        draw_marks(&mut p, &tree, &targets, style);
        // The right edge of the button's box is marked, the plain label is not.
        let edge = pixel(&p, 199, 50);
        let expected: [u8; 3] = match style {
            SomStyle::AndroidWorld => [0, 255, 0],
            SomStyle::Sphinx => [255, 0, 0],
        };
        assert_eq!(rgb(edge), expected, "{style:?}");
        assert_eq!(pixel(&p, 379, 115), pixel(&before, 379, 115), "{style:?}: unnumbered node untouched");
    }
}

#[test]
fn emoji_draw_in_colour_from_the_emoji_face() {
    use phonebench_pixels::text::{TextAlign, TextRun, draw_text};
    let mut p = phonebench_pixels::Pixmap::new(200, 80).expect("pixmap");
    p.fill(tiny_skia::Color::WHITE);
    let run = TextRun {
        text: "🍊",
        style: phonebench_text::TextStyle { size_px: 48.0, bold: false, line_height: 1.2 },
        max_lines: None,
        color: [0, 0, 0, 255],
        align: TextAlign::Start,
    };
    let rect = tiny_skia::Rect::from_xywh(10.0, 10.0, 180.0, 60.0).expect("rect");
    draw_text(&mut p, &run, rect, tiny_skia::IntRect::from_xywh(0, 0, 200, 80).expect("clip"));
    // An orange: strongly orange pixels, which black text (or a missing-glyph box) never has.
    let orange = p
        .pixels()
        .iter()
        .map(|c| c.demultiply())
        .filter(|c| c.red() > 200 && c.green() > 80 && c.green() < 190 && c.blue() < 90)
        .count();
    assert!(orange > 200, "{orange} orange pixels");
}
