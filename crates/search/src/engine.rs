//! Everything that touches tantivy: analyzers, schema, building the in-RAM index, turning query
//! text into a tantivy query, and collecting hits in a deterministic order.

use std::collections::BTreeMap;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::indexer::NoMergePolicy;
use tantivy::query::{BooleanQuery, BoostQuery, DisjunctionMaxQuery, Occur, Query, TermQuery};
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, TextAnalyzer,
    TokenStream,
};
use tantivy::{
    DocId, Index, IndexWriter, ReloadPolicy, Score, Searcher, SegmentOrdinal, SegmentReader, TantivyDocument,
    Term,
};

use crate::content::Record;
use crate::{ContentError, FieldSpec};

/// The analyzer for the BM25 fields: words, lowercased, accents folded, English-stemmed.
const STEMMED: &str = "phonebench_stemmed";
/// The analyzer for the prefix fields: the same words without stemming, because a half-typed word
/// must be a prefix of the indexed term ("runn" is a prefix of "running", not of its stem "run").
const PLAIN: &str = "phonebench_plain";
/// The fast field holding each document's position in the input, used to break score ties.
const ORD: &str = "ord";
/// Tokens longer than this (bytes) are dropped, as in tantivy's own `default` analyzer: they are
/// base64 blobs or URLs, not words anyone types.
const MAX_TOKEN_BYTES: usize = 40;
/// Indexing arena. Far above what thousands of short documents need, so the single writer thread
/// never flushes early and the index is one segment.
const WRITER_MEMORY_BUDGET: usize = 64 << 20;

/// How much a completion of the last query word counts relative to an exact match of a word.
/// Below 1 so that for "blue", a document saying "blue" outranks one saying only "bluetooth" when
/// the two terms are equally rare.
pub(crate) const PREFIX_WEIGHT: f32 = 0.5;
/// A last word shorter than this (in characters) is matched exactly only: one letter is a prefix
/// of a large share of the vocabulary, which ranks noise.
pub(crate) const MIN_PREFIX_CHARS: usize = 2;
/// At most this many completions of the last word are scored per field: the ones in the most
/// documents, then in byte order, so the choice is deterministic.
pub(crate) const MAX_PREFIX_EXPANSIONS: usize = 32;

/// The word analyzer, with or without the English stemmer on top.
fn analyzer(stem: bool) -> TextAnalyzer {
    let words = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter);
    if stem { words.filter(Stemmer::new(Language::English)).build() } else { words.build() }
}

/// Indexed with term frequencies (BM25 needs them) and field norms, without positions (there are
/// no phrase queries) and without storing anything (documents are kept as JSON by the caller).
fn text_options(analyzer: &str) -> TextOptions {
    TextOptions::default().set_indexing_options(
        TextFieldIndexing::default().set_tokenizer(analyzer).set_index_option(IndexRecordOption::WithFreqs),
    )
}

/// One searchable field of the spec and its two tantivy fields.
struct SearchField {
    boost: Score,
    stemmed: Field,
    plain: Field,
}

/// The built index: what [`crate::ContentIndex`] needs to answer queries.
pub(crate) struct Engine {
    fields: Vec<SearchField>,
    searcher: Searcher,
    stemmed: TextAnalyzer,
    plain: TextAnalyzer,
}

/// Wraps a tantivy error with the file and, when one document caused it, its line.
fn index_error(file: &str, line: Option<usize>) -> impl FnOnce(tantivy::TantivyError) -> ContentError + '_ {
    move |error| ContentError::Index { file: file.to_owned(), line, error: Box::new(error) }
}

impl Engine {
    /// Indexes `records` in order with one writer thread and one commit, so the index is a
    /// single segment whose document `i` is `records[i]`.
    pub(crate) fn build(file: &str, records: &[Record], spec: &[FieldSpec]) -> Result<Engine, ContentError> {
        let mut schema = Schema::builder();
        // Field names are positional: spec names can be anything JSON allows, tantivy's cannot.
        let fields: Vec<SearchField> = spec
            .iter()
            .enumerate()
            .map(|(i, f)| SearchField {
                boost: f.boost,
                stemmed: schema.add_text_field(&format!("s{i}"), text_options(STEMMED)),
                plain: schema.add_text_field(&format!("p{i}"), text_options(PLAIN)),
            })
            .collect();
        let ord = schema.add_u64_field(ORD, FAST);
        let index = Index::create_in_ram(schema.build());
        index.tokenizers().register(STEMMED, analyzer(true));
        index.tokenizers().register(PLAIN, analyzer(false));

        let mut writer: IndexWriter =
            index.writer_with_num_threads(1, WRITER_MEMORY_BUDGET).map_err(index_error(file, None))?;
        writer.set_merge_policy(Box::new(NoMergePolicy));
        for (i, record) in records.iter().enumerate() {
            let mut doc = TantivyDocument::new();
            doc.add_u64(ord, i as u64);
            for (field, spec) in fields.iter().zip(spec) {
                if let Some(serde_json::Value::String(text)) = record.document.get(&spec.name) {
                    doc.add_text(field.stemmed, text);
                    doc.add_text(field.plain, text);
                }
            }
            writer.add_document(doc).map_err(index_error(file, Some(record.line)))?;
        }
        writer.commit().map_err(index_error(file, None))?;
        // Only a content file far larger than the memory budget can get here; merging keeps the
        // one-segment promise. (Ordering does not depend on it: ties are broken by `ord`.)
        let segments = index.searchable_segment_ids().map_err(index_error(file, None))?;
        if segments.len() > 1 {
            writer.merge(&segments).wait().map_err(index_error(file, None))?;
        }
        writer.wait_merging_threads().map_err(index_error(file, None))?;

        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(index_error(file, None))?;
        Ok(Engine { fields, searcher: reader.searcher(), stemmed: analyzer(true), plain: analyzer(false) })
    }

    /// Every `(score, ord)` matching `query`, best first, ties in document order; at most `limit`.
    pub(crate) fn search(&self, query: &str, limit: usize) -> Vec<(Score, usize)> {
        if limit == 0 {
            return Vec::new();
        }
        let Some(query) = self.query(query) else { return Vec::new() };
        // An in-RAM index does no I/O, so tantivy cannot fail here short of a bug in it; a loud
        // failure is better than silently returning no hits, which would look like a real answer.
        let mut hits = self.searcher.search(&query, &AllHits).expect("searching an in-RAM tantivy index");
        let order = |a: &(Score, u64), b: &(Score, u64)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit, order);
            hits.truncate(limit);
        }
        hits.sort_unstable_by(order);
        hits.into_iter().map(|(score, ord)| (score, ord as usize)).collect()
    }

    /// The tantivy query for user-typed text, or `None` when it has no words.
    ///
    /// The text is only ever tokenized, never parsed, so no character has a meaning. With `w₁ … wₙ`
    /// the words (lowercased, accent-folded), `stem` the English stemmer and fields `f` with
    /// boosts `b_f`, a document scores
    ///
    /// ```text
    ///   Σ_{distinct stems t of w₁…wₙ₋₁, t ≠ stem(wₙ)} exact(t)
    /// + max( exact(stem(wₙ)),  PREFIX_WEIGHT · Σ_f b_f · max_{c completes wₙ in f} bm25_f(c) )
    /// exact(t) = Σ_f b_f · bm25_f(t)
    /// ```
    ///
    /// where `bm25_f` is tantivy's BM25 (k1 = 1.2, b = 0.75) over field `f`, computed on the stemmed
    /// terms for exact matches and on the unstemmed words for completions. Repeating a word does not
    /// count it twice. The completion part is left out when `wₙ` is shorter than
    /// [`MIN_PREFIX_CHARS`]; at most [`MAX_PREFIX_EXPANSIONS`] completions are scored per field.
    fn query(&self, text: &str) -> Option<Box<dyn Query>> {
        let words = tokens(&self.plain, text);
        let (last, rest) = words.split_last()?;
        let last_stem = self.stem(last);
        let mut seen = vec![last_stem.clone()];
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for word in rest {
            let stem = self.stem(word);
            if !seen.contains(&stem) {
                clauses.push((Occur::Should, self.exact(&stem)));
                seen.push(stem);
            }
        }
        let exact_last = self.exact(&last_stem);
        let last_clause = match self.completions(last) {
            Some(completions) => Box::new(DisjunctionMaxQuery::new(vec![exact_last, completions])),
            None => exact_last,
        };
        clauses.push((Occur::Should, last_clause));
        Some(Box::new(BooleanQuery::new(clauses)))
    }

    /// The stemmed form of one plain word. The stemmer maps a word to one word, so this is the
    /// token the index holds for it; the fallback only guards that assumption.
    fn stem(&self, word: &str) -> String {
        tokens(&self.stemmed, word).into_iter().next().unwrap_or_else(|| word.to_owned())
    }

    /// `Σ_f b_f · bm25_f(stem)` over the stemmed fields.
    fn exact(&self, stem: &str) -> Box<dyn Query> {
        let per_field = self
            .fields
            .iter()
            .map(|f| {
                let term =
                    TermQuery::new(Term::from_field_text(f.stemmed, stem), IndexRecordOption::WithFreqs);
                (Occur::Should, boosted(Box::new(term), f.boost))
            })
            .collect();
        Box::new(BooleanQuery::new(per_field))
    }

    /// `PREFIX_WEIGHT · Σ_f b_f · max_c bm25_f(c)` over the completions `c` of `word` in the plain
    /// fields, or `None` when the word is too short or nothing completes it.
    fn completions(&self, word: &str) -> Option<Box<dyn Query>> {
        if word.chars().count() < MIN_PREFIX_CHARS {
            return None;
        }
        let per_field: Vec<(Occur, Box<dyn Query>)> = self
            .fields
            .iter()
            .filter_map(|f| {
                let terms: Vec<Box<dyn Query>> = self
                    .expansions(f.plain, word)
                    .into_iter()
                    .map(|c| {
                        let term = Term::from_field_text(f.plain, &c);
                        Box::new(TermQuery::new(term, IndexRecordOption::WithFreqs)) as Box<dyn Query>
                    })
                    .collect();
                if terms.is_empty() {
                    return None;
                }
                let best = Box::new(DisjunctionMaxQuery::new(terms));
                Some((Occur::Should, boosted(best, f.boost * PREFIX_WEIGHT)))
            })
            .collect();
        if per_field.is_empty() { None } else { Some(Box::new(BooleanQuery::new(per_field))) }
    }

    /// The indexed words of `field` that start with `prefix`: the [`MAX_PREFIX_EXPANSIONS`] in the
    /// most documents, ties in byte order.
    fn expansions(&self, field: Field, prefix: &str) -> Vec<String> {
        let mut doc_freq: BTreeMap<String, u64> = BTreeMap::new();
        for segment in self.searcher.segment_readers() {
            // No I/O in RAM (see `search`).
            let inverted = segment.inverted_index(field).expect("in-RAM inverted index");
            let mut terms =
                inverted.terms().range().ge(prefix).into_stream().expect("in-RAM term dictionary");
            while terms.advance() {
                if !terms.key().starts_with(prefix.as_bytes()) {
                    break;
                }
                if let Ok(term) = std::str::from_utf8(terms.key()) {
                    *doc_freq.entry(term.to_owned()).or_default() += u64::from(terms.value().doc_freq);
                }
            }
        }
        let mut ranked: Vec<(String, u64)> = doc_freq.into_iter().collect();
        // Stable sort over byte-ordered input: equal frequencies stay in byte order.
        ranked.sort_by_key(|(_, freq)| std::cmp::Reverse(*freq));
        ranked.truncate(MAX_PREFIX_EXPANSIONS);
        ranked.into_iter().map(|(term, _)| term).collect()
    }
}

/// Wraps `query` in a boost unless the boost is 1 (which would only cost a multiplication).
fn boosted(query: Box<dyn Query>, boost: Score) -> Box<dyn Query> {
    if boost == 1.0 { query } else { Box::new(BoostQuery::new(query, boost)) }
}

/// The token texts `analyzer` makes of `text`.
fn tokens(analyzer: &TextAnalyzer, text: &str) -> Vec<String> {
    // `token_stream` needs `&mut`; a clone keeps `search` `&self` and lock-free.
    let mut analyzer = analyzer.clone();
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while stream.advance() {
        out.push(stream.token().text.clone());
    }
    out
}

/// Collects every match as `(score, ord)`: with thousands of documents keeping all matches costs
/// microseconds, and sorting them ourselves makes the tie order ours rather than tantivy's.
struct AllHits;

/// [`AllHits`] for one segment: reads each match's `ord` fast field.
struct SegmentHits {
    ord: Column<u64>,
    hits: Vec<(Score, u64)>,
}

impl Collector for AllHits {
    type Fruit = Vec<(Score, u64)>;
    type Child = SegmentHits;

    fn for_segment(&self, _: SegmentOrdinal, segment: &SegmentReader) -> tantivy::Result<SegmentHits> {
        Ok(SegmentHits { ord: segment.fast_fields().u64(ORD)?, hits: Vec::new() })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, segments: Vec<Vec<(Score, u64)>>) -> tantivy::Result<Vec<(Score, u64)>> {
        Ok(segments.into_iter().flatten().collect())
    }
}

impl SegmentCollector for SegmentHits {
    type Fruit = Vec<(Score, u64)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        // Every document has an `ord`; one without would be a document we did not add.
        if let Some(ord) = self.ord.first(doc) {
            self.hits.push((score, ord));
        }
    }

    fn harvest(self) -> Vec<(Score, u64)> {
        self.hits
    }
}
