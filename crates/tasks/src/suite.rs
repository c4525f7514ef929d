//! Suites: a folder with `suite.toml` and task files under `tasks/`, or a *view*: a
//! `suite.toml` that names another suite beside it (`base`) and selects some of its tasks
//! (`tasks` patterns, `apps`), so `lite` and `starter` share `full`'s files instead of copying them.

use std::path::{Path, PathBuf};

use phonebench_apps::Catalog;
use phonebench_apps::error::LoadError;
use serde::Deserialize;

use crate::spec::TaskSpec;

/// A suite's own settings (`suite.toml`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteManifest {
    /// Short name.
    pub name: String,
    /// What the suite is for.
    #[serde(default)]
    pub description: String,
    /// Default suite seed (a view without one takes its base's).
    #[serde(default)]
    pub seed: u64,
    /// A view's base: the name of a suite folder beside this one whose tasks it selects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// A view's task patterns (ids or globs, each matching at least one task of the base); all
    /// of the base's tasks when empty.
    #[serde(default)]
    pub tasks: Vec<String>,
    /// A view's apps: only tasks that involve one of them (all when empty).
    #[serde(default)]
    pub apps: Vec<String>,
}

/// `suite.toml` as written: the seed is optional so that a view can inherit its base's.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    name: String,
    #[serde(default)]
    description: String,
    seed: Option<u64>,
    base: Option<String>,
    #[serde(default)]
    tasks: Vec<String>,
    #[serde(default)]
    apps: Vec<String>,
}

/// A loaded suite: its manifest and tasks, sorted by id.
#[derive(Debug, Clone)]
pub struct Suite {
    /// The folder.
    pub dir: PathBuf,
    /// `suite.toml`.
    pub manifest: SuiteManifest,
    /// The tasks, sorted by id.
    pub tasks: Vec<TaskSpec>,
}

impl Suite {
    /// Loads every task of the suite at `dir` (for a view, the selected tasks of its base).
    /// All bad files are reported, one per line.
    pub fn load(dir: &Path) -> Result<Suite, Vec<LoadError>> {
        let manifest_file = dir.join("suite.toml");
        let text = std::fs::read_to_string(&manifest_file)
            .map_err(|e| vec![LoadError::file(&manifest_file, format!("cannot read: {e}"))])?;
        let raw: RawManifest = toml::from_str(&text)
            .map_err(|e| vec![phonebench_apps::error::toml_error(&manifest_file, &text, &e)])?;
        let line_of = |needle: &str| text.lines().position(|l| l.contains(needle)).map_or(1, |i| i + 1);
        let Some(base_name) = raw.base else {
            if !raw.tasks.is_empty() || !raw.apps.is_empty() {
                let key = if raw.tasks.is_empty() { "apps" } else { "tasks" };
                return Err(vec![LoadError::at(
                    &manifest_file,
                    line_of(key),
                    format!("`{key}` selects from a base suite: add `base = \"<suite>\"`, or leave it out"),
                )]);
            }
            let manifest = SuiteManifest {
                name: raw.name,
                description: raw.description,
                seed: raw.seed.unwrap_or(0),
                base: None,
                tasks: Vec::new(),
                apps: Vec::new(),
            };
            return Self::load_folder(dir, manifest);
        };
        let at = |message: String| vec![LoadError::at(&manifest_file, line_of("base"), message)];
        // A view reaches only a folder beside it: a name, never a path.
        if base_name.is_empty()
            || !base_name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(at(format!(
                "`base` is a suite's name beside this one (letters, digits, `_`, `-`), not `{base_name}`"
            )));
        }
        if dir.join("tasks").exists() {
            return Err(at(
                "a view (`base`) selects its base's tasks and has no `tasks/` folder of its own".into()
            ));
        }
        let base_dir = dir.parent().unwrap_or(Path::new(".")).join(&base_name);
        let base_text = std::fs::read_to_string(base_dir.join("suite.toml")).map_err(|e| {
            at(format!(
                "base suite `{base_name}`: cannot read {}: {e}",
                base_dir.join("suite.toml").display()
            ))
        })?;
        // Checked before loading it, so that two views naming each other cannot recurse.
        if toml::from_str::<RawManifest>(&base_text).is_ok_and(|m| m.base.is_some()) {
            return Err(at(format!(
                "base suite `{base_name}` is itself a view: a view selects from a suite with tasks"
            )));
        }
        let base = Self::load(&base_dir)?;
        let mut errors = Vec::new();
        for pattern in &raw.tasks {
            if !base.tasks.iter().any(|t| glob_match(pattern, &t.id)) {
                errors.push(LoadError::at(
                    &manifest_file,
                    line_of(&format!("\"{pattern}\"")),
                    format!("`{pattern}` matches no task of `{base_name}`"),
                ));
            }
        }
        for app in &raw.apps {
            if !base.tasks.iter().any(|t| t.apps.contains(app)) {
                errors.push(LoadError::at(
                    &manifest_file,
                    line_of(&format!("\"{app}\"")),
                    format!("no task of `{base_name}` involves app `{app}`"),
                ));
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let tasks = base
            .tasks
            .into_iter()
            .filter(|t| raw.tasks.is_empty() || raw.tasks.iter().any(|p| glob_match(p, &t.id)))
            .filter(|t| raw.apps.is_empty() || t.apps.iter().any(|a| raw.apps.contains(a)))
            .collect();
        let manifest = SuiteManifest {
            name: raw.name,
            description: raw.description,
            seed: raw.seed.unwrap_or(base.manifest.seed),
            base: Some(base_name),
            tasks: raw.tasks,
            apps: raw.apps,
        };
        Ok(Suite { dir: dir.to_path_buf(), manifest, tasks })
    }

    /// The tasks of this suite that involve `app` (listed in their `apps`), as a suite named
    /// `<name>:<app>`: the per-app sub-suites. `None` when no task involves it.
    pub fn for_app(&self, app: &str) -> Option<Suite> {
        let tasks: Vec<TaskSpec> =
            self.tasks.iter().filter(|t| t.apps.iter().any(|a| a == app)).cloned().collect();
        if tasks.is_empty() {
            return None;
        }
        let mut manifest = self.manifest.clone();
        manifest.name = format!("{}:{app}", self.manifest.name);
        manifest.description = format!("The tasks of `{}` that involve {app}.", self.manifest.name);
        manifest.apps = vec![app.to_string()];
        Some(Suite { dir: self.dir.clone(), manifest, tasks })
    }

    fn load_folder(dir: &Path, manifest: SuiteManifest) -> Result<Suite, Vec<LoadError>> {
        let tasks_dir = dir.join("tasks");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&tasks_dir)
            .map_err(|e| vec![LoadError::file(&tasks_dir, format!("cannot list tasks: {e}"))])?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        let mut tasks = Vec::new();
        let mut errors = Vec::new();
        for file in files {
            // A link could lead anywhere on the host, and a load error would quote what it found.
            if std::fs::symlink_metadata(&file).is_ok_and(|m| m.file_type().is_symlink()) {
                errors.push(LoadError::file(
                    &file,
                    "is a symbolic link: a suite's task files must be regular files inside its folder",
                ));
                continue;
            }
            match TaskSpec::load(&file) {
                Ok(t) => tasks.push(t),
                Err(e) => errors.push(e),
            }
        }
        tasks.sort_by(|a, b| a.id.cmp(&b.id));
        for pair in tasks.windows(2) {
            if pair[0].id == pair[1].id {
                errors.push(LoadError::at(
                    &pair[1].file,
                    pair[1].lines.id,
                    format!("task id `{}` is also used by {}", pair[1].id, pair[0].file.display()),
                ));
            }
        }
        if errors.is_empty() { Ok(Suite { dir: dir.to_path_buf(), manifest, tasks }) } else { Err(errors) }
    }

    /// Tasks whose id matches a glob (`*` any run, `?` one character); all tasks for `None`.
    pub fn select(&self, pattern: Option<&str>) -> Vec<&TaskSpec> {
        self.tasks.iter().filter(|t| pattern.is_none_or(|p| glob_match(p, &t.id))).collect()
    }
}

/// Checks what a task needs from the installed apps: they exist, the start screen exists, and
/// setup and state SQL name real apps.
///
/// A device task (`device = true`) may name Android packages (`com.todoist`) in `apps` and
/// `start.app` that the simulated phone does not have: those are the device's to have, so they
/// are not errors here (see [`missing_apps`] for whether it can also run on the simulated phone).
/// What it names that *is* installed is still checked (a start screen must exist).
pub fn check_against_catalog(task: &TaskSpec, catalog: &Catalog) -> Result<(), LoadError> {
    let known = |app: &str| catalog.get(app).is_some();
    for app in &task.apps {
        if !known(app) && !task.device {
            return Err(LoadError::at(&task.file, task.lines.apps, format!("app `{app}` is not installed")));
        }
    }
    if let Some(app) = &task.start.app
        && (catalog.get(app).is_some() || !task.device)
    {
        let Some(package) = catalog.get(app) else {
            return Err(LoadError::at(
                &task.file,
                task.lines.start,
                format!("start app `{app}` is not installed"),
            ));
        };
        if let Some(screen) = &task.start.screen
            && !package.screens.contains_key(screen)
        {
            return Err(LoadError::at(
                &task.file,
                task.lines.start,
                format!("app `{app}` has no screen `{screen}`"),
            ));
        }
    }
    for (i, s) in task.setup.iter().enumerate() {
        if !known(&s.app) {
            return Err(LoadError::at(
                &task.file,
                task.lines.setup[i],
                format!("setup app `{}` is not installed", s.app),
            ));
        }
    }
    for (name, p) in &task.params {
        if let Some(app) = &p.app
            && !known(app)
        {
            return Err(LoadError::at(
                &task.file,
                task.lines.params[name],
                format!("parameter `{name}`: app `{app}` is not installed"),
            ));
        }
    }
    for (i, c) in task.criteria.iter().enumerate() {
        let mut apps = Vec::new();
        c.state_apps(&mut apps);
        for app in apps {
            if !known(&app) {
                return Err(LoadError::at(
                    &task.file,
                    task.lines.criteria[i],
                    format!("criterion reads app `{app}`, which is not installed"),
                ));
            }
        }
    }
    Ok(())
}

/// The apps a task names (`apps`, `start.app`) that the simulated phone does not have: empty
/// when the task can run on the simulated phone, else it can run only on a device.
pub fn missing_apps<'a>(task: &'a TaskSpec, catalog: &Catalog) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for app in task.apps.iter().chain(task.start.app.as_ref()) {
        if catalog.get(app).is_none() && !out.contains(&app.as_str()) {
            out.push(app);
        }
    }
    out
}

/// `*` and `?` glob over task ids.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs() {
        assert!(glob_match("contacts.*", "contacts.add"));
        assert!(!glob_match("contacts.*", "messages.add"));
        assert!(glob_match("*add*", "contacts.add_two"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "abbc"));
    }
}
