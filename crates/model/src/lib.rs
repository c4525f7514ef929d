//! Model servers: how agents, judges and simulated users talk to language models.
//!
//! - [`ChatModel`]: the one interface — a [`ChatRequest`] in, a [`Completion`] out, or a
//!   [`ModelError`], which is always an *infrastructure* failure (a server down, answering
//!   garbage, or a replay cache without the answer), never an agent's failure.
//! - [`OpenAiClient`]: the OpenAI chat-completions API over `reqwest` (rustls + ring), for any
//!   compatible server (OpenAI, vLLM, llama.cpp, Ollama, ...): API key from a named environment
//!   variable, timeouts, retries with exponential backoff on 429/5xx/connection errors, token
//!   usage, latency, and cost from [`Price`].
//! - [`CachedModel`] + [`ResponseCache`]: requests hashed canonically; a hit costs nothing and
//!   returns the stored response, so re-running an experiment is free and byte-identical.
//! - [`mock`]: an OpenAI-compatible server (axum) that answers from a script or a function, for
//!   tests and dry runs.
//! - [`CallRecord`]: what one call looked like, for trajectories and reports.
//!
//! This crate knows HTTP and nothing about phones, tasks or agents.

mod cache;
mod client;
pub mod mock;
mod price;
mod types;

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use base64::Engine as _;
use serde::{Deserialize, Serialize};

pub use cache::{CacheMode, CachedModel, ResponseCache, cache_key, canonical_json, request_key};
pub use client::{Endpoint, OpenAiClient, RetryPolicy, install_crypto_provider};
pub use price::Price;
pub use types::{ChatRequest, ChatResponse, Completion, Message, Part, Role, Sampling, TokenUsage, ToolCall};

/// A boxed future (models are used as trait objects).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A language model that completes chats.
pub trait ChatModel: Send + Sync {
    /// The model name (as sent to the server).
    fn model(&self) -> &str;

    /// The price of its tokens, if known.
    fn price(&self) -> Option<Price> {
        None
    }

    /// What, besides the request, decides the answer (the server's base URL for HTTP models):
    /// part of the response-cache key, so two servers serving different weights under one model
    /// name never share answers.
    fn cache_namespace(&self) -> String {
        self.model().to_string()
    }

    /// Completes `request`.
    fn complete<'a>(&'a self, request: &'a ChatRequest) -> BoxFuture<'a, Result<Completion, ModelError>>;
}

/// Why a call failed. Every variant is an infrastructure failure: the episode it happened in is
/// reported apart and retried on `--resume`, never scored as the agent's failure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// The configuration is unusable (bad URL, API key variable unset).
    #[error("model configuration: {0}")]
    Config(String),
    /// No connection could be made or it broke.
    #[error("model server {url} unreachable after {attempts} attempts: {message}")]
    Unreachable {
        /// The URL called.
        url: String,
        /// What failed.
        message: String,
        /// Attempts made.
        attempts: u32,
    },
    /// The server did not answer in time.
    #[error("model server {url} did not answer within {secs} s ({attempts} attempts)")]
    Timeout {
        /// The URL called.
        url: String,
        /// The timeout.
        secs: u64,
        /// Attempts made.
        attempts: u32,
    },
    /// The server answered with an HTTP error.
    #[error("model server {url} answered HTTP {status} ({attempts} attempts): {body}")]
    Status {
        /// The URL called.
        url: String,
        /// The status code.
        status: u16,
        /// The start of the body.
        body: String,
        /// Attempts made.
        attempts: u32,
    },
    /// The server answered something that is not a chat completion.
    #[error("model server {url} answered garbage ({attempts} attempts): {message}")]
    BadResponse {
        /// The URL called.
        url: String,
        /// What was wrong.
        message: String,
        /// Attempts made.
        attempts: u32,
    },
    /// Replay-only cache without this request.
    #[error(
        "replay-only cache has no response for this request to `{model}` (key {key}); run once with --cache read-write against a live server to record it"
    )]
    CacheMiss {
        /// The request's key.
        key: String,
        /// The model.
        model: String,
    },
    /// The cache folder could not be read or written.
    #[error("response cache {path}: {message}")]
    Cache {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
}

/// One message of a recorded prompt: its text, and labels of its images (the pixels are stored
/// as screenshots, not in every record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// The text parts joined by newlines.
    pub text: String,
    /// One label per image, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
}

/// One model call as recorded in a step: what was asked, what came back, what it cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// What the call was for: `action`, `summary`, `repair`, `critic`, `grounding`, `judge`,
    /// `user`.
    pub purpose: String,
    /// The model.
    pub model: String,
    /// The prompt.
    pub prompt: Vec<PromptMessage>,
    /// The answer's text.
    pub response: String,
    /// Separate reasoning text, if the server returned any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Tool calls in the answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// Tokens as the server reported them (the stored ones for a cache hit).
    pub usage: TokenUsage,
    /// Answered from the cache.
    pub cached: bool,
    /// Wall time in ms.
    pub latency_ms: u64,
    /// Price of the tokens in USD, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl CallRecord {
    /// The record of `request` answered by `completion`.
    pub fn new(purpose: &str, model: &str, request: &ChatRequest, completion: &Completion) -> CallRecord {
        CallRecord {
            purpose: purpose.to_string(),
            model: model.to_string(),
            prompt: request
                .messages
                .iter()
                .map(|m| PromptMessage {
                    role: m.role.name().to_string(),
                    text: m.text_content(),
                    images: m
                        .content
                        .iter()
                        .filter_map(|p| match p {
                            Part::Image { label, .. } => Some(label.clone()),
                            Part::Text(_) => None,
                        })
                        .collect(),
                })
                .collect(),
            response: completion.response.content.clone(),
            reasoning: completion.response.reasoning.clone(),
            tool_calls: completion.response.tool_calls.clone(),
            usage: completion.response.usage,
            cached: completion.cached,
            latency_ms: completion.latency_ms,
            cost_usd: completion.cost_usd,
        }
    }
}

/// `data:{mime};base64,...` for image bytes.
pub fn data_url(mime: &str, bytes: &[u8]) -> String {
    format!("data:{mime};base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// The bytes and MIME type of a base64 `data:` URL; `None` when it is not one.
pub fn decode_data_url(url: &str) -> Option<(String, Vec<u8>)> {
    let rest = url.strip_prefix("data:")?;
    let (meta, data) = rest.split_once(',')?;
    let mime = meta.strip_suffix(";base64")?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(data.trim()).ok()?;
    Some((mime.to_string(), bytes))
}

/// `text` cut to at most `max` characters (on a character boundary), with `…` when cut.
pub fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_urls_round_trip() {
        let url = data_url("image/png", &[0x89, b'P', b'N', b'G', 0, 255]);
        assert!(url.starts_with("data:image/png;base64,"));
        assert_eq!(decode_data_url(&url), Some(("image/png".into(), vec![0x89, b'P', b'N', b'G', 0, 255])));
        assert_eq!(decode_data_url("http://x/y.png"), None);
        assert_eq!(decode_data_url("data:image/png,notbase64"), None);
    }

    #[test]
    fn truncation_respects_characters() {
        assert_eq!(truncate("héllo", 2), "hé…");
        assert_eq!(truncate("hé", 2), "hé");
    }
}
