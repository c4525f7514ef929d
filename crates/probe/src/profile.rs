//! Capability profiles: SPHINX's five dimensions and ours, one value in `0..=1` each, drawn as
//! a radar chart (SVG for reports, PNG for papers) and a table, several models side by side.
//!
//! | dimension | from | value |
//! |---|---|---|
//! | goal understanding | knowledge, `intention_level` | repaired accuracy over 5 units a question |
//! | app knowledge | knowledge, `app_level` | the same |
//! | planning | completion | balanced accuracy: mean of Last and Pre, every mode pooled |
//! | grounding | grounding | repaired success rate, every mode and source pooled |
//! | instruction following | every probe answer; runs | 1 − format-error rate of probe answers; from runs 1 − mean of the format-error and repetition rates; the mean of the two when both exist |
//! | asking the user | runs, `ask_user` tasks | MobileWorld's UIQ, else SR |
//! | MCP use | runs, `mcp` tasks | SR |
//! | robustness | runs at several disturbance levels | SR at the heaviest level ÷ SR undisturbed, at most 1 |
//!
//! A dimension with nothing to compute it from is `None`: shown as `–`, no vertex of the
//! model's polygon (the polygon joins the dimensions it has), never guessed.

use phonebench_runner::EpisodeResult;
use phonebench_runner::metrics::metrics;
use serde::Serialize;

use crate::ask::ProbeResult;
use crate::item::ProbeKind;

/// The dimensions, in drawing order (clockwise from the top): key and label.
pub const DIMENSIONS: [(&str, &str); 8] = [
    ("goal_understanding", "Goal understanding"),
    ("app_knowledge", "App knowledge"),
    ("planning", "Planning"),
    ("grounding", "Grounding"),
    ("instruction_following", "Instruction following"),
    ("ask_user", "Asking the user"),
    ("mcp_use", "MCP tool use"),
    ("robustness", "Robustness"),
];

/// One model's profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    /// The model (or folder) it describes.
    pub name: String,
    /// One value per [`DIMENSIONS`] entry, in that order.
    pub values: Vec<Option<f64>>,
}

fn share(k: u64, n: u64) -> Option<f64> {
    (n > 0).then(|| k as f64 / n as f64)
}

fn repaired(results: &[&ProbeResult]) -> Option<f64> {
    let n: u64 = results.iter().map(|r| u64::from(r.units)).sum();
    let k: u64 = results.iter().map(|r| u64::from(r.correct_repaired)).sum();
    share(k, n)
}

fn mean(values: &[Option<f64>]) -> Option<f64> {
    let present: Vec<f64> = values.iter().flatten().copied().collect();
    (!present.is_empty()).then(|| present.iter().sum::<f64>() / present.len() as f64)
}

/// The profile of a model from its probe results and its runs' episodes, one list per run
/// (any may be empty). Robustness compares disturbance levels within one run only (the same
/// tasks at each level), averaged over the runs that played several levels.
pub fn profile(name: &str, results: &[ProbeResult], runs: &[Vec<EpisodeResult>]) -> Profile {
    let scored: Vec<&ProbeResult> = results.iter().filter(|r| r.scored()).collect();
    let of = |probe: ProbeKind, group: Option<&str>| -> Vec<&ProbeResult> {
        scored.iter().copied().filter(|r| r.probe == probe && group.is_none_or(|g| r.group == g)).collect()
    };
    let completion = of(ProbeKind::Completion, None);
    let accuracy = |last: bool| {
        let rs: Vec<&&ProbeResult> = completion.iter().filter(|r| (r.group == "last") == last).collect();
        let right = rs.iter().filter(|r| r.units > 0 && r.correct == r.units).count() as u64;
        share(right, rs.len() as u64)
    };
    let planning = mean(&[accuracy(true), accuracy(false)]);
    let answers: u64 = scored.iter().map(|r| r.answers.len() as u64).sum();
    let format_errors: u64 = scored.iter().map(|r| u64::from(r.format_errors)).sum();
    let probe_following = share(answers - format_errors.min(answers), answers);
    let scored_runs: Vec<&EpisodeResult> =
        runs.iter().flatten().filter(|e| e.infrastructure_error.is_none()).collect();
    let all = metrics(scored_runs.iter().copied());
    let run_following = match (all.format_error_rate, all.repetition_rate) {
        (None, None) => None,
        (fe, rep) => Some(1.0 - mean(&[fe, rep]).unwrap_or(0.0)),
    };
    let category = |c: &str| metrics(scored_runs.iter().copied().filter(|e| e.category == c));
    let ask_user = {
        let m = category("ask_user");
        m.uiq.or(m.sr)
    };
    let robustness_of = |run: &Vec<EpisodeResult>| {
        phonebench_runner::metrics::robustness(run).and_then(|r| {
            let overall = r.rows.first()?;
            let none = r.levels.iter().position(|l| l == "none")?;
            let heaviest = overall.sr.last().copied().flatten()?;
            let base = overall.sr.get(none).copied().flatten().filter(|b| *b > 0.0)?;
            Some((heaviest / base).min(1.0))
        })
    };
    let robustness = mean(&runs.iter().map(robustness_of).collect::<Vec<_>>());
    Profile {
        name: name.to_string(),
        values: vec![
            repaired(&of(ProbeKind::Knowledge, Some("intention_level"))),
            repaired(&of(ProbeKind::Knowledge, Some("app_level"))),
            planning,
            repaired(&of(ProbeKind::Grounding, None)),
            mean(&[probe_following, run_following]),
            ask_user,
            category("mcp").sr,
            robustness,
        ],
    }
}

/// Profiles as a text table: one row per dimension, one column per model.
pub fn table(profiles: &[Profile]) -> String {
    let width = profiles.iter().map(|p| p.name.chars().count()).max().unwrap_or(0).clamp(8, 28);
    let mut header = format!("{:<22}", "dimension");
    let mut shown: Vec<String> = Vec::new();
    for (k, p) in profiles.iter().enumerate() {
        // A name too long for its column is cut with "…"; two cut alike get their column number.
        let mut name: String = if p.name.chars().count() > width {
            p.name.chars().take(width - 1).chain(std::iter::once('…')).collect()
        } else {
            p.name.clone()
        };
        if shown.contains(&name) {
            let suffix = format!(" #{}", k + 1);
            name = name.chars().take(width.saturating_sub(suffix.len())).collect::<String>() + &suffix;
        }
        header.push_str(&format!(" {name:>width$}"));
        shown.push(name);
    }
    let mut lines = vec![header];
    for (i, (_, label)) in DIMENSIONS.iter().enumerate() {
        let mut line = format!("{label:<22}");
        for p in profiles {
            let v = p.values.get(i).copied().flatten();
            line.push_str(&format!(
                " {:>width$}",
                v.map_or_else(|| "–".to_string(), |v| format!("{:.1}%", v * 100.0))
            ));
        }
        lines.push(line);
    }
    lines.join("\n")
}

/// Colours of the models' polygons, in order (repeating after six).
const PALETTE: [[u8; 3]; 6] =
    [[25, 118, 210], [229, 57, 53], [67, 160, 71], [251, 140, 0], [142, 36, 170], [0, 137, 123]];

/// Radar geometry: centre, radius, and the point of `value` on axis `i`.
struct Geometry {
    cx: f64,
    cy: f64,
    r: f64,
}

impl Geometry {
    fn point(&self, i: usize, value: f64) -> (f64, f64) {
        let angle = -std::f64::consts::FRAC_PI_2 + i as f64 * std::f64::consts::TAU / DIMENSIONS.len() as f64;
        (self.cx + self.r * value * angle.cos(), self.cy + self.r * value * angle.sin())
    }
}

/// The edges between neighbouring dimensions that both have a value.
fn edges(p: &Profile, g: &Geometry) -> Vec<((f64, f64), (f64, f64))> {
    let n = DIMENSIONS.len();
    let value = |i: usize| p.values.get(i).copied().flatten().map(|v| v.clamp(0.0, 1.0));
    (0..n).filter_map(|i| Some((g.point(i, value(i)?), g.point((i + 1) % n, value((i + 1) % n)?)))).collect()
}

/// A name cut for a legend (the full one is in the table and the SVG's title).
fn legend_name(name: &str) -> String {
    match name.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &name[..cut]),
        None => name.to_string(),
    }
}

/// The dimensions a profile has values for, as `(axis, value in 0..=1)`.
fn present(p: &Profile) -> Vec<(usize, f64)> {
    p.values.iter().enumerate().filter_map(|(i, v)| v.map(|v| (i, v.clamp(0.0, 1.0)))).collect()
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn rgb([r, g, b]: [u8; 3]) -> String {
    format!("rgb({r},{g},{b})")
}

/// The radar chart as a self-contained SVG element (labels escaped).
pub fn radar_svg(profiles: &[Profile]) -> String {
    let legend_rows = profiles.len() as f64;
    let (w, h) = (640.0, 470.0 + 22.0 * legend_rows);
    let g = Geometry { cx: 320.0, cy: 235.0, r: 160.0 };
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"radar\" role=\"img\" aria-label=\"Capability profile\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"13\">\n"
    );
    for level in [0.25, 0.5, 0.75, 1.0] {
        let points: Vec<String> = (0..DIMENSIONS.len())
            .map(|i| {
                let (x, y) = g.point(i, level);
                format!("{x:.1},{y:.1}")
            })
            .collect();
        svg.push_str(&format!(
            "<polygon points=\"{}\" fill=\"none\" stroke=\"#ccc\" stroke-width=\"1\"/>\n",
            points.join(" ")
        ));
        let (x, y) = g.point(0, level);
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#888\" font-size=\"10\">{}%</text>\n",
            x + 3.0,
            y + 11.0,
            (level * 100.0) as u32
        ));
    }
    for (i, (key, label)) in DIMENSIONS.iter().enumerate() {
        let (x, y) = g.point(i, 1.0);
        svg.push_str(&format!(
            "<line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{y:.1}\" stroke=\"#ccc\"/>\n",
            g.cx, g.cy
        ));
        let (lx, ly) = g.point(i, 1.13);
        let anchor = if (lx - g.cx).abs() < 1.0 {
            "middle"
        } else if lx > g.cx {
            "start"
        } else {
            "end"
        };
        // A dimension nobody has a value for says so rather than look like a zero.
        let missing = profiles.iter().all(|p| p.values.get(i).copied().flatten().is_none());
        svg.push_str(&format!(
            "<text class=\"axis\" data-dimension=\"{key}\" x=\"{lx:.1}\" y=\"{:.1}\" text-anchor=\"{anchor}\">{}{}</text>\n",
            ly + 4.0,
            escape(label),
            if missing { "<tspan fill=\"#888\"> (no data)</tspan>" } else { "" }
        ));
    }
    for (m, p) in profiles.iter().enumerate() {
        let colour = rgb(PALETTE[m % PALETTE.len()]);
        // A model with every value is a filled polygon; one lacking some is only the edges
        // between neighbouring dimensions it has (a missing value is no vertex: drawn at the
        // centre it would read as 0%, joined across it would claim an area).
        let points: Vec<(f64, f64)> = present(p).into_iter().map(|(i, v)| g.point(i, v)).collect();
        if points.len() == DIMENSIONS.len() {
            let text: Vec<String> = points.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
            svg.push_str(&format!(
                "<polygon class=\"model\" data-model=\"{}\" points=\"{}\" fill=\"{colour}\" fill-opacity=\"0.15\" stroke=\"{colour}\" stroke-width=\"2\"/>\n",
                escape(&p.name),
                text.join(" ")
            ));
        } else {
            let mut d = String::new();
            for ((x1, y1), (x2, y2)) in edges(p, &g) {
                d.push_str(&format!("M{x1:.1},{y1:.1}L{x2:.1},{y2:.1}"));
            }
            svg.push_str(&format!(
                "<path class=\"model\" data-model=\"{}\" d=\"{d}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"/>\n",
                escape(&p.name)
            ));
        }
        for (x, y) in &points {
            svg.push_str(&format!("<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3.5\" fill=\"{colour}\"/>\n"));
        }
        let ly = 470.0 + 22.0 * m as f64;
        svg.push_str(&format!(
            "<rect x=\"40\" y=\"{:.1}\" width=\"14\" height=\"14\" fill=\"{colour}\"/><text x=\"62\" y=\"{:.1}\"><title>{}</title>{}</text>\n",
            ly - 12.0,
            ly,
            escape(&p.name),
            escape(&legend_name(&p.name))
        ));
    }
    svg.push_str("</svg>");
    svg
}

/// The radar chart as a PNG (twice the SVG's size), drawn with the embedded fonts so it looks
/// the same on every machine.
pub fn radar_png(profiles: &[Profile]) -> Result<Vec<u8>, String> {
    use phonebench_pixels::text::{TextAlign, TextRun, draw_text};
    use tiny_skia::{Color, FillRule, IntRect, Paint, PathBuilder, Pixmap, Rect, Stroke, Transform};
    let scale = 2.0f32;
    let (w, h) = (640.0 * scale, (470.0 + 22.0 * profiles.len() as f32) * scale);
    let mut pixmap = Pixmap::new(w as u32, h as u32).ok_or("the chart has no size")?;
    pixmap.fill(Color::WHITE);
    let g =
        Geometry { cx: 320.0 * f64::from(scale), cy: 235.0 * f64::from(scale), r: 160.0 * f64::from(scale) };
    let polygon = |points: &[(f64, f64)]| {
        let mut pb = PathBuilder::new();
        for (i, (x, y)) in points.iter().enumerate() {
            if i == 0 { pb.move_to(*x as f32, *y as f32) } else { pb.line_to(*x as f32, *y as f32) }
        }
        pb.close();
        pb.finish()
    };
    let stroke_paint = |[r, g, b]: [u8; 3], alpha: u8| {
        let mut paint = Paint::default();
        paint.set_color_rgba8(r, g, b, alpha);
        paint.anti_alias = true;
        paint
    };
    let stroke = Stroke { width: 2.0 * scale, ..Stroke::default() };
    let thin = Stroke { width: scale, ..Stroke::default() };
    let grid = |pixmap: &mut Pixmap, path: Option<tiny_skia::Path>| {
        if let Some(path) = path {
            pixmap.stroke_path(
                &path,
                &stroke_paint([204, 204, 204], 255),
                &thin,
                Transform::identity(),
                None,
            );
        }
    };
    let n = DIMENSIONS.len();
    for level in [0.25, 0.5, 0.75, 1.0] {
        let points: Vec<(f64, f64)> = (0..n).map(|i| g.point(i, level)).collect();
        grid(&mut pixmap, polygon(&points));
    }
    let text = |pixmap: &mut Pixmap, s: &str, x: f32, y: f32, width: f32, align: TextAlign, size: f32| {
        let run = TextRun {
            text: s,
            style: phonebench_text::TextStyle { size_px: size * scale, bold: false, line_height: 1.2 },
            max_lines: Some(2),
            color: [32, 32, 32, 255],
            align,
        };
        if let (Some(rect), Some(clip)) =
            (Rect::from_xywh(x, y, width, size * scale * 2.6), IntRect::from_xywh(0, 0, w as u32, h as u32))
        {
            draw_text(pixmap, &run, rect, clip);
        }
    };
    for (i, (_, label)) in DIMENSIONS.iter().enumerate() {
        let (x, y) = g.point(i, 1.0);
        let mut pb = PathBuilder::new();
        pb.move_to(g.cx as f32, g.cy as f32);
        pb.line_to(x as f32, y as f32);
        grid(&mut pixmap, pb.finish());
        let (lx, ly) = g.point(i, 1.13);
        let box_w = 165.0 * scale;
        let (left, align) = if (lx - g.cx).abs() < 1.0 {
            (lx as f32 - box_w / 2.0, TextAlign::Center)
        } else if lx > g.cx {
            (lx as f32, TextAlign::Start)
        } else {
            (lx as f32 - box_w, TextAlign::End)
        };
        let missing = profiles.iter().all(|p| p.values.get(i).copied().flatten().is_none());
        let label = if missing { format!("{label} (no data)") } else { label.to_string() };
        text(&mut pixmap, &label, left, ly as f32 - 9.0 * scale, box_w, align, 13.0);
    }
    for (m, p) in profiles.iter().enumerate() {
        let colour = PALETTE[m % PALETTE.len()];
        // Only the dimensions the model has values for (see `radar_svg`).
        let points: Vec<(f64, f64)> = present(p).into_iter().map(|(i, v)| g.point(i, v)).collect();
        if points.len() == n {
            if let Some(path) = polygon(&points) {
                let fill = stroke_paint(colour, 38);
                pixmap.fill_path(&path, &fill, FillRule::Winding, Transform::identity(), None);
                pixmap.stroke_path(&path, &stroke_paint(colour, 255), &stroke, Transform::identity(), None);
            }
        } else {
            for ((x1, y1), (x2, y2)) in edges(p, &g) {
                let mut pb = PathBuilder::new();
                pb.move_to(x1 as f32, y1 as f32);
                pb.line_to(x2 as f32, y2 as f32);
                if let Some(path) = pb.finish() {
                    pixmap.stroke_path(
                        &path,
                        &stroke_paint(colour, 255),
                        &stroke,
                        Transform::identity(),
                        None,
                    );
                }
            }
        }
        for (x, y) in &points {
            if let Some(dot) = PathBuilder::from_circle(*x as f32, *y as f32, 3.5 * scale) {
                pixmap.fill_path(
                    &dot,
                    &stroke_paint(colour, 255),
                    FillRule::Winding,
                    Transform::identity(),
                    None,
                );
            }
        }
        let ly = (470.0 + 22.0 * m as f32) * scale;
        if let Some(rect) = Rect::from_xywh(40.0 * scale, ly - 12.0 * scale, 14.0 * scale, 14.0 * scale) {
            pixmap.fill_rect(rect, &stroke_paint(colour, 255), Transform::identity(), None);
        }
        text(
            &mut pixmap,
            &legend_name(&p.name),
            62.0 * scale,
            ly - 13.0 * scale,
            540.0 * scale,
            TextAlign::Start,
            13.0,
        );
    }
    phonebench_pixels::encode_png(&pixmap).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(name: &str, value: Option<f64>) -> Profile {
        Profile { name: name.into(), values: vec![value; DIMENSIONS.len()] }
    }

    #[test]
    fn the_table_keeps_long_names_apart_and_shows_missing_values_as_dashes() {
        let long = "org/a-model-with-a-very-long-name-indeed";
        let table = table(&[model(long, Some(0.5)), model(&format!("{long}-2"), None)]);
        let header = table.lines().next().unwrap_or_default();
        assert!(header.contains("org/a-model-with-a-very-lon…"), "{header}");
        assert!(header.contains(" #2"), "the second, cut alike, is numbered: {header}");
        let row = table.lines().nth(1).unwrap_or_default();
        assert!(
            row.starts_with("Goal understanding") && row.contains("50.0%") && row.ends_with('–'),
            "{row}"
        );
    }

    #[test]
    fn a_model_lacking_values_is_drawn_as_edges_only() {
        let mut partial = model("p", Some(0.5));
        partial.values[3] = None;
        let svg = radar_svg(&[model("full", Some(1.0)), partial]);
        assert!(svg.contains("<polygon class=\"model\" data-model=\"full\""));
        // Seven values, six edges between neighbours that both have one (3 is missing).
        let path = svg.split("data-model=\"p\" d=\"").nth(1).unwrap_or_default();
        assert_eq!(path.split('"').next().unwrap_or_default().matches('M').count(), 6, "{svg}");
        assert!(!svg.contains("(no data)"), "the full model has every dimension");
        // A model with no value at all still gives a chart (axes, "(no data)", its legend).
        let png = radar_png(&[model("only", None)]).unwrap_or_default();
        assert!(png.starts_with(b"\x89PNG"));
    }
}
