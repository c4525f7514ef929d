//! `actions.toml`: named actions, each a list of declarative steps.
//!
//! Parsing checks the shape of every step (one kind per step, known keys, right types) and
//! remembers each step's line so that checks made later (unknown screen, bad SQL, bad
//! expression) can point at it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;
use toml::{Spanned, Value};

use crate::error::{LoadError, line_of, toml_error};

/// A named action.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionDef {
    /// The action's name (its table name in `actions.toml`).
    pub name: String,
    /// Its steps, run in order.
    pub steps: Vec<StepDef>,
    /// Line of the action's table.
    pub line: usize,
}

/// One step and where it is written.
#[derive(Debug, Clone, PartialEq)]
pub struct StepDef {
    /// What the step does.
    pub step: Step,
    /// Line of the step in `actions.toml`.
    pub line: usize,
}

/// `(name, minijinja expression)` pairs, in name order.
pub type ExprArgs = Vec<(String, String)>;

/// A button of a dialog or an item of a menu.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    /// The label (a minijinja template over the scope).
    pub label: String,
    /// The action run when it is picked; `None` just closes the dialog or menu.
    pub action: Option<String>,
}

/// An option of a single-choice dialog.
#[derive(Debug, Clone, PartialEq)]
pub struct DialogOption {
    /// What is shown (a template).
    pub label: String,
    /// The `:value` the dialog's action receives (a template).
    pub value: String,
}

/// An alert dialog (buttons) or a single-choice dialog (options).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DialogSpec {
    /// Title (a template).
    pub title: Option<String>,
    /// Message (a template).
    pub message: Option<String>,
    /// Buttons, left to right as drawn: negative first, positive last.
    pub buttons: Vec<Choice>,
    /// Options of a single-choice dialog.
    pub options: Vec<DialogOption>,
    /// Expression giving the value of the option shown as checked.
    pub selected: Option<String>,
    /// Action run with `:value` when an option is picked.
    pub action: Option<String>,
    /// Options from a query instead of `choices`: its columns `label` and `value`.
    pub choices_sql: Option<String>,
    /// A text field in the dialog: (hint template, initial text expression); every button's
    /// action receives its text as `:input`.
    pub input: Option<(String, Option<String>)>,
}

/// A date or time picker dialog (`date_picker` / `time_picker`).
#[derive(Debug, Clone, PartialEq)]
pub struct PickerSpec {
    /// Expression giving the value shown first (`YYYY-MM-DD` / `HH:MM`); none: today / now.
    pub value: Option<String>,
    /// Action run with `:value` on OK.
    pub action: String,
    /// Title (a template).
    pub title: Option<String>,
    /// Time picker: 24-hour (default) or with AM/PM.
    pub is24: bool,
}

/// What a step does. See `docs/app-format.md` for the semantics of each.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Run one SQL statement with parameters bound from the scope.
    Sql {
        /// The statement.
        sql: String,
        /// Another app's database to run it on (one the manifest lists in `writes`); `None`:
        /// this app's own.
        app: Option<String>,
    },
    /// Stop the action unless the query's first value is true.
    Guard {
        /// A query whose first column of the first row decides.
        sql: String,
        /// Toast shown when the guard stops the action.
        toast: Option<String>,
    },
    /// Push a screen.
    Navigate {
        /// Screen name, or an expression giving it when `dynamic`.
        screen: String,
        /// Whether `screen` is an expression (`navigate_by`).
        dynamic: bool,
        /// Screen arguments.
        args: ExprArgs,
    },
    /// Replace the top screen.
    Replace {
        /// Screen name.
        screen: String,
        /// Screen arguments.
        args: ExprArgs,
    },
    /// Pop screens.
    Back {
        /// How many.
        count: u32,
    },
    /// Set screen variables.
    Set {
        /// Variables and their expressions.
        vars: ExprArgs,
    },
    /// Empty a text field.
    Clear {
        /// The field's element id.
        field: String,
    },
    /// Show a toast.
    Toast {
        /// The message (a template).
        message: String,
    },
    /// Show a dialog.
    Dialog(DialogSpec),
    /// Show a popup menu.
    Menu {
        /// The menu's fixed items.
        items: Vec<Choice>,
        /// More items from the database: columns `label` and `value`, listed after `items`.
        items_sql: Option<String>,
        /// The action the `items_sql` items run, with `:value`.
        action: Option<String>,
    },
    /// Open another app (optionally a given screen with arguments); back returns here.
    OpenApp {
        /// The other app's id.
        app: String,
        /// Screen to open; the app's entry screen when `None`.
        screen: Option<String>,
        /// Screen arguments.
        args: ExprArgs,
    },
    /// Put text on the clipboard.
    Copy {
        /// Expression giving the text.
        expr: String,
    },
    /// Append the clipboard to a text field.
    Paste {
        /// The field's element id.
        field: String,
    },
    /// Record an app event.
    Emit {
        /// Event name.
        event: String,
        /// Event data: names and expressions.
        data: ExprArgs,
    },
    /// Android's DatePickerDialog; OK runs the action with `:value` = `YYYY-MM-DD`.
    DatePicker(PickerSpec),
    /// Android's TimePickerDialog (text input mode); OK runs the action with `:value` = `HH:MM`.
    TimePicker(PickerSpec),
    /// Run one of this app's actions later, in the background, at a virtual time.
    Schedule(ScheduleSpec),
    /// Cancel this app's scheduled actions and notifications with a key.
    Cancel {
        /// Expression giving the key.
        key: String,
    },
    /// Post a notification to the shade.
    Notify(NotifySpec),
    /// Open the share sheet with a text or a file.
    Share {
        /// What is shared: `text`, `subject`, `file` (a file id in the Files store), `mime`, as
        /// expressions.
        values: ExprArgs,
    },
    /// Ask another app to pick something (a file, a photo) and return it to `action`.
    Pick {
        /// The MIME type asked for (a template), e.g. `image/*`.
        mime: String,
        /// This app's action run with what the other app returns.
        action: String,
    },
    /// Return values to the app that asked this one to pick (`pick`), which then runs its action.
    Return {
        /// The values returned, as expressions.
        values: ExprArgs,
    },
    /// Run a query: its first row's columns become names for the following steps (each bound
    /// to none when there is no row), or, with `into`, all rows become a list under that name.
    Query {
        /// The statement.
        sql: String,
        /// The name all rows are bound to.
        into: Option<String>,
        /// Another app's database to read (listed in the manifest's `reads` or `writes`).
        app: Option<String>,
    },
    /// Run `then` when the expression is true, else `otherwise`.
    If {
        /// A minijinja expression over the scope.
        cond: String,
        /// Steps run when it is true.
        then: Vec<StepDef>,
        /// Steps run when it is false (`else`).
        otherwise: Vec<StepDef>,
    },
    /// Run another action of the same app (its guards stop only it; its failure undoes all).
    Call {
        /// The action.
        action: String,
        /// Its event arguments, as expressions.
        args: ExprArgs,
    },
    /// Put text into text fields of the screen on top.
    Fill {
        /// Field ids and expressions.
        fields: ExprArgs,
    },
}

/// When and what a `schedule` step runs.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleSpec {
    /// The action to run (of the same app).
    pub action: String,
    /// When: an expression giving an absolute virtual time (`at`, ms since the epoch) or a
    /// delay (`after`, ms); exactly one, unless `rows` gives the times.
    pub when: ScheduleWhen,
    /// Arguments the action receives, as expressions.
    pub args: ExprArgs,
    /// Expression giving a key that `cancel` can name (and that replaces an earlier one).
    pub key: Option<String>,
}

/// See [`ScheduleSpec::when`].
#[derive(Debug, Clone, PartialEq)]
pub enum ScheduleWhen {
    /// Absolute time, ms since the epoch (an expression).
    At(String),
    /// Delay from now, ms (an expression).
    After(String),
    /// One run per row of a query: its column `at` is the time; the other columns are the
    /// action's arguments (a column `key` also keys it).
    Rows(String),
}

/// A `notify` step: a notification in the shade; tapping it opens `screen` of the app.
#[derive(Debug, Clone, PartialEq)]
pub struct NotifySpec {
    /// Title (a template).
    pub title: String,
    /// Text (a template).
    pub text: Option<String>,
    /// Screen opened by a tap (the app's entry screen when `None`).
    pub screen: Option<String>,
    /// The screen's arguments, as expressions.
    pub args: ExprArgs,
    /// Expression giving a key: a later notification with the same key replaces it, `cancel`
    /// removes it.
    pub key: Option<String>,
}

impl Step {
    /// Every step kind's key, for messages.
    pub const KINDS: [&'static str; 27] = [
        "sql",
        "guard",
        "navigate",
        "navigate_by",
        "replace",
        "back",
        "set",
        "clear",
        "toast",
        "dialog",
        "menu",
        "open_app",
        "copy",
        "paste",
        "emit",
        "schedule",
        "cancel",
        "notify",
        "share",
        "pick",
        "return",
        "query",
        "if",
        "call",
        "fill",
        "date_picker",
        "time_picker",
    ];

    /// Whether the step needs a screen in front (navigation, dialogs, text fields): such steps
    /// cannot run in a scheduled (background) action.
    pub fn needs_screen(&self) -> bool {
        matches!(
            self,
            Step::Navigate { .. }
                | Step::Replace { .. }
                | Step::Back { .. }
                | Step::Set { .. }
                | Step::Clear { .. }
                | Step::Dialog(_)
                | Step::Menu { .. }
                | Step::OpenApp { .. }
                | Step::Paste { .. }
                | Step::Share { .. }
                | Step::Pick { .. }
                | Step::Return { .. }
                | Step::Fill { .. }
                | Step::DatePicker(_)
                | Step::TimePicker(_)
        )
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ActionRepr {
    steps: Vec<Spanned<toml::Table>>,
}

/// Parses `actions.toml` text; `file` is used in errors.
pub fn parse_actions(file: &Path, text: &str) -> Result<BTreeMap<String, ActionDef>, LoadError> {
    let repr: BTreeMap<String, Spanned<ActionRepr>> =
        toml::from_str(text).map_err(|e| toml_error(file, text, &e))?;
    let mut actions = BTreeMap::new();
    for (name, action) in repr {
        let line = line_of(text, action.span().start);
        if !is_identifier(&name) {
            return Err(LoadError::at(
                file,
                line,
                format!("action name `{name}` must be letters, digits and `_`"),
            ));
        }
        let mut steps = Vec::new();
        for step in action.into_inner().steps {
            let step_line = line_of(text, step.span().start);
            let mut reader = StepReader { table: step.into_inner(), file, line: step_line, name: &name };
            let parsed = reader.step()?;
            reader.finish()?;
            steps.push(StepDef { step: parsed, line: step_line });
        }
        if steps.is_empty() {
            return Err(LoadError::at(file, line, format!("action `{name}` has no steps")));
        }
        actions.insert(name.clone(), ActionDef { name, steps, line });
    }
    Ok(actions)
}

/// Whether `name` is a plain identifier (letters, digits, `_`, not starting with a digit).
pub fn is_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b) if b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Reads one step table, consuming the keys it understands so `finish` can name the rest.
struct StepReader<'a> {
    table: toml::Table,
    file: &'a Path,
    line: usize,
    name: &'a str,
}

impl StepReader<'_> {
    fn error(&self, message: impl Into<String>) -> LoadError {
        LoadError::at(self.file, self.line, format!("action `{}`: {}", self.name, message.into()))
    }

    fn step(&mut self) -> Result<Step, LoadError> {
        // `toast` is a kind of its own and also the message of a `guard`.
        let guard = self.table.contains_key("guard");
        let kinds: Vec<&str> = Step::KINDS
            .iter()
            .copied()
            .filter(|k| self.table.contains_key(*k) && !(guard && *k == "toast"))
            .collect();
        let kind = match kinds.as_slice() {
            [kind] => *kind,
            [] => {
                let keys: Vec<&String> = self.table.keys().collect();
                return Err(self.error(format!(
                    "step has no kind (keys: {keys:?}); a step is one of: {}",
                    Step::KINDS.join(", ")
                )));
            }
            many => return Err(self.error(format!("step has several kinds {many:?}; split it into steps"))),
        };
        Ok(match kind {
            "sql" => Step::Sql { sql: self.string("sql")?, app: self.opt_string("app")? },
            "guard" => Step::Guard { sql: self.string("guard")?, toast: self.opt_string("toast")? },
            "navigate" => {
                Step::Navigate { screen: self.string("navigate")?, dynamic: false, args: self.args("args")? }
            }
            "navigate_by" => Step::Navigate {
                screen: self.string("navigate_by")?,
                dynamic: true,
                args: self.args("args")?,
            },
            "replace" => Step::Replace { screen: self.string("replace")?, args: self.args("args")? },
            "back" => {
                let count = match self.table.remove("back") {
                    Some(Value::Integer(n)) if (1..=100).contains(&n) => n as u32,
                    Some(Value::Boolean(true)) => 1,
                    other => {
                        return Err(self.error(format!(
                            "`back` must be a number of screens from 1 to 100, not {}",
                            describe(other.as_ref())
                        )));
                    }
                };
                Step::Back { count }
            }
            "set" => Step::Set { vars: self.args("set")? },
            "clear" => Step::Clear { field: self.string("clear")? },
            "toast" => Step::Toast { message: self.string("toast")? },
            "dialog" => Step::Dialog(self.dialog()?),
            "menu" => {
                let mut table = self.sub_table("menu")?;
                let items = if table.contains_key("items") {
                    choices(&mut table, "items").map_err(|m| self.error(format!("menu: {m}")))?
                } else {
                    Vec::new()
                };
                let mut take = |key: &str| match table.remove(key) {
                    None => Ok(None),
                    Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s)),
                    Some(other) => Err(format!(
                        "menu `{key}` must be a non-empty string, not {}",
                        describe(Some(&other))
                    )),
                };
                let items_sql = take("items_sql").map_err(|m| self.error(m))?;
                let action = take("action").map_err(|m| self.error(m))?;
                if let Some(key) = table.keys().next() {
                    return Err(
                        self.error(format!("menu: unknown key `{key}` (expected items, items_sql, action)"))
                    );
                }
                if items.is_empty() && items_sql.is_none() {
                    return Err(self.error("menu has no `items` (or `items_sql`)"));
                }
                if items_sql.is_some() != action.is_some() {
                    return Err(self.error("a menu's `items_sql` needs an `action` for its items, and `action` needs `items_sql`"));
                }
                Step::Menu { items, items_sql, action }
            }
            "open_app" => Step::OpenApp {
                app: self.string("open_app")?,
                screen: self.opt_string("screen")?,
                args: self.args("args")?,
            },
            "copy" => Step::Copy { expr: self.string("copy")? },
            "paste" => Step::Paste { field: self.string("paste")? },
            "emit" => Step::Emit { event: self.string("emit")?, data: self.args("data")? },
            "schedule" => Step::Schedule(self.schedule()?),
            "cancel" => Step::Cancel { key: self.string("cancel")? },
            "notify" => Step::Notify(self.notify()?),
            "share" => {
                let values = self.args("share")?;
                if let Some((bad, _)) =
                    values.iter().find(|(k, _)| !matches!(k.as_str(), "text" | "subject" | "file" | "mime"))
                {
                    return Err(self.error(format!(
                        "share: unknown value `{bad}` (expected text, subject, file, mime)"
                    )));
                }
                if !values.iter().any(|(k, _)| k == "text" || k == "file") {
                    return Err(self.error("share needs a `text` or a `file`"));
                }
                Step::Share { values }
            }
            "pick" => {
                let mut table = self.sub_table("pick")?;
                let mut take = |key: &str| match table.remove(key) {
                    Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
                    other => Err(format!(
                        "pick `{key}` must be a non-empty string, not {}",
                        describe(other.as_ref())
                    )),
                };
                let mime = take("mime").map_err(|m| self.error(m))?;
                let action = take("action").map_err(|m| self.error(m))?;
                if let Some(key) = table.keys().next() {
                    return Err(self.error(format!("pick: unknown key `{key}` (expected mime, action)")));
                }
                Step::Pick { mime, action }
            }
            "return" => Step::Return { values: self.args("return")? },
            "query" => {
                let sql = self.string("query")?;
                let into = self.opt_string("into")?;
                if let Some(name) = &into
                    && !is_identifier(name)
                {
                    return Err(self.error(format!("query `into` = `{name}` must be an identifier")));
                }
                Step::Query { sql, into, app: self.opt_string("app")? }
            }
            "if" => {
                let cond = self.string("if")?;
                let then = self.nested("then")?;
                let otherwise = self.nested("else")?;
                if then.is_empty() && otherwise.is_empty() {
                    return Err(self.error("`if` needs `then` or `else` steps"));
                }
                Step::If { cond, then, otherwise }
            }
            "call" => Step::Call { action: self.string("call")?, args: self.args("args")? },
            "date_picker" => Step::DatePicker(self.picker("date_picker")?),
            "time_picker" => Step::TimePicker(self.picker("time_picker")?),
            "fill" => {
                let fields = self.args("fill")?;
                if fields.is_empty() {
                    return Err(self.error("`fill` names no field"));
                }
                Step::Fill { fields }
            }
            _ => return Err(self.error(format!("step kind `{kind}` is not handled"))),
        })
    }

    fn dialog(&mut self) -> Result<DialogSpec, LoadError> {
        let mut table = self.sub_table("dialog")?;
        let mut take_string = |key: &str| -> Result<Option<String>, String> {
            match table.remove(key) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s)),
                Some(other) => {
                    Err(format!("dialog `{key}` must be a string, not {}", describe(Some(&other))))
                }
            }
        };
        let title = take_string("title").map_err(|m| self.error(m))?;
        let message = take_string("message").map_err(|m| self.error(m))?;
        let selected = take_string("selected").map_err(|m| self.error(m))?;
        let action = take_string("action").map_err(|m| self.error(m))?;
        let choices_sql = take_string("choices_sql").map_err(|m| self.error(m))?;
        let input = match table.remove("input") {
            None => None,
            Some(Value::Table(mut t)) => {
                let hint = match t.remove("hint") {
                    None => String::new(),
                    Some(Value::String(s)) => s,
                    Some(_) => return Err(self.error("dialog input `hint` must be a string")),
                };
                let value = match t.remove("value") {
                    None => None,
                    Some(Value::String(s)) => Some(s),
                    Some(_) => return Err(self.error("dialog input `value` must be an expression string")),
                };
                if let Some(key) = t.keys().next() {
                    return Err(
                        self.error(format!("dialog input: unknown key `{key}` (expected hint, value)"))
                    );
                }
                Some((hint, value))
            }
            Some(other) => {
                return Err(
                    self.error(format!("dialog `input` must be a table, not {}", describe(Some(&other))))
                );
            }
        };
        let buttons = choices(&mut table, "buttons").map_err(|m| self.error(format!("dialog: {m}")))?;
        let options = match table.remove("choices") {
            None => Vec::new(),
            Some(Value::Array(items)) => {
                let mut options = Vec::new();
                for item in items {
                    let Value::Table(mut t) = item else {
                        return Err(
                            self.error("dialog `choices` must be tables `{ label = .., value = .. }`")
                        );
                    };
                    let label = match t.remove("label") {
                        Some(Value::String(s)) => s,
                        _ => return Err(self.error("every dialog choice needs a string `label`")),
                    };
                    let value = match t.remove("value") {
                        Some(Value::String(s)) => s,
                        Some(Value::Integer(n)) => n.to_string(),
                        _ => return Err(self.error(format!("dialog choice `{label}` needs a `value`"))),
                    };
                    if let Some(key) = t.keys().next() {
                        return Err(self.error(format!("dialog choice: unknown key `{key}`")));
                    }
                    options.push(DialogOption { label, value });
                }
                options
            }
            Some(other) => {
                return Err(
                    self.error(format!("dialog `choices` must be a list, not {}", describe(Some(&other))))
                );
            }
        };
        if let Some(key) = table.keys().next() {
            return Err(self.error(format!(
                "dialog: unknown key `{key}` (expected title, message, buttons, choices, choices_sql, selected, action, input)"
            )));
        }
        if choices_sql.is_some() && !options.is_empty() {
            return Err(self.error("a dialog takes `choices` or `choices_sql`, not both"));
        }
        if (!options.is_empty() || choices_sql.is_some()) && action.is_none() {
            return Err(self.error("a dialog with `choices` needs an `action` to run with `:value`"));
        }
        if options.is_empty() && choices_sql.is_none() && buttons.is_empty() {
            return Err(self.error("a dialog needs `buttons` or `choices`"));
        }
        if title.is_none() && message.is_none() && options.is_empty() && choices_sql.is_none() {
            return Err(self.error("a dialog needs a `title` or a `message`"));
        }
        Ok(DialogSpec { title, message, buttons, options, selected, action, choices_sql, input })
    }

    /// The steps of an `if` branch (a list of step tables); their errors name the `if`'s line.
    fn nested(&mut self, key: &str) -> Result<Vec<StepDef>, LoadError> {
        let items = match self.table.remove(key) {
            None => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(other) => {
                return Err(
                    self.error(format!("`{key}` must be a list of steps, not {}", describe(Some(&other))))
                );
            }
        };
        let mut steps = Vec::new();
        for item in items {
            let Value::Table(table) = item else {
                return Err(self.error(format!("`{key}` must hold step tables like `{{ sql = \"...\" }}`")));
            };
            let mut reader = StepReader { table, file: self.file, line: self.line, name: self.name };
            let step = reader.step()?;
            reader.finish()?;
            steps.push(StepDef { step, line: self.line });
        }
        Ok(steps)
    }

    fn picker(&mut self, kind: &str) -> Result<PickerSpec, LoadError> {
        let mut table = self.sub_table(kind)?;
        let mut take = |key: &str| match table.remove(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s)),
            Some(other) => {
                Err(format!("{kind} `{key}` must be a non-empty string, not {}", describe(Some(&other))))
            }
        };
        let value = take("value").map_err(|m| self.error(m))?;
        let action = take("action").map_err(|m| self.error(m))?;
        let title = take("title").map_err(|m| self.error(m))?;
        let is24 = match table.remove("is24") {
            None => true,
            Some(Value::Boolean(b)) if kind == "time_picker" => b,
            Some(_) => {
                return Err(self.error(format!("{kind}: `is24` must be true or false (time pickers only)")));
            }
        };
        if let Some(key) = table.keys().next() {
            return Err(self.error(format!(
                "{kind}: unknown key `{key}` (expected value, action, title{})",
                if kind == "time_picker" { ", is24" } else { "" }
            )));
        }
        let Some(action) = action else {
            return Err(self.error(format!("{kind} needs the `action` that receives `:value`")));
        };
        Ok(PickerSpec { value, action, title, is24 })
    }

    fn schedule(&mut self) -> Result<ScheduleSpec, LoadError> {
        let action = self.string("schedule")?;
        let at = self.opt_string("at")?;
        let after = self.opt_string("after")?;
        let rows = self.opt_string("rows")?;
        let when = match (at, after, rows) {
            (Some(e), None, None) => ScheduleWhen::At(e),
            (None, Some(e), None) => ScheduleWhen::After(e),
            (None, None, Some(sql)) => ScheduleWhen::Rows(sql),
            _ => return Err(self.error("schedule needs exactly one of `at`, `after` or `rows`")),
        };
        let args = self.args("args")?;
        let key = self.opt_string("key")?;
        if matches!(when, ScheduleWhen::Rows(_)) && (!args.is_empty() || key.is_some()) {
            return Err(
                self.error("schedule with `rows` takes its arguments and key from the query's columns")
            );
        }
        Ok(ScheduleSpec { action, when, args, key })
    }

    fn notify(&mut self) -> Result<NotifySpec, LoadError> {
        let mut table = self.sub_table("notify")?;
        let mut take = |key: &str| match table.remove(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s)),
            Some(other) => {
                Err(format!("notify `{key}` must be a non-empty string, not {}", describe(Some(&other))))
            }
        };
        let title = take("title").map_err(|m| self.error(m))?;
        let text = take("text").map_err(|m| self.error(m))?;
        let screen = take("screen").map_err(|m| self.error(m))?;
        let key = take("key").map_err(|m| self.error(m))?;
        let args = match table.remove("args") {
            None => Vec::new(),
            Some(value) => {
                let mut inner =
                    StepReader { table: toml::Table::from_iter([("args".to_string(), value)]), ..*self };
                inner.args("args")?
            }
        };
        if let Some(key) = table.keys().next() {
            return Err(
                self.error(format!("notify: unknown key `{key}` (expected title, text, screen, args, key)"))
            );
        }
        let Some(title) = title else { return Err(self.error("notify needs a `title`")) };
        Ok(NotifySpec { title, text, screen, args, key })
    }

    fn sub_table(&mut self, key: &str) -> Result<toml::Table, LoadError> {
        match self.table.remove(key) {
            Some(Value::Table(t)) => Ok(t),
            other => Err(self.error(format!("`{key}` must be a table, not {}", describe(other.as_ref())))),
        }
    }

    fn string(&mut self, key: &str) -> Result<String, LoadError> {
        match self.table.remove(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s),
            Some(Value::String(_)) => Err(self.error(format!("`{key}` is empty"))),
            other => Err(self.error(format!("`{key}` must be a string, not {}", describe(other.as_ref())))),
        }
    }

    fn opt_string(&mut self, key: &str) -> Result<Option<String>, LoadError> {
        if self.table.contains_key(key) { self.string(key).map(Some) } else { Ok(None) }
    }

    fn args(&mut self, key: &str) -> Result<ExprArgs, LoadError> {
        match self.table.remove(key) {
            None => Ok(Vec::new()),
            Some(Value::Table(t)) => {
                let mut args = Vec::new();
                for (name, value) in t {
                    if !is_identifier(&name) {
                        return Err(self.error(format!("`{key}` name `{name}` must be an identifier")));
                    }
                    match value {
                        Value::String(expr) => args.push((name, expr)),
                        other => {
                            return Err(self.error(format!(
                                "`{key}.{name}` must be an expression string (e.g. \"id\" or \"'text'\"), not {}",
                                describe(Some(&other))
                            )));
                        }
                    }
                }
                Ok(args)
            }
            Some(other) => {
                Err(self.error(format!("`{key}` must be a table, not {}", describe(Some(&other)))))
            }
        }
    }

    fn finish(&self) -> Result<(), LoadError> {
        match self.table.keys().next() {
            Some(key) => Err(self.error(format!("unknown key `{key}` in this step"))),
            None => Ok(()),
        }
    }
}

fn choices(table: &mut toml::Table, key: &str) -> Result<Vec<Choice>, String> {
    match table.remove(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|item| {
                let Value::Table(mut t) = item else {
                    return Err(format!("`{key}` must be tables `{{ label = .., action = .. }}`"));
                };
                let label = match t.remove("label") {
                    Some(Value::String(s)) if !s.is_empty() => s,
                    _ => return Err(format!("every entry of `{key}` needs a non-empty string `label`")),
                };
                let action = match t.remove("action") {
                    None => None,
                    Some(Value::String(s)) => Some(s),
                    Some(other) => {
                        return Err(format!(
                            "`{label}`: `action` must be a string, not {}",
                            describe(Some(&other))
                        ));
                    }
                };
                if let Some(k) = t.keys().next() {
                    return Err(format!("`{label}`: unknown key `{k}` (expected label, action)"));
                }
                Ok(Choice { label, action })
            })
            .collect(),
        Some(other) => Err(format!("`{key}` must be a list, not {}", describe(Some(&other)))),
    }
}

fn describe(value: Option<&Value>) -> String {
    match value {
        None => "missing".to_string(),
        Some(Value::String(s)) => format!("the string {s:?}"),
        Some(Value::Integer(n)) => format!("the number {n}"),
        Some(Value::Float(n)) => format!("the number {n}"),
        Some(Value::Boolean(b)) => format!("`{b}`"),
        Some(Value::Datetime(_)) => "a date".to_string(),
        Some(Value::Array(_)) => "a list".to_string(),
        Some(Value::Table(_)) => "a table".to_string(),
    }
}

/// Every action name a step refers to (dialog buttons, menu items, choice actions), with the step.
pub fn referenced_actions(action: &ActionDef) -> Vec<(&str, &StepDef)> {
    let mut out = Vec::new();
    referenced_in(&action.steps, &mut out);
    out
}

fn referenced_in<'a>(steps: &'a [StepDef], out: &mut Vec<(&'a str, &'a StepDef)>) {
    for step in steps {
        match &step.step {
            Step::Dialog(d) => {
                out.extend(d.buttons.iter().filter_map(|b| b.action.as_deref()).map(|a| (a, step)));
                out.extend(d.action.as_deref().map(|a| (a, step)));
            }
            Step::Menu { items, action, .. } => {
                out.extend(items.iter().filter_map(|b| b.action.as_deref()).map(|a| (a, step)));
                out.extend(action.as_deref().map(|a| (a, step)));
            }
            Step::Schedule(spec) => out.push((spec.action.as_str(), step)),
            Step::Pick { action, .. } => out.push((action.as_str(), step)),
            Step::Call { action, .. } => out.push((action.as_str(), step)),
            Step::DatePicker(p) | Step::TimePicker(p) => out.push((p.action.as_str(), step)),
            Step::If { then, otherwise, .. } => {
                referenced_in(then, out);
                referenced_in(otherwise, out);
            }
            _ => {}
        }
    }
}

/// Every step of a list, those inside `if` branches included, in order.
pub fn flat_steps(steps: &[StepDef]) -> Vec<&StepDef> {
    let mut out = Vec::new();
    let mut stack: Vec<&StepDef> = steps.iter().rev().collect();
    while let Some(step) = stack.pop() {
        out.push(step);
        if let Step::If { then, otherwise, .. } = &step.step {
            stack.extend(then.iter().chain(otherwise).rev());
        }
    }
    out
}

/// Names of the text fields that steps address (`clear`, `paste`), so a misspelt one is visible in
/// review; they are checked at run time against the screen.
pub fn addressed_fields(actions: &BTreeMap<String, ActionDef>) -> BTreeSet<&str> {
    let mut out = BTreeSet::new();
    for action in actions.values() {
        for step in flat_steps(&action.steps) {
            if let Step::Clear { field } | Step::Paste { field } = &step.step {
                out.insert(field.as_str());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<BTreeMap<String, ActionDef>, LoadError> {
        parse_actions(Path::new("actions.toml"), text)
    }

    #[test]
    fn parses_every_step_kind() {
        let actions = parse(
            r#"
[save]
steps = [
  { guard = "SELECT :name <> ''", toast = "Name is required" },
  { sql = "INSERT INTO t (name) VALUES (:name)" },
  { replace = "detail", args = { id = "last_insert_id" } },
  { toast = "Saved" },
]
[other]
steps = [
  { navigate = "a" }, { navigate_by = "vars.target" }, { back = 2 }, { back = true },
  { set = { q = "''" } }, { clear = "name" },
  { dialog = { title = "Delete?", buttons = [{ label = "Cancel" }, { label = "Delete", action = "save" }] } },
  { dialog = { title = "Timeout", choices = [{ label = "15 s", value = 15 }], selected = "vars.t", action = "save" } },
  { menu = { items = [{ label = "Copy", action = "save" }] } },
  { open_app = "messages", screen = "compose", args = { to = "phone" } },
  { copy = "text" }, { paste = "name" }, { emit = "saved", data = { id = "id" } },
]
"#,
        )
        .unwrap();
        let save = &actions["save"];
        assert_eq!(save.line, 2);
        assert_eq!(save.steps.len(), 4);
        assert_eq!(save.steps[1].line, 5);
        assert!(
            matches!(&save.steps[2].step, Step::Replace { screen, args } if screen == "detail" && args[0].1 == "last_insert_id")
        );
        let other = &actions["other"];
        assert_eq!(other.steps.len(), 13);
        assert!(matches!(other.steps[1].step, Step::Navigate { dynamic: true, .. }));
        assert!(matches!(other.steps[3].step, Step::Back { count: 1 }));
        let Step::Dialog(d) = &other.steps[7].step else { panic!() };
        assert_eq!(d.options[0].value, "15");
        assert_eq!(referenced_actions(other).len(), 3);
    }

    #[test]
    fn errors_point_at_the_step() {
        let e = parse("[a]\nsteps = [\n  { sql = \"x\" },\n  { navigate = \"b\", colour = 1 },\n]\n")
            .unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.message.contains("colour"), "{e}");
        let e = parse("[a]\nsteps = [ { jump = \"b\" } ]\n").unwrap_err();
        assert!(e.message.contains("no kind"), "{e}");
        let e = parse("[a]\nsteps = [ { sql = \"x\", toast = \"y\" } ]\n").unwrap_err();
        assert!(e.message.contains("several kinds"), "{e}");
        let e = parse("[a]\nsteps = [ { sql = \"x\", args = {} } ]\n").unwrap_err();
        assert!(e.message.contains("unknown key `args`"), "{e}");
        let e = parse("[a]\nsteps = [ { back = 0 } ]\n").unwrap_err();
        assert!(e.message.contains("from 1 to 100"), "{e}");
        let e = parse("[a]\nsteps = []\n").unwrap_err();
        assert!(e.message.contains("no steps"), "{e}");
        let e = parse(
            "[a]\nsteps = [ { dialog = { title = \"t\", choices = [{ label = \"x\", value = 1 }] } } ]\n",
        )
        .unwrap_err();
        assert!(e.message.contains("needs an `action`"), "{e}");
        let e = parse("[a]\nsteps = [ { sql = \"x\" } ]\n[a]\nsteps = []").unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
    }
}
