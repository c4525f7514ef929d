//! A whole phone's state, taken and put back: [`Phone::snapshot`] / [`Phone::restore_snapshot`].
//!
//! A search over the phone (the oracle, `phonebench-solve`) reaches a state by restoring its
//! parent's snapshot and taking one step, instead of resetting and replaying the whole path.
//! A snapshot holds every piece of state an action can change: each app's back stack and
//! database, the clock, the generator, the overlay, keyboard, toast, clipboard, events, the
//! timeline, the disturbances' plan and the composed screen.
//!
//! Databases are the bulk, so they are shared: a snapshot keeps one `Arc` of serialized bytes per
//! app, and the phone remembers, per app, the bytes it last serialized or restored with the
//! database's [`DataStamp`](crate::data::DataStamp) then. A database still at that stamp is the
//! same content, so the next snapshot shares the bytes instead of copying them, and a restore
//! leaves it as it is. Only databases that changed cost memory.
//!
//! Renders kept between screens (`ScreenCache`, kept layouts) are dropped on restore: the app's
//! next screen is rendered afresh. The composed screen itself is restored (it is what the state
//! shows), so the first action after a restore acts on the screen as it was.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use phonebench_observe::Observation;
use rand_chacha::ChaCha8Rng;

use crate::data::DataStamp;
use crate::phone::{AppEvent, Foreground, Frame, Overlay, Phone, PhoneConfig, PhoneError, Toast};

/// A database's content as last serialized or restored, and the stamp it had then.
#[derive(Debug, Clone)]
pub(crate) struct KnownDb {
    stamp: DataStamp,
    bytes: Arc<[u8]>,
}

/// One app's part of a snapshot.
#[derive(Debug, Clone)]
struct AppState {
    stack: Vec<Frame>,
    return_to: Option<usize>,
    db: Arc<[u8]>,
}

/// Everything a phone's actions can change, taken by [`Phone::snapshot`] and put back by
/// [`Phone::restore_snapshot`]. Unchanged databases are shared between snapshots of one phone.
#[derive(Debug, Clone)]
pub struct PhoneSnapshot {
    config: PhoneConfig,
    apps: Vec<AppState>,
    clock_ms: i64,
    rng: ChaCha8Rng,
    battery: u8,
    foreground: Foreground,
    recents: Vec<usize>,
    keyboard: bool,
    overlay: Option<Overlay>,
    toast: Option<Toast>,
    clipboard: Option<String>,
    events: Vec<AppEvent>,
    screen: Option<crate::render::Screen>,
    last_observation: Option<Observation>,
    timeline: Arc<crate::timeline::Timeline>,
    shade: bool,
    pending_return: Option<crate::intents::PendingReturn>,
    launcher_search: Option<String>,
    keyboard_shift: bool,
    keyboard_symbols: bool,
    disturber: crate::disturb::Disturber,
    shade_scroll: BTreeMap<String, f32>,
}

impl PhoneSnapshot {
    /// The bytes of the databases this snapshot holds, counting each shared copy once per
    /// snapshot (an upper bound of what it keeps alive).
    pub fn database_bytes(&self) -> usize {
        self.apps.iter().map(|a| a.db.len()).sum()
    }

    /// The bytes of the databases this snapshot holds that `other` does not share (what keeping
    /// it costs beside `other`, typically its parent's).
    pub fn database_bytes_beside(&self, other: &PhoneSnapshot) -> usize {
        self.apps
            .iter()
            .enumerate()
            .filter(|(i, a)| !other.apps.get(*i).is_some_and(|b| Arc::ptr_eq(&a.db, &b.db)))
            .map(|(_, a)| a.db.len())
            .sum()
    }
}

impl Phone {
    /// The phone's whole state, to put back with [`Phone::restore_snapshot`]. A database
    /// unchanged since the phone's last snapshot or restore is shared with it, not copied.
    pub fn snapshot(&mut self) -> Result<PhoneSnapshot, PhoneError> {
        self.snapshot_dbs.resize(self.apps.len(), None);
        let mut apps = Vec::with_capacity(self.apps.len());
        for (i, app) in self.apps.iter().enumerate() {
            let app_err = |message: String| PhoneError::App { app: app.package.manifest.id.clone(), message };
            let stamp = app.db.stamp().map_err(app_err)?;
            let db = match &self.snapshot_dbs[i] {
                Some(known) if known.stamp == stamp => known.bytes.clone(),
                _ => {
                    let bytes: Arc<[u8]> = app.db.serialize().map_err(app_err)?.into();
                    self.snapshot_dbs[i] = Some(KnownDb { stamp, bytes: bytes.clone() });
                    bytes
                }
            };
            apps.push(AppState { stack: app.stack.clone(), return_to: app.return_to, db });
        }
        let rng = match self.rng.lock() {
            Ok(rng) => rng.clone(),
            Err(_) => {
                return Err(PhoneError::App {
                    app: "phone".into(),
                    message: "generator lock poisoned".into(),
                });
            }
        };
        Ok(PhoneSnapshot {
            config: self.config.clone(),
            apps,
            clock_ms: self.clock.load(Ordering::Relaxed),
            rng,
            battery: self.battery,
            foreground: self.foreground,
            recents: self.recents.clone(),
            keyboard: self.keyboard,
            overlay: self.overlay.clone(),
            toast: self.toast.clone(),
            clipboard: self.clipboard.clone(),
            events: self.events.clone(),
            screen: self.screen.clone(),
            last_observation: self.last_observation.clone(),
            timeline: Arc::clone(&self.timeline),
            shade: self.shade,
            pending_return: self.pending_return.clone(),
            launcher_search: self.launcher_search.clone(),
            keyboard_shift: self.keyboard_shift,
            keyboard_symbols: self.keyboard_symbols,
            disturber: self.disturber.clone(),
            shade_scroll: self.shade_scroll.clone(),
        })
    }

    /// Puts back the state `snapshot` took (of this phone: the same catalog). Databases still
    /// holding the snapshot's content are left as they are; the others are restored byte for
    /// byte. Kept renders are dropped, so what is seen next is rendered afresh.
    pub fn restore_snapshot(&mut self, snapshot: &PhoneSnapshot) -> Result<(), PhoneError> {
        if snapshot.apps.len() != self.apps.len() {
            return Err(PhoneError::App {
                app: "phone".into(),
                message: "the snapshot is of a phone with other apps".into(),
            });
        }
        self.snapshot_dbs.resize(self.apps.len(), None);
        for (i, (app, state)) in self.apps.iter_mut().zip(&snapshot.apps).enumerate() {
            let app_err = |message: String| PhoneError::App { app: app.package.manifest.id.clone(), message };
            let stamp = app.db.stamp().map_err(app_err)?;
            let same = matches!(&self.snapshot_dbs[i], Some(k) if k.stamp == stamp && Arc::ptr_eq(&k.bytes, &state.db));
            if !same {
                // Forget first: a failed restore leaves the content unknown.
                self.snapshot_dbs[i] = None;
                app.db.restore_other(&state.db).map_err(app_err)?;
                app.db.forget_results();
                let stamp = app.db.stamp().map_err(app_err)?;
                self.snapshot_dbs[i] = Some(KnownDb { stamp, bytes: state.db.clone() });
            }
            app.stack = state.stack.clone();
            app.return_to = state.return_to;
            // Why: a kept render's key does not name everything a restore changes back (the
            // layout store is per thread); rendering afresh is always right.
            app.renders.clear();
        }
        self.config = snapshot.config.clone();
        self.clock.store(snapshot.clock_ms, Ordering::Relaxed);
        match self.rng.lock() {
            Ok(mut rng) => *rng = snapshot.rng.clone(),
            Err(_) => {
                return Err(PhoneError::App {
                    app: "phone".into(),
                    message: "generator lock poisoned".into(),
                });
            }
        }
        self.battery = snapshot.battery;
        self.foreground = snapshot.foreground;
        self.recents = snapshot.recents.clone();
        self.keyboard = snapshot.keyboard;
        self.overlay = snapshot.overlay.clone();
        self.toast = snapshot.toast.clone();
        self.clipboard = snapshot.clipboard.clone();
        self.events = snapshot.events.clone();
        self.screen = snapshot.screen.clone();
        self.last_observation = snapshot.last_observation.clone();
        self.timeline = Arc::clone(&snapshot.timeline);
        self.shade = snapshot.shade;
        self.background = false;
        self.pending_return = snapshot.pending_return.clone();
        self.foreign_writes.clear();
        self.launcher_search = snapshot.launcher_search.clone();
        self.keyboard_shift = snapshot.keyboard_shift;
        self.keyboard_symbols = snapshot.keyboard_symbols;
        self.disturber = snapshot.disturber.clone();
        self.shade_scroll = snapshot.shade_scroll.clone();
        // Whatever was kept by data version (the theme) is asked again.
        self.data_version += 1;
        Ok(())
    }
}
