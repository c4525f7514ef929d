//! Agent configurations: a TOML file naming the design, the model settings and the prompt
//! templates, which sit beside it as editable files.
//!
//! ```toml
//! name = "sphinx-react"
//! design = "sphinx-react"            # which loop runs (see `Design`)
//! description = "..."
//! observation = "sphinx-tree"        # the observation format episodes give this agent
//!
//! [model]                            # the acting model; --model/--base-url override
//! temperature = 0.0
//! max_tokens = 1024
//! # base_url, name, api_key_env, top_p, stop, seed, timeout_secs, max_retries, extra = {..}, price = {..}
//!
//! [grounding]                        # a second endpoint (planner-executor)
//!
//! [prompts]                          # role -> template file, relative to this file
//! action = "prompt.j2"
//!
//! [options]                          # design-specific settings
//! repair = true
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use phonebench_model::{Price, Sampling};
use phonebench_observe::ObservationFormat;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::builtin;

/// Which agent loop a configuration runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Design {
    /// SPHINX's ReAct prompt and action syntax, with output repair.
    SphinxReact,
    /// AndroidWorld's T3A: text elements, JSON actions, a summary per step.
    T3a,
    /// AndroidWorld's M3A: T3A plus the raw and set-of-marks screenshots.
    M3a,
    /// Reflexion: an inner design, a critic after each failed trial, lessons in later prompts.
    Reflexion,
    /// MobileWorld's planner (actions with described targets) + grounding model (points).
    PlannerExecutor,
    /// End-to-end coordinate models (Qwen-VL, UI-TARS, GUI-Owl, Doubao conventions).
    Coords,
}

impl Design {
    /// The name used in configs.
    pub fn name(self) -> &'static str {
        match self {
            Design::SphinxReact => "sphinx-react",
            Design::T3a => "t3a",
            Design::M3a => "m3a",
            Design::Reflexion => "reflexion",
            Design::PlannerExecutor => "planner-executor",
            Design::Coords => "coords",
        }
    }
}

/// One endpoint's settings as a config writes them; every field may be left to the command line.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    /// API base URL (`.../v1`).
    pub base_url: Option<String>,
    /// Model name.
    pub name: Option<String>,
    /// Environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// Temperature.
    pub temperature: Option<f64>,
    /// Nucleus sampling.
    pub top_p: Option<f64>,
    /// Most tokens to generate.
    pub max_tokens: Option<u32>,
    /// Stop sequences.
    #[serde(default)]
    pub stop: Vec<String>,
    /// Sampling seed.
    pub seed: Option<u64>,
    /// Per-request timeout in seconds.
    pub timeout_secs: Option<u64>,
    /// Retries after a failed attempt.
    pub max_retries: Option<u32>,
    /// Extra request body fields (e.g. llama.cpp `grammar`).
    #[serde(default)]
    pub extra: Map<String, Value>,
    /// Token prices (USD per million).
    pub price: Option<Price>,
}

impl ModelSection {
    /// The sampling parameters.
    pub fn sampling(&self) -> Sampling {
        Sampling {
            temperature: self.temperature,
            top_p: self.top_p,
            max_tokens: self.max_tokens,
            stop: self.stop.clone(),
            seed: self.seed,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    name: String,
    design: Design,
    #[serde(default)]
    description: String,
    observation: Option<String>,
    #[serde(default)]
    model: ModelSection,
    grounding: Option<ModelSection>,
    #[serde(default)]
    prompts: BTreeMap<String, String>,
    #[serde(default)]
    options: toml::Table,
}

/// A loaded agent configuration with its template sources.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// The agent's name (results are labelled with it).
    pub name: String,
    /// The loop it runs.
    pub design: Design,
    /// One line about it.
    pub description: String,
    /// The observation format its episodes use (its element indexes refer to this format).
    pub observation: ObservationFormat,
    /// The acting model.
    pub model: ModelSection,
    /// The grounding model (planner-executor).
    pub grounding: Option<ModelSection>,
    /// Template role → (file name, source).
    pub prompts: BTreeMap<String, (String, String)>,
    /// Design-specific options.
    pub options: toml::Table,
    /// Where it was read from (`builtin:NAME` for built-ins).
    pub origin: String,
}

/// Why a configuration could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {message}")]
pub struct ConfigError {
    /// The file (with `:line` when known).
    pub origin: String,
    /// What is wrong.
    pub message: String,
}

/// A template path starting with this prefix names an embedded file (`builtin:sphinx-react/prompt.j2`).
pub const BUILTIN_PREFIX: &str = "builtin:";

fn observation_format(name: &str) -> Option<ObservationFormat> {
    ObservationFormat::ALL.into_iter().find(|f| f.name() == name)
}

impl AgentConfig {
    /// Parses a configuration; `read` fetches each template by its file name (relative to the
    /// config).
    pub fn parse(
        text: &str,
        origin: &str,
        read: impl Fn(&str) -> Result<String, String>,
    ) -> Result<AgentConfig, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(1, |s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            ConfigError { origin: format!("{origin}:{line}"), message: e.message().to_string() }
        })?;
        let err = |message: String| ConfigError { origin: origin.to_string(), message };
        let observation = match raw.observation.as_deref() {
            None => ObservationFormat::SphinxTree,
            Some(name) => observation_format(name).ok_or_else(|| {
                let names: Vec<&str> = ObservationFormat::ALL.iter().map(|f| f.name()).collect();
                err(format!("unknown observation format `{name}` (one of {})", names.join(", ")))
            })?,
        };
        let mut prompts = BTreeMap::new();
        for (role, file) in raw.prompts {
            let source = read(&file).map_err(|e| err(format!("prompt `{role}` ({file}): {e}")))?;
            prompts.insert(role, (file, source));
        }
        Ok(AgentConfig {
            name: raw.name,
            design: raw.design,
            description: raw.description,
            observation,
            model: raw.model,
            grounding: raw.grounding,
            prompts,
            options: raw.options,
            origin: origin.to_string(),
        })
    }

    /// Reads a configuration file; templates are read from beside it. A template path may not
    /// leave the config's folder (configs are shared; they must not read other files).
    pub fn load(path: &Path) -> Result<AgentConfig, ConfigError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError { origin: origin.clone(), message: e.to_string() })?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
        let root =
            dir.canonicalize().map_err(|e| ConfigError { origin: origin.clone(), message: e.to_string() })?;
        AgentConfig::parse(&text, &origin, |file| {
            if let Some(path) = file.strip_prefix(BUILTIN_PREFIX) {
                return builtin::file(path)
                    .map(str::to_string)
                    .ok_or_else(|| format!("no built-in template `{path}`"));
            }
            let full = dir.join(file).canonicalize().map_err(|e| e.to_string())?;
            if !full.starts_with(&root) {
                return Err(format!("`{file}` is outside the config's folder"));
            }
            std::fs::read_to_string(&full).map_err(|e| e.to_string())
        })
    }

    /// A built-in configuration by name.
    pub fn builtin(name: &str) -> Result<AgentConfig, ConfigError> {
        let origin = format!("builtin:{name}/agent.toml");
        let Some(text) =
            builtin::AGENTS.contains(&name).then(|| builtin::file(&format!("{name}/agent.toml"))).flatten()
        else {
            return Err(ConfigError {
                origin,
                message: format!("no built-in agent `{name}` (built-in: {})", builtin::AGENTS.join(", ")),
            });
        };
        AgentConfig::parse(text, &origin, |file| {
            let path =
                file.strip_prefix(BUILTIN_PREFIX).map_or_else(|| format!("{name}/{file}"), str::to_string);
            builtin::file(&path).map(str::to_string).ok_or_else(|| format!("no built-in template `{path}`"))
        })
    }

    /// The template source for `role`, or an error naming the missing role.
    pub fn prompt(&self, role: &str) -> Result<&str, ConfigError> {
        self.prompts.get(role).map(|(_, s)| s.as_str()).ok_or_else(|| ConfigError {
            origin: self.origin.clone(),
            message: format!("the `{}` design needs a `{role}` template in [prompts]", self.design.name()),
        })
    }

    /// A string option.
    pub fn option_str(&self, key: &str) -> Result<Option<&str>, ConfigError> {
        match self.options.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.option_error(key, "a string", other)),
        }
    }

    /// A boolean option.
    pub fn option_bool(&self, key: &str) -> Result<Option<bool>, ConfigError> {
        match self.options.get(key) {
            None => Ok(None),
            Some(toml::Value::Boolean(b)) => Ok(Some(*b)),
            Some(other) => Err(self.option_error(key, "true or false", other)),
        }
    }

    /// A non-negative integer option.
    pub fn option_usize(&self, key: &str) -> Result<Option<usize>, ConfigError> {
        match self.options.get(key) {
            None => Ok(None),
            Some(toml::Value::Integer(i)) if *i >= 0 => Ok(Some(*i as usize)),
            Some(other) => Err(self.option_error(key, "a non-negative integer", other)),
        }
    }

    /// A list-of-strings option.
    pub fn option_strings(&self, key: &str) -> Result<Vec<String>, ConfigError> {
        match self.options.get(key) {
            None => Ok(Vec::new()),
            Some(toml::Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| self.option_error(key, "a list of strings", v))
                })
                .collect(),
            Some(other) => Err(self.option_error(key, "a list of strings", other)),
        }
    }

    fn option_error(&self, key: &str, want: &str, got: &toml::Value) -> ConfigError {
        ConfigError {
            origin: self.origin.clone(),
            message: format!("option `{key}` must be {want}, not `{got:?}`"),
        }
    }

    /// Sets an option from `key=value` text (the command line's `--agent-option`): the value is
    /// read as a TOML value (`3`, `true`, `"x"`, `["a"]`) and otherwise taken as a string.
    pub fn set_option(&mut self, assignment: &str) -> Result<(), ConfigError> {
        let (key, value) = assignment.split_once('=').ok_or_else(|| ConfigError {
            origin: "--agent-option".into(),
            message: format!("`{assignment}`: expected KEY=VALUE"),
        })?;
        let value = value.trim();
        let parsed = toml::from_str::<toml::Table>(&format!("v = {value}"))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(value.to_string()));
        self.options.insert(key.trim().to_string(), parsed);
        Ok(())
    }

    /// A fingerprint of everything that decides the agent's behaviour (config and templates):
    /// resuming a run with edited prompts is refused. Canonical JSON, so it does not change with
    /// how types print.
    pub fn fingerprint(&self) -> String {
        let value = serde_json::json!({
            "name": self.name,
            "design": self.design.name(),
            "observation": self.observation.name(),
            "model": self.model,
            "grounding": self.grounding,
            "options": self.options,
            "prompts": self.prompts,
        });
        phonebench_model::request_key(&value)[..16].to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_file_and_line() {
        let e = AgentConfig::parse("name = \"x\"\ndesign = \"nope\"\n", "a.toml", |_| Ok(String::new()))
            .unwrap_err();
        assert_eq!(e.origin, "a.toml:2", "{e}");
        let e = AgentConfig::parse(
            "name = \"x\"\ndesign = \"t3a\"\nobservation = \"pixels\"\n",
            "a.toml",
            |_| Ok(String::new()),
        )
        .unwrap_err();
        assert!(e.message.contains("unknown observation format"), "{e}");
        let e = AgentConfig::parse(
            "name = \"x\"\ndesign = \"t3a\"\n[prompts]\naction = \"missing.j2\"\n",
            "a.toml",
            |f| Err(format!("no {f}")),
        )
        .unwrap_err();
        assert!(e.message.contains("missing.j2"), "{e}");
        let e =
            AgentConfig::parse("name = \"x\"\ndesign = \"t3a\"\n[model]\ntemprature = 1\n", "a.toml", |_| {
                Ok(String::new())
            })
            .unwrap_err();
        assert!(e.message.contains("temprature"), "{e}");
    }

    #[test]
    fn options_are_typed_and_settable() {
        let mut c = AgentConfig::parse(
            "name = \"x\"\ndesign = \"reflexion\"\n[options]\ntrials = 3\n",
            "a.toml",
            |_| Ok(String::new()),
        )
        .unwrap();
        assert_eq!(c.option_usize("trials").unwrap(), Some(3));
        assert!(c.option_bool("trials").is_err());
        c.set_option("trials=5").unwrap();
        c.set_option("convention=ui-tars-1.5").unwrap();
        c.set_option("repair = false").unwrap();
        assert_eq!(c.option_usize("trials").unwrap(), Some(5));
        assert_eq!(c.option_str("convention").unwrap(), Some("ui-tars-1.5"));
        assert_eq!(c.option_bool("repair").unwrap(), Some(false));
        assert!(c.set_option("novalue").is_err());
        let before = c.fingerprint();
        c.set_option("trials=6").unwrap();
        assert_ne!(before, c.fingerprint());
    }

    #[test]
    fn every_builtin_loads() {
        for name in builtin::AGENTS {
            let c = AgentConfig::builtin(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(c.name, name);
        }
        assert!(AgentConfig::builtin("gpt4").unwrap_err().message.contains("sphinx-react"));
    }
}
