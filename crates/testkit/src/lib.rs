//! Helpers for tests and benches that read the real data in `../shared` beside the checkout.
//!
//! The data is read in place, never copied into the repository. A missing folder is a test
//! failure with instructions, never a skip: CI has `../shared` beside the checkout.

use std::path::{Path, PathBuf};

/// The workspace root (the checkout).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The shared data folder: `$PHONEBENCH_SHARED` if set, else `../shared` beside the checkout.
///
/// Panics with instructions when the folder is missing, so a test that needs it fails loudly.
pub fn shared_dir() -> PathBuf {
    let dir = match std::env::var_os("PHONEBENCH_SHARED") {
        Some(d) => PathBuf::from(d),
        None => workspace_root().join("../shared"),
    };
    assert!(
        dir.join("realdata").is_dir() && dir.join("sphinx-data").is_dir(),
        "the shared data folder {} (with realdata/ and sphinx-data/) is missing: \
         put it beside the checkout or set PHONEBENCH_SHARED",
        dir.display()
    );
    dir
}

/// The Python of the test venv: `$PHONEBENCH_PYTHON`, else `tools/py/.venv/bin/python`, which
/// tools/test.sh makes from the pinned `tools/py/requirements.txt`.
///
/// Panics with instructions when it is missing: the Python tests fail, never skip.
pub fn venv_python() -> PathBuf {
    let python = std::env::var_os("PHONEBENCH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("tools/py/.venv/bin/python"));
    assert!(
        python.is_file(),
        "{} is missing: tools/test.sh makes the venv (python3 -m venv tools/py/.venv && tools/py/.venv/bin/pip install -r tools/py/requirements.txt)",
        python.display()
    );
    python
}

/// A path inside the shared data folder.
pub fn shared(relative: &str) -> PathBuf {
    shared_dir().join(relative)
}

/// Every file under `dir` (recursively) whose name ends with `.{extension}`, sorted.
pub fn files_with_extension(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("cannot list {}: {e}", d.display()));
        for entry in entries {
            let path = entry.unwrap_or_else(|e| panic!("cannot list {}: {e}", d.display())).path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == extension) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Every uiautomator XML file in the shared real data (`realdata/` and `sphinx-data/`), sorted.
pub fn real_xml_files() -> Vec<PathBuf> {
    let root = shared_dir();
    let mut files = files_with_extension(&root.join("realdata"), "xml");
    files.extend(files_with_extension(&root.join("sphinx-data"), "xml"));
    files
}

/// The path relative to the shared folder, for messages.
pub fn display_name(path: &Path) -> String {
    let root = shared_dir();
    path.strip_prefix(&root).unwrap_or(path).display().to_string()
}

/// The largest real uiautomator dump (by bytes): the worst case benches measure.
pub fn largest_real_xml() -> PathBuf {
    real_xml_files()
        .into_iter()
        .max_by_key(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
        .unwrap_or_else(|| panic!("no real XML files under {}", shared_dir().display()))
}

/// The manifest of the throwaway `probe` app [`probe_package`] writes unless `files` has one.
pub const PROBE_MANIFEST: &str =
    "id = \"probe\"\nname = \"Probe\"\npackage = \"com.example.probe\"\nentry = \"main\"\nicon = \"apps\"\n";

/// Writes a throwaway app package `probe` (id `probe`, entry screen `main`) at
/// `<tmp>/phonebench-<case>-<pid>/probe`: [`PROBE_MANIFEST`] and then `files` (relative path,
/// text; folders are created, `screens/` always). Returns the folder holding it (remove it when done) and the
/// package folder. Tests that need an app with a particular bug build one this way.
pub fn probe_package(case: &str, files: &[(&str, &str)]) -> (PathBuf, PathBuf) {
    let root = std::env::temp_dir().join(format!("phonebench-{case}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("probe");
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", parent.display()));
        }
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    };
    write("app.toml", PROBE_MANIFEST);
    std::fs::create_dir_all(dir.join("screens")).unwrap_or_else(|e| panic!("cannot create screens/: {e}"));
    for (name, text) in files {
        write(name, text);
    }
    (root, dir)
}

/// The node a test means by `key`: the first, topmost window first and depth-first within it,
/// whose text or content-desc is `key` or whose resource id ends with `:id/<key>`.
pub fn find_node<'a>(tree: &'a phonebench_uitree::UiTree, key: &str) -> Option<&'a phonebench_uitree::Node> {
    let suffix = format!(":id/{key}");
    tree.windows_top_down().into_iter().find_map(|window| {
        let root = tree.window(window).root;
        tree.dfs(root)
            .map(|id| tree.node(id))
            .find(|n| n.text == key || n.content_desc == key || n.resource_id.ends_with(&suffix))
    })
}
