//! Readers: one module per recorded-trace format, each turning files into [`Trace`]s and a
//! [`Problem`] per file it skipped. No reader fails a batch: a bad file is reported and the
//! rest are read.

pub mod aitw;
pub mod droidbot;
pub mod droidtask;
pub mod llamatouch;
pub mod phonebench;
pub mod sphinx;

use std::path::Path;

use phonebench_actions::{Action, Point, Target};
use phonebench_uitree::{NodeId, UiTree};

use crate::model::{ElementRef, Ingested, TraceFormat};
#[cfg(doc)]
use crate::model::{Problem, Trace};

/// Reads every path in `format` (files or folders, as that format's reader takes them).
pub fn ingest(format: TraceFormat, paths: &[impl AsRef<Path>]) -> Ingested {
    let mut all = Ingested::default();
    for path in paths {
        let path = path.as_ref();
        let read = match format {
            TraceFormat::Droidbot => droidbot::read(path),
            TraceFormat::Droidtask => droidtask::read(path),
            TraceFormat::Llamatouch => llamatouch::read(path),
            TraceFormat::Aitw => aitw::read(path),
            TraceFormat::Sphinx => sphinx::read(path),
            TraceFormat::Phonebench => phonebench::read(path),
        };
        all.extend(read);
    }
    all
}

/// A tap on `node` of `tree`: at its centre, the element described by the node.
pub fn tap_node(tree: &UiTree, node: NodeId) -> (Action, ElementRef) {
    let n = tree.node(node);
    let (x, y) = n.bounds.center();
    (Action::Tap { target: Target::Point(Point { x, y }) }, ElementRef::of_node(n))
}

/// The node of `tree` that best matches `target`: equal bounds first, then resource id + text,
/// then text (or its prefix), then description. `None` when nothing matches.
pub fn find_element(tree: &UiTree, target: &ElementRef) -> Option<NodeId> {
    let short = |c: &str| c.rsplit('.').next().unwrap_or("").to_string();
    let class = short(&target.class);
    let text_matches = |t: &str| {
        if target.text.is_empty() {
            false
        } else if target.text_is_prefix {
            t.starts_with(target.text.as_str())
        } else {
            t == target.text
        }
    };
    let class_ok = |c: &str| class.is_empty() || short(c) == class;
    let ids: Vec<NodeId> = tree.node_ids().collect();
    if let Some(b) = target.bounds {
        let same: Vec<NodeId> = ids.iter().copied().filter(|&i| tree.node(i).bounds == b).collect();
        if let Some(&i) = same.iter().rev().find(|&&i| class_ok(&tree.node(i).class)) {
            return Some(i);
        }
    }
    if !target.resource_id.is_empty() {
        let with_id: Vec<NodeId> =
            ids.iter().copied().filter(|&i| tree.node(i).resource_id == target.resource_id).collect();
        if let Some(&i) = with_id.iter().find(|&&i| text_matches(&tree.node(i).text)) {
            return Some(i);
        }
        if with_id.len() == 1 && target.text.is_empty() {
            return Some(with_id[0]);
        }
    }
    if let Some(&i) = ids.iter().find(|&&i| text_matches(&tree.node(i).text) && class_ok(&tree.node(i).class))
    {
        return Some(i);
    }
    if let Some(&i) = ids.iter().find(|&&i| text_matches(&tree.node(i).text)) {
        return Some(i);
    }
    if !target.content_desc.is_empty() {
        return ids.iter().copied().find(|&i| tree.node(i).content_desc == target.content_desc);
    }
    // Only a class is known (a DroidBot edge on a view without text): the first clickable
    // element of that class.
    if target.text.is_empty() && target.resource_id.is_empty() && !class.is_empty() {
        return ids.iter().copied().find(|&i| tree.node(i).clickable && short(&tree.node(i).class) == class);
    }
    None
}

/// The name of a file or folder for a trace (its last component).
pub fn stem(path: &Path) -> String {
    path.file_stem()
        .or_else(|| path.file_name())
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// The format an unreadable `path` would have been read as, for messages.
pub fn describe(format: TraceFormat) -> &'static str {
    match format {
        TraceFormat::Droidbot => "a DroidBot output folder (utg.js, states/, events/) or a utg.js file",
        TraceFormat::Droidtask => "a DroidTask YAML file (records: State/Choice/Input) or a folder of them",
        TraceFormat::Llamatouch => {
            "a LlamaTouch trace folder (i.xml, i.vh, i.png, i.activity, eventStructs.txt)"
        }
        TraceFormat::Aitw => "an Android-in-the-Zoo episode JSON file (or a folder of them)",
        TraceFormat::Sphinx => "a SPHINX ground-truth trajectory folder (i.xml, meta.json, activities.json)",
        TraceFormat::Phonebench => "a phonebench run folder (results.sqlite)",
    }
}
