//! Screen templates: the minijinja environment of a package, the functions templates read state
//! with, and the checks made on template sources at load time.

use std::fmt::{self, Write as _};
use std::path::Path;
use std::sync::Arc;

use minijinja::value::{Kwargs, Object};
use minijinja::{AutoEscape, Environment, Error, ErrorKind, State, UndefinedBehavior, Value};

use crate::error::{LoadError, line_of};

/// Where templates read state from while a screen renders: the phone implements this over its
/// live databases and content indexes.
pub trait DataSource: Send + Sync + fmt::Debug {
    /// Rows (maps from column name to value) of a read-only statement on the rendering app's
    /// database (`app == None`) or on another app's (`query_app`).
    fn query(&self, app: Option<&str>, sql: &str, params: &[(String, Value)]) -> Result<Vec<Value>, String>;
    /// Hits of a content index: the stored document plus `score`.
    fn search(&self, index: &str, text: &str, limit: usize) -> Result<Vec<Value>, String>;
    /// Which of a list's rows to render, and the dp that the skipped rows above and below take
    /// (see [`WindowSlice`]): the template function `window` asks for a list whose rows are
    /// `heights` high with `gap` dp between rows, starting `before` dp into the scroll container
    /// `list`. A source that does not know where the container is scrolled renders every row.
    fn window(&self, list: &str, heights: &RowHeights, gap: f64, before: f64) -> WindowSlice {
        let _ = (list, gap, before);
        WindowSlice { first: 0, last: heights.len(), above: 0.0, below: 0.0 }
    }
    /// Pixels per dp of the display the screen renders for (`text_height` rounds a text's
    /// height up to whole pixels, as the layout does). 1 when unknown.
    fn density(&self) -> f32 {
        1.0
    }
}

/// The heights of a `window` list's rows, in dp.
#[derive(Debug, Clone, PartialEq)]
pub enum RowHeights {
    /// `rows` rows, each this high.
    Uniform {
        /// Rows in the list.
        rows: usize,
        /// Each row's height, dp.
        height: f64,
    },
    /// Each row's own height.
    PerRow(Vec<f64>),
}

impl RowHeights {
    /// Rows in the list.
    pub fn len(&self) -> usize {
        match self {
            RowHeights::Uniform { rows, .. } => *rows,
            RowHeights::PerRow(h) => h.len(),
        }
    }

    /// Whether the list has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i`'s height, dp.
    pub fn get(&self, i: usize) -> f64 {
        match self {
            RowHeights::Uniform { height, .. } => *height,
            RowHeights::PerRow(h) => h.get(i).copied().unwrap_or(0.0),
        }
    }
}

/// What a `window` renders: rows `first..last`, and the dp the skipped rows take above and
/// below them (0 when none is skipped on that side) for `<Gap>`s to stand in for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowSlice {
    /// The first row rendered.
    pub first: usize,
    /// One past the last row rendered.
    pub last: usize,
    /// dp of the rows skipped above (and the gaps between them).
    pub above: f64,
    /// dp of the rows skipped below.
    pub below: f64,
}

/// The most dp a `window` row or gap may be: far beyond any screen, small enough that row
/// counts times it stay exact in an `f64`.
const MAX_WINDOW_DP: f64 = 100_000.0;

/// The most rows a `window` list may have.
const MAX_WINDOW_ROWS: usize = 100_000;

fn window_error(message: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, message)
}

/// `window(rows, list, height, gap=0, before=0)`: the rows of `rows` a virtualised list renders
/// now (see [`DataSource::window`]), with the heights of the skipped rows above and below so a
/// `<Gap>` can stand in for them: `{rows, first, above, below}` (`above` / `below` are 0 when no
/// row is skipped on that side). `height` is every row's height in dp (a number), the name of a
/// column of `rows` holding each row's height, or a list with each row's height.
fn window(state: &State, rows: Value, list: String, height: Value, kwargs: Kwargs) -> Result<Value, Error> {
    let gap: Option<f64> = kwargs.get("gap")?;
    let before: Option<f64> = kwargs.get("before")?;
    kwargs.assert_all_used()?;
    let (gap, before) = (gap.unwrap_or(0.0), before.unwrap_or(0.0));
    let bad = |what: &str, v: f64, min: f64| {
        (!v.is_finite() || v < min || v > MAX_WINDOW_DP).then(|| {
            window_error(format!(
                "window: `{what}` must be a number of dp from {min} to {MAX_WINDOW_DP}, not {v}"
            ))
        })
    };
    if let Some(e) = bad("gap", gap, 0.0).or(bad("before", before, 0.0)) {
        return Err(e);
    }
    let n = rows.len().ok_or_else(|| window_error("window: `rows` must be a list (of query rows)".into()))?;
    if n > MAX_WINDOW_ROWS {
        return Err(window_error(format!("window: at most {MAX_WINDOW_ROWS} rows, not {n}")));
    }
    let number = |v: &Value, what: &str| -> Result<f64, Error> {
        let h = f64::try_from(v.clone())
            .map_err(|_| window_error(format!("window: {what} must be a number of dp, not `{v}`")))?;
        match bad("height", h, 1.0) {
            Some(e) => Err(e),
            None => Ok(h),
        }
    };
    let heights = if let Some(column) = height.as_str() {
        let mut per_row = Vec::with_capacity(n);
        for i in 0..n {
            let row = rows.get_item_by_index(i)?;
            let h = row.get_attr(column)?;
            per_row.push(number(&h, &format!("row {i}'s `{column}`"))?);
        }
        RowHeights::PerRow(per_row)
    } else if let Ok(h) = f64::try_from(height.clone()) {
        RowHeights::Uniform { rows: n, height: number(&Value::from(h), "`height`")? }
    } else {
        let per_row = height
            .try_iter()
            .map_err(|_| {
                window_error(format!(
                    "window: `height` must be a number of dp, a column name or a list of heights, not `{height}`"
                ))
            })?
            .enumerate()
            .map(|(i, h)| number(&h, &format!("height {i}")))
            .collect::<Result<Vec<_>, _>>()?;
        if per_row.len() != n {
            return Err(window_error(format!("window: {} heights for {n} rows", per_row.len())));
        }
        RowHeights::PerRow(per_row)
    };
    let slice = data_source(state)?.window(&list, &heights, gap, before);
    let first = slice.first.min(n);
    let last = slice.last.min(n).max(first);
    let shown = (first..last).map(|i| rows.get_item_by_index(i)).collect::<Result<Vec<_>, _>>()?;
    Ok(Value::from_pairs([
        ("rows", Value::from(shown)),
        ("first", Value::from(first)),
        ("above", Value::from(if first == 0 { 0.0 } else { slice.above })),
        ("below", Value::from(if last == n { 0.0 } else { slice.below })),
    ]))
}

/// `text_height(size, lines=1)`: the dp a text of `lines` lines at `size` sp takes in the
/// layout (its line height, 1.2 × its size, times its lines, rounded up to whole pixels at the
/// display's density), for the row heights of a `window` list.
fn text_height(state: &State, size: f64, lines: Option<u32>, kwargs: Kwargs) -> Result<Value, Error> {
    let named: Option<u32> = kwargs.get("lines")?;
    kwargs.assert_all_used()?;
    let lines = lines.or(named);
    if !size.is_finite() || !(1.0..=1000.0).contains(&size) {
        return Err(window_error(format!("text_height: `size` must be from 1 to 1000 sp, not {size}")));
    }
    let lines = lines.unwrap_or(1).clamp(1, 1000);
    let d = data_source(state)?.density();
    // As `phonebench_text` measures (in f32) and the layout rounds up.
    let px = (lines as f32 * ((size as f32 * d) * 1.2f32)).ceil();
    Ok(Value::from(f64::from(px) / f64::from(d)))
}

/// The context entry through which template functions reach the [`DataSource`].
pub const DATA_KEY: &str = "__data";

/// Wraps a [`DataSource`] as a template value (put it in the context under [`DATA_KEY`]).
#[derive(Debug)]
pub struct RenderData(pub Arc<dyn DataSource>);

impl Object for RenderData {}

fn data_source(state: &State) -> Result<Arc<dyn DataSource>, Error> {
    state
        .lookup(DATA_KEY)
        .and_then(|v| v.downcast_object_ref::<RenderData>().map(|d| d.0.clone()))
        .ok_or_else(|| Error::new(ErrorKind::InvalidOperation, "no app state is available here"))
}

fn params(kwargs: &Kwargs) -> Result<Vec<(String, Value)>, Error> {
    kwargs.args().map(|name| Ok((name.to_string(), kwargs.get::<Value>(name)?))).collect()
}

fn query_rows(state: &State, app: Option<&str>, sql: &str, kwargs: &Kwargs) -> Result<Vec<Value>, Error> {
    let params = params(kwargs)?;
    data_source(state)?.query(app, sql, &params).map_err(|m| Error::new(ErrorKind::InvalidOperation, m))
}

/// Formats milliseconds since the epoch (UTC) with a strftime pattern, refusing bad patterns with
/// an error rather than a panic.
pub fn format_datetime(ms: i64, pattern: &str) -> Result<String, String> {
    format_datetime_in(ms, pattern, None)
}

/// [`format_datetime`] in an IANA time zone (`Europe/Berlin`, `Asia/Tokyo`; `None`: UTC, the
/// phone's zone). The zone database is compiled in, so the result never depends on the host.
pub fn format_datetime_in(ms: i64, pattern: &str, zone: Option<&str>) -> Result<String, String> {
    use chrono::format::{Item, StrftimeItems};
    let items: Vec<Item> = StrftimeItems::new(pattern).collect();
    if items.iter().any(|i| matches!(i, Item::Error)) {
        return Err(format!("bad datetime pattern `{pattern}`"));
    }
    let time =
        chrono::DateTime::from_timestamp_millis(ms).ok_or_else(|| format!("time {ms} is out of range"))?;
    let mut out = String::new();
    let written = match zone {
        None => write!(out, "{}", time.format_with_items(items.into_iter())),
        Some(name) => {
            let tz: chrono_tz::Tz = name
                .parse()
                .map_err(|_| format!("unknown time zone `{name}` (use IANA names like `Europe/Berlin`)"))?;
            write!(out, "{}", time.with_timezone(&tz).format_with_items(items.into_iter()))
        }
    };
    written.map_err(|_| format!("cannot format time with `{pattern}`"))?;
    Ok(out)
}

/// Fuel for one screen render. minijinja charges one unit per instruction and a 64th of a unit
/// per byte a value holds or an operation produces, and refuses an operation whose result the
/// remaining fuel could not pay for: so this bounds both a render's work and, with
/// [`bounded_join`], the size of any string it builds (at most 64 bytes a unit, 128 MB). Real
/// screens take thousands; a 10,000-row list, a few hundred thousand.
pub const SCREEN_FUEL: u64 = 2_000_000;

/// The longest string the `join` filter may build in a package or task template.
pub const MAX_JOINED_BYTES: usize = 4 << 20;

/// Replaces minijinja's `join` filter with one that first checks the size of what it would
/// build. minijinja charges `join` per item but, with an empty separator, not for the items'
/// bytes, so `[s, s, s, s]|join` nested a few times fills memory before fuel runs out.
pub fn bounded_join(env: &mut Environment<'_>) {
    env.add_filter("join", join_within_limit);
}

fn join_within_limit(
    state: &mut State,
    value: &Value,
    joiner: Option<minijinja::value::StringInput<'_>>,
    attribute: Option<&str>,
    kwargs: Kwargs,
) -> Result<Value, Error> {
    let separator = joiner.as_ref().map_or(0, |j| j.as_str().len());
    // An item's own text bounds what it (or one of its attributes) contributes.
    let mut total = 0usize;
    if let Ok(items) = value.try_iter() {
        for item in items {
            let len = item.as_str().map_or_else(|| item.to_string().len(), str::len);
            total = total.saturating_add(len).saturating_add(separator);
            if total > MAX_JOINED_BYTES {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("join would build a string over {MAX_JOINED_BYTES} bytes (the limit)"),
                ));
            }
        }
    }
    minijinja::filters::join(state, value, joiner, attribute, kwargs)
}

/// Whether XML 1.0 forbids `c` anywhere in a document (its `Char` production).
pub fn not_xml_char(c: char) -> bool {
    !matches!(c, '\t' | '\n' | '\r' | ' '..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Whether `s` holds no character the formatter must rewrite: no control character (line
/// breaks and tabs included) and no U+FFFE / U+FFFF (whose UTF-8 starts `EF BF BE` / `EF BF BF`).
/// Surrogates cannot occur in a `str`, so these are all of [`not_xml_char`].
fn plain_xml_text(s: &str) -> bool {
    let bytes = s.as_bytes();
    !bytes.iter().enumerate().any(|(i, &b)| {
        b < 0x20
            || (b == 0xEF && bytes.get(i + 1) == Some(&0xBF) && matches!(bytes.get(i + 2), Some(0xBE | 0xBF)))
    })
}

/// A fresh environment with the phone's functions and filters and no templates.
///
/// Output of `.xml` templates is XML-escaped (minijinja's HTML escaping, which is valid XML), so
/// values, including everything an agent typed, cannot change the layout's structure.
pub fn new_environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_auto_escape_callback(
        |name| if name.ends_with(".xml") { AutoEscape::Html } else { AutoEscape::None },
    );
    // Characters XML cannot hold at all (NUL and most C0 controls, U+FFFE, U+FFFF) are written
    // as U+FFFD: text an agent typed (or any stored value) must never make a screen unparseable.
    // Line breaks and tabs in values are written as character references: values land in
    // attributes, where a literal line break would be normalised to a space by the XML parser
    // (a multi-line note or mail body would lose its lines).
    env.set_formatter(|out, state, value| match value.as_str() {
        // Most values are plain text: one pass over the bytes says so (this runs for every
        // value a screen prints).
        Some(s) if plain_xml_text(s) => minijinja::escape_formatter(out, state, value),
        Some(s)
            if !value.is_safe()
                && matches!(state.auto_escape(), AutoEscape::Html)
                && s.chars().any(|c| not_xml_char(c) || matches!(c, '\n' | '\r' | '\t')) =>
        {
            let cleaned: String = s.chars().map(|c| if not_xml_char(c) { '\u{FFFD}' } else { c }).collect();
            let escaped = minijinja::HtmlEscape(&cleaned).to_string();
            let escaped = escaped.replace('\n', "&#10;").replace('\r', "&#13;").replace('\t', "&#9;");
            out.write_str(&escaped).map_err(Error::from)
        }
        Some(s) if s.chars().any(not_xml_char) => {
            let cleaned: String = s.chars().map(|c| if not_xml_char(c) { '\u{FFFD}' } else { c }).collect();
            let cleaned =
                if value.is_safe() { Value::from_safe_string(cleaned) } else { Value::from(cleaned) };
            minijinja::escape_formatter(out, state, &cleaned)
        }
        _ => minijinja::escape_formatter(out, state, value),
    });
    // A misspelt name is an error where it is printed or used, not an empty string; `if x`,
    // `x or ''` and `x | default(..)` still test for absence.
    env.set_undefined_behavior(UndefinedBehavior::SemiStrict);
    // Packages are untrusted: a screen whose template loops without end fails, it does not hang.
    env.set_fuel(Some(SCREEN_FUEL));
    bounded_join(&mut env);
    env.add_function("window", window);
    env.add_function("text_height", text_height);
    env.add_function("query", |state: &State, sql: String, kwargs: Kwargs| -> Result<Value, Error> {
        Ok(Value::from(query_rows(state, None, &sql, &kwargs)?))
    });
    env.add_function("query_one", |state: &State, sql: String, kwargs: Kwargs| -> Result<Value, Error> {
        Ok(query_rows(state, None, &sql, &kwargs)?.into_iter().next().unwrap_or(Value::from(())))
    });
    env.add_function("query_value", |state: &State, sql: String, kwargs: Kwargs| -> Result<Value, Error> {
        let row = query_rows(state, None, &sql, &kwargs)?.into_iter().next();
        Ok(match row {
            Some(row) => match row.try_iter().ok().and_then(|mut keys| keys.next()) {
                Some(first) => row.get_item(&first).unwrap_or(Value::from(())),
                None => Value::from(()),
            },
            None => Value::from(()),
        })
    });
    env.add_function(
        "query_app",
        |state: &State, app: String, sql: String, kwargs: Kwargs| -> Result<Value, Error> {
            Ok(Value::from(query_rows(state, Some(&app), &sql, &kwargs)?))
        },
    );
    env.add_function(
        "search",
        |state: &State,
         index: String,
         text: Option<String>,
         limit: Option<usize>,
         kwargs: Kwargs|
         -> Result<Value, Error> {
            // `limit` positionally or by name (`search('pages', q, limit=12)`), as the docs show.
            let named: Option<usize> = kwargs.get("limit")?;
            kwargs.assert_all_used()?;
            if limit.is_some() && named.is_some() {
                return Err(Error::new(ErrorKind::InvalidOperation, "search: `limit` given twice"));
            }
            let limit = limit.or(named);
            let text = text.unwrap_or_default();
            let hits = data_source(state)?
                .search(&index, &text, limit.unwrap_or(20).min(200))
                .map_err(|m| Error::new(ErrorKind::InvalidOperation, m))?;
            Ok(Value::from(hits))
        },
    );
    env.add_filter("datetime", |ms: i64, pattern: String, kwargs: Kwargs| -> Result<String, Error> {
        let zone: Option<String> = kwargs.get("tz")?;
        kwargs.assert_all_used()?;
        format_datetime_in(ms, &pattern, zone.as_deref())
            .map_err(|m| Error::new(ErrorKind::InvalidOperation, m))
    });
    // A calendar date as apps keep it ('2026-03-02', or with ' HH:MM'), formatted like `datetime`.
    env.add_filter("date", |text: String, pattern: String| -> Result<String, Error> {
        let parsed = chrono::NaiveDateTime::parse_from_str(&text, "%Y-%m-%d %H:%M")
            .or_else(|_| {
                chrono::NaiveDate::parse_from_str(&text, "%Y-%m-%d")
                    .map(|d| d.and_time(chrono::NaiveTime::MIN))
            })
            .map_err(|_| {
                Error::new(ErrorKind::InvalidOperation, format!("`{text}` is not a date (YYYY-MM-DD)"))
            })?;
        format_datetime_in(parsed.and_utc().timestamp_millis(), &pattern, None)
            .map_err(|m| Error::new(ErrorKind::InvalidOperation, m))
    });
    env
}

/// Turns a minijinja error into a [`LoadError`] at the template file and source line it names:
/// `file` is the screen's template; an error inside a partial it includes names the partial's
/// file (beside it in `screens/`).
pub fn template_error(file: &Path, err: &Error) -> LoadError {
    // An error inside an include or a macro is wrapped ("could not render include"): the
    // innermost error that names a place is the cause, at its own file and line.
    let mut err = err;
    while let Some(inner) = std::error::Error::source(err).and_then(|s| s.downcast_ref::<Error>()) {
        if inner.line().is_none() {
            break;
        }
        err = inner;
    }
    let mut message = err.kind().to_string();
    if let Some(detail) = err.detail() {
        message = format!("{message}: {detail}");
    }
    let named = err.name().filter(|name| Some(std::ffi::OsStr::new(name)) != file.file_name());
    let file = match named {
        // Only template names without a path (the package's own files) map to a file, and
        // `_shared/<file>` to the shared partials beside the packages.
        Some(name) if !name.contains(['/', '\\']) && name.ends_with(".xml") => file.with_file_name(name),
        Some(name)
            if name
                .strip_prefix("_shared/")
                .is_some_and(|n| !n.contains(['/', '\\']) && n.ends_with(".xml")) =>
        {
            match file.parent().and_then(Path::parent).and_then(Path::parent) {
                Some(apps) => apps.join(name),
                None => file.to_path_buf(),
            }
        }
        _ => file.to_path_buf(),
    };
    let file = file.as_path();
    match err.line() {
        Some(line) => LoadError::at(file, line, message),
        None => LoadError::file(file, message),
    }
}

/// The event attributes a layout element may carry.
pub const EVENT_ATTRIBUTES: [&str; 4] = ["on-click", "on-long-click", "on-change", "on-submit"];

/// Every literal event handler in a template source (`on-click="save"`), with its line, so a
/// misspelt action name fails at load time. Values computed by the template (`{{ }}`) are checked
/// when the screen renders.
pub fn literal_handlers(source: &str) -> Vec<(usize, &str, &str)> {
    let mut out = Vec::new();
    for attribute in EVENT_ATTRIBUTES {
        let needle = format!("{attribute}=\"");
        let mut from = 0;
        while let Some(pos) = source[from..].find(&needle) {
            let at = from + pos;
            let value_start = at + needle.len();
            from = value_start;
            let boundary = at == 0 || source.as_bytes()[at - 1].is_ascii_whitespace();
            let Some(len) = source[value_start..].find('"') else { break };
            let value = &source[value_start..value_start + len];
            if boundary && !value.contains('{') {
                out.push((line_of(source, at), attribute, value));
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_text_fast_path_agrees_with_the_character_rules() {
        let samples = [
            "plain",
            "",
            "tab\there",
            "line\nbreak",
            "cr\r",
            "nul\0",
            "bell\u{7}",
            "del\u{7f}",
            "\u{FFFD} ok",
            "\u{FFFE}",
            "x\u{FFFF}y",
            "\u{EFBF}",
            "é漢🎉",
            "\u{E000}\u{FFFC}",
        ];
        for s in samples {
            let slow = !s.chars().any(|c| not_xml_char(c) || matches!(c, '\n' | '\r' | '\t'));
            assert_eq!(plain_xml_text(s), slow, "{s:?}");
        }
        for c in (0u32..0x3_0000).filter_map(char::from_u32) {
            let s = c.to_string();
            let slow = !(not_xml_char(c) || matches!(c, '\n' | '\r' | '\t'));
            assert_eq!(plain_xml_text(&s), slow, "{c:?}");
        }
    }

    #[test]
    fn undefined_names_are_errors_where_used_but_may_be_tested() {
        let env = new_environment();
        let render = |source: &str| {
            env.render_str(source, minijinja::context! { args => minijinja::context! { x => 1 } })
        };
        let err = render("<A text=\"{{ args.nmae }}\"/>").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UndefinedError, "{err}");
        assert!(render("{{ nope }}").is_err());
        assert_eq!(render("{% if args.y %}y{% else %}n{% endif %}").unwrap(), "n");
        assert_eq!(
            render("{{ args.y or 'none' }}|{{ args.y | default('d') }}|{{ args.x }}").unwrap(),
            "none|d|1"
        );
    }

    #[test]
    fn datetime_formats_and_refuses_bad_patterns() {
        // 2026-03-02 09:00:00 UTC
        assert_eq!(format_datetime(1_772_442_000_000, "%Y-%m-%d %H:%M").unwrap(), "2026-03-02 09:00");
        assert_eq!(format_datetime(1_772_442_000_000, "%b %-d").unwrap(), "Mar 2");
        assert!(format_datetime(0, "%Q").is_err());
        // 09:00 UTC on 2 March 2026: Berlin is an hour ahead, New York five behind, and Sydney
        // (daylight saving in March) eleven ahead, on the next day's calendar only after 13:00.
        let ms = 1_772_442_000_000;
        assert_eq!(format_datetime_in(ms, "%H:%M", Some("Europe/Berlin")).unwrap(), "10:00");
        assert_eq!(format_datetime_in(ms, "%H:%M %:z", Some("America/New_York")).unwrap(), "04:00 -05:00");
        assert_eq!(format_datetime_in(ms, "%a %H:%M", Some("Australia/Sydney")).unwrap(), "Mon 20:00");
        assert!(
            format_datetime_in(ms, "%H", Some("Mars/Olympus")).unwrap_err().contains("unknown time zone")
        );
    }

    #[test]
    fn finds_literal_handlers_with_lines() {
        let src =
            "<A on-click=\"open\"/>\n<B data-on-click=\"x\" on-change=\"{{ a }}\"\n on-submit=\"send\"/>";
        assert_eq!(literal_handlers(src), vec![(1, "on-click", "open"), (3, "on-submit", "send")]);
    }

    #[test]
    fn xml_templates_escape_values() {
        let mut env = new_environment();
        env.add_template_owned("s.xml", "<T text=\"{{ v }}\"/>").unwrap();
        let out = env
            .get_template("s.xml")
            .unwrap()
            .render(minijinja::context! { v => "\"/><X a=\"{{ 7*7 }}" })
            .unwrap();
        let doc = roxmltree::Document::parse(&out).expect("escaped output is XML");
        assert_eq!(doc.root_element().attribute("text"), Some("\"/><X a=\"{{ 7*7 }}"), "{out}");
    }

    #[test]
    fn characters_xml_cannot_hold_become_replacement_characters() {
        let mut env = new_environment();
        env.add_template_owned("s.xml", "<T text=\"{{ v }}\" n=\"{{ n }}\"/>").unwrap();
        let out = env
            .get_template("s.xml")
            .unwrap()
            .render(minijinja::context! { v => "a\u{0}b\u{1}c\u{b}d\u{FFFE}e\tf\u{1F600}\ng", n => 3 })
            .unwrap();
        let doc = roxmltree::Document::parse(&out).expect("the output is XML");
        assert_eq!(
            doc.root_element().attribute("text"),
            Some("a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}e\tf\u{1F600}\ng"),
            "tabs and line breaks in values survive the attribute (written as character references)"
        );
        assert_eq!(doc.root_element().attribute("n"), Some("3"));
        assert!(
            not_xml_char('\u{0}') && not_xml_char('\u{FFFF}') && !not_xml_char('\n') && !not_xml_char('é')
        );
    }
}

#[cfg(test)]
mod data_tests {
    use super::*;

    #[derive(Debug)]
    struct Fixed;
    impl DataSource for Fixed {
        fn query(&self, _: Option<&str>, sql: &str, _: &[(String, Value)]) -> Result<Vec<Value>, String> {
            Ok(vec![Value::from(sql.to_string())])
        }
        fn search(&self, _: &str, _: &str, _: usize) -> Result<Vec<Value>, String> {
            Ok(Vec::new())
        }
    }

    fn render(source: &str) -> Result<String, Error> {
        let mut env = new_environment();
        env.add_template_owned("s.xml", source.to_string()).unwrap();
        let ctx = Value::from_pairs([(DATA_KEY, Value::from_object(RenderData(Arc::new(Fixed))))]);
        env.get_template("s.xml").unwrap().render(ctx)
    }

    #[test]
    fn window_takes_one_height_a_column_of_heights_or_a_list_of_them() {
        let rows = "[{'h': 10}, {'h': 20.5}, {'h': 30}]";
        for height in ["48", "'h'", "[1, 2, 3]", "[10, 20] + [30]"] {
            let out = render(&format!(
                "{{% set w = window({rows}, 'list', {height}) %}}{{{{ w.first }}}} {{{{ w.rows | length }}}} {{{{ w.above }}}} {{{{ w.below }}}}"
            ))
            .unwrap();
            assert_eq!(out, "0 3 0.0 0.0", "{height}");
        }
        for (height, error) in [
            ("'x'", "window"),
            ("[1, 2]", "2 heights for 3 rows"),
            ("0", "height"),
            ("[1, 'a', 3]", "height 1"),
            ("'h', gap=-1", "gap"),
        ] {
            let e = render(&format!("{{% set w = window({rows}, 'list', {height}) %}}")).unwrap_err();
            assert!(format!("{e:#}").contains(error), "{height}: {e:#}");
        }
    }

    #[test]
    fn text_height_rounds_a_text_up_to_whole_pixels() {
        // The fixed source's density is 1: 16 sp at 1.2 is 19.2 px, 20 once rounded up.
        assert_eq!(render("{{ text_height(16) }}").unwrap(), "20.0");
        assert_eq!(render("{{ text_height(14, lines=2) }}").unwrap(), "34.0");
        assert!(render("{{ text_height(0) }}").is_err());
    }

    #[test]
    fn functions_reach_the_data_source() {
        let mut env = new_environment();
        env.add_template_owned("s.xml", "{% set rows = query('x') %}{{ rows[0] }}").unwrap();
        let ctx = Value::from_pairs([(DATA_KEY, Value::from_object(RenderData(Arc::new(Fixed))))]);
        assert_eq!(env.get_template("s.xml").unwrap().render(ctx).unwrap(), "x");
    }
}
