//! `finance`: stock quotes (closing prices of 2026-03-02) and currency conversion at fixed
//! reference rates, so an amount converts to the same figure everywhere.

use serde_json::{Map, Value, json};

use super::{OfflineServer, ToolDef, ToolError, find_one, fold, object_schema, required, round};

/// Symbol, company, exchange, currency, close, previous close.
const QUOTES: [(&str, &str, &str, &str, f64, f64); 10] = [
    ("NWND", "Northwind Traders", "NASDAQ", "USD", 84.12, 82.95),
    ("CTSO", "Contoso Ltd", "NYSE", "USD", 213.40, 215.02),
    ("FBRK", "Fabrikam Inc", "NASDAQ", "USD", 47.85, 47.10),
    ("TLSP", "Tailspin Toys", "NYSE", "USD", 19.64, 20.31),
    ("WWIM", "Wide World Importers", "NYSE", "USD", 132.77, 131.09),
    ("COHO", "Coho Vineyard", "NASDAQ", "USD", 28.30, 27.66),
    ("ADVW", "Adventure Works", "NYSE", "USD", 66.05, 66.90),
    ("LITW", "Litware AG", "SIX", "CHF", 95.20, 94.15),
    ("PRSW", "Proseware plc", "LSE", "GBP", 12.48, 12.61),
    ("ALPN", "Alpine Ski House SE", "XETRA", "EUR", 41.36, 40.88),
];

/// Units of each currency per US dollar (fixed reference rates of 2026-03-02).
const RATES: [(&str, &str, f64); 10] = [
    ("USD", "US dollar", 1.0),
    ("EUR", "euro", 0.92),
    ("GBP", "pound sterling", 0.79),
    ("CHF", "Swiss franc", 0.88),
    ("JPY", "Japanese yen", 150.2),
    ("INR", "Indian rupee", 83.1),
    ("CAD", "Canadian dollar", 1.35),
    ("AUD", "Australian dollar", 1.52),
    ("SEK", "Swedish krona", 10.4),
    ("MXN", "Mexican peso", 17.1),
];

const AS_OF: &str = "2026-03-02";

fn rate(code: &str) -> Result<f64, ToolError> {
    let code = code.trim().to_uppercase();
    RATES.iter().find(|r| r.0 == code).map(|r| r.2).ok_or_else(|| {
        let codes: Vec<&str> = RATES.iter().map(|r| r.0).collect();
        ToolError(format!("unknown currency `{code}` (currencies: {})", codes.join(", ")))
    })
}

fn quote_json(q: &(&str, &str, &str, &str, f64, f64)) -> Value {
    let (symbol, name, exchange, currency, close, previous) = *q;
    json!({
        "symbol": symbol,
        "name": name,
        "exchange": exchange,
        "currency": currency,
        "price": close,
        "previous_close": previous,
        "change": round(close - previous, 2),
        "change_percent": round((close - previous) / previous * 100.0, 2),
        "as_of": AS_OF,
    })
}

/// The finance server (stateless).
pub struct Finance;

impl Finance {
    /// The server.
    pub fn new() -> Finance {
        Finance
    }
}

impl OfflineServer for Finance {
    fn name(&self) -> &'static str {
        "finance"
    }

    fn instructions(&self) -> &'static str {
        "Stock quotes (closing prices of 2026-03-02) and currency conversion at that day's fixed reference rates."
    }

    fn tools(&self) -> Vec<ToolDef> {
        vec![
            ToolDef {
                name: "quote",
                description: "The latest closing quote of a stock by symbol or company name: price, previous close, change.",
                input_schema: object_schema(
                    &[("symbol", "string", "ticker symbol or company name")],
                    &["symbol"],
                ),
            },
            ToolDef {
                name: "search_symbols",
                description: "Find stocks whose symbol or company name contains the query.",
                input_schema: object_schema(&[("query", "string", "part of a name or symbol")], &["query"]),
            },
            ToolDef {
                name: "convert",
                description: "Convert an amount between currencies at the fixed reference rates; the result is rounded to cents.",
                input_schema: object_schema(
                    &[
                        ("amount", "number", "the amount"),
                        ("from", "string", "ISO currency code, e.g. EUR"),
                        ("to", "string", "ISO currency code, e.g. USD"),
                    ],
                    &["amount", "from", "to"],
                ),
            },
            ToolDef {
                name: "rates",
                description: "Every reference rate, as units of each currency per one unit of the base currency.",
                input_schema: object_schema(&[("base", "string", "ISO currency code (default USD)")], &[]),
            },
        ]
    }

    fn call(&mut self, tool: &str, args: &Map<String, Value>) -> Result<Value, ToolError> {
        match tool {
            "quote" => {
                let wanted = required(args, "symbol")?;
                // A symbol exactly, else a company by name (a unique part of it will do).
                let q = match QUOTES.iter().find(|q| fold(q.0) == fold(wanted)) {
                    Some(q) => q,
                    None => find_one(&QUOTES, |q| q.1, wanted, "company")
                        .map_err(|e| ToolError(format!("{e} (search_symbols finds stocks)")))?,
                };
                Ok(quote_json(q))
            }
            "search_symbols" => {
                let wanted = fold(required(args, "query")?);
                let hits: Vec<Value> = QUOTES
                    .iter()
                    .filter(|q| fold(q.0).contains(&wanted) || fold(q.1).contains(&wanted))
                    .map(|q| json!({ "symbol": q.0, "name": q.1, "exchange": q.2 }))
                    .collect();
                Ok(json!({ "results": hits }))
            }
            "convert" => {
                let amount = args.get("amount").and_then(Value::as_f64).unwrap_or(0.0);
                if !amount.is_finite() || amount.abs() > 1e12 {
                    return Err(ToolError("`amount` must be a finite number below 10^12".into()));
                }
                let (from, to) = (required(args, "from")?, required(args, "to")?);
                let rate = rate(to)? / rate(from)?;
                Ok(json!({
                    "amount": amount,
                    "from": from.trim().to_uppercase(),
                    "to": to.trim().to_uppercase(),
                    "rate": round(rate, 6),
                    "result": round(amount * rate, 2),
                    "as_of": AS_OF,
                }))
            }
            "rates" => {
                let base = args.get("base").and_then(Value::as_str).unwrap_or("USD");
                let per_base = rate(base)?;
                let mut rates = Map::new();
                for (code, _, r) in RATES {
                    rates.insert(code.into(), json!(round(r / per_base, 6)));
                }
                Ok(json!({ "base": base.trim().to_uppercase(), "rates": rates, "as_of": AS_OF }))
            }
            other => Err(ToolError(format!("no tool `{other}`"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, args: Value) -> Result<Value, ToolError> {
        Finance::new().call(tool, args.as_object().unwrap())
    }

    #[test]
    fn conversion_is_fixed_and_rounded() {
        let r = call("convert", json!({"amount": 120, "from": "EUR", "to": "USD"})).unwrap();
        assert_eq!(r["result"], json!(130.43));
        let back = call("convert", json!({"amount": 130.43, "from": "usd", "to": "eur"})).unwrap();
        assert_eq!(back["result"], json!(120.0));
        assert!(
            call("convert", json!({"amount": 1, "from": "XYZ", "to": "USD"})).unwrap_err().0.contains("XYZ")
        );
    }

    #[test]
    fn quotes_by_symbol_or_name() {
        let q = call("quote", json!({"symbol": "northwind traders"})).unwrap();
        assert_eq!(q["symbol"], "NWND");
        assert_eq!(q["change"], json!(1.17));
        assert_eq!(
            call("search_symbols", json!({"query": "ware"})).unwrap()["results"].as_array().unwrap().len(),
            2
        );
        assert_eq!(call("quote", json!({"symbol": "litware"})).unwrap()["symbol"], "LITW");
        assert!(call("quote", json!({"symbol": "ZZZ"})).is_err());
    }
}
