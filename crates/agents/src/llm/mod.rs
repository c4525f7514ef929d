//! Model-driven agents: the published agent designs over any OpenAI-compatible model.
//!
//! An agent is a configuration ([`AgentConfig`]: a TOML file, the model settings, prompt
//! templates as editable minijinja files) and a design — the loop that builds prompts, calls the
//! model, and turns answers into actions:
//! - [`sphinx`]: SPHINX's ReAct prompt and action syntax, with output repair;
//! - [`androidworld`]: AndroidWorld's T3A (text) and M3A (screenshot + set-of-marks);
//! - [`reflexion`]: a critic after each failed trial writes a lesson for the next;
//! - [`planner`]: MobileWorld's planner + grounding model;
//! - [`coords`]: end-to-end coordinate models.
//!
//! Also here, because they are prompts over models too: the model judge ([`judge`]) and the
//! model-based simulated user ([`user`]).
//!
//! Agent text reaches templates only as values: templates are the configuration's, never
//! anything a model or an app wrote.

pub mod androidworld;
pub mod builtin;
pub mod config;
pub mod coords;
pub mod judge;
pub mod parse;
pub mod planner;
pub mod reflexion;
pub mod sphinx;
pub mod user;

use std::sync::Arc;

use minijinja::{Environment, UndefinedBehavior};
use phonebench_model::{CallRecord, ChatModel, ChatRequest, ChatResponse, Message, ModelError, Sampling};
use phonebench_pixels::{ScreenImage, SomStyle};
use serde::Serialize;
use serde_json::{Map, Value};

pub use config::{AgentConfig, ConfigError, Design, ModelSection};

use crate::{Agent, AgentError, AgentInput};

/// Template instructions one render may execute; far beyond any real prompt (which takes
/// thousands), so only a runaway loop meets it.
pub const TEMPLATE_FUEL: u64 = 20_000_000;

/// The longest model-written text put back into a prompt (a malformed answer to repair, a step
/// summary, an earlier reply, a lesson): a model that runs away must not make the next request
/// overflow the context, which the server would refuse, failing the episode as infrastructure.
pub const MAX_ECHOED_CHARS: usize = 8_000;

/// `text` cut to [`MAX_ECHOED_CHARS`], saying how much was cut.
pub fn clip(text: &str) -> String {
    let total = text.chars().count();
    if total <= MAX_ECHOED_CHARS {
        return text.to_string();
    }
    let head: String = text.chars().take(MAX_ECHOED_CHARS).collect();
    format!("{head}… [{} more characters cut]", total - MAX_ECHOED_CHARS)
}

/// The templates of one configuration, compiled.
#[derive(Debug)]
pub struct Templates {
    env: Environment<'static>,
    origin: String,
    digest: String,
}

impl Templates {
    /// Compiles every template of `config`; a syntax error names the file and line.
    pub fn compile(config: &AgentConfig) -> Result<Templates, ConfigError> {
        Templates::from_sources(
            &config.origin,
            config
                .prompts
                .iter()
                .map(|(role, (file, source))| (role.as_str(), file.as_str(), source.as_str())),
        )
    }

    /// Compiles `(role, file name, source)` templates; `origin` names them in errors.
    pub fn from_sources<'s>(
        origin: &str,
        sources: impl IntoIterator<Item = (&'s str, &'s str, &'s str)>,
    ) -> Result<Templates, ConfigError> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        // A prompt that loops without end must fail, not hang the run (configs are shared files).
        env.set_fuel(Some(TEMPLATE_FUEL));
        let mut all = Vec::new();
        for (role, file, source) in sources {
            all.push(serde_json::json!([role, source]));
            env.add_template_owned(role.to_string(), source.to_string()).map_err(|e| ConfigError {
                origin: format!("{file}{}", e.line().map(|l| format!(":{l}")).unwrap_or_default()),
                message: format!("template: {e}"),
            })?;
        }
        let digest = phonebench_model::request_key(&Value::Array(all));
        Ok(Templates { env, origin: origin.to_string(), digest })
    }

    /// A digest of every template's role and source.
    pub fn source_digest(&self) -> &str {
        &self.digest
    }

    /// Whether a template for `role` exists.
    pub fn has(&self, role: &str) -> bool {
        self.env.get_template(role).is_ok()
    }

    /// Renders the `role` template with `context`. A failure (an unknown variable, a bad filter)
    /// is the configuration's fault, reported as an infrastructure failure of the episode.
    pub fn render(&self, role: &str, context: &impl Serialize) -> Result<String, AgentError> {
        let template = self
            .env
            .get_template(role)
            .map_err(|e| AgentError(format!("{}: no `{role}` template: {e}", self.origin)))?;
        template
            .render(minijinja::value::Serde(context))
            .map_err(|e| AgentError(format!("{}: template `{role}`: {e:#}", self.origin)))
    }
}

/// How an agent calls one model.
#[derive(Clone)]
pub struct ModelHandle {
    /// The model (usually behind the response cache).
    pub model: Arc<dyn ChatModel>,
    /// Sampling parameters from the configuration.
    pub sampling: Sampling,
    /// Extra body fields from the configuration.
    pub extra: Map<String, Value>,
    /// The episode this handle serves, for the response cache (see [`ModelHandle::scoped`]).
    scope: Option<Arc<CacheScope>>,
}

/// One episode's share of the response cache: its name, and how often each request was made.
#[derive(Debug)]
struct CacheScope {
    name: String,
    seen: std::sync::Mutex<std::collections::HashMap<String, u32>>,
}

impl std::fmt::Debug for ModelHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelHandle")
            .field("model", &self.model.model())
            .field("sampling", &self.sampling)
            .finish()
    }
}

impl ModelHandle {
    /// A handle with the configuration section's sampling and extra fields.
    pub fn new(model: Arc<dyn ChatModel>, section: &ModelSection) -> ModelHandle {
        ModelHandle { model, sampling: section.sampling(), extra: section.extra.clone(), scope: None }
    }

    /// The same model for one episode named `name` (e.g. `task#instance`): every request is
    /// cached under the episode and its occurrence within it, so a retry, or the same prompt
    /// again at temperature > 0, is a new sample as it would be without a cache, and another
    /// episode never replays this one's answers; re-running the episode replays them all.
    pub fn scoped(&self, name: &str) -> ModelHandle {
        let scope = CacheScope { name: name.to_string(), seen: Default::default() };
        ModelHandle { scope: Some(Arc::new(scope)), ..self.clone() }
    }

    /// One call; a server failure becomes an [`AgentError`] (infrastructure).
    pub async fn call(
        &self,
        purpose: &str,
        messages: Vec<Message>,
    ) -> Result<(ChatResponse, CallRecord), AgentError> {
        let mut request = ChatRequest::new(messages, self.sampling.clone());
        request.extra = self.extra.clone();
        self.send(purpose, request).await
    }

    /// One call with a prepared request.
    pub async fn send(
        &self,
        purpose: &str,
        mut request: ChatRequest,
    ) -> Result<(ChatResponse, CallRecord), AgentError> {
        if let Some(scope) = &self.scope {
            let key = phonebench_model::cache_key("", &request, self.model.model());
            let n = match scope.seen.lock() {
                Ok(mut seen) => {
                    let n = seen.entry(key).or_insert(0);
                    *n += 1;
                    *n - 1
                }
                Err(_) => 0,
            };
            request.cache_scope = Some(format!("{}#{n}", scope.name));
        }
        let completion = self.model.complete(&request).await.map_err(model_error)?;
        let record = CallRecord::new(purpose, self.model.model(), &request, &completion);
        Ok((completion.response, record))
    }
}

/// A model failure as an agent's infrastructure error.
pub fn model_error(e: ModelError) -> AgentError {
    AgentError(e.to_string())
}

/// The models an agent uses.
#[derive(Debug, Clone)]
pub struct Models {
    /// The acting model.
    pub main: ModelHandle,
    /// The grounding model (planner-executor); `None` uses `main`.
    pub grounding: Option<ModelHandle>,
}

/// Everything needed to make agents of one configuration (one per episode).
#[derive(Debug, Clone)]
pub struct ModelAgentSpec {
    /// The configuration.
    pub config: Arc<AgentConfig>,
    /// Its templates.
    pub templates: Arc<Templates>,
    /// Its models.
    pub models: Models,
}

impl ModelAgentSpec {
    /// Compiles the templates and checks the design's options, so a bad configuration fails
    /// before any episode runs.
    pub fn new(config: AgentConfig, models: Models) -> Result<ModelAgentSpec, ConfigError> {
        let templates = Templates::compile(&config)?;
        for role in config.prompts.keys() {
            for sample in sample_contexts() {
                templates.render(role, &sample).map_err(|e| ConfigError {
                    origin: config.origin.clone(),
                    message: format!("prompt `{role}` does not render with a sample episode: {}", e.0),
                })?;
            }
        }
        let spec = ModelAgentSpec { config: Arc::new(config), templates: Arc::new(templates), models };
        spec.try_build()?;
        Ok(spec)
    }

    fn try_build(&self) -> Result<Box<dyn Agent>, ConfigError> {
        Ok(match self.config.design {
            Design::SphinxReact => Box::new(sphinx::SphinxReact::new(self)?),
            Design::T3a | Design::M3a => Box::new(androidworld::AndroidWorldAgent::new(self)?),
            Design::Reflexion => Box::new(reflexion::Reflexion::new(self)?),
            Design::PlannerExecutor => Box::new(planner::PlannerExecutor::new(self)?),
            Design::Coords => Box::new(coords::CoordsAgent::new(self)?),
        })
    }

    /// A fingerprint of everything that decides the agent's behaviour: the configuration and
    /// its templates, and the sampling actually used (command-line overrides included).
    pub fn fingerprint(&self) -> String {
        let handle = |h: &ModelHandle| serde_json::json!([h.model.model(), h.sampling, h.extra]);
        let value = serde_json::json!([
            self.config.fingerprint(),
            handle(&self.models.main),
            self.models.grounding.as_ref().map(handle),
        ]);
        phonebench_model::request_key(&value)[..16].to_string()
    }

    /// The observation format its episodes must use (its element indexes refer to it).
    pub fn observation(&self) -> phonebench_observe::ObservationFormat {
        use phonebench_observe::ObservationFormat;
        let config = &self.config;
        let inner = match config.design {
            Design::Reflexion => config.option_str("inner").ok().flatten().unwrap_or("sphinx-react"),
            other => other.name(),
        };
        match inner {
            "sphinx-react" => {
                sphinx::mode_of(config).map(sphinx::Mode::observation).unwrap_or(config.observation)
            }
            "t3a" | "m3a" => ObservationFormat::AndroidWorld,
            _ => config.observation,
        }
    }

    /// A fresh agent for the episode named `episode` (its model calls are cached under it).
    pub fn build(&self, episode: &str) -> Box<dyn Agent> {
        let scoped = ModelAgentSpec {
            models: Models {
                main: self.models.main.scoped(episode),
                grounding: self.models.grounding.as_ref().map(|g| g.scoped(episode)),
            },
            ..self.clone()
        };
        match scoped.try_build() {
            Ok(agent) => agent,
            // `new` built one already with the same inputs, so this cannot fail; if it ever did,
            // the agent reports it as an infrastructure failure on its first turn.
            Err(e) => Box::new(Broken(e.to_string(), self.config.name.clone())),
        }
    }
}

/// Contexts that exercise every variable a design passes its templates (each SPHINX mode, lists
/// empty and full), so a misspelt name fails when the configuration loads, not mid-run.
fn sample_contexts() -> Vec<Value> {
    let tool = serde_json::json!({"name": "search", "description": "Search the web", "schema": "{}"});
    ["tree", "text", "image", "annotated_image"]
        .iter()
        .enumerate()
        .map(|(i, mode)| {
            let full = i % 2 == 0;
            let list = |s: &str| if full { vec![s.to_string()] } else { Vec::new() };
            serde_json::json!({
                "mode": mode, "observation": "[0] a View (text: OK) to click", "goal": "Turn on Wi-Fi",
                "previous_action": "None", "screen_width": 1080, "screen_height": 2400,
                "lessons": list("Open Settings first."), "skills": list("Open Settings"),
                "output": "click 0", "error": "no action", "history": list("Action selected: {}. Done."),
                "ui_elements": if full { "UI element 0: UIElement(text='OK')\n" } else { "" },
                "additional_guidelines": list("Stay in the app."), "before_elements": "", "after_elements": "",
                "action": "{\"action_type\": \"click\", \"index\": 0}", "reason": "tap OK",
                "trajectory": "1. click [0]", "trial": 1, "outcome": "failed", "previous_lessons": list("x"),
                "mcp_tools": if full { vec![tool.clone()] } else { Vec::new() }, "instruction": "click the OK button",
                "language": "English",
            })
        })
        .collect()
}

/// An agent whose construction failed: every turn is an infrastructure error.
struct Broken(String, String);

impl Agent for Broken {
    fn name(&self) -> &str {
        &self.1
    }

    fn act<'a>(
        &'a mut self,
        _input: &'a AgentInput,
    ) -> crate::BoxFuture<'a, Result<crate::AgentOutput, AgentError>> {
        let message = self.0.clone();
        Box::pin(async move { Err(AgentError(message)) })
    }
}

/// The screenshot of `input` as a PNG data URL, with a label for records.
pub fn screenshot_url(input: &AgentInput) -> Result<(String, String), AgentError> {
    let image = screen(input)?;
    let png = image.png().map_err(|e| AgentError(format!("screenshot: {e}")))?;
    let (w, h) = image.size();
    Ok((phonebench_model::data_url("image/png", &png), format!("screenshot step {} ({w}x{h})", input.step)))
}

/// The set-of-marks screenshot of `input` (numbered by its observation's index table) as a PNG
/// data URL, with a label.
pub fn marked_screenshot_url(input: &AgentInput, style: SomStyle) -> Result<(String, String), AgentError> {
    let image = screen(input)?;
    let png = image
        .marked_png(&input.tree, &input.observation.targets, style)
        .map_err(|e| AgentError(format!("set-of-marks screenshot: {e}")))?;
    let (w, h) = image.size();
    Ok((
        phonebench_model::data_url("image/png", &png),
        format!("set-of-marks ({}) step {} ({w}x{h})", style.name(), input.step),
    ))
}

fn screen(input: &AgentInput) -> Result<&ScreenImage, AgentError> {
    input
        .screen
        .as_ref()
        .ok_or_else(|| AgentError("this agent needs screenshots and the environment gave none".into()))
}

/// Screen size of the input (the screenshot's, else the tree's bounds).
pub fn screen_size(input: &AgentInput) -> (u32, u32) {
    match &input.screen {
        Some(image) => image.size(),
        None => {
            let b = input.tree.screen_bounds();
            (b.width().max(1) as u32, b.height().max(1) as u32)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phonebench_model::Completion;

    /// A model no test here calls.
    struct Unused;

    impl ChatModel for Unused {
        fn model(&self) -> &str {
            "unused"
        }

        fn complete<'a>(
            &'a self,
            _request: &'a ChatRequest,
        ) -> phonebench_model::BoxFuture<'a, Result<Completion, ModelError>> {
            Box::pin(async { Err(ModelError::Config("not called in this test".into())) })
        }
    }

    fn models() -> Models {
        Models { main: ModelHandle::new(Arc::new(Unused), &ModelSection::default()), grounding: None }
    }

    #[test]
    fn every_builtin_agent_builds_and_its_prompts_render() {
        for name in builtin::AGENTS {
            let config = AgentConfig::builtin(name).unwrap();
            let spec = ModelAgentSpec::new(config, models()).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(spec.build("t#0").name(), name);
        }
        // Every convention of the coordinate agent finds its prompts.
        for (convention, _) in phonebench_actions::coords::CoordConvention::PRESETS {
            let mut config = AgentConfig::builtin("coords").unwrap();
            config.set_option(&format!("convention={convention}")).unwrap();
            ModelAgentSpec::new(config, models()).unwrap_or_else(|e| panic!("{convention}: {e}"));
        }
    }

    fn with_prompt(source: &str) -> Result<ModelAgentSpec, ConfigError> {
        let mut config = AgentConfig::builtin("sphinx-react").unwrap();
        config.prompts.insert("action".into(), ("prompt.j2".into(), source.into()));
        ModelAgentSpec::new(config, models())
    }

    #[test]
    fn a_misspelt_variable_or_a_runaway_loop_fails_when_the_config_loads() {
        let e = with_prompt("Goal: {{ goall }}").unwrap_err();
        assert!(e.message.contains("prompt `action`") && e.message.contains("undefined"), "{e}");
        let e =
            with_prompt("{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}")
                .unwrap_err();
        assert!(e.message.contains("fuel"), "{e}");
        let e = with_prompt("{% if %}").unwrap_err();
        assert!(e.origin.contains("prompt.j2:1"), "{e}");
        assert!(with_prompt("{{ goal }} / {{ observation }}").is_ok());
    }

    #[test]
    fn clipped_text_says_how_much_was_cut() {
        assert_eq!(clip("short"), "short");
        let long = "é".repeat(MAX_ECHOED_CHARS + 5);
        let c = clip(&long);
        assert!(c.ends_with("… [5 more characters cut]"), "{}", &c[c.len() - 40..]);
        assert_eq!(c.chars().filter(|ch| *ch == 'é').count(), MAX_ECHOED_CHARS);
    }
}
