//! App packages: apps defined as data, loaded once and checked.
//!
//! A package is a folder (see `docs/app-format.md`): `app.toml`, `schema.sql`, `seed.sql`,
//! `content/*.jsonl`, `screens/*.xml` templates and `actions.toml`. [`AppPackage::load`] reads
//! it, builds the pristine database and its snapshot, compiles every template, parses every
//! action and checks everything that can be checked without running it: each failure is a
//! [`LoadError`] naming file and line. [`Catalog`] loads several packages and checks what
//! crosses between them (`open_app`, `reads`).
//!
//! Running a package (rendering, input, state) is `phonebench-phone`'s job.

pub mod actions;
pub mod error;
pub mod manifest;
pub mod sandbox;
pub mod sql;
pub mod templates;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use phonebench_search::{ContentIndex, FieldSpec, IndexSpec};
use rusqlite::Connection;

pub use actions::{
    ActionDef, Choice, DialogOption, DialogSpec, NotifySpec, PickerSpec, ScheduleSpec, ScheduleWhen, Step,
    StepDef,
};
pub use error::LoadError;
pub use manifest::{IntentFilter, Manifest, ScreenSpec, SearchSpec, SystemSettings};
pub use templates::{DATA_KEY, DataSource, RenderData, RowHeights, WindowSlice};

/// The virtual clock's start: 2026-03-02 09:00:00 UTC, a Monday morning (ms since the epoch).
pub const CLOCK_START_MS: i64 = 1_772_442_000_000;

/// A loaded, checked app package.
#[derive(Debug)]
pub struct AppPackage {
    /// A number no other package loaded in this process has: what is derived from the
    /// package's files alone (a parse of its markup) can be shared under it.
    pub serial: u64,
    /// The manifest.
    pub manifest: Manifest,
    /// The folder it was loaded from.
    pub dir: PathBuf,
    /// Screen name → template file (partials, whose names start with `_`, are not screens).
    pub screens: BTreeMap<String, PathBuf>,
    /// The compiled templates (screens under `<name>.xml`, partials under their file names).
    pub env: minijinja::Environment<'static>,
    /// Named actions.
    pub actions: BTreeMap<String, ActionDef>,
    /// Path of `actions.toml`, for errors found at run time.
    pub actions_file: PathBuf,
    /// Read-only content indexes by name.
    pub indexes: BTreeMap<String, Arc<ContentIndex>>,
    /// The pristine database (after schema and seed), serialized: what every reset restores.
    pub snapshot: Vec<u8>,
    /// Pictures in `assets/` by file name → their key (`asset:…`), decoded and kept by
    /// [`phonebench_pixels::assets`]: what `src="asset:NAME"` and `icon="asset:NAME"` draw.
    pub assets: BTreeMap<String, String>,
    /// Per screen: the names its template may read from the render context (its own free
    /// names and every partial's, since a macro runs on its caller's context), so that the
    /// phone renders a screen again only when something it can read changed.
    pub screen_reads: BTreeMap<String, ContextReads>,
}

/// Which of the render context's changing values a screen's template can read
/// ([`AppPackage::screen_reads`]). Conservative: a name that appears free anywhere the screen
/// may reach counts as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextReads {
    /// `now` (the clock cut to the screen's tick).
    pub now: bool,
    /// `fields` (what the screen's text fields hold).
    pub fields: bool,
    /// `clipboard`.
    pub clipboard: bool,
}

impl ContextReads {
    /// Everything: what a screen whose reads are unknown gets.
    pub const ALL: ContextReads = ContextReads { now: true, fields: true, clipboard: true };

    fn of(names: &std::collections::HashSet<String>) -> ContextReads {
        // `debug()` prints the whole context.
        let all = names.contains("debug");
        ContextReads {
            now: all || names.contains("now"),
            fields: all || names.contains("fields"),
            clipboard: all || names.contains("clipboard"),
        }
    }
}

/// [`ContextReads`] for every screen of `env`: a screen's own free names and the partials'.
fn screen_reads(
    env: &minijinja::Environment<'static>,
    screens: &BTreeMap<String, PathBuf>,
) -> BTreeMap<String, ContextReads> {
    let mut partials = std::collections::HashSet::new();
    for (name, template) in env.templates() {
        if name.starts_with('_') {
            partials.extend(template.undeclared_variables(false));
        }
    }
    screens
        .keys()
        .map(|screen| {
            let mut names = partials.clone();
            match env.get_template(&AppPackage::template_name(screen)) {
                Ok(template) => names.extend(template.undeclared_variables(false)),
                Err(_) => return (screen.clone(), ContextReads::ALL),
            }
            (screen.clone(), ContextReads::of(&names))
        })
        .collect()
}

impl AppPackage {
    /// What screen `screen`'s template can read of the changing context ([`ContextReads::ALL`]
    /// for a screen the package does not have).
    pub fn reads_of(&self, screen: &str) -> ContextReads {
        self.screen_reads.get(screen).copied().unwrap_or(ContextReads::ALL)
    }

    /// The template name of a screen.
    pub fn template_name(screen: &str) -> String {
        format!("{screen}.xml")
    }

    /// Loads and checks the package in `dir`.
    pub fn load(dir: &Path) -> Result<AppPackage, LoadError> {
        let manifest_file = dir.join("app.toml");
        let manifest_text = read(dir, &manifest_file)?;
        let mut manifest = manifest::parse_manifest(&manifest_file, &manifest_text)?;

        let schema_file = dir.join("schema.sql");
        let schema = read(dir, &schema_file)?;
        let seed_file = dir.join("seed.sql");
        let seed = if present(&seed_file) { read(dir, &seed_file)? } else { String::new() };
        let (conn, snapshot) = sql::build_snapshot(&schema_file, &schema, &seed_file, &seed)?;

        let (env, screens, sources) = load_templates(dir)?;
        let actions_file = dir.join("actions.toml");
        let actions = if present(&actions_file) {
            actions::parse_actions(&actions_file, &read(dir, &actions_file)?)?
        } else {
            BTreeMap::new()
        };
        let mut indexes = BTreeMap::new();
        for (name, spec) in &manifest.search {
            let file = dir.join(&spec.file);
            inside_package(dir, &file).map_err(|m| {
                LoadError::at(
                    &manifest_file,
                    spec.line,
                    format!("search index `{name}`: {}: {m}", file.display()),
                )
            })?;
            let text = fs::read_to_string(&file).map_err(|e| {
                LoadError::at(
                    &manifest_file,
                    spec.line,
                    format!("search index `{name}`: cannot read {}: {e}", file.display()),
                )
            })?;
            let index_spec = IndexSpec {
                fields: spec
                    .fields
                    .iter()
                    .map(|(f, boost)| FieldSpec { name: f.clone(), boost: *boost })
                    .collect(),
            };
            let index = ContentIndex::from_jsonl(&file.display().to_string(), &text, &index_spec)
                .map_err(|e| LoadError::file(&file, e.to_string()))?;
            indexes.insert(name.clone(), Arc::new(index));
        }

        let assets = load_assets(dir)?;
        let screen_reads = screen_reads(&env, &screens);
        // A launcher icon of the package's own (`icon = "asset:logo.svg"`) is drawn by its key.
        if let Some(name) = manifest.icon.strip_prefix(phonebench_pixels::assets::ASSET) {
            manifest.icon = assets.get(name.trim()).cloned().ok_or_else(|| {
                LoadError::file(
                    &manifest_file,
                    format!("icon `{}`: no `assets/{}` in the package", manifest.icon, name.trim()),
                )
            })?;
        }
        static SERIALS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let package = AppPackage {
            serial: SERIALS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            manifest,
            dir: dir.to_path_buf(),
            screens,
            env,
            actions,
            actions_file,
            indexes,
            snapshot,
            assets,
            screen_reads,
        };
        package.check(&manifest_file, &conn, &sources)?;
        Ok(package)
    }

    /// Checks references inside the package: entry screen, handlers named in templates, screens
    /// and actions named by steps, SQL against the schema, expressions and message templates.
    fn check(
        &self,
        manifest_file: &Path,
        conn: &Connection,
        sources: &[(PathBuf, String)],
    ) -> Result<(), LoadError> {
        if !self.screens.contains_key(&self.manifest.entry) {
            return Err(LoadError::at(
                manifest_file,
                self.manifest.lines.entry,
                format!("entry screen `{}` does not exist ({})", self.manifest.entry, self.screen_list()),
            ));
        }
        let unknown_action = |line: usize, what: &str, action: &str| {
            LoadError::at(
                manifest_file,
                line,
                format!("{what} names unknown action `{action}` ({})", self.action_list()),
            )
        };
        for (name, spec) in &self.manifest.screens {
            if !self.screens.contains_key(name) {
                return Err(LoadError::at(
                    manifest_file,
                    spec.line,
                    format!("[screens.{name}]: there is no screen `{name}` ({})", self.screen_list()),
                ));
            }
            if let Some(init) = &spec.init
                && !self.actions.contains_key(init)
            {
                return Err(unknown_action(spec.line, &format!("[screens.{name}] init"), init));
            }
        }
        if let Some(boot) = &self.manifest.boot
            && !self.actions.contains_key(boot)
        {
            return Err(unknown_action(self.manifest.lines.boot, "boot", boot));
        }
        if let Some(share) = &self.manifest.share
            && let Some(action) = &share.action
            && !self.actions.contains_key(action)
        {
            return Err(unknown_action(share.line, "[share] action", action));
        }
        if let Some(pick) = &self.manifest.pick
            && let Some(screen) = &pick.screen
            && !self.screens.contains_key(screen)
        {
            return Err(LoadError::at(
                manifest_file,
                pick.line,
                format!("[pick] screen `{screen}` does not exist ({})", self.screen_list()),
            ));
        }
        if let Some(sql) = &self.manifest.system.dark_theme {
            conn.query_row(sql, [], |row| row.get::<_, rusqlite::types::Value>(0)).map_err(|e| {
                LoadError::at(
                    manifest_file,
                    self.manifest.lines.dark_theme,
                    format!(
                        "[system] dark_theme: the query fails on the seeded database: {}",
                        sandbox::explain(&e)
                    ),
                )
            })?;
        }
        for (file, source) in sources {
            for (line, attribute, action) in templates::literal_handlers(source) {
                if !self.actions.contains_key(action) {
                    return Err(LoadError::at(
                        file,
                        line,
                        format!("{attribute} names unknown action `{action}` ({})", self.action_list()),
                    ));
                }
            }
            if let Some((pos, reason)) = sandbox::host_clock_in_template(source) {
                return Err(LoadError::at(file, error::line_of(source, pos), reason));
            }
        }
        let file = &self.actions_file;
        for action in self.actions.values() {
            for (name, step) in actions::referenced_actions(action) {
                if !self.actions.contains_key(name) {
                    return Err(LoadError::at(
                        file,
                        step.line,
                        format!(
                            "action `{}` refers to unknown action `{name}` ({})",
                            action.name,
                            self.action_list()
                        ),
                    ));
                }
            }
            for step in &action.steps {
                self.check_step(conn, &action.name, step)?;
            }
        }
        Ok(())
    }

    fn check_step(&self, conn: &Connection, action: &str, step: &StepDef) -> Result<(), LoadError> {
        let fail = |message: String| {
            LoadError::at(&self.actions_file, step.line, format!("action `{action}`: {message}"))
        };
        let check_sql = |sql: &str| -> Result<(), LoadError> {
            if let Some(reason) = sandbox::host_clock_in_text(sql) {
                return Err(fail(reason));
            }
            let statements = sql::split_statements(sql);
            if statements.len() != 1 {
                return Err(fail(format!(
                    "a step runs exactly one SQL statement, this has {}",
                    statements.len()
                )));
            }
            conn.prepare(sql).map(|_| ()).map_err(|e| fail(format!("SQL error: {}", sandbox::explain(&e))))
        };
        let check_expr = |expr: &str| -> Result<(), LoadError> {
            self.env
                .compile_expression(expr)
                .map(|_| ())
                .map_err(|e| fail(format!("bad expression `{expr}`: {e}")))
        };
        let check_template = |text: &str| -> Result<(), LoadError> {
            self.env
                .template_from_str(text)
                .map(|_| ())
                .map_err(|e| fail(format!("bad message template `{text}`: {e}")))
        };
        let check_screen = |screen: &str| -> Result<(), LoadError> {
            if self.screens.contains_key(screen) {
                Ok(())
            } else {
                Err(fail(format!("unknown screen `{screen}` ({})", self.screen_list())))
            }
        };
        match &step.step {
            Step::Sql { sql, app: None } => check_sql(sql)?,
            // Checked against the other app's schema with the catalog (`Catalog::new`).
            Step::Sql { app: Some(_), .. } => {}
            Step::Schedule(spec) => {
                match &spec.when {
                    ScheduleWhen::At(e) | ScheduleWhen::After(e) => check_expr(e)?,
                    ScheduleWhen::Rows(sql) => check_sql(sql)?,
                }
                spec.args.iter().try_for_each(|(_, e)| check_expr(e))?;
                spec.key.iter().try_for_each(|e| check_expr(e))?;
            }
            Step::Cancel { key } => check_expr(key)?,
            Step::Notify(spec) => {
                check_template(&spec.title)?;
                spec.text.iter().try_for_each(|t| check_template(t))?;
                spec.screen.iter().try_for_each(|s| check_screen(s))?;
                spec.args.iter().try_for_each(|(_, e)| check_expr(e))?;
                spec.key.iter().try_for_each(|e| check_expr(e))?;
            }
            Step::Share { values } | Step::Return { values } => {
                values.iter().try_for_each(|(_, e)| check_expr(e))?
            }
            Step::Pick { mime, .. } => check_template(mime)?,
            Step::Query { sql, app: None, .. } => check_sql(sql)?,
            // Checked against the other app's schema with the catalog (`Catalog::new`).
            Step::Query { app: Some(_), .. } => {}
            Step::If { cond, then, otherwise } => {
                check_expr(cond)?;
                for nested in then.iter().chain(otherwise) {
                    self.check_step(conn, action, nested)?;
                }
            }
            Step::Call { args, .. } => args.iter().try_for_each(|(_, e)| check_expr(e))?,
            Step::Fill { fields } => fields.iter().try_for_each(|(_, e)| check_expr(e))?,
            Step::DatePicker(p) | Step::TimePicker(p) => {
                p.value.iter().try_for_each(|v| check_expr(v))?;
                p.title.iter().try_for_each(|t| check_template(t))?;
            }
            Step::Guard { sql, toast } => {
                check_sql(sql)?;
                if let Some(t) = toast {
                    check_template(t)?;
                }
            }
            Step::Navigate { screen, dynamic, args } => {
                if *dynamic {
                    check_expr(screen)?
                } else {
                    check_screen(screen)?
                }
                args.iter().try_for_each(|(_, e)| check_expr(e))?;
            }
            Step::Replace { screen, args } => {
                check_screen(screen)?;
                args.iter().try_for_each(|(_, e)| check_expr(e))?;
            }
            Step::Set { vars } => vars.iter().try_for_each(|(_, e)| check_expr(e))?,
            Step::Emit { data, .. } => data.iter().try_for_each(|(_, e)| check_expr(e))?,
            Step::OpenApp { args, .. } => args.iter().try_for_each(|(_, e)| check_expr(e))?,
            Step::Copy { expr } => check_expr(expr)?,
            Step::Toast { message } => check_template(message)?,
            Step::Dialog(d) => {
                for text in d.title.iter().chain(d.message.iter()) {
                    check_template(text)?;
                }
                for b in &d.buttons {
                    check_template(&b.label)?;
                }
                for o in &d.options {
                    check_template(&o.label)?;
                    check_template(&o.value)?;
                }
                if let Some(s) = &d.selected {
                    check_expr(s)?;
                }
                if let Some(sql) = &d.choices_sql {
                    check_sql(sql)?;
                }
                if let Some((hint, value)) = &d.input {
                    check_template(hint)?;
                    value.iter().try_for_each(|v| check_expr(v))?;
                }
            }
            Step::Menu { items, items_sql, .. } => {
                items.iter().try_for_each(|i| check_template(&i.label))?;
                items_sql.iter().try_for_each(|sql| check_sql(sql))?;
            }
            Step::Back { .. } | Step::Clear { .. } | Step::Paste { .. } => {}
        }
        Ok(())
    }

    /// Checks a statement another app runs on this app's database (`{ sql, app }` with
    /// `writes`): one statement, valid against this app's schema, nothing the sandbox refuses.
    fn check_foreign_sql(&self, sql: &str) -> Result<(), String> {
        if let Some(reason) = sandbox::host_clock_in_text(sql) {
            return Err(reason);
        }
        let statements = sql::split_statements(sql);
        if statements.len() != 1 {
            return Err(format!("a step runs exactly one SQL statement, this has {}", statements.len()));
        }
        let mut conn = Connection::open_in_memory().map_err(|e| e.to_string())?;
        sql::install_functions(&conn, || 0, || 0).map_err(|e| e.to_string())?;
        let budget = sandbox::install(&mut conn, sandbox::Profile::App, sandbox::Deadline::default())
            .map_err(|e| format!("cannot set up the SQLite sandbox: {e}"))?;
        sandbox::deserialize(&mut conn, sandbox::Profile::App, &budget, &self.snapshot, false)
            .map_err(|e| format!("cannot open app `{}`'s database: {e}", self.manifest.id))?;
        conn.prepare(sql).map(|_| ()).map_err(|e| {
            format!("SQL error on app `{}`'s database: {}", self.manifest.id, sandbox::explain(&e))
        })
    }

    fn screen_list(&self) -> String {
        format!("screens: {}", self.screens.keys().cloned().collect::<Vec<_>>().join(", "))
    }

    fn action_list(&self) -> String {
        if self.actions.is_empty() {
            "there are no actions".to_string()
        } else {
            format!("actions: {}", self.actions.keys().cloned().collect::<Vec<_>>().join(", "))
        }
    }
}

/// Reads a file of the package in `dir`, refusing one that is or passes through a symbolic link.
fn read(dir: &Path, file: &Path) -> Result<String, LoadError> {
    inside_package(dir, file).map_err(|m| LoadError::file(file, m))?;
    fs::read_to_string(file).map_err(|e| LoadError::file(file, format!("cannot read: {e}")))
}

/// Whether a path exists as an entry (a dangling symbolic link counts, so that it is reported).
fn present(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

/// Checks that `path` names something inside the package folder `dir` without following a link:
/// no `..`, no absolute part, and no symbolic link on the way (a link could lead anywhere on the
/// host, so packages may not contain any; the package folder itself may be one).
fn inside_package(dir: &Path, path: &Path) -> Result<(), String> {
    let relative = path.strip_prefix(dir).map_err(|_| "is outside the package folder".to_string())?;
    let mut at = dir.to_path_buf();
    for component in relative.components() {
        let std::path::Component::Normal(part) = component else {
            return Err(format!("`{}` leaves the package folder", relative.display()));
        };
        at.push(part);
        if fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            let which = if at == path { String::new() } else { format!(" ({})", at.display()) };
            return Err(format!(
                "is a symbolic link{which}: packages may not contain links (they could reach outside the package folder)"
            ));
        }
    }
    Ok(())
}

/// A package's compiled templates, its screens, and every template's source (for the checks).
type Templates = (minijinja::Environment<'static>, BTreeMap<String, PathBuf>, Vec<(PathBuf, String)>);

/// Compiles `screens/*.xml`: names starting with `_` are partials (for `{% include %}` and
/// `{% import %}`), the rest are screens named by their file stem.
fn load_templates(dir: &Path) -> Result<Templates, LoadError> {
    let screens_dir = dir.join("screens");
    inside_package(dir, &screens_dir).map_err(|m| LoadError::file(&screens_dir, m))?;
    let entries = fs::read_dir(&screens_dir)
        .map_err(|e| LoadError::file(&screens_dir, format!("cannot list screens: {e}")))?;
    let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    let mut env = templates::new_environment();
    let mut screens = BTreeMap::new();
    let mut sources = Vec::new();
    for file in files {
        let Some(name) = file.file_name().and_then(|n| n.to_str()).map(str::to_string) else { continue };
        let Some(stem) = name.strip_suffix(".xml") else { continue };
        if !stem.starts_with('_') {
            if !actions::is_identifier(stem) {
                return Err(LoadError::file(
                    &file,
                    format!("screen name `{stem}` must be letters, digits and `_`"),
                ));
            }
            screens.insert(stem.to_string(), file.clone());
        }
        let source = read(dir, &file)?;
        env.add_template_owned(name.clone(), source.clone())
            .map_err(|e| templates::template_error(&file, &e))?;
        sources.push((file, source));
    }
    if screens.is_empty() {
        return Err(LoadError::file(&screens_dir, "no screens (`<name>.xml` files)"));
    }
    load_shared_partials(dir, &mut env, &mut sources)?;
    Ok((env, screens, sources))
}

/// The most files a package's `assets/` may hold, and their most bytes together.
pub const MAX_ASSETS: usize = 256;
/// See [`MAX_ASSETS`].
pub const MAX_ASSETS_BYTES: u64 = 32 * 1024 * 1024;

/// Decodes `assets/*.png|jpg|jpeg|svg` (when the folder exists): each must be a picture the
/// decoder reads within its limits (`phonebench_pixels::assets`), or loading fails naming it.
fn load_assets(dir: &Path) -> Result<BTreeMap<String, String>, LoadError> {
    let assets_dir = dir.join("assets");
    if !present(&assets_dir) {
        return Ok(BTreeMap::new());
    }
    inside_package(dir, &assets_dir).map_err(|m| LoadError::file(&assets_dir, m))?;
    let entries = fs::read_dir(&assets_dir)
        .map_err(|e| LoadError::file(&assets_dir, format!("cannot list assets: {e}")))?;
    let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    if files.len() > MAX_ASSETS {
        return Err(LoadError::file(&assets_dir, format!("has {} files; at most {MAX_ASSETS}", files.len())));
    }
    let mut assets = BTreeMap::new();
    let mut total = 0u64;
    for file in files {
        let Some(name) = file.file_name().and_then(|n| n.to_str()).map(str::to_string) else {
            return Err(LoadError::file(&file, "an asset's name must be UTF-8"));
        };
        if name.starts_with('.') {
            continue;
        }
        let Some(kind) = phonebench_pixels::assets::AssetKind::from_file_name(&name) else {
            return Err(LoadError::file(
                &file,
                "is not a picture: assets are .png, .jpg / .jpeg or .svg files",
            ));
        };
        if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')) {
            return Err(LoadError::file(&file, "an asset's name is letters, digits, `_`, `-` and `.`"));
        }
        inside_package(dir, &file).map_err(|m| LoadError::file(&file, m))?;
        let size =
            fs::metadata(&file).map_err(|e| LoadError::file(&file, format!("cannot read: {e}")))?.len();
        total += size;
        if size > phonebench_pixels::assets::MAX_ASSET_BYTES as u64 || total > MAX_ASSETS_BYTES {
            return Err(LoadError::file(
                &file,
                format!(
                    "is too large: an asset may have {} bytes, all of a package's {MAX_ASSETS_BYTES}",
                    phonebench_pixels::assets::MAX_ASSET_BYTES
                ),
            ));
        }
        let bytes = fs::read(&file).map_err(|e| LoadError::file(&file, format!("cannot read: {e}")))?;
        let key = phonebench_pixels::assets::register(kind, &bytes).map_err(|m| LoadError::file(&file, m))?;
        assets.insert(name, key);
    }
    Ok(assets)
}

/// The folder beside the packages whose partials every package may include or import as
/// `_shared/<file>.xml` (`apps/_shared/`).
pub const SHARED_PARTIALS: &str = "_shared";

/// Adds `<apps>/_shared/*.xml` (when the folder exists beside the package) as templates named
/// `_shared/<file>`. The folder is read under the same rules as a package's own files: no
/// links, nothing outside it.
fn load_shared_partials(
    dir: &Path,
    env: &mut minijinja::Environment<'static>,
    sources: &mut Vec<(PathBuf, String)>,
) -> Result<(), LoadError> {
    let Some(apps_dir) = dir.parent() else { return Ok(()) };
    let shared = apps_dir.join(SHARED_PARTIALS);
    match fs::symlink_metadata(&shared) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(LoadError::file(&shared, "is a symbolic link: shared partials may not be links"));
        }
        Ok(m) if m.is_dir() => {}
        _ => return Ok(()),
    }
    let entries = fs::read_dir(&shared)
        .map_err(|e| LoadError::file(&shared, format!("cannot list shared partials: {e}")))?;
    let mut files: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    for file in files {
        let Some(name) = file.file_name().and_then(|n| n.to_str()).map(str::to_string) else { continue };
        if !name.ends_with(".xml") {
            continue;
        }
        let source = read(&shared, &file)?;
        env.add_template_owned(format!("{SHARED_PARTIALS}/{name}"), source.clone())
            .map_err(|e| templates::template_error(&file, &e))?;
        sources.push((file, source));
    }
    Ok(())
}

/// Several packages, checked together.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    apps: Vec<Arc<AppPackage>>,
}

impl Catalog {
    /// Loads every package folder under `dir` (each sub-folder with an `app.toml`), in name order.
    pub fn load_dir(dir: &Path) -> Result<Catalog, LoadError> {
        let entries =
            fs::read_dir(dir).map_err(|e| LoadError::file(dir, format!("cannot list apps: {e}")))?;
        let mut folders: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("app.toml").is_file())
            .collect();
        folders.sort();
        if folders.is_empty() {
            return Err(LoadError::file(dir, "no app packages (folders with an app.toml)"));
        }
        let apps = folders.iter().map(|f| AppPackage::load(f)).collect::<Result<Vec<_>, _>>()?;
        Catalog::new(apps)
    }

    /// Checks `apps` together: ids are unique, `open_app` and `reads` name installed apps and
    /// existing screens.
    pub fn new(apps: Vec<AppPackage>) -> Result<Catalog, LoadError> {
        let apps: Vec<Arc<AppPackage>> = apps.into_iter().map(Arc::new).collect();
        for (i, app) in apps.iter().enumerate() {
            if let Some(other) = apps[..i].iter().find(|o| o.manifest.id == app.manifest.id) {
                return Err(LoadError::file(
                    &app.dir.join("app.toml"),
                    format!("app id `{}` is also used by {}", app.manifest.id, other.dir.display()),
                ));
            }
        }
        let find = |id: &str| apps.iter().find(|a| a.manifest.id == id);
        for app in &apps {
            for read in &app.manifest.reads {
                if find(read).is_none() {
                    return Err(LoadError::at(
                        &app.dir.join("app.toml"),
                        app.manifest.lines.reads,
                        format!("`reads` names app `{read}`, which is not installed"),
                    ));
                }
            }
            for write in &app.manifest.writes {
                if find(write).is_none() {
                    return Err(LoadError::at(
                        &app.dir.join("app.toml"),
                        app.manifest.lines.writes,
                        format!("`writes` names app `{write}`, which is not installed"),
                    ));
                }
            }
            for action in app.actions.values() {
                for step in actions::flat_steps(&action.steps) {
                    if let Step::Sql { sql, app: Some(target) } = &step.step {
                        let fail = |m: String| {
                            LoadError::at(
                                &app.actions_file,
                                step.line,
                                format!("action `{}`: {m}", action.name),
                            )
                        };
                        if !app.manifest.writes.contains(target) {
                            return Err(fail(format!(
                                "SQL on app `{target}`'s database needs `writes = [\"{target}\"]` in app.toml"
                            )));
                        }
                        if let Some(other) = find(target) {
                            other.check_foreign_sql(sql).map_err(fail)?;
                        }
                    }
                    if let Step::Query { sql, app: Some(target), .. } = &step.step {
                        let fail = |m: String| {
                            LoadError::at(
                                &app.actions_file,
                                step.line,
                                format!("action `{}`: {m}", action.name),
                            )
                        };
                        if !app.manifest.reads.contains(target) && !app.manifest.writes.contains(target) {
                            return Err(fail(format!(
                                "a query on app `{target}`'s database needs `reads = [\"{target}\"]` in app.toml"
                            )));
                        }
                        if let Some(other) = find(target) {
                            other.check_foreign_sql(sql).map_err(fail)?;
                        }
                    }
                    if let Step::OpenApp { app: target, screen, .. } = &step.step {
                        let fail = |m: String| {
                            LoadError::at(
                                &app.actions_file,
                                step.line,
                                format!("action `{}`: {m}", action.name),
                            )
                        };
                        let Some(other) = find(target) else {
                            return Err(fail(format!(
                                "open_app names app `{target}`, which is not installed"
                            )));
                        };
                        if let Some(screen) = screen
                            && !other.screens.contains_key(screen)
                        {
                            return Err(fail(format!(
                                "app `{target}` has no screen `{screen}` ({})",
                                other.screen_list()
                            )));
                        }
                    }
                }
            }
        }
        Ok(Catalog { apps })
    }

    /// The packages, in load order.
    pub fn apps(&self) -> &[Arc<AppPackage>] {
        &self.apps
    }

    /// The package with id `id`.
    pub fn get(&self, id: &str) -> Option<&Arc<AppPackage>> {
        self.apps.iter().find(|a| a.manifest.id == id)
    }

    /// A catalog of the packages whose ids are listed (in the given order), checked together.
    pub fn subset(&self, ids: &[&str]) -> Result<Catalog, String> {
        let mut apps = Vec::new();
        for id in ids {
            apps.push(self.get(id).cloned().ok_or_else(|| format!("app `{id}` is not installed"))?);
        }
        Ok(Catalog { apps })
    }
}
