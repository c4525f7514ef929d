//! The phone's state and its public API.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use minijinja::Value;
use phonebench_actions::{Action, Direction, Key, Swipe, Target};
use phonebench_apps::{AppPackage, CLOCK_START_MS, Catalog};
use phonebench_observe::{Observation, ObservationFormat, ResolveError, render};
use phonebench_uitree::{Node, NodeId, UiTree};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use rusqlite::Connection;
use serde::Serialize;

use crate::data::{SharedDb, query_rows};
use crate::display::Display;
use crate::render::{NodeInfo, Screen, TOAST_LAYER};
use crate::view::{Handler, Kind, SystemHandler};
use crate::{MAX_WAIT_MS, MS_PER_ACTION, TOAST_MS};
use phonebench_pixels::{Paint, Pixmap, ScreenImage};

/// Battery level the status bar shows; the Settings app's seed says the same.
pub const BATTERY_PERCENT: u8 = 85;

/// The most characters a text field holds. Text typed or pasted beyond it is cut off, with a note
/// the agent sees: an agent that types megabytes must not make every later step cost as much.
pub const MAX_FIELD_CHARS: usize = 10_000;

/// How a phone is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhoneConfig {
    /// Seeds the phone's random generator.
    pub seed: u64,
    /// Virtual clock at creation and after reset, ms since the epoch.
    pub clock_start_ms: i64,
    /// Screen size and density; the UI tree's bounds and screenshots follow it.
    pub display: Display,
    /// Pop-ups, ads, notifications and slow screens, planned from `seed` (`disturb.rs`).
    pub disturbances: crate::Disturbances,
}

impl Default for PhoneConfig {
    fn default() -> Self {
        PhoneConfig {
            seed: 0,
            clock_start_ms: CLOCK_START_MS,
            display: Display::default(),
            disturbances: crate::Disturbances::None,
        }
    }
}

/// What is in front.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "app")]
pub enum Foreground {
    /// The launcher's home screen.
    Home,
    /// The overview of recent apps.
    Overview,
    /// An app, by index in the catalog.
    App(usize),
}

/// An event an app emitted (`emit` step): what tasks check besides state.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AppEvent {
    /// Virtual time, ms since the epoch.
    pub time_ms: i64,
    /// The app's id.
    pub app: String,
    /// Event name.
    pub name: String,
    /// Event data.
    pub data: serde_json::Value,
}

/// What an action did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Outcome {
    /// The node the action was aimed at (the hit node for touches), as it was on screen.
    pub hit: Option<Node>,
    /// Things a person would notice did not happen ("no text field has focus"), in order.
    pub notes: Vec<String>,
}

/// Why an action could not be applied.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PhoneError {
    /// The target does not resolve on the current screen.
    #[error(transparent)]
    Target(#[from] ResolveError),
    /// Answers, finishing, asking the user and MCP calls are the episode's business.
    #[error("`{0}` is not a device action: the episode handles it")]
    NotDeviceAction(&'static str),
    /// No installed app has this id or name.
    #[error("no app called `{0}` is installed ({1})")]
    UnknownApp(String, String),
    /// An app package failed at run time (its SQL, template or action): a bug in the package.
    #[error("app `{app}`: {message}")]
    App {
        /// The app's id.
        app: String,
        /// What went wrong, naming the file.
        message: String,
    },
    /// The configured screen cannot be used.
    #[error("screen: {0}")]
    Display(String),
}

/// One screen on an app's back stack.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Frame {
    pub screen: String,
    pub args: BTreeMap<String, Value>,
    pub vars: BTreeMap<String, Value>,
    pub fields: BTreeMap<String, String>,
    pub focused: Option<String>,
    pub scroll: BTreeMap<String, f32>,
    /// The app that opened this screen (`open_app`): back from it returns there.
    pub opened_from: Option<usize>,
    /// Whether the screen has rendered once (text field values and autofocus are applied then).
    pub initialized: bool,
    /// Set on a screen another app opened with `pick`: its `return` step answers this request.
    pub pick: Option<crate::intents::PickRequest>,
    /// The page each pager shows (by element id), once the user turned it.
    pub pages: BTreeMap<String, usize>,
    /// Whether the screen's `init` action has run (before its first render).
    pub init_done: bool,
    /// Each text field's selection (start, end) in characters, once a cursor was placed; a
    /// field without one has its cursor at the end.
    pub selection: BTreeMap<String, (usize, usize)>,
}

impl Frame {
    pub(crate) fn new(screen: &str, args: BTreeMap<String, Value>) -> Frame {
        Frame { screen: screen.to_string(), args, ..Frame::default() }
    }
}

/// A running app.
#[derive(Debug)]
pub(crate) struct AppRuntime {
    pub package: Arc<AppPackage>,
    pub db: SharedDb,
    pub stack: Vec<Frame>,
    /// Its last rendered and laid-out screens, each reused while nothing it depends on changed.
    pub renders: crate::render::Renders,
    /// The app that brought this one to front with `open_app` (no screen): back at the root
    /// returns there, as Android returns to the previous task.
    pub return_to: Option<usize>,
    /// The pictures its screens may name: its own `assets/` files by name, and every installed
    /// app's as `APP/NAME` (a photo saved from Gmail's attachment shows in Files too).
    pub assets: Arc<BTreeMap<String, String>>,
    /// The digest of `assets`: part of the key of markup parses shared between phones.
    pub assets_digest: crate::shared::Digest,
}

/// A dialog or menu over the foreground app.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Overlay {
    Dialog {
        title: Option<String>,
        message: Option<String>,
        buttons: Vec<(String, Option<String>)>,
        options: Vec<(String, String)>,
        selected: Option<String>,
        action: Option<String>,
        args: BTreeMap<String, Value>,
        /// An input dialog's field: its text (typing goes here) and hint.
        input: Option<String>,
        input_hint: String,
    },
    /// A date picker (`date_picker`).
    DatePicker(crate::pickers::DatePicker),
    /// A time picker (`time_picker`).
    TimePicker(crate::pickers::TimePicker),
    Menu {
        items: Vec<(String, MenuAction)>,
        anchor: (f32, f32),
    },
    /// An app's action failed on its own data (a package bug): Android's "<App> keeps
    /// stopping" dialog over the screen, whose state the failed action left untouched.
    Crash {
        app: usize,
        name: String,
        message: String,
    },
    /// The share sheet or an app chooser: (label, icon, what choosing it does).
    Chooser {
        title: String,
        preview: Option<String>,
        targets: Vec<(String, String, crate::intents::ChooserTarget)>,
    },
}

/// What a menu item does.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum MenuAction {
    App { action: String, args: BTreeMap<String, Value> },
    CopyText(String),
    Paste(String),
    CopyField(String),
    CutField(String),
    SelectAll(String),
    Close,
}

/// A toast on screen.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Toast {
    pub message: String,
    pub package: String,
    pub until_ms: i64,
}

/// Runners, servers and the fake device move phones between threads: everything a phone keeps
/// must be `Send` (taffy's layout trees are not, so they stay in a thread-local store).
const _: () = {
    const fn phone_is_send<T: Send>() {}
    phone_is_send::<Phone>();
};

/// The simulated phone. See the crate documentation.
#[derive(Debug)]
pub struct Phone {
    pub(crate) catalog: Catalog,
    pub(crate) apps: Vec<AppRuntime>,
    pub(crate) config: PhoneConfig,
    pub(crate) clock: Arc<AtomicI64>,
    pub(crate) rng: Arc<Mutex<ChaCha8Rng>>,
    pub(crate) battery: u8,
    pub(crate) foreground: Foreground,
    pub(crate) recents: Vec<usize>,
    pub(crate) keyboard: bool,
    pub(crate) overlay: Option<Overlay>,
    pub(crate) toast: Option<Toast>,
    pub(crate) clipboard: Option<String>,
    pub(crate) events: Vec<AppEvent>,
    pub(crate) screen: Option<Screen>,
    pub(crate) last_observation: Option<Observation>,
    /// Bumped whenever app state may have changed (an action ran, a reset): screens that read
    /// state render anew only then.
    pub(crate) data_version: u64,
    /// The dark-theme setting as of a data version (a query on the Settings database, asked for
    /// every screen picture; the answer only changes with the data).
    theme_cache: Option<(u64, bool)>,
    /// The last layouts of the status bar, navigation bar, keyboard and shade.
    pub(crate) system_layouts: crate::render::SystemLayouts,
    /// The optional wall-clock deadline every app connection's statements check (`--timeout`).
    deadline: phonebench_apps::sandbox::Deadline,
    /// Scheduled app actions and notifications (`timeline.rs`). Shared with the session every
    /// action keeps to undo a failure, and with snapshots, and copied only when changed (few
    /// actions schedule or notify; a copy of every boot schedule per action was 8% of a write).
    pub(crate) timeline: Arc<crate::timeline::Timeline>,
    /// Whether the notification shade is pulled down (over everything but the system bars).
    pub(crate) shade: bool,
    /// Whether the action running now is a scheduled or boot action (no screen to act on).
    pub(crate) background: bool,
    /// What a `return` step handed back, run in the asking app once the returning action ends.
    pub(crate) pending_return: Option<crate::intents::PendingReturn>,
    /// Apps whose databases the running action (and those it runs) opened a savepoint on.
    pub(crate) foreign_writes: Vec<usize>,
    /// The launcher's app search, when open: what has been typed.
    pub(crate) launcher_search: Option<String>,
    /// The letters keyboard's Shift (the next letter is a capital).
    pub(crate) keyboard_shift: bool,
    /// The keyboard shows its symbols layer.
    pub(crate) keyboard_symbols: bool,
    /// The disturbances planned and showing (`disturb.rs`).
    pub(crate) disturber: crate::disturb::Disturber,
    /// How far the notification shade's list is scrolled (by scroll key), while it is down.
    pub(crate) shade_scroll: BTreeMap<String, f32>,
    /// Lists whose templates use `window` render only the rows that can show (the default);
    /// off, they render every row (what the windowed render must look the same as).
    pub(crate) virtual_lists: bool,
    /// Markup parses and layouts are shared with the process's other phones (`shared.rs`;
    /// the default, [`crate::shared::set_sharing`]).
    pub(crate) sharing: bool,
    /// Per app, the database's content last serialized or restored by a snapshot, with the stamp
    /// it had then (`snapshot.rs`): a database still at that stamp is shared, not copied.
    pub(crate) snapshot_dbs: Vec<Option<crate::snapshot::KnownDb>>,
}

impl Phone {
    /// A phone with the catalog's apps installed, on the home screen.
    pub fn new(catalog: Catalog, config: PhoneConfig) -> Result<Phone, PhoneError> {
        config.display.check().map_err(PhoneError::Display)?;
        for package in catalog.apps() {
            if phonebench_pixels::icons::path(&package.manifest.icon).is_none()
                && phonebench_pixels::assets::get(&package.manifest.icon).is_none()
            {
                return Err(PhoneError::App {
                    app: package.manifest.id.clone(),
                    message: format!(
                        "app.toml: icon `{}` is not a vendored icon (see crates/pixels/assets/icons/README.md)",
                        package.manifest.icon
                    ),
                });
            }
        }
        let clock = Arc::new(AtomicI64::new(config.clock_start_ms));
        let rng = Arc::new(Mutex::new(ChaCha8Rng::seed_from_u64(config.seed)));
        let deadline = phonebench_apps::sandbox::Deadline::default();
        let mut apps = Vec::new();
        for package in catalog.apps() {
            let app_err = |message: String| PhoneError::App { app: package.manifest.id.clone(), message };
            let mut conn = Connection::open_in_memory().map_err(|e| app_err(e.to_string()))?;
            let (r, c) = (rng.clone(), clock.clone());
            phonebench_apps::sql::install_functions(
                &conn,
                move || r.lock().map(|mut g| g.next_u64() as i64).unwrap_or(0),
                move || c.load(Ordering::Relaxed),
            )
            .map_err(|e| app_err(e.to_string()))?;
            // Actions, screen queries and task setup all run on this connection: one sandbox.
            let budget = phonebench_apps::sandbox::install(
                &mut conn,
                phonebench_apps::sandbox::Profile::App,
                deadline.clone(),
            )
            .map_err(|e| app_err(format!("cannot set up the SQLite sandbox: {e}")))?;
            let db = Arc::new(crate::data::AppDb::new(conn, budget));
            db.restore(&package.snapshot).map_err(app_err)?;
            apps.push(AppRuntime {
                package: package.clone(),
                db,
                stack: Vec::new(),
                renders: Default::default(),
                return_to: None,
                assets: Arc::new(BTreeMap::new()),
                assets_digest: crate::shared::assets_digest(&BTreeMap::new()),
            });
        }
        let every_asset: BTreeMap<String, String> = catalog
            .apps()
            .iter()
            .flat_map(|p| {
                p.assets.iter().map(move |(name, key)| (format!("{}/{name}", p.manifest.id), key.clone()))
            })
            .collect();
        for app in &mut apps {
            let mut names = every_asset.clone();
            names.extend(app.package.assets.iter().map(|(n, k)| (n.clone(), k.clone())));
            app.assets_digest = crate::shared::assets_digest(&names);
            app.assets = Arc::new(names);
        }
        let disturber = crate::disturb::Disturber::new(config.disturbances, config.seed);
        let phone = Phone {
            catalog,
            apps,
            config,
            clock,
            rng,
            battery: BATTERY_PERCENT,
            foreground: Foreground::Home,
            recents: Vec::new(),
            keyboard: false,
            overlay: None,
            toast: None,
            clipboard: None,
            events: Vec::new(),
            screen: None,
            last_observation: None,
            data_version: 0,
            theme_cache: None,
            system_layouts: Default::default(),
            deadline,
            timeline: Arc::default(),
            shade: false,
            background: false,
            pending_return: None,
            foreign_writes: Vec::new(),
            launcher_search: None,
            keyboard_shift: false,
            keyboard_symbols: false,
            disturber,
            shade_scroll: BTreeMap::new(),
            virtual_lists: true,
            sharing: crate::shared::sharing_default(),
            snapshot_dbs: Vec::new(),
        };
        let mut phone = phone;
        phone.boot()?;
        Ok(phone)
    }

    /// Restores the state the phone was created in: every database byte for byte from its
    /// snapshot (no file is read), back stacks, clock, generator, clipboard, events.
    pub fn reset(&mut self) -> Result<(), PhoneError> {
        self.clock.store(self.config.clock_start_ms, Ordering::Relaxed);
        if let Ok(mut rng) = self.rng.lock() {
            *rng = ChaCha8Rng::seed_from_u64(self.config.seed);
        }
        for app in &mut self.apps {
            // An app nothing wrote to since its last restore keeps its database (and its
            // prepared statements): equal bytes either way.
            app.db
                .restore_if_changed(&app.package.snapshot)
                .map_err(|message| PhoneError::App { app: app.package.manifest.id.clone(), message })?;
            app.stack.clear();
            // The last render stays: not as a render of any screen (a new frame never matches
            // it), but as the markup and layout the next render of its screen starts from (an
            // entry screen after a reset re-parses and re-lays-out nothing that is the same).
            app.return_to = None;
        }
        self.foreground = Foreground::Home;
        self.recents.clear();
        self.keyboard = false;
        self.overlay = None;
        self.toast = None;
        self.clipboard = None;
        self.events.clear();
        self.screen = None;
        self.last_observation = None;
        self.data_version += 1;
        self.shade = false;
        self.background = false;
        self.pending_return = None;
        self.launcher_search = None;
        self.keyboard_shift = false;
        self.keyboard_symbols = false;
        self.disturber = crate::disturb::Disturber::new(self.config.disturbances, self.config.seed);
        self.shade_scroll.clear();
        self.boot()
    }

    /// [`Phone::reset`] to the state [`Phone::new`] gives with `config` (another seed, clock,
    /// display or disturbances): what a new phone would be, without building one (the
    /// databases nothing changed are kept, with their prepared statements).
    pub fn reset_with(&mut self, config: PhoneConfig) -> Result<(), PhoneError> {
        config.display.check().map_err(PhoneError::Display)?;
        if config.display != self.config.display {
            // Renders and the theme are for the display they were made on.
            self.theme_cache = None;
            for app in &mut self.apps {
                app.renders.clear();
            }
        }
        self.config = config;
        self.reset()
    }

    /// The installed apps.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Sets (or with `None` clears) a wall-clock deadline: an app statement (action, screen
    /// query, setup) running when it passes ends with an error that
    /// [`phonebench_apps::sandbox::is_deadline`] recognises. Nothing else reads the wall clock, so
    /// without a deadline the phone stays deterministic.
    pub fn set_deadline(&mut self, deadline: Option<std::time::Instant>) {
        self.deadline.set(deadline);
    }

    /// Virtual time now, ms since the epoch.
    pub fn now_ms(&self) -> i64 {
        self.clock.load(Ordering::Relaxed)
    }

    /// What is in front.
    pub fn foreground(&self) -> Foreground {
        self.foreground
    }

    /// The foreground app's id and screen name, if an app is in front.
    pub fn current_screen(&self) -> Option<(&str, &str)> {
        match self.foreground {
            Foreground::App(i) => {
                let app = &self.apps[i];
                app.stack.last().map(|f| (app.package.manifest.id.as_str(), f.screen.as_str()))
            }
            _ => None,
        }
    }

    /// The foreground app's id, if an app is in front.
    pub fn foreground_app(&self) -> Option<&str> {
        match self.foreground {
            Foreground::App(i) => Some(self.apps[i].package.manifest.id.as_str()),
            _ => None,
        }
    }

    /// Whether the soft keyboard is shown.
    pub fn keyboard_shown(&self) -> bool {
        self.keyboard
            && (self.focused_field().is_some() || self.searching_apps() || self.overlay_input().is_some())
    }

    /// Whether the launcher's app search is open (typing goes into it).
    pub(crate) fn searching_apps(&self) -> bool {
        self.foreground == Foreground::Home && self.launcher_search.is_some()
    }

    /// The clipboard's text.
    pub fn clipboard(&self) -> Option<&str> {
        self.clipboard.as_deref()
    }

    /// Events apps emitted since creation or the last reset, in order.
    pub fn events(&self) -> &[AppEvent] {
        &self.events
    }

    /// Forgets every rendered screen and kept query result, so that the next look renders from
    /// scratch. Both are kept only while nothing they depend on changed, so this changes nothing anyone sees: the
    /// tests use it to check exactly that.
    pub fn forget_renders(&mut self) {
        for app in &mut self.apps {
            app.renders.clear();
            app.db.forget_results();
        }
        self.system_layouts = Default::default();
        self.screen = None;
    }

    /// Whether lists whose templates use `window` render only the rows that can show (`true`,
    /// the default) or every row. What an agent sees is the same either way (tested); off is
    /// for that test and for measuring what virtualising saves.
    pub fn set_virtual_lists(&mut self, on: bool) {
        if self.virtual_lists != on {
            self.virtual_lists = on;
            self.forget_renders();
        }
    }

    /// Whether this phone shares markup parses and layouts with the process's other phones
    /// (`true` unless [`crate::shared::set_sharing`] turned the default off). What an agent sees
    /// is the same either way (tested); off is for that test and for measuring what sharing
    /// saves.
    pub fn set_sharing(&mut self, on: bool) {
        self.sharing = on;
    }

    /// The current screen's UI tree.
    pub fn tree(&mut self) -> Result<&UiTree, PhoneError> {
        self.ensure_screen()?;
        match &self.screen {
            Some(s) => Ok(&s.tree),
            None => Err(PhoneError::App { app: "phone".into(), message: "no screen rendered".into() }),
        }
    }

    /// The current screen as an observation in `format`. Element indexes in later actions
    /// refer to the most recent observation.
    pub fn observe(&mut self, format: ObservationFormat) -> Result<Observation, PhoneError> {
        let observation = render(self.tree()?, format);
        self.last_observation = Some(observation.clone());
        Ok(observation)
    }

    /// The screen size and density.
    pub fn display(&self) -> Display {
        self.config.display
    }

    /// Whether the phone draws in its dark theme: an app that owns the setting (`[system]
    /// dark_theme` in its manifest, the Settings app) says so.
    pub fn dark_theme(&self) -> bool {
        self.apps.iter().any(|app| {
            let Some(sql) = &app.package.manifest.system.dark_theme else { return false };
            let Ok(conn) = app.db.lock() else { return false };
            conn.query_row(sql, [], |row| row.get::<_, rusqlite::types::Value>(0))
                .map(|v| match v {
                    rusqlite::types::Value::Integer(i) => i != 0,
                    rusqlite::types::Value::Real(r) => r != 0.0,
                    rusqlite::types::Value::Text(t) => !matches!(t.trim(), "" | "0" | "false"),
                    _ => false,
                })
                .unwrap_or(false)
        })
    }

    /// How each node of the current screen's tree is drawn, by node id (see
    /// [`phonebench_pixels::render`]).
    pub fn paints(&mut self) -> Result<&[Paint], PhoneError> {
        self.ensure_screen()?;
        match &self.screen {
            Some(s) => Ok(&s.paints),
            None => Err(PhoneError::App { app: "phone".into(), message: "no screen rendered".into() }),
        }
    }

    /// The current screen's UI tree, shared (no copy).
    pub fn shared_tree(&mut self) -> Result<Arc<UiTree>, PhoneError> {
        self.ensure_screen()?;
        match &self.screen {
            Some(s) => Ok(s.tree.clone()),
            None => Err(PhoneError::App { app: "phone".into(), message: "no screen rendered".into() }),
        }
    }

    /// The current screen's picture, drawn only when its pixels are first asked for (the display's
    /// size, in the theme the Settings app chose).
    pub fn screen_image(&mut self) -> Result<ScreenImage, PhoneError> {
        let dark = match self.theme_cache {
            Some((version, dark)) if version == self.data_version => dark,
            _ => {
                let dark = self.dark_theme();
                self.theme_cache = Some((self.data_version, dark));
                dark
            }
        };
        let theme = *phonebench_pixels::Theme::for_dark(dark);
        let display = self.config.display;
        self.ensure_screen()?;
        match &self.screen {
            Some(s) => {
                Ok(ScreenImage::drawn(s.tree.clone(), s.paints.clone(), display.width, display.height, theme))
            }
            None => Err(PhoneError::App { app: "phone".into(), message: "no screen rendered".into() }),
        }
    }

    /// The current screen as pixels (the display's size), in the theme the Settings app chose.
    pub fn screenshot(&mut self) -> Result<Pixmap, PhoneError> {
        self.screen_image()?.to_pixmap().map_err(|e| PhoneError::Display(e.to_string()))
    }

    /// Rows of a query on an app's database, as JSON objects (for checks and tools).
    pub fn query(&self, app: &str, sql: &str) -> Result<Vec<serde_json::Value>, PhoneError> {
        let runtime = self.app_by_id(app)?;
        let conn = runtime
            .db
            .lock()
            .map_err(|_| PhoneError::App { app: app.into(), message: "lock poisoned".into() })?;
        let rows = query_rows(&conn, sql, &|_| None)
            .map_err(|message| PhoneError::App { app: app.to_string(), message })?;
        Ok(rows.iter().map(crate::data::to_json).collect())
    }

    /// Rows of a query on an app's database with `:name` parameters bound from `params` (task
    /// setup and state checks: parameter values are data, never spliced into the SQL).
    pub fn query_with(
        &self,
        app: &str,
        sql: &str,
        params: &BTreeMap<String, serde_json::Value>,
    ) -> Result<Vec<serde_json::Value>, PhoneError> {
        let runtime = self.app_by_id(app)?;
        let conn = runtime
            .db
            .lock()
            .map_err(|_| PhoneError::App { app: app.into(), message: "lock poisoned".into() })?;
        let lookup = |name: &str| params.get(name).map(|v| Value::from(minijinja::value::Serde(v)));
        let rows = query_rows(&conn, sql, &lookup)
            .map_err(|message| PhoneError::App { app: app.to_string(), message })?;
        Ok(rows.iter().map(crate::data::to_json).collect())
    }

    /// Runs SQL statements that change an app's state (a task's setup), binding `:name` parameters
    /// from `params`, all in one transaction. Screens that read the state render anew. Returns the
    /// number of rows changed.
    pub fn execute(
        &mut self,
        app: &str,
        sql: &str,
        params: &BTreeMap<String, serde_json::Value>,
    ) -> Result<usize, PhoneError> {
        let runtime = self.app_by_id(app)?;
        let err = |message: String| PhoneError::App { app: app.to_string(), message };
        let mut conn = runtime.db.lock().map_err(|_| err("lock poisoned".into()))?;
        let tx = conn.transaction().map_err(|e| err(e.to_string()))?;
        let mut changed = 0;
        for (_, statement) in phonebench_apps::sql::split_statements(sql) {
            let mut stmt = tx
                .prepare(statement)
                .map_err(|e| err(format!("SQL error in `{statement}`: {}", sql_cause(&e))))?;
            let lookup = |name: &str| params.get(name).map(|v| Value::from(minijinja::value::Serde(v)));
            crate::data::bind(&mut stmt, statement, &lookup).map_err(err)?;
            changed += stmt
                .raw_execute()
                .map_err(|e| err(format!("SQL error in `{statement}`: {}", sql_cause(&e))))?;
        }
        tx.commit().map_err(|e| err(e.to_string()))?;
        drop(conn);
        self.data_version += 1;
        self.screen = None;
        Ok(changed)
    }

    /// Starts an app in front, on `screen` (with `args`) above its entry screen when given, so
    /// that back leads to the entry screen as it would after navigating there.
    pub fn start_app(
        &mut self,
        app: &str,
        screen: Option<&str>,
        args: &BTreeMap<String, serde_json::Value>,
    ) -> Result<(), PhoneError> {
        let index = self.find_app(app).ok_or_else(|| self.unknown_app(app))?;
        let package = self.apps[index].package.clone();
        if let Some(screen) = screen
            && !package.screens.contains_key(screen)
        {
            return Err(PhoneError::App {
                app: app.to_string(),
                message: format!("there is no screen `{screen}`"),
            });
        }
        self.apps[index].stack.clear();
        self.apps[index].return_to = None;
        self.launch(index);
        if let Some(screen) = screen.filter(|s| *s != package.manifest.entry) {
            let args =
                args.iter().map(|(k, v)| (k.clone(), Value::from(minijinja::value::Serde(v)))).collect();
            self.apps[index].stack.push(Frame::new(screen, args));
        }
        self.screen = None;
        self.last_observation = None;
        Ok(())
    }

    /// The serialized bytes of an app's database (what a reset must restore exactly).
    pub fn database_bytes(&self, app: &str) -> Result<Vec<u8>, PhoneError> {
        let runtime = self.app_by_id(app)?;
        let mut conn = runtime
            .db
            .lock()
            .map_err(|_| PhoneError::App { app: app.into(), message: "lock poisoned".into() })?;
        conn.serialize(rusqlite::MAIN_DB)
            .map(|d| d.to_vec())
            .map_err(|e| PhoneError::App { app: app.to_string(), message: e.to_string() })
    }

    /// Force-stops an app (by id, name or package), as `am force-stop` does: its back stack goes,
    /// and if it was in front the home screen shows. Its data stays; the next launch starts it at
    /// its entry screen.
    pub fn force_stop(&mut self, app: &str) -> Result<(), PhoneError> {
        let index = self.find_app(app).ok_or_else(|| self.unknown_app(app))?;
        let runtime = &mut self.apps[index];
        runtime.stack.clear();
        runtime.renders.clear();
        runtime.return_to = None;
        if self.foreground == Foreground::App(index) {
            self.home();
        }
        self.screen = None;
        self.last_observation = None;
        Ok(())
    }

    /// Clears an app's data, as `pm clear` does: force-stops it and restores its database byte
    /// for byte from the pristine snapshot (the other apps keep theirs).
    pub fn clear_data(&mut self, app: &str) -> Result<(), PhoneError> {
        self.force_stop(app)?;
        let index = self.find_app(app).ok_or_else(|| self.unknown_app(app))?;
        let runtime = &mut self.apps[index];
        let id = runtime.package.manifest.id.clone();
        runtime
            .db
            .restore(&runtime.package.snapshot)
            .map_err(|message| PhoneError::App { app: id, message })?;
        runtime.renders.clear();
        self.data_version += 1;
        self.screen = None;
        Ok(())
    }

    fn app_by_id(&self, id: &str) -> Result<&AppRuntime, PhoneError> {
        self.apps.iter().find(|a| a.package.manifest.id == id).ok_or_else(|| self.unknown_app(id))
    }

    fn unknown_app(&self, name: &str) -> PhoneError {
        let names: Vec<String> = self
            .apps
            .iter()
            .map(|a| format!("{} ({})", a.package.manifest.name, a.package.manifest.id))
            .collect();
        PhoneError::UnknownApp(name.to_string(), names.join(", "))
    }

    /// Finds an app by id, launcher name (case-insensitive) or package.
    pub fn find_app(&self, name: &str) -> Option<usize> {
        let name = name.trim();
        self.apps.iter().position(|a| {
            let m = &a.package.manifest;
            m.id == name || m.name.eq_ignore_ascii_case(name) || m.package == name
        })
    }

    /// Applies one action. Index targets refer to the last [`Phone::observe`] (or the `sphinx-tree`
    /// numbering when nothing was observed yet). With disturbances, the plan then moves on: a
    /// pop-up, a notification or a slow screen may show on the next screen.
    pub fn apply(&mut self, action: &Action) -> Result<Outcome, PhoneError> {
        if self.disturber.level == crate::Disturbances::None {
            return self.apply_action(action);
        }
        let before = self.nav_signature();
        let outcome = self.apply_action(action)?;
        let now = self.now_ms();
        let app = match self.foreground {
            Foreground::App(i) => Some(i),
            _ => None,
        };
        let navigated = app.is_some() && self.nav_signature() != before;
        let free =
            self.overlay.is_none() && !self.shade && self.screen.as_ref().is_none_or(|s| s.crash.is_none());
        let shown = |d: &crate::disturb::Disturber| (d.active, d.heads_up, d.loading(now));
        let was = shown(&self.disturber);
        self.disturber.after_action(app, navigated, free, now);
        let mut reordered = false;
        if let Some(i) = app
            && free
            && !self.disturber.loading(now)
        {
            let at_top =
                self.apps[i].stack.last().is_some_and(|f| f.scroll.values().all(|offset| *offset <= 0.0));
            let (depth, screen) = self.top_screen(i);
            let screen = screen.to_owned();
            reordered = self.disturber.maybe_reorder((i, depth, &screen), at_top);
        }
        if reordered || shown(&self.disturber) != was {
            // The keyboard stays as it was (the pop-up sits above it and takes the keys), so
            // that after dismissing it the screen is exactly as the agent left it.
            self.screen = None;
            self.ensure_screen()?;
        }
        Ok(outcome)
    }

    /// What the foreground shows, as far as "another screen opened" goes (slow screens).
    fn nav_signature(&self) -> (Foreground, usize, String) {
        match self.foreground {
            Foreground::App(i) => {
                let (depth, screen) = self.top_screen(i);
                (self.foreground, depth, screen.to_string())
            }
            other => (other, 0, String::new()),
        }
    }

    /// App `i`'s back-stack depth and the name of its top screen (empty before it opens).
    pub(crate) fn top_screen(&self, i: usize) -> (usize, &str) {
        let stack = &self.apps[i].stack;
        (stack.len(), stack.last().map_or("", |f| f.screen.as_str()))
    }

    /// The disturbances this phone gets.
    pub fn disturbances(&self) -> crate::Disturbances {
        self.disturber.level
    }

    fn apply_action(&mut self, action: &Action) -> Result<Outcome, PhoneError> {
        self.ensure_screen()?;
        let mut outcome = Outcome::default();
        match action {
            Action::Tap { target } => {
                let (point, node) = self.resolve(target)?;
                outcome.hit = node.map(|n| self.node(n));
                self.tap(point, node, &mut outcome)?;
            }
            Action::DoubleTap { target } => {
                let (point, node) = self.resolve(target)?;
                outcome.hit = node.map(|n| self.node(n));
                self.tap(point, node, &mut outcome)?;
                self.ensure_screen()?;
                let again = self.hit_at(point);
                self.tap(point, again, &mut outcome)?;
            }
            Action::LongPress { target } => {
                let (point, node) = self.resolve(target)?;
                outcome.hit = node.map(|n| self.node(n));
                self.long_press(point, node, &mut outcome)?;
            }
            Action::Type { text, target, clear, enter } => {
                if let Some(target) = target {
                    let (point, node) = self.resolve(target)?;
                    outcome.hit = node.map(|n| self.node(n));
                    self.tap(point, node, &mut outcome)?;
                    self.ensure_screen()?;
                    // Typing "into an element" appends, as agents' type actions expect (a tap
                    // alone places the cursor where it touched).
                    if let Some(field) = self.focused_field().map(str::to_string)
                        && let Some(frame) = self.top_frame_mut()
                    {
                        frame.selection.remove(&field);
                    }
                }
                self.type_text(text, *clear, &mut outcome)?;
                if *enter {
                    self.ensure_screen()?;
                    self.submit(&mut outcome)?;
                }
            }
            Action::Swipe(Swipe::Between { from, to }) => {
                let start = self.hit_at((from.x, from.y));
                outcome.hit = start.map(|n| self.node(n));
                self.drag((from.x, from.y), (to.x, to.y), &mut outcome)?;
            }
            Action::Swipe(Swipe::Direction { direction, target }) => {
                self.scroll(direction.opposite(), target.as_ref(), &mut outcome)?;
            }
            Action::Scroll { direction, target } => self.scroll(*direction, target.as_ref(), &mut outcome)?,
            Action::Drag { from, to } => {
                let (a, node) = self.resolve(from)?;
                let (b, _) = self.resolve(to)?;
                outcome.hit = node.map(|n| self.node(n));
                self.drag(a, b, &mut outcome)?;
            }
            Action::Key { key } => self.key(key, &mut outcome)?,
            Action::OpenApp { app } => {
                let index = self.find_app(app).ok_or_else(|| self.unknown_app(app))?;
                self.apps[index].return_to = None;
                self.launch(index);
            }
            Action::RestartApp { app } => {
                let index = match app {
                    Some(name) => self.find_app(name).ok_or_else(|| self.unknown_app(name))?,
                    None => match self.foreground {
                        Foreground::App(i) => i,
                        _ => {
                            outcome.notes.push("no app is in front to restart".into());
                            self.pass_time(MS_PER_ACTION, &mut outcome)?;
                            self.screen = None;
                            return Ok(outcome);
                        }
                    },
                };
                self.apps[index].stack.clear();
                self.launch(index);
            }
            Action::Wait { ms } => {
                let wait = ms.map(|m| m.min(MAX_WAIT_MS as u64) as i64).unwrap_or(MS_PER_ACTION);
                self.pass_time(wait - MS_PER_ACTION, &mut outcome)?;
            }
            Action::Answer { .. }
            | Action::Finish { .. }
            | Action::AskUser { .. }
            | Action::McpCall { .. } => {
                return Err(PhoneError::NotDeviceAction(action.kind()));
            }
        }
        self.finish_return(&mut outcome)?;
        self.pass_time(MS_PER_ACTION, &mut outcome)?;
        self.screen = None;
        // Render now: a screen's first render applies autofocus (and so the keyboard), which
        // `keyboard_shown` and the next observation must already see.
        self.ensure_screen()?;
        if let Some(note) = self.screen.as_ref().and_then(|s| s.crash.clone()) {
            outcome.notes.push(note);
        }
        Ok(outcome)
    }

    /// Sets the virtual clock (time only moves forward: see [`Phone::pass_time`]).
    pub(crate) fn set_clock(&self, ms: i64) {
        self.clock.store(ms, Ordering::Relaxed);
    }

    fn node(&self, id: NodeId) -> Node {
        self.screen
            .as_ref()
            .map(|s| s.tree.node(id).clone())
            .unwrap_or_else(|| Node::new("android.view.View", "", phonebench_uitree::Bounds::new(0, 0, 0, 0)))
    }

    fn resolve(&mut self, target: &Target) -> Result<((i32, i32), Option<NodeId>), PhoneError> {
        self.ensure_screen()?;
        let Some(screen) = &self.screen else { return Ok(((0, 0), None)) };
        let observation = match &self.last_observation {
            Some(o) => o.clone(),
            None => render(&screen.tree, ObservationFormat::SphinxTree),
        };
        let resolved = observation.resolve_target(&screen.tree, target)?;
        Ok((resolved.point, resolved.node))
    }

    fn hit_at(&self, point: (i32, i32)) -> Option<NodeId> {
        self.screen.as_ref().and_then(|s| s.tree.hit_test_where(point.0, point.1, |w| w.layer != TOAST_LAYER))
    }

    fn info(&self, node: NodeId) -> Option<&NodeInfo> {
        self.screen.as_ref().and_then(|s| s.infos.get(node.get()))
    }

    /// The nearest node at or above `node` that reacts to `wants`.
    fn handling_node(&self, node: NodeId, wants: &impl Fn(&NodeInfo) -> bool) -> Option<NodeId> {
        let screen = self.screen.as_ref()?;
        std::iter::once(node)
            .chain(screen.tree.ancestors(node))
            .find(|n| screen.infos.get(n.get()).is_some_and(wants))
    }

    /// The node a touch at `point` reaches, the Android way: in the topmost window under the
    /// point, children before their parent and later (drawn on top) siblings first, the first
    /// node that takes the event. A view that does not take it lets it through to views below.
    fn touch_target(
        &self,
        node: NodeId,
        point: (i32, i32),
        wants: impl Fn(&NodeInfo) -> bool,
    ) -> Option<NodeId> {
        if let Some(found) = self.handling_node(node, &wants) {
            return Some(found);
        }
        let screen = self.screen.as_ref()?;
        let tree = &screen.tree;
        let window = tree.windows_top_down().into_iter().find(|w| {
            let window = tree.window(*w);
            window.layer != TOAST_LAYER && tree.node(window.root).bounds.contains(point.0, point.1)
        })?;
        let root = tree.window(window).root;
        let ids: Vec<NodeId> = tree.dfs(root).collect();
        ids.into_iter().rev().find(|id| {
            tree.node(*id).bounds.contains(point.0, point.1) && screen.infos.get(id.get()).is_some_and(&wants)
        })
    }

    /// Taps outside a dialog or menu close it, as Android's `setCanceledOnTouchOutside` does.
    fn outside_overlay(&self, point: (i32, i32)) -> bool {
        let Some(screen) = &self.screen else { return false };
        match screen.overlay_bounds {
            Some(b) if self.overlay.is_some() => {
                !b.contains(point.0, point.1)
                    && !screen.system_bounds.iter().any(|s| s.contains(point.0, point.1))
            }
            _ => false,
        }
    }

    /// What a touch gesture (`gesture` names it in notes) reaches: `None` when it closed an
    /// overlay by landing outside it, or reached nothing that takes it (noted in `outcome`).
    fn touched(
        &mut self,
        gesture: &str,
        point: (i32, i32),
        node: Option<NodeId>,
        wants: impl Fn(&NodeInfo) -> bool,
        outcome: &mut Outcome,
    ) -> Option<NodeInfo> {
        if self.outside_overlay(point) {
            self.overlay = None;
            return None;
        }
        // An index target names a node, but a finger lands on whatever is on top: with a dialog
        // or menu open, a row under it must not get the touch (found by random play: a tap
        // through an open menu opened a conversation with the menu still up).
        let node = if self.overlay.is_some() || self.disturber.covers() { self.hit_at(point) } else { node };
        let Some(node) = node else {
            outcome.notes.push(format!("the {gesture} hit nothing"));
            return None;
        };
        let Some(target) = self.touch_target(node, point, wants) else {
            outcome.notes.push(format!("nothing there responds to a {gesture}"));
            return None;
        };
        self.info(target).cloned()
    }

    /// Gives a text field of the top screen focus, which shows the keyboard.
    fn focus_field(&mut self, field: &str) {
        // Another field: its keyboard starts on the letters, in lower case.
        if self.top_frame().is_some_and(|f| f.focused.as_deref() != Some(field)) {
            self.keyboard_shift = false;
            self.keyboard_symbols = false;
        }
        if let Some(frame) = self.top_frame_mut() {
            frame.focused = Some(field.to_string());
        }
        self.keyboard = true;
    }

    fn tap(
        &mut self,
        point: (i32, i32),
        node: Option<NodeId>,
        outcome: &mut Outcome,
    ) -> Result<(), PhoneError> {
        let Some(info) = self.touched("tap", point, node, NodeInfo::takes_tap, outcome) else {
            return Ok(());
        };
        if !info.enabled {
            outcome.notes.push("the element is disabled".into());
            return Ok(());
        }
        match info.kind {
            Kind::Edit => {
                if let Some(field) = &info.id {
                    self.focus_field(field);
                    self.place_cursor(&info, point);
                }
                if let Some(h) = &info.hooks.on_click {
                    self.run_handler(h, &info, None, outcome)?;
                }
            }
            Kind::Toggle => match &info.hooks.on_change {
                Some(h) => {
                    self.run_handler(h, &info, Some(Value::from(i64::from(!info.checked))), outcome)?
                }
                None => match &info.hooks.on_click {
                    Some(h) => self.run_handler(h, &info, None, outcome)?,
                    None => outcome.notes.push("this switch is not connected to anything".into()),
                },
            },
            Kind::Seek => {
                let value = info.seek_value_at(point.0);
                if let Some(h) = &info.hooks.on_change {
                    self.run_handler(h, &info, Some(Value::from(value)), outcome)?;
                }
            }
            _ => match &info.hooks.on_click {
                Some(h) => self.run_handler(h, &info, None, outcome)?,
                None => outcome.notes.push("nothing there responds to a tap".into()),
            },
        }
        Ok(())
    }

    fn long_press(
        &mut self,
        point: (i32, i32),
        node: Option<NodeId>,
        outcome: &mut Outcome,
    ) -> Result<(), PhoneError> {
        let Some(info) = self.touched("long press", point, node, NodeInfo::takes_long_press, outcome) else {
            return Ok(());
        };
        let anchor = (point.0 as f32, point.1 as f32);
        if let Some(h) = &info.hooks.on_long_click {
            return self.run_handler(h, &info, None, outcome);
        }
        let mut items = Vec::new();
        if info.kind == Kind::Edit
            && let Some(field) = &info.id
        {
            self.focus_field(field);
            let has_text = !self.field_text(field).is_empty();
            if has_text {
                // Android's text selection menu: Cut and Copy act on the selection (the whole
                // text when nothing is selected).
                items.push(("Cut".to_string(), MenuAction::CutField(field.clone())));
                items.push(("Copy".to_string(), MenuAction::CopyField(field.clone())));
            }
            if self.clipboard.as_deref().is_some_and(|c| !c.is_empty()) {
                items.push(("Paste".to_string(), MenuAction::Paste(field.clone())));
            }
            if has_text {
                items.push(("Select all".to_string(), MenuAction::SelectAll(field.clone())));
            }
        } else if info.hooks.copyable {
            items.push(("Copy".to_string(), MenuAction::CopyText(info.text.clone())));
        }
        if items.is_empty() {
            outcome.notes.push("there is nothing to copy or paste here".into());
        } else {
            items.push(("Close".to_string(), MenuAction::Close));
            self.overlay = Some(Overlay::Menu { items, anchor });
        }
        Ok(())
    }

    fn drag(&mut self, from: (i32, i32), to: (i32, i32), outcome: &mut Outcome) -> Result<(), PhoneError> {
        // A swipe on a heads-up notification puts it away.
        if self.screen.as_ref().and_then(|s| s.heads_up_bounds).is_some_and(|b| b.contains(from.0, from.1)) {
            self.disturber.heads_up = None;
            return Ok(());
        }
        // The shade: pulled down by a swipe down that starts on the status bar, pushed back up
        // by a swipe up on it.
        let down = (to.1 - from.1) as f32;
        let d = self.config.display;
        if !self.shade && (from.1 as f32) < d.status_bar_h() && down > d.dp(48.0) {
            self.open_shade();
            return Ok(());
        }
        if self.shade && -down > d.dp(48.0) && down.abs() > (to.0 - from.0).abs() as f32 {
            self.shade = false;
            return Ok(());
        }
        let Some(node) = self.hit_at(from) else {
            outcome.notes.push("the swipe started on nothing".into());
            return Ok(());
        };
        if let Some(seek) = self.touch_target(node, from, |i| i.kind == Kind::Seek)
            && let Some(info) = self.info(seek).cloned()
        {
            let value = info.seek_value_at(to.0);
            if let Some(h) = &info.hooks.on_change {
                self.run_handler(h, &info, Some(Value::from(value)), outcome)?;
            }
            return Ok(());
        }
        let dy = (from.1 - to.1) as f32;
        if dy.abs() < (to.0 - from.0).abs() as f32 {
            // A swipe to the left shows the next page, as a finger pushes the page away.
            match self.touch_target(node, from, |i| i.pager.is_some()) {
                Some(pager) => self.turn_page(pager, to.0 < from.0, outcome)?,
                None => outcome.notes.push("nothing here scrolls sideways".into()),
            }
            return Ok(());
        }
        match self.touch_target(node, from, |i| i.scroll.is_some()) {
            Some(container) => self.scroll_by(container, dy, outcome),
            None => outcome.notes.push("nothing here scrolls".into()),
        }
        Ok(())
    }

    fn scroll(
        &mut self,
        direction: Direction,
        target: Option<&Target>,
        outcome: &mut Outcome,
    ) -> Result<(), PhoneError> {
        if let Some(note) = self.disturbance_in_the_way() {
            outcome.notes.push(format!("{note}: nothing scrolled"));
            return Ok(());
        }
        if matches!(direction, Direction::Left | Direction::Right) {
            let pager = match target {
                Some(t) => {
                    let (_, node) = self.resolve(t)?;
                    outcome.hit = node.map(|n| self.node(n));
                    node.and_then(|n| self.handling_node(n, &|i: &NodeInfo| i.pager.is_some()))
                }
                None => self.screen.as_ref().and_then(|s| {
                    s.tree
                        .iter()
                        .find(|(id, _)| s.infos.get(id.get()).is_some_and(|i| i.pager.is_some()))
                        .map(|(id, _)| id)
                }),
            };
            match pager {
                // Scrolling right brings what lies to the right into view: the next page.
                Some(pager) => self.turn_page(pager, direction == Direction::Right, outcome)?,
                None => outcome.notes.push("nothing here scrolls sideways".into()),
            }
            return Ok(());
        }
        let container = match target {
            Some(t) => {
                let (_, node) = self.resolve(t)?;
                outcome.hit = node.map(|n| self.node(n));
                node.and_then(|n| self.handling_node(n, &|i: &NodeInfo| i.scroll.is_some()))
                    .or_else(|| node.and_then(|n| self.scroll_inside(n)))
            }
            None => self.main_scroll_container(),
        };
        let Some(container) = container else {
            outcome.notes.push("nothing on this screen scrolls".into());
            return Ok(());
        };
        let Some(info) = self.info(container) else { return Ok(()) };
        let viewport = info.bounds.height() as f32;
        let distance = (viewport * 0.5).round();
        match direction {
            Direction::Down => self.scroll_by(container, distance, outcome),
            Direction::Up => self.scroll_by(container, -distance, outcome),
            Direction::Left | Direction::Right => outcome.notes.push("nothing here scrolls sideways".into()),
        }
        Ok(())
    }

    /// The first scroll container in `node`'s subtree (a target that is a list's parent).
    fn scroll_inside(&self, node: NodeId) -> Option<NodeId> {
        let screen = self.screen.as_ref()?;
        screen.tree.dfs(node).find(|n| screen.infos.get(n.get()).is_some_and(|i| i.scroll.is_some()))
    }

    /// The largest scroll container of the topmost app window, which a plain "scroll down" means.
    /// Shows the next (or previous) page of the pager `node`; its `on-change` action runs with
    /// the new page as `:value`.
    fn turn_page(&mut self, node: NodeId, forward: bool, outcome: &mut Outcome) -> Result<(), PhoneError> {
        let Some(info) = self.info(node).cloned() else { return Ok(()) };
        let Some((id, page, pages)) = info.pager.clone() else { return Ok(()) };
        let next = if forward { page + 1 } else { page.wrapping_sub(1) };
        if next >= pages {
            let edge = if forward { "last" } else { "first" };
            outcome.notes.push(format!("the pager is on its {edge} page"));
            return Ok(());
        }
        if let Some(frame) = self.top_frame_mut() {
            frame.pages.insert(id, next);
        }
        if let Some(h) = &info.hooks.on_change {
            self.run_handler(h, &info, Some(Value::from(next as i64)), outcome)?;
        }
        Ok(())
    }

    fn main_scroll_container(&self) -> Option<NodeId> {
        let screen = self.screen.as_ref()?;
        let tree = &screen.tree;
        // The topmost window that has one: with the notification shade down, a scroll moves the
        // shade's list, not the app's under it.
        tree.windows_top_down().into_iter().find_map(|w| {
            tree.dfs(tree.window(w).root)
                .filter(|id| screen.infos.get(id.get()).is_some_and(|i| i.scroll.is_some()))
                .max_by_key(|id| (tree.node(*id).bounds.area(), std::cmp::Reverse(id.get())))
        })
    }

    fn scroll_by(&mut self, container: NodeId, delta: f32, outcome: &mut Outcome) {
        let Some(info) = self.info(container).cloned() else { return };
        let Some((key, max, offset)) = info.scroll else { return };
        let new = (offset + delta).clamp(0.0, max);
        if (new - offset).abs() < 0.5 {
            outcome.notes.push(if delta > 0.0 { "already at the end" } else { "already at the top" }.into());
            return;
        }
        if info.surface_is_app
            && let Some(frame) = self.top_frame_mut()
        {
            frame.scroll.insert(key, new);
        } else if self.shade
            && self.screen.as_ref().is_some_and(|s| {
                s.tree.window_package(s.tree.window_of(container)) == crate::system::SYSTEMUI
            })
        {
            // The notification shade's list: a long one scrolls like any other.
            self.shade_scroll.insert(key, new);
        }
    }

    fn key(&mut self, key: &Key, outcome: &mut Outcome) -> Result<(), PhoneError> {
        if !matches!(key, Key::Back | Key::Escape | Key::Home | Key::AppSwitch)
            && let Some(note) = self.disturbance_in_the_way()
        {
            outcome.notes.push(format!("{note}: the key went nowhere"));
            return Ok(());
        }
        match key {
            Key::Back | Key::Escape => self.back(),
            Key::Home => self.home(),
            Key::AppSwitch => {
                self.keyboard = false;
                self.overlay = None;
                self.foreground = Foreground::Overview;
            }
            Key::Enter => self.submit(outcome)?,
            Key::Backspace => self.backspace(outcome)?,
            Key::Space => self.type_text(" ", false, outcome)?,
            Key::Tab => self.type_text("\t", false, outcome)?,
            Key::Delete => match self.focused_field().map(str::to_string) {
                Some(field) => self.delete_text(&field, true, outcome)?,
                None => outcome.notes.push("no text field has focus".into()),
            },
            Key::Other(code) if self.move_cursor(code) => {}
            // KEYCODE_NOTIFICATION: Android pulls the shade down (or up again).
            Key::Other(code) if code == "NOTIFICATION" => {
                if self.shade {
                    self.shade = false
                } else {
                    self.open_shade()
                }
            }
            other => outcome.notes.push(format!("the {} key does nothing here", other.name())),
        }
        Ok(())
    }

    /// Back: keyboard, then dialog or menu, then the screen; at an app's root, to the app that
    /// opened it or home (Android 12+ keeps the app's stack).
    pub(crate) fn back(&mut self) {
        // Back cancels a pop-up or closes an interstitial ad before anything else.
        if self.disturber.active.take().is_some() {
            return;
        }
        if self.shade {
            self.shade = false;
            return;
        }
        if self.keyboard_shown() {
            self.keyboard = false;
            return;
        }
        if self.overlay.take().is_some() {
            return;
        }
        match self.foreground {
            Foreground::Home => self.launcher_search = None,
            Foreground::Overview => self.foreground = Foreground::Home,
            Foreground::App(i) => {
                let stack = &mut self.apps[i].stack;
                let opened_from = stack.last().and_then(|f| f.opened_from);
                if let Some(from) = opened_from {
                    stack.pop();
                    self.switch_to(from);
                } else if stack.len() > 1 {
                    stack.pop();
                } else if let Some(from) = self.apps[i].return_to.take() {
                    self.switch_to(from);
                } else {
                    self.foreground = Foreground::Home;
                }
                self.keyboard = false;
            }
        }
    }

    pub(crate) fn home(&mut self) {
        self.shade = false;
        self.launcher_search = None;
        self.keyboard = false;
        self.overlay = None;
        self.foreground = Foreground::Home;
    }

    /// The installed apps whose name contains `query` (any case), by name: (name, index).
    pub(crate) fn apps_matching(&self, query: &str) -> Vec<(String, usize)> {
        let query = query.trim().to_lowercase();
        let mut found: Vec<(String, usize)> = self
            .apps
            .iter()
            .enumerate()
            .filter(|(_, a)| a.package.manifest.name.to_lowercase().contains(&query))
            .map(|(i, a)| (a.package.manifest.name.clone(), i))
            .collect();
        found.sort();
        found
    }

    /// Brings app `index` to front, starting it at its entry screen if it has no stack.
    pub(crate) fn launch(&mut self, index: usize) {
        if self.apps[index].stack.is_empty() {
            let entry = self.apps[index].package.manifest.entry.clone();
            self.apps[index].stack.push(Frame::new(&entry, BTreeMap::new()));
        }
        self.switch_to(index);
    }

    pub(crate) fn switch_to(&mut self, index: usize) {
        if self.apps[index].stack.is_empty() {
            return self.launch(index);
        }
        // The keyboard stays down on return; a screen's first render may raise it (autofocus).
        self.keyboard = false;
        self.overlay = None;
        self.foreground = Foreground::App(index);
        self.recents.retain(|&r| r != index);
        self.recents.insert(0, index);
    }

    pub(crate) fn top_frame_mut(&mut self) -> Option<&mut Frame> {
        match self.foreground {
            Foreground::App(i) => self.apps[i].stack.last_mut(),
            _ => None,
        }
    }

    pub(crate) fn top_frame(&self) -> Option<&Frame> {
        match self.foreground {
            Foreground::App(i) => self.apps[i].stack.last(),
            _ => None,
        }
    }

    pub(crate) fn focused_field(&self) -> Option<&str> {
        self.top_frame().and_then(|f| f.focused.as_deref())
    }

    pub(crate) fn field_text(&self, field: &str) -> String {
        self.top_frame().and_then(|f| f.fields.get(field)).cloned().unwrap_or_default()
    }

    /// The render info of the focused field's node, if it is on screen.
    fn focused_info(&self) -> Option<NodeInfo> {
        let field = self.focused_field()?;
        let screen = self.screen.as_ref()?;
        screen
            .infos
            .iter()
            .find(|i| i.kind == Kind::Edit && i.surface_is_app && i.id.as_deref() == Some(field))
            .cloned()
    }

    pub(crate) fn set_field(
        &mut self,
        field: &str,
        text: String,
        outcome: &mut Outcome,
    ) -> Result<(), PhoneError> {
        if let Some(frame) = self.top_frame_mut() {
            frame.fields.insert(field.to_string(), text.clone());
            // Text set whole (clear, paste, cut): the cursor goes to the end.
            frame.selection.remove(field);
        }
        if let Some(info) = self.focused_info().filter(|i| i.id.as_deref() == Some(field))
            && let Some(h) = &info.hooks.on_change
        {
            self.run_handler(h, &info, Some(Value::from(text)), outcome)?;
        }
        Ok(())
    }

    fn type_text(&mut self, text: &str, clear: bool, outcome: &mut Outcome) -> Result<(), PhoneError> {
        if let Some(note) = self.disturbance_in_the_way() {
            outcome.notes.push(format!("{note}: the typing went nowhere"));
            return Ok(());
        }
        // A dialog's field (an input dialog, a time picker) takes typing first.
        if let Some(input) = self.overlay_input() {
            let kept: String = text.chars().filter(|&c| input.accepts(c)).collect();
            let current = if clear {
                String::new()
            } else {
                self.overlay_text_mut().map(std::mem::take).unwrap_or_default()
            };
            let value = admit_text(current, &kept, outcome);
            if let Some(slot) = self.overlay_text_mut() {
                *slot = value;
            }
            self.keyboard = true;
            return Ok(());
        }
        if self.searching_apps() {
            let typed = if clear { String::new() } else { self.launcher_search.take().unwrap_or_default() };
            self.launcher_search = Some(admit_text(typed, text, outcome));
            self.keyboard = true;
            return Ok(());
        }
        let Some(field) = self.focused_field().map(str::to_string) else {
            outcome.notes.push("no text field has focus: nothing was typed".into());
            return Ok(());
        };
        // A number or phone field keeps only what its type takes, as Android's key listeners.
        let input = self.focused_info().map(|i| i.input).unwrap_or_default();
        let (kept, dropped): (String, String) = text.chars().partition(|&c| input.accepts(c));
        if !dropped.is_empty() {
            outcome.notes.push(format!(
                "the field takes only {}: dropped {dropped:?}",
                match input {
                    crate::view::InputType::Phone => "a phone number",
                    crate::view::InputType::Decimal => "a decimal number",
                    _ => "digits",
                }
            ));
        }
        self.insert_text(&field, &kept, clear, outcome)
    }

    fn backspace(&mut self, outcome: &mut Outcome) -> Result<(), PhoneError> {
        if let Some(slot) = self.overlay_text_mut() {
            slot.pop();
            return Ok(());
        }
        if let Some(query) = self.launcher_search.as_mut().filter(|_| self.foreground == Foreground::Home) {
            query.pop();
            return Ok(());
        }
        let Some(field) = self.focused_field().map(str::to_string) else {
            outcome.notes.push("no text field has focus".into());
            return Ok(());
        };
        self.delete_text(&field, false, outcome)
    }

    fn submit(&mut self, outcome: &mut Outcome) -> Result<(), PhoneError> {
        // Enter in a dialog's field is its positive button (OK).
        match &self.overlay {
            Some(Overlay::Dialog { input: Some(_), buttons, .. }) if !buttons.is_empty() => {
                let last = buttons.len() - 1;
                return self.run_system(SystemHandler::DialogButton(last), outcome);
            }
            Some(Overlay::TimePicker(_)) => return self.picker_event(&SystemHandler::PickerOk, outcome),
            _ => {}
        }
        if self.searching_apps() {
            // Enter opens the first app found, as the Pixel launcher does.
            let query = self.launcher_search.clone().unwrap_or_default();
            match self.apps_matching(&query).first() {
                Some(&(_, i)) => {
                    self.launcher_search = None;
                    self.apps[i].return_to = None;
                    self.launch(i);
                }
                None => outcome.notes.push(format!("no app matches `{query}`")),
            }
            return Ok(());
        }
        let Some(info) = self.focused_info() else {
            outcome.notes.push("no text field has focus: Enter did nothing".into());
            return Ok(());
        };
        if info.input == crate::view::InputType::Multiline {
            // Enter starts a new line in a multi-line field; it submits nothing.
            return self.type_text("\n", false, outcome);
        }
        match &info.hooks.on_submit {
            Some(h) => {
                let value = info.id.as_deref().map(|f| self.field_text(f)).unwrap_or_default();
                self.run_handler(h, &info, Some(Value::from(value)), outcome)?;
            }
            None => self.keyboard = false,
        }
        Ok(())
    }

    fn run_handler(
        &mut self,
        handler: &Handler,
        info: &NodeInfo,
        value: Option<Value>,
        outcome: &mut Outcome,
    ) -> Result<(), PhoneError> {
        match handler {
            Handler::App(action) => {
                let mut args: BTreeMap<String, Value> =
                    info.hooks.args.iter().map(|(k, v)| (k.clone(), Value::from(v.clone()))).collect();
                if let Some(v) = value {
                    args.insert("value".into(), v);
                }
                self.run_action(action, args, outcome)
            }
            Handler::System(s) => self.run_system(s.clone(), outcome),
        }
    }

    fn run_system(&mut self, handler: SystemHandler, outcome: &mut Outcome) -> Result<(), PhoneError> {
        match handler {
            SystemHandler::Launch(i) | SystemHandler::SwitchTo(i) => {
                self.apps[i].return_to = None;
                self.launcher_search = None;
                self.launch(i);
            }
            SystemHandler::SearchApps => {
                self.launcher_search.get_or_insert_with(String::new);
                self.keyboard = true;
            }
            SystemHandler::Back => self.back(),
            SystemHandler::Home => self.home(),
            SystemHandler::Disturbance(button) => self.press_disturbance(button, outcome),
            SystemHandler::Recents => {
                self.keyboard = false;
                self.overlay = None;
                self.foreground = Foreground::Overview;
            }
            SystemHandler::Type(text) => {
                if !text.is_empty() {
                    self.type_text(&text, false, outcome)?;
                }
                // Shift is one-shot: it capitalised this key (the key carries the capital).
                self.keyboard_shift = false;
            }
            SystemHandler::Shift => self.keyboard_shift = !self.keyboard_shift,
            SystemHandler::KeyboardSymbols(on) => {
                self.keyboard_symbols = on;
                self.keyboard_shift = false;
            }
            SystemHandler::Backspace => self.backspace(outcome)?,
            SystemHandler::Enter => self.submit(outcome)?,
            SystemHandler::DialogButton(i) => {
                if let Some(Overlay::Dialog { buttons, mut args, input, .. }) = self.overlay.take() {
                    self.keyboard = false;
                    if let Some((_, Some(action))) = buttons.get(i) {
                        if let Some(text) = input {
                            args.insert("input".into(), Value::from(text));
                        }
                        self.run_action(action, args, outcome)?;
                    }
                }
            }
            SystemHandler::DialogInput => self.keyboard = true,
            SystemHandler::PickerMonth(_)
            | SystemHandler::PickerDay(_)
            | SystemHandler::PickerField(_)
            | SystemHandler::PickerAmPm(_)
            | SystemHandler::PickerOk
            | SystemHandler::PickerCancel => self.picker_event(&handler, outcome)?,
            SystemHandler::DialogOption(i) => {
                if let Some(Overlay::Dialog { options, action: Some(action), mut args, .. }) =
                    self.overlay.take()
                    && let Some((_, value)) = options.get(i)
                {
                    args.insert("value".into(), Value::from(value.clone()));
                    self.run_action(&action, args, outcome)?;
                }
            }
            SystemHandler::CloseApp(i) => self.close_app(i),
            SystemHandler::OpenNotification(i) => self.open_notification(i),
            SystemHandler::ClearNotifications => self.clear_notifications(),
            SystemHandler::Choose(i) => self.choose(i, outcome)?,
            SystemHandler::MenuItem(i) => {
                if let Some(Overlay::Menu { items, .. }) = self.overlay.take()
                    && let Some((_, item)) = items.get(i)
                {
                    match item.clone() {
                        MenuAction::App { action, args } => self.run_action(&action, args, outcome)?,
                        MenuAction::CopyText(text) => self.clipboard = Some(text),
                        MenuAction::CopyField(field) => self.clipboard = Some(self.selected_text(&field)),
                        MenuAction::CutField(field) => {
                            self.clipboard = Some(self.selected_text(&field));
                            let (start, end) = self.selection_of(&field);
                            if start == end {
                                self.set_field(&field, String::new(), outcome)?;
                            } else {
                                self.delete_text(&field, false, outcome)?;
                            }
                        }
                        MenuAction::Paste(field) => {
                            let clip = self.clipboard.clone().unwrap_or_default();
                            self.focus_field(&field);
                            self.insert_text(&field, &clip, false, outcome)?;
                        }
                        MenuAction::SelectAll(field) => {
                            let len = self.field_text(&field).chars().count();
                            self.set_selection(&field, 0, len);
                        }
                        MenuAction::Close => {}
                    }
                }
            }
        }
        Ok(())
    }

    /// What a failure while running or rendering an app's own code means. Normally the app's
    /// failure, shown to the agent (its message is returned); but once the step's deadline has
    /// passed the failure is the interruption, and the error goes up to end the episode.
    pub(crate) fn app_failure(&self, err: PhoneError) -> Result<String, PhoneError> {
        if self.past_deadline() {
            return Err(err);
        }
        match err {
            PhoneError::App { message, .. } => Ok(message),
            other => Err(other),
        }
    }

    /// A disturbance's button was used.
    fn press_disturbance(&mut self, button: crate::disturb::DisturbanceButton, outcome: &mut Outcome) {
        use crate::disturb::DisturbanceButton as B;
        match button {
            B::ClosePopup => self.disturber.active = None,
            B::Star(n) => self.disturber.stars = n,
            B::CloseBanner => {
                self.disturber.banner = false;
                // The app's screen gets the banner's room back: laid out anew.
                for app in &mut self.apps {
                    app.renders.clear();
                }
            }
            B::Ad => outcome.notes.push("the ad would open a web page; nothing happens here".into()),
            B::HeadsUp => self.disturber.heads_up = None,
        }
    }

    /// Why a key, typing or a scroll cannot reach the app now: a modal pop-up or a loading screen.
    fn disturbance_in_the_way(&self) -> Option<&'static str> {
        if self.disturber.modal() {
            Some("a pop-up is in front")
        } else if matches!(self.foreground, Foreground::App(_)) && self.disturber.loading(self.now_ms()) {
            Some("the screen is still loading")
        } else {
            None
        }
    }

    /// Whether the deadline (see [`Phone::set_deadline`]) has passed.
    fn past_deadline(&self) -> bool {
        self.deadline.passed()
    }

    /// The phone's state outside the databases (which a savepoint covers), as an action found it.
    pub(crate) fn session(&self) -> Session {
        Session {
            foreground: self.foreground,
            recents: self.recents.clone(),
            keyboard: self.keyboard,
            overlay: self.overlay.clone(),
            toast: self.toast.clone(),
            clipboard: self.clipboard.clone(),
            events: self.events.len(),
            stacks: self.apps.iter().map(|a| (a.stack.clone(), a.return_to)).collect(),
            timeline: Arc::clone(&self.timeline),
            shade: self.shade,
            pending_return: self.pending_return.clone(),
        }
    }

    /// Puts back what a failed action changed outside the databases: a failed action leaves
    /// nothing half done (no screen pushed, no event emitted, no clipboard changed).
    pub(crate) fn restore_session(&mut self, session: Session) {
        self.foreground = session.foreground;
        self.recents = session.recents;
        self.keyboard = session.keyboard;
        self.overlay = session.overlay;
        self.toast = session.toast;
        self.clipboard = session.clipboard;
        self.events.truncate(session.events);
        self.timeline = session.timeline;
        self.shade = session.shade;
        self.pending_return = session.pending_return;
        for (app, (stack, return_to)) in self.apps.iter_mut().zip(session.stacks) {
            app.stack = stack;
            app.return_to = return_to;
        }
    }

    /// App `app` failed on its own data (an action's SQL or template, an unknown computed
    /// handler): the agent sees Android's "<App> keeps stopping" dialog and a note, and goes on
    /// (back dismisses the dialog; "Close app" closes the app). Never the harness's failure.
    pub(crate) fn crash(&mut self, app: usize, message: String, outcome: &mut Outcome) {
        let name = self.apps[app].package.manifest.name.clone();
        outcome.notes.push(crash_note(&name, &message));
        self.keyboard = false;
        self.overlay = Some(Overlay::Crash { app, name, message });
    }

    /// Closes app `app` (the crash dialog's "Close app"): its back stack goes, the launcher shows.
    fn close_app(&mut self, app: usize) {
        if let Some(runtime) = self.apps.get_mut(app) {
            runtime.stack.clear();
            runtime.renders.clear();
            runtime.return_to = None;
        }
        self.home();
    }

    pub(crate) fn show_toast(&mut self, message: String, package: String) {
        self.toast = Some(Toast { message, package, until_ms: self.now_ms() + TOAST_MS + MS_PER_ACTION });
    }
}

/// An SQLite error's cause, for a message that names the statement itself: rusqlite's text for a
/// statement that does not compile repeats the whole statement.
pub(crate) fn sql_cause(e: &rusqlite::Error) -> String {
    // Also turns the sandbox's refusals and limits into their reasons.
    phonebench_apps::sandbox::explain(e)
}

/// The phone's state outside the databases; see [`Phone::session`].
#[derive(Debug)]
pub(crate) struct Session {
    foreground: Foreground,
    recents: Vec<usize>,
    keyboard: bool,
    overlay: Option<Overlay>,
    toast: Option<Toast>,
    clipboard: Option<String>,
    events: usize,
    stacks: Vec<(Vec<Frame>, Option<usize>)>,
    timeline: Arc<crate::timeline::Timeline>,
    shade: bool,
    pending_return: Option<crate::intents::PendingReturn>,
}

/// Characters of an app failure's message a step note quotes (the whole is in the dialog's
/// message only up to its own limit): package errors can quote whole rendered lines.
const CRASH_NOTE_CHARS: usize = 2_000;

/// The note an app failure gives the agent.
pub(crate) fn crash_note(app_name: &str, message: &str) -> String {
    let mut note = format!("{app_name} keeps stopping: ");
    note.extend(message.chars().take(CRASH_NOTE_CHARS));
    if message.chars().nth(CRASH_NOTE_CHARS).is_some() {
        note.push('…');
    }
    note
}

/// `field` with `added` typed (or pasted) at its end, as the phone lets text in: characters XML
/// cannot carry (NUL, other C0 controls, U+FFFE, U+FFFF) become U+FFFD, and the field stops at
/// [`MAX_FIELD_CHARS`]; each change is noted for the agent. This is the one place agent text
/// enters app state, so no typed text can make a later screen unrenderable, and only the part
/// that fits is ever looked at (typing 10 MB costs the first 10 000 characters).
pub(crate) fn admit_text(mut field: String, added: &str, outcome: &mut Outcome) -> String {
    let room = MAX_FIELD_CHARS.saturating_sub(field.chars().count());
    let mut replaced = 0usize;
    let mut taken = 0usize;
    let mut cut = false;
    for c in added.chars() {
        if taken == room {
            cut = true;
            break;
        }
        if phonebench_apps::templates::not_xml_char(c) {
            replaced += 1;
            field.push('\u{FFFD}');
        } else {
            field.push(c);
        }
        taken += 1;
    }
    if replaced > 0 {
        outcome.notes.push(format!(
            "{replaced} character(s) a screen cannot show (control characters, U+FFFE, U+FFFF) \
             were entered as U+FFFD"
        ));
    }
    if cut {
        outcome.notes.push(format!(
            "a text field holds at most {MAX_FIELD_CHARS} characters: only the first {taken} \
             character(s) of the text were entered"
        ));
    }
    field
}
