//! Time passing on the phone: app actions scheduled for a virtual time (alarms, timers, incoming
//! mail), notifications, and the notification shade that shows them.
//!
//! Time only moves when the agent acts (a second per action) or waits; whatever falls due in
//! that span runs then, in order of due time (ties in the order they were scheduled), each at its
//! own due time on the clock. A scheduled action runs in the background: it sees no screen and
//! may not use steps that need one (`Step::needs_screen`), as an Android broadcast receiver
//! cannot start dialogs.

use std::collections::BTreeMap;
use std::sync::Arc;

use minijinja::Value;

use crate::phone::{Foreground, Frame, Outcome, Phone, PhoneError};

/// At most this many scheduled actions run in one step: a package that reschedules itself
/// without delay cannot stall the phone (the rest run at the next step).
pub const MAX_FIRINGS_PER_STEP: usize = 1_000;

/// At most this many notifications are kept (the oldest go first), and this many scheduled
/// actions may wait at once (scheduling more is the app's failure).
pub const MAX_NOTIFICATIONS: usize = 50;
/// See [`MAX_NOTIFICATIONS`].
pub const MAX_SCHEDULED: usize = 10_000;

/// An app action waiting for its time.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Scheduled {
    pub due_ms: i64,
    pub seq: u64,
    pub app: usize,
    pub action: String,
    pub args: BTreeMap<String, Value>,
    pub key: Option<String>,
}

/// A notification in the shade.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Notification {
    pub seq: u64,
    pub app: usize,
    pub key: Option<String>,
    pub title: String,
    pub text: Option<String>,
    pub posted_ms: i64,
    pub screen: Option<String>,
    pub args: BTreeMap<String, Value>,
}

/// A notification as tests and tools see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostedNotification {
    /// The posting app's id.
    pub app: String,
    /// Title.
    pub title: String,
    /// Text, if any.
    pub text: Option<String>,
    /// Virtual time it was posted, ms since the epoch.
    pub posted_ms: i64,
}

/// Scheduled actions and notifications: part of the phone's state that a failed action puts
/// back and a reset clears.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Timeline {
    pub scheduled: Vec<Scheduled>,
    /// Newest first, as the shade lists them.
    pub notifications: Vec<Notification>,
    pub next_seq: u64,
}

impl Timeline {
    fn seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq
    }

    /// Schedules `action`; one with the same app and key is replaced.
    pub fn schedule(
        &mut self,
        app: usize,
        action: String,
        due_ms: i64,
        args: BTreeMap<String, Value>,
        key: Option<String>,
    ) -> Result<(), String> {
        if key.is_some() {
            self.scheduled.retain(|s| !(s.app == app && s.key == key));
        }
        if self.scheduled.len() >= MAX_SCHEDULED {
            return Err(format!("more than {MAX_SCHEDULED} scheduled actions wait at once (the limit)"));
        }
        let seq = self.seq();
        self.scheduled.push(Scheduled { due_ms, seq, app, action, args, key });
        Ok(())
    }

    /// Removes app `app`'s scheduled actions and notifications keyed `key`; how many went.
    pub fn cancel(&mut self, app: usize, key: &str) -> usize {
        let before = self.scheduled.len() + self.notifications.len();
        self.scheduled.retain(|s| !(s.app == app && s.key.as_deref() == Some(key)));
        self.notifications.retain(|n| !(n.app == app && n.key.as_deref() == Some(key)));
        before - self.scheduled.len() - self.notifications.len()
    }

    /// Posts a notification on top; one with the same app and key is replaced.
    pub fn post(&mut self, mut notification: Notification) {
        if notification.key.is_some() {
            self.notifications.retain(|n| !(n.app == notification.app && n.key == notification.key));
        }
        notification.seq = self.seq();
        self.notifications.insert(0, notification);
        self.notifications.truncate(MAX_NOTIFICATIONS);
    }

    /// The index of the next scheduled action due at or before `until`.
    fn next_due(&self, until: i64) -> Option<usize> {
        self.scheduled
            .iter()
            .enumerate()
            .filter(|(_, s)| s.due_ms <= until)
            .min_by_key(|(_, s)| (s.due_ms, s.seq))
            .map(|(i, _)| i)
    }
}

impl Phone {
    /// Lets `ms` of virtual time pass, running every scheduled action that falls due on the
    /// way at its own time.
    pub(crate) fn pass_time(&mut self, ms: i64, outcome: &mut Outcome) -> Result<(), PhoneError> {
        let target = self.now_ms().saturating_add(ms.max(0));
        let mut fired = 0;
        while let Some(i) = self.timeline.next_due(target) {
            if fired == MAX_FIRINGS_PER_STEP {
                outcome.notes.push(format!(
                    "more than {MAX_FIRINGS_PER_STEP} scheduled actions fell due in one step; the rest run later"
                ));
                break;
            }
            let due = Arc::make_mut(&mut self.timeline).scheduled.remove(i);
            if due.due_ms > self.now_ms() {
                self.set_clock(due.due_ms);
            }
            self.run_background(due.app, &due.action, due.args, outcome)?;
            fired += 1;
        }
        if target > self.now_ms() {
            self.set_clock(target);
        }
        Ok(())
    }

    /// Runs app `app`'s action `name` in the background (a scheduled action, a boot action).
    /// Its failure is the app's: Android's "keeps stopping" dialog shows over whatever is in
    /// front.
    pub(crate) fn run_background(
        &mut self,
        app: usize,
        name: &str,
        args: BTreeMap<String, Value>,
        outcome: &mut Outcome,
    ) -> Result<(), PhoneError> {
        let was = std::mem::replace(&mut self.background, true);
        let result = self.run_app_action(app, name, args, outcome);
        self.background = was;
        match result {
            Ok(()) => Ok(()),
            Err(e) => {
                let message = self.app_failure(e)?;
                self.crash(app, message, outcome);
                Ok(())
            }
        }
    }

    /// Clears scheduled actions and notifications and runs every app's `boot` action (in
    /// manifest order), as a phone does when it starts. [`Phone::new`] and [`Phone::reset`] do
    /// this; call it again after changing app data from outside (task setup) so that boot
    /// actions see that data.
    pub fn boot(&mut self) -> Result<(), PhoneError> {
        self.timeline = Arc::default();
        let mut outcome = Outcome::default();
        for app in 0..self.apps.len() {
            if let Some(boot) = self.apps[app].package.manifest.boot.clone() {
                self.run_background(app, &boot, BTreeMap::new(), &mut outcome)?;
            }
        }
        self.data_version += 1;
        self.screen = None;
        Ok(())
    }

    /// The notifications in the shade, newest first.
    pub fn notifications(&self) -> Vec<PostedNotification> {
        self.timeline
            .notifications
            .iter()
            .map(|n| PostedNotification {
                app: self.apps[n.app].package.manifest.id.clone(),
                title: n.title.clone(),
                text: n.text.clone(),
                posted_ms: n.posted_ms,
            })
            .collect()
    }

    /// How many app actions wait for their time.
    pub fn scheduled_count(&self) -> usize {
        self.timeline.scheduled.len()
    }

    /// Whether the notification shade is pulled down.
    pub fn shade_open(&self) -> bool {
        self.shade
    }

    /// Pulls the notification shade down (a swipe down from the status bar).
    pub(crate) fn open_shade(&mut self) {
        self.keyboard = false;
        self.shade = true;
        // The shade opens at its top, newest notifications first.
        self.shade_scroll.clear();
    }

    /// Tapping notification `i` of the shade: it goes, the shade closes, and its app opens on
    /// the notification's screen (or where the app was).
    pub(crate) fn open_notification(&mut self, i: usize) {
        if i >= self.timeline.notifications.len() {
            return;
        }
        let n = Arc::make_mut(&mut self.timeline).notifications.remove(i);
        self.shade = false;
        self.overlay = None;
        match &n.screen {
            Some(screen) => {
                let args = n.args.clone();
                self.apps[n.app].stack.push(Frame::new(screen, args));
                self.switch_to(n.app);
            }
            None => self.launch(n.app),
        }
        if self.foreground != Foreground::App(n.app) {
            self.launch(n.app);
        }
    }

    /// The shade's "Clear all".
    pub(crate) fn clear_notifications(&mut self) {
        if !self.timeline.notifications.is_empty() {
            Arc::make_mut(&mut self.timeline).notifications.clear();
        }
        self.shade = false;
    }

    /// What the shade lists: (app name, app icon, when, title, text).
    pub(crate) fn shade_rows(&self) -> Vec<crate::system::ShadeRow> {
        self.timeline
            .notifications
            .iter()
            .map(|n| {
                let manifest = &self.apps[n.app].package.manifest;
                crate::system::ShadeRow {
                    app: manifest.name.clone(),
                    icon: manifest.icon.clone(),
                    when: phonebench_apps::templates::format_datetime(n.posted_ms, "%-H:%M")
                        .unwrap_or_default(),
                    title: n.title.clone(),
                    text: n.text.clone().unwrap_or_default(),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_replace_and_cancel_and_due_order_is_time_then_scheduling() {
        let mut t = Timeline::default();
        t.schedule(0, "b".into(), 2_000, BTreeMap::new(), None).unwrap();
        t.schedule(0, "a".into(), 1_000, BTreeMap::new(), Some("k".into())).unwrap();
        t.schedule(0, "c".into(), 1_000, BTreeMap::new(), None).unwrap();
        assert_eq!(t.scheduled[t.next_due(5_000).unwrap()].action, "a");
        // Same key: replaced, and now later than `c`.
        t.schedule(0, "a2".into(), 1_000, BTreeMap::new(), Some("k".into())).unwrap();
        assert_eq!(t.scheduled.len(), 3);
        assert_eq!(t.scheduled[t.next_due(5_000).unwrap()].action, "c");
        assert_eq!(t.next_due(999), None);
        // Another app's key is another key.
        t.schedule(1, "x".into(), 1_000, BTreeMap::new(), Some("k".into())).unwrap();
        assert_eq!(t.cancel(0, "k"), 1);
        assert_eq!(t.scheduled.len(), 3);
    }

    #[test]
    fn notifications_are_newest_first_replaced_by_key_and_capped() {
        let mut t = Timeline::default();
        let n = |title: &str, key: Option<&str>| Notification {
            seq: 0,
            app: 0,
            key: key.map(str::to_string),
            title: title.into(),
            text: None,
            posted_ms: 0,
            screen: None,
            args: BTreeMap::new(),
        };
        t.post(n("one", Some("a")));
        t.post(n("two", None));
        t.post(n("three", Some("a")));
        let titles: Vec<&str> = t.notifications.iter().map(|n| n.title.as_str()).collect();
        assert_eq!(titles, ["three", "two"]);
        for i in 0..(MAX_NOTIFICATIONS + 5) {
            t.post(n(&i.to_string(), None));
        }
        assert_eq!(t.notifications.len(), MAX_NOTIFICATIONS);
        assert_eq!(t.notifications[0].title, (MAX_NOTIFICATIONS + 4).to_string());
    }
}
