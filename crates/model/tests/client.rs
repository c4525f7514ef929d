//! The HTTP client against the mock server: answers, usage, retries and backoff, the error kinds
//! (all infrastructure), the cache modes.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use phonebench_model::mock::{MockReply, MockServer, last_user_text};
use phonebench_model::{
    CacheMode, CachedModel, ChatModel, ChatRequest, ChatResponse, Endpoint, Message, ModelError,
    OpenAiClient, Price, ResponseCache, RetryPolicy, Sampling, TokenUsage,
};

fn endpoint(url: &str) -> Endpoint {
    let mut e = Endpoint::new(url, "test-model");
    e.retry = RetryPolicy { max_retries: 3, base_delay_ms: 20, max_delay_ms: 100 };
    e.timeout_secs = 5;
    e
}

fn request(text: &str) -> ChatRequest {
    ChatRequest::new(vec![Message::user(text)], Sampling { temperature: Some(0.0), ..Sampling::default() })
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-model-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[tokio::test]
async fn answers_with_usage_cost_and_the_request_on_the_wire() {
    let server = MockServer::start(|req: &serde_json::Value| {
        MockReply::Message(ChatResponse {
            content: format!("echo: {}", last_user_text(req)),
            reasoning: Some("because".into()),
            usage: TokenUsage { prompt_tokens: 1000, completion_tokens: 10 },
            ..ChatResponse::default()
        })
    })
    .await
    .unwrap();
    let mut ep = endpoint(&server.base_url());
    ep.price = Some(Price { input: 1.0, output: 2.0 });
    let client = OpenAiClient::new(ep).unwrap();
    let mut req = request("hello");
    req.extra.insert("grammar".into(), serde_json::json!("root ::= \"a\""));
    let c = client.complete(&req).await.unwrap();
    assert_eq!(c.response.content, "echo: hello");
    assert_eq!(c.response.reasoning.as_deref(), Some("because"));
    assert_eq!(c.response.usage, TokenUsage { prompt_tokens: 1000, completion_tokens: 10 });
    assert!((c.cost_usd.unwrap() - 0.00102).abs() < 1e-12);
    assert_eq!((c.cached, c.attempts), (false, 1));
    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["model"], "test-model");
    assert_eq!(sent[0]["temperature"], 0.0);
    assert_eq!(sent[0]["grammar"], "root ::= \"a\"", "extra body fields pass through");
}

#[tokio::test]
async fn retries_429_and_5xx_then_succeeds() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let server = MockServer::start(move |_: &serde_json::Value| match seen.fetch_add(1, Ordering::SeqCst) {
        0 => MockReply::Status { code: 429, body: "slow down".into(), retry_after: None },
        1 => MockReply::Status { code: 503, body: "overloaded".into(), retry_after: None },
        2 => MockReply::Raw("<html>proxy error</html>".into()),
        _ => MockReply::text("ok"),
    })
    .await
    .unwrap();
    let client = OpenAiClient::new(endpoint(&server.base_url())).unwrap();
    let started = Instant::now();
    let c = client.complete(&request("x")).await.unwrap();
    assert_eq!(c.response.content, "ok");
    assert_eq!(c.attempts, 4);
    // Backoff 20 + 40 + 80 ms happened.
    assert!(started.elapsed() >= Duration::from_millis(140), "{:?}", started.elapsed());
}

#[tokio::test]
async fn persistent_failures_become_infrastructure_errors() {
    let server = MockServer::start(|req: &serde_json::Value| match last_user_text(req).as_str() {
        "500" => MockReply::Status { code: 500, body: "boom".into(), retry_after: None },
        "400" => MockReply::Status { code: 400, body: "context too long".into(), retry_after: None },
        "garbage" => MockReply::Raw("{\"not\": \"a completion\"}".into()),
        _ => MockReply::Delay { ms: 3_000, then: Box::new(MockReply::text("late")) },
    })
    .await
    .unwrap();
    let client = OpenAiClient::new(endpoint(&server.base_url())).unwrap();
    match client.complete(&request("500")).await.unwrap_err() {
        ModelError::Status { status: 500, attempts: 4, .. } => {}
        other => panic!("{other:?}"),
    }
    // A client error is not retried: the same request would fail the same way.
    match client.complete(&request("400")).await.unwrap_err() {
        ModelError::Status { status: 400, attempts: 1, body, .. } => {
            assert!(body.contains("context too long"))
        }
        other => panic!("{other:?}"),
    }
    match client.complete(&request("garbage")).await.unwrap_err() {
        ModelError::BadResponse { message, attempts: 4, .. } => {
            assert!(message.contains("choices"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    let mut slow = endpoint(&server.base_url());
    slow.timeout_secs = 1;
    slow.retry.max_retries = 0;
    match OpenAiClient::new(slow).unwrap().complete(&request("slow")).await.unwrap_err() {
        ModelError::Timeout { attempts: 1, .. } => {}
        other => panic!("{other:?}"),
    }
    // Nobody listening.
    let url = server.base_url();
    server.stop().await;
    match OpenAiClient::new(endpoint(&url)).unwrap().complete(&request("x")).await.unwrap_err() {
        ModelError::Unreachable { attempts: 4, .. } => {}
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn retry_after_is_honoured_but_capped() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let server = MockServer::start(move |_: &serde_json::Value| {
        if seen.fetch_add(1, Ordering::SeqCst) == 0 {
            MockReply::Status { code: 429, body: String::new(), retry_after: Some(3600) }
        } else {
            MockReply::text("ok")
        }
    })
    .await
    .unwrap();
    let client = OpenAiClient::new(endpoint(&server.base_url())).unwrap();
    let started = Instant::now();
    assert_eq!(client.complete(&request("x")).await.unwrap().response.content, "ok");
    assert!(started.elapsed() < Duration::from_secs(2), "Retry-After is capped by max_delay_ms");
}

#[tokio::test]
async fn cache_read_write_then_replay_without_a_server() {
    let server = MockServer::start(|req: &serde_json::Value| {
        MockReply::text(format!("answer to {}", last_user_text(req)))
    })
    .await
    .unwrap();
    let dir = temp_dir("cache");
    let client: Arc<dyn ChatModel> = Arc::new(OpenAiClient::new(endpoint(&server.base_url())).unwrap());
    let rw = CachedModel::new(client.clone(), ResponseCache::new(&dir, CacheMode::ReadWrite));
    let first = rw.complete(&request("a")).await.unwrap();
    assert!(!first.cached);
    let again = rw.complete(&request("a")).await.unwrap();
    assert!(again.cached);
    assert_eq!((again.latency_ms, again.attempts), (0, 0));
    assert_eq!(again.response, first.response, "the stored response, usage included");
    assert_eq!(server.request_count(), 1);
    // A different request (other sampling) is a different key.
    let mut other = request("a");
    other.sampling.seed = Some(1);
    assert!(!rw.complete(&other).await.unwrap().cached);
    assert_eq!(server.request_count(), 2);
    server.stop().await;

    let replay = CachedModel::new(client.clone(), ResponseCache::new(&dir, CacheMode::Replay));
    assert_eq!(replay.complete(&request("a")).await.unwrap().response.content, "answer to a");
    match replay.complete(&request("never asked")).await.unwrap_err() {
        e @ ModelError::CacheMiss { .. } => assert!(e.to_string().contains("read-write"), "{e}"),
        other => panic!("{other:?}"),
    }
    let off = CachedModel::new(client, ResponseCache::new(&dir, CacheMode::Off));
    assert!(matches!(off.complete(&request("a")).await.unwrap_err(), ModelError::Unreachable { .. }));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn odd_but_valid_bodies_are_read_and_implausible_usage_is_dropped() {
    let server = MockServer::start(|req: &serde_json::Value| match last_user_text(req).as_str() {
        // A valid completion that also says `"error": null`.
        "null-error" => MockReply::Raw(
            r#"{"error": null, "choices": [{"message": {"content": "ok"}}], "usage": {"prompt_tokens": 5, "completion_tokens": 1}}"#.into(),
        ),
        // The model's text with a lone surrogate escape (a token that split a character).
        "surrogate" => MockReply::Raw(r#"{"choices": [{"message": {"content": "a\ud800b \ud83d\ude00"}}]}"#.into()),
        // A server that reports absurd token counts.
        _ => MockReply::Raw(
            r#"{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": 18446744073709551615, "completion_tokens": -3}}"#.into(),
        ),
    })
    .await
    .unwrap();
    let client = OpenAiClient::new(endpoint(&server.base_url())).unwrap();
    let c = client.complete(&request("null-error")).await.unwrap();
    assert_eq!((c.response.content.as_str(), c.response.usage.prompt_tokens), ("ok", 5));
    let c = client.complete(&request("surrogate")).await.unwrap();
    assert_eq!(c.response.content, "a\u{FFFD}b \u{1F600}");
    let c = client.complete(&request("usage")).await.unwrap();
    assert_eq!(c.response.usage, TokenUsage::default(), "implausible counts are not reported");
    let mut sum = TokenUsage { prompt_tokens: u64::MAX, completion_tokens: 1 };
    sum += TokenUsage { prompt_tokens: 5, completion_tokens: 1 };
    assert_eq!(sum.prompt_tokens, u64::MAX, "sums saturate");
}

#[tokio::test]
async fn cache_keys_separate_servers_and_scopes_and_a_failed_store_keeps_the_answer() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = calls.clone();
    let serve = move |_: &serde_json::Value| {
        MockReply::text(format!("answer {}", seen.fetch_add(1, Ordering::SeqCst)))
    };
    let a = MockServer::start(serve.clone()).await.unwrap();
    let b = MockServer::start(serve).await.unwrap();
    let dir = temp_dir("keys");
    let cache = ResponseCache::new(&dir, CacheMode::ReadWrite);
    let on = |url: &str| CachedModel::new(Arc::new(OpenAiClient::new(endpoint(url)).unwrap()), cache.clone());
    let (model_a, model_b) = (on(&a.base_url()), on(&b.base_url()));
    let first = model_a.complete(&request("q")).await.unwrap();
    assert!(model_a.complete(&request("q")).await.unwrap().cached);
    // The same model name on another server is another model: no shared answers.
    let other = model_b.complete(&request("q")).await.unwrap();
    assert!(!other.cached);
    assert_ne!(other.response.content, first.response.content);
    // The same request in another scope (another occurrence, another episode) is a new sample.
    let mut again = request("q");
    again.cache_scope = Some("task#0#1".into());
    assert!(!model_a.complete(&again).await.unwrap().cached);
    assert!(model_a.complete(&again).await.unwrap().cached);
    assert_eq!(calls.load(Ordering::SeqCst), 3);

    // A cache that cannot be written: the answer is still returned, and the failure counted.
    let blocked = temp_dir("blocked");
    std::fs::write(&blocked, "a file where the cache folder should be").unwrap();
    let unwritable = ResponseCache::new(&blocked, CacheMode::ReadWrite);
    let model =
        CachedModel::new(Arc::new(OpenAiClient::new(endpoint(&a.base_url())).unwrap()), unwritable.clone());
    let c = model.complete(&request("q")).await.unwrap();
    assert!(c.response.content.starts_with("answer "));
    let (failures, why) = unwritable.write_failures();
    assert_eq!(failures, 1);
    assert!(why.is_some());
    let _ = std::fs::remove_file(&blocked);
    let _ = std::fs::remove_dir_all(&dir);
}
