//! Running an app's named actions: the step interpreter.
//!
//! An action runs inside one SQLite savepoint: if any step fails (a bug in the package), its
//! database changes are rolled back and the rest of the phone's state is put back as the action
//! found it, so a failed action never leaves half-done state. The failure is the app's, shown to
//! the agent as Android's "`<App>` keeps stopping" dialog; it never ends an episode.

use std::collections::BTreeMap;
use std::sync::Arc;

use minijinja::Value;
use phonebench_apps::{AppPackage, ScheduleWhen, Step, StepDef};

use crate::data::{bind, to_json};
use crate::phone::{AppEvent, Foreground, Frame, MenuAction, Outcome, Overlay, Phone, PhoneError};

/// Where a running action finds names: event arguments, then the screen's fields, vars and args,
/// then the specials.
///
/// The screen's values are taken when the action starts, so steps after a `navigate` still see
/// the fields of the screen the user acted on.
struct Scope {
    event: BTreeMap<String, Value>,
    origin: Frame,
    specials: BTreeMap<String, Value>,
}

impl Phone {
    fn scope_value(scope: &Scope, name: &str) -> Option<Value> {
        if let Some(v) = scope.event.get(name) {
            return Some(v.clone());
        }
        let frame = &scope.origin;
        if let Some(v) = frame.fields.get(name) {
            return Some(Value::from(v.clone()));
        }
        if let Some(v) = frame.vars.get(name) {
            return Some(v.clone());
        }
        if let Some(v) = frame.args.get(name) {
            return Some(v.clone());
        }
        scope.specials.get(name).cloned()
    }

    /// The rows of a query that lists choices (a dialog's `choices_sql`, a menu's `items_sql`,
    /// named by `what` in errors) as (label, value): columns `label` and `value`, neither null.
    fn label_value_rows(
        &self,
        app: usize,
        sql: &str,
        scope: &Scope,
        what: &str,
    ) -> Result<Vec<(String, String)>, String> {
        let rows = {
            let conn = self.apps[app].db.lock().map_err(|_| "lock poisoned".to_string())?;
            crate::data::query_rows(&conn, sql, &|n| Phone::scope_value(scope, n))?
        };
        rows.into_iter()
            .map(|row| {
                let get = |column: &str| {
                    row.get_attr(column)
                        .ok()
                        .filter(|v| !v.is_undefined() && !v.is_none())
                        .map(|v| display(&v))
                };
                match (get("label"), get("value")) {
                    (Some(label), Some(value)) => Ok((label, value)),
                    _ => Err(format!("{what} must give columns `label` and `value` (not null)")),
                }
            })
            .collect()
    }

    /// The expression/template context: every name of the scope at top level (in lookup order)
    /// plus `fields`, `vars`, `args` as maps.
    fn scope_context(scope: &Scope) -> Value {
        let mut map: BTreeMap<String, Value> = scope.specials.clone();
        let frame = &scope.origin;
        for (k, v) in &frame.args {
            map.insert(k.clone(), v.clone());
        }
        for (k, v) in &frame.vars {
            map.insert(k.clone(), v.clone());
        }
        for (k, v) in &frame.fields {
            map.insert(k.clone(), Value::from(v.clone()));
        }
        map.insert("fields".into(), Value::from(frame.fields.clone()));
        map.insert("vars".into(), Value::from(frame.vars.clone()));
        map.insert("args".into(), Value::from(frame.args.clone()));
        for (k, v) in &scope.event {
            map.insert(k.clone(), v.clone());
        }
        Value::from(map)
    }

    /// Runs the foreground app's action `name` with event arguments `args`. A failure of the
    /// app's own code shows as its "keeps stopping" dialog (see [`Phone::crash`]), not an error.
    pub(crate) fn run_action(
        &mut self,
        name: &str,
        args: BTreeMap<String, Value>,
        outcome: &mut Outcome,
    ) -> Result<(), PhoneError> {
        let Foreground::App(app) = self.foreground else {
            outcome.notes.push(format!("action `{name}` has no app in front to run in"));
            return Ok(());
        };
        match self.run_app_action(app, name, args, outcome) {
            Ok(()) => Ok(()),
            Err(e) => {
                let message = self.app_failure(e)?;
                self.crash(app, message, outcome);
                Ok(())
            }
        }
    }

    pub(crate) fn run_app_action(
        &mut self,
        app: usize,
        name: &str,
        args: BTreeMap<String, Value>,
        outcome: &mut Outcome,
    ) -> Result<(), PhoneError> {
        let package = self.apps[app].package.clone();
        let app_id = package.manifest.id.clone();
        if !package.actions.contains_key(name) {
            return Err(PhoneError::App {
                app: app_id,
                message: format!("a screen names unknown action `{name}` (computed handler)"),
            });
        };
        self.data_version += 1;
        let db = self.apps[app].db.clone();
        let savepoint = |sql: &str| -> Result<(), PhoneError> {
            let conn = db
                .lock()
                .map_err(|_| PhoneError::App { app: app_id.clone(), message: "lock poisoned".into() })?;
            conn.execute_batch(sql)
                .map_err(|e| PhoneError::App { app: app_id.clone(), message: e.to_string() })
        };
        savepoint("SAVEPOINT phonebench_action")?;
        // A background (scheduled) action has no screen: its scope has no fields or vars.
        let origin = if self.background {
            Frame::default()
        } else {
            self.apps[app].stack.last().cloned().unwrap_or_default()
        };
        let mut scope = Scope { event: args, origin, specials: BTreeMap::new() };
        scope.specials.insert("now".into(), Value::from(self.now_ms()));
        scope.specials.insert("clipboard".into(), Value::from(self.clipboard.clone().unwrap_or_default()));
        let session = self.session();
        let foreign_before = self.foreign_writes.len();
        let result = self.run_steps(app, &package, name, &mut scope, outcome);
        // Other apps' databases this action wrote (`{ sql, app }`) end with it: kept or undone.
        let foreign: Vec<usize> = self.foreign_writes.drain(foreign_before..).collect();
        for other in foreign {
            let sql = if result.is_ok() {
                "RELEASE phonebench_foreign"
            } else {
                "ROLLBACK TO phonebench_foreign; RELEASE phonebench_foreign"
            };
            if let Ok(conn) = self.apps[other].db.lock()
                && !conn.is_autocommit()
            {
                conn.execute_batch(sql).map_err(|e| PhoneError::App {
                    app: self.apps[other].package.manifest.id.clone(),
                    message: e.to_string(),
                })?;
            }
        }
        match result {
            Ok(()) => savepoint("RELEASE phonebench_action"),
            Err(e) => {
                // A write that a limit interrupted makes SQLite roll back the whole transaction:
                // the savepoint (and every change of the action) is gone already.
                if db.lock().is_ok_and(|conn| !conn.is_autocommit()) {
                    savepoint("ROLLBACK TO phonebench_action")?;
                    savepoint("RELEASE phonebench_action")?;
                }
                self.restore_session(session);
                Err(e)
            }
        }
    }

    fn run_steps(
        &mut self,
        app: usize,
        package: &AppPackage,
        name: &str,
        scope: &mut Scope,
        outcome: &mut Outcome,
    ) -> Result<(), PhoneError> {
        let Some(action) = package.actions.get(name) else { return Ok(()) };
        self.run_step_list(app, package, name, &action.steps, scope, outcome, 0).map(|_| ())
    }

    /// Runs `steps` of action `name`; `depth` counts the `call`s it runs under.
    #[allow(clippy::too_many_arguments)]
    fn run_step_list(
        &mut self,
        app: usize,
        package: &AppPackage,
        name: &str,
        steps: &[StepDef],
        scope: &mut Scope,
        outcome: &mut Outcome,
        depth: usize,
    ) -> Result<Flow, PhoneError> {
        for step in steps {
            let at = |message: String| PhoneError::App {
                app: package.manifest.id.clone(),
                message: format!(
                    "{}:{}: action `{name}`: {message}",
                    crate::render::package_path(package, &package.actions_file).display(),
                    step.line
                ),
            };
            let eval = |scope: &Scope, expr: &str| -> Result<Value, PhoneError> {
                let compiled = package.env.compile_expression(expr).map_err(|e| at(e.to_string()))?;
                compiled.eval(Phone::scope_context(scope)).map_err(|e| at(format!("`{expr}`: {e}")))
            };
            let eval_args = |scope: &Scope, args: &[(String, String)]| {
                args.iter()
                    .map(|(k, e)| Ok((k.clone(), eval(scope, e)?)))
                    .collect::<Result<BTreeMap<String, Value>, PhoneError>>()
            };
            let text = |scope: &Scope, template: &str| -> Result<String, PhoneError> {
                package.env.render_str(template, Phone::scope_context(scope)).map_err(|e| at(e.to_string()))
            };
            if self.background && step.step.needs_screen() {
                return Err(at(
                    "this step needs a screen, and a scheduled or boot action runs in the background \
                     (post a notification that opens the screen instead)"
                        .into(),
                ));
            }
            match &step.step {
                Step::Sql { sql, app: target } => {
                    let db = match target {
                        None => self.apps[app].db.clone(),
                        Some(target) => {
                            let other = self.find_app(target).ok_or_else(|| {
                                at(format!("app `{target}` is not installed on this phone"))
                            })?;
                            self.foreign_savepoint(other).map_err(at)?;
                            self.apps[other].db.clone()
                        }
                    };
                    let (changes, last) = {
                        let conn = db.lock().map_err(|_| at("lock poisoned".into()))?;
                        let mut stmt = conn.prepare_cached(sql).map_err(|e| {
                            at(format!("SQL error: {}", phonebench_apps::sandbox::explain(&e)))
                        })?;
                        bind(&mut stmt, sql, &|n| Phone::scope_value(scope, n)).map_err(at)?;
                        let changes = stmt.raw_execute().map_err(|e| {
                            at(format!("SQL error: {}", phonebench_apps::sandbox::explain(&e)))
                        })?;
                        (changes, conn.last_insert_rowid())
                    };
                    scope.specials.insert("changes".into(), Value::from(changes as i64));
                    scope.specials.insert("last_insert_id".into(), Value::from(last));
                }
                Step::Guard { sql, toast } => {
                    let pass = {
                        let conn = self.apps[app].db.lock().map_err(|_| at("lock poisoned".into()))?;
                        let rows = crate::data::query_rows(&conn, sql, &|n| Phone::scope_value(scope, n))
                            .map_err(at)?;
                        rows.first()
                            .and_then(|row| {
                                row.try_iter()
                                    .ok()
                                    .and_then(|mut k| k.next())
                                    .and_then(|k| row.get_item(&k).ok())
                            })
                            .is_some_and(|v| v.is_true())
                    };
                    if !pass {
                        if let Some(t) = toast {
                            let message = text(scope, t)?;
                            self.show_toast(message, package.manifest.package.clone());
                        }
                        return Ok(Flow::Stop);
                    }
                }
                Step::Navigate { screen, dynamic, args } => {
                    let screen = if *dynamic {
                        let value = eval(scope, screen)?;
                        let name = value.as_str().map(str::to_string).unwrap_or_else(|| value.to_string());
                        if !package.screens.contains_key(&name) {
                            return Err(at(format!("navigate_by gave unknown screen `{name}`")));
                        }
                        name
                    } else {
                        screen.clone()
                    };
                    let args = eval_args(scope, args)?;
                    self.keyboard = false;
                    self.apps[app].stack.push(Frame::new(&screen, args));
                }
                Step::Replace { screen, args } => {
                    let args = eval_args(scope, args)?;
                    let stack = &mut self.apps[app].stack;
                    let opened_from = stack.pop().and_then(|f| f.opened_from);
                    let mut frame = Frame::new(screen, args);
                    frame.opened_from = opened_from;
                    stack.push(frame);
                    self.keyboard = false;
                }
                Step::Back { count } => {
                    for _ in 0..*count {
                        if self.foreground != Foreground::App(app) {
                            break;
                        }
                        self.keyboard = false;
                        self.overlay = None;
                        self.back();
                    }
                }
                Step::Set { vars } => {
                    let values = eval_args(scope, vars)?;
                    if let Some(frame) = self.apps[app].stack.last_mut() {
                        frame.vars.extend(values);
                    }
                }
                Step::Clear { field } => {
                    if let Some(frame) = self.apps[app].stack.last_mut() {
                        frame.fields.insert(field.clone(), String::new());
                    }
                }
                Step::Toast { message } => {
                    let message = text(scope, message)?;
                    self.show_toast(message, package.manifest.package.clone());
                }
                Step::Dialog(spec) => {
                    let title = spec.title.as_deref().map(|t| text(scope, t)).transpose()?;
                    let message = spec.message.as_deref().map(|t| text(scope, t)).transpose()?;
                    let buttons = spec
                        .buttons
                        .iter()
                        .map(|b| Ok((text(scope, &b.label)?, b.action.clone())))
                        .collect::<Result<Vec<_>, PhoneError>>()?;
                    let mut options = spec
                        .options
                        .iter()
                        .map(|o| Ok((text(scope, &o.label)?, text(scope, &o.value)?)))
                        .collect::<Result<Vec<_>, PhoneError>>()?;
                    if let Some(sql) = &spec.choices_sql {
                        options.extend(self.label_value_rows(app, sql, scope, "choices_sql").map_err(at)?);
                    }
                    let input = match &spec.input {
                        Some((_, Some(value))) => {
                            let v = eval(scope, value)?;
                            Some(if v.is_none() || v.is_undefined() { String::new() } else { display(&v) })
                        }
                        Some((_, None)) => Some(String::new()),
                        None => None,
                    };
                    let input_hint = match &spec.input {
                        Some((hint, _)) => text(scope, hint)?,
                        None => String::new(),
                    };
                    let selected = match &spec.selected {
                        Some(e) => {
                            let v = eval(scope, e)?;
                            Some(v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))
                        }
                        None => None,
                    };
                    // An input dialog opens with its field focused and the keyboard up.
                    self.keyboard = input.is_some();
                    self.overlay = Some(Overlay::Dialog {
                        title,
                        message,
                        buttons,
                        options,
                        selected,
                        action: spec.action.clone(),
                        args: scope.event.clone(),
                        input,
                        input_hint,
                    });
                }
                Step::DatePicker(spec) => {
                    let today = crate::pickers::parse_date(
                        &phonebench_apps::templates::format_datetime(self.now_ms(), "%Y-%m-%d")
                            .unwrap_or_default(),
                    );
                    let value = spec.value.as_deref().map(|e| eval(scope, e)).transpose()?;
                    let shown =
                        value.as_ref().and_then(|v| crate::pickers::parse_date(&display(v))).or(today);
                    let Some(selected) = shown else {
                        return Err(at("date_picker: no date to show".into()));
                    };
                    self.keyboard = false;
                    self.overlay = Some(Overlay::DatePicker(crate::pickers::DatePicker {
                        title: spec.title.as_deref().map(|t| text(scope, t)).transpose()?,
                        shown: (chrono::Datelike::year(&selected), chrono::Datelike::month(&selected)),
                        selected,
                        action: spec.action.clone(),
                        args: scope.event.clone(),
                    }));
                }
                Step::TimePicker(spec) => {
                    let value = spec.value.as_deref().map(|e| eval(scope, e)).transpose()?;
                    let now = phonebench_apps::templates::format_datetime(self.now_ms(), "%H:%M")
                        .unwrap_or_default();
                    let (h, m) = value
                        .as_ref()
                        .and_then(|v| crate::pickers::parse_time(&display(v)))
                        .or_else(|| crate::pickers::parse_time(&now))
                        .unwrap_or((0, 0));
                    let (hour, pm) = if spec.is24 { (h, false) } else { ((h + 11) % 12 + 1, h >= 12) };
                    self.keyboard = true;
                    self.overlay = Some(Overlay::TimePicker(crate::pickers::TimePicker {
                        title: spec.title.as_deref().map(|t| text(scope, t)).transpose()?,
                        hour: format!("{hour:02}"),
                        minute: format!("{m:02}"),
                        field: 0,
                        is24: spec.is24,
                        pm,
                        error: None,
                        action: spec.action.clone(),
                        args: scope.event.clone(),
                        fresh: true,
                    }));
                }
                Step::Menu { items, items_sql, action } => {
                    let mut items = items
                        .iter()
                        .map(|i| {
                            let label = text(scope, &i.label)?;
                            let action = match &i.action {
                                Some(a) => MenuAction::App { action: a.clone(), args: scope.event.clone() },
                                None => MenuAction::Close,
                            };
                            Ok((label, action))
                        })
                        .collect::<Result<Vec<_>, PhoneError>>()?;
                    if let (Some(sql), Some(action)) = (items_sql, action) {
                        // Items from the database: columns `label` and `value`; each runs
                        // `action` with the opening action's arguments plus `:value`.
                        for (label, value) in
                            self.label_value_rows(app, sql, scope, "items_sql").map_err(at)?
                        {
                            let mut args = scope.event.clone();
                            args.insert("value".into(), Value::from(value));
                            items.push((label, MenuAction::App { action: action.clone(), args }));
                        }
                    }
                    if items.is_empty() {
                        // Nothing to offer (an empty query): say so rather than open an empty menu.
                        self.show_toast("Nothing to choose".into(), package.manifest.package.clone());
                        continue;
                    }
                    self.keyboard = false;
                    self.overlay = Some(Overlay::Menu { items, anchor: (540.0, 600.0) });
                }
                Step::OpenApp { app: target, screen, args } => {
                    let Some(index) = self.find_app(target) else {
                        return Err(at(format!("open_app: app `{target}` is not installed on this phone")));
                    };
                    let args = eval_args(scope, args)?;
                    match screen {
                        Some(screen) => {
                            let mut frame = Frame::new(screen, args);
                            frame.opened_from = Some(app);
                            self.apps[index].stack.push(frame);
                            self.switch_to(index);
                        }
                        None => {
                            self.apps[index].return_to = Some(app);
                            self.launch(index);
                        }
                    }
                }
                Step::Copy { expr } => {
                    let v = eval(scope, expr)?;
                    self.clipboard = Some(v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()));
                }
                Step::Paste { field } => {
                    let clip = self.clipboard.clone().unwrap_or_default();
                    if let Some(frame) = self.apps[app].stack.last_mut() {
                        let value = frame.fields.remove(field).unwrap_or_default();
                        let value = crate::phone::admit_text(value, &clip, outcome);
                        frame.fields.insert(field.clone(), value);
                    }
                }
                Step::Schedule(spec) => {
                    let key = |scope: &Scope, e: &Option<String>| -> Result<Option<String>, PhoneError> {
                        e.as_deref().map(|e| eval(scope, e).map(|v| display(&v))).transpose()
                    };
                    let now = self.now_ms();
                    let mut runs: Vec<(i64, BTreeMap<String, Value>, Option<String>)> = Vec::new();
                    match &spec.when {
                        ScheduleWhen::At(e) | ScheduleWhen::After(e) => {
                            let v = eval(scope, e)?;
                            let ms = i64::try_from(v.clone())
                                .map_err(|_| at(format!("schedule: `{e}` gave {v}, not a number of ms")))?;
                            let due = if matches!(spec.when, ScheduleWhen::After(_)) {
                                now.saturating_add(ms)
                            } else {
                                ms
                            };
                            runs.push((due, eval_args(scope, &spec.args)?, key(scope, &spec.key)?));
                        }
                        ScheduleWhen::Rows(sql) => {
                            let rows = {
                                let conn =
                                    self.apps[app].db.lock().map_err(|_| at("lock poisoned".into()))?;
                                crate::data::query_rows(&conn, sql, &|n| Phone::scope_value(scope, n))
                                    .map_err(at)?
                            };
                            for row in rows {
                                let mut args = BTreeMap::new();
                                let mut due = None;
                                let mut row_key = None;
                                for k in row.try_iter().map_err(|e| at(e.to_string()))? {
                                    let name = display(&k);
                                    let v = row.get_item(&k).map_err(|e| at(e.to_string()))?;
                                    match name.as_str() {
                                        "at" => due = i64::try_from(v).ok(),
                                        "key" => row_key = Some(display(&v)),
                                        _ => {
                                            args.insert(name, v);
                                        }
                                    }
                                }
                                let due = due.ok_or_else(|| {
                                    at("schedule rows: every row needs a column `at` (ms since the epoch)".into())
                                })?;
                                runs.push((due, args, row_key));
                            }
                        }
                    }
                    for (due, args, key) in runs {
                        Arc::make_mut(&mut self.timeline)
                            .schedule(app, spec.action.clone(), due, args, key)
                            .map_err(at)?;
                    }
                }
                Step::Cancel { key } => {
                    let key = display(&eval(scope, key)?);
                    Arc::make_mut(&mut self.timeline).cancel(app, &key);
                }
                Step::Notify(spec) => {
                    let notification = crate::timeline::Notification {
                        seq: 0,
                        app,
                        key: spec.key.as_deref().map(|e| eval(scope, e).map(|v| display(&v))).transpose()?,
                        title: text(scope, &spec.title)?,
                        text: spec.text.as_deref().map(|t| text(scope, t)).transpose()?,
                        posted_ms: self.now_ms(),
                        screen: spec.screen.clone(),
                        args: eval_args(scope, &spec.args)?,
                    };
                    Arc::make_mut(&mut self.timeline).post(notification);
                }
                Step::Share { values } => {
                    let values = eval_args(scope, values)?;
                    self.share(app, values, outcome);
                }
                Step::Pick { mime, action } => {
                    let mime = text(scope, mime)?;
                    let request = crate::intents::PickRequest {
                        from: app,
                        action: action.clone(),
                        args: scope.event.clone(),
                    };
                    self.pick(app, mime, request, outcome);
                }
                Step::Return { values } => {
                    let values = eval_args(scope, values)?;
                    self.return_picked(app, values).map_err(at)?;
                }
                Step::Emit { event, data } => {
                    let values = eval_args(scope, data)?;
                    let data: serde_json::Map<String, serde_json::Value> =
                        values.iter().map(|(k, v)| (k.clone(), to_json(v))).collect();
                    self.events.push(AppEvent {
                        time_ms: self.now_ms(),
                        app: package.manifest.id.clone(),
                        name: event.clone(),
                        data: serde_json::Value::Object(data),
                    });
                }
                Step::Query { sql, into, app: source } => {
                    let db = match source {
                        None => self.apps[app].db.clone(),
                        Some(source) => {
                            let other = self.find_app(source).ok_or_else(|| {
                                at(format!("app `{source}` is not installed on this phone"))
                            })?;
                            self.apps[other].db.clone()
                        }
                    };
                    let (columns, rows) = {
                        let conn = db.lock().map_err(|_| at("lock poisoned".into()))?;
                        let stmt = conn.prepare_cached(sql).map_err(|e| {
                            at(format!("SQL error: {}", phonebench_apps::sandbox::explain(&e)))
                        })?;
                        // Another app's database is read here, never written (`sql` with `app` writes).
                        if source.is_some() && !stmt.readonly() {
                            return Err(at("a query on another app's database must only read".into()));
                        }
                        let columns: Vec<String> = stmt.column_names().map(str::to_string).collect();
                        let rows = crate::data::query_rows(&conn, sql, &|n| Phone::scope_value(scope, n))
                            .map_err(at)?;
                        (columns, rows)
                    };
                    // Event arguments come first in the scope: the names shadow the screen's.
                    match into {
                        Some(list) => {
                            scope.event.insert(list.clone(), Value::from(rows));
                        }
                        None => {
                            let first = rows.into_iter().next();
                            for column in columns {
                                let value = first
                                    .as_ref()
                                    .and_then(|row| row.get_attr(&column).ok())
                                    .filter(|v| !v.is_undefined())
                                    .unwrap_or(Value::from(()));
                                scope.event.insert(column, value);
                            }
                        }
                    }
                }
                Step::If { cond, then, otherwise } => {
                    let branch = if eval(scope, cond)?.is_true() { then } else { otherwise };
                    if self.run_step_list(app, package, name, branch, scope, outcome, depth)? == Flow::Stop {
                        return Ok(Flow::Stop);
                    }
                }
                Step::Call { action: callee, args } => {
                    if depth >= MAX_CALL_DEPTH {
                        return Err(at(format!(
                            "calls nest deeper than {MAX_CALL_DEPTH} (an action that calls itself without end?)"
                        )));
                    }
                    let Some(def) = package.actions.get(callee) else {
                        return Err(at(format!("call: unknown action `{callee}`")));
                    };
                    let event = eval_args(scope, args)?;
                    let mut inner =
                        Scope { event, origin: scope.origin.clone(), specials: scope.specials.clone() };
                    // A guard that stops the callee stops only the callee.
                    self.run_step_list(app, package, callee, &def.steps, &mut inner, outcome, depth + 1)?;
                    for special in ["last_insert_id", "changes"] {
                        if let Some(v) = inner.specials.get(special) {
                            scope.specials.insert(special.into(), v.clone());
                        }
                    }
                }
                Step::Fill { fields } => {
                    let values = eval_args(scope, fields)?;
                    if let Some(frame) = self.apps[app].stack.last_mut() {
                        for (field, value) in values {
                            let text = if value.is_none() || value.is_undefined() {
                                String::new()
                            } else {
                                display(&value)
                            };
                            let text = crate::phone::admit_text(String::new(), &text, outcome);
                            frame.fields.insert(field, text);
                        }
                    }
                }
            }
        }
        Ok(Flow::Continue)
    }
}

/// How deep `call` steps may nest.
pub const MAX_CALL_DEPTH: usize = 16;

/// Whether a list of steps ran to its end or a guard stopped the action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Continue,
    Stop,
}

impl Phone {
    /// Opens a savepoint on app `other`'s database the first time the running action writes
    /// it, so that the action's failure undoes that write too.
    fn foreign_savepoint(&mut self, other: usize) -> Result<(), String> {
        if self.foreign_writes.contains(&other) {
            return Ok(());
        }
        let conn = self.apps[other].db.lock().map_err(|_| "lock poisoned".to_string())?;
        conn.execute_batch("SAVEPOINT phonebench_foreign").map_err(|e| e.to_string())?;
        drop(conn);
        self.foreign_writes.push(other);
        Ok(())
    }
}

/// A value as text: strings as they are, anything else as minijinja prints it.
fn display(v: &Value) -> String {
    v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())
}
