//! What tokens cost: a per-model price table (`data/prices.toml`, embedded) that configs can
//! override.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::types::TokenUsage;

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Per million prompt tokens.
    pub input: f64,
    /// Per million completion tokens.
    pub output: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    model: Vec<Entry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    #[serde(rename = "match")]
    pattern: String,
    input: f64,
    output: f64,
}

const TABLE: &str = include_str!("../data/prices.toml");

fn table() -> &'static [Entry] {
    static PARSED: OnceLock<Vec<Entry>> = OnceLock::new();
    // The table is ours and tested to parse, so an empty fallback is unreachable in practice.
    PARSED.get_or_init(|| toml::from_str::<Table>(TABLE).map(|t| t.model).unwrap_or_default())
}

impl Price {
    /// The built-in price of `model`: the longest matching pattern (exact name, or a prefix
    /// ending in `*`). Provider prefixes such as `openai/` are ignored.
    pub fn lookup(model: &str) -> Option<Price> {
        let name = model.rsplit('/').next().unwrap_or(model);
        table()
            .iter()
            .filter(|e| match e.pattern.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == e.pattern,
            })
            .max_by_key(|e| e.pattern.len())
            .map(|e| Price { input: e.input, output: e.output })
    }

    /// The cost of `usage` in USD.
    pub fn cost(&self, usage: TokenUsage) -> f64 {
        (usage.prompt_tokens as f64 * self.input + usage.completion_tokens as f64 * self.output) / 1e6
    }

    /// Parses `IN,OUT` (USD per million prompt and completion tokens).
    pub fn parse(text: &str) -> Result<Price, String> {
        let (a, b) = text.split_once(',').ok_or_else(|| format!("`{text}`: expected IN,OUT, e.g. 2.5,10"))?;
        let num = |s: &str| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| format!("`{s}` is not a price (USD per million tokens)"))
        };
        Ok(Price { input: num(a)?, output: num(b)? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_the_longest_pattern_wins() {
        assert!(toml::from_str::<Table>(TABLE).is_ok());
        assert!(table().len() > 10);
        assert_eq!(Price::lookup("gpt-4o-mini-2024-07-18"), Some(Price { input: 0.15, output: 0.60 }));
        assert_eq!(Price::lookup("gpt-4o"), Some(Price { input: 2.50, output: 10.00 }));
        assert_eq!(Price::lookup("openai/gpt-4o"), Some(Price { input: 2.50, output: 10.00 }));
        assert_eq!(Price::lookup("deepseek-chat-v2"), None, "exact patterns do not match prefixes");
        assert_eq!(Price::lookup("gemma-3-270m"), None);
    }

    #[test]
    fn cost_and_parsing() {
        let p = Price { input: 2.0, output: 8.0 };
        let c = p.cost(TokenUsage { prompt_tokens: 1_000_000, completion_tokens: 500_000 });
        assert!((c - 6.0).abs() < 1e-9);
        assert_eq!(Price::parse("2.5, 10").unwrap(), Price { input: 2.5, output: 10.0 });
        assert!(Price::parse("2.5").unwrap_err().contains("IN,OUT"));
        assert!(Price::parse("-1,2").is_err());
        assert!(Price::parse("NaN,2").is_err());
    }
}
