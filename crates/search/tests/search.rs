//! Ranking, word handling, query-as-data, determinism and error reporting of `ContentIndex`.

use phonebench_search::{ContentError, ContentIndex, FieldSpec, Hit, IndexSpec};
use serde_json::{Map, Value, json};

/// Settings-app help articles: the kind of content an agent searches.
const HELP: &str = r#"{"id": "bt", "title": "Bluetooth devices", "summary": "Pair headphones, speakers and cars.", "keywords": "pairing wireless", "screen": "settings/bluetooth"}

{"id": "notif", "title": "Notification settings", "summary": "Choose which apps can send notifications and how they appear.", "keywords": "alerts badges"}
{"id": "wifi", "title": "Wi-Fi", "summary": "Connect to wireless networks; forget a network.", "keywords": "internet wlan"}
{"id": "battery", "title": "Battery saver", "summary": "Extend battery life by limiting background activity.", "keywords": "power"}
{"id": 42, "title": "Running apps", "summary": "See which apps are running and stop them.", "keywords": "processes", "rank": 3}
{"id": "blue", "title": "Blue light filter", "summary": "Night light makes the screen warmer.", "keywords": "display"}
"#;

fn help_spec() -> IndexSpec {
    IndexSpec {
        fields: vec![
            FieldSpec::new("title", 3.0),
            FieldSpec::new("summary", 1.0),
            FieldSpec::new("keywords", 2.0),
        ],
    }
}

fn help() -> ContentIndex {
    ContentIndex::from_jsonl("apps/settings/help.jsonl", HELP, &help_spec()).expect("help content indexes")
}

fn ids(hits: &[Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.id.as_str()).collect()
}

fn doc(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

#[test]
fn reads_documents_and_returns_them_unchanged() {
    let index = help();
    assert_eq!(index.len(), 6);
    assert!(!index.is_empty());
    let bt = index.get("bt").unwrap();
    assert_eq!(bt["screen"], "settings/bluetooth");
    // A number id is looked up by its JSON text, and the document keeps the number.
    assert_eq!(index.get("42").unwrap()["id"], json!(42));
    assert_eq!(index.get("42").unwrap()["rank"], json!(3));
    assert!(index.get("missing").is_none());
    let hits = index.search("running", 10);
    assert_eq!(ids(&hits), ["42"]);
    assert_eq!(*hits[0].document, *index.get("42").unwrap());
    let listed: Vec<&str> = index.documents().map(|(id, _)| id).collect();
    assert_eq!(listed, ["bt", "notif", "wifi", "battery", "42", "blue"]);
}

#[test]
fn boosted_title_outranks_a_single_mention_in_a_long_body() {
    let filler = "lorem ipsum dolor sit amet consectetur adipiscing elit ".repeat(20);
    let docs = vec![
        doc(json!({"id": "body", "title": "Display", "body": format!("{filler} brightness {filler}")})),
        doc(json!({"id": "title", "title": "Brightness", "body": "Adjust the screen."})),
    ];
    let spec = IndexSpec { fields: vec![FieldSpec::new("title", 3.0), FieldSpec::new("body", 1.0)] };
    let index = ContentIndex::from_documents(docs, &spec).unwrap();
    let hits = index.search("brightness", 10);
    assert_eq!(ids(&hits), ["title", "body"]);
    assert!(hits[0].score > hits[1].score);
}

#[test]
fn boost_scales_a_field_score_linearly() {
    let docs =
        || vec![doc(json!({"id": 1, "title": "alarm clock"})), doc(json!({"id": 2, "title": "timer"}))];
    let one = ContentIndex::from_documents(docs(), &IndexSpec::uniform(["title"])).unwrap();
    let three =
        ContentIndex::from_documents(docs(), &IndexSpec { fields: vec![FieldSpec::new("title", 3.0)] })
            .unwrap();
    // "alarm" is a complete word: the exact score wins over the half-weight completion score.
    let (a, b) = (one.search("alarm", 1)[0].score, three.search("alarm", 1)[0].score);
    assert!((b - 3.0 * a).abs() < 1e-5, "{a} {b}");
}

#[test]
fn stemming_and_case_folding() {
    let index = help();
    // "notifications" and "Notification" share the stem "notif".
    assert_eq!(ids(&index.search("NOTIFICATIONS", 10)), ["notif"]);
    assert_eq!(ids(&index.search("notification", 10)), ["notif"]);
    // "networks" in the query, "network" and "networks" in the document.
    assert_eq!(ids(&index.search("network", 10)), ["wifi"]);
    // Accents fold: "bàttery" is "battery".
    assert_eq!(ids(&index.search("bàttery", 10)), ["battery"]);
}

#[test]
fn last_word_matches_as_a_prefix() {
    let index = help();
    // "blue" is a word in one title and a prefix of "Bluetooth" in another; the exact word wins.
    assert_eq!(ids(&index.search("blue", 10)), ["blue", "bt"]);
    assert_eq!(ids(&index.search("bluet", 10)), ["bt"]);
    // Unstemmed prefix: "runn" completes "running" (whose stem is "run").
    assert_eq!(ids(&index.search("runn", 10)), ["42"]);
    assert_eq!(ids(&index.search("batt", 10)), ["battery"]);
    // Only the last word is a prefix: "blu" as a first word matches nothing by itself.
    assert_eq!(ids(&index.search("blu saver", 10)), ["battery"]);
    // A single character is matched exactly only.
    assert!(index.search("b", 10).is_empty());
    // A completion scores half of the same word matched exactly.
    let exact = index.search("bluetooth", 1)[0].score;
    let prefix = index.search("bluetoot", 1)[0].score;
    assert!((prefix - exact / 2.0).abs() < 1e-5, "{exact} {prefix}");
}

#[test]
fn scores_of_words_add_up_and_repeats_do_not_count_twice() {
    let index = help();
    let one = index.search("battery", 1)[0].score;
    let two = index.search("battery saver", 1)[0].score;
    assert!(two > one);
    let repeated = index.search("battery battery Battery", 1)[0].score;
    assert!((repeated - one).abs() < 1e-6, "{one} {repeated}");
}

#[test]
fn limit_and_empty_queries() {
    let index = help();
    let all = index.search("apps", 10);
    assert_eq!(all.len(), 2);
    assert_eq!(index.search("apps", 1), all[..1]);
    assert!(index.search("apps", 0).is_empty());
    for query in ["", "   ", "?!", "-- ::", "\n\t"] {
        assert!(index.search(query, 10).is_empty(), "{query:?}");
    }
}

#[test]
fn ties_are_broken_by_document_order() {
    // Identical documents score identically; hits must come in input order, whatever the limit.
    let docs: Vec<_> =
        (0..40).rev().map(|i| doc(json!({"id": format!("d{i}"), "text": "same words"}))).collect();
    let index = ContentIndex::from_documents(docs, &IndexSpec::uniform(["text"])).unwrap();
    let expected: Vec<String> = (0..40).rev().map(|i| format!("d{i}")).collect();
    let hits = index.search("words", 100);
    assert_eq!(ids(&hits), expected);
    assert!(hits.iter().all(|h| h.score == hits[0].score));
    for limit in [1, 7, 39] {
        assert_eq!(ids(&index.search("words", limit)), expected[..limit], "limit {limit}");
    }
}

#[test]
fn query_text_is_data() {
    let index = help();
    let hostile = [
        "title:foo",
        "title:bluetooth",
        "\"unclosed",
        "a AND (b",
        "*",
        "-x",
        "'); DROP TABLE x; --",
        "{{ 7*7 }}",
        "blue*",
        "wifi~2",
        "title:[a TO z]",
        "^3 boost^",
        "\\",
        "NOT OR AND",
        "📶 wi‑fi 🔋",
        "蓝牙设置",
        "ブルートゥース",
        "\u{0}\u{feff}\u{202e}",
        "a\u{301}",
    ];
    for query in hostile {
        let _ = index.search(query, 10);
    }
    // Syntax characters are separators, never operators.
    assert_eq!(ids(&index.search("title:bluetooth", 10)), ["bt"]);
    assert_eq!(ids(&index.search("-battery", 10)), ["battery"]);
    assert_eq!(ids(&index.search("\"wlan", 10)), ["wifi"]);
    // "Wi-Fi" is the two words "wi" and "fi": "wi-fi" finds it, "wifi" does not (content authors
    // list such spellings in a keywords field).
    // ("fi" also completes "filter", at half weight.)
    assert_eq!(ids(&index.search("(wi-fi)", 10)), ["wifi", "blue"]);
    assert!(index.search("wifi", 10).is_empty());
    // Operators are words: "saver NOT zzz" is the three words, so the battery article matches, and
    // "and" matches the summary that says "and" (there are no stop words).
    assert_eq!(ids(&index.search("saver NOT zzz", 10)), ["battery"]);
    assert_eq!(ids(&index.search("saver AND", 10)), ["battery", "bt", "42", "notif"]);
    // A very long query still answers.
    let long = "bluetooth battery ".repeat(2000);
    assert_eq!(index.search(&long, 10).len(), 2);
}

#[test]
fn non_latin_text_is_searchable() {
    let docs = vec![
        doc(json!({"id": "zh", "title": "蓝牙 设置"})),
        doc(json!({"id": "emoji", "title": "Battery 🔋 saver"})),
        doc(json!({"id": "ja", "title": "ブルートゥース"})),
    ];
    let index = ContentIndex::from_documents(docs, &IndexSpec::uniform(["title"])).unwrap();
    assert_eq!(ids(&index.search("蓝牙", 10)), ["zh"]);
    assert_eq!(ids(&index.search("ブルー", 10)), ["ja"]);
    assert_eq!(ids(&index.search("🔋 saver", 10)), ["emoji"]);
}

#[test]
fn independently_built_indexes_agree_exactly() {
    let text = synthetic_jsonl(400);
    let spec = help_spec();
    let a = ContentIndex::from_jsonl("a.jsonl", &text, &spec).unwrap();
    let b = ContentIndex::from_jsonl("b.jsonl", &text, &spec).unwrap();
    for query in ["wireless", "battery saver", "notif", "pair blue", "apps running st", "zzz", "a"] {
        let (ha, hb) = (a.search(query, 50), b.search(query, 50));
        assert_eq!(ha, hb, "{query}");
        let scores = |h: &[Hit]| h.iter().map(|h| h.score.to_bits()).collect::<Vec<_>>();
        assert_eq!(scores(&ha), scores(&hb), "{query}");
        // And hits are sorted by score, then document order.
        for pair in ha.windows(2) {
            assert!(pair[0].score >= pair[1].score, "{query}");
        }
    }
    assert!(!a.search("battery saver", 50).is_empty());
}

#[test]
fn index_is_shareable_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ContentIndex>();
    let index = help();
    let expected = index.search("bluetooth wifi", 10);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| assert_eq!(index.search("bluetooth wifi", 10), expected));
        }
    });
}

#[test]
fn empty_content_is_valid() {
    let index = ContentIndex::from_jsonl("empty.jsonl", "\n\n", &help_spec()).unwrap();
    assert!(index.is_empty());
    assert!(index.search("anything", 10).is_empty());
}

#[test]
fn crlf_bom_and_missing_searchable_fields_are_fine() {
    let text = "\u{feff}{\"id\": \"a\", \"title\": \"Alarm\"}\r\n\r\n{\"id\": \"b\"}\r\n";
    let index = ContentIndex::from_jsonl("x.jsonl", text, &help_spec()).unwrap();
    assert_eq!(index.len(), 2);
    assert_eq!(ids(&index.search("alarm", 10)), ["a"]);
}

#[test]
fn spec_reads_from_json_with_default_boost() {
    let spec: IndexSpec =
        serde_json::from_str(r#"{"fields": [{"name": "title", "boost": 3}, {"name": "body"}]}"#).unwrap();
    assert_eq!(spec, IndexSpec { fields: vec![FieldSpec::new("title", 3.0), FieldSpec::new("body", 1.0)] });
}

fn error(text: &str) -> ContentError {
    ContentIndex::from_jsonl("apps/x/content.jsonl", text, &help_spec()).expect_err("content is invalid")
}

#[test]
fn bad_json_names_file_and_line() {
    let e = error("{\"id\": 1}\n\n{\"id\": 2, \"title\": }\n");
    assert_eq!((e.file(), e.line()), ("apps/x/content.jsonl", Some(3)));
    let message = e.to_string();
    assert!(message.starts_with("apps/x/content.jsonl:3:20: invalid JSON: expected value"), "{message}");
    assert!(!message.contains("line 1"), "{message}");
    let e = error("{\"id\": 1} trailing");
    assert!(e.to_string().contains(":1:"), "{e}");
}

#[test]
fn structural_errors_name_file_and_line() {
    let cases: &[(&str, usize, &str)] = &[
        ("[1, 2]", 1, "a document must be a JSON object, found an array"),
        ("{\"id\": \"a\"}\n{\"title\": \"no id\"}", 2, "document has no `id` field"),
        ("{\"id\": null}", 1, "`id` must be a non-empty string or a number, found null"),
        ("{\"id\": \"\"}", 1, "found an empty string"),
        ("{\"id\": [1]}", 1, "found an array"),
        (
            "{\"id\": \"a\"}\n\n{\"id\": \"b\"}\n{\"id\": \"a\"}",
            4,
            "duplicate id \"a\" (first used on line 1)",
        ),
        ("{\"id\": 7}\n{\"id\": \"7\"}", 2, "duplicate id \"7\" (first used on line 1)"),
        (
            "{\"id\": 1}\n{\"id\": 2, \"summary\": 5}",
            2,
            "searchable field `summary` must be a string, found a number",
        ),
        (
            "{\"id\": 1, \"keywords\": [\"a\"]}",
            1,
            "searchable field `keywords` must be a string, found an array",
        ),
        ("{\"id\": 1, \"title\": null}", 1, "searchable field `title` must be a string, found null"),
    ];
    for &(text, line, expected) in cases {
        let e = error(text);
        assert_eq!(e.line(), Some(line), "{text}: {e}");
        let message = e.to_string();
        assert!(message.starts_with(&format!("apps/x/content.jsonl:{line}: ")), "{message}");
        assert!(message.contains(expected), "{message}");
    }
}

#[test]
fn from_documents_errors_name_the_position() {
    let docs = vec![doc(json!({"id": 1})), doc(json!({"id": 1}))];
    let e = ContentIndex::from_documents(docs, &help_spec()).unwrap_err();
    assert_eq!(e.to_string(), "<documents>:2: duplicate id \"1\" (first used on line 1)");
}

#[test]
fn invalid_specs_are_rejected() {
    let bad = [
        IndexSpec { fields: vec![] },
        IndexSpec { fields: vec![FieldSpec::new("", 1.0)] },
        IndexSpec { fields: vec![FieldSpec::new("a", 1.0), FieldSpec::new("a", 2.0)] },
        IndexSpec { fields: vec![FieldSpec::new("a", 0.0)] },
        IndexSpec { fields: vec![FieldSpec::new("a", -1.0)] },
        IndexSpec { fields: vec![FieldSpec::new("a", f32::NAN)] },
        IndexSpec { fields: vec![FieldSpec::new("a", f32::INFINITY)] },
    ];
    for spec in bad {
        let e = ContentIndex::from_jsonl("c.jsonl", "{\"id\": 1}", &spec).unwrap_err();
        assert!(matches!(e, ContentError::InvalidSpec { .. }), "{spec:?}: {e}");
        assert!(e.to_string().starts_with("c.jsonl: invalid search spec: "), "{e}");
    }
}

/// `n` help-like documents from a fixed vocabulary (deterministic, no randomness crate).
fn synthetic_jsonl(n: usize) -> String {
    const WORDS: &[&str] = &[
        "bluetooth",
        "wireless",
        "battery",
        "saver",
        "notifications",
        "apps",
        "running",
        "display",
        "brightness",
        "network",
        "pair",
        "headphones",
        "storage",
        "privacy",
        "location",
        "sound",
        "vibrate",
        "alarm",
        "calendar",
        "contacts",
        "messages",
        "camera",
        "photos",
        "backup",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |m: usize| {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((state >> 33) % m as u64) as usize
    };
    let mut out = String::new();
    for i in 0..n {
        let mut words = |k: usize| (0..k).map(|_| WORDS[next(WORDS.len())]).collect::<Vec<_>>().join(" ");
        let (title, summary, keywords) = (words(3), words(25), words(4));
        let line = json!({"id": format!("doc{i}"), "title": title, "summary": summary, "keywords": keywords});
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}
