//! The process-wide memo of measurements: every phone measures the same strings on every step,
//! and the step budget (< 0.5 ms) leaves no room for shaping them again.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};

use crate::{Request, TextSize};

/// At most this many (text, request) entries; past it the cache starts over. Clearing everything is
/// crude but keeps memory bounded without bookkeeping on the hit path, and the working set of a
/// benchmark run (its apps' strings) is far smaller.
const MAX_ENTRIES: usize = 100_000;

/// At most this many bytes of cached text, so that a few huge strings cannot hold on to memory.
const MAX_TEXT_BYTES: usize = 64 << 20;

/// Keyed by text first so that a hit looks up by `&str` without allocating; most texts are measured
/// with one or two requests, so those are scanned linearly.
#[derive(Default)]
struct Cache {
    by_text: HashMap<Box<str>, Vec<(Request, TextSize)>>,
    entries: usize,
    text_bytes: usize,
}

/// Kept apart from the font system's lock so that hits never wait behind a measurement.
static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(Mutex::default);

/// Poison-tolerant: the cache holds only finished results, so it stays consistent across a panic.
fn lock() -> MutexGuard<'static, Cache> {
    CACHE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The cached size of `text` measured with `request`, if any.
pub(crate) fn get(text: &str, request: &Request) -> Option<TextSize> {
    let cache = lock();
    let requests = cache.by_text.get(text)?;
    requests.iter().find(|(r, _)| r == request).map(|&(_, size)| size)
}

/// Records a measurement. Two threads may race to measure the same thing; measurement is
/// deterministic, so the second insert finds the entry and changes nothing.
pub(crate) fn insert(text: &str, request: Request, size: TextSize) {
    let mut cache = lock();
    if cache.entries >= MAX_ENTRIES || cache.text_bytes + text.len() > MAX_TEXT_BYTES {
        *cache = Cache::default();
    }
    let cache = &mut *cache;
    match cache.by_text.get_mut(text) {
        Some(requests) => {
            if requests.iter().any(|(r, _)| *r == request) {
                return;
            }
            requests.push((request, size));
        }
        None => {
            cache.by_text.insert(text.into(), vec![(request, size)]);
            cache.text_bytes += text.len();
        }
    }
    cache.entries += 1;
}

/// Empties the cache.
pub(crate) fn clear() {
    *lock() = Cache::default();
}
