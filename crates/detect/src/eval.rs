//! Ground truth from a UI tree and the scores of a detection against it (`docs/detect.md`,
//! "Scoring").

use std::collections::BTreeMap;

use phonebench_uitree::{Bounds, UiTree, WindowKind};

use crate::{Element, ElementKind};

/// One element of the ground truth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TruthElement {
    /// Kind from the node's class.
    pub kind: ElementKind,
    /// The node's `text`.
    pub text: String,
    /// On-screen bounds `[x0, y0, x1, y1]` (clipped to the screen).
    pub bounds: [i32; 4],
    /// `clickable || long_clickable`.
    pub clickable: bool,
}

/// The kind a node's class maps to, or `None` for plain layout (non-clickable view groups).
fn kind_of(class: &str, clickable: bool, bounds: &[i32; 4], dp: f32) -> Option<ElementKind> {
    let short = class.rsplit('.').next().unwrap_or(class);
    Some(match short {
        "ImageButton" | "FloatingActionButton" => ElementKind::Icon,
        "EditText" | "AutoCompleteTextView" | "SearchView" => ElementKind::TextField,
        "ImageView" => {
            let side = (bounds[2] - bounds[0]).max(bounds[3] - bounds[1]) as f32;
            if side <= 72.0 * dp { ElementKind::Icon } else { ElementKind::Image }
        }
        s if s.ends_with("Button")
            || s == "CheckBox"
            || s == "Switch"
            || s == "Chip"
            || s == "ToggleButton" =>
        {
            ElementKind::Button
        }
        "TextView" | "CheckedTextView" => ElementKind::Label,
        _ if clickable => ElementKind::Container,
        _ => return None,
    })
}

fn rect(b: &Bounds) -> [i32; 4] {
    [b.left, b.top, b.right, b.bottom]
}

fn inside(inner: &[i32; 4], outer: &[i32; 4]) -> bool {
    inner[0] >= outer[0] && inner[1] >= outer[1] && inner[2] <= outer[2] && inner[3] <= outer[3]
}

/// The ground truth of a screen: its visible nodes with non-empty bounds on the screen, except
/// the keyboard's window, plain layout (non-clickable view groups), text views without text
/// (they draw nothing) and nodes wholly under a higher window's panel (a dialog or menu; a
/// window whose root covers the screen is a scrim, so its root's children are the panels).
/// Kinds: `Button` (and subclasses, check boxes, switches), `ImageButton` → Icon, `EditText` →
/// TextField, `ImageView` → Icon up to 72 dp on its longer side (dp guessed as width / 411),
/// else Image, `TextView` → Label, other clickable nodes → Container.
pub fn truth(tree: &UiTree, width: u32, height: u32) -> Vec<TruthElement> {
    let screen = [0, 0, width as i32, height as i32];
    let dp = (width as f32 / 411.0).max(0.25);
    // Opaque panels per window layer.
    let mut panels: Vec<(i32, [i32; 4])> = Vec::new();
    for window in tree.windows() {
        if window.kind == WindowKind::InputMethod || window.kind == WindowKind::SystemUi {
            continue;
        }
        let root = tree.node(window.root);
        let rb = rect(&root.bounds);
        if rb[0] <= 0 && rb[1] <= 0 && rb[2] >= screen[2] && rb[3] >= screen[3] {
            for &c in tree.children(window.root) {
                let cb = rect(&tree.node(c).bounds);
                if !(cb[0] <= 0 && cb[1] <= 0 && cb[2] >= screen[2] && cb[3] >= screen[3]) {
                    panels.push((window.layer, cb));
                }
            }
        } else {
            panels.push((window.layer, rb));
        }
    }
    let mut out = Vec::new();
    for window in tree.windows() {
        if window.kind == WindowKind::InputMethod {
            continue;
        }
        for id in tree.dfs(window.root) {
            let node = tree.node(id);
            if !node.is_visible() {
                continue;
            }
            let b = rect(&node.bounds);
            let c = [b[0].max(0), b[1].max(0), b[2].min(screen[2]), b[3].min(screen[3])];
            if c[2] <= c[0] || c[3] <= c[1] {
                continue;
            }
            let clickable = node.clickable || node.long_clickable;
            let Some(kind) = kind_of(&node.class, clickable, &c, dp) else { continue };
            if kind == ElementKind::Label && node.text.trim().is_empty() {
                continue;
            }
            if panels.iter().any(|(layer, p)| *layer > window.layer && inside(&c, p)) {
                continue;
            }
            out.push(TruthElement { kind, text: node.text.clone(), bounds: c, clickable });
        }
    }
    out
}

/// Intersection over union of two boxes.
pub fn iou(a: &[i32; 4], b: &[i32; 4]) -> f64 {
    let ix = (a[2].min(b[2]) - a[0].max(b[0])).max(0) as f64;
    let iy = (a[3].min(b[3]) - a[1].max(b[1])).max(0) as f64;
    let inter = ix * iy;
    let area = |r: &[i32; 4]| ((r[2] - r[0]).max(0) as f64) * ((r[3] - r[1]).max(0) as f64);
    let uni = area(a) + area(b) - inter;
    if uni <= 0.0 { 0.0 } else { inter / uni }
}

/// The IoU a match needs.
pub const MATCH_IOU: f64 = 0.5;

/// Counts of one kind.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct KindCounts {
    /// Truth elements of this kind.
    pub truth: u64,
    /// Of them, matched.
    pub truth_matched: u64,
    /// Detected elements of this kind.
    pub detected: u64,
    /// Of them, matched.
    pub detected_matched: u64,
}

/// Counts from which every figure is computed; they add up over screens (micro averages).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scores {
    /// Screens scored.
    pub screens: u64,
    /// Truth elements.
    pub truth: u64,
    /// Detected elements.
    pub detected: u64,
    /// One-to-one matches.
    pub matched: u64,
    /// Sum of the matches' IoU.
    pub iou_sum: f64,
    /// Clickable truth elements.
    pub clickable_truth: u64,
    /// Of them, matched.
    pub clickable_matched: u64,
    /// Of them, matched by an element predicted clickable.
    pub clickable_matched_predicted: u64,
    /// Matched truth elements with non-empty text.
    pub text_truth: u64,
    /// Of them, read exactly (whitespace and case normalised).
    pub text_exact: u64,
    /// Sum of their character similarity (1 − edit distance / longer length).
    pub text_similarity_sum: f64,
    /// Per kind (truth kind for recall, detected kind for precision).
    pub per_kind: BTreeMap<ElementKind, KindCounts>,
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

impl Scores {
    /// Matched / detected.
    pub fn precision(&self) -> f64 {
        ratio(self.matched, self.detected)
    }
    /// Matched / truth.
    pub fn recall(&self) -> f64 {
        ratio(self.matched, self.truth)
    }
    /// Mean IoU of the matches.
    pub fn mean_iou(&self) -> f64 {
        if self.matched == 0 { 0.0 } else { self.iou_sum / self.matched as f64 }
    }
    /// Share of clickable truth elements matched.
    pub fn clickable_recall(&self) -> f64 {
        ratio(self.clickable_matched, self.clickable_truth)
    }
    /// Share of clickable truth elements matched by an element predicted clickable.
    pub fn clickable_recall_predicted(&self) -> f64 {
        ratio(self.clickable_matched_predicted, self.clickable_truth)
    }
    /// Share of matched truth texts read exactly.
    pub fn text_accuracy(&self) -> f64 {
        ratio(self.text_exact, self.text_truth)
    }
    /// Mean character similarity of matched truth texts.
    pub fn text_similarity(&self) -> f64 {
        if self.text_truth == 0 { 0.0 } else { self.text_similarity_sum / self.text_truth as f64 }
    }

    /// Adds another screen's (or app's) counts.
    pub fn add(&mut self, other: &Scores) {
        self.screens += other.screens;
        self.truth += other.truth;
        self.detected += other.detected;
        self.matched += other.matched;
        self.iou_sum += other.iou_sum;
        self.clickable_truth += other.clickable_truth;
        self.clickable_matched += other.clickable_matched;
        self.clickable_matched_predicted += other.clickable_matched_predicted;
        self.text_truth += other.text_truth;
        self.text_exact += other.text_exact;
        self.text_similarity_sum += other.text_similarity_sum;
        for (k, c) in &other.per_kind {
            let e = self.per_kind.entry(*k).or_default();
            e.truth += c.truth;
            e.truth_matched += c.truth_matched;
            e.detected += c.detected;
            e.detected_matched += c.detected_matched;
        }
    }
}

/// Text compared: whitespace runs as one space, trimmed, lower case.
pub fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase()
}

/// 1 − Levenshtein distance / length of the longer (in characters); 1 for two empty texts.
pub fn similarity(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let n = a.len().max(b.len());
    if n == 0 {
        return 1.0;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    1.0 - prev[b.len()] as f64 / n as f64
}

/// Scores one screen: greedy one-to-one matching by IoU (pairs at [`MATCH_IOU`] or more, the
/// highest IoU first; ties by truth then detected order); kinds do not have to agree.
pub fn score(detected: &[Element], truth: &[TruthElement]) -> Scores {
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for (t, te) in truth.iter().enumerate() {
        for (d, de) in detected.iter().enumerate() {
            let v = iou(&te.bounds, &de.bounds);
            if v >= MATCH_IOU {
                pairs.push((v, t, d));
            }
        }
    }
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut t_used = vec![None; truth.len()];
    let mut d_used = vec![false; detected.len()];
    let mut s = Scores {
        screens: 1,
        truth: truth.len() as u64,
        detected: detected.len() as u64,
        ..Scores::default()
    };
    for (v, t, d) in pairs {
        if t_used[t].is_some() || d_used[d] {
            continue;
        }
        t_used[t] = Some(d);
        d_used[d] = true;
        s.matched += 1;
        s.iou_sum += v;
    }
    for (t, te) in truth.iter().enumerate() {
        let k = s.per_kind.entry(te.kind).or_default();
        k.truth += 1;
        if t_used[t].is_some() {
            k.truth_matched += 1;
        }
        if te.clickable {
            s.clickable_truth += 1;
            if let Some(d) = t_used[t] {
                s.clickable_matched += 1;
                if detected[d].clickable {
                    s.clickable_matched_predicted += 1;
                }
            }
        }
        let want = normalize(&te.text);
        if let Some(d) = t_used[t]
            && !want.is_empty()
        {
            let got = normalize(&detected[d].text);
            s.text_truth += 1;
            if got == want {
                s.text_exact += 1;
            }
            s.text_similarity_sum += similarity(&got, &want);
        }
    }
    for (d, de) in detected.iter().enumerate() {
        let k = s.per_kind.entry(de.kind).or_default();
        k.detected += 1;
        if d_used[d] {
            k.detected_matched += 1;
        }
    }
    s
}
