//! The OpenAI chat-completions client: one endpoint (base URL, model, API key), timeouts,
//! retries with exponential backoff, usage, latency and cost.

use std::sync::Once;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::price::Price;
use crate::types::{ChatRequest, ChatResponse, Completion};
use crate::{BoxFuture, ChatModel, ModelError, truncate};

/// When and how often a failed call is tried again.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryPolicy {
    /// Attempts after the first one.
    pub max_retries: u32,
    /// The first wait in ms; each later wait doubles it.
    pub base_delay_ms: u64,
    /// The longest wait in ms (also caps a server's `Retry-After`).
    pub max_delay_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_retries: 4, base_delay_ms: 1_000, max_delay_ms: 30_000 }
    }
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0-based): `base × 2^retry`, capped.
    pub fn delay(&self, retry: u32) -> Duration {
        let ms = self.base_delay_ms.saturating_mul(1u64 << retry.min(30));
        Duration::from_millis(ms.min(self.max_delay_ms))
    }
}

/// One model behind an OpenAI-compatible server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Endpoint {
    /// The API base, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`; requests go
    /// to `{base_url}/chat/completions`.
    pub base_url: String,
    /// The model name sent in every request.
    pub model: String,
    /// The environment variable holding the API key (sent as `Authorization: Bearer`), if any.
    pub api_key_env: Option<String>,
    /// Per-request timeout in seconds (the whole response, generation included).
    pub timeout_secs: u64,
    /// Retries.
    pub retry: RetryPolicy,
    /// The price of its tokens; `None` looks the model up in the built-in table.
    pub price: Option<Price>,
}

impl Endpoint {
    /// An endpoint with default timeout and retries.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Endpoint {
        Endpoint {
            base_url: base_url.into(),
            model: model.into(),
            api_key_env: None,
            timeout_secs: 300,
            retry: RetryPolicy::default(),
            price: None,
        }
    }

    /// `{base_url}/chat/completions`.
    pub fn completions_url(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim_end_matches('/'))
    }
}

/// Installs rustls' `ring` crypto provider for the process (once). reqwest is built without a
/// default provider (no aws-lc C build), so this must run before any HTTPS client exists.
pub fn install_crypto_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Err means another provider is already installed: that one serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A [`ChatModel`] over HTTP.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    http: reqwest::Client,
    endpoint: Endpoint,
    url: String,
    api_key: Option<String>,
    price: Option<Price>,
}

impl OpenAiClient {
    /// A client for `endpoint`. Fails when the base URL is not http(s) or the API key variable is
    /// named but unset.
    pub fn new(endpoint: Endpoint) -> Result<OpenAiClient, ModelError> {
        install_crypto_provider();
        let url = endpoint.completions_url();
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(ModelError::Config(format!(
                "base URL `{}` must start with http:// or https:// (e.g. http://127.0.0.1:8080/v1)",
                endpoint.base_url
            )));
        }
        if endpoint.model.trim().is_empty() {
            return Err(ModelError::Config(format!("no model name for {}", endpoint.base_url)));
        }
        let api_key = match &endpoint.api_key_env {
            None => None,
            Some(var) => match std::env::var(var) {
                Ok(key) if !key.trim().is_empty() => Some(key.trim().to_string()),
                _ => {
                    return Err(ModelError::Config(format!(
                        "the API key variable `{var}` is not set (export it, or drop --api-key-env for servers without keys)"
                    )));
                }
            },
        };
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(endpoint.timeout_secs.max(1)))
            .build()
            .map_err(|e| ModelError::Config(format!("cannot build the HTTP client: {e}")))?;
        let price = endpoint.price.or_else(|| Price::lookup(&endpoint.model));
        Ok(OpenAiClient { http, url, api_key, price, endpoint })
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    async fn attempt(&self, body: &Value) -> Result<ChatResponse, Attempt> {
        let mut request = self.http.post(&self.url).json(body);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => return Err(Attempt::Retry(Failure::Timeout, None)),
            Err(e) => return Err(Attempt::Retry(Failure::Unreachable(error_chain(&e)), None)),
        };
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let mut response = response;
        let mut bytes = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if bytes.len() + chunk.len() > MAX_RESPONSE_BYTES {
                        let failure = Failure::Garbage(format!(
                            "the response is larger than {} MiB",
                            MAX_RESPONSE_BYTES >> 20
                        ));
                        return Err(Attempt::Retry(failure, None));
                    }
                    bytes.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) if e.is_timeout() => return Err(Attempt::Retry(Failure::Timeout, None)),
                Err(e) => return Err(Attempt::Retry(Failure::Unreachable(error_chain(&e)), None)),
            }
        }
        // Invalid UTF-8 is the model's text gone wrong, not the server's: read it lossily.
        let text = String::from_utf8_lossy(&bytes);
        if !status.is_success() {
            let failure = Failure::Status(status.as_u16(), truncate(&text, 500));
            let transient = status.as_u16() == 429 || status.as_u16() == 408 || status.is_server_error();
            return Err(if transient {
                Attempt::Retry(failure, retry_after)
            } else {
                Attempt::Fatal(failure)
            });
        }
        // A lone UTF-16 surrogate escape (`\ud800`) in the model's text is the model's problem:
        // it becomes U+FFFD instead of failing the whole body.
        let body: Value = serde_json::from_str(&text).or_else(|e| {
            serde_json::from_str(&repair_surrogates(&text)).map_err(|_| {
                Attempt::Retry(Failure::Garbage(format!("not JSON ({e}): {}", truncate(&text, 200))), None)
            })
        })?;
        ChatResponse::from_body(&body).map_err(|m| Attempt::Retry(Failure::Garbage(m), None))
    }
}

/// The largest response body read (a larger one is a misbehaving server).
pub const MAX_RESPONSE_BYTES: usize = 64 << 20;

/// JSON text with every `\uXXXX` escape of a lone UTF-16 surrogate replaced by `\ufffd`
/// (serde_json, rightly, rejects them; some servers emit them when a model's tokens split a
/// character).
pub fn repair_surrogates(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let escape_at = |i: usize| -> Option<u32> {
        if chars.get(i) == Some(&'\\') && chars.get(i + 1) == Some(&'u') {
            let hex: String = chars.get(i + 2..i + 6)?.iter().collect();
            u32::from_str_radix(&hex, 16).ok()
        } else {
            None
        }
    };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '\\' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        match escape_at(i) {
            Some(0xD800..=0xDBFF) => match escape_at(i + 6) {
                Some(0xDC00..=0xDFFF) => {
                    out.extend(&chars[i..i + 12]);
                    i += 12;
                }
                _ => {
                    out.push_str("\\ufffd");
                    i += 6;
                }
            },
            Some(0xDC00..=0xDFFF) => {
                out.push_str("\\ufffd");
                i += 6;
            }
            // Any other escape (including `\\`) is copied whole, so `\\u` stays text.
            _ => {
                out.extend(chars.get(i..(i + 2).min(chars.len())).unwrap_or_default());
                i += 2;
            }
        }
    }
    out
}

/// Why one HTTP attempt failed.
enum Failure {
    Unreachable(String),
    Timeout,
    Status(u16, String),
    Garbage(String),
}

enum Attempt {
    /// Worth trying again (after the server's `Retry-After`, if it sent one).
    Retry(Failure, Option<Duration>),
    /// Trying again would give the same answer (400, 401, 404, ...).
    Fatal(Failure),
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

impl ChatModel for OpenAiClient {
    fn model(&self) -> &str {
        &self.endpoint.model
    }

    fn price(&self) -> Option<Price> {
        self.price
    }

    fn cache_namespace(&self) -> String {
        self.endpoint.base_url.trim_end_matches('/').to_string()
    }

    fn complete<'a>(&'a self, request: &'a ChatRequest) -> BoxFuture<'a, Result<Completion, ModelError>> {
        Box::pin(async move {
            let body = request.to_body(&self.endpoint.model);
            let started = Instant::now();
            let policy = self.endpoint.retry;
            let mut attempts = 0;
            loop {
                attempts += 1;
                let failure = match self.attempt(&body).await {
                    Ok(response) => {
                        let cost_usd = self.price.map(|p| p.cost(response.usage));
                        return Ok(Completion {
                            response,
                            cached: false,
                            latency_ms: started.elapsed().as_millis() as u64,
                            attempts,
                            cost_usd,
                        });
                    }
                    Err(Attempt::Fatal(f)) => f,
                    Err(Attempt::Retry(f, retry_after)) if attempts <= policy.max_retries => {
                        let wait = policy.delay(attempts - 1);
                        let wait =
                            retry_after.map_or(wait, |r| r.min(Duration::from_millis(policy.max_delay_ms)));
                        drop(f);
                        tokio::time::sleep(wait).await;
                        continue;
                    }
                    Err(Attempt::Retry(f, _)) => f,
                };
                let url = self.url.clone();
                return Err(match failure {
                    Failure::Unreachable(message) => ModelError::Unreachable { url, message, attempts },
                    Failure::Timeout => {
                        ModelError::Timeout { url, secs: self.endpoint.timeout_secs, attempts }
                    }
                    Failure::Status(status, body) => {
                        let hint = if status == 404 {
                            " (is the base URL right? it usually ends in /v1)"
                        } else {
                            ""
                        };
                        ModelError::Status { url, status, body: format!("{body}{hint}"), attempts }
                    }
                    Failure::Garbage(message) => ModelError::BadResponse { url, message, attempts },
                });
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let p = RetryPolicy { max_retries: 5, base_delay_ms: 100, max_delay_ms: 500 };
        let waits: Vec<u128> = (0..5).map(|r| p.delay(r).as_millis()).collect();
        assert_eq!(waits, [100, 200, 400, 500, 500]);
        assert_eq!(p.delay(200).as_millis(), 500, "no overflow for large retry numbers");
    }

    #[test]
    fn bad_configuration_is_a_clear_error() {
        let e = OpenAiClient::new(Endpoint::new("localhost:8080/v1", "m")).unwrap_err();
        assert!(e.to_string().contains("http://"), "{e}");
        let mut ep = Endpoint::new("http://127.0.0.1:1/v1", "m");
        ep.api_key_env = Some("PHONEBENCH_TEST_SURELY_UNSET_KEY".into());
        let e = OpenAiClient::new(ep).unwrap_err();
        assert!(e.to_string().contains("PHONEBENCH_TEST_SURELY_UNSET_KEY"), "{e}");
        assert!(OpenAiClient::new(Endpoint::new("http://127.0.0.1:1/v1", " ")).is_err());
    }

    #[test]
    fn lone_surrogates_are_replaced_and_pairs_kept() {
        let fixed = repair_surrogates(r#"{"a": "x\ud800y \ud83d\ude00 \udc00 \\ud800 \n"}"#);
        assert_eq!(fixed, r#"{"a": "x\ufffdy \ud83d\ude00 \ufffd \\ud800 \n"}"#);
        let v: Value = serde_json::from_str(&fixed).unwrap();
        assert_eq!(v["a"], "x\u{FFFD}y \u{1F600} \u{FFFD} \\ud800 \n");
        assert_eq!(repair_surrogates("tail \\"), "tail \\");
    }

    #[test]
    fn completions_url_joins_without_double_slashes() {
        assert_eq!(Endpoint::new("http://h/v1/", "m").completions_url(), "http://h/v1/chat/completions");
        assert_eq!(Endpoint::new("http://h/v1", "m").completions_url(), "http://h/v1/chat/completions");
    }
}
