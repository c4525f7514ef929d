//! Offline BM25 search over an app's read-only content.
//!
//! Apps are data folders; some ship content an agent can search (help articles, a product catalog,
//! settings). The content is a JSON Lines file, one object per line, each with a string or number
//! `id`. An [`IndexSpec`] names the fields that are searchable text, with per-field boosts; every
//! other field is carried along and handed back unchanged with each [`Hit`].
//!
//! [`ContentIndex`] indexes the documents with tantivy in RAM and answers free-text queries:
//!
//! - **Query text is data.** An agent types it, so it is tokenized, never parsed: `title:x`,
//!   quotes, parentheses, `-`, `AND`, `*` are just characters (mostly separators).
//! - **Words**: tantivy's `SimpleTokenizer` (runs of alphanumeric characters, so a run of CJK is
//!   one word), words over 40 bytes dropped, lowercased, accents folded to ASCII ("café" =
//!   "cafe"), then the English Snowball stemmer ("Notifications" = "notification"). No stop words:
//!   BM25's IDF already discounts common words, and in a short app query "on" or "off" may matter.
//! - **Typing**: the last word also matches as a prefix of indexed words ("blue" finds
//!   "Bluetooth"), at half weight; see [`ContentIndex::search`] for how scores combine.
//! - **Deterministic**: one writer thread, one commit, one segment; hits are ordered by score,
//!   then by document order. Two indexes built from the same input give identical hits and scores.

mod content;
mod engine;
mod error;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use error::ContentError;

/// The file name errors use for documents passed to [`ContentIndex::from_documents`], whose
/// "line" is the document's 1-based position in the vector.
pub const DOCUMENTS_SOURCE: &str = "<documents>";

/// Which document fields are searchable text, and how much each counts.
///
/// Deserializable so an app's manifest can carry it, e.g.
/// `{"fields": [{"name": "title", "boost": 3}, {"name": "body"}]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexSpec {
    /// The searchable fields, at least one, names distinct.
    pub fields: Vec<FieldSpec>,
}

impl IndexSpec {
    /// A spec over `fields`, each with boost 1.
    pub fn uniform<S: Into<String>>(fields: impl IntoIterator<Item = S>) -> IndexSpec {
        IndexSpec { fields: fields.into_iter().map(|name| FieldSpec::new(name, 1.0)).collect() }
    }
}

/// One searchable field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldSpec {
    /// The document field holding the text. Documents may lack it; if present it must be a string.
    pub name: String,
    /// Multiplies this field's BM25 score (positive, finite; 1 when omitted in JSON). A title
    /// usually gets more than a body: a word in a title says more about the document.
    #[serde(default = "default_boost")]
    pub boost: f32,
}

impl FieldSpec {
    /// A field with a boost.
    pub fn new(name: impl Into<String>, boost: f32) -> FieldSpec {
        FieldSpec { name: name.into(), boost }
    }
}

/// Serde's default for [`FieldSpec::boost`].
fn default_boost() -> f32 {
    1.0
}

/// One search result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The document's id; a number id is given by its JSON text (`7` → `"7"`).
    pub id: String,
    /// The BM25-based score (see [`ContentIndex::search`]). Comparable between hits of one query
    /// on one index only.
    pub score: f32,
    /// The whole document as it was read, searchable fields included. Shared with the index, so a
    /// hit costs no copy of the document.
    pub document: Arc<Map<String, Value>>,
}

/// An app's content, indexed for search. Immutable once built.
///
/// `Send + Sync`, and [`search`](ContentIndex::search) takes `&self` without locks, so one index
/// can serve concurrent queries. `Clone` is cheap (a reference count), so every episode of a
/// simulated phone can hold the same index.
#[derive(Clone)]
pub struct ContentIndex {
    inner: Arc<Inner>,
}

/// The shared state behind a [`ContentIndex`].
struct Inner {
    /// Documents in input order; position = tie-break order = tantivy's `ord` fast field.
    documents: Vec<Arc<Map<String, Value>>>,
    /// Ids in input order.
    ids: Vec<String>,
    /// Id → position.
    positions: HashMap<String, usize>,
    /// The tantivy side.
    engine: engine::Engine,
}

impl ContentIndex {
    /// Builds from JSON Lines text (blank lines skipped); `source` is the file path used in error
    /// messages.
    pub fn from_jsonl(source: &str, text: &str, spec: &IndexSpec) -> Result<ContentIndex, ContentError> {
        let documents = content::parse_jsonl(source, text)?;
        ContentIndex::build(source, documents, spec)
    }

    /// Builds from documents already in memory. Errors name [`DOCUMENTS_SOURCE`] and the 1-based
    /// position of the offending document.
    pub fn from_documents(
        docs: Vec<Map<String, Value>>,
        spec: &IndexSpec,
    ) -> Result<ContentIndex, ContentError> {
        let documents = docs.into_iter().enumerate().map(|(i, doc)| (i + 1, doc)).collect();
        ContentIndex::build(DOCUMENTS_SOURCE, documents, spec)
    }

    /// Checks everything, then indexes.
    fn build(
        source: &str,
        documents: Vec<(usize, Map<String, Value>)>,
        spec: &IndexSpec,
    ) -> Result<ContentIndex, ContentError> {
        let records = content::check(source, documents, spec)?;
        let engine = engine::Engine::build(source, &records, &spec.fields)?;
        let mut ids = Vec::with_capacity(records.len());
        let mut documents = Vec::with_capacity(records.len());
        for record in records {
            ids.push(record.id);
            documents.push(Arc::new(record.document));
        }
        let positions = ids.iter().enumerate().map(|(i, id)| (id.clone(), i)).collect();
        Ok(ContentIndex { inner: Arc::new(Inner { documents, ids, positions, engine }) })
    }

    /// The number of documents.
    pub fn len(&self) -> usize {
        self.inner.documents.len()
    }

    /// Whether there are no documents (an empty file is valid content: nothing matches).
    pub fn is_empty(&self) -> bool {
        self.inner.documents.is_empty()
    }

    /// BM25-ranked hits for a free-text query, at most `limit`; ties broken by document order so
    /// results are deterministic.
    ///
    /// The query is tokenized like the documents and never parsed, so any text is safe and a
    /// query without words (empty, punctuation only) has no hits. With words `w₁ … wₙ`, a
    /// document's score is the sum, over the distinct words, of the boosted BM25 scores of the
    /// word's stem in every searchable field — except that the last word `wₙ` instead scores the
    /// larger of that exact score and its *completion* score: half the boosted BM25 score of the
    /// best-scoring indexed word that starts with `wₙ`, per field, summed over fields (unstemmed,
    /// so "notif" completes "notifications"; only when `wₙ` has at least 2 characters; at most 32
    /// completions per field, the most frequent). A document matching any word is a hit.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        self.inner
            .engine
            .search(query, limit)
            .into_iter()
            .map(|(score, ord)| Hit {
                id: self.inner.ids[ord].clone(),
                score,
                document: Arc::clone(&self.inner.documents[ord]),
            })
            .collect()
    }

    /// The document with this id (a number id by its JSON text: `get("7")`).
    pub fn get(&self, id: &str) -> Option<&Map<String, Value>> {
        self.inner.positions.get(id).map(|&i| &*self.inner.documents[i])
    }

    /// Every `(id, document)` in input order, for listing content without a query.
    pub fn documents(&self) -> impl ExactSizeIterator<Item = (&str, &Map<String, Value>)> {
        self.inner.ids.iter().zip(&self.inner.documents).map(|(id, doc)| (id.as_str(), &**doc))
    }
}

impl fmt::Debug for ContentIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The documents can be large; their count is what identifies an index in a log.
        f.debug_struct("ContentIndex").field("documents", &self.len()).finish_non_exhaustive()
    }
}
