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
    /// Other apps whose databases this app's templates may read (`query_app`).
    pub reads: Vec<String>,
    /// Read-only content indexes, by name.
    pub search: BTreeMap<String, SearchSpec>,
    /// System settings this app owns (`[system]`), as Android's Settings app owns the theme.
    pub system: SystemSettings,
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
}

/// Phone-wide settings an app provides, each a SQL query over its own database that the phone
/// runs after every change of app state.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SystemSettings {
    /// `dark_theme`: a query whose first column of its first row is true (non-zero) when the
    /// phone should draw in its dark theme.
    pub dark_theme: Option<String>,
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
    reads: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    search: BTreeMap<String, Spanned<SearchRepr>>,
    #[serde(default)]
    system: Option<SystemRepr>,
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
    let dark_theme = repr.system.and_then(|s| s.dark_theme);
    let dark_theme_line = dark_theme.as_ref().map(|d| at(d.span())).unwrap_or(0);
    Ok(Manifest {
        lines: ManifestLines { entry: at(repr.entry.span()), reads: reads_line, dark_theme: dark_theme_line },
        system: SystemSettings { dark_theme: dark_theme.map(Spanned::into_inner) },
        id: repr.id.into_inner(),
        name: repr.name.into_inner(),
        package: repr.package.into_inner(),
        entry: repr.entry.into_inner(),
        icon: repr.icon.unwrap_or_else(|| "apps".to_string()),
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
