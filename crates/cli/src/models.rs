//! Model-related command-line pieces: the flags that point agents, judges and simulated users at
//! model servers, the response cache, `phonebench agents` and `phonebench mock-model`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use phonebench_agents::llm::judge::{JUDGE_TEMPLATE, Judge};
use phonebench_agents::llm::user::{DEFAULT_PERSONA, ModelUser, USER_TEMPLATE};
use phonebench_agents::llm::{AgentConfig, ModelAgentSpec, ModelHandle, ModelSection, Models, builtin};
use phonebench_model::mock::{MockServer, ScriptResponder};
use phonebench_model::{CacheMode, CachedModel, ChatModel, Endpoint, OpenAiClient, Price, ResponseCache};
use phonebench_runner::{AgentChoice, AgentKind};

/// How to reach model servers (`run`'s flags).
#[derive(clap::Args, Debug, Clone)]
pub struct ModelArgs {
    #[command(flatten)]
    pub endpoint: EndpointArgs,
    /// A model-driven agent's configuration file (TOML with prompt templates beside it); the
    /// built-in ones are named with --agent.
    #[arg(long)]
    pub agent_config: Option<PathBuf>,
    /// Set an option of the agent's configuration, e.g. `mode=text`, `trials=2`,
    /// `convention=ui-tars-1.5` (repeatable).
    #[arg(long = "agent-option", value_name = "KEY=VALUE")]
    pub agent_options: Vec<String>,
    /// The grounding model (planner-executor): name, base URL, API key variable. Default: the
    /// configuration's [grounding] section, else the main model.
    #[arg(long)]
    pub grounding_model: Option<String>,
    /// See --grounding-model.
    #[arg(long)]
    pub grounding_base_url: Option<String>,
    /// See --grounding-model.
    #[arg(long)]
    pub grounding_api_key_env: Option<String>,
    /// A model judge for tasks with `judge` checks (reported in its own column, never in SR).
    #[arg(long)]
    pub judge_model: Option<String>,
    /// The judge's base URL (default: --base-url).
    #[arg(long)]
    pub judge_base_url: Option<String>,
    /// The judge's API key variable (default: --api-key-env).
    #[arg(long)]
    pub judge_api_key_env: Option<String>,
    /// Who answers `ask_user`: the deterministic `keyword` user or a `model`.
    #[arg(long, value_enum, default_value_t = UserArg::Keyword)]
    pub user: UserArg,
    /// The simulated user's model (with --user model).
    #[arg(long)]
    pub user_model: Option<String>,
    /// The simulated user's base URL (default: --base-url).
    #[arg(long)]
    pub user_base_url: Option<String>,
    /// The simulated user's API key variable (default: --api-key-env).
    #[arg(long)]
    pub user_api_key_env: Option<String>,
    /// The simulated user's persona.
    #[arg(long)]
    pub user_persona: Option<String>,
}

/// How to reach one model server: the flags every command that calls a model shares (`run`'s
/// acting model, `probe`'s probed model).
#[derive(clap::Args, Debug, Clone)]
pub struct EndpointArgs {
    /// The model name sent to the server.
    #[arg(long, env = "PHONEBENCH_MODEL")]
    pub model: Option<String>,
    /// The OpenAI-compatible API base URL, e.g. http://127.0.0.1:8080/v1.
    #[arg(long, env = "PHONEBENCH_BASE_URL")]
    pub base_url: Option<String>,
    /// The environment variable holding the API key (e.g. OPENAI_API_KEY); none is sent without it.
    #[arg(long, env = "PHONEBENCH_API_KEY_ENV")]
    pub api_key_env: Option<String>,
    /// Override the acting model's temperature.
    #[arg(long)]
    pub temperature: Option<f64>,
    /// The acting model's price: USD per million prompt and completion tokens, `IN,OUT`
    /// (default: the built-in price table).
    #[arg(long)]
    pub price: Option<String>,
    /// Response cache: `read-write` (hits are free, misses are stored), `replay` (a miss is an
    /// error: how recorded sessions re-run without a server) or `off`. The cache lives in
    /// $PHONEBENCH_CACHE/responses.
    #[arg(long, default_value = "read-write")]
    pub cache: String,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 300)]
    pub model_timeout: u64,
    /// Retries after a failed request (429, 5xx, connection errors), with exponential backoff.
    #[arg(long, default_value_t = 4)]
    pub max_retries: u32,
    /// The first backoff wait in ms (doubling each retry).
    #[arg(long, default_value_t = 1000)]
    pub retry_base_ms: u64,
}

impl EndpointArgs {
    /// The response cache the flags name.
    pub fn cache(&self) -> Result<ResponseCache> {
        let mode = CacheMode::parse(&self.cache).map_err(anyhow::Error::msg).context("--cache")?;
        let dir = match cache_base() {
            Some(base) => base.join("responses"),
            None if mode == CacheMode::Off => PathBuf::from("."),
            None => bail!("no cache folder: set PHONEBENCH_CACHE (or HOME), or pass --cache off"),
        };
        Ok(ResponseCache::new(dir, mode))
    }

    /// A model behind the cache from a config section and the flags that override it.
    pub fn handle(
        &self,
        what: &str,
        section: &ModelSection,
        name: Option<&String>,
        base_url: Option<&String>,
        api_key_env: Option<&String>,
        cache: &ResponseCache,
    ) -> Result<ModelHandle> {
        let base_url = base_url.or(section.base_url.as_ref()).with_context(|| {
            format!("{what} needs a model server: pass --base-url URL (an OpenAI-compatible API, e.g. http://127.0.0.1:8080/v1)")
        })?;
        let model = name
            .or(section.name.as_ref())
            .with_context(|| format!("{what} needs a model name: pass --model NAME"))?;
        let mut endpoint = Endpoint::new(base_url.clone(), model.clone());
        endpoint.api_key_env = api_key_env.cloned().or_else(|| section.api_key_env.clone());
        endpoint.timeout_secs = section.timeout_secs.unwrap_or(self.model_timeout);
        endpoint.retry.max_retries = section.max_retries.unwrap_or(self.max_retries);
        endpoint.retry.base_delay_ms = self.retry_base_ms;
        endpoint.price = section.price;
        let client = OpenAiClient::new(endpoint).map_err(|e| anyhow::anyhow!("{what}: {e}"))?;
        let model: Arc<dyn ChatModel> = Arc::new(CachedModel::new(Arc::new(client), cache.clone()));
        Ok(ModelHandle::new(model, section))
    }
}

impl ModelArgs {
    /// The longest an agent turn may take with every model call in it timing out and being
    /// retried (four calls a turn at most: action, repair or summary, grounding, user), plus a
    /// minute: beyond it the turn is stuck, an infrastructure failure.
    pub fn turn_timeout(&self) -> std::time::Duration {
        let retries = u64::from(self.endpoint.max_retries);
        let per_call = (retries + 1) * self.endpoint.model_timeout.max(1) + retries * 30;
        std::time::Duration::from_secs(4 * per_call + 60)
    }
}

/// Who answers `ask_user`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserArg {
    /// Answers from the task's hidden facts by keywords (deterministic).
    Keyword,
    /// A model plays the user, knowing only the hidden facts.
    Model,
}

/// The cache folder: `$PHONEBENCH_CACHE`, else `$XDG_CACHE_HOME/phonebench`, else
/// `~/.cache/phonebench`.
pub fn cache_base() -> Option<PathBuf> {
    std::env::var_os("PHONEBENCH_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("phonebench")))
        .or_else(|| std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".cache/phonebench")))
}

/// Everything a run needs from the model flags.
pub struct ModelSetup {
    /// The agent.
    pub agent: AgentChoice,
    /// The judge, if asked for.
    pub judge: Option<Arc<Judge>>,
    /// The model user, if asked for.
    pub user: Option<Arc<ModelUser>>,
    /// The response cache every model call goes through.
    pub cache: ResponseCache,
}

impl ModelArgs {
    /// The agent's own settings with `--temperature` and `--price` applied (they are the acting
    /// model's; judges and simulated users keep theirs).
    fn agent_section(&self, section: &ModelSection) -> Result<ModelSection> {
        let mut section = section.clone();
        if let Some(t) = self.endpoint.temperature {
            section.temperature = Some(t);
        }
        if let Some(p) = &self.endpoint.price {
            section.price = Some(Price::parse(p).map_err(anyhow::Error::msg).context("--price")?);
        }
        Ok(section)
    }

    /// The agent named `agent` (built-in scripted or model-driven), the judge and the user.
    pub fn setup(&self, agent: &str) -> Result<ModelSetup> {
        let cache = self.endpoint.cache()?;
        let config = match (&self.agent_config, AgentKind::parse(agent)) {
            (Some(path), _) => Some(AgentConfig::load(path).map_err(anyhow::Error::msg)?),
            (None, Ok(_)) => None,
            (None, Err(_)) => Some(AgentConfig::builtin(agent).map_err(|e| {
                let scripted: Vec<&str> = AgentKind::ALL.iter().map(|(n, _)| *n).collect();
                anyhow::anyhow!(
                    "unknown agent `{agent}`: scripted agents are {}; model-driven agents are {} (or --agent-config FILE)\n({e})",
                    scripted.join(", "),
                    builtin::AGENTS.join(", ")
                )
            })?),
        };
        let agent = match config {
            None => AgentChoice::Builtin(AgentKind::parse(agent).map_err(anyhow::Error::msg)?),
            Some(mut config) => {
                for option in &self.agent_options {
                    config.set_option(option).map_err(anyhow::Error::msg)?;
                }
                let main = self.endpoint.handle(
                    &format!("agent `{}`", config.name),
                    &self.agent_section(&config.model)?,
                    self.endpoint.model.as_ref(),
                    self.endpoint.base_url.as_ref(),
                    self.endpoint.api_key_env.as_ref(),
                    &cache,
                )?;
                let grounding = match (&config.grounding, &self.grounding_model, &self.grounding_base_url) {
                    (None, None, None) => None,
                    (section, name, url) => {
                        let section = section.clone().unwrap_or_default();
                        // The grounding model keeps its own temperature; it is priced like the agent's
                        // only when it is the same model.
                        let section = match (&self.endpoint.price, name) {
                            (Some(_), None) => {
                                ModelSection { price: self.agent_section(&section)?.price, ..section }
                            }
                            _ => section,
                        };
                        Some(self.endpoint.handle(
                            "the grounding model",
                            &section,
                            name.as_ref().or(self.endpoint.model.as_ref()),
                            url.as_ref().or(self.endpoint.base_url.as_ref()),
                            self.grounding_api_key_env.as_ref().or(self.endpoint.api_key_env.as_ref()),
                            &cache,
                        )?)
                    }
                };
                let spec =
                    ModelAgentSpec::new(config, Models { main, grounding }).map_err(anyhow::Error::msg)?;
                AgentChoice::Model(Arc::new(spec))
            }
        };
        let judge = match &self.judge_model {
            None => None,
            Some(name) => {
                let handle = self.endpoint.handle(
                    "the judge",
                    &ModelSection { temperature: Some(0.0), ..ModelSection::default() },
                    Some(name),
                    self.judge_base_url.as_ref().or(self.endpoint.base_url.as_ref()),
                    self.judge_api_key_env.as_ref().or(self.endpoint.api_key_env.as_ref()),
                    &cache,
                )?;
                Some(Arc::new(Judge::new(handle, JUDGE_TEMPLATE).map_err(anyhow::Error::msg)?))
            }
        };
        let user = match self.user {
            UserArg::Keyword => None,
            UserArg::Model => {
                let name = self
                    .user_model
                    .as_ref()
                    .or(self.endpoint.model.as_ref())
                    .context("--user model needs --user-model NAME")?;
                // MobileWorld's user call: temperature 0, seed 42.
                let section =
                    ModelSection { temperature: Some(0.0), seed: Some(42), ..ModelSection::default() };
                let handle = self.endpoint.handle(
                    "the simulated user",
                    &section,
                    Some(name),
                    self.user_base_url.as_ref().or(self.endpoint.base_url.as_ref()),
                    self.user_api_key_env.as_ref().or(self.endpoint.api_key_env.as_ref()),
                    &cache,
                )?;
                let persona = self.user_persona.as_deref().unwrap_or(DEFAULT_PERSONA);
                Some(Arc::new(ModelUser::new(handle, USER_TEMPLATE, persona).map_err(anyhow::Error::msg)?))
            }
        };
        Ok(ModelSetup { agent, judge, user, cache })
    }
}

/// `phonebench agents`.
#[derive(clap::Args, Debug)]
pub struct AgentsArgs {
    /// Write this built-in agent's configuration and templates to --out, to edit and use with
    /// --agent-config.
    #[arg(long, requires = "out")]
    pub export: Option<String>,
    /// The folder to export into (created; existing files are not overwritten).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Lists the agents, or exports one.
pub fn agents(args: &AgentsArgs) -> Result<()> {
    if let (Some(name), Some(out)) = (&args.export, &args.out) {
        return export(name, out);
    }
    out!("scripted agents:")?;
    for (name, _) in AgentKind::ALL {
        out!("  {name}")?;
    }
    out!("model-driven agents (--model M --base-url URL):")?;
    for name in builtin::AGENTS {
        let config = AgentConfig::builtin(name).map_err(anyhow::Error::msg)?;
        out!("  {:<18} {}", name, config.description)?;
    }
    Ok(())
}

/// Writes a built-in agent's files into `out`; templates it shares with other built-ins
/// (`builtin:` paths) are copied too, keeping their sub-folders, so the copy is self-contained.
/// Nothing is written when any target exists.
fn export(name: &str, out: &Path) -> Result<()> {
    let config = AgentConfig::builtin(name).map_err(anyhow::Error::msg)?;
    let mut toml = builtin::file(&format!("{name}/agent.toml")).unwrap_or_default().to_string();
    let mut files = Vec::new();
    for (file, source) in config.prompts.values() {
        let local = match file.strip_prefix("builtin:") {
            Some(path) => {
                let local = path.strip_prefix(&format!("{name}/")).unwrap_or(path).to_string();
                toml = toml.replace(&format!("\"{file}\""), &format!("\"{local}\""));
                local
            }
            None => file.clone(),
        };
        files.push((local, source.clone()));
    }
    files.push(("agent.toml".to_string(), toml));
    if let Some((file, _)) = files.iter().find(|(file, _)| out.join(file).exists()) {
        bail!("{} exists; choose an empty --out folder", out.join(file).display());
    }
    for (file, text) in files {
        let path = out.join(&file);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    out!(
        "{}: edit the templates and run with --agent-config {}",
        out.display(),
        out.join("agent.toml").display()
    )?;
    Ok(())
}

/// `phonebench mock-model`.
#[derive(clap::Args, Debug)]
pub struct MockArgs {
    /// The script: TOML rules matched against each request (see the model crate's docs).
    #[arg(long)]
    pub script: PathBuf,
    /// Address to listen on (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub addr: SocketAddr,
    /// Append every request received to this file as JSON lines.
    #[arg(long)]
    pub log: Option<PathBuf>,
}

/// Serves the mock until the process is stopped; prints its base URL first.
pub fn mock(args: &MockArgs) -> Result<()> {
    let responder = ScriptResponder::load(&args.script).map_err(anyhow::Error::msg)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    rt.block_on(async {
        let server = MockServer::bind(args.addr, responder, args.log.as_deref())
            .await
            .with_context(|| format!("cannot listen on {}", args.addr))?;
        out!("{}", server.base_url())?;
        use std::io::Write as _;
        std::io::stdout().flush()?;
        tokio::signal::ctrl_c().await.context("waiting for Ctrl-C")?;
        server.stop().await;
        anyhow::Ok(())
    })
}
