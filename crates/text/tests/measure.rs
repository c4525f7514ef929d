//! Behaviour of `measure`: realistic sizes, wrapping, line caps, determinism, and no panics.

use phonebench_text::{FontWeight, Fonts, TextSize, TextStyle, measure, measure_weight};
use proptest::prelude::*;

/// 16 sp at density 2.625 (a 1080x2400 phone): Android's default body text size.
const BODY: TextStyle = TextStyle { size_px: 42.0, bold: false, line_height: 1.2 };
const BODY_BOLD: TextStyle = TextStyle { bold: true, ..BODY };
const LINE: f32 = 42.0 * 1.2;

fn one_line(text: &str) -> TextSize {
    measure(text, &BODY, None, None)
}

#[test]
fn hello_at_42px_measures_as_roboto() {
    let size = one_line("Hello");
    // Advances of Roboto Regular (units per em 2048): H 1461, e 1086, l 498, l 498, o 1168 = 4711,
    // × 42 / 2048 = 96.612 px, which is what comes out (no kerning between these glyphs).
    assert!((size.width - 96.612).abs() < 0.5, "width {}", size.width);
    assert_eq!(size.lines, 1);
    assert_eq!(size.height, LINE);
}

#[test]
fn width_grows_with_text_length() {
    let widths: Vec<f32> = ["H", "He", "Hello", "Hello world", "Hello world, how are you?"]
        .iter()
        .map(|t| one_line(t).width)
        .collect();
    assert!(widths.windows(2).all(|w| w[0] < w[1]), "{widths:?}");
    assert!(widths.iter().all(|&w| w > 0.0));
    // Roughly proportional: five times the characters is several times the width.
    assert!(widths[4] > 4.0 * widths[2], "{widths:?}");
}

#[test]
fn bold_is_wider_than_regular() {
    // Roboto Bold is only a little wider than Regular (1-4 % on these), Medium in between.
    for text in ["Hello", "Settings", "Wi-Fi & network", "0123456789"] {
        let regular = measure(text, &BODY, None, None);
        let medium = measure_weight(text, &BODY, FontWeight::Medium, None, None);
        let bold = measure(text, &BODY_BOLD, None, None);
        assert!(bold.width > regular.width * 1.01, "{text}: {bold:?} vs {regular:?}");
        assert!(regular.width < medium.width && medium.width < bold.width, "{text}: {medium:?}");
        assert_eq!(bold.height, regular.height);
        assert_eq!(medium.height, regular.height);
    }
    // `measure_weight` with the style's own weight is `measure`.
    assert_eq!(measure_weight("Hello", &BODY, FontWeight::Bold, None, None), one_line_bold("Hello"));
    assert_eq!(measure_weight("Hello", &BODY_BOLD, FontWeight::Regular, None, None), one_line("Hello"));
}

fn one_line_bold(text: &str) -> TextSize {
    measure(text, &BODY_BOLD, None, None)
}

#[test]
fn size_scales_width_linearly() {
    let small = measure("Battery saver", &TextStyle { size_px: 21.0, ..BODY }, None, None);
    let big = one_line("Battery saver");
    assert!((big.width - 2.0 * small.width).abs() < 0.01, "{small:?} {big:?}");
}

#[test]
fn wrapping_at_max_width_adds_lines() {
    let text = "The quick brown fox jumps over the lazy dog and keeps running across the field";
    let unbounded = one_line(text);
    assert_eq!(unbounded.lines, 1);
    let wrapped = measure(text, &BODY, Some(400.0), None);
    assert!(wrapped.lines > 1, "{wrapped:?}");
    assert!(wrapped.height > unbounded.height);
    assert_eq!(wrapped.height, wrapped.lines as f32 * LINE);
    assert!(wrapped.width <= 400.0 && wrapped.width > 300.0, "{wrapped:?}");
    // The total is a little wider than the one line, since each wrap drops a space; so the number of
    // lines is at least the ratio.
    assert!(wrapped.lines as f32 >= unbounded.width / 400.0, "{wrapped:?} {unbounded:?}");
}

#[test]
fn text_that_fits_does_not_wrap() {
    let free = one_line("OK");
    let bounded = measure("OK", &BODY, Some(1080.0), None);
    assert_eq!(free, bounded);
}

#[test]
fn a_word_longer_than_the_line_is_split() {
    let word = "Supercalifragilisticexpialidocious";
    let size = measure(word, &BODY, Some(200.0), None);
    assert!(size.lines >= 3, "{size:?}");
    assert!(size.width <= 200.0);
}

#[test]
fn max_lines_caps_height() {
    let text = "The quick brown fox jumps over the lazy dog and keeps running across the field";
    let all = measure(text, &BODY, Some(300.0), None);
    assert!(all.lines > 2, "{all:?}");
    let two = measure(text, &BODY, Some(300.0), Some(2));
    assert_eq!(two.lines, 2);
    assert_eq!(two.height, 2.0 * LINE);
    // A cap above the line count changes nothing.
    assert_eq!(measure(text, &BODY, Some(300.0), Some(100)), all);
    // maxLines = 1 on hard lines keeps the first.
    let first = measure("Inbox\nA much longer second line", &BODY, None, Some(1));
    assert_eq!(first, one_line("Inbox"));
    // Zero lines show nothing.
    assert_eq!(measure(text, &BODY, None, Some(0)), TextSize { width: 0.0, height: 0.0, lines: 0 });
}

#[test]
fn empty_text_has_one_line_of_height() {
    assert_eq!(one_line(""), TextSize { width: 0.0, height: LINE, lines: 1 });
    assert_eq!(
        measure("", &BODY_BOLD, Some(100.0), Some(3)),
        TextSize { width: 0.0, height: LINE, lines: 1 }
    );
}

#[test]
fn hard_newlines_count() {
    let two = one_line("Hello\nWorld");
    assert_eq!(two.lines, 2);
    assert_eq!(two.height, 2.0 * LINE);
    assert_eq!(two.width, one_line("Hello").width.max(one_line("World").width));
    assert_eq!(one_line("a\r\nb").lines, 2);
    // A trailing newline starts an empty last line, as in an Android TextView.
    assert_eq!(one_line("Hello\n").lines, 2);
    assert_eq!(one_line("\n\n").lines, 3);
}

#[test]
fn line_height_multiplies_size() {
    let size = measure("Hello", &TextStyle { line_height: 1.5, ..BODY }, None, None);
    assert_eq!(size.height, 63.0);
    assert_eq!(size.width, one_line("Hello").width);
}

#[test]
fn same_call_gives_same_result() {
    let text = "Alice Müller · Are we still on for lunch tomorrow? I booked a table at 12:30";
    let first = measure(text, &BODY, Some(700.0), Some(2));
    let second = measure(text, &BODY, Some(700.0), Some(2));
    assert_eq!(first, second);
    // The cache returns what the font system computes afresh, bit for bit.
    let fresh = Fonts::new().measure(text, &BODY, Some(700.0), Some(2));
    assert_eq!(first, fresh);
    // Widths are rounded to whole pixels before measuring, so nearby widths agree.
    assert_eq!(measure(text, &BODY, Some(700.3), Some(2)), first);
}

#[test]
fn measures_agree_across_threads() {
    let texts: Vec<String> =
        (0..200).map(|i| format!("Contact number {i} · last seen {} minutes ago", i * 7)).collect();
    let expected: Vec<TextSize> =
        texts.iter().map(|t| Fonts::new().measure(t, &BODY, Some(600.0), None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for (text, want) in texts.iter().zip(&expected) {
                    assert_eq!(measure(text, &BODY, Some(600.0), None), *want);
                }
            });
        }
    });
}

#[test]
fn arbitrary_unicode_measures_without_panicking() {
    let cases = [
        "😀👍🏽👨‍👩‍👧‍👦🇫🇷",
        "你好，世界",
        "こんにちは",
        "مرحبا بالعالم",
        "שלום עולם",
        "abc\u{0}def",
        "\u{0}",
        "\u{200B}\u{200D}\u{FEFF}\u{202E}reversed",
        "e\u{301}\u{302}\u{303}\u{304}",
        "\t tab",
        "\u{FFFF}\u{10FFFF}",
        "\u{2028}\u{2029}\u{85}",
        // A right-to-left mark, then paragraph separators inside a line: cosmic-text asserts
        // each line is one bidi paragraph.
        "\u{200F}\u{1C}a",
        "\u{5D0}\u{1D}b\u{2029}\u{5D1}\u{85}c\u{1E}",
    ];
    for text in cases {
        for style in [BODY, BODY_BOLD] {
            for max_width in [None, Some(0.0), Some(50.0), Some(1000.0)] {
                let size = measure(text, &style, max_width, Some(5));
                assert!(size.width.is_finite() && size.width >= 0.0, "{text:?}: {size:?}");
                assert!((1..=5).contains(&size.lines), "{text:?}: {size:?}");
                assert_eq!(size.height, size.lines as f32 * LINE, "{text:?}");
            }
        }
    }
    // Glyphs no embedded face has still take room (Roboto's missing-glyph box, 908/2048 em), so
    // layout sees them.
    let missing = one_line("\u{FFFF}");
    assert!((missing.width - 18.62).abs() < 0.1, "{missing:?}");
    // Emoji come from Noto Color Emoji: 2550/2048 em wide, not the missing-glyph box.
    let emoji = one_line("🙏");
    assert!((emoji.width - 52.29).abs() < 0.1, "{emoji:?}");
    assert_eq!(one_line("🙂🙂").width, 2.0 * emoji.width);
    // Arabic and Hebrew come from DejaVu Sans and measure like any text.
    assert!(one_line("مرحبا").width > 40.0);
    assert!(one_line("שלום").width > 40.0);
}

#[test]
fn cjk_falls_back_to_droid_sans_fallback() {
    // Droid Sans Fallback's ideographs, kana and Hangul are one em wide, at every weight (its one
    // weight is registered as Regular, Medium and Bold), instead of Roboto's missing-glyph boxes.
    let box_width = one_line("\u{FFFF}").width;
    for text in ["你好", "こんにちは", "안녕", "日本語"] {
        let em = text.chars().count() as f32 * 42.0;
        assert_eq!(one_line(text).width, em, "{text}");
        assert_eq!(one_line_bold(text).width, em, "{text}");
        assert_eq!(measure_weight(text, &BODY, FontWeight::Medium, None, None).width, em, "{text}");
        assert_ne!(one_line(text).width, text.chars().count() as f32 * box_width);
    }
    // Full-width punctuation is in the fallback too; Latin in a mixed text stays Roboto.
    assert_eq!(one_line("你好，世界").width, 5.0 * 42.0);
    let mixed = one_line("Hello 你好").width;
    assert!((mixed - (one_line("Hello ").width + 84.0)).abs() < 0.01, "{mixed}");
    // Wrapping CJK (no spaces) breaks between ideographs.
    let wrapped = measure("明天下午三点开会，别忘了带资料。", &BODY, Some(300.0), None);
    assert_eq!(wrapped.lines, 3, "{wrapped:?}");
    assert!(wrapped.width <= 300.0 && wrapped.width >= 252.0, "{wrapped:?}");
}

#[test]
fn symbols_fall_back_to_dejavu_sans() {
    // Arrows, check marks and dingbats (✈ ❤ in the seeded messages) are not in Roboto.
    let box_width = one_line("\u{FFFF}").width;
    for text in ["→", "✓", "★", "✈", "❤", "∈"] {
        let width = one_line(text).width;
        assert!(width > 0.0 && width != box_width, "{text}: {width}");
        assert!(one_line_bold(text).width > 0.0 && one_line_bold(text).width != box_width, "{text}");
    }
}

#[test]
fn very_long_text_measures() {
    let text = "lorem ipsum dolor sit amet ".repeat(2_000);
    let one = one_line(&text);
    assert_eq!(one.lines, 1);
    assert!(one.width > 100_000.0);
    let wrapped = measure(&text, &BODY, Some(1000.0), None);
    assert!(wrapped.lines > 100, "{wrapped:?}");
    let capped = measure(&text, &BODY, Some(1000.0), Some(3));
    assert_eq!(capped.lines, 3);
}

#[test]
fn unusable_parameters_do_not_panic() {
    for size_px in [0.0, -1.0, f32::NAN, f32::INFINITY, f32::MIN_POSITIVE, 1e30] {
        for line_height in [0.0, -1.0, f32::NAN, f32::INFINITY, 1.2] {
            for max_width in [None, Some(-5.0), Some(f32::NAN), Some(f32::INFINITY), Some(1e30)] {
                let style = TextStyle { size_px, bold: false, line_height };
                let size = measure("Hello world", &style, max_width, None);
                assert!(
                    size.width.is_finite() && size.height.is_finite(),
                    "{style:?} {max_width:?}: {size:?}"
                );
                assert!(size.width >= 0.0 && size.height >= 0.0);
            }
        }
    }
    let nothing = measure("Hello", &TextStyle { size_px: f32::NAN, ..BODY }, None, None);
    assert_eq!(nothing, TextSize::default());
}

#[test]
fn only_the_embedded_faces_are_loaded() {
    let mut fonts = Fonts::new();
    let db = fonts.font_system().db();
    let faces: Vec<(&str, u16, &str)> =
        db.faces().map(|f| (f.families[0].0.as_str(), f.weight.0, f.post_script_name.as_str())).collect();
    // In fallback order (IDs ascend); the single-weight fallback faces again under the other weights.
    assert_eq!(
        faces,
        [
            ("Roboto", 400, "Roboto-Regular"),
            ("Roboto", 500, "Roboto-Medium"),
            ("Roboto", 700, "Roboto-Bold"),
            ("DejaVu Sans", 400, "DejaVuSans"),
            ("DejaVu Sans", 500, "DejaVuSans"),
            ("DejaVu Sans", 700, "DejaVuSans-Bold"),
            ("Droid Sans Fallback", 400, "DroidSansFallback"),
            ("Droid Sans Fallback", 500, "DroidSansFallback"),
            ("Droid Sans Fallback", 700, "DroidSansFallback"),
            ("Noto Color Emoji", 400, "NotoColorEmoji"),
            ("Noto Color Emoji", 500, "NotoColorEmoji"),
            ("Noto Color Emoji", 700, "NotoColorEmoji"),
        ]
    );
    let mut ids: Vec<_> = db.faces().map(|f| f.id).collect();
    let sorted = ids.clone();
    ids.sort();
    assert_eq!(ids, sorted);
}

#[test]
fn layout_buffer_matches_measurement() {
    let text = "Wrapped preview text that runs over two lines at this width";
    let mut fonts = Fonts::new();
    let buffer = fonts.layout(text, &BODY, Some(500.0)).expect("a positive size lays out");
    let runs: Vec<f32> = buffer.layout_runs().map(|run| run.line_w).collect();
    let size = measure(text, &BODY, Some(500.0), None);
    assert_eq!(runs.len() as u32, size.lines);
    assert_eq!(runs.iter().copied().fold(0.0, f32::max), size.width);
}

proptest! {
    #[test]
    fn any_text_measures_sanely(text in any::<String>(), width in proptest::option::of(0.0f32..2000.0), cap in proptest::option::of(1u32..4)) {
        let size = measure(&text, &BODY, width, cap);
        prop_assert!(size.width.is_finite() && size.width >= 0.0);
        prop_assert!(size.lines >= 1);
        if let Some(cap) = cap {
            prop_assert!(size.lines <= cap);
        }
        if let Some(width) = width {
            prop_assert!(size.width <= width.round());
        }
        prop_assert_eq!(size.height, size.lines as f32 * LINE);
        prop_assert_eq!(measure(&text, &BODY, width, cap), size);
    }
}
