//! [`ContentError`]: why content could not be indexed, always pointing at the line to fix.

/// Why a content file could not be indexed.
///
/// Content files are written by hand (an app is a data folder), so every error names the file and
/// the 1-based line of the offending document: that is where the author has to look. For
/// [`ContentIndex::from_documents`](crate::ContentIndex::from_documents) the file is
/// [`DOCUMENTS_SOURCE`](crate::DOCUMENTS_SOURCE) and the "line" is the document's 1-based position.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContentError {
    /// The line is not valid JSON.
    #[error("{file}:{line}:{column}: invalid JSON: {message}")]
    Json {
        /// The content file.
        file: String,
        /// The 1-based line.
        line: usize,
        /// The 1-based column within the line where serde_json gave up.
        column: usize,
        /// serde_json's message, without its position (the line is one document, so serde's own
        /// "line 1" would mislead).
        message: String,
    },
    /// The line is JSON but not an object, so it cannot be a document.
    #[error("{file}:{line}: a document must be a JSON object, found {found}")]
    NotAnObject {
        /// The content file.
        file: String,
        /// The 1-based line.
        line: usize,
        /// What the line holds instead ("an array", "a string", ...).
        found: &'static str,
    },
    /// The document has no `id` field.
    #[error("{file}:{line}: document has no `id` field")]
    MissingId {
        /// The content file.
        file: String,
        /// The 1-based line.
        line: usize,
    },
    /// The `id` is neither a non-empty string nor a number.
    #[error("{file}:{line}: `id` must be a non-empty string or a number, found {found}")]
    InvalidId {
        /// The content file.
        file: String,
        /// The 1-based line.
        line: usize,
        /// What the `id` holds instead ("an empty string", "null", ...).
        found: &'static str,
    },
    /// Two documents have the same id (numbers count by their JSON text, so `7` and `"7"` clash:
    /// both are looked up as `"7"`).
    #[error("{file}:{line}: duplicate id \"{id}\" (first used on line {first_line})")]
    DuplicateId {
        /// The content file.
        file: String,
        /// The 1-based line of the second use.
        line: usize,
        /// The id, as [`Hit::id`](crate::Hit::id) would show it.
        id: String,
        /// The 1-based line of the first use.
        first_line: usize,
    },
    /// A searchable field holds something other than a string. A missing field is fine (it is
    /// just not matched); `null`, numbers, arrays and objects are not, because indexing them as
    /// text would be a guess.
    #[error("{file}:{line}: searchable field `{field}` must be a string, found {found}")]
    FieldNotString {
        /// The content file.
        file: String,
        /// The 1-based line.
        line: usize,
        /// The searchable field's name.
        field: String,
        /// What it holds instead.
        found: &'static str,
    },
    /// The [`IndexSpec`](crate::IndexSpec) itself is unusable (no fields, a duplicate or empty
    /// name, a boost that is not a positive finite number). No line is at fault.
    #[error("{file}: invalid search spec: {message}")]
    InvalidSpec {
        /// The content file the spec was meant for.
        file: String,
        /// What is wrong with the spec.
        message: String,
    },
    /// tantivy failed. An in-RAM index has no I/O, so this should not happen; it is reported rather
    /// than unwrapped because tantivy's API is fallible.
    #[error("{}: search index failure: {error}", location(.file, *.line))]
    Index {
        /// The content file.
        file: String,
        /// The 1-based line of the document being added, or `None` when the failure was in a step
        /// that covers the whole file (creating the writer, committing, opening the reader).
        line: Option<usize>,
        /// tantivy's error, boxed so that tantivy's types stay out of this crate's API.
        #[source]
        error: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl ContentError {
    /// The content file the error is about.
    pub fn file(&self) -> &str {
        match self {
            ContentError::Json { file, .. }
            | ContentError::NotAnObject { file, .. }
            | ContentError::MissingId { file, .. }
            | ContentError::InvalidId { file, .. }
            | ContentError::DuplicateId { file, .. }
            | ContentError::FieldNotString { file, .. }
            | ContentError::InvalidSpec { file, .. }
            | ContentError::Index { file, .. } => file,
        }
    }

    /// The 1-based line at fault, when one line is.
    pub fn line(&self) -> Option<usize> {
        match self {
            ContentError::Json { line, .. }
            | ContentError::NotAnObject { line, .. }
            | ContentError::MissingId { line, .. }
            | ContentError::InvalidId { line, .. }
            | ContentError::DuplicateId { line, .. }
            | ContentError::FieldNotString { line, .. } => Some(*line),
            ContentError::Index { line, .. } => *line,
            ContentError::InvalidSpec { .. } => None,
        }
    }
}

/// `file:line`, or just `file` when no line is at fault.
fn location(file: &str, line: Option<usize>) -> String {
    match line {
        Some(line) => format!("{file}:{line}"),
        None => file.to_owned(),
    }
}

/// How an error message names the kind of a JSON value.
pub(crate) fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
