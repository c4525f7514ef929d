//! The response cache: a finished experiment re-runs for free and byte-identically.
//!
//! A request is keyed by the SHA-256 of its canonical JSON body (keys sorted at every level,
//! compact, the model name included; the base URL and API key are not, so moving a server to
//! another port keeps its cache). One file per response, `DIR/ab/abcdef….json`, written to a
//! temporary name and renamed, so concurrent runs and a killed process never leave half an
//! entry; a file that does not parse is treated as missing (read-write) or an error (replay).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::price::Price;
use crate::types::{ChatRequest, ChatResponse, Completion};
use crate::{BoxFuture, ChatModel, ModelError};

/// How the cache is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheMode {
    /// Every call goes to the server; nothing is stored.
    Off,
    /// Hits are answered from the cache; misses go to the server and are stored.
    #[default]
    ReadWrite,
    /// Only the cache answers; a miss is an error (how CI replays recorded model sessions).
    Replay,
}

impl CacheMode {
    /// Parses `off`, `read-write` (or `rw`) and `replay` (or `replay-only`).
    pub fn parse(text: &str) -> Result<CacheMode, String> {
        match text {
            "off" => Ok(CacheMode::Off),
            "read-write" | "rw" => Ok(CacheMode::ReadWrite),
            "replay" | "replay-only" => Ok(CacheMode::Replay),
            other => Err(format!("unknown cache mode `{other}` (off, read-write, replay)")),
        }
    }

    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            CacheMode::Off => "off",
            CacheMode::ReadWrite => "read-write",
            CacheMode::Replay => "replay",
        }
    }
}

/// A folder of stored responses.
#[derive(Debug, Clone)]
pub struct ResponseCache {
    dir: PathBuf,
    mode: CacheMode,
    failures: Arc<WriteFailures>,
}

/// Stores that failed: the answer was still used, but it will cost again next time.
#[derive(Debug, Default)]
struct WriteFailures {
    count: AtomicU64,
    last: std::sync::Mutex<Option<String>>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    model: String,
    response: ChatResponse,
}

/// `value` with object keys sorted at every level, serialized compactly: equal requests give
/// equal bytes whatever order their fields were built in.
pub fn canonical_json(value: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&m[k]))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

/// The cache key of a request: hex SHA-256 of the canonical JSON of its body, the endpoint's
/// namespace and the request's cache scope.
pub fn cache_key(namespace: &str, request: &ChatRequest, model: &str) -> String {
    request_key(&serde_json::json!({
        "namespace": namespace,
        "scope": request.cache_scope,
        "body": request.to_body(model),
    }))
}

/// Hex SHA-256 of a value's canonical JSON.
pub fn request_key(body: &Value) -> String {
    let digest = Sha256::digest(canonical_json(body).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

impl ResponseCache {
    /// A cache in `dir` (created on first store).
    pub fn new(dir: impl Into<PathBuf>, mode: CacheMode) -> ResponseCache {
        ResponseCache { dir: dir.into(), mode, failures: Arc::default() }
    }

    /// How many answers could not be stored, and the last reason (a full disk, a read-only
    /// folder): those answers were used, but a re-run will pay for them again.
    pub fn write_failures(&self) -> (u64, Option<String>) {
        let last = self.failures.last.lock().ok().and_then(|l| l.clone());
        (self.failures.count.load(Ordering::Relaxed), last)
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The mode.
    pub fn mode(&self) -> CacheMode {
        self.mode
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    /// The stored response for `key`: `Ok(None)` when absent (or, read-write, unreadable).
    pub fn get(&self, key: &str) -> Result<Option<ChatResponse>, ModelError> {
        let path = self.path(key);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            // An unreadable cache costs money, not results: a miss (the store will fail and be
            // counted); in replay mode there is nothing else to answer with.
            Err(_) if self.mode != CacheMode::Replay => return Ok(None),
            Err(e) => return Err(ModelError::Cache { path, message: e.to_string() }),
        };
        match serde_json::from_str::<Entry>(&text) {
            Ok(entry) => Ok(Some(entry.response)),
            // A damaged entry (a disk filled up mid-write by another tool, an edit) is a miss
            // that the next store repairs; in replay mode it must not pass silently.
            Err(e) if self.mode == CacheMode::Replay => {
                Err(ModelError::Cache { path, message: format!("damaged entry: {e}") })
            }
            Err(_) => Ok(None),
        }
    }

    /// Stores a response under `key`, atomically.
    pub fn put(&self, key: &str, model: &str, response: &ChatResponse) -> Result<(), ModelError> {
        let path = self.path(key);
        let err = |path: &Path, e: std::io::Error| ModelError::Cache {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| err(parent, e))?;
        }
        let text = serde_json::to_string(&Entry { model: model.to_string(), response: response.clone() })
            .map_err(|e| ModelError::Cache { path: path.clone(), message: e.to_string() })?;
        // Unique per process and write: concurrent writers of one key never share a temp file.
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let n = WRITES.fetch_add(1, Ordering::Relaxed);
        let tmp = path.with_extension(format!("{}.{n}.tmp", std::process::id()));
        std::fs::write(&tmp, text).map_err(|e| err(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| err(&path, e))
    }
}

/// A model behind a response cache.
#[derive(Clone)]
pub struct CachedModel {
    inner: Arc<dyn ChatModel>,
    cache: ResponseCache,
}

impl std::fmt::Debug for CachedModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedModel").field("model", &self.inner.model()).field("cache", &self.cache).finish()
    }
}

impl CachedModel {
    /// `inner`, answered from `cache` where it can be.
    pub fn new(inner: Arc<dyn ChatModel>, cache: ResponseCache) -> CachedModel {
        CachedModel { inner, cache }
    }
}

impl ChatModel for CachedModel {
    fn model(&self) -> &str {
        self.inner.model()
    }

    fn price(&self) -> Option<Price> {
        self.inner.price()
    }

    fn cache_namespace(&self) -> String {
        self.inner.cache_namespace()
    }

    fn complete<'a>(&'a self, request: &'a ChatRequest) -> BoxFuture<'a, Result<Completion, ModelError>> {
        Box::pin(async move {
            if self.cache.mode == CacheMode::Off {
                return self.inner.complete(request).await;
            }
            let key = cache_key(&self.inner.cache_namespace(), request, self.inner.model());
            if let Some(response) = self.cache.get(&key)? {
                let cost_usd = self.inner.price().map(|p| p.cost(response.usage));
                return Ok(Completion { response, cached: true, latency_ms: 0, attempts: 0, cost_usd });
            }
            if self.cache.mode == CacheMode::Replay {
                return Err(ModelError::CacheMiss { key, model: self.inner.model().to_string() });
            }
            let completion = self.inner.complete(request).await?;
            // An answer that cannot be stored is still the answer: use it, and count the failure
            // so the run can say that a re-run will not be free.
            if let Err(e) = self.cache.put(&key, self.inner.model(), &completion.response) {
                self.cache.failures.count.fetch_add(1, Ordering::Relaxed);
                if let Ok(mut last) = self.cache.failures.last.lock() {
                    *last = Some(e.to_string());
                }
            }
            Ok(completion)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_ignores_field_order() {
        let a = json!({"b": 1, "a": {"y": [1, {"q": 1, "p": 2}], "x": null}});
        let b: Value =
            serde_json::from_str(r#"{"a": {"x": null, "y": [1, {"p": 2, "q": 1}]}, "b": 1}"#).unwrap();
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(canonical_json(&a), r#"{"a":{"x":null,"y":[1,{"p":2,"q":1}]},"b":1}"#);
        assert_eq!(request_key(&a), request_key(&b));
        assert_ne!(request_key(&a), request_key(&json!({"b": 2})));
        assert_eq!(request_key(&a).len(), 64);
    }

    #[test]
    fn store_read_and_damaged_entries() {
        let dir = std::env::temp_dir().join(format!("phonebench-cache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let rw = ResponseCache::new(&dir, CacheMode::ReadWrite);
        let key = request_key(&json!({"m": 1}));
        assert_eq!(rw.get(&key).unwrap(), None);
        let response = ChatResponse { content: "click [3]".into(), ..ChatResponse::default() };
        rw.put(&key, "m", &response).unwrap();
        assert_eq!(rw.get(&key).unwrap(), Some(response));
        std::fs::write(rw.path(&key), "{ half").unwrap();
        assert_eq!(rw.get(&key).unwrap(), None, "damaged entries are misses in read-write mode");
        let replay = ResponseCache::new(&dir, CacheMode::Replay);
        assert!(replay.get(&key).unwrap_err().to_string().contains("damaged"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn modes_parse() {
        assert_eq!(CacheMode::parse("rw").unwrap(), CacheMode::ReadWrite);
        assert_eq!(CacheMode::parse("replay-only").unwrap(), CacheMode::Replay);
        assert!(CacheMode::parse("on").unwrap_err().contains("off, read-write, replay"));
    }
}
