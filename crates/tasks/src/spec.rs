//! Task files (`docs/task-format.md`) and their instances.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use phonebench_apps::error::{LoadError, line_of};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::criteria::{Criterion, JudgeCheck};
use crate::reference::{RefStep, parse_step};

/// What kind of task this is (MobileWorld's and SPHINX's categories, plus QA tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Change something in the apps (GUI-only).
    Completion,
    /// Find something and give it as the answer.
    Retrieval,
    /// A needed fact is only known to the user: the agent must ask.
    AskUser,
    /// The task needs MCP tool calls.
    Mcp,
    /// QA test: reach a goal by a given path.
    Testing,
}

impl Category {
    /// The name used in files and reports.
    pub fn name(self) -> &'static str {
        match self {
            Category::Completion => "completion",
            Category::Retrieval => "retrieval",
            Category::AskUser => "ask_user",
            Category::Mcp => "mcp",
            Category::Testing => "testing",
        }
    }
}

/// Taxonomy axes a task may be tagged on (UINavBench's plus `intent`), with allowed values where
/// the axis has a closed set.
pub const TAG_AXES: [(&str, &[&str]); 10] = [
    ("length", &["short", "medium", "long"]),
    ("depth", &["shallow", "deep"]),
    ("apps", &["single", "multi"]),
    ("goal", &["explicit", "underspecified", "vague"]),
    ("determinism", &["static", "dynamic"]),
    ("perception", &["text", "icon", "state", "layout"]),
    ("actions", &[]),
    ("memory", &["none", "recall"]),
    ("knowledge", &["none", "app", "world"]),
    ("intent", &[]),
];

/// Where an episode starts.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Start {
    /// The app to open; the home screen when absent.
    #[serde(default)]
    pub app: Option<String>,
    /// The screen within it (its entry screen when absent).
    #[serde(default)]
    pub screen: Option<String>,
    /// Screen arguments.
    #[serde(default)]
    pub args: BTreeMap<String, serde_json::Value>,
}

/// How a parameter's value is drawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamSpec {
    /// Pick one of these.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<Vec<serde_json::Value>>,
    /// Pick an integer in `[low, high]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<[i64; 2]>,
    /// Pick one row of this query over `app`'s initial content (an object of its columns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// The app `query` reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// A template over the other (non-template) parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// A fixed value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
}

/// SQL run on an app before the episode starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    /// The app id.
    pub app: String,
    /// Statements; `:name` parameters are bound from the task's parameters.
    pub sql: String,
}

/// A fact only the (simulated) user knows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fact {
    /// Keywords: a question mentioning any of them (case-insensitive, whole words) is about this fact.
    pub about: Vec<String>,
    /// What the user says (template over the parameters).
    pub answer: String,
}

/// Tag values: one or several.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TagValue {
    /// One value.
    One(String),
    /// Several values (e.g. `actions = ["tap", "type"]`).
    Many(Vec<String>),
}

impl TagValue {
    /// The values as a list.
    pub fn values(&self) -> Vec<String> {
        match self {
            TagValue::One(s) => vec![s.clone()],
            TagValue::Many(v) => v.clone(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    id: Spanned<String>,
    goal: Spanned<String>,
    category: Category,
    apps: Spanned<Vec<String>>,
    #[serde(default)]
    max_steps: Option<Spanned<u32>>,
    #[serde(default)]
    clock_start: Option<Spanned<String>>,
    #[serde(default)]
    start: Option<Spanned<Start>>,
    #[serde(default)]
    tags: Option<BTreeMap<String, Spanned<TagValue>>>,
    #[serde(default)]
    params: BTreeMap<String, Spanned<ParamSpec>>,
    #[serde(default)]
    setup: Vec<Spanned<Setup>>,
    #[serde(default)]
    facts: Vec<Spanned<Fact>>,
    #[serde(default)]
    mcp_tools: Vec<String>,
    #[serde(default)]
    mcp_servers: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    device: Option<Spanned<bool>>,
    #[serde(default)]
    adb_setup: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    sphinx_evaluator: Option<Spanned<String>>,
    // Optional only for device tasks (checked below); every other task has a reference.
    #[serde(default)]
    reference: Vec<Spanned<String>>,
    // Values first, then criteria: toml cannot place an error inside an array of tables on the
    // right entry, so each entry is converted on its own and errors get that entry's line.
    // Optional when `sphinx_evaluator` supplies the criteria (an empty result is checked below).
    #[serde(default)]
    criteria: Vec<Spanned<toml::Value>>,
}

/// A task as written in its file, checked on its own (apps are checked by the suite).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskSpec {
    /// The file it came from.
    pub file: PathBuf,
    /// Unique within its suite.
    pub id: String,
    /// The goal template.
    pub goal: String,
    /// The category.
    pub category: Category,
    /// Apps involved (ids).
    pub apps: Vec<String>,
    /// Step budget.
    pub max_steps: u32,
    /// Virtual clock start, ms since the epoch.
    pub clock_start_ms: i64,
    /// Where the episode starts.
    pub start: Start,
    /// Taxonomy tags, axis → values.
    pub tags: BTreeMap<String, Vec<String>>,
    /// Parameters by name.
    pub params: BTreeMap<String, ParamSpec>,
    /// Setup SQL, in order.
    pub setup: Vec<Setup>,
    /// Hidden facts for `ask_user`.
    pub facts: Vec<Fact>,
    /// MCP tools offered to the agent (exposed names, `server_tool`); all the servers' tools
    /// when empty.
    pub mcp_tools: Vec<String>,
    /// MCP servers connected for the episode (built-in `geo`, `weather`, `finance`, `tracker`,
    /// or names defined in the run's MCP configuration).
    pub mcp_servers: Vec<String>,
    /// The reference solution (may be empty for a device task only).
    pub reference: Vec<RefStep>,
    /// Top-level success criteria: all must hold; ACP is the share of the non-guard ones that
    /// holds. Those of `sphinx_evaluator` come last.
    pub criteria: Vec<Criterion>,
    /// Model-judged checks, scored apart from the criteria.
    pub judges: Vec<JudgeCheck>,
    /// Written to run on a real device (`device = true`): every criterion is one a device can
    /// judge (see [`TaskSpec::device_problems`]), and `apps` / `start.app` may be Android
    /// packages the simulated phone does not have.
    pub device: bool,
    /// Shell commands run on the device (`adb shell`) before the episode, in order. Literal
    /// text, never rendered as templates: they go to a shell.
    pub adb_setup: Vec<String>,
    /// The SPHINX evaluator file whose entries are the last `imported_criteria` criteria,
    /// resolved against the task file's folder (inside it, no links).
    pub sphinx_evaluator: Option<PathBuf>,
    /// How many of the last `criteria` came from `sphinx_evaluator`. Their strings are upstream's
    /// literal text, so they are never rendered as templates.
    pub imported_criteria: usize,
    /// 1-based lines of things later checks may need to point at.
    pub lines: TaskLines,
}

/// Lines of a task file's parts, for errors found after parsing (validation, setup, references).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct TaskLines {
    /// `id`.
    pub id: usize,
    /// `goal`.
    pub goal: usize,
    /// `apps`.
    pub apps: usize,
    /// `start`.
    pub start: usize,
    /// Each parameter by name.
    pub params: BTreeMap<String, usize>,
    /// Each `[[setup]]`.
    pub setup: Vec<usize>,
    /// Each `[[facts]]`.
    pub facts: Vec<usize>,
    /// Each reference line.
    pub reference: Vec<usize>,
    /// Each top-level criterion (those imported from `sphinx_evaluator` get its line).
    pub criteria: Vec<usize>,
    /// `device`.
    pub device: usize,
    /// Each `adb_setup` command.
    pub adb_setup: Vec<usize>,
    /// `sphinx_evaluator`.
    pub sphinx_evaluator: usize,
    /// Each judge entry.
    pub judges: Vec<usize>,
    /// Each `[[setup]]`'s SQL: the line its text starts on (line `n` of the SQL text is line
    /// `setup_sql[i] + n - 1` of the file).
    pub setup_sql: Vec<usize>,
    /// For each top-level criterion, the line of each `state` SQL and `changes` table inside it,
    /// in the order [`crate::criteria::Criterion::sql_leaves`] visits them.
    pub criteria_sql: Vec<Vec<usize>>,
}

impl TaskLines {
    /// The line of the `leaf`-th SQL leaf (`state` or `changes`) of top-level criterion
    /// `criterion`: where its SQL (or table name) is written, else the criterion's own line.
    pub fn criterion_sql(&self, criterion: usize, leaf: usize) -> usize {
        self.criteria_sql
            .get(criterion)
            .and_then(|leaves| leaves.get(leaf))
            .or_else(|| self.criteria.get(criterion))
            .copied()
            .unwrap_or(self.id)
    }

    /// The file line of line `sql_line` (1-based, within the SQL text) of setup entry `setup`.
    pub fn setup_sql_line(&self, setup: usize, sql_line: usize) -> usize {
        match self.setup_sql.get(setup) {
            Some(&first) => first + sql_line.saturating_sub(1),
            None => self.setup.get(setup).copied().unwrap_or(self.id),
        }
    }
}

/// Default step budget.
pub const DEFAULT_MAX_STEPS: u32 = 30;

/// Most commands an `adb_setup` list may hold.
pub const MAX_ADB_SETUP_COMMANDS: usize = 64;
/// Longest `adb_setup` command, in bytes.
pub const MAX_ADB_SETUP_BYTES: usize = 4096;
/// Largest evaluator file `sphinx_evaluator` may name, in bytes.
pub const MAX_EVALUATOR_BYTES: u64 = 4 * 1024 * 1024;

impl TaskSpec {
    /// Reads and checks a task file.
    pub fn load(file: &Path) -> Result<TaskSpec, LoadError> {
        let text = std::fs::read_to_string(file).map_err(|e| LoadError::file(file, e.to_string()))?;
        TaskSpec::parse(file, &text)
    }

    /// Parses and checks task text (`file` names it in errors).
    pub fn parse(file: &Path, text: &str) -> Result<TaskSpec, LoadError> {
        let raw: RawTask =
            toml::from_str(text).map_err(|e| phonebench_apps::error::toml_error(file, text, &e))?;
        let at = |span: std::ops::Range<usize>| line_of(text, span.start);
        let err = |span: std::ops::Range<usize>, message: String| LoadError::at(file, at(span), message);

        let id = raw.id.get_ref().clone();
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) {
            return Err(err(
                raw.id.span(),
                format!("task id `{id}` must be letters, digits, `.`, `_` or `-`"),
            ));
        }
        let goal = raw.goal.get_ref().clone();
        if goal.trim().is_empty() {
            return Err(err(raw.goal.span(), "the goal is empty".into()));
        }
        let apps = raw.apps.get_ref().clone();
        if apps.is_empty() {
            return Err(err(raw.apps.span(), "`apps` names at least one app".into()));
        }
        let max_steps = match &raw.max_steps {
            Some(m) if *m.get_ref() == 0 => {
                return Err(err(m.span(), "`max_steps` must be at least 1".into()));
            }
            Some(m) => *m.get_ref(),
            None => DEFAULT_MAX_STEPS,
        };
        let clock_start_ms = match &raw.clock_start {
            Some(c) => parse_clock(c.get_ref()).map_err(|e| err(c.span(), e))?,
            None => phonebench_apps::CLOCK_START_MS,
        };
        let mut lines = TaskLines {
            id: at(raw.id.span()),
            goal: at(raw.goal.span()),
            apps: at(raw.apps.span()),
            ..TaskLines::default()
        };
        let start = match raw.start {
            Some(s) => {
                lines.start = at(s.span());
                let start = s.into_inner();
                if start.screen.is_some() && start.app.is_none() {
                    return Err(LoadError::at(file, lines.start, "`start.screen` needs `start.app`"));
                }
                start
            }
            None => Start::default(),
        };

        let mut tags = BTreeMap::new();
        for (axis, value) in raw.tags.iter().flatten() {
            let line = at(value.span());
            let value = value.get_ref();
            let Some((_, allowed)) = TAG_AXES.iter().find(|(a, _)| a == axis) else {
                let axes: Vec<&str> = TAG_AXES.iter().map(|(a, _)| *a).collect();
                return Err(LoadError::at(
                    file,
                    line,
                    format!("unknown tag axis `{axis}` (axes: {})", axes.join(", ")),
                ));
            };
            let values = value.values();
            if values.is_empty() {
                return Err(LoadError::at(file, line, format!("tag `{axis}` has no value")));
            }
            for v in &values {
                if !allowed.is_empty() && !allowed.contains(&v.as_str()) {
                    return Err(LoadError::at(
                        file,
                        line,
                        format!("tag `{axis}` = `{v}` is not one of: {}", allowed.join(", ")),
                    ));
                }
            }
            tags.insert(axis.clone(), values);
        }

        let mut params = BTreeMap::new();
        for (name, spec) in raw.params {
            let line = at(spec.span());
            let spec = spec.into_inner();
            if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(LoadError::at(
                    file,
                    line,
                    format!("parameter name `{name}` must be letters, digits or `_`"),
                ));
            }
            let sources = [
                spec.pool.is_some(),
                spec.range.is_some(),
                spec.query.is_some(),
                spec.template.is_some(),
                spec.value.is_some(),
            ];
            if sources.iter().filter(|s| **s).count() != 1 {
                return Err(LoadError::at(
                    file,
                    line,
                    format!(
                        "parameter `{name}` needs exactly one of `pool`, `range`, `query`, `template`, `value`"
                    ),
                ));
            }
            if spec.pool.as_ref().is_some_and(Vec::is_empty) {
                return Err(LoadError::at(file, line, format!("parameter `{name}`: the pool is empty")));
            }
            if let Some([lo, hi]) = spec.range
                && lo > hi
            {
                return Err(LoadError::at(
                    file,
                    line,
                    format!("parameter `{name}`: range [{lo}, {hi}] is empty"),
                ));
            }
            if spec.query.is_some() != spec.app.is_some() {
                return Err(LoadError::at(
                    file,
                    line,
                    format!("parameter `{name}`: `query` and `app` go together"),
                ));
            }
            lines.params.insert(name.clone(), line);
            params.insert(name, spec);
        }

        let setup: Vec<Setup> = raw
            .setup
            .into_iter()
            .map(|s| {
                lines.setup.push(at(s.span()));
                s.into_inner()
            })
            .collect();
        let facts: Vec<Fact> = raw
            .facts
            .into_iter()
            .map(|f| {
                let line = at(f.span());
                lines.facts.push(line);
                let fact = f.into_inner();
                if fact.about.iter().all(|k| k.trim().is_empty()) {
                    return Err(LoadError::at(file, line, "a fact needs at least one `about` keyword"));
                }
                Ok(fact)
            })
            .collect::<Result<_, _>>()?;

        let mut mcp_servers = Vec::new();
        if let Some(list) = &raw.mcp_servers {
            let l = at(list.span());
            for name in list.get_ref() {
                let valid = !name.is_empty()
                    && name.len() <= 32
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
                if !valid {
                    return Err(LoadError::at(
                        file,
                        l,
                        format!("MCP server name `{name}`: letters, digits and `-` only"),
                    ));
                }
                if mcp_servers.contains(name) {
                    return Err(LoadError::at(file, l, format!("MCP server `{name}` is named twice")));
                }
                mcp_servers.push(name.clone());
            }
        }
        if mcp_servers.is_empty() && !raw.mcp_tools.is_empty() {
            return Err(LoadError::at(
                file,
                lines.id,
                "`mcp_tools` needs `mcp_servers`: the servers whose tools are offered",
            ));
        }
        if raw.category == Category::Mcp && mcp_servers.is_empty() {
            return Err(LoadError::at(
                file,
                lines.id,
                "an `mcp` task names its MCP servers in `mcp_servers`",
            ));
        }
        let mut reference = Vec::new();
        for line in raw.reference {
            let l = at(line.span());
            // The episode ends at `finish` or `answer`: a step written after it would never run.
            if let Some(RefStep::Finish { .. } | RefStep::Answer { .. }) = reference.last() {
                return Err(LoadError::at(
                    file,
                    l,
                    "reference: a step after `finish` or `answer` never runs (they end the episode)",
                ));
            }
            lines.reference.push(l);
            reference.push(
                parse_step(line.get_ref()).map_err(|e| LoadError::at(file, l, format!("reference: {e}")))?,
            );
        }
        let device = raw.device.as_ref().is_some_and(|d| *d.get_ref());
        if let Some(d) = &raw.device {
            lines.device = at(d.span());
        }
        // A device task's path may exist only on the device (its ground truth recorded there,
        // not as selectors), so it may come without a reference; nothing else may.
        if reference.is_empty() && !device {
            return Err(LoadError::at(
                file,
                lines.id,
                "`reference` is empty: every task has a reference solution",
            ));
        }
        let mut adb_setup = Vec::new();
        if let Some(list) = raw.adb_setup {
            let list_line = at(list.span());
            if !device {
                return Err(LoadError::at(
                    file,
                    list_line,
                    "`adb_setup` runs on a real device: it belongs to a task with `device = true`",
                ));
            }
            let list = list.into_inner();
            if list.len() > MAX_ADB_SETUP_COMMANDS {
                return Err(LoadError::at(
                    file,
                    list_line,
                    format!("`adb_setup` has {} commands, more than {MAX_ADB_SETUP_COMMANDS}", list.len()),
                ));
            }
            for command in list {
                let l = at(command.span());
                let command = command.into_inner();
                check_adb_command(&command).map_err(|e| LoadError::at(file, l, format!("adb_setup: {e}")))?;
                lines.adb_setup.push(l);
                adb_setup.push(command);
            }
        }
        let mut criteria = Vec::new();
        let mut judges = Vec::new();
        for c in raw.criteria {
            let l = at(c.span());
            let value = c.into_inner();
            if value.get("judge").is_some() {
                let mut table = match value {
                    toml::Value::Table(t) => t,
                    _ => return Err(LoadError::at(file, l, "criterion: expected a table")),
                };
                let name = table.remove("name");
                if let Some(key) = table.keys().find(|k| *k != "judge") {
                    return Err(LoadError::at(
                        file,
                        l,
                        format!("criterion: `judge` cannot be combined with `{key}` in one entry"),
                    ));
                }
                let mut judge = table
                    .remove("judge")
                    .map(JudgeCheck::deserialize)
                    .transpose()
                    .map_err(|e| LoadError::at(file, l, format!("judge: {}", e.message().trim())))?
                    .ok_or_else(|| LoadError::at(file, l, "judge: missing"))?;
                if judge.name.is_none() {
                    judge.name = name.and_then(|n| n.as_str().map(str::to_string));
                }
                if judge.screens == 0 {
                    return Err(LoadError::at(file, l, "judge: `screens` must be at least 1"));
                }
                lines.judges.push(l);
                judges.push(judge);
                continue;
            }
            lines.criteria.push(l);
            let c = Criterion::deserialize(value)
                .map_err(|e| LoadError::at(file, l, format!("criterion: {}", e.message().trim())))?;
            c.check_static().map_err(|e| LoadError::at(file, l, format!("criterion: {e}")))?;
            criteria.push(c);
        }
        let mut sphinx_evaluator = None;
        let mut imported_criteria = 0;
        if let Some(path) = &raw.sphinx_evaluator {
            let l = at(path.span());
            lines.sphinx_evaluator = l;
            let problem =
                |e: String| LoadError::at(file, l, format!("`sphinx_evaluator` `{}`: {e}", path.get_ref()));
            let (resolved, text) = read_evaluator(file, path.get_ref()).map_err(problem)?;
            let imported =
                crate::sphinx::criteria_from_sphinx_json(&text).map_err(|e| problem(e.to_string()))?;
            for c in imported {
                c.check_static().map_err(|e| problem(format!("criterion: {e}")))?;
                lines.criteria.push(l);
                criteria.push(c);
                imported_criteria += 1;
            }
            sphinx_evaluator = Some(resolved);
        }
        if !criteria.is_empty() && criteria.iter().all(|c| c.guard) {
            return Err(LoadError::at(
                file,
                lines.criteria.first().copied().unwrap_or(lines.id),
                "every criterion is a `guard`: a task needs at least one criterion that says what to achieve \
                 (guards only say what must not break)",
            ));
        }
        (lines.setup_sql, lines.criteria_sql) = sql_lines(text, &lines);
        if criteria.is_empty() {
            let message = if judges.is_empty() {
                "`criteria` is empty: a task needs success criteria"
            } else {
                "`criteria` has only `judge` entries: a task needs at least one deterministic criterion \
                 (judges are scored apart, and validation needs a check the reference must pass)"
            };
            return Err(LoadError::at(file, lines.id, message));
        }

        let spec = TaskSpec {
            file: file.to_path_buf(),
            id,
            goal,
            category: raw.category,
            apps,
            max_steps,
            clock_start_ms,
            start,
            tags,
            params,
            setup,
            facts,
            mcp_tools: raw.mcp_tools,
            mcp_servers,
            reference,
            criteria,
            judges,
            device,
            adb_setup,
            sphinx_evaluator,
            imported_criteria,
            lines,
        };
        spec.check_templates()?;
        if spec.device
            && let Some((line, problem)) = spec.device_problems_at().into_iter().next()
        {
            return Err(LoadError::at(
                file,
                line,
                format!("a `device = true` task must be one a device can judge: {problem}"),
            ));
        }
        Ok(spec)
    }

    /// One sentence per reason this task cannot run on a real device: `[[setup]]` SQL, and every
    /// criterion (at any depth) that reads an app's database (`state`, `changes`) or the
    /// simulated apps' events (`event`). Empty when a device can run and judge it.
    pub fn device_problems(&self) -> Vec<String> {
        self.device_problems_at().into_iter().map(|(_, p)| p).collect()
    }

    /// [`TaskSpec::device_problems`] and what a pixels-only device (VNC) cannot do besides: see
    /// [`TaskInstance::pixels_problems`].
    pub fn pixels_problems(&self) -> Vec<String> {
        let mut out = self.device_problems();
        out.extend(pixels_problems(&self.adb_setup, &self.criteria));
        out
    }

    /// [`TaskSpec::device_problems`], each with the file line it is about.
    fn device_problems_at(&self) -> Vec<(usize, String)> {
        device_problems(&self.setup, &self.criteria)
            .into_iter()
            .map(|(place, problem)| {
                let line = match place {
                    Place::Setup(i) => self.lines.setup.get(i),
                    Place::Criterion(i) => self.lines.criteria.get(i),
                };
                (line.copied().unwrap_or(self.lines.id), problem)
            })
            .collect()
    }

    /// The criteria written in the task file, without those of `sphinx_evaluator`.
    fn written_criteria(&self) -> usize {
        self.criteria.len().saturating_sub(self.imported_criteria)
    }

    /// Every template compiles and names only declared parameters.
    fn check_templates(&self) -> Result<(), LoadError> {
        let env = template_env();
        let names: Vec<&str> = self.params.keys().map(String::as_str).collect();
        let check = |source: &str, line: usize, what: &str| -> Result<(), LoadError> {
            let tmpl = env
                .template_from_str(source)
                .map_err(|e| LoadError::at(&self.file, line, format!("{what}: bad template: {e}")))?;
            for var in tmpl.undeclared_variables(false) {
                if !names.contains(&var.as_str()) {
                    return Err(LoadError::at(
                        &self.file,
                        line,
                        format!("{what}: `{{{{ {var} }}}}` is not a declared parameter"),
                    ));
                }
            }
            Ok(())
        };
        check(&self.goal, self.lines.goal, "goal")?;
        for (i, fact) in self.facts.iter().enumerate() {
            check(&fact.answer, self.lines.facts[i], "fact")?;
        }
        for (name, p) in &self.params {
            if let Some(t) = &p.template {
                check(t, self.lines.params[name], &format!("parameter `{name}`"))?;
            }
        }
        // `map_strings` visits every template string and stops at the first error.
        let visit = |s: &str, line: usize, what: &str| {
            check(s, line, what).map(|()| s.to_string()).map_err(|e| e.message)
        };
        for (step, &line) in self.reference.iter().zip(&self.lines.reference) {
            step.clone()
                .map_strings(&mut |s| visit(s, line, "reference"))
                .map_err(|message| LoadError::at(&self.file, line, message))?;
        }
        // Imported evaluator criteria are literal text, never templates.
        for (c, &line) in self.criteria.iter().zip(&self.lines.criteria).take(self.written_criteria()) {
            c.clone()
                .map_strings(&mut |s| visit(s, line, "criterion"))
                .map_err(|message| LoadError::at(&self.file, line, message))?;
        }
        for (j, &line) in self.judges.iter().zip(&self.lines.judges) {
            if let Some(q) = &j.question {
                check(q, line, "judge question")?;
            }
        }
        Ok(())
    }

    /// The seed of instance `instance` of this task in a suite run with `suite_seed`: a
    /// documented, platform-independent hash (FNV-1a over the three, then SplitMix64).
    pub fn instance_seed(&self, suite_seed: u64, instance: u32) -> u64 {
        instance_seed(suite_seed, &self.id, instance)
    }

    /// Draws the parameters and renders every template. `rows` runs a parameter's query on an
    /// app's initial content (the environment supplies it).
    pub fn instantiate(
        &self,
        suite_seed: u64,
        instance: u32,
        rows: &mut RowSource<'_>,
    ) -> Result<TaskInstance, LoadError> {
        let seed = self.instance_seed(suite_seed, instance);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut values = serde_json::Map::new();
        let err = |name: &str, message: String| {
            LoadError::at(&self.file, self.lines.params.get(name).copied().unwrap_or(self.lines.id), message)
        };
        // Declared order is the file's alphabetical table order (TOML tables are unordered);
        // templates come last so they can use the rest.
        for (name, p) in self.params.iter().filter(|(_, p)| p.template.is_none()) {
            let value = if let Some(pool) = &p.pool {
                pool[pick(&mut rng, pool.len())].clone()
            } else if let Some([lo, hi]) = p.range {
                let span = (hi - lo) as u64 + 1;
                serde_json::Value::from(lo + (rng.next_u64() % span) as i64)
            } else if let (Some(sql), Some(app)) = (&p.query, &p.app) {
                let found = rows(app, sql).map_err(|e| err(name, format!("parameter `{name}`: {e}")))?;
                if found.is_empty() {
                    return Err(err(name, format!("parameter `{name}`: the query returned no rows")));
                }
                found[pick(&mut rng, found.len())].clone()
            } else {
                p.value.clone().unwrap_or(serde_json::Value::Null)
            };
            values.insert(name.clone(), value);
        }
        let env = template_env();
        let render = |source: &str, values: &serde_json::Map<String, serde_json::Value>| {
            env.render_str(source, minijinja::Value::from(minijinja::value::Serde(values)))
                .map_err(|e| format!("template `{source}`: {e}"))
        };
        for (name, p) in self.params.iter().filter(|(_, p)| p.template.is_some()) {
            let source = p.template.as_deref().unwrap_or_default();
            let rendered = render(source, &values).map_err(|e| err(name, e))?;
            values.insert(name.clone(), serde_json::Value::String(rendered));
        }

        let goal = render(&self.goal, &values).map_err(|e| LoadError::at(&self.file, self.lines.goal, e))?;
        let mut reference = self.reference.clone();
        for (i, step) in reference.iter_mut().enumerate() {
            step.map_strings(&mut |s| render(s, &values))
                .map_err(|e| LoadError::at(&self.file, self.lines.reference[i], e))?;
        }
        let mut criteria = self.criteria.clone();
        let written = self.written_criteria();
        for (i, c) in criteria.iter_mut().enumerate() {
            let line = self.lines.criteria.get(i).copied().unwrap_or(self.lines.id);
            // Imported evaluator criteria are upstream's literal text: rendering `{{` in them as
            // a template would change (or break) what they compare.
            if i < written {
                c.map_strings(&mut |s| render(s, &values)).map_err(|e| LoadError::at(&self.file, line, e))?;
            }
            c.check_static().map_err(|e| LoadError::at(&self.file, line, e))?;
        }
        let mut judges = self.judges.clone();
        for (i, j) in judges.iter_mut().enumerate() {
            if let Some(q) = &j.question {
                j.question =
                    Some(render(q, &values).map_err(|e| LoadError::at(&self.file, self.lines.judges[i], e))?);
            }
        }
        let facts = self
            .facts
            .iter()
            .enumerate()
            .map(|(i, f)| {
                Ok(Fact {
                    about: f.about.clone(),
                    answer: render(&f.answer, &values)
                        .map_err(|e| LoadError::at(&self.file, self.lines.facts[i], e))?,
                })
            })
            .collect::<Result<Vec<_>, LoadError>>()?;
        Ok(TaskInstance {
            task_id: self.id.clone(),
            instance,
            seed,
            goal,
            category: self.category,
            apps: self.apps.clone(),
            max_steps: self.max_steps,
            clock_start_ms: self.clock_start_ms,
            start: self.start.clone(),
            tags: self.tags.clone(),
            sql_params: sql_params(&values),
            params: values,
            setup: self.setup.clone(),
            facts,
            mcp_tools: self.mcp_tools.clone(),
            mcp_servers: self.mcp_servers.clone(),
            reference,
            criteria,
            judges,
            device: self.device,
            adb_setup: self.adb_setup.clone(),
        })
    }
}

/// Runs a parameter's query (`app`, `sql`) on the app's initial content.
pub type RowSource<'a> = dyn FnMut(&str, &str) -> Result<Vec<serde_json::Value>, String> + 'a;

/// One concrete episode's task: parameters drawn, templates rendered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskInstance {
    /// The task's id.
    pub task_id: String,
    /// Instance number within a run (0-based).
    pub instance: u32,
    /// The instance seed (parameters and the phone's generator).
    pub seed: u64,
    /// The goal the agent is given.
    pub goal: String,
    /// Category.
    pub category: Category,
    /// Apps involved.
    pub apps: Vec<String>,
    /// Step budget.
    pub max_steps: u32,
    /// Clock start, ms since the epoch.
    pub clock_start_ms: i64,
    /// Where the episode starts.
    pub start: Start,
    /// Tags.
    pub tags: BTreeMap<String, Vec<String>>,
    /// Parameter values by name.
    pub params: serde_json::Map<String, serde_json::Value>,
    /// The same, flattened for SQL binding (`:name`, `:row_column`).
    pub sql_params: BTreeMap<String, serde_json::Value>,
    /// Setup SQL.
    pub setup: Vec<Setup>,
    /// Hidden facts, rendered.
    pub facts: Vec<Fact>,
    /// MCP tools offered (all the servers' tools when empty).
    pub mcp_tools: Vec<String>,
    /// MCP servers connected for the episode.
    pub mcp_servers: Vec<String>,
    /// Reference solution, rendered.
    pub reference: Vec<RefStep>,
    /// Success criteria, rendered.
    pub criteria: Vec<Criterion>,
    /// Model-judged checks, rendered (scored apart).
    pub judges: Vec<JudgeCheck>,
    /// Written to run on a real device (`device = true` in the task file).
    pub device: bool,
    /// Shell commands run on the device before the episode, in order (literal, not rendered).
    pub adb_setup: Vec<String>,
}

impl TaskInstance {
    /// One sentence per reason this instance cannot run on a real device (as
    /// [`TaskSpec::device_problems`]); empty when a device can run and judge it.
    pub fn device_problems(&self) -> Vec<String> {
        device_problems(&self.setup, &self.criteria).into_iter().map(|(_, p)| p).collect()
    }

    /// What a pixels-only device (VNC) cannot do for this instance beyond
    /// [`TaskInstance::device_problems`]: run `adb_setup` commands, and judge checks that read
    /// the real UI tree (elements by id or class, the element an action hit, the app or screen
    /// in front). Text, `near` and `time` checks run on the text the detector read.
    pub fn pixels_problems(&self) -> Vec<String> {
        let mut out = self.device_problems();
        out.extend(pixels_problems(&self.adb_setup, &self.criteria));
        out
    }
}

/// What a pixels-only device cannot do beyond what any device cannot: `adb_setup`, and checks
/// that read the real UI tree (the kinds each top-level criterion holds, named once).
fn pixels_problems(adb_setup: &[String], criteria: &[Criterion]) -> Vec<String> {
    use crate::criteria::CriterionKind;
    let mut out = Vec::new();
    if !adb_setup.is_empty() {
        out.push(
            "`adb_setup` runs shell commands, which a pixels-only device cannot: stage its screen first"
                .into(),
        );
    }
    const ADVICE: &str = "which needs the UI tree a pixels-only device does not have; use text, near or time checks, or the answer";
    for top in criteria {
        let mut found: Vec<&str> = Vec::new();
        let mut stack = vec![top];
        while let Some(c) = stack.pop() {
            let what = match &c.kind {
                CriterionKind::Element(_) => "an `element` check",
                CriterionKind::ActionElement(_) => "an `action_element` check",
                CriterionKind::Screen(_) => "a `screen` check (the app or screen in front)",
                _ => {
                    stack.extend(c.children().iter().rev());
                    continue;
                }
            };
            if !found.contains(&what) {
                found.push(what);
            }
        }
        if !found.is_empty() {
            out.push(format!("criterion `{}` holds {}, {ADVICE}", top.label(), found.join(" and ")));
        }
    }
    out
}

/// What a device problem is about: a setup entry or a top-level criterion, by index.
enum Place {
    Setup(usize),
    Criterion(usize),
}

/// What a device cannot judge: setup SQL, and `state`, `changes` and `event` checks at any depth
/// (a device has neither the apps' databases nor the simulated apps' events).
fn device_problems(setup: &[Setup], criteria: &[Criterion]) -> Vec<(Place, String)> {
    use crate::criteria::CriterionKind;
    let mut out = Vec::new();
    for (i, s) in setup.iter().enumerate() {
        out.push((
            Place::Setup(i),
            format!(
                "`[[setup]]` runs SQL on app `{}`'s database, which a device cannot do; on a device \
                 prepare the phone with `adb_setup` shell commands",
                s.app
            ),
        ));
    }
    const ADVICE: &str = "which a device cannot provide; on a device use screen checks (element, text, near, time, screen) or the answer";
    for (i, top) in criteria.iter().enumerate() {
        // Pre-order, without recursion (criteria nest as deep as the file writes them).
        let mut stack = vec![top];
        while let Some(c) = stack.pop() {
            let what = match &c.kind {
                CriterionKind::State(_) => Some("a `state` check (SQL over the app's database)"),
                CriterionKind::Changes(_) => Some("a `changes` check (SQL over the app's database)"),
                CriterionKind::Event(_) => Some("an `event` check (app events of the simulated apps)"),
                _ => None,
            };
            if let Some(what) = what {
                let problem = if std::ptr::eq(c, top) {
                    format!("criterion `{}` is {what}, {ADVICE}", top.label())
                } else {
                    format!("criterion `{}` holds `{}`, {what}, {ADVICE}", top.label(), c.label())
                };
                out.push((Place::Criterion(i), problem));
            }
            stack.extend(c.children().iter().rev());
        }
    }
    out
}

/// Checks one `adb_setup` command: it goes to `adb shell` as one line, so it must be one line.
fn check_adb_command(command: &str) -> Result<(), String> {
    if command.trim().is_empty() {
        return Err("a command is empty".into());
    }
    if command.len() > MAX_ADB_SETUP_BYTES {
        return Err(format!("a command is {} bytes, more than {MAX_ADB_SETUP_BYTES}", command.len()));
    }
    if command.contains('\0') {
        return Err("a command contains a NUL character".into());
    }
    if command.contains(['\n', '\r']) {
        return Err("a command contains a line break: write one command per entry".into());
    }
    Ok(())
}

/// Reads the evaluator file `relative` names, from the folder of `task_file`. The name is
/// untrusted (task files come from anywhere): it must stay inside that folder (no absolute path,
/// no `..`), no part of it may be a symbolic link (one could lead anywhere on the host, and an
/// error would quote what it found), and the file is at most [`MAX_EVALUATOR_BYTES`].
fn read_evaluator(task_file: &Path, relative: &str) -> Result<(PathBuf, String), String> {
    use std::io::Read as _;
    use std::path::Component;
    let rel = Path::new(relative);
    if relative.trim().is_empty() {
        return Err("the path is empty".into());
    }
    // The whole name is checked before anything is looked up on disk.
    for part in rel.components() {
        match part {
            Component::Normal(_) | Component::CurDir => {}
            Component::ParentDir => {
                return Err("`..` leaves the task file's folder: name a file inside it".into());
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err("an absolute path: name a file relative to the task file's folder".into());
            }
        }
    }
    let mut resolved = task_file.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut any = false;
    for part in rel.components() {
        // Every other component was refused above.
        if let Component::Normal(name) = part {
            resolved.push(name);
            any = true;
            let meta = std::fs::symlink_metadata(&resolved)
                .map_err(|e| format!("cannot read {}: {e}", resolved.display()))?;
            if meta.file_type().is_symlink() {
                return Err(format!(
                    "{} is a symbolic link: the evaluator must be a regular file inside the task file's folder",
                    resolved.display()
                ));
            }
        }
    }
    if !any {
        return Err("names no file".into());
    }
    let meta = std::fs::symlink_metadata(&resolved)
        .map_err(|e| format!("cannot read {}: {e}", resolved.display()))?;
    if !meta.is_file() {
        return Err(format!("{} is not a regular file", resolved.display()));
    }
    let too_big =
        |n: u64| format!("the file is {n} bytes, more than the {MAX_EVALUATOR_BYTES} an evaluator may have");
    if meta.len() > MAX_EVALUATOR_BYTES {
        return Err(too_big(meta.len()));
    }
    let mut text = String::new();
    std::fs::File::open(&resolved)
        .and_then(|f| f.take(MAX_EVALUATOR_BYTES + 1).read_to_string(&mut text))
        .map_err(|e| format!("cannot read {}: {e}", resolved.display()))?;
    // The file may have grown since it was measured.
    if text.len() as u64 > MAX_EVALUATOR_BYTES {
        return Err(too_big(text.len() as u64));
    }
    Ok((resolved, text))
}

fn sql_params(values: &serde_json::Map<String, serde_json::Value>) -> BTreeMap<String, serde_json::Value> {
    let mut out = BTreeMap::new();
    for (name, v) in values {
        match v {
            serde_json::Value::Object(row) => {
                for (col, cv) in row {
                    out.insert(format!("{name}_{col}"), cv.clone());
                }
            }
            other => {
                out.insert(name.clone(), other.clone());
            }
        }
    }
    out
}

fn pick(rng: &mut ChaCha8Rng, n: usize) -> usize {
    (rng.next_u64() % n as u64) as usize
}

/// FNV-1a, 64 bits: stable across platforms and releases (unlike `DefaultHasher`), for seeds
/// and cache keys that must mean the same everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fnv(pub u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Hashes more bytes in.
    pub fn eat(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// FNV-1a over `suite_seed` (LE bytes), the task id, `instance` (LE), then SplitMix64.
pub fn instance_seed(suite_seed: u64, task_id: &str, instance: u32) -> u64 {
    let mut h = Fnv::default();
    h.eat(&suite_seed.to_le_bytes());
    h.eat(task_id.as_bytes());
    h.eat(&[0]);
    h.eat(&instance.to_le_bytes());
    let mut z = h.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Fuel for one goal, parameter or answer template: minijinja charges it per instruction and
/// refuses an operation whose result (64 bytes a unit) the rest could not pay for, so a task
/// file's loops end and its strings stay under 6.4 MB. A real goal needs a few hundred units.
pub const TASK_TEMPLATE_FUEL: u64 = 100_000;

fn template_env() -> minijinja::Environment<'static> {
    let mut env = minijinja::Environment::new();
    env.set_fuel(Some(TASK_TEMPLATE_FUEL));
    phonebench_apps::templates::bounded_join(&mut env);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    // Goals are plain text, not HTML: no escaping.
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    env
}

/// Where the SQL of a task file is written: each setup's SQL text and, per top-level criterion,
/// each `state` SQL and `changes` table in pre-order (the order of
/// [`crate::criteria::Criterion::sql_leaves`]). `serde` forgets positions inside values, so the
/// text is parsed once more keeping every span; where that finds nothing (it cannot fail on text
/// that already parsed) the entry's own line stands in.
fn sql_lines(text: &str, lines: &TaskLines) -> (Vec<usize>, Vec<Vec<usize>>) {
    use toml::de::{DeTable, DeValue};
    type Value<'i> = toml::Spanned<DeValue<'i>>;
    let Ok(doc) = DeTable::parse(text) else {
        return (lines.setup.clone(), lines.criteria.iter().map(|l| vec![*l]).collect());
    };
    let root = DeValue::Table(doc.into_inner());
    // The first line of a string's text: a multi-line string drops a newline right after `"""`.
    let text_line = |span: std::ops::Range<usize>| {
        let raw = text.get(span.start..).unwrap_or("");
        let opens_with_newline =
            ["\"\"\"\n", "\"\"\"\r\n", "'''\n", "'''\r\n"].iter().any(|p| raw.starts_with(p));
        line_of(text, span.start) + usize::from(opens_with_newline)
    };
    let entries = |key: &str| -> Vec<&Value<'_>> {
        match root.get(key).map(|v| v.get_ref()) {
            Some(DeValue::Array(items)) => items.iter().collect(),
            _ => Vec::new(),
        }
    };
    let setup = entries("setup")
        .into_iter()
        .enumerate()
        .map(|(i, entry)| match entry.get_ref().get("sql") {
            Some(sql) => text_line(sql.span()),
            None => lines.setup.get(i).copied().unwrap_or(lines.id),
        })
        .collect();
    // Recursion depth is the criteria's nesting depth, written by hand in the file.
    fn walk(value: &Value<'_>, text_line: &dyn Fn(std::ops::Range<usize>) -> usize, out: &mut Vec<usize>) {
        let value = value.get_ref();
        if let Some(state) = value.get("state") {
            out.push(text_line(state.get_ref().get("sql").map_or(state.span(), |s| s.span())));
        }
        if let Some(changes) = value.get("changes") {
            out.push(text_line(changes.get_ref().get("table").map_or(changes.span(), |t| t.span())));
        }
        for key in ["all", "any", "sequence", "consecutive"] {
            if let Some(DeValue::Array(children)) = value.get(key).map(|v| v.get_ref()) {
                for child in children.iter() {
                    walk(child, text_line, out);
                }
            }
        }
        if let Some(child) = value.get("not") {
            walk(child, text_line, out);
        }
    }
    let criteria = entries("criteria")
        .into_iter()
        // Judge entries are kept apart from the criteria (and have no SQL).
        .filter(|entry| entry.get_ref().get("judge").is_none())
        .map(|entry| {
            let mut out = Vec::new();
            walk(entry, &text_line, &mut out);
            out
        })
        .collect();
    (setup, criteria)
}

fn parse_clock(text: &str) -> Result<i64, String> {
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|d| d.timestamp_millis())
        .map_err(|e| format!("`clock_start` must be RFC 3339 like 2026-03-02T09:00:00Z: {e}"))
}
