//! Readers: one module per recorded-trace format, each turning files into [`Trace`]s and a
//! [`Problem`] per file it skipped. No reader fails a batch: a bad file is reported and the
//! rest are read.

pub mod aitw;
pub mod droidbot;
pub mod droidtask;
pub mod llamatouch;
pub mod phonebench;
pub mod sphinx;

use std::path::{Path, PathBuf};

use phonebench_actions::{Action, Point, Target};
use phonebench_uitree::{NodeId, UiTree};

use crate::limits::{is_real_dir, is_real_file, list_dir};
use crate::model::{ElementRef, Ingested, TraceFormat};
#[cfg(doc)]
use crate::model::{Problem, Trace};

/// Reads every path in `format` (files or folders, as that format's reader takes them).
pub fn ingest(format: TraceFormat, paths: &[impl AsRef<Path>]) -> Ingested {
    let mut all = Ingested::default();
    for path in paths {
        // The path as the file system knows it: `run`, `run/`, `./run` and `/abs/run` are one
        // origin (a trace read again replaces its copy instead of adding one), and a link the
        // user names on the command line is the user's choice, so it is followed here (links
        // inside the data are still refused).
        let canonical = std::fs::canonicalize(path.as_ref()).ok();
        let path = canonical.as_deref().unwrap_or(path.as_ref());
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

/// The trace folders under `dir` (itself included), in name order: folders whose entries
/// `is_trace` recognises, searched at most `max_depth` folders deep; a recognised folder is not
/// searched further. Symbolic links met on the way are reported, never followed. Returns each
/// folder with its sorted entries; `None` (reported as not being `what`, the data expected)
/// when `dir` is not a folder.
pub fn trace_folders(
    dir: &Path,
    max_depth: usize,
    is_trace: impl Fn(&[PathBuf]) -> bool,
    what: &str,
    out: &mut Ingested,
) -> Option<Vec<(PathBuf, Vec<PathBuf>)>> {
    if !is_real_dir(dir) {
        out.problem(dir, format!("not a folder (or a symbolic link, which is refused): expected {what}"));
        return None;
    }
    let mut found = Vec::new();
    // (folder, depth), popped in name order.
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((folder, depth)) = stack.pop() {
        let entries = match list_dir(&folder) {
            Ok(entries) => entries,
            Err(e) => {
                out.problem(&folder, e);
                continue;
            }
        };
        if is_trace(&entries) {
            found.push((folder, entries));
            continue;
        }
        if depth >= max_depth {
            continue;
        }
        for entry in entries.into_iter().rev() {
            if is_real_dir(&entry) {
                stack.push((entry, depth + 1));
            } else if is_symlink(&entry) {
                out.problem(&entry, "is a symbolic link (refused: it could lead outside the data folder)");
            }
        }
    }
    Some(found)
}

/// Reads `path` with `read_file` when it is a file, or every file under it whose extension is
/// one of `extensions` (sorted, at most `max_depth` folders deep); `what` names the data for
/// the problem of a folder that holds none.
pub fn file_or_folder(
    path: &Path,
    extensions: &[&str],
    max_depth: usize,
    what: &str,
    read_file: impl Fn(&Path, &mut Ingested),
) -> Ingested {
    let mut out = Ingested::default();
    if is_real_file(path) {
        read_file(path, &mut out);
    } else if is_real_dir(path) {
        let files = files_under(path, extensions, max_depth, &mut out);
        if files.is_empty() {
            let listed: Vec<String> = extensions.iter().map(|e| format!(".{e}")).collect();
            out.problem(path, format!("no {} files here: not {what}", listed.join(" or ")));
        }
        for file in files {
            read_file(&file, &mut out);
        }
    } else {
        out.problem(path, "not a file or folder (or a symbolic link, which is refused)");
    }
    out
}

/// The files under `dir` whose extension is one of `extensions`, in name order, searched at most
/// `max_depth` folders deep. A matching name that is not a regular file (a symbolic link, a
/// FIFO) is reported and skipped, as is a folder deeper than the limit.
pub fn files_under(dir: &Path, extensions: &[&str], max_depth: usize, out: &mut Ingested) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    while let Some((folder, depth)) = stack.pop() {
        if depth > max_depth {
            out.problem(&folder, format!("nested more than {max_depth} folders deep; not read further"));
            continue;
        }
        let entries = match list_dir(&folder) {
            Ok(entries) => entries,
            Err(e) => {
                out.problem(&folder, e);
                continue;
            }
        };
        for entry in entries.into_iter().rev() {
            let matches = entry.extension().and_then(|x| x.to_str()).is_some_and(|x| extensions.contains(&x));
            if is_real_dir(&entry) {
                stack.push((entry, depth + 1));
            } else if matches && is_real_file(&entry) {
                files.push(entry);
            } else if matches {
                out.problem(&entry, "not a regular file (a symbolic link is refused)");
            }
        }
    }
    files.sort();
    files
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
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
