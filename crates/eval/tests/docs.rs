//! `docs/criteria.md` stays true: every TOML example parses as task criteria, and the SPHINX
//! example imports to the TOML shown next to it.

// Test helpers outside `#[test]` functions unwrap too (clippy only exempts the functions).
#![allow(clippy::unwrap_used)]

use phonebench_eval::criteria_from_sphinx_json;
use phonebench_tasks::Criterion;
use serde::Deserialize;

fn doc() -> String {
    let path = phonebench_testkit::workspace_root().join("docs/criteria.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The fenced blocks of one language, in order.
fn blocks(text: &str, language: &str) -> Vec<String> {
    let fence = format!("```{language}\n");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(&fence) {
        let body = &rest[start + fence.len()..];
        let end = body.find("```").unwrap();
        out.push(body[..end].to_string());
        rest = &body[end + 3..];
    }
    out
}

fn parse(toml_text: &str) -> Vec<Criterion> {
    #[derive(Deserialize)]
    struct File {
        criteria: Vec<Criterion>,
    }
    toml::from_str::<File>(toml_text).unwrap_or_else(|e| panic!("{e}\n{toml_text}")).criteria
}

#[test]
fn every_toml_example_parses() {
    let toml_blocks = blocks(&doc(), "toml");
    assert!(toml_blocks.len() >= 10, "{} examples", toml_blocks.len());
    for block in &toml_blocks {
        let criteria = parse(block);
        assert!(!criteria.is_empty(), "{block}");
        for c in &criteria {
            c.check_static().unwrap_or_else(|e| panic!("{e}\n{block}"));
        }
    }
}

#[test]
fn the_sphinx_example_imports_to_the_toml_beside_it() {
    let text = doc();
    let json = blocks(&text, "json");
    assert_eq!(json.len(), 1);
    let imported = criteria_from_sphinx_json(&json[0]).unwrap();
    // The TOML block right after the JSON one.
    let after = &text[text.find("```json\n").unwrap()..];
    let toml_block = &blocks(after, "toml")[0];
    assert_eq!(imported, parse(toml_block));
}
