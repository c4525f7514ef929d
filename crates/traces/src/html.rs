//! The analysis as one self-contained HTML page: the transition graph drawn as SVG with a
//! thumbnail per page (the recorded screenshot, or the recorded tree drawn when there is none),
//! then the pages and edges as tables. Everything from the traces is escaped.

use std::collections::VecDeque;
use std::fmt::Write as _;

use base64::Engine as _;
use phonebench_pixels::{Pixmap, Theme, encode_png, render_inferred};
use tiny_skia::{FilterQuality, PixmapPaint, Transform};

use crate::analyze::Analysis;
use crate::model::Trace;

/// Thumbnail width in the page, CSS pixels.
const THUMB_W: f64 = 150.0;
/// Thumbnail height (phones are about 9:20).
const THUMB_H: f64 = 300.0;
const COL: f64 = 250.0;
const ROW: f64 = 380.0;

/// Escapes text for HTML and SVG.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' => {}
            c => out.push(c),
        }
    }
    out
}

/// A page's thumbnail as a `data:` URL: its screenshot when recorded, else its tree drawn and
/// scaled down. `None` when neither gives a picture.
pub fn thumbnail(traces: &[Trace], screen: (usize, usize)) -> Option<String> {
    let s = &traces[screen.0].screens[screen.1];
    if let Some(shot) = &s.screenshot {
        return Some(format!(
            "data:{};base64,{}",
            shot.mime,
            base64::engine::general_purpose::STANDARD.encode(&shot.bytes)
        ));
    }
    if s.tree.is_empty() {
        return None;
    }
    let b = s.tree.screen_bounds();
    let (w, h) = (b.right.clamp(1, 4096) as u32, b.bottom.clamp(1, 8192) as u32);
    let full = render_inferred(&s.tree, w, h, 2.625, &Theme::LIGHT).ok()?;
    let scale = (THUMB_W * 2.0) as f32 / w as f32;
    let (tw, th) = (((w as f32) * scale).ceil() as u32, ((h as f32) * scale).ceil() as u32);
    let mut small = Pixmap::new(tw.max(1), th.max(1))?;
    let paint = PixmapPaint { quality: FilterQuality::Bilinear, ..PixmapPaint::default() };
    small.draw_pixmap(0, 0, full.as_ref(), &paint, Transform::from_scale(scale, scale), None);
    let png = encode_png(&small).ok()?;
    Some(format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(png)))
}

/// Most pages drawn in the graph (the most visited; the tables list every page).
pub const MAX_GRAPH_PAGES: usize = 300;

/// The layers of the graph: breadth-first from the first page, then from each page not yet
/// reached (in order, starting at the first column again, so that the picture grows down
/// rather than sideways). Pages not `shown` get no layer.
fn layers(analysis: &Analysis, shown: &[bool]) -> Vec<usize> {
    let n = analysis.pages.len();
    let mut layer = vec![usize::MAX; n];
    for start in (0..n).filter(|&p| shown[p]) {
        if layer[start] != usize::MAX {
            continue;
        }
        layer[start] = 0;
        let mut queue = VecDeque::from([start]);
        while let Some(p) = queue.pop_front() {
            for e in analysis.edges.iter().filter(|e| e.from == p && shown[e.to]) {
                if layer[e.to] == usize::MAX {
                    layer[e.to] = layer[p] + 1;
                    queue.push_back(e.to);
                }
            }
        }
    }
    layer
}

/// The whole HTML page.
pub fn render(traces: &[Trace], analysis: &Analysis) -> String {
    let mut by_visits: Vec<usize> = (0..analysis.pages.len()).collect();
    by_visits.sort_by(|&a, &b| analysis.pages[b].visits.cmp(&analysis.pages[a].visits).then(a.cmp(&b)));
    let mut shown = vec![false; analysis.pages.len()];
    for &p in by_visits.iter().take(MAX_GRAPH_PAGES) {
        shown[p] = true;
    }
    let layer = layers(analysis, &shown);
    let mut rows_used = vec![0usize; analysis.pages.len() + 1];
    let mut position = vec![(0.0, 0.0); analysis.pages.len()];
    for (p, &l) in layer.iter().enumerate() {
        if !shown[p] {
            continue;
        }
        let l = l.min(analysis.pages.len());
        position[p] = (20.0 + l as f64 * COL, 20.0 + rows_used[l] as f64 * ROW);
        rows_used[l] += 1;
    }
    let width = position.iter().map(|p| p.0).fold(0.0, f64::max) + COL;
    let height = position.iter().map(|p| p.1).fold(0.0, f64::max) + ROW;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}">
<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#5f6368"/></marker></defs>
"##
    );
    let max_weight = analysis.edges.iter().map(|e| e.weight).max().unwrap_or(1) as f64;
    for e in analysis.edges.iter().filter(|e| shown[e.from] && shown[e.to]) {
        let (fx, fy) = position[e.from];
        let (tx, ty) = position[e.to];
        let stroke = 1.0 + 4.0 * e.weight as f64 / max_weight;
        let label = e.triggers.first().map(|t| t.label.clone()).unwrap_or_default();
        let title = escape(&format!(
            "{} → {} ×{}: {}",
            analysis.pages[e.from].id,
            analysis.pages[e.to].id,
            e.weight,
            e.triggers.iter().map(|t| format!("{} ×{}", t.label, t.count)).collect::<Vec<_>>().join(", ")
        ));
        if e.from == e.to {
            let (x, y) = (fx + THUMB_W, fy + 40.0);
            let _ = writeln!(
                svg,
                r##"<path class="edge" d="M{x:.0},{y:.0} c40,-40 40,40 0,30" fill="none" stroke="#9aa0a6" stroke-width="{stroke:.1}" marker-end="url(#arrow)"><title>{title}</title></path>"##
            );
            continue;
        }
        let (x1, y1) = (fx + THUMB_W, fy + THUMB_H / 2.0);
        let (x2, y2) = if tx > fx { (tx, ty + THUMB_H / 2.0) } else { (tx + THUMB_W / 2.0, ty + THUMB_H) };
        let (cx, cy) = ((x1 + x2) / 2.0, (y1 + y2) / 2.0 - 30.0);
        let _ = writeln!(
            svg,
            r##"<path class="edge" d="M{x1:.0},{y1:.0} Q{cx:.0},{cy:.0} {x2:.0},{y2:.0}" fill="none" stroke="#5f6368" stroke-opacity="0.7" stroke-width="{stroke:.1}" marker-end="url(#arrow)"><title>{title}</title></path>
<text x="{cx:.0}" y="{cy:.0}" font-size="11" fill="#202124">{} ×{}</text>"##,
            escape(&label.chars().take(18).collect::<String>()),
            e.weight
        );
    }
    for (p, page) in analysis.pages.iter().enumerate().filter(|(p, _)| shown[*p]) {
        let (x, y) = position[p];
        let caption =
            format!("{} · {} · {:?} · {} visits", page.id, page.kind.name(), page.priority, page.visits);
        let _ = writeln!(
            svg,
            r##"<g class="page" id="{id}"><rect x="{x:.0}" y="{y:.0}" width="{THUMB_W}" height="{THUMB_H}" fill="#f1f3f4" stroke="#dadce0"/>"##,
            id = escape(&page.id)
        );
        if let Some(url) = thumbnail(traces, page.representative) {
            let _ = writeln!(
                svg,
                r##"<image href="{url}" x="{x:.0}" y="{y:.0}" width="{THUMB_W}" height="{THUMB_H}" preserveAspectRatio="xMidYMin meet"/>"##
            );
        }
        let _ = writeln!(
            svg,
            r##"<text x="{x:.0}" y="{ty:.0}" font-size="12" font-weight="bold">{}</text><text x="{x:.0}" y="{ty2:.0}" font-size="11">{}</text></g>"##,
            escape(&caption),
            escape(&page.title.chars().take(30).collect::<String>()),
            ty = y + THUMB_H + 16.0,
            ty2 = y + THUMB_H + 31.0
        );
    }
    svg.push_str("</svg>");

    let mut html = String::from(
        r#"<!DOCTYPE html><html><head><meta charset="utf-8"><title>phonebench analyze</title>
<style>body{font-family:sans-serif;margin:20px;color:#202124}table{border-collapse:collapse;margin:12px 0}td,th{border:1px solid #dadce0;padding:4px 8px;text-align:left;font-size:13px}th{background:#f1f3f4}.graph{overflow:auto;border:1px solid #dadce0}</style></head><body>
"#,
    );
    let _ = writeln!(
        html,
        "<h1>Pages and transitions</h1><p>{} traces, {} pages, {} edges (pages: screens whose structural similarity is at least {}; P0/P1/P2: the pages covering half / 80% / the rest of all visits).</p>",
        traces.len(),
        analysis.pages.len(),
        analysis.edges.len(),
        analysis.threshold
    );
    if analysis.pages.len() > MAX_GRAPH_PAGES {
        let _ = writeln!(
            html,
            "<p>The graph shows the {MAX_GRAPH_PAGES} most visited of {} pages; the tables list them all.</p>",
            analysis.pages.len()
        );
    }
    let _ = writeln!(html, "<div class=\"graph\">{svg}</div>");
    html.push_str("<h2>Pages</h2><table><tr><th>page</th><th>type</th><th>priority</th><th>visits</th><th>screens</th><th>title</th><th>package</th><th>activity</th></tr>\n");
    for page in &analysis.pages {
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{:?}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&page.id),
            page.kind.name(),
            page.priority,
            page.visits,
            page.screens.len(),
            escape(&page.title),
            escape(page.package.as_deref().unwrap_or("")),
            escape(page.activity.as_deref().unwrap_or(""))
        );
    }
    html.push_str(
        "</table><h2>Edges</h2><table><tr><th>from</th><th>to</th><th>weight</th><th>triggers</th></tr>\n",
    );
    for e in &analysis.edges {
        let triggers: Vec<String> =
            e.triggers.iter().map(|t| format!("{} ({}) ×{}", escape(&t.label), t.action, t.count)).collect();
        let _ = writeln!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&analysis.pages[e.from].id),
            escape(&analysis.pages[e.to].id),
            e.weight,
            triggers.join("<br>")
        );
    }
    html.push_str("</table></body></html>\n");
    html
}
