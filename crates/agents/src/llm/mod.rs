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

/// The templates of one configuration, compiled.
#[derive(Debug)]
pub struct Templates {
    env: Environment<'static>,
    origin: String,
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
        for (role, file, source) in sources {
            env.add_template_owned(role.to_string(), source.to_string()).map_err(|e| ConfigError {
                origin: format!("{file}{}", e.line().map(|l| format!(":{l}")).unwrap_or_default()),
                message: format!("template: {e}"),
            })?;
        }
        Ok(Templates { env, origin: origin.to_string() })
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
        ModelHandle { model, sampling: section.sampling(), extra: section.extra.clone() }
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
        request: ChatRequest,
    ) -> Result<(ChatResponse, CallRecord), AgentError> {
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
        let models = format!(
            "{}\n{:?}\n{:?}",
            self.config.fingerprint(),
            (self.models.main.model.model(), &self.models.main.sampling, &self.models.main.extra),
            self.models.grounding.as_ref().map(|g| (g.model.model(), &g.sampling, &g.extra)),
        );
        phonebench_model::request_key(&serde_json::Value::String(models))[..16].to_string()
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

    /// A fresh agent for one episode.
    pub fn build(&self) -> Box<dyn Agent> {
        match self.try_build() {
            Ok(agent) => agent,
            // `new` built one already with the same inputs, so this cannot fail; if it ever did,
            // the agent reports it as an infrastructure failure on its first turn.
            Err(e) => Box::new(Broken(e.to_string(), self.config.name.clone())),
        }
    }
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
