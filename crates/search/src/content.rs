//! Reading JSON Lines and checking each document against the spec, before tantivy sees anything.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use serde_json::{Map, Value};

use crate::error::json_kind;
use crate::{ContentError, IndexSpec};

/// A JSON object: one document.
pub(crate) type Document = Map<String, Value>;

/// A checked document: its id in text form and the line it came from.
pub(crate) struct Record {
    /// The 1-based line (or position, for [`crate::ContentIndex::from_documents`]).
    pub(crate) line: usize,
    /// The id as a string (numbers by their JSON text).
    pub(crate) id: String,
    /// The document, unchanged.
    pub(crate) document: Document,
}

/// Splits JSON Lines into `(line, object)` pairs, skipping blank lines.
pub(crate) fn parse_jsonl(file: &str, text: &str) -> Result<Vec<(usize, Document)>, ContentError> {
    // Editors on Windows may save a byte-order mark; it is not part of the first document.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut documents = Vec::new();
    // `lines` also strips a `\r` before each `\n`, so CRLF files read the same.
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        if raw.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(raw).map_err(|e| json_error(file, line, &e))?;
        match value {
            Value::Object(document) => documents.push((line, document)),
            other => {
                return Err(ContentError::NotAnObject {
                    file: file.to_owned(),
                    line,
                    found: json_kind(&other),
                });
            }
        }
    }
    Ok(documents)
}

/// serde_json's message without the " at line 1 column N" it appends (the column is kept
/// separately and the line is ours).
fn json_error(file: &str, line: usize, error: &serde_json::Error) -> ContentError {
    let full = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    let message = full.strip_suffix(&position).unwrap_or(&full).to_owned();
    ContentError::Json { file: file.to_owned(), line, column: error.column(), message }
}

/// Checks the spec, then every document's id (present, valid, unique) and searchable fields
/// (strings when present).
pub(crate) fn check(
    file: &str,
    documents: Vec<(usize, Document)>,
    spec: &IndexSpec,
) -> Result<Vec<Record>, ContentError> {
    check_spec(file, spec)?;
    let mut first_line: HashMap<String, usize> = HashMap::with_capacity(documents.len());
    let mut records = Vec::with_capacity(documents.len());
    for (line, document) in documents {
        let id = match document.get("id") {
            None => return Err(ContentError::MissingId { file: file.to_owned(), line }),
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::String(_)) => {
                return Err(ContentError::InvalidId {
                    file: file.to_owned(),
                    line,
                    found: "an empty string",
                });
            }
            Some(Value::Number(n)) => n.to_string(),
            Some(other) => {
                return Err(ContentError::InvalidId { file: file.to_owned(), line, found: json_kind(other) });
            }
        };
        match first_line.entry(id) {
            Entry::Occupied(first) => {
                return Err(ContentError::DuplicateId {
                    file: file.to_owned(),
                    line,
                    id: first.key().clone(),
                    first_line: *first.get(),
                });
            }
            Entry::Vacant(slot) => {
                let id = slot.key().clone();
                slot.insert(line);
                for field in &spec.fields {
                    match document.get(&field.name) {
                        None | Some(Value::String(_)) => {}
                        Some(other) => {
                            return Err(ContentError::FieldNotString {
                                file: file.to_owned(),
                                line,
                                field: field.name.clone(),
                                found: json_kind(other),
                            });
                        }
                    }
                }
                records.push(Record { line, id, document });
            }
        }
    }
    Ok(records)
}

/// A spec needs at least one field, distinct non-empty names, and boosts that are positive and
/// finite (a zero boost would make a field pointless, a negative one would rank matches last).
fn check_spec(file: &str, spec: &IndexSpec) -> Result<(), ContentError> {
    let invalid = |message: String| ContentError::InvalidSpec { file: file.to_owned(), message };
    if spec.fields.is_empty() {
        return Err(invalid("no searchable fields".to_owned()));
    }
    for (i, field) in spec.fields.iter().enumerate() {
        if field.name.is_empty() {
            return Err(invalid("a searchable field has an empty name".to_owned()));
        }
        if spec.fields[..i].iter().any(|f| f.name == field.name) {
            return Err(invalid(format!("field `{}` is listed twice", field.name)));
        }
        if !(field.boost.is_finite() && field.boost > 0.0) {
            return Err(invalid(format!(
                "field `{}` has boost {}; boosts must be positive and finite",
                field.name, field.boost
            )));
        }
    }
    Ok(())
}
