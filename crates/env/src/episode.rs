//! One episode: a task instance on a fresh simulated phone, advanced one agent turn at a time,
//! recording the [`Trajectory`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use phonebench_actions::{Action, Target};
use phonebench_device::act::KnownApp;
use phonebench_device::{ActError, Device, DeviceError, DeviceScreen};
use phonebench_observe::{Observation, ObservationFormat};
use phonebench_phone::{Catalog, Display, Disturbances, Foreground, Phone, PhoneConfig, PhoneError};
use phonebench_pixels::ScreenImage;
use phonebench_tasks::TaskInstance;
use phonebench_uitree::UiTree;

use crate::trajectory::{
    DatabasePair, EpisodeEnd, EventRecord, Exchange, McpCallRecord, ScreenRecord, StepRecord, Trajectory,
};
use crate::user::SimulatedUser;

/// What happens after an agent output that does not parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FormatErrorPolicy {
    /// Count it as a (wasted) step and go on; the agent is told what was wrong.
    #[default]
    Continue,
    /// End the episode (SPHINX's behaviour).
    End,
}

/// How episodes run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpisodeOptions {
    /// The observation format agents get.
    pub format: ObservationFormat,
    /// Format-error policy.
    pub format_errors: FormatErrorPolicy,
    /// End the episode when the same action comes three times in a row (SPHINX's rule).
    pub stop_on_repetition: bool,
    /// The phone's screen size and density.
    pub display: Display,
    /// Pop-ups, ads, notifications and slow screens (`phonebench_phone::disturb`); each level
    /// adds its [`Disturbances::extra_steps`] to the task's step budget.
    pub disturbances: Disturbances,
}

impl Default for EpisodeOptions {
    fn default() -> Self {
        EpisodeOptions {
            format: ObservationFormat::SphinxTree,
            format_errors: FormatErrorPolicy::Continue,
            stop_on_repetition: false,
            display: Display::default(),
            disturbances: Disturbances::None,
        }
    }
}

/// Why an episode could not start or go on: a harness problem, never the agent's. (An app
/// package failing on its data is not one: the phone shows the agent its "keeps stopping"
/// dialog and the episode goes on.)
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EnvError {
    /// The phone failed.
    #[error("phone: {0}")]
    Phone(#[from] PhoneError),
    /// A task's setup failed.
    #[error("task `{task}` setup: {message}")]
    Setup {
        /// Task id.
        task: String,
        /// What failed.
        message: String,
    },
    /// A step was given after the episode ended.
    #[error("the episode has ended")]
    Ended,
    /// The device failed (or cannot be reached).
    #[error("device: {0}")]
    Device(String),
    /// The task cannot run on a device (its criteria need the simulated phone's databases or
    /// events, or it sets up SQL).
    #[error("task `{task}` cannot run on a device: {reasons}")]
    NotForDevice {
        /// Task id.
        task: String,
        /// Why, one sentence each.
        reasons: String,
    },
}

impl From<DeviceError> for EnvError {
    fn from(e: DeviceError) -> Self {
        EnvError::Device(e.to_string())
    }
}

/// Opens a device for each episode (`phonebench_device::connect` with the run's address).
pub type DeviceOpener = Arc<dyn Fn() -> Result<Box<dyn Device>, DeviceError> + Send + Sync>;

/// What the episode runs on.
#[derive(Debug)]
enum Backend {
    /// The simulated phone.
    Phone(Box<Phone>),
    /// A real device (or an emulator), through [`Device`].
    Device(DeviceBackend),
}

/// A device and what the episode knows about it.
#[derive(Debug)]
struct DeviceBackend {
    /// Shared with the screenshots handed out, which capture only when asked for.
    device: Arc<Mutex<Box<dyn Device>>>,
    /// Counts the actions sent: a screenshot asked for after the screen changed is refused.
    generation: Arc<AtomicU64>,
    /// The catalog's apps, so `open_app` and screen records know app ids by package.
    apps: Vec<KnownApp>,
    /// The last screen read (package and activity of the recorded screen).
    screen: DeviceScreen,
    /// The screenshot of the current screen, once taken (a device screenshot costs time).
    image: Option<ScreenImage>,
}

/// An episode's state at one moment ([`Episode::snapshot`]), to go back to with
/// [`Episode::restore`] (on the same episode).
#[derive(Debug, Clone)]
pub struct EpisodeSnapshot {
    phone: phonebench_phone::PhoneSnapshot,
    user: SimulatedUser,
    observation: Observation,
    tree: Arc<UiTree>,
    trajectory: Trajectory,
    events_seen: usize,
}

impl EpisodeSnapshot {
    /// The phone's part.
    pub fn phone(&self) -> &phonebench_phone::PhoneSnapshot {
        &self.phone
    }
}

/// What the agent learns from a step besides the next screen.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StepFeedback {
    /// The user's reply, a tool result, a rejection or a notice, if any.
    pub message: Option<String>,
    /// Whether the episode has ended.
    pub done: bool,
}

/// One agent turn as the environment takes it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TurnInput {
    /// What the agent said.
    pub raw: String,
    /// The action, or why the output is not one (a format error).
    pub parsed: Option<Result<Action, String>>,
    /// The action came from a repair call; why the original output did not parse.
    pub repaired_from: Option<String>,
    /// The answer to an `ask_user` question from a simulated user outside the environment (a
    /// model-based user); `None` lets the built-in keyword user answer.
    pub user_reply: Option<String>,
    /// What the MCP server said to an `mcp_call`, when the caller has MCP servers connected;
    /// `None` answers that no server is connected.
    pub mcp_reply: Option<McpReply>,
}

/// An MCP call's outcome as the environment records it (the runner makes the call).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct McpReply {
    /// The text the agent gets (cut to the configured length; errors say so).
    pub text: String,
    /// The call did not succeed (a tool error, a refused call, or a failed server).
    pub is_error: bool,
    /// The text was cut.
    pub truncated: bool,
    /// The server itself failed: why.
    pub failure: Option<String>,
    /// Wall time of the call, ms (kept out of everything that must be deterministic).
    pub latency_ms: u64,
}

impl TurnInput {
    /// A turn with just the output and its parse.
    pub fn new(raw: String, parsed: Result<Action, String>) -> TurnInput {
        TurnInput { raw, parsed: Some(parsed), repaired_from: None, user_reply: None, mcp_reply: None }
    }
}

/// A running episode.
#[derive(Debug)]
pub struct Episode {
    backend: Backend,
    task: TaskInstance,
    options: EpisodeOptions,
    user: SimulatedUser,
    observation: Observation,
    tree: Arc<UiTree>,
    trajectory: Trajectory,
    tracked_apps: Vec<String>,
    events_seen: usize,
    /// When the episode's time runs out (see [`Episode::set_deadline`]).
    deadline: Option<Instant>,
}

impl Episode {
    /// Sets up `task` on a fresh phone with `catalog`'s apps: seed and clock from the instance,
    /// setup SQL (parameters bound), the start screen, then the first observation.
    pub fn start(
        catalog: &Catalog,
        task: &TaskInstance,
        options: EpisodeOptions,
    ) -> Result<Episode, EnvError> {
        let phone = Phone::new(
            catalog.clone(),
            PhoneConfig {
                seed: task.seed,
                clock_start_ms: task.clock_start_ms,
                display: options.display,
                disturbances: options.disturbances,
            },
        )?;
        Episode::on_fresh_phone(phone, task, options)
    }

    /// [`Episode::start`] on a phone made earlier for the same catalog (the last episode's,
    /// from [`Episode::into_phone`]): the phone is reset to the task's seed, clock, display and
    /// disturbances, which gives what a new phone would, at a fraction of the cost.
    pub fn start_on(
        mut phone: Phone,
        task: &TaskInstance,
        options: EpisodeOptions,
    ) -> Result<Episode, EnvError> {
        phone.reset_with(PhoneConfig {
            seed: task.seed,
            clock_start_ms: task.clock_start_ms,
            display: options.display,
            disturbances: options.disturbances,
        })?;
        Episode::on_fresh_phone(phone, task, options)
    }

    /// The episode's phone, to start another episode on ([`Episode::start_on`]); `None` for an
    /// episode on a device.
    pub fn into_phone(self) -> Option<Phone> {
        match self.backend {
            Backend::Phone(phone) => Some(*phone),
            Backend::Device(_) => None,
        }
    }

    /// The same task started again on this episode's phone, reset ([`Phone::reset`]: every
    /// database restored byte for byte, clock, generator and screens as the phone was made):
    /// what [`Episode::start`] gives, without building a new phone (a search that replays many
    /// paths restarts often). On a device: an error.
    pub fn restart(self) -> Result<Episode, EnvError> {
        let Backend::Phone(mut phone) = self.backend else {
            return Err(EnvError::Device("an episode on a device cannot restart".into()));
        };
        phone.reset()?;
        let mut task = self.task;
        // `start` added the disturbances' turns; it adds them again.
        task.max_steps = task.max_steps.saturating_sub(self.options.disturbances.extra_steps());
        Episode::on_fresh_phone(*phone, &task, self.options)
    }

    /// Sets `task` up on `phone`, fresh (just made with the task's seed and clock and the
    /// options' display and disturbances, or reset since).
    fn on_fresh_phone(
        mut phone: Phone,
        task: &TaskInstance,
        options: EpisodeOptions,
    ) -> Result<Episode, EnvError> {
        // A disturbance costs the agent turns, never the ones its task needs.
        let mut task = task.clone();
        task.max_steps = task.max_steps.saturating_add(options.disturbances.extra_steps());
        let task = &task;
        let setup_err = |message: String| EnvError::Setup { task: task.task_id.clone(), message };
        for setup in &task.setup {
            phone.execute(&setup.app, &setup.sql, &task.sql_params).map_err(|e| setup_err(e.to_string()))?;
        }
        if !task.setup.is_empty() {
            // Boot actions (scheduling incoming mail, alarms) see the data as the task set it up.
            phone.boot().map_err(|e| setup_err(e.to_string()))?;
        }
        if let Some(app) = &task.start.app {
            phone
                .start_app(app, task.start.screen.as_deref(), &task.start.args)
                .map_err(|e| setup_err(e.to_string()))?;
        }
        let mut tracked_apps = task.apps.clone();
        for c in &task.criteria {
            c.state_apps(&mut tracked_apps);
        }
        tracked_apps.dedup();
        let mut trajectory = Trajectory::default();
        for app in &tracked_apps {
            let initial = phone.database_bytes(app)?;
            trajectory.databases.insert(app.clone(), DatabasePair { initial, last: Vec::new() });
        }
        let observation = phone.observe(options.format)?;
        let tree = phone.shared_tree()?;
        let mut episode = Episode {
            user: SimulatedUser::new(task.facts.clone()),
            backend: Backend::Phone(Box::new(phone)),
            task: task.clone(),
            options,
            observation,
            tree,
            trajectory,
            tracked_apps,
            events_seen: 0,
            deadline: None,
        };
        episode.record_screen();
        Ok(episode)
    }

    /// Sets up `task` on a real `device`: refuses a task a device cannot judge (state or event
    /// criteria, SQL setup) or disturbances (the simulated phone's), runs the task's
    /// `adb_setup` commands, goes home, stops the task's apps and starts the start app (a
    /// catalog app id is its package; `start.screen` names the activity), then reads the first
    /// screen. `catalog` only names apps (ids and launcher names to packages). A pixels-only
    /// device ([`Device::pixels_only`]) also refuses checks that need the real tree, and starts
    /// from the screen it shows.
    pub fn start_on_device(
        mut device: Box<dyn Device>,
        catalog: &Catalog,
        task: &TaskInstance,
        options: EpisodeOptions,
    ) -> Result<Episode, EnvError> {
        let pixels_only = device.pixels_only();
        let reasons = if pixels_only { task.pixels_problems() } else { task.device_problems() };
        if !reasons.is_empty() {
            return Err(EnvError::NotForDevice { task: task.task_id.clone(), reasons: reasons.join("; ") });
        }
        if options.disturbances != Disturbances::None {
            return Err(EnvError::NotForDevice {
                task: task.task_id.clone(),
                reasons: "disturbances are the simulated phone's; a device shows its own".into(),
            });
        }
        let apps = KnownApp::all(catalog);
        let package_of = |app: &str| {
            apps.iter().find(|a| a.id == app).map_or_else(|| app.to_string(), |a| a.package.clone())
        };
        let setup_err = |message: String| EnvError::Setup { task: task.task_id.clone(), message };
        for command in &task.adb_setup {
            device.run_setup(command).map_err(|e| setup_err(e.to_string()))?;
        }
        // A pixels-only device knows no apps: whoever serves it has staged the task's first
        // screen (`phonebench vnc-server --task` does), and the episode starts from it.
        if pixels_only {
            return Self::on_device_screen(device, apps, task, options);
        }
        device.key(&phonebench_actions::Key::Home)?;
        let mut stopped: Vec<String> = task.apps.iter().map(|a| package_of(a)).collect();
        if let Some(app) = &task.start.app {
            stopped.push(package_of(app));
        }
        stopped.sort();
        stopped.dedup();
        for package in &stopped {
            device.force_stop(package)?;
        }
        if let Some(app) = &task.start.app {
            device.launch(&package_of(app), task.start.screen.as_deref())?;
        }
        Self::on_device_screen(device, apps, task, options)
    }

    /// The episode of `task` on `device`, from the screen it shows now.
    fn on_device_screen(
        mut device: Box<dyn Device>,
        apps: Vec<KnownApp>,
        task: &TaskInstance,
        options: EpisodeOptions,
    ) -> Result<Episode, EnvError> {
        let screen = device.screen()?;
        let observation = phonebench_observe::render(&screen.tree, options.format);
        let tree = Arc::new(screen.tree.clone());
        let backend = DeviceBackend {
            device: Arc::new(Mutex::new(device)),
            generation: Arc::new(AtomicU64::new(0)),
            apps,
            screen,
            image: None,
        };
        let mut episode = Episode {
            user: SimulatedUser::new(task.facts.clone()),
            backend: Backend::Device(backend),
            task: task.clone(),
            options,
            observation,
            tree,
            trajectory: Trajectory::default(),
            tracked_apps: Vec::new(),
            events_seen: 0,
            deadline: None,
        };
        episode.record_screen();
        Ok(episode)
    }

    /// Whether the episode runs on a device (not the simulated phone).
    pub fn on_device(&self) -> bool {
        matches!(self.backend, Backend::Device(_))
    }

    /// The task instance.
    pub fn task(&self) -> &TaskInstance {
        &self.task
    }

    /// The goal given to the agent.
    pub fn goal(&self) -> &str {
        &self.task.goal
    }

    /// The options the episode was started with.
    pub fn options(&self) -> &EpisodeOptions {
        &self.options
    }

    /// The current observation (in the configured format).
    pub fn observation(&self) -> &Observation {
        &self.observation
    }

    /// The current UI tree.
    pub fn tree(&self) -> &Arc<UiTree> {
        &self.tree
    }

    /// The current screen's picture, drawn only if its pixels are asked for.
    pub fn screen_image(&mut self) -> Result<ScreenImage, EnvError> {
        match &mut self.backend {
            Backend::Phone(phone) => Ok(phone.screen_image()?),
            Backend::Device(d) => {
                if let Some(image) = &d.image {
                    return Ok(image.clone());
                }
                // Taken only if someone looks: most agents read text, and a device screenshot
                // costs real time.
                let (device, generation) = (d.device.clone(), d.generation.clone());
                let taken_at = generation.load(Ordering::SeqCst);
                let (width, height, _) = lock(&d.device)?.display();
                let image = ScreenImage::captured(
                    width,
                    height,
                    Box::new(move || {
                        if generation.load(Ordering::SeqCst) != taken_at {
                            return Err("the screen changed before its picture was taken".into());
                        }
                        let mut device =
                            device.lock().map_err(|_| "the device's lock is poisoned".to_string())?;
                        device.screenshot_png().map_err(|e| e.to_string())
                    }),
                );
                d.image = Some(image.clone());
                Ok(image)
            }
        }
    }

    /// The simulated phone (read access, e.g. for scripted agents that inspect state); `None` on
    /// a device.
    pub fn phone(&self) -> Option<&Phone> {
        match &self.backend {
            Backend::Phone(phone) => Some(phone),
            Backend::Device(_) => None,
        }
    }

    /// The episode's state now, to go back to with [`Episode::restore`]: the phone's
    /// ([`Phone::snapshot`]: unchanged databases shared, not copied) and the episode's own (the
    /// trajectory so far, the simulated user, the screen). The trajectory's databases (the
    /// initial bytes, the same for the whole episode) are not copied. On a device: an error.
    pub fn snapshot(&mut self) -> Result<EpisodeSnapshot, EnvError> {
        let Backend::Phone(phone) = &mut self.backend else {
            return Err(EnvError::Device("an episode on a device has no snapshots".into()));
        };
        let phone = phone.snapshot()?;
        // Why: the initial databases are the bulk of a trajectory and never change in an episode.
        let databases = std::mem::take(&mut self.trajectory.databases);
        let trajectory = self.trajectory.clone();
        self.trajectory.databases = databases;
        Ok(EpisodeSnapshot {
            phone,
            user: self.user.clone(),
            observation: self.observation.clone(),
            tree: self.tree.clone(),
            trajectory,
            events_seen: self.events_seen,
        })
    }

    /// Goes back to the state `snapshot` took of this episode ([`Episode::snapshot`]): what
    /// follows is as if the steps since had not been taken.
    pub fn restore(&mut self, snapshot: &EpisodeSnapshot) -> Result<(), EnvError> {
        let Backend::Phone(phone) = &mut self.backend else {
            return Err(EnvError::Device("an episode on a device has no snapshots".into()));
        };
        phone.restore_snapshot(&snapshot.phone)?;
        let databases = std::mem::take(&mut self.trajectory.databases);
        self.trajectory = snapshot.trajectory.clone();
        self.trajectory.databases = databases;
        self.user = snapshot.user.clone();
        self.observation = snapshot.observation.clone();
        self.tree = snapshot.tree.clone();
        self.events_seen = snapshot.events_seen;
        Ok(())
    }

    /// Turns taken so far.
    pub fn steps_taken(&self) -> usize {
        self.trajectory.steps.len()
    }

    /// Whether the episode has ended.
    pub fn is_done(&self) -> bool {
        self.trajectory.end.is_some()
    }

    /// The trajectory so far.
    pub fn trajectory(&self) -> &Trajectory {
        &self.trajectory
    }

    /// Sets when the episode's time runs out (`None`: never). A step started after it ends the
    /// episode as [`EpisodeEnd::Timeout`] without acting; the phone stops a render or statement
    /// that is still running at it, and that step ends the episode the same way. The runner sets
    /// it before each step, as its time budget does not count waiting for models.
    pub fn set_deadline(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
        if let Backend::Phone(phone) = &mut self.backend {
            phone.set_deadline(deadline);
        }
    }

    /// Whether the deadline has passed.
    fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// One agent turn: `raw` is what the agent said, `parsed` the action or why it did not parse.
    pub fn step(&mut self, raw: String, parsed: Result<Action, String>) -> Result<StepFeedback, EnvError> {
        self.step_turn(TurnInput::new(raw, parsed))
    }

    /// One agent turn, with what a repair call or an outside simulated user contributed.
    pub fn step_turn(&mut self, turn: TurnInput) -> Result<StepFeedback, EnvError> {
        if self.is_done() {
            return Err(EnvError::Ended);
        }
        if self.past_deadline() {
            // The time ran out before the turn: the action is not taken (nor recorded).
            self.trajectory.end = Some(EpisodeEnd::Timeout);
            return Ok(StepFeedback { message: None, done: true });
        }
        let index = self.trajectory.steps.len();
        let TurnInput { raw, parsed, repaired_from, user_reply, mcp_reply } = turn;
        let parsed = parsed.unwrap_or_else(|| Err("the agent produced no action".into()));
        if repaired_from.is_some() && parsed.is_ok() && self.trajectory.databases_at_first_repair.is_empty() {
            // The "original" episode ends before this step: keep the state it ended in.
            for app in &self.tracked_apps {
                let bytes = self.database_bytes(app)?;
                self.trajectory.databases_at_first_repair.insert(app.clone(), bytes);
            }
        }
        let mut record = StepRecord {
            raw,
            repaired_from: repaired_from.filter(|_| parsed.is_ok()),
            ..StepRecord::default()
        };
        let mut end = None;
        match parsed {
            Err(reason) => {
                record.feedback = Some(format!("Your output could not be parsed as an action: {reason}"));
                record.format_error = Some(reason);
                if self.options.format_errors == FormatErrorPolicy::End {
                    end = Some(EpisodeEnd::FormatError);
                }
            }
            Ok(action) => {
                match &action {
                    Action::Answer { text } => {
                        self.trajectory.answer = Some(text.clone());
                        end = Some(EpisodeEnd::Answered);
                    }
                    Action::Finish { status, .. } => end = Some(EpisodeEnd::Finished { status: *status }),
                    Action::AskUser { text } => {
                        let (keyword_answer, fact) = self.user.reply(text);
                        // The fact is what the question was about, whoever answers it.
                        let answer = user_reply.unwrap_or(keyword_answer);
                        self.trajectory.exchanges.push(Exchange {
                            step: index,
                            question: text.clone(),
                            answer: answer.clone(),
                            fact,
                        });
                        record.feedback = Some(answer);
                    }
                    Action::McpCall { tool, arguments } => {
                        let reply = mcp_reply.unwrap_or_else(|| McpReply {
                            text: if self.task.mcp_servers.is_empty() {
                                format!("error: no MCP tool `{tool}`: this task offers no MCP tools")
                            } else {
                                format!(
                                    "error: MCP tool `{tool}`: no MCP server is connected to this episode"
                                )
                            },
                            is_error: true,
                            ..McpReply::default()
                        });
                        self.trajectory.mcp_calls.push(McpCallRecord {
                            step: index,
                            tool: tool.clone(),
                            arguments: arguments.clone(),
                            result: reply.text.clone(),
                            is_error: reply.is_error,
                            truncated: reply.truncated,
                            failure: reply.failure,
                            latency_ms: reply.latency_ms,
                        });
                        record.feedback = Some(reply.text);
                    }
                    device => {
                        record.point = self.action_point(device);
                        match &mut self.backend {
                            Backend::Device(d) => {
                                match apply_on_device(d, device, &self.observation, &self.tree) {
                                    Ok(applied) => {
                                        record.hit = applied.hit;
                                        if !applied.notes.is_empty() {
                                            record.feedback = Some(applied.notes.join("; "));
                                        }
                                    }
                                    Err(ActError::Rejected(why)) => {
                                        record.feedback =
                                            Some(format!("The action was not performed: {why}"));
                                        record.rejected = Some(why);
                                    }
                                    Err(e @ ActError::NotDeviceAction(_)) => {
                                        record.rejected = Some(e.to_string())
                                    }
                                    Err(ActError::Device(e)) => {
                                        record.rejected = Some(e.to_string());
                                        end = Some(EpisodeEnd::Infrastructure {
                                            message: format!("device: {e}"),
                                        });
                                    }
                                }
                            }
                            Backend::Phone(phone) => match phone.apply(device) {
                                Ok(outcome) => {
                                    record.hit = outcome.hit;
                                    if !outcome.notes.is_empty() {
                                        record.feedback = Some(outcome.notes.join("; "));
                                    }
                                }
                                Err(e @ (PhoneError::Target(_) | PhoneError::UnknownApp(..))) => {
                                    record.rejected = Some(e.to_string());
                                    record.feedback = Some(format!("The action was not performed: {e}"));
                                }
                                Err(e @ PhoneError::NotDeviceAction(_)) => {
                                    record.rejected = Some(e.to_string());
                                }
                                Err(e) if self.past_deadline() => {
                                    // The phone says the time limit stopped it.
                                    record.rejected = Some(e.to_string());
                                    end = Some(EpisodeEnd::Timeout);
                                }
                                // An app's failures on its own data reach the agent as the app's
                                // "keeps stopping" dialog; what is left is the phone itself failing.
                                Err(e @ (PhoneError::App { .. } | PhoneError::Display(_))) => {
                                    end = Some(EpisodeEnd::Infrastructure { message: e.to_string() });
                                    record.rejected = Some(e.to_string());
                                }
                            },
                        }
                    }
                }
                record.action = Some(action);
            }
        }
        self.trajectory.steps.push(record);
        if let Backend::Phone(phone) = &self.backend {
            for event in &phone.events()[self.events_seen..] {
                self.trajectory.events.push(EventRecord {
                    step: index,
                    app: event.app.clone(),
                    name: event.name.clone(),
                    data: event.data.clone(),
                });
            }
            self.events_seen = phone.events().len();
        }
        let screen = match &mut self.backend {
            Backend::Phone(phone) => phone
                .observe(self.options.format)
                .and_then(|o| Ok((o, phone.shared_tree()?)))
                .map_err(EnvError::from),
            Backend::Device(d) => match lock(&d.device).and_then(|mut device| Ok(device.screen()?)) {
                Ok(screen) => {
                    let observation = phonebench_observe::render(&screen.tree, self.options.format);
                    let tree = Arc::new(screen.tree.clone());
                    d.screen = screen;
                    d.image = None;
                    Ok((observation, tree))
                }
                Err(e) => Err(e),
            },
        };
        match screen {
            Ok((observation, tree)) => {
                self.observation = observation;
                self.tree = tree;
                self.record_screen();
            }
            Err(_) if self.past_deadline() => {
                // The screen could not be rendered in time: the episode ends on the last one
                // rendered, which keeps `screens.len() == steps.len() + 1`.
                if let Some(last) = self.trajectory.screens.last().cloned() {
                    self.trajectory.screens.push(last);
                }
                end.get_or_insert(EpisodeEnd::Timeout);
            }
            Err(EnvError::Device(message)) => {
                // The device failed reading the screen: the episode ends on the last screen read.
                if let Some(last) = self.trajectory.screens.last().cloned() {
                    self.trajectory.screens.push(last);
                }
                end = Some(EpisodeEnd::Infrastructure { message: format!("device: {message}") });
            }
            Err(e) => return Err(e),
        }
        if end.is_none() && self.options.stop_on_repetition && self.repeated_three_times() {
            end = Some(EpisodeEnd::Repetition);
        }
        if end.is_none() && self.trajectory.steps.len() >= self.task.max_steps as usize {
            end = Some(EpisodeEnd::Budget);
        }
        let message = self.trajectory.steps.last().and_then(|s| s.feedback.clone());
        if let Some(end) = end {
            self.trajectory.end = Some(end);
        }
        Ok(StepFeedback { message, done: self.is_done() })
    }

    /// Ends the episode from outside (wall-clock timeout, model server down).
    pub fn end_with(&mut self, end: EpisodeEnd) {
        if self.trajectory.end.is_none() {
            self.trajectory.end = Some(end);
        }
    }

    /// The finished trajectory, with every tracked app's final database.
    pub fn finish(mut self) -> Result<Trajectory, EnvError> {
        if self.trajectory.end.is_none() {
            self.trajectory.end = Some(EpisodeEnd::Budget);
        }
        for app in self.tracked_apps.clone() {
            let last = self.database_bytes(&app)?;
            if let Some(pair) = self.trajectory.databases.get_mut(&app) {
                pair.last = last;
            }
        }
        Ok(self.trajectory)
    }

    /// The trajectory as it would be if the agent finished (complete) now: every tracked app's
    /// current database as the last one, the episode going on untouched. What the capability
    /// probes judge each prefix of a reference by.
    pub fn stopped_here(&self) -> Result<Trajectory, EnvError> {
        let mut trajectory = self.trajectory.clone();
        trajectory.end = Some(EpisodeEnd::Finished { status: phonebench_actions::FinishStatus::Complete });
        for app in &self.tracked_apps {
            let last = self.database_bytes(app)?;
            if let Some(pair) = trajectory.databases.get_mut(app) {
                pair.last = last;
            }
        }
        Ok(trajectory)
    }

    /// The trajectory as it would be if the agent's next turn were `ending` (an `answer` or a
    /// `finish`, which end the episode without touching the phone): the step recorded with its
    /// canonical JSON as the raw text, the screen repeated, the answer kept, every tracked app's
    /// current database as the last one; the episode goes on untouched. What a search judges a
    /// candidate ending by before playing it for real. Any other action gives
    /// [`Episode::stopped_here`].
    pub fn stopped_with(&self, ending: &Action) -> Result<Trajectory, EnvError> {
        let mut trajectory = self.stopped_here()?;
        let end = match ending {
            Action::Answer { text } => {
                trajectory.answer = Some(text.clone());
                EpisodeEnd::Answered
            }
            Action::Finish { status, .. } => EpisodeEnd::Finished { status: *status },
            _ => return Ok(trajectory),
        };
        trajectory.end = Some(end);
        trajectory.steps.push(StepRecord {
            raw: serde_json::to_string(ending).unwrap_or_default(),
            action: Some(ending.clone()),
            ..StepRecord::default()
        });
        if let Some(last) = trajectory.screens.last().cloned() {
            trajectory.screens.push(last);
        }
        Ok(trajectory)
    }

    /// A tracked app's database (only the simulated phone tracks any).
    fn database_bytes(&self, app: &str) -> Result<Vec<u8>, EnvError> {
        match &self.backend {
            Backend::Phone(phone) => Ok(phone.database_bytes(app)?),
            Backend::Device(_) => Ok(Vec::new()),
        }
    }

    fn record_screen(&mut self) {
        let phone = match &self.backend {
            Backend::Phone(phone) => phone,
            Backend::Device(d) => {
                let app = d.apps.iter().find(|a| a.package == d.screen.package).map(|a| a.id.clone());
                let (package, activity) = (d.screen.package.clone(), d.screen.activity.clone());
                self.trajectory.screens.push(ScreenRecord {
                    tree: self.tree.clone(),
                    app,
                    package,
                    activity,
                });
                return;
            }
        };
        let (app, package, activity) = match (phone.foreground(), phone.current_screen()) {
            (Foreground::App(_), Some((app, screen))) => {
                let package =
                    phone.catalog().get(app).map(|p| p.manifest.package.clone()).unwrap_or_default();
                (Some(app.to_string()), package, screen.to_string())
            }
            (Foreground::Overview, _) => {
                (None, phonebench_phone::system::LAUNCHER.to_string(), "overview".into())
            }
            _ => (None, phonebench_phone::system::LAUNCHER.to_string(), "home".into()),
        };
        self.trajectory.screens.push(ScreenRecord { tree: self.tree.clone(), app, package, activity });
    }

    /// Where a touch action lands: the indexed element's centre, or the point given.
    fn action_point(&self, action: &Action) -> Option<(i32, i32)> {
        let target = match action {
            Action::Swipe(phonebench_actions::Swipe::Between { from, .. }) => return Some((from.x, from.y)),
            other => other.primary_target()?,
        };
        match target {
            Target::Point(p) => Some((p.x, p.y)),
            Target::Index(i) => {
                let node = self.observation.node_at(*i)?;
                Some(self.tree.node(node).bounds.center())
            }
            Target::Description(_) => None,
        }
    }

    /// The last three steps are the same action (SPHINX `is_equal_action`, on canonical actions).
    fn repeated_three_times(&self) -> bool {
        let steps = &self.trajectory.steps;
        if steps.len() < 3 {
            return false;
        }
        let last = &steps[steps.len() - 3..];
        last.iter().all(|s| s.action.is_some() && s.action == last[0].action && s.point == last[0].point)
    }
}

/// The device, locked (a poisoned lock means a screenshot capture panicked: the device is gone).
fn lock(device: &Mutex<Box<dyn Device>>) -> Result<MutexGuard<'_, Box<dyn Device>>, EnvError> {
    device.lock().map_err(|_| EnvError::Device("the device's lock is poisoned".into()))
}

/// Applies `action` on the device; screenshots of the screen before it are void from now on.
fn apply_on_device(
    d: &mut DeviceBackend,
    action: &Action,
    observation: &Observation,
    tree: &UiTree,
) -> Result<phonebench_device::Applied, ActError> {
    d.generation.fetch_add(1, Ordering::SeqCst);
    let mut device =
        d.device.lock().map_err(|_| DeviceError::NotReady("the device's lock is poisoned".into()))?;
    phonebench_device::apply_action(device.as_mut(), action, observation, tree, &d.apps)
}
