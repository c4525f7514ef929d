//! Work shared between every phone of the process: the parse of a screen's markup and the
//! layout of its views, keyed by what they are a function of (content, not a phone's history).
//!
//! A phone keeps its own recent renders (`crate::render`), but each phone, and each reset of
//! one, renders its screens anew: a trainer's environments playing the same task, or one
//! environment's episodes of it, render equal markup over and over. The markup a template
//! renders depends on the phone's data; what is derived from the markup alone — its parse, and
//! the layout of the views once the frame's text fields and pager pages are in — does not, so
//! it is kept here under a 128-bit digest of its inputs and reused by any phone on any thread.
//!
//! Invariant: an entry is a pure function of its key's inputs (the package's files, the
//! installed apps' asset names, the markup, the fields and pages, the area and density), so a
//! hit gives exactly what computing it again would; sharing changes cost, never results
//! (`tests/render_cache.rs` compares phones with and without it through random play).

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use foldhash::quality::FixedState;

use crate::layout::{Boxes, Rect};
use crate::markup::ParsedLayout;

/// Entries per generation of each cache (see [`Generations`]): a few hundred screens' parses
/// and layouts (a throughput run's peak RSS grew by about 40 MB with them).
const ENTRIES: usize = 512;

/// A 128-bit digest: two 64-bit foldhash digests under fixed, different seeds (deterministic
/// across runs; foldhash reads long markup at several GB/s, where SipHash would cost a
/// noticeable share of the parse it saves).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Digest(u64, u64);

/// Feeds values into both halves of a [`Digest`].
pub(crate) struct Digester(foldhash::quality::FoldHasher<'static>, foldhash::quality::FoldHasher<'static>);

static SEED_A: FixedState = FixedState::with_seed(0x7068_6f6e_6562_656e);
static SEED_B: FixedState = FixedState::with_seed(0x6368_2d73_6861_7265);

impl Digester {
    /// A digester with nothing fed.
    pub fn new() -> Digester {
        Digester(SEED_A.build_hasher(), SEED_B.build_hasher())
    }

    /// Feeds `value`.
    pub fn feed<T: Hash + ?Sized>(&mut self, value: &T) -> &mut Digester {
        value.hash(&mut self.0);
        value.hash(&mut self.1);
        self
    }

    /// The digest of what was fed.
    pub fn finish(&self) -> Digest {
        Digest(self.0.finish(), self.1.finish())
    }
}

/// The digest of an app's asset names (what its markup's pictures resolve to).
pub(crate) fn assets_digest(assets: &BTreeMap<String, String>) -> Digest {
    let mut d = Digester::new();
    d.feed(&assets.len());
    for (name, key) in assets {
        d.feed(name).feed(key);
    }
    d.finish()
}

/// Two maps used as one bounded cache: entries go into the current one; when it is full it
/// becomes the previous one (the one before is dropped). A hit in the previous one moves the
/// entry back to the current one, so what is in use stays (an approximate LRU at no
/// bookkeeping cost on the hit path).
struct Generations<V> {
    current: HashMap<Digest, V>,
    previous: HashMap<Digest, V>,
}

impl<V: Clone> Generations<V> {
    fn new() -> Generations<V> {
        Generations { current: HashMap::new(), previous: HashMap::new() }
    }

    fn get(&mut self, key: &Digest) -> Option<V> {
        if let Some(v) = self.current.get(key) {
            return Some(v.clone());
        }
        let v = self.previous.remove(key)?;
        self.insert(*key, v.clone());
        Some(v)
    }

    fn insert(&mut self, key: Digest, value: V) {
        if self.current.len() >= ENTRIES {
            self.previous = std::mem::take(&mut self.current);
        }
        self.current.insert(key, value);
    }
}

struct Caches {
    parses: Generations<Arc<ParsedLayout>>,
    layouts: Generations<Arc<Boxes>>,
}

static CACHES: Mutex<Option<Caches>> = Mutex::new(None);

/// Whether phones made from now on share (the default). Off, a phone computes everything
/// itself: for measuring what sharing saves (a test turns one phone's off, `Phone::set_sharing`).
static ENABLED: AtomicBool = AtomicBool::new(true);

static HITS: AtomicU64 = AtomicU64::new(0);
static MISSES: AtomicU64 = AtomicU64::new(0);

/// Whether phones made from now on share parses and layouts (they do unless this turned it
/// off); each phone can be set apart with `Phone::set_sharing`.
pub fn set_sharing(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// Whether phones made now share ([`set_sharing`]).
pub fn sharing_default() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Lookups answered from the shared caches and lookups that were not, since the process
/// started (parses and layouts together).
pub fn sharing_counts() -> (u64, u64) {
    (HITS.load(Ordering::Relaxed), MISSES.load(Ordering::Relaxed))
}

fn with_caches<T>(f: impl FnOnce(&mut Caches) -> T) -> Option<T> {
    // A poisoned lock (a panic elsewhere while holding it) only turns sharing off.
    let mut guard = CACHES.lock().ok()?;
    let caches =
        guard.get_or_insert_with(|| Caches { parses: Generations::new(), layouts: Generations::new() });
    Some(f(caches))
}

/// The entry under `key` in the cache `pick` chooses, counting the lookup.
fn lookup<V: Clone>(key: Digest, pick: impl FnOnce(&mut Caches) -> &mut Generations<V>) -> Option<V> {
    let found = with_caches(|c| pick(c).get(&key))?;
    if found.is_some() { &HITS } else { &MISSES }.fetch_add(1, Ordering::Relaxed);
    found
}

/// The key of a markup's parse: the package, the installed apps' asset names, the density and
/// the markup itself.
pub(crate) fn parse_key(package: u64, assets: Digest, density: f32, xml: &str) -> Digest {
    Digester::new().feed(&package).feed(&assets).feed(&density.to_bits()).feed(xml).finish()
}

/// The parse kept under `key`, if any.
pub(crate) fn parse(key: Digest) -> Option<Arc<ParsedLayout>> {
    lookup(key, |c| &mut c.parses)
}

/// Keeps `parsed` under `key`.
pub(crate) fn keep_parse(key: Digest, parsed: Arc<ParsedLayout>) {
    with_caches(|c| c.parses.insert(key, parsed));
}

/// The key of a screen's views: the markup's parse key, and the frame's text fields and pager
/// pages (the views' state).
pub(crate) fn view_key(
    parse: Digest,
    fields: &BTreeMap<String, String>,
    pages: &BTreeMap<String, usize>,
) -> Digest {
    Digester::new().feed(&parse).feed(fields).feed(pages).finish()
}

/// The key of the layout of views (their [`view_key`]) in `area` at `density`.
pub(crate) fn layout_key(views: Digest, area: Rect, density: f32) -> Digest {
    let mut d = Digester::new();
    d.feed(&views);
    d.feed(&[area.x.to_bits(), area.y.to_bits(), area.w.to_bits(), area.h.to_bits(), density.to_bits()]);
    d.finish()
}

/// The layout kept under `key`, if any.
pub(crate) fn layout(key: Digest) -> Option<Arc<Boxes>> {
    lookup(key, |c| &mut c.layouts)
}

/// Keeps `boxes` under `key`.
pub(crate) fn keep_layout(key: Digest, boxes: Arc<Boxes>) {
    with_caches(|c| c.layouts.insert(key, boxes));
}
