//! The classical detector (UIED-style, Chen et al. 2020) merged with OCR; the algorithm is
//! described step by step in `docs/detect.md`.

use crate::ocr::{Ocr, TesseractOcr, Word, group_lines};
use crate::{DetectError, Detector, Element, ElementKind, Image};

/// Tuning of [`ClassicDetector`].
#[derive(Debug, Clone)]
pub struct ClassicOptions {
    /// Two neighbouring pixels whose largest channel difference exceeds this are an edge.
    pub edge_threshold: u8,
    /// Pixels per density-independent pixel; `None` guesses it from the width (a phone screen
    /// is about 411 dp wide).
    pub dp: Option<f32>,
    /// Drop single-character keys of an on-screen keyboard.
    pub filter_keyboard: bool,
    /// Add full-width list rows (clickable containers) from the layout.
    pub list_rows: bool,
    /// Widen left-aligned labels that have nothing to their right to the page margin (text
    /// views usually fill their row).
    pub widen_labels: bool,
    /// Horizontal gap between words of one phrase, in multiples of the word height.
    pub word_gap: f32,
}

impl Default for ClassicOptions {
    fn default() -> Self {
        ClassicOptions {
            edge_threshold: 10,
            dp: None,
            filter_keyboard: true,
            list_rows: true,
            widen_labels: true,
            word_gap: 0.9,
        }
    }
}

/// UIED-style detection plus OCR: the default [`Detector`].
pub struct ClassicDetector {
    options: ClassicOptions,
    ocr: Box<dyn Ocr>,
}

impl std::fmt::Debug for ClassicDetector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClassicDetector").field("options", &self.options).finish_non_exhaustive()
    }
}

impl Default for ClassicDetector {
    fn default() -> Self {
        Self::new()
    }
}

impl ClassicDetector {
    /// The default options with Tesseract.
    pub fn new() -> Self {
        ClassicDetector { options: ClassicOptions::default(), ocr: Box::new(TesseractOcr::default()) }
    }

    /// The default options with another OCR engine.
    pub fn with_ocr(ocr: Box<dyn Ocr>) -> Self {
        ClassicDetector { options: ClassicOptions::default(), ocr }
    }

    /// Replaces the options.
    pub fn options(mut self, options: ClassicOptions) -> Self {
        self.options = options;
        self
    }
}

type Rect = [i32; 4];

fn w(r: &Rect) -> i32 {
    r[2] - r[0]
}
fn h(r: &Rect) -> i32 {
    r[3] - r[1]
}
fn area(r: &Rect) -> i64 {
    i64::from(w(r).max(0)) * i64::from(h(r).max(0))
}
fn inside(inner: &Rect, outer: &Rect, slack: i32) -> bool {
    inner[0] >= outer[0] - slack
        && inner[1] >= outer[1] - slack
        && inner[2] <= outer[2] + slack
        && inner[3] <= outer[3] + slack
}
fn intersects(a: &Rect, b: &Rect) -> bool {
    a[0] < b[2] && b[0] < a[2] && a[1] < b[3] && b[1] < a[3]
}
fn union(a: &Rect, b: &Rect) -> Rect {
    [a[0].min(b[0]), a[1].min(b[1]), a[2].max(b[2]), a[3].max(b[3])]
}
fn grow(r: &Rect, by: i32) -> Rect {
    [r[0] - by, r[1] - by, r[2] + by, r[3] + by]
}

/// A connected component of the edge map.
#[derive(Debug, Clone)]
struct Comp {
    b: Rect,
    count: u32,
    /// Share of the box's top and bottom edges (3 px bands) the component covers.
    cover_tb: f32,
}

/// The edge map's connected components (8-connected), in scan order.
fn components(img: Image<'_>, threshold: u8) -> Vec<Comp> {
    let (wd, ht) = (img.width as usize, img.height as usize);
    let px = |x: usize, y: usize| {
        let i = (y * wd + x) * 4;
        [img.rgba[i], img.rgba[i + 1], img.rgba[i + 2]]
    };
    let diff = |a: [u8; 3], b: [u8; 3]| a[0].abs_diff(b[0]).max(a[1].abs_diff(b[1])).max(a[2].abs_diff(b[2]));
    let mut edge = vec![false; wd * ht];
    for y in 0..ht {
        for x in 0..wd {
            let p = px(x, y);
            let e = (x + 1 < wd && diff(p, px(x + 1, y)) > threshold)
                || (y + 1 < ht && diff(p, px(x, y + 1)) > threshold);
            edge[y * wd + x] = e;
        }
    }
    let mut label = vec![0u32; wd * ht];
    let mut comps = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    for start in 0..wd * ht {
        if !edge[start] || label[start] != 0 {
            continue;
        }
        let id = comps.len() as u32 + 1;
        label[start] = id;
        stack.push(start);
        let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0usize, 0usize);
        let mut count = 0u32;
        while let Some(i) = stack.pop() {
            let (x, y) = (i % wd, i / wd);
            count += 1;
            x0 = x0.min(x);
            y0 = y0.min(y);
            x1 = x1.max(x);
            y1 = y1.max(y);
            for dy in -1i64..=1 {
                for dx in -1i64..=1 {
                    let nx = x as i64 + dx;
                    let ny = y as i64 + dy;
                    if nx < 0 || ny < 0 || nx >= wd as i64 || ny >= ht as i64 {
                        continue;
                    }
                    let j = ny as usize * wd + nx as usize;
                    if edge[j] && label[j] == 0 {
                        label[j] = id;
                        stack.push(j);
                    }
                }
            }
        }
        comps.push(Comp { b: [x0 as i32, y0 as i32, x1 as i32 + 1, y1 as i32 + 1], count, cover_tb: 0.0 });
    }
    for (k, c) in comps.iter_mut().enumerate() {
        let id = k as u32 + 1;
        let [x0, y0, x1, y1] = c.b.map(|v| v as usize);
        let band = 3.min(y1 - y0);
        let mut covered = 0usize;
        for x in x0..x1 {
            let top = (y0..y0 + band).any(|y| label[y * wd + x] == id);
            let bottom = (y1 - band..y1).any(|y| label[y * wd + x] == id);
            covered += usize::from(top) + usize::from(bottom);
        }
        c.cover_tb = covered as f32 / (2 * (x1 - x0)).max(1) as f32;
    }
    comps
}

/// An element under construction.
#[derive(Debug, Clone)]
struct Item {
    kind: ElementKind,
    b: Rect,
    text: String,
    clickable: bool,
    /// The raw box before touch-target padding (icons).
    core: Rect,
    /// Inside a small shape (button, field) or a card: not part of list rows.
    enclosed: bool,
}

impl Detector for ClassicDetector {
    fn detect(&self, image: Image<'_>) -> Result<Vec<Element>, DetectError> {
        image.check()?;
        let words = self.ocr.words(image)?;
        Ok(self.detect_with_words(image, &words))
    }

    fn name(&self) -> &str {
        "classic"
    }
}

impl ClassicDetector {
    /// Detection given the OCR words (for tests and other engines' output).
    pub fn detect_with_words(&self, image: Image<'_>, words: &[Word]) -> Vec<Element> {
        if image.check().is_err() {
            return Vec::new();
        }
        let o = &self.options;
        let (sw, sh) = (image.width as i32, image.height as i32);
        let d = o.dp.unwrap_or(sw as f32 / 411.0).max(0.25);
        let dp = |v: f32| (v * d).round() as i32;
        let screen: Rect = [0, 0, sw, sh];

        let all_phrases: Vec<Word> = group_lines(words, o.word_gap)
            .into_iter()
            .filter_map(|mut p| {
                p.bounds = clip(&p.bounds, &screen)?;
                Some(p)
            })
            .collect();
        let comps = components(image, o.edge_threshold);

        // 1. Drop glyphs: components inside a phrase's box. A one-character phrase is more often
        // an icon read as a letter (`O` for a circle, `X` for a close cross) or a letter in an
        // avatar: it joins the icon parts.
        let text_boxes: Vec<Rect> =
            all_phrases.iter().map(|p| grow(&p.bounds, (h(&p.bounds) / 4).max(2))).collect();
        let mut icon_parts: Vec<Rect> = Vec::new();
        let mut phrases: Vec<Word> = Vec::new();
        for p in all_phrases {
            if p.text.chars().filter(|c| !c.is_whitespace()).count() <= 1 {
                icon_parts.push(p.bounds);
            } else {
                phrases.push(p);
            }
        }
        let mut shapes: Vec<Rect> = Vec::new();
        let mut images: Vec<Rect> = Vec::new();
        let mut dividers: Vec<Rect> = Vec::new();
        for c in &comps {
            let b = c.b;
            if text_boxes.iter().any(|t| inside(&b, t, 0)) {
                continue;
            }
            let (bw, bh) = (w(&b), h(&b));
            let fill = c.count as f32 / area(&b).max(1) as f32;
            if bh <= 3 && bw >= sw / 3 {
                dividers.push(b);
                continue;
            }
            if bw >= sw - 2 && bh >= sh - 2 {
                continue; // a frame around the whole screen says nothing
            }
            let hollow = fill < 0.3;
            if hollow && bw >= dp(20.0) && bh >= dp(14.0) && c.cover_tb >= 0.45 {
                shapes.push(b);
            } else if bw <= dp(72.0) && bh <= dp(72.0) {
                if bw.max(bh) >= dp(2.0) {
                    icon_parts.push(b);
                }
            } else if bw >= dp(40.0) && bh >= dp(40.0) {
                images.push(b);
            } else if hollow && bw >= dp(20.0) && bh >= dp(14.0) {
                shapes.push(b);
            }
        }
        // Icon parts close together are one icon (a person and its plus sign).
        let icons = merge_close(icon_parts, dp(3.0), dp(72.0));
        let icons: Vec<Rect> = icons.into_iter().filter(|b| w(b).max(h(b)) >= dp(8.0)).collect();

        // 2. Shapes: what they hold decides what they are.
        // An outline a few pixels thick has two edges (outside and inside): one shape.
        shapes.sort_by_key(|b| (std::cmp::Reverse(area(b)), b[1], b[0]));
        let mut kept: Vec<Rect> = Vec::new();
        for s in shapes {
            if !kept.iter().any(|k| inside(&s, k, 0) && area(&s) * 100 >= area(k) * 85) {
                kept.push(s);
            }
        }
        let mut shapes = kept;
        shapes.sort_by_key(|b| (area(b), b[1], b[0]));
        let mut items: Vec<Item> = Vec::new();
        let mut phrase_used = vec![false; phrases.len()];
        let mut icon_used = vec![false; icons.len()];
        let mut small_shapes: Vec<Rect> = Vec::new();
        for s in &shapes {
            let small = h(s) <= dp(72.0);
            if small {
                let held: Vec<usize> = (0..phrases.len())
                    .filter(|&i| !phrase_used[i] && inside(&phrases[i].bounds, s, 2))
                    .collect();
                let held_icons: Vec<usize> =
                    (0..icons.len()).filter(|&i| !icon_used[i] && inside(&icons[i], s, 2)).collect();
                let text = held.iter().map(|&i| phrases[i].text.as_str()).collect::<Vec<_>>().join(" ");
                let wide = w(s) >= sw * 2 / 5;
                let kind = if !held.is_empty() {
                    let tb = held.iter().fold(phrases[held[0]].bounds, |a, &i| union(&a, &phrases[i].bounds));
                    let left = tb[0] - s[0];
                    let right = s[2] - tb[2];
                    let centered = (left - right).abs() <= w(s) / 6;
                    if wide && !centered { ElementKind::TextField } else { ElementKind::Button }
                } else if !held_icons.is_empty() && w(s) * 5 <= h(s) * 8 {
                    ElementKind::Icon
                } else if wide {
                    ElementKind::TextField
                } else {
                    ElementKind::Button
                };
                for &i in &held {
                    phrase_used[i] = true;
                }
                if kind == ElementKind::Icon {
                    for &i in &held_icons {
                        icon_used[i] = true;
                    }
                }
                small_shapes.push(*s);
                items.push(Item { kind, b: *s, text, clickable: true, core: *s, enclosed: false });
            } else {
                // A card (or a large round button); not a full-width band or a panel.
                let full = w(s) >= sw * 9 / 10;
                let clickable = !full && h(s) < sh * 2 / 5;
                items.push(Item {
                    kind: ElementKind::Container,
                    b: *s,
                    text: String::new(),
                    clickable,
                    core: *s,
                    enclosed: false,
                });
            }
        }
        let in_small = |b: &Rect| small_shapes.iter().any(|s| inside(b, s, 2) && s != b);
        let touch = dp(48.0);
        let top_bar = dp(30.0);
        let bottom_bar = sh - dp(46.0);
        for (i, p) in phrases.iter().enumerate() {
            if phrase_used[i] {
                continue;
            }
            let enclosed = in_small(&p.bounds);
            // Coloured short text away from the left margin is a text button (Material's
            // `TextButton`: primary-coloured label, 12 dp padding, 48 dp touch height).
            let words = p.text.split_whitespace().count();
            let text_button = !in_small(&p.bounds)
                && words <= 3
                && p.bounds[0] > sw / 4
                && p.bounds[1] >= top_bar
                && colored_ink(image, &p.bounds);
            if text_button {
                let mut b = p.bounds;
                b[0] -= dp(12.0);
                b[2] += dp(12.0);
                let b = pad_to(&b, touch, &screen);
                items.push(Item {
                    kind: ElementKind::Button,
                    b,
                    text: p.text.clone(),
                    clickable: true,
                    core: p.bounds,
                    enclosed: true,
                });
                continue;
            }
            items.push(Item {
                kind: ElementKind::Label,
                b: p.bounds,
                text: p.text.clone(),
                clickable: false,
                core: p.bounds,
                enclosed,
            });
        }
        for (i, b) in icons.iter().enumerate() {
            if icon_used[i] {
                continue;
            }
            let enclosed = in_small(b);
            // Status bar icons are indicators, not targets.
            let status = b[3] <= top_bar;
            let padded = if enclosed || status { *b } else { pad_to(b, touch, &screen) };
            items.push(Item {
                kind: ElementKind::Icon,
                b: padded,
                text: String::new(),
                clickable: !status,
                core: *b,
                enclosed: enclosed || status,
            });
        }
        for b in &images {
            if items.iter().any(|it| it.b == *b) {
                continue;
            }
            let big = area(b) * 3 > area(&screen);
            items.push(Item {
                kind: ElementKind::Image,
                b: *b,
                text: String::new(),
                clickable: !big,
                core: *b,
                enclosed: in_small(b),
            });
        }

        // 3. The on-screen keyboard: a grid of similar small shapes in the lower half.
        if o.filter_keyboard
            && let Some((kb, key_width)) = keyboard_region(&items, sw, sh)
        {
            let kb = [kb[0], kb[1], kb[2], kb[3].max(bottom_bar)];
            // Keep special keys (wider than a letter key, or labelled with a word: `?123`,
            // `enter`, space); drop letter keys and whatever else lies on the keyboard.
            items.retain(|it| {
                if !inside(&it.core, &kb, 2) {
                    return true;
                }
                let shaped =
                    matches!(it.kind, ElementKind::Button | ElementKind::Icon | ElementKind::TextField)
                        && h(&it.core) >= dp(24.0);
                shaped && (it.text.trim().chars().count() > 1 || w(&it.core) * 10 >= key_width * 14)
            });
            for it in items.iter_mut() {
                if inside(&it.core, &kb, 2) {
                    it.enclosed = true;
                }
            }
        }

        // 4. Layout: an icon with a short label centred under it is one target (a tab of a
        // bottom bar, a launcher icon, a dial pad key); side by side, such stacks share the
        // band's width.
        let stacks = icon_label_stacks(&items, &dp);
        if !stacks.is_empty() {
            let mut boxes: Vec<(Rect, String)> = Vec::new();
            for &(i, l) in &stacks {
                boxes.push((union(&items[i].core, &items[l].core), items[l].text.clone()));
            }
            let cells = share_width(&boxes.iter().map(|b| b.0).collect::<Vec<_>>(), dp(8.0), sw);
            for &(i, l) in &stacks {
                items[i].clickable = false;
                items[i].b = items[i].core;
                items[i].enclosed = true;
                items[l].enclosed = true;
            }
            for (cell, (_, text)) in cells.into_iter().zip(boxes) {
                items.push(Item {
                    kind: ElementKind::Container,
                    b: cell,
                    text,
                    clickable: true,
                    core: cell,
                    enclosed: true,
                });
            }
        }

        // 4. Layout: list rows and label widths.
        if o.list_rows {
            let rows = list_rows(&items, &dp, sw, top_bar, bottom_bar, &dividers);
            for r in &rows {
                // In a row: a large leading icon (an avatar) and icons between it and the text
                // are decoration, part of the row's target; a small leading icon may be a check
                // box or radio button (kept as a target); icons after the text are actions.
                let first_text = items
                    .iter()
                    .filter(|it| it.kind == ElementKind::Label && inside(&it.core, r, 0))
                    .map(|it| it.core[0])
                    .min()
                    .unwrap_or(sw);
                let leading = items
                    .iter()
                    .filter(|it| it.kind == ElementKind::Icon && inside(&it.core, r, 0))
                    .map(|it| it.core[0])
                    .min();
                for it in items.iter_mut() {
                    if it.kind != ElementKind::Icon || !inside(&it.core, r, 0) || it.core[2] > first_text {
                        continue;
                    }
                    let big = w(&it.core).max(h(&it.core)) >= dp(36.0);
                    if big || Some(it.core[0]) != leading {
                        it.clickable = false;
                        it.b = it.core;
                    }
                }
            }
            for r in rows {
                items.push(Item {
                    kind: ElementKind::Container,
                    b: r,
                    text: String::new(),
                    clickable: true,
                    core: r,
                    enclosed: false,
                });
            }
        }
        if o.widen_labels {
            let margin = items
                .iter()
                .filter(|it| it.b[1] >= top_bar && it.b[3] <= bottom_bar && it.kind != ElementKind::Container)
                .map(|it| it.core[0])
                .min()
                .unwrap_or(0)
                .clamp(0, sw / 8);
            let others: Vec<Rect> =
                items.iter().filter(|it| it.kind != ElementKind::Container).map(|it| it.core).collect();
            for it in items.iter_mut() {
                if it.kind != ElementKind::Label
                    || it.b[0] > sw / 2
                    || it.b[1] < top_bar
                    || it.b[3] > bottom_bar
                {
                    continue;
                }
                let b = it.b;
                let next =
                    others.iter().filter(|o| o[0] >= b[2] && o[1] < b[3] && b[1] < o[3]).map(|o| o[0]).min();
                let right = match next {
                    Some(x) => x - dp(16.0),
                    None => sw - margin,
                };
                if right > b[2] {
                    it.b[2] = right;
                }
            }
        }

        // 5. Reading order, ids.
        let mut out: Vec<Element> = items
            .into_iter()
            .filter_map(|it| {
                let b = clip(&it.b, &screen)?;
                Some(Element { id: 0, kind: it.kind, text: it.text, bounds: b, clickable: it.clickable })
            })
            .collect();
        out.sort_by(|a, b| {
            (a.bounds[1], a.bounds[0], a.bounds[3], a.bounds[2], a.kind, &a.text).cmp(&(
                b.bounds[1],
                b.bounds[0],
                b.bounds[3],
                b.bounds[2],
                b.kind,
                &b.text,
            ))
        });
        out.dedup_by(|a, b| a.bounds == b.bounds && a.kind == b.kind && a.text == b.text);
        for (i, e) in out.iter_mut().enumerate() {
            e.id = i;
        }
        out
    }
}

fn clip(r: &Rect, screen: &Rect) -> Option<Rect> {
    let c = [r[0].max(screen[0]), r[1].max(screen[1]), r[2].min(screen[2]), r[3].min(screen[3])];
    (c[2] > c[0] && c[3] > c[1]).then_some(c)
}

/// Grows a box about its centre to at least `side` × `side` (a touch target), kept on screen.
fn pad_to(b: &Rect, side: i32, screen: &Rect) -> Rect {
    let mut r = *b;
    if w(&r) < side {
        let extra = side - w(&r);
        r[0] -= extra / 2;
        r[2] += extra - extra / 2;
    }
    if h(&r) < side {
        let extra = side - h(&r);
        r[1] -= extra / 2;
        r[3] += extra - extra / 2;
    }
    clip(&r, screen).unwrap_or(*b)
}

/// Merges boxes within `gap` of each other, as long as the union stays at most `max` on a side.
fn merge_close(mut boxes: Vec<Rect>, gap: i32, max: i32) -> Vec<Rect> {
    boxes.sort_by_key(|b| (b[1], b[0], b[3], b[2]));
    let mut changed = true;
    let mut rounds = 0;
    while changed && rounds < 16 {
        changed = false;
        rounds += 1;
        let mut out: Vec<Rect> = Vec::with_capacity(boxes.len());
        for b in boxes {
            let g = grow(&b, gap);
            if let Some(o) = out.iter_mut().find(|o| {
                let u = union(o, &b);
                intersects(o, &g) && w(&u) <= max && h(&u) <= max
            }) {
                *o = union(o, &b);
                changed = true;
            } else {
                out.push(b);
            }
        }
        boxes = out;
    }
    boxes.sort_by_key(|b| (b[1], b[0], b[3], b[2]));
    boxes
}

/// The keyboard's region: at least 12 similar key-sized shapes or icons in at least 3 rows in
/// the lower half of the screen.
fn keyboard_region(items: &[Item], sw: i32, sh: i32) -> Option<(Rect, i32)> {
    let keys: Vec<&Item> = items
        .iter()
        .filter(|it| {
            let b = it.core;
            b[1] >= sh / 2
                && w(&b) >= sw / 20
                && w(&b) <= sw / 6
                && h(&b) >= sh / 40
                && h(&b) <= sh / 10
                && it.text.trim().chars().count() <= 1
                && matches!(it.kind, ElementKind::Button | ElementKind::Icon | ElementKind::TextField)
        })
        .collect();
    if keys.len() < 12 {
        return None;
    }
    let mut rows: Vec<i32> = keys.iter().map(|k| k.core[1] / (sh / 60).max(1)).collect();
    rows.sort_unstable();
    rows.dedup();
    let mut row_counts = 0;
    for r in &rows {
        if keys.iter().filter(|k| k.core[1] / (sh / 60).max(1) == *r).count() >= 3 {
            row_counts += 1;
        }
    }
    if row_counts < 3 {
        return None;
    }
    let b = keys.iter().fold(keys[0].core, |a, k| union(&a, &k.core));
    let mut widths: Vec<i32> = keys.iter().map(|k| w(&k.core)).collect();
    widths.sort_unstable();
    Some(([0, b[1] - 4, sw, b[3] + 4], widths[widths.len() / 2]))
}

/// Full-width list rows: bands of items (labels, icons, images outside buttons and cards)
/// separated by whitespace, each extended to the middle of the gaps around it.
fn list_rows(
    items: &[Item],
    dp: &impl Fn(f32) -> i32,
    sw: i32,
    top: i32,
    bottom: i32,
    dividers: &[Rect],
) -> Vec<Rect> {
    let mut members: Vec<&Item> = items
        .iter()
        .filter(|it| {
            !it.enclosed
                && it.core[1] >= top
                && it.core[3] <= bottom
                && matches!(it.kind, ElementKind::Label | ElementKind::Icon | ElementKind::Image)
        })
        .collect();
    members.sort_by_key(|it| (it.core[1], it.core[0]));
    // Bands: vertical spans joined when they overlap or nearly touch.
    let join = dp(10.0);
    let mut bands: Vec<(Rect, usize, bool)> = Vec::new(); // box, members, has label
    for it in members {
        let c = it.core;
        let divided = |y0: i32, y1: i32| dividers.iter().any(|dv| dv[1] >= y0 && dv[3] <= y1);
        match bands.last_mut() {
            Some((b, n, label)) if c[1] <= b[3] + join && !divided(b[3], c[1]) => {
                *b = union(b, &c);
                *n += 1;
                *label |= it.kind == ElementKind::Label;
            }
            _ => bands.push((c, 1, it.kind == ElementKind::Label)),
        }
    }
    let mut rows = Vec::new();
    for (i, (b, _n, label)) in bands.iter().enumerate() {
        // Bands right under the status bar are toolbars (title and actions), not rows.
        if !label || h(b) > dp(140.0) || b[1] < top + dp(64.0) {
            continue;
        }
        let pad = dp(12.0);
        let up = match i.checked_sub(1).and_then(|j| bands.get(j)) {
            Some((p, _, _)) => (p[3] + b[1]) / 2,
            None => (b[1] - pad).max(top),
        };
        let down = match bands.get(i + 1) {
            Some((n, _, _)) => (b[3] + n[1]) / 2,
            None => (b[3] + pad).min(bottom),
        };
        // The nearest divider inside the gap is the row's edge.
        let up = dividers
            .iter()
            .filter(|dv| dv[1] >= up - pad && dv[3] <= b[1])
            .map(|dv| dv[3])
            .max()
            .unwrap_or(up);
        let down = dividers
            .iter()
            .filter(|dv| dv[1] >= b[3] && dv[3] <= down + pad)
            .map(|dv| dv[1])
            .min()
            .unwrap_or(down);
        if down > up {
            rows.push([0, up, sw, down]);
        }
    }
    rows
}

/// Whether the text in `b` is drawn in a saturated colour: the mean chroma (largest minus
/// smallest channel) of its ink pixels (those far in luma from the box's corner) is high.
fn colored_ink(img: Image<'_>, b: &Rect) -> bool {
    let wd = img.width as i32;
    if w(b) <= 0 || h(b) <= 0 || b[0] < 0 || b[1] < 0 || b[2] > wd || b[3] > img.height as i32 {
        return false;
    }
    let at = |x: i32, y: i32| {
        let i = ((y * wd + x) * 4) as usize;
        [img.rgba[i], img.rgba[i + 1], img.rgba[i + 2]]
    };
    let bg = at(b[0], b[1]);
    let bg_l = i32::from(crate::ocr::luma(bg[0], bg[1], bg[2]));
    let (mut n, mut chroma) = (0u64, 0u64);
    for y in b[1]..b[3] {
        for x in b[0]..b[2] {
            let p = at(x, y);
            let l = i32::from(crate::ocr::luma(p[0], p[1], p[2]));
            if (l - bg_l).abs() > 60 {
                n += 1;
                let hi = p[0].max(p[1]).max(p[2]);
                let lo = p[0].min(p[1]).min(p[2]);
                chroma += u64::from(hi - lo);
            }
        }
    }
    n > 0 && chroma / n >= 60
}

/// Pairs (icon, label) where the label sits right under the icon, centred on it, and is short.
fn icon_label_stacks(items: &[Item], dp: &impl Fn(f32) -> i32) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut label_used = vec![false; items.len()];
    for (i, icon) in items.iter().enumerate() {
        if icon.kind != ElementKind::Icon || icon.enclosed {
            continue;
        }
        let c = icon.core;
        let cx = (c[0] + c[2]) / 2;
        let found = items.iter().enumerate().find(|(l, lab)| {
            let b = lab.core;
            lab.kind == ElementKind::Label
                && !label_used[*l]
                && !lab.enclosed
                && b[1] >= c[3] - dp(2.0)
                && b[1] - c[3] <= dp(16.0)
                && ((b[0] + b[2]) / 2 - cx).abs() <= dp(12.0)
                && w(&b) <= dp(140.0)
        });
        if let Some((l, _)) = found {
            label_used[l] = true;
            out.push((i, l));
        }
    }
    out
}

/// Target boxes for stacks: each padded by `pad`; stacks side by side in one band (vertical
/// overlap) split the screen's width at the midpoints between their centres.
fn share_width(stacks: &[Rect], pad: i32, sw: i32) -> Vec<Rect> {
    let mut out: Vec<Rect> =
        stacks.iter().map(|b| [b[0] - pad, b[1] - pad, b[2] + pad, b[3] + pad]).collect();
    for (i, b) in stacks.iter().enumerate() {
        let mut band: Vec<(i32, usize)> = stacks
            .iter()
            .enumerate()
            .filter(|(_, o)| o[1] < b[3] && b[1] < o[3])
            .map(|(j, o)| ((o[0] + o[2]) / 2, j))
            .collect();
        if band.len() < 2 {
            continue;
        }
        band.sort_unstable();
        let Some(pos) = band.iter().position(|&(_, j)| j == i) else { continue };
        let c = band[pos].0;
        let left = if pos == 0 { (c - (band[1].0 - c) / 2).max(0) } else { (band[pos - 1].0 + c) / 2 };
        let right = if pos + 1 == band.len() {
            (c + (c - band[pos - 1].0) / 2).min(sw)
        } else {
            (c + band[pos + 1].0) / 2
        };
        out[i][0] = left;
        out[i][2] = right;
    }
    out
}
