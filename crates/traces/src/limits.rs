//! Bounds on untrusted input, and the only way readers touch files: regular files and folders
//! inside what the user named, never through a symbolic link, never larger than a limit.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Largest file a reader opens. Real recordings are far below (a DroidBot state with
/// thousands of views is a few MB, a long run's `utg.js` about ten); parsed JSON and YAML take
/// tens of times their size in memory, so this bounds a reader to about a gigabyte.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Deepest nesting of brackets (JSON, YAML flow style) or indentation levels (YAML) a file may
/// have: real trace files nest under 20 deep, and parsers slow down badly on deep nesting, so
/// it is checked before parsing.
pub const MAX_NESTING: usize = 128;
/// Problems listed per file; the rest are counted in one line.
pub const MAX_PROBLEMS_PER_FILE: usize = 20;
/// Largest screenshot kept.
pub const MAX_SCREENSHOT_BYTES: u64 = 16 * 1024 * 1024;
/// Most entries read from one folder (a DroidBot run has a few thousand).
pub const MAX_DIR_ENTRIES: usize = 100_000;
/// Most views in one recorded screen.
pub const MAX_VIEWS: usize = 50_000;

/// Reads a regular file of at most `max` bytes. Symbolic links, folders, FIFOs and devices are
/// refused (a link could lead outside the folder the user named; a FIFO would block).
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    let meta = fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if meta.file_type().is_symlink() {
        return Err("is a symbolic link (refused: it could lead outside the trace folder)".into());
    }
    if !meta.is_file() {
        return Err("is not a regular file".into());
    }
    if meta.len() > max {
        return Err(format!("is {} bytes, over the {max}-byte limit", meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    fs::File::open(path).and_then(|f| f.take(max + 1).read_to_end(&mut bytes)).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > max {
        return Err(format!("grew over the {max}-byte limit while being read"));
    }
    Ok(bytes)
}

/// A JSON parse error as `line N: what` (serde_json's own text ends in "at line N column M",
/// which would say the line twice).
pub fn json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let what = text.rsplit_once(" at line ").map_or(text.as_str(), |(what, _)| what);
    format!("line {}, column {}: {what}", e.line(), e.column())
}

/// Reads a UTF-8 text file of at most [`MAX_FILE_BYTES`] (a leading BOM is dropped), refusing
/// one nested deeper than [`MAX_NESTING`].
pub fn read_text(path: &Path) -> Result<String, String> {
    read_text_max(path, MAX_FILE_BYTES)
}

/// [`read_text`] with a smaller size limit.
pub fn read_text_max(path: &Path, max: u64) -> Result<String, String> {
    let bytes = read_bounded(path, max.min(MAX_FILE_BYTES))?;
    let text = String::from_utf8(bytes)
        .map_err(|e| format!("is not UTF-8 (byte {})", e.utf8_error().valid_up_to()))?;
    let text = text.strip_prefix('\u{FEFF}').map(str::to_string).unwrap_or(text);
    check_nesting(&text)?;
    Ok(text)
}

/// Refuses text nested deeper than [`MAX_NESTING`] (brackets outside quoted strings), so that
/// no parser spends long on it.
pub fn check_nesting(text: &str) -> Result<(), String> {
    let (mut depth, mut line) = (0usize, 1usize);
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        if c == '\n' {
            line += 1;
        }
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' && q == '"' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '[' | '{' => {
                    depth += 1;
                    if depth > MAX_NESTING {
                        return Err(format!(
                            "line {line}: nested more than {MAX_NESTING} levels deep (the limit)"
                        ));
                    }
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            },
        }
    }
    Ok(())
}

/// Whether `path` is a real folder (not a link to one).
pub fn is_real_dir(path: &Path) -> bool {
    fs::symlink_metadata(path).map(|m| m.is_dir()).unwrap_or(false)
}

/// Whether `path` is a real regular file (not a link to one).
pub fn is_real_file(path: &Path) -> bool {
    fs::symlink_metadata(path).map(|m| m.is_file()).unwrap_or(false)
}

/// The entries of a folder, sorted by name, at most [`MAX_DIR_ENTRIES`]. Symbolic links are
/// listed (so that a reader can report them) but never followed here.
pub fn list_dir(path: &Path) -> Result<Vec<PathBuf>, String> {
    let meta = fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if meta.file_type().is_symlink() {
        return Err("is a symbolic link (refused)".into());
    }
    if !meta.is_dir() {
        return Err("is not a folder".into());
    }
    let mut entries = Vec::new();
    for entry in fs::read_dir(path).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        entries.push(entry.path());
        if entries.len() > MAX_DIR_ENTRIES {
            return Err(format!("has more than {MAX_DIR_ENTRIES} entries"));
        }
    }
    entries.sort();
    Ok(entries)
}

/// The MIME type of a screenshot by its first bytes.
pub fn image_mime(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else {
        None
    }
}

/// Reads a screenshot: a PNG or JPEG of at most [`MAX_SCREENSHOT_BYTES`].
pub fn read_screenshot(path: &Path) -> Result<crate::model::Screenshot, String> {
    let bytes = read_bounded(path, MAX_SCREENSHOT_BYTES)?;
    let mime = image_mime(&bytes).ok_or("is neither a PNG nor a JPEG")?;
    Ok(crate::model::Screenshot { mime: mime.to_string(), bytes })
}
