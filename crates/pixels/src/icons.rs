//! Vector icons: a vendored subset of Google's Material Symbols (outlined, weight 400, Apache-2.0).
//!
//! The outlines live in `assets/icons/material-symbols.txt` (one `name<TAB>SVG path data` line per
//! icon, see `assets/icons/README.md` for where they come from and how to regenerate them). The file
//! is embedded in the binary and parsed once, on first use, into [`tiny_skia::Path`]s in
//! [`VIEW_BOX`] coordinates. A line that fails to parse is left out instead of panicking; a test
//! checks that every vendored line parses.
//!
//! ```
//! use phonebench_pixels::icons;
//! use tiny_skia::{Color, Pixmap};
//!
//! let mut pixmap = Pixmap::new(32, 32).expect("non-zero size");
//! assert!(icons::draw(&mut pixmap, "search", 4.0, 4.0, 24.0, Color::BLACK, None));
//! assert!(!icons::draw(&mut pixmap, "no_such_icon", 4.0, 4.0, 24.0, Color::BLACK, None));
//! ```

use std::sync::OnceLock;

use tiny_skia::{Color, FillRule, Mask, Paint, Path, PathBuilder, Pixmap, Transform};

/// The viewBox of the vendored icons: (min_x, min_y, width, height).
///
/// Material Symbols use `0 -960 960 960`: x runs 0..960 to the right and y runs -960..0 downwards
/// (the usual SVG orientation, just shifted up by 960), so an icon's top-left corner is (0, -960).
pub const VIEW_BOX: (f32, f32, f32, f32) = (0.0, -960.0, 960.0, 960.0);

/// The fill rule the icon outlines are drawn with (SVG's default `nonzero`; the vendored files set
/// no `fill-rule`, and their holes are wound opposite to the outer contours).
pub const FILL_RULE: FillRule = FillRule::Winding;

/// The vendored icon file: `#` comment lines, then `name<TAB>path data` lines.
const SOURCE: &str = include_str!("../assets/icons/material-symbols.txt");

/// Parsed icons, sorted by name, names unique.
struct Icons {
    names: Vec<&'static str>,
    paths: Vec<Path>,
}

/// The icon table, parsed from [`SOURCE`] on first use.
fn icons() -> &'static Icons {
    static ICONS: OnceLock<Icons> = OnceLock::new();
    ICONS.get_or_init(|| build(SOURCE))
}

/// The `(name, path data)` entries of an icon file, in file order. Blank lines, `#` comments and
/// lines without a tab are skipped.
fn entries(source: &str) -> impl Iterator<Item = (&str, &str)> {
    source.lines().filter(|line| !line.trim().is_empty() && !line.starts_with('#')).filter_map(|line| {
        let (name, data) = line.split_once('\t')?;
        Some((name.trim(), data.trim()))
    })
}

/// Parses an icon file into a table sorted by name. Unparsable entries are dropped; of duplicate
/// names the first one wins.
fn build(source: &'static str) -> Icons {
    let mut parsed: Vec<(&'static str, Path)> = entries(source)
        .filter(|(name, _)| !name.is_empty())
        .filter_map(|(name, data)| Some((name, parse_path(data)?)))
        .collect();
    // Stable sort keeps file order among equal names, so `dedup_by` keeps the first.
    parsed.sort_by(|a, b| a.0.cmp(b.0));
    parsed.dedup_by(|later, earlier| later.0 == earlier.0);
    let (names, paths) = parsed.into_iter().unzip();
    Icons { names, paths }
}

/// Converts SVG path data into a tiny-skia path (same coordinates). `None` when the data is
/// malformed, empty or not finite.
fn parse_path(data: &str) -> Option<Path> {
    let mut builder = PathBuilder::new();
    for segment in svgtypes::SimplifyingPathParser::from(data) {
        // The viewBox is 960 units, so f32 is exact enough for these coordinates.
        match segment.ok()? {
            svgtypes::SimplePathSegment::MoveTo { x, y } => builder.move_to(x as f32, y as f32),
            svgtypes::SimplePathSegment::LineTo { x, y } => builder.line_to(x as f32, y as f32),
            svgtypes::SimplePathSegment::CurveTo { x1, y1, x2, y2, x, y } => {
                builder.cubic_to(x1 as f32, y1 as f32, x2 as f32, y2 as f32, x as f32, y as f32)
            }
            svgtypes::SimplePathSegment::Quadratic { x1, y1, x, y } => {
                builder.quad_to(x1 as f32, y1 as f32, x as f32, y as f32)
            }
            svgtypes::SimplePathSegment::ClosePath => builder.close(),
        }
    }
    // `finish` rejects empty paths and non-finite bounds.
    builder.finish()
}

/// Every icon name, sorted and unique.
pub fn names() -> &'static [&'static str] {
    &icons().names
}

/// The icon's outline as a tiny-skia path in [`VIEW_BOX`] coordinates, or `None` for an unknown
/// name. All icons are parsed once, on first use, and cached for the life of the process.
pub fn path(name: &str) -> Option<&'static Path> {
    let icons = icons();
    let index = icons.names.binary_search(&name).ok()?;
    icons.paths.get(index)
}

/// The transform that maps [`VIEW_BOX`] onto the square with top-left corner `(x, y)` and side
/// `size` pixels.
pub fn transform(x: f32, y: f32, size: f32) -> Transform {
    let (min_x, min_y, width, height) = VIEW_BOX;
    let sx = size / width;
    let sy = size / height;
    Transform::from_row(sx, 0.0, 0.0, sy, x - min_x * sx, y - min_y * sy)
}

/// Draws the icon, filled with `color` (anti-aliased, [`FILL_RULE`]), into the square with
/// top-left corner `(x, y)` and side `size` pixels of `pixmap`, optionally clipped by `mask`.
///
/// Returns `false` (and draws nothing) when the name is unknown; a known icon with a non-positive
/// or non-finite `size` draws nothing but still returns `true`.
pub fn draw(
    pixmap: &mut Pixmap,
    name: &str,
    x: f32,
    y: f32,
    size: f32,
    color: Color,
    mask: Option<&Mask>,
) -> bool {
    let Some(path) = path(name) else {
        return false;
    };
    if size > 0.0 && size.is_finite() && x.is_finite() && y.is_finite() {
        let mut paint = Paint::default();
        paint.set_color(color);
        paint.anti_alias = true;
        pixmap.fill_path(path, &paint, FILL_RULE, transform(x, y, size), mask);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pixel `(px, py)` of `pixmap` has some coverage.
    fn painted(pixmap: &Pixmap, px: u32, py: u32) -> bool {
        pixmap.pixel(px, py).is_some_and(|p| p.alpha() > 0)
    }

    #[test]
    fn every_vendored_icon_parses_within_the_view_box() {
        let (min_x, min_y, width, height) = VIEW_BOX;
        let mut count = 0;
        for (name, data) in entries(SOURCE) {
            let path = parse_path(data).unwrap_or_else(|| panic!("icon {name} does not parse"));
            assert!(path.len() > 1, "icon {name} is empty");
            let b = path.compute_tight_bounds().unwrap_or_else(|| panic!("icon {name} has no bounds"));
            assert!(b.width() > 0.0 && b.height() > 0.0, "icon {name} is degenerate: {b:?}");
            assert!(
                b.left() >= min_x
                    && b.top() >= min_y
                    && b.right() <= min_x + width
                    && b.bottom() <= min_y + height,
                "icon {name} lies outside the viewBox: {b:?}"
            );
            count += 1;
        }
        assert_eq!(count, names().len(), "some vendored lines were dropped (duplicates or no tab?)");
        assert!(count >= 80, "only {count} icons");
    }

    #[test]
    fn names_are_sorted_unique_and_include_the_core_set() {
        let names = names();
        assert!(names.windows(2).all(|w| w[0] < w[1]), "names not sorted and unique");
        for core in [
            "arrow_back",
            "search",
            "more_vert",
            "add",
            "send",
            "star",
            "close",
            "check",
            "person",
            "settings",
        ] {
            assert!(names.contains(&core), "missing core icon {core}");
            assert!(path(core).is_some(), "no path for core icon {core}");
        }
        for name in names {
            assert!(path(name).is_some(), "no path for listed icon {name}");
        }
    }

    #[test]
    fn unknown_names_are_absent() {
        let mut pixmap = Pixmap::new(8, 8).expect("pixmap");
        for name in ["", "no_such_icon", "Search", "search ", "#", "star-fill"] {
            assert!(path(name).is_none(), "{name:?} should be unknown");
            assert!(!draw(&mut pixmap, name, 0.0, 0.0, 8.0, Color::BLACK, None));
        }
        assert!(pixmap.pixels().iter().all(|p| p.alpha() == 0));
    }

    #[test]
    fn draw_search_stays_inside_its_square() {
        let mut pixmap = Pixmap::new(64, 64).expect("pixmap");
        assert!(draw(&mut pixmap, "search", 8.0, 8.0, 48.0, Color::BLACK, None));
        let mut inside = 0;
        for py in 0..64 {
            for px in 0..64 {
                let in_square = (8..56).contains(&px) && (8..56).contains(&py);
                if painted(&pixmap, px, py) {
                    assert!(in_square, "pixel ({px}, {py}) outside the icon square is painted");
                    inside += 1;
                }
            }
        }
        // The magnifier is a thin ring plus a handle: a fair share of the square, far from all of it.
        assert!((100..48 * 48 / 2).contains(&inside), "{inside} pixels painted");
    }

    #[test]
    fn outlines_are_not_inverted() {
        // Centre of a 48 px square at (8, 8) is pixel (32, 32).
        let centre_painted = |name: &str| {
            let mut pixmap = Pixmap::new(64, 64).expect("pixmap");
            assert!(draw(&mut pixmap, name, 8.0, 8.0, 48.0, Color::BLACK, None));
            (painted(&pixmap, 32, 32), painted(&pixmap, 9, 9))
        };
        // The plus is solid in the middle, empty in the corner.
        assert_eq!(centre_painted("add"), (true, false));
        // The outlined star is hollow (its hole is not filled), the filled star is solid.
        assert_eq!(centre_painted("star"), (false, false));
        assert_eq!(centre_painted("star_fill"), (true, false));
    }

    #[test]
    fn draw_respects_the_mask() {
        let mut mask = Mask::new(64, 64).expect("mask");
        // Only the left half is drawable.
        let mut builder = PathBuilder::new();
        builder.push_rect(tiny_skia::Rect::from_xywh(0.0, 0.0, 32.0, 64.0).expect("rect"));
        let rect = builder.finish().expect("rect path");
        mask.fill_path(&rect, FillRule::Winding, false, Transform::identity());
        let mut pixmap = Pixmap::new(64, 64).expect("pixmap");
        assert!(draw(&mut pixmap, "add", 8.0, 8.0, 48.0, Color::BLACK, Some(&mask)));
        assert!(painted(&pixmap, 20, 32));
        assert!(!painted(&pixmap, 40, 32));
    }

    #[test]
    fn malformed_lines_are_dropped_without_panicking() {
        let source = "# comment\n\
                      good\tM0-960h960v960H0z\n\
                      bad\tM0-960h960v\n\
                      garbage\tnot a path\n\
                      empty\t\n\
                      no tab here\n\
                      \tM0 0L1 1z\n\
                      good\tM0 0L1 1z\n\
                      nan\tM0 0L1e40 1z\n\
                      also_good\tm10-10 20 0 0 20z\n";
        let icons = build(source);
        assert_eq!(icons.names, ["also_good", "good"]);
        // The first `good` wins over the later duplicate.
        let b = icons.paths[1].bounds();
        assert_eq!((b.left(), b.top(), b.right(), b.bottom()), (0.0, -960.0, 960.0, 0.0));
    }

    #[test]
    fn transform_maps_the_view_box_onto_the_square() {
        let t = transform(10.0, 20.0, 48.0);
        let mut corners = [tiny_skia::Point::from_xy(0.0, -960.0), tiny_skia::Point::from_xy(960.0, 0.0)];
        t.map_points(&mut corners);
        assert_eq!((corners[0].x, corners[0].y, corners[1].x, corners[1].y), (10.0, 20.0, 58.0, 68.0));
    }
}
