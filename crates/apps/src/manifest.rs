//! `app.toml`: who the app is and where it starts.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::error::{LoadError, line_of, toml_error};

/// An app's manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// How tasks and `open_app` name the app: lowercase `[a-z0-9_]`.
    pub id: String,
    /// Launcher label; agents may also open the app by this name.
    pub name: String,
    /// Android package: the `package` of every node and the resource-id prefix.
    pub package: String,
    /// The screen the app starts on.
    pub entry: String,
    /// Launcher icon name (for the screenshot renderer).
    pub icon: String,
    /// The app's store category (`Productivity`, `Communication`, ...), as questions about the
    /// app name it (the knowledge probe); optional.
    pub category: Option<String>,
    /// Other apps whose databases this app's templates may read (`query_app`).
    pub reads: Vec<String>,
    /// Read-only content indexes, by name.
    pub search: BTreeMap<String, SearchSpec>,
    /// System settings this app owns (`[system]`), as Android's Settings app owns the theme.
    pub system: SystemSettings,
    /// Other apps whose databases this app's actions may write (`{ sql = .., app = .. }`), as
    /// apps share the phone's file store (the Files app's database).
    pub writes: Vec<String>,
    /// Per-screen settings (`[screens.NAME]`), by screen name.
    pub screens: BTreeMap<String, ScreenSpec>,
    /// An action run in the background when the phone starts or resets (after task setup too),
    /// e.g. to schedule incoming mail.
    pub boot: Option<String>,
    /// What this app accepts from the share sheet (`[share]`).
    pub share: Option<IntentFilter>,
    /// What this app can pick and return to another app (`[pick]`).
    pub pick: Option<IntentFilter>,
    /// Lines of fields that later checks point at.
    pub(crate) lines: ManifestLines,
}

/// Where some manifest values sit, for errors found after parsing (an entry screen that does not
/// exist, a `reads` app that is not installed).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ManifestLines {
    pub entry: usize,
    pub reads: usize,
    pub dark_theme: usize,
    pub writes: usize,
    pub boot: usize,
}

/// Phone-wide settings an app provides, each a SQL query over its own database that the phone
/// runs after every change of app state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SystemSettings {
    /// `dark_theme`: a query whose first column of its first row is true (non-zero) when the
    /// phone should draw in its dark theme.
    pub dark_theme: Option<String>,
}

/// `[screens.NAME]`: settings of one screen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScreenSpec {
    /// An action run when the screen is pushed, before its first render (fills edit forms).
    pub init: Option<String>,
    /// How finely the screen sees time (ms): `now` in its template is the clock cut to this, and
    /// the screen renders anew when it changes. Default: a minute, as a phone's clock shows it.
    pub tick_ms: Option<i64>,
    /// Line of the table, for errors found later (unknown screen or action).
    pub line: usize,
}

/// `[share]` / `[pick]`: the MIME types an app handles and where such a request enters it.
#[derive(Debug, Clone, PartialEq)]
pub struct IntentFilter {
    /// MIME types, `type/subtype` or `type/*` or `*/*`.
    pub mime: Vec<String>,
    /// `[share]`: the action run (in this app, in front) with the shared values.
    /// `[pick]`: unused.
    pub action: Option<String>,
    /// `[pick]`: the screen opened to choose something; unused for `[share]`.
    pub screen: Option<String>,
    /// Line of the table.
    pub line: usize,
}

impl IntentFilter {
    /// Whether this filter takes `mime` (`image/png` matches `image/*` and `*/*`).
    pub fn accepts(&self, mime: &str) -> bool {
        let (kind, _) = mime.split_once('/').unwrap_or((mime, ""));
        self.mime.iter().any(|m| {
            m == "*/*"
                || m.eq_ignore_ascii_case(mime)
                || m.strip_suffix("/*").is_some_and(|k| k.eq_ignore_ascii_case(kind))
        })
    }
}

/// One read-only content index.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchSpec {
    /// JSON Lines file, relative to the app folder.
    pub file: String,
    /// Searchable fields with their BM25 boosts, in name order.
    pub fields: Vec<(String, f32)>,
    /// Line of the `[search.<name>]` table in `app.toml`.
    pub line: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ManifestRepr {
    id: Spanned<String>,
    name: Spanned<String>,
    package: Spanned<String>,
    entry: Spanned<String>,
    #[serde(default)]
    icon: Option<String>,
    #[serde(default)]
    category: Option<String>,
    #[serde(default)]
    reads: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    search: BTreeMap<String, Spanned<SearchRepr>>,
    #[serde(default)]
    system: Option<SystemRepr>,
    #[serde(default)]
    writes: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    screens: BTreeMap<String, Spanned<ScreenRepr>>,
    #[serde(default)]
    boot: Option<Spanned<String>>,
    #[serde(default)]
    share: Option<Spanned<FilterRepr>>,
    #[serde(default)]
    pick: Option<Spanned<FilterRepr>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScreenRepr {
    #[serde(default)]
    init: Option<String>,
    #[serde(default)]
    tick: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FilterRepr {
    mime: Vec<String>,
    #[serde(default)]
    action: Option<String>,
    #[serde(default)]
    screen: Option<String>,
}

/// Reads a tick: milliseconds as a number, or `500ms`, `1s`, `1m`. At least 100 ms.
fn parse_tick(value: &toml::Value) -> Result<i64, String> {
    let ms = match value {
        toml::Value::Integer(n) => Some(*n),
        toml::Value::String(s) => {
            let s = s.trim();
            let (digits, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
            let n: Option<i64> = digits.parse().ok();
            match unit.trim() {
                "ms" | "" => n,
                "s" => n.and_then(|n| n.checked_mul(1_000)),
                "m" | "min" => n.and_then(|n| n.checked_mul(60_000)),
                _ => None,
            }
        }
        _ => None,
    };
    match ms {
        Some(ms) if (100..=86_400_000).contains(&ms) => Ok(ms),
        _ => {
            let shown = match value {
                toml::Value::String(s) => format!("{s:?}"),
                toml::Value::Integer(n) => n.to_string(),
                _ => "that".to_string(),
            };
            Err(format!("`tick` must be a duration from 100 ms to a day (`1s`, `500ms`, `1m`), not {shown}"))
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SystemRepr {
    #[serde(default)]
    dark_theme: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchRepr {
    file: String,
    fields: BTreeMap<String, f32>,
}

/// Parses `app.toml` text; `file` is used in errors.
pub fn parse_manifest(file: &Path, text: &str) -> Result<Manifest, LoadError> {
    let repr: ManifestRepr = toml::from_str(text).map_err(|e| toml_error(file, text, &e))?;
    let at = |span: std::ops::Range<usize>| line_of(text, span.start);

    let id = repr.id.get_ref();
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
        return Err(LoadError::at(
            file,
            at(repr.id.span()),
            format!("app id `{id}` must be lowercase letters, digits and `_`"),
        ));
    }
    let package = repr.package.get_ref();
    let package_ok = package.split('.').count() >= 2
        && package
            .split('.')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
    if !package_ok {
        return Err(LoadError::at(
            file,
            at(repr.package.span()),
            format!("package `{package}` is not an Android package name like `com.example.app`"),
        ));
    }
    if repr.name.get_ref().trim().is_empty() {
        return Err(LoadError::at(file, at(repr.name.span()), "app `name` is empty"));
    }
    let mut search = BTreeMap::new();
    for (name, spec) in repr.search {
        let line = at(spec.span());
        let spec = spec.into_inner();
        if spec.fields.is_empty() {
            return Err(LoadError::at(file, line, format!("search index `{name}` has no `fields`")));
        }
        if let Some((field, boost)) = spec.fields.iter().find(|(_, b)| !b.is_finite() || **b <= 0.0) {
            return Err(LoadError::at(
                file,
                line,
                format!("search index `{name}`: boost of `{field}` must be a positive number, not {boost}"),
            ));
        }
        search.insert(name, SearchSpec { file: spec.file, fields: spec.fields.into_iter().collect(), line });
    }
    let (reads, reads_line) = match repr.reads {
        Some(reads) => {
            let line = at(reads.span());
            (reads.into_inner(), line)
        }
        None => (Vec::new(), 0),
    };
    let (writes, writes_line) = match repr.writes {
        Some(writes) => {
            let line = at(writes.span());
            (writes.into_inner(), line)
        }
        None => (Vec::new(), 0),
    };
    let mut screens = BTreeMap::new();
    for (name, spec) in repr.screens {
        let line = at(spec.span());
        let spec = spec.into_inner();
        let tick_ms = spec
            .tick
            .as_ref()
            .map(parse_tick)
            .transpose()
            .map_err(|m| LoadError::at(file, line, format!("[screens.{name}]: {m}")))?;
        screens.insert(name, ScreenSpec { init: spec.init, tick_ms, line });
    }
    let filter = |repr: Option<Spanned<FilterRepr>>,
                  table: &str|
     -> Result<Option<IntentFilter>, LoadError> {
        let Some(repr) = repr else { return Ok(None) };
        let line = at(repr.span());
        let repr = repr.into_inner();
        if repr.mime.is_empty() {
            return Err(LoadError::at(file, line, format!("[{table}] needs at least one `mime` type")));
        }
        if let Some(bad) = repr.mime.iter().find(|m| {
            let mut parts = m.split('/');
            !matches!((parts.next(), parts.next(), parts.next()), (Some(a), Some(b), None) if !a.is_empty() && !b.is_empty())
        }) {
            return Err(LoadError::at(file, line, format!("[{table}] mime `{bad}` is not `type/subtype`")));
        }
        match (table, &repr.action, &repr.screen) {
            ("share", None, _) => {
                return Err(LoadError::at(
                    file,
                    line,
                    "[share] needs the `action` that receives what is shared",
                ));
            }
            ("share", _, Some(_)) => {
                return Err(LoadError::at(file, line, "[share] takes an `action`, not a `screen`"));
            }
            ("pick", _, None) => {
                return Err(LoadError::at(file, line, "[pick] needs the `screen` where the user picks"));
            }
            ("pick", Some(_), _) => {
                return Err(LoadError::at(file, line, "[pick] takes a `screen`, not an `action`"));
            }
            _ => {}
        }
        Ok(Some(IntentFilter { mime: repr.mime, action: repr.action, screen: repr.screen, line }))
    };
    let share = filter(repr.share, "share")?;
    let pick = filter(repr.pick, "pick")?;
    let (boot, boot_line) = match repr.boot {
        Some(b) => {
            let line = at(b.span());
            (Some(b.into_inner()), line)
        }
        None => (None, 0),
    };
    let dark_theme = repr.system.and_then(|s| s.dark_theme);
    let dark_theme_line = dark_theme.as_ref().map(|d| at(d.span())).unwrap_or(0);
    Ok(Manifest {
        lines: ManifestLines {
            entry: at(repr.entry.span()),
            reads: reads_line,
            dark_theme: dark_theme_line,
            writes: writes_line,
            boot: boot_line,
        },
        writes,
        screens,
        boot,
        share,
        pick,
        system: SystemSettings { dark_theme: dark_theme.map(Spanned::into_inner) },
        id: repr.id.into_inner(),
        name: repr.name.into_inner(),
        package: repr.package.into_inner(),
        entry: repr.entry.into_inner(),
        icon: repr.icon.unwrap_or_else(|| "apps".to_string()),
        category: repr.category,
        reads,
        search,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Manifest, LoadError> {
        parse_manifest(Path::new("app.toml"), text)
    }

    #[test]
    fn reads_a_full_manifest() {
        let m = parse(
            "id = \"notes\"\nname = \"Notes\"\npackage = \"com.example.notes\"\nentry = \"list\"\n\
             reads = [\"contacts\"]\n[search.help]\nfile = \"content/help.jsonl\"\nfields = { title = 2.0, body = 1.0 }\n",
        )
        .unwrap();
        assert_eq!(m.id, "notes");
        assert_eq!(m.icon, "apps");
        assert_eq!(m.reads, vec!["contacts".to_string()]);
        assert_eq!(m.lines.entry, 4);
        let help = &m.search["help"];
        assert_eq!(help.fields, vec![("body".to_string(), 1.0), ("title".to_string(), 2.0)]);
        assert_eq!(help.line, 6);
    }

    const HEAD: &str = "id = \"n\"\nname = \"N\"\npackage = \"com.x.y\"\nentry = \"a\"\n";

    #[test]
    fn reads_screens_intents_boot_and_writes() {
        let m = parse(&format!(
            "{HEAD}writes = [\"files\"]\nboot = \"schedule_mail\"\n[screens.timer]\ntick = \"1s\"\n\
             [screens.edit]\ninit = \"load\"\ntick = 250\n[share]\nmime = [\"image/*\", \"text/plain\"]\n\
             action = \"receive\"\n[pick]\nmime = [\"image/*\"]\nscreen = \"picker\"\n"
        ))
        .unwrap();
        assert_eq!(m.writes, vec!["files".to_string()]);
        assert_eq!(m.boot.as_deref(), Some("schedule_mail"));
        assert_eq!(m.screens["timer"].tick_ms, Some(1_000));
        assert_eq!(m.screens["edit"].tick_ms, Some(250));
        assert_eq!(m.screens["edit"].init.as_deref(), Some("load"));
        assert_eq!(m.screens["edit"].line, 9);
        let share = m.share.as_ref().unwrap();
        assert!(
            share.accepts("image/jpeg") && share.accepts("text/plain") && !share.accepts("application/pdf")
        );
        assert!(m.pick.as_ref().unwrap().accepts("IMAGE/png"));
    }

    #[test]
    fn bad_screens_and_intents_name_the_line() {
        let e = parse(&format!("{HEAD}[screens.a]\ntick = \"fast\"\n")).unwrap_err();
        assert_eq!(e.line, Some(5), "{e}");
        assert!(e.message.contains("tick"), "{e}");
        let e = parse(&format!("{HEAD}[screens.a]\ntick = 10\n")).unwrap_err();
        assert!(e.message.contains("100 ms"), "{e}");
        let e = parse(&format!("{HEAD}[screens.a]\ninti = \"x\"\n")).unwrap_err();
        assert!(e.message.contains("inti"), "{e}");
        let e = parse(&format!("{HEAD}[share]\nmime = [\"image\"]\naction = \"x\"\n")).unwrap_err();
        assert!(e.message.contains("type/subtype"), "{e}");
        let e = parse(&format!("{HEAD}[share]\nmime = [\"image/*\"]\n")).unwrap_err();
        assert!(e.message.contains("needs the `action`"), "{e}");
        let e = parse(&format!("{HEAD}[pick]\nmime = [\"image/*\"]\naction = \"x\"\n")).unwrap_err();
        assert!(e.message.contains("needs the `screen`"), "{e}");
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("id = \"Notes\"\nname = \"N\"\npackage = \"com.x.y\"\nentry = \"a\"\n").unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("lowercase"), "{e}");
        let e = parse("id = \"n\"\nname = \"N\"\npackage = \"nodots\"\nentry = \"a\"\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        let e =
            parse("id = \"n\"\nname = \"N\"\npackage = \"com.x\"\nentry = \"a\"\ncolour = 1\n").unwrap_err();
        assert_eq!(e.line, Some(5));
        assert!(e.message.contains("colour"), "{e}");
        let e = parse("id = \"n\"\nname = \"N\"\npackage = \"com.x\"\n").unwrap_err();
        assert!(e.message.contains("entry"), "{e}");
    }
}
