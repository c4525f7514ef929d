//! `weather`: daily forecasts for the Contacts' towns and the trip cities of the Calendar
//! (Zurich, London, Lisbon), from 2026-03-01 to 2026-05-31. Each day's weather comes from a
//! seeded hash of (seed, city, day) around the city's seasonal normal, so it is the same on every
//! machine and, for a given seed, fixed.

use chrono::{Datelike, NaiveDate};
use serde_json::{Map, Value, json};

use super::{
    OfflineServer, ToolDef, ToolError, find_one, fnv, mix, object_schema, required, round, text, with_enum,
};

/// A city: name, mean daily high on March 1st (°C), warming per day (°C), day-night spread.
const CITIES: [(&str, f64, f64, f64); 9] = [
    ("Riverton", 11.0, 0.11, 8.0),
    ("Cedar Falls", 10.0, 0.12, 9.0),
    ("Lakeview", 9.0, 0.12, 9.0),
    ("Brookside", 12.0, 0.10, 8.0),
    ("Fairhaven", 12.0, 0.09, 6.0),
    ("Millbrook", 10.0, 0.12, 10.0),
    ("Zurich", 8.0, 0.13, 8.0),
    ("London", 11.0, 0.09, 6.0),
    ("Lisbon", 17.0, 0.08, 7.0),
];

const FIRST_DAY: (i32, u32, u32) = (2026, 3, 1);
const LAST_DAY: (i32, u32, u32) = (2026, 5, 31);

/// The weather server.
pub struct Weather {
    seed: u64,
}

fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap_or_default()
}

impl Weather {
    /// The server for `seed`.
    pub fn new(seed: u64) -> Weather {
        Weather { seed }
    }

    fn parse_date(&self, s: &str) -> Result<NaiveDate, ToolError> {
        let date = NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d")
            .map_err(|_| ToolError(format!("`{s}` is not a date as YYYY-MM-DD")))?;
        let (first, last) =
            (day(FIRST_DAY.0, FIRST_DAY.1, FIRST_DAY.2), day(LAST_DAY.0, LAST_DAY.1, LAST_DAY.2));
        if date < first || date > last {
            return Err(ToolError(format!("no forecast for {date}: forecasts cover {first} to {last}")));
        }
        Ok(date)
    }

    fn day_json(&self, city: &(&str, f64, f64, f64), date: NaiveDate, fahrenheit: bool) -> Value {
        let (name, base, warming, spread) = *city;
        let first = day(FIRST_DAY.0, FIRST_DAY.1, FIRST_DAY.2);
        let n = (date - first).num_days();
        let h = mix(self.seed ^ fnv(name) ^ mix(n as u64));
        let unit = |bits: u64| (bits & 0xffff) as f64 / 65535.0;
        let high = (base + warming * n as f64 + (unit(h) - 0.5) * 10.0).round();
        let low = (high - spread + (unit(h >> 16) - 0.5) * 3.0).round();
        let roll = unit(h >> 32);
        let condition = if roll < 0.30 {
            "sunny"
        } else if roll < 0.52 {
            "partly cloudy"
        } else if roll < 0.68 {
            "cloudy"
        } else if roll < 0.84 {
            if high <= 2.0 { "snow" } else { "rain" }
        } else if roll < 0.96 {
            "showers"
        } else {
            "thunderstorms"
        };
        let precipitation = match condition {
            "sunny" => 0,
            "partly cloudy" => 10,
            "cloudy" => 25,
            "showers" => 60,
            _ => 80 + (unit(h >> 48) * 15.0) as i64,
        };
        let wind = 5 + (unit(h >> 40) * 30.0) as i64;
        let t = |c: f64| if fahrenheit { round(c * 9.0 / 5.0 + 32.0, 0) } else { c };
        let u = if fahrenheit { "°F" } else { "°C" };
        json!({
            "city": name,
            "date": date.to_string(),
            "weekday": date.weekday().to_string(),
            "condition": condition,
            "high": t(high),
            "low": t(low),
            "unit": u,
            "precipitation_chance_percent": precipitation,
            "wind_kmh": wind,
            "summary": format!("{}: {condition}, high {}{u}, low {}{u}, {precipitation}% chance of rain", date.format("%a %b %-d"), t(high), t(low)),
        })
    }

    fn city(&self, args: &Map<String, Value>) -> Result<&'static (&'static str, f64, f64, f64), ToolError> {
        find_one(&CITIES, |c| c.0, required(args, "city")?, "city").map_err(|e| {
            let names: Vec<&str> = CITIES.iter().map(|c| c.0).collect();
            ToolError(format!("{e} (cities: {})", names.join(", ")))
        })
    }
}

impl OfflineServer for Weather {
    fn name(&self) -> &'static str {
        "weather"
    }

    fn instructions(&self) -> &'static str {
        "Daily weather forecasts (2026-03-01 to 2026-05-31) for Riverton, Cedar Falls, Lakeview, Brookside, \
         Fairhaven, Millbrook, Zurich, London and Lisbon."
    }

    fn tools(&self) -> Vec<ToolDef> {
        let units = |s| with_enum(s, "units", &["celsius", "fahrenheit"]);
        vec![
            ToolDef {
                name: "forecast",
                description: "The forecast for one city on one date: condition, high and low temperature, chance of rain, wind.",
                input_schema: units(object_schema(
                    &[
                        ("city", "string", "the city"),
                        ("date", "string", "YYYY-MM-DD"),
                        ("units", "string", "celsius (default) or fahrenheit"),
                    ],
                    &["city", "date"],
                )),
            },
            ToolDef {
                name: "forecast_days",
                description: "Forecasts for a city for up to 7 consecutive days from a start date.",
                input_schema: units(object_schema(
                    &[
                        ("city", "string", "the city"),
                        ("start_date", "string", "YYYY-MM-DD"),
                        ("days", "integer", "how many days (1-7)"),
                        ("units", "string", "celsius (default) or fahrenheit"),
                    ],
                    &["city", "start_date", "days"],
                )),
            },
            ToolDef {
                name: "list_cities",
                description: "The cities with forecasts.",
                input_schema: object_schema(&[], &[]),
            },
        ]
    }

    fn call(&mut self, tool: &str, args: &Map<String, Value>) -> Result<Value, ToolError> {
        let fahrenheit = text(args, "units") == Some("fahrenheit");
        match tool {
            "forecast" => {
                let city = self.city(args)?;
                let date = self.parse_date(required(args, "date")?)?;
                Ok(self.day_json(city, date, fahrenheit))
            }
            "forecast_days" => {
                let city = self.city(args)?;
                let start = self.parse_date(required(args, "start_date")?)?;
                let days =
                    args.get("days").and_then(Value::as_i64).filter(|d| (1..=7).contains(d)).ok_or_else(
                        || {
                            ToolError(format!(
                                "`days` must be 1 to 7, not {}",
                                args.get("days").unwrap_or(&Value::Null)
                            ))
                        },
                    )?;
                let last = day(LAST_DAY.0, LAST_DAY.1, LAST_DAY.2);
                let list: Vec<Value> = (0..days)
                    .map(|i| start + chrono::Duration::days(i))
                    .take_while(|d| *d <= last)
                    .map(|d| self.day_json(city, d, fahrenheit))
                    .collect();
                let mut out = json!({ "city": city.0, "days": list });
                if (list_len(&out) as i64) < days {
                    out["note"] = json!(format!("forecasts end on {last}"));
                }
                Ok(out)
            }
            "list_cities" => Ok(json!({ "cities": CITIES.iter().map(|c| c.0).collect::<Vec<_>>() })),
            other => Err(ToolError(format!("no tool `{other}`"))),
        }
    }
}

fn list_len(v: &Value) -> usize {
    v["days"].as_array().map_or(0, Vec::len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(seed: u64, tool: &str, args: Value) -> Result<Value, ToolError> {
        Weather::new(seed).call(tool, args.as_object().unwrap())
    }

    #[test]
    fn forecasts_are_seeded_and_fixed() {
        let a = call(0, "forecast", json!({"city": "Lisbon", "date": "2026-03-14"})).unwrap();
        assert_eq!(a, call(0, "forecast", json!({"city": "lisbon", "date": "2026-03-14"})).unwrap());
        let days: Vec<Value> = (1..=28)
            .map(|d| {
                call(0, "forecast", json!({"city": "Riverton", "date": format!("2026-03-{d:02}")})).unwrap()
            })
            .collect();
        let other: Vec<Value> = (1..=28)
            .map(|d| {
                call(9, "forecast", json!({"city": "Riverton", "date": format!("2026-03-{d:02}")})).unwrap()
            })
            .collect();
        assert_ne!(days, other, "the seed changes the weather");
        let conditions: std::collections::BTreeSet<&str> =
            days.iter().filter_map(|d| d["condition"].as_str()).collect();
        assert!(conditions.len() >= 3, "{conditions:?}");
        for d in &days {
            assert!(d["low"].as_f64() < d["high"].as_f64(), "{d}");
        }
    }

    #[test]
    fn ranges_units_and_bad_dates() {
        let w = call(0, "forecast_days", json!({"city": "Zurich", "start_date": "2026-05-29", "days": 7}))
            .unwrap();
        assert_eq!(w["days"].as_array().unwrap().len(), 3, "cut at the window's end");
        let c = call(0, "forecast", json!({"city": "London", "date": "2026-04-02"})).unwrap();
        let f = call(0, "forecast", json!({"city": "London", "date": "2026-04-02", "units": "fahrenheit"}))
            .unwrap();
        assert_eq!(f["high"].as_f64().unwrap(), (c["high"].as_f64().unwrap() * 1.8 + 32.0).round());
        assert!(
            call(0, "forecast", json!({"city": "London", "date": "2027-01-01"}))
                .unwrap_err()
                .0
                .contains("cover")
        );
        assert!(
            call(0, "forecast", json!({"city": "London", "date": "soon"})).unwrap_err().0.contains("YYYY")
        );
        assert!(
            call(0, "forecast", json!({"city": "Paris", "date": "2026-04-02"}))
                .unwrap_err()
                .0
                .contains("cities:")
        );
    }
}
