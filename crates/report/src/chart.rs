//! Geometry of the horizontal bar charts drawn as inline SVG.
//!
//! Only numbers are computed here; the template draws them and escapes the labels, so no text
//! from task files reaches the page without going through minijinja's HTML escaping. Hand-written
//! SVG rather than plotters: a few rectangles need no font registration and no dependency, and
//! the page then carries no glyph outlines, only text the browser lays out.

use serde::Serialize;

/// Height of one bar's row, in px.
const ROW: u32 = 24;
/// Bar thickness, in px.
const BAR: u32 = 16;
/// Width of the plot area (100 %), in px.
const PLOT: u32 = 320;
/// Room right of the plot for the value label, in px.
const VALUE: u32 = 64;
/// Room above the bars for the axis labels, in px.
const TOP: u32 = 20;
/// Labels longer than this many characters are cut (the full one is in the bar's tooltip).
const MAX_LABEL: usize = 32;
/// Estimated advance of one 12 px sans-serif character, in px: enough to size the label column.
const CHAR: u32 = 7;

/// One bar.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bar {
    /// The label shown (possibly cut).
    pub label: String,
    /// The full label and value, for the tooltip.
    pub title: String,
    /// The value as shown, e.g. `66.7%`, or `-` when undefined.
    pub value: String,
    /// Top of the bar.
    pub y: u32,
    /// Baseline of the row's texts.
    pub text_y: u32,
    /// Length of the bar (0 when undefined).
    pub width: u32,
    /// Where the value label starts.
    pub value_x: u32,
}

/// One vertical grid line with its label.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tick {
    /// Its x.
    pub x: u32,
    /// Its label, e.g. `50%`.
    pub label: String,
}

/// A horizontal bar chart of shares (0..=1).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BarChart {
    /// Accessible name of the chart.
    pub title: String,
    /// Total width.
    pub width: u32,
    /// Total height.
    pub height: u32,
    /// Where the plot area starts (right of the labels).
    pub plot_x: u32,
    /// Width of the plot area.
    pub plot_width: u32,
    /// Bottom of the last bar (grid lines end there).
    pub plot_bottom: u32,
    /// Thickness of each bar.
    pub bar_height: u32,
    /// Grid lines at 0, 25, 50, 75 and 100 %.
    pub ticks: Vec<Tick>,
    /// The bars, top to bottom.
    pub bars: Vec<Bar>,
}

/// Cuts `label` to at most [`MAX_LABEL`] characters, marking the cut.
fn cut(label: &str) -> String {
    if label.chars().count() <= MAX_LABEL {
        label.to_string()
    } else {
        let mut s: String = label.chars().take(MAX_LABEL - 1).collect();
        s.push('…');
        s
    }
}

/// A chart of `(label, share)` rows; `None` shares get no bar and a `-` value. `None` when there
/// are no rows (the page then says so instead of drawing an empty frame).
pub fn bar_chart(title: &str, rows: &[(String, Option<f64>)]) -> Option<BarChart> {
    if rows.is_empty() {
        return None;
    }
    let labels: Vec<String> = rows.iter().map(|(l, _)| cut(l)).collect();
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as u32;
    let plot_x = longest * CHAR + 12;
    let bars: Vec<Bar> = rows
        .iter()
        .zip(labels)
        .enumerate()
        .map(|(i, ((full, share), label))| {
            let y = TOP + i as u32 * ROW + (ROW - BAR) / 2;
            // Clamped so a bad input (ACP > 1 from an edited file) cannot draw outside the frame.
            let width = share.map_or(0, |s| (s.clamp(0.0, 1.0) * f64::from(PLOT)).round() as u32);
            let value = phonebench_runner::metrics::percent(*share);
            Bar {
                title: format!("{full}: {value}"),
                label,
                value,
                y,
                text_y: y + BAR - 4,
                width,
                value_x: plot_x + width + 6,
            }
        })
        .collect();
    let plot_bottom = TOP + rows.len() as u32 * ROW;
    let ticks = (0..=4).map(|q| Tick { x: plot_x + PLOT * q / 4, label: format!("{}%", q * 25) }).collect();
    Some(BarChart {
        title: title.to_string(),
        width: plot_x + PLOT + VALUE,
        height: plot_bottom + 4,
        plot_x,
        plot_width: PLOT,
        plot_bottom,
        bar_height: BAR,
        ticks,
        bars,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_are_proportional_and_undefined_shares_have_none() {
        let chart = bar_chart(
            "SR per category",
            &[("a".to_string(), Some(0.5)), ("bb".to_string(), Some(1.0)), ("c".to_string(), None)],
        )
        .unwrap();
        let widths: Vec<u32> = chart.bars.iter().map(|b| b.width).collect();
        assert_eq!(widths, vec![PLOT / 2, PLOT, 0]);
        let values: Vec<&str> = chart.bars.iter().map(|b| b.value.as_str()).collect();
        assert_eq!(values, vec!["50.0%", "100.0%", "-"]);
        // Rows stack downwards without overlapping and the frame holds them all.
        assert!(chart.bars.windows(2).all(|w| w[1].y >= w[0].y + BAR));
        assert!(chart.bars.iter().all(|b| b.y + BAR <= chart.height && b.value_x + 40 <= chart.width));
        assert_eq!(chart.plot_x, 2 * CHAR + 12);
        assert_eq!(
            chart.ticks.iter().map(|t| t.label.as_str()).collect::<Vec<_>>(),
            ["0%", "25%", "50%", "75%", "100%"]
        );
    }

    #[test]
    fn long_labels_are_cut_but_kept_whole_in_the_tooltip() {
        let long = "perception=".to_string() + &"x".repeat(60);
        let chart = bar_chart("t", &[(long.clone(), Some(2.0))]).unwrap();
        let bar = &chart.bars[0];
        assert_eq!(bar.label.chars().count(), MAX_LABEL);
        assert!(bar.label.ends_with('…'));
        assert_eq!(bar.title, format!("{long}: 200.0%"));
        // Out-of-range shares are clamped to the plot.
        assert_eq!(bar.width, PLOT);
    }

    #[test]
    fn no_rows_no_chart() {
        assert_eq!(bar_chart("t", &[]), None);
    }
}
