//! Disturbances: what a real phone throws at an agent besides the task, seeded and off by default.
//!
//! A phone made with [`Disturbances::Light`] or [`Disturbances::Heavy`] (in [`PhoneConfig`])
//! plans, from its seed, a few interruptions and shows each on an app screen after an action:
//!
//! | kind | shown as | dismissed by |
//! |---|---|---|
//! | rate this app | Google Play's in-app review dialog (`com.android.vending`) | "Not now", Back |
//! | permission request | "Allow `<App>` to send you notifications?" (`com.google.android.permissioncontroller`) | "Don't allow" (or "Allow"), Back |
//! | promo | "Try `<App>` Premium" in the app's own dialog | "No thanks", Back |
//! | interstitial ad | a full-screen ad (`com.google.android.gms`) | the "Close ad" button, Back |
//! | banner ad | a strip under the app's screen (heavy), which is laid out above it | "Close ad" (for the rest of the episode) |
//! | notification | a heads-up notification over the top of the screen for 6 s | a swipe on it, a tap, or time |
//! | slow screen | a screen just opened shows "Loading…" for 1 s (light) or 2 s (heavy) of virtual time | waiting |
//! | list that reorders | the main list of the screen in front, scrolled to its top: its first three rows trade places (heavy), as a feed refreshing under the finger does, for as long as that screen stays open | nothing: rows are found by what they say, not where they are |
//!
//! A modal one (dialogs, interstitial) takes every touch and key until dismissed, as on Android;
//! none of them changes any app's data, so a task's criteria judge the same outcome with and
//! without them. Each needs at most one turn per appearance to get rid of, and a run with
//! disturbances gives every episode [`Disturbances::extra_steps`] more turns.
//!
//! [`dismissal`] is the *standard dismiss step*: from the UI tree alone (the resource ids below),
//! what to do about the disturbance on screen, if any. The reference agent takes it before each
//! of its steps, which is how validation proves that a disturbance never makes a task impossible.
//!
//! [`PhoneConfig`]: crate::PhoneConfig

use std::fmt;
use std::str::FromStr;

use phonebench_pixels::Role;
use phonebench_uitree::{NodeId, UiTree};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::display::Display;
use crate::view::{Align, Axis, Dim, Edges, Handler, Kind, SystemHandler, TextLook, View};

/// How much a phone is disturbed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Disturbances {
    /// Nothing but the task (the default).
    #[default]
    None,
    /// One pop-up, one notification, one slow screen.
    Light,
    /// Two pop-ups, an interstitial ad, a banner ad, two notifications, three slow screens.
    Heavy,
}

impl Disturbances {
    /// Every level, mildest first.
    pub const ALL: [Disturbances; 3] = [Disturbances::None, Disturbances::Light, Disturbances::Heavy];

    /// The level's name (`none`, `light`, `heavy`).
    pub fn name(self) -> &'static str {
        match self {
            Disturbances::None => "none",
            Disturbances::Light => "light",
            Disturbances::Heavy => "heavy",
        }
    }

    /// Turns added to every episode's budget: at least one per interruption that needs one
    /// (light needs 3, heavy 12), with room to spare, so that a disturbance costs an agent turns
    /// but never the steps its task needs.
    pub fn extra_steps(self) -> u32 {
        match self {
            Disturbances::None => 0,
            Disturbances::Light => 6,
            Disturbances::Heavy => 16,
            // Heavy needs 12: three pop-ups, two notifications, the banner, three slow screens
            // of two turns each.
        }
    }
}

impl fmt::Display for Disturbances {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Disturbances {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Disturbances::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| format!("unknown disturbance level `{s}` (none, light, heavy)"))
    }
}

/// Resource id of the in-app review dialog's "Not now".
pub const REVIEW_NOT_NOW_ID: &str = "com.android.vending:id/not_now_button";
/// Resource id of the permission dialog's "Don't allow".
pub const PERMISSION_DENY_ID: &str = "com.android.permissioncontroller:id/permission_deny_button";
/// Resource id of the permission dialog's "Allow".
pub const PERMISSION_ALLOW_ID: &str = "com.android.permissioncontroller:id/permission_allow_button";
/// Resource id (after the app's package) of a promo dialog's "No thanks".
pub const PROMO_DISMISS_ID: &str = ":id/upsell_dismiss_button";
/// Resource id of an interstitial ad's close button.
pub const INTERSTITIAL_CLOSE_ID: &str = "com.google.android.gms:id/interstitial_close_button";
/// Resource id of a banner ad's close button.
pub const BANNER_CLOSE_ID: &str = "com.google.android.gms:id/banner_close_button";
/// Resource id of a heads-up notification.
pub const HEADS_UP_ID: &str = "com.android.systemui:id/heads_up_notification";
/// Resource id (after the app's package) of a slow screen's progress indicator.
pub const LOADING_ID: &str = ":id/content_loading_progress";

/// What the standard dismiss step does about the disturbance on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dismissal {
    /// Tap this node (a pop-up's "Not now", "Don't allow", "No thanks", an ad's close button).
    Tap(NodeId),
    /// Swipe this node up and away (a heads-up notification).
    SwipeUp(NodeId),
    /// Wait one turn (a screen still loading).
    Wait,
}

/// The standard dismiss step: what to do about a disturbance on this screen, found by resource
/// id alone (so any agent reading the tree can do the same), or `None` when there is none.
/// Modal pop-ups come first (they take every touch), then a heads-up notification, then a
/// banner ad (closed: the room it takes can move a floating button over the row a step
/// needs), then a loading screen.
pub fn dismissal(tree: &UiTree) -> Option<Dismissal> {
    let find =
        |wanted: &dyn Fn(&str) -> bool| tree.iter().find(|(_, n)| wanted(&n.resource_id)).map(|(id, _)| id);
    let modal = |id: &str| {
        id == INTERSTITIAL_CLOSE_ID
            || id == REVIEW_NOT_NOW_ID
            || id == PERMISSION_DENY_ID
            || id.ends_with(PROMO_DISMISS_ID)
    };
    if let Some(node) = find(&modal) {
        return Some(Dismissal::Tap(node));
    }
    if let Some(node) = find(&|id| id == HEADS_UP_ID) {
        return Some(Dismissal::SwipeUp(node));
    }
    // A banner covers nothing, but the room it takes moves floating buttons over list rows.
    if let Some(node) = find(&|id| id == BANNER_CLOSE_ID) {
        return Some(Dismissal::Tap(node));
    }
    find(&|id| id.ends_with(LOADING_ID)).map(|_| Dismissal::Wait)
}

/// A modal interruption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Popup {
    Review,
    Permission,
    Promo,
    Interstitial,
}

/// A button of a disturbance (what [`SystemHandler::Disturbance`] carries).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisturbanceButton {
    /// Closes the modal pop-up on screen ("Not now", "Allow", "Close ad", …).
    ClosePopup,
    /// A star of the review dialog: marks it (the dialog stays until Submit or Not now).
    Star(u8),
    /// The banner ad's close button.
    CloseBanner,
    /// The ad itself: a real one would open a browser; here nothing happens.
    Ad,
    /// The heads-up notification: a tap puts it away.
    HeadsUp,
}

/// Ad headlines (banner and interstitial).
const ADS: [&str; 6] = [
    "Summer sale: up to 50% off running shoes",
    "Learn Spanish in 10 minutes a day",
    "Meet the new Pixel Buds Pro",
    "Your next city break starts at $89",
    "Fresh groceries delivered in 30 minutes",
    "Try the #1 meditation app free for 7 days",
];

/// Heads-up notifications from system apps: none touches an app's data.
const NOTIFICATIONS: [(&str, &str); 6] = [
    ("Google Play", "3 app updates are ready to install"),
    ("Android System", "Battery Saver turns on at 20%"),
    ("Photos", "Your memories from this week are ready"),
    ("Play Store", "Update Chrome to keep browsing safely"),
    ("Fit", "You're 1,200 steps away from your daily goal"),
    ("Google", "Rain expected in your area this afternoon"),
];

/// What one phone's disturbances are doing: the plan drawn from the seed, and what is showing.
#[derive(Debug, Clone)]
pub(crate) struct Disturber {
    pub level: Disturbances,
    /// Actions applied so far.
    turn: u32,
    /// Pop-ups still to come: (earliest turn, kind), by turn.
    popups: Vec<(u32, Popup)>,
    /// Heads-up notifications still to come: (earliest turn, index into `NOTIFICATIONS`).
    notifications: Vec<(u32, usize)>,
    /// Screens still to load slowly, and for how long.
    slow_screens: u32,
    slow_ms: i64,
    /// A banner ad shows under app screens (until closed).
    pub banner: bool,
    pub ad: usize,
    /// The modal pop-up on screen, and the app it shows over.
    pub active: Option<(Popup, usize)>,
    /// The review dialog's chosen stars.
    pub stars: u8,
    /// The foreground app's screen shows "Loading…" until then (virtual ms).
    pub loading_until: i64,
    /// The heads-up notification on screen, until when.
    pub heads_up: Option<(usize, i64)>,
    /// How far a reordered list rotates (drawn from the seed).
    rotation: u64,
    /// The turn from which a list may reorder (heavy), until it has.
    reorder_at: Option<u32>,
    /// The screen whose main list shows its rows rotated: (app, back-stack depth, screen name).
    reordered: Option<(usize, usize, String)>,
}

impl Disturber {
    /// The plan for a phone seeded `seed` (independent of the apps' generator, so disturbances
    /// never change what the apps draw).
    pub fn new(level: Disturbances, seed: u64) -> Disturber {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6469_7374_7572_6221);
        let mut pick = |low: u32, high: u32| low + (rng.next_u64() % u64::from(high - low + 1)) as u32;
        let dialogs = [Popup::Review, Popup::Permission, Popup::Promo];
        let first = pick(0, 2) as usize;
        let second = (first + pick(1, 2) as usize) % 3;
        let (popups, notifications, slow_screens, slow_ms, banner) = match level {
            Disturbances::None => (Vec::new(), Vec::new(), 0, 0, false),
            Disturbances::Light => {
                (vec![(pick(2, 5), dialogs[first])], vec![(pick(3, 8), pick(0, 5) as usize)], 1, 1_000, false)
            }
            Disturbances::Heavy => {
                let mut popups = vec![
                    (pick(1, 4), dialogs[first]),
                    (pick(6, 10), dialogs[second]),
                    (pick(8, 14), Popup::Interstitial),
                ];
                popups.sort_by_key(|p| p.0);
                let n1 = pick(0, 5) as usize;
                let n2 = (n1 + pick(1, 5) as usize) % NOTIFICATIONS.len();
                (popups, vec![(pick(2, 6), n1), (pick(9, 15), n2)], 3, 2_000, true)
            }
        };
        let ad = pick(0, ADS.len() as u32 - 1) as usize;
        let reorder_at = (level == Disturbances::Heavy).then(|| pick(3, 12));
        let rotation = u64::from(pick(1, 1_000));
        Disturber {
            level,
            turn: 0,
            popups,
            notifications,
            slow_screens,
            slow_ms,
            banner,
            ad,
            active: None,
            stars: 0,
            loading_until: i64::MIN,
            heads_up: None,
            reorder_at,
            reordered: None,
            rotation,
        }
    }

    /// A list may reorder now on `screen` (app, depth, name) when its turn has come: the caller
    /// says the screen's lists are at their top. Returns whether it did.
    pub fn maybe_reorder(&mut self, screen: (usize, usize, &str), at_top: bool) -> bool {
        match self.reorder_at {
            Some(turn) if self.turn >= turn && at_top && self.active.is_none() => {
                self.reorder_at = None;
                self.reordered = Some((screen.0, screen.1, screen.2.to_string()));
                true
            }
            _ => false,
        }
    }

    /// How far `screen`'s (app, depth, name) main list is rotated, when it is the one that
    /// reordered.
    pub fn rotation_on(&self, screen: (usize, usize, &str)) -> Option<u64> {
        self.reordered
            .as_ref()
            .filter(|(app, depth, name)| (*app, *depth, name.as_str()) == screen)
            .map(|_| self.rotation)
    }

    /// Whether a modal pop-up takes every touch and key now.
    pub fn modal(&self) -> bool {
        self.active.is_some()
    }

    /// Whether something lies over the app's screen, so that a touch aimed at an app element
    /// lands on whatever is on top of it instead.
    pub fn covers(&self) -> bool {
        self.active.is_some() || self.heads_up.is_some()
    }

    /// After an action: the plan moves on. `app` is the app in front (none: the launcher, the
    /// overview), `navigated` whether the action opened another screen of it, `free` whether the
    /// screen is free of the phone's own dialogs, menus and shade (a pop-up never covers those).
    pub fn after_action(&mut self, app: Option<usize>, navigated: bool, free: bool, now: i64) {
        self.turn += 1;
        if let Some((_, shown_over)) = self.active
            && app != Some(shown_over)
        {
            // The app it belonged to went away (home, another app): so did the pop-up.
            self.active = None;
        }
        if self.heads_up.is_some_and(|(_, until)| now >= until) {
            self.heads_up = None;
        }
        let Some(app) = app else { return };
        if navigated && self.slow_screens > 0 {
            self.slow_screens -= 1;
            self.loading_until = now + self.slow_ms;
            return;
        }
        if free
            && self.active.is_none()
            && now >= self.loading_until
            && let Some(at) = self.popups.iter().position(|(turn, _)| *turn <= self.turn)
        {
            let (_, popup) = self.popups.remove(at);
            self.active = Some((popup, app));
            self.stars = 0;
            return;
        }
        if self.heads_up.is_none()
            && let Some(at) = self.notifications.iter().position(|(turn, _)| *turn <= self.turn)
        {
            let (_, which) = self.notifications.remove(at);
            self.heads_up = Some((which, now + 6_000));
        }
    }

    /// Whether app screens show "Loading…" now.
    pub fn loading(&self, now: i64) -> bool {
        now < self.loading_until
    }
}

fn text(d: &Display, t: &str, sp: f32) -> View {
    let mut v = View::new("android.widget.TextView", Kind::Text);
    v.text = t.to_string();
    v.look = Some(TextLook { size_px: d.dp(sp), bold: false, max_lines: Some(3) });
    v
}

fn button(d: &Display, label: &str, id: &str, handler: DisturbanceButton, role: Role) -> View {
    let mut b = text(d, label, 14.0);
    b.class = "android.widget.Button".into();
    b.resource_id = id.to_string();
    b.role = Some(role);
    b.clickable = true;
    b.hooks.on_click = Some(Handler::System(SystemHandler::Disturbance(handler)));
    b.style.min_height = d.dp(48.0);
    b.style.padding = Edges { left: d.dp(12.0), right: d.dp(12.0), top: d.dp(10.0), bottom: d.dp(10.0) };
    b
}

fn close_button(d: &Display, id: &str, handler: DisturbanceButton) -> View {
    let mut b = View::new("android.widget.ImageButton", Kind::Image);
    b.resource_id = id.to_string();
    b.desc = "Close ad".into();
    b.icon = Some("close".into());
    b.role = Some(Role::IconButton);
    b.clickable = true;
    b.hooks.on_click = Some(Handler::System(SystemHandler::Disturbance(handler)));
    b.style.width = Dim::Px(d.dp(48.0));
    b.style.height = Dim::Px(d.dp(48.0));
    b
}

/// A full-area, see-through window root that takes the touches around a centred dialog (a
/// modal dialog's window does, on Android).
fn modal_root(d: &Display, id: &str, dialog: View) -> View {
    let mut root = View::new("android.widget.FrameLayout", Kind::Group);
    root.resource_id = id.to_string();
    root.clickable = false;
    root.style.width = Dim::Match;
    root.style.height = Dim::Match;
    root.style.axis = Axis::Vertical;
    root.style.justify = Align::Center;
    root.style.align = Align::Center;
    root.style.padding = Edges { left: d.dp(24.0), right: d.dp(24.0), top: 0.0, bottom: 0.0 };
    root.children.push(dialog);
    root
}

fn dialog_box(d: &Display, id: &str, title: &str, message: &str) -> View {
    let mut dialog = View::new("android.widget.LinearLayout", Kind::Group);
    dialog.resource_id = id.to_string();
    dialog.role = Some(Role::Dialog);
    dialog.style.width = Dim::Match;
    dialog.style.axis = Axis::Vertical;
    dialog.style.padding = Edges { top: d.dp(24.0), bottom: d.dp(8.0), left: d.dp(24.0), right: d.dp(16.0) };
    dialog.style.gap = d.dp(12.0);
    let mut t = text(d, title, 20.0);
    t.resource_id = "android:id/alertTitle".into();
    dialog.children.push(t);
    let mut m = text(d, message, 16.0);
    m.resource_id = "android:id/message".into();
    m.tone = phonebench_pixels::Tone::Secondary;
    dialog.children.push(m);
    dialog
}

fn button_bar(d: &Display, buttons: Vec<View>) -> View {
    let mut bar = View::new("android.widget.LinearLayout", Kind::Group);
    bar.style.axis = Axis::Horizontal;
    bar.style.justify = Align::End;
    bar.style.gap = d.dp(8.0);
    bar.children = buttons;
    bar
}

/// The modal pop-up's window root and its package.
pub(crate) fn popup_view(
    d: &Display,
    popup: Popup,
    app_name: &str,
    app_package: &str,
    stars: u8,
    ad: usize,
) -> (View, String) {
    match popup {
        Popup::Review => {
            let mut dialog = dialog_box(
                d,
                "com.android.vending:id/review_dialog",
                &format!("Enjoying {app_name}?"),
                "Tap a star to rate it on Google Play.",
            );
            let mut row = View::new("android.widget.LinearLayout", Kind::Group);
            row.resource_id = "com.android.vending:id/star_rating".into();
            row.style.axis = Axis::Horizontal;
            row.style.justify = Align::Center;
            for i in 1..=5u8 {
                let mut star = View::new("android.widget.ImageButton", Kind::Image);
                star.desc = format!("{i} star{}", if i == 1 { "" } else { "s" });
                star.icon = Some(if i <= stars { "star_fill" } else { "star" }.into());
                star.role = Some(Role::IconButton);
                star.clickable = true;
                star.checked = i <= stars;
                star.hooks.on_click =
                    Some(Handler::System(SystemHandler::Disturbance(DisturbanceButton::Star(i))));
                star.style.width = Dim::Px(d.dp(48.0));
                star.style.height = Dim::Px(d.dp(48.0));
                row.children.push(star);
            }
            dialog.children.push(row);
            let mut submit = button(
                d,
                "Submit",
                "com.android.vending:id/submit_button",
                DisturbanceButton::ClosePopup,
                Role::TextButton,
            );
            submit.enabled = stars > 0;
            dialog.children.push(button_bar(
                d,
                vec![
                    button(d, "Not now", REVIEW_NOT_NOW_ID, DisturbanceButton::ClosePopup, Role::TextButton),
                    submit,
                ],
            ));
            (modal_root(d, "com.android.vending:id/review_root", dialog), "com.android.vending".into())
        }
        Popup::Permission => {
            let mut dialog = dialog_box(
                d,
                "com.android.permissioncontroller:id/grant_dialog",
                &format!("Allow {app_name} to send you notifications?"),
                "You can change this later in Settings.",
            );
            let mut column = View::new("android.widget.LinearLayout", Kind::Group);
            column.style.axis = Axis::Vertical;
            column.style.gap = d.dp(4.0);
            column.children = vec![
                button(d, "Allow", PERMISSION_ALLOW_ID, DisturbanceButton::ClosePopup, Role::TonalButton),
                button(
                    d,
                    "Don't allow",
                    PERMISSION_DENY_ID,
                    DisturbanceButton::ClosePopup,
                    Role::TonalButton,
                ),
            ];
            dialog.children.push(column);
            (
                modal_root(d, "com.android.permissioncontroller:id/grant_root", dialog),
                "com.google.android.permissioncontroller".into(),
            )
        }
        Popup::Promo => {
            let mut dialog = dialog_box(
                d,
                &format!("{app_package}:id/upsell_dialog"),
                &format!("Try {app_name} Premium"),
                "No ads, offline access and more. First month free, then $4.99/month.",
            );
            dialog.children.push(button_bar(
                d,
                vec![
                    button(
                        d,
                        "No thanks",
                        &format!("{app_package}{PROMO_DISMISS_ID}"),
                        DisturbanceButton::ClosePopup,
                        Role::TextButton,
                    ),
                    button(
                        d,
                        "Start free trial",
                        &format!("{app_package}:id/upsell_accept_button"),
                        DisturbanceButton::ClosePopup,
                        Role::FilledButton,
                    ),
                ],
            ));
            (modal_root(d, &format!("{app_package}:id/upsell_root"), dialog), app_package.to_string())
        }
        Popup::Interstitial => (interstitial_view(d, ad), "com.google.android.gms".into()),
    }
}

fn interstitial_view(d: &Display, ad: usize) -> View {
    let mut root = View::new("android.widget.FrameLayout", Kind::Group);
    root.resource_id = "com.google.android.gms:id/interstitial".into();
    root.role = Some(Role::Surface);
    root.style.width = Dim::Match;
    root.style.height = Dim::Match;
    root.style.axis = Axis::Vertical;
    root.style.padding = Edges { left: d.dp(16.0), right: d.dp(16.0), top: d.dp(8.0), bottom: d.dp(24.0) };
    root.style.gap = d.dp(16.0);
    let mut top = View::new("android.widget.LinearLayout", Kind::Group);
    top.style.axis = Axis::Horizontal;
    top.style.align = Align::Center;
    let mut label = text(d, "Advertisement", 12.0);
    label.style.weight = 1.0;
    label.tone = phonebench_pixels::Tone::Secondary;
    top.children = vec![label, close_button(d, INTERSTITIAL_CLOSE_ID, DisturbanceButton::ClosePopup)];
    let mut image = View::new("android.widget.ImageView", Kind::Image);
    image.resource_id = "com.google.android.gms:id/ad_image".into();
    image.src = Some(format!("placeholder:ad-{ad}"));
    image.role = Some(Role::Image);
    image.style.width = Dim::Match;
    image.style.height = Dim::Px(d.dp(280.0));
    let mut headline = text(d, ADS[ad], 24.0);
    headline.resource_id = "com.google.android.gms:id/ad_headline".into();
    let mut learn = button(
        d,
        "Learn more",
        "com.google.android.gms:id/ad_call_to_action",
        DisturbanceButton::Ad,
        Role::FilledButton,
    );
    learn.style.width = Dim::Match;
    root.children = vec![top, image, headline, learn];
    root
}

/// The banner ad under an app's screen, `height` px high.
pub(crate) fn banner_view(d: &Display, ad: usize) -> View {
    let mut root = View::new("android.widget.LinearLayout", Kind::Group);
    root.resource_id = "com.google.android.gms:id/adView".into();
    root.role = Some(Role::TonalBox);
    root.style.width = Dim::Match;
    root.style.height = Dim::Match;
    root.style.axis = Axis::Horizontal;
    root.style.align = Align::Center;
    root.style.padding = Edges { left: d.dp(12.0), right: d.dp(4.0), top: 0.0, bottom: 0.0 };
    let mut label = text(d, &format!("Ad · {}", ADS[ad]), 13.0);
    label.resource_id = "com.google.android.gms:id/banner_headline".into();
    label.clickable = true;
    label.hooks.on_click = Some(Handler::System(SystemHandler::Disturbance(DisturbanceButton::Ad)));
    label.style.weight = 1.0;
    if let Some(look) = &mut label.look {
        look.max_lines = Some(1);
    }
    root.children = vec![label, close_button(d, BANNER_CLOSE_ID, DisturbanceButton::CloseBanner)];
    root
}

/// Height of the banner ad.
pub(crate) fn banner_height(d: &Display) -> f32 {
    d.dp(50.0).round()
}

/// A heads-up notification (system UI), laid out in the width given.
pub(crate) fn heads_up_view(d: &Display, which: usize) -> View {
    let (app, message) = NOTIFICATIONS[which % NOTIFICATIONS.len()];
    let mut card = View::new("android.widget.FrameLayout", Kind::Group);
    card.resource_id = HEADS_UP_ID.into();
    card.role = Some(Role::Card);
    card.clickable = true;
    card.hooks.on_click = Some(Handler::System(SystemHandler::Disturbance(DisturbanceButton::HeadsUp)));
    card.style.width = Dim::Match;
    card.style.axis = Axis::Horizontal;
    card.style.align = Align::Center;
    card.style.gap = d.dp(12.0);
    card.style.padding = Edges { left: d.dp(16.0), right: d.dp(16.0), top: d.dp(12.0), bottom: d.dp(12.0) };
    let mut icon = View::new("android.widget.ImageView", Kind::Image);
    icon.icon = Some("notifications".into());
    icon.role = Some(Role::Image);
    icon.style.width = Dim::Px(d.dp(24.0));
    icon.style.height = Dim::Px(d.dp(24.0));
    let mut texts = View::new("android.widget.LinearLayout", Kind::Group);
    texts.style.axis = Axis::Vertical;
    texts.style.weight = 1.0;
    let mut title = text(d, app, 14.0);
    title.resource_id = "android:id/app_name_text".into();
    let mut body = text(d, message, 14.0);
    body.resource_id = "android:id/text".into();
    texts.children = vec![title, body];
    card.children = vec![icon, texts];
    card
}

/// Rotates the first rows of `view`'s main list (the first vertical scroll container that does
/// not open at its end, as a conversation does, down through single-child wrappers to the first
/// view with at least three children): its first [`REORDERED_ROWS`] rows trade places, by one or
/// two positions as `rotation` says. Only rows at the top of a list scrolled to its top move, so
/// what was on screen stays on screen, in another order. A screen without such a list is left
/// as it is.
pub(crate) fn reorder_rows(view: &mut View, rotation: u64) {
    fn find_scroll(v: &mut View) -> Option<&mut View> {
        if v.kind == Kind::Scroll {
            return (!v.start_at_end).then_some(v);
        }
        v.children.iter_mut().find_map(find_scroll)
    }
    let Some(mut list) = find_scroll(view) else { return };
    while list.children.len() == 1 {
        list = &mut list.children[0];
    }
    if list.children.len() >= REORDERED_ROWS {
        let by = (rotation % (REORDERED_ROWS as u64 - 1)) as usize + 1;
        list.children[..REORDERED_ROWS].rotate_left(by);
    }
}

/// How many rows at the top of a list a reorder moves.
pub const REORDERED_ROWS: usize = 3;

/// What an app screen shows while it loads.
pub(crate) fn loading_view(d: &Display, app_package: &str) -> View {
    let mut root = View::new("android.widget.FrameLayout", Kind::Group);
    root.style.width = Dim::Match;
    root.style.height = Dim::Match;
    root.style.axis = Axis::Vertical;
    root.style.justify = Align::Center;
    root.style.align = Align::Center;
    root.style.gap = d.dp(12.0);
    let mut spinner = View::new("android.widget.ProgressBar", Kind::Image);
    spinner.resource_id = format!("{app_package}{LOADING_ID}");
    spinner.desc = "Loading".into();
    spinner.icon = Some("hourglass_empty".into());
    spinner.role = Some(Role::Image);
    spinner.style.width = Dim::Px(d.dp(48.0));
    spinner.style.height = Dim::Px(d.dp(48.0));
    let mut label = text(d, "Loading…", 16.0);
    label.tone = phonebench_pixels::Tone::Secondary;
    root.children = vec![spinner, label];
    root
}
