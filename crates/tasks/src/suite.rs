//! Suites: a folder with `suite.toml` and task files under `tasks/`.

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
    /// Default suite seed.
    #[serde(default)]
    pub seed: u64,
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
    /// Loads every task of the suite at `dir`. All bad files are reported, one per line.
    pub fn load(dir: &Path) -> Result<Suite, Vec<LoadError>> {
        let manifest_file = dir.join("suite.toml");
        let text = std::fs::read_to_string(&manifest_file)
            .map_err(|e| vec![LoadError::file(&manifest_file, format!("cannot read: {e}"))])?;
        let manifest: SuiteManifest = toml::from_str(&text)
            .map_err(|e| vec![phonebench_apps::error::toml_error(&manifest_file, &text, &e)])?;
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
pub fn check_against_catalog(task: &TaskSpec, catalog: &Catalog) -> Result<(), LoadError> {
    let known = |app: &str| catalog.get(app).is_some();
    for app in &task.apps {
        if !known(app) {
            return Err(LoadError::at(&task.file, task.lines.apps, format!("app `{app}` is not installed")));
        }
    }
    if let Some(app) = &task.start.app {
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
