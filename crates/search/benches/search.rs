//! Building an index of 500 help-sized documents, and querying one of 3,000.

use criterion::{Criterion, criterion_group, criterion_main};
use phonebench_search::{ContentIndex, FieldSpec, IndexSpec};
use serde_json::json;

/// `n` documents (title 4 words, summary 40, keywords 5) over a vocabulary of about 2,000
/// pseudo-words with a skewed frequency, like real text. Deterministic: a fixed LCG.
fn jsonl(n: usize) -> String {
    const SYLLABLES: &[&str] = &[
        "blu", "te", "ba", "ter", "no", "ti", "fi", "ca", "tion", "wi", "set", "ting", "dis", "play", "net",
        "work", "sto", "rage", "pri", "va", "cy", "lo", "sound", "a", "larm", "con", "tact", "mes", "sa",
        "ge", "pho", "to", "back", "up", "sa", "ver", "run", "ning", "pair", "head",
    ];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |m: usize| {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) % m as u64) as usize
    };
    let word = |next: &mut dyn FnMut(usize) -> usize| {
        // Squaring a uniform pick skews toward the first syllables: some words are common.
        let pick = |next: &mut dyn FnMut(usize) -> usize| {
            let r = next(SYLLABLES.len());
            SYLLABLES[r * r / SYLLABLES.len()]
        };
        format!("{}{}", pick(next), pick(next))
    };
    let mut out = String::new();
    for i in 0..n {
        let mut words = |k: usize| (0..k).map(|_| word(&mut next)).collect::<Vec<_>>().join(" ");
        let (title, summary, keywords) = (words(4), words(40), words(5));
        let line =
            json!({"id": i, "title": title, "summary": summary, "keywords": keywords, "screen": "x/y"});
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

fn spec() -> IndexSpec {
    IndexSpec {
        fields: vec![
            FieldSpec::new("title", 3.0),
            FieldSpec::new("summary", 1.0),
            FieldSpec::new("keywords", 2.0),
        ],
    }
}

fn bench(c: &mut Criterion) {
    let spec = spec();
    let small = jsonl(500);
    c.bench_function("build_500_docs", |b| {
        b.iter(|| {
            ContentIndex::from_jsonl("bench.jsonl", std::hint::black_box(&small), &spec).expect("builds")
        })
    });

    let index = ContentIndex::from_jsonl("bench.jsonl", &jsonl(3000), &spec).expect("builds");
    let mut group = c.benchmark_group("query_3000_docs");
    for (name, query) in [
        ("one_word", "bluter"),
        ("three_words", "bluter nosound wiset"),
        ("prefix", "setting blu"),
        ("no_match", "zzzz"),
    ] {
        eprintln!("{name} {query:?}: {} hits", index.search(query, usize::MAX).len());
        group.bench_function(name, |b| b.iter(|| index.search(std::hint::black_box(query), 10)));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
