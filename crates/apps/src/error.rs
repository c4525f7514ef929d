//! Load errors: every one names the file, the line (when there is one) and what is wrong.

use std::fmt;
use std::path::{Path, PathBuf};

/// Why an app package failed to load.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct LoadError {
    /// The file at fault.
    pub file: PathBuf,
    /// 1-based line in `file`, when the problem has one.
    pub line: Option<usize>,
    /// What is wrong, in words a package author can act on.
    pub message: String,
}

impl LoadError {
    /// An error at `file:line`.
    pub fn at(file: &Path, line: usize, message: impl Into<String>) -> Self {
        LoadError { file: file.to_path_buf(), line: Some(line), message: message.into() }
    }

    /// An error about a whole file.
    pub fn file(file: &Path, message: impl Into<String>) -> Self {
        LoadError { file: file.to_path_buf(), line: None, message: message.into() }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file.display(), line, self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// The 1-based line of byte `offset` in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
}

/// Turns a TOML error into a [`LoadError`] at the line of its span.
pub fn toml_error(file: &Path, text: &str, err: &toml::de::Error) -> LoadError {
    let message = err.message().trim().to_string();
    match err.span() {
        Some(span) => LoadError::at(file, line_of(text, span.start), message),
        None => LoadError::file(file, message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_one_based() {
        let text = "a\nbb\nccc";
        assert_eq!(line_of(text, 0), 1);
        assert_eq!(line_of(text, 2), 2);
        assert_eq!(line_of(text, 5), 3);
        assert_eq!(line_of(text, 999), 3);
    }

    #[test]
    fn display_names_file_and_line() {
        let e = LoadError::at(Path::new("apps/x/app.toml"), 4, "bad");
        assert_eq!(e.to_string(), "apps/x/app.toml:4: bad");
        let e = LoadError::file(Path::new("apps/x/app.toml"), "missing");
        assert_eq!(e.to_string(), "apps/x/app.toml: missing");
    }
}
