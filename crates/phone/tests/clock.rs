//! The Clock app drives time passing end to end: a timer set on its keypad fires during a
//! `wait` while another app is in front, posts a notification, and the notification opens the
//! timer; an alarm rings at its time and repeats the next day; world clocks use their zones.

use std::path::Path;

use phonebench_actions::{Action, Key, Point, Swipe, Target};
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use phonebench_uitree::Node;

fn phone() -> Phone {
    let apps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    // Clock with Messages (to leave it for) but not the apps that post notifications of their
    // own (mail arriving, calendar reminders), which would mix in.
    let packages = ["clock", "contacts", "messages"]
        .iter()
        .map(|id| phonebench_apps::AppPackage::load(&apps.join(id)).expect("the app loads"))
        .collect();
    let catalog = Catalog::new(packages).expect("the catalog");
    let mut phone = Phone::new(catalog, PhoneConfig::default()).expect("the phone starts");
    phone.apply(&Action::OpenApp { app: "clock".into() }).expect("open Clock");
    phone
}

/// The first node, topmost window first, whose id ends with `:id/<key>` or whose text or
/// content-desc is `key`.
fn find(phone: &mut Phone, key: &str) -> Option<Node> {
    phonebench_testkit::find_node(phone.tree().expect("the screen renders"), key).cloned()
}

fn text_of(phone: &mut Phone, key: &str) -> String {
    find(phone, key).unwrap_or_else(|| panic!("no `{key}` on screen")).text
}

fn tap(phone: &mut Phone, key: &str) -> phonebench_phone::Outcome {
    let node = find(phone, key).unwrap_or_else(|| panic!("no `{key}` on screen"));
    let (x, y) = node.bounds.center();
    phone.apply(&Action::Tap { target: Target::Point(Point { x, y }) }).expect("tap")
}

fn wait(phone: &mut Phone, ms: u64) {
    phone.apply(&Action::Wait { ms: Some(ms) }).expect("wait");
}

fn pull_shade(phone: &mut Phone) {
    let x = phone.display().width_px() as i32 / 2;
    let swipe = Swipe::Between { from: Point { x, y: 5 }, to: Point { x, y: 1400 } };
    phone.apply(&Action::Swipe(swipe)).expect("swipe down");
    assert!(phone.shade_open(), "a swipe down from the status bar pulls the shade");
}

#[test]
fn a_timer_set_on_the_keypad_fires_during_wait_and_its_notification_opens_the_timer() {
    let mut phone = phone();
    tap(&mut phone, "Timer");
    for key in ["timer_setup_digit_2", "timer_setup_digit_3", "timer_setup_digit_0"] {
        tap(&mut phone, key);
    }
    assert_eq!(text_of(&mut phone, "timer_setup_time"), "00h 02m 30s");
    tap(&mut phone, "Start");
    assert_eq!(text_of(&mut phone, "timer_text"), "2:29", "a second passed with the tap");
    // Into Messages; the timer runs on.
    phone.apply(&Action::OpenApp { app: "messages".into() }).expect("open Messages");
    wait(&mut phone, 100_000);
    assert!(phone.notifications().is_empty());
    wait(&mut phone, 100_000);
    let posted = phone.notifications();
    assert_eq!(posted.len(), 1, "{posted:?}");
    assert_eq!((posted[0].app.as_str(), posted[0].title.as_str()), ("clock", "Timer"));
    assert_eq!(
        posted[0].posted_ms,
        phonebench_phone::CLOCK_START_MS + 5_000 + 150_000,
        "it fired 150 s after Start (opening Clock, the Timer tab and three keys took a second each)"
    );
    assert_eq!(phone.foreground_app(), Some("messages"), "a notification does not take the screen");
    assert!(find(&mut phone, "Clock notification").is_some());
    pull_shade(&mut phone);
    tap(&mut phone, "Time's up");
    assert_eq!(phone.current_screen(), Some(("clock", "timer")));
    assert_eq!(text_of(&mut phone, "timer_text"), "Time's up");
    tap(&mut phone, "Stop");
    assert!(find(&mut phone, "timer_setup_time").is_some(), "stopped: the keypad again");
    let left: Vec<serde_json::Value> = phone.query("clock", "SELECT id FROM timers").expect("query");
    assert!(left.is_empty());
}

#[test]
fn an_alarm_rings_at_its_time_opens_the_ringing_screen_and_waits_for_tomorrow() {
    let mut phone = phone();
    // "Take medication" rings every day at 13:00; the phone starts at 09:00.
    phone.apply(&Action::Key { key: Key::Home }).expect("home");
    // Opening Clock and Home took two seconds: this wait ends at 12:59:59.
    wait(&mut phone, 4 * 3_600_000 - 3_000);
    assert!(phone.notifications().is_empty(), "not yet");
    wait(&mut phone, 2_000);
    let posted = phone.notifications();
    assert_eq!(posted.len(), 1, "{posted:?}");
    assert_eq!(posted[0].text.as_deref(), Some("Take medication"));
    pull_shade(&mut phone);
    tap(&mut phone, "Take medication");
    assert_eq!(phone.current_screen(), Some(("clock", "ringing")));
    assert_eq!(text_of(&mut phone, "alert_title"), "Take medication");
    tap(&mut phone, "Stop");
    assert!(phone.notifications().is_empty());
    // A daily alarm stays on and rings again the next day.
    wait(&mut phone, 86_400_000);
    let again: Vec<_> =
        phone.notifications().into_iter().filter(|n| n.text.as_deref() == Some("Take medication")).collect();
    assert_eq!(again.len(), 1, "{again:?}");
    assert_eq!(again[0].posted_ms, phonebench_phone::CLOCK_START_MS + 28 * 3_600_000);
}

#[test]
fn turning_an_alarm_off_unschedules_it() {
    let mut phone = phone();
    let medication = find(&mut phone, "1:00 PM Take medication").expect("the alarm's switch");
    let (x, y) = medication.bounds.center();
    phone.apply(&Action::Tap { target: Target::Point(Point { x, y }) }).expect("switch off");
    let enabled =
        phone.query("clock", "SELECT enabled FROM alarms WHERE label = 'Take medication'").expect("query");
    assert_eq!(enabled[0]["enabled"], 0);
    wait(&mut phone, 5 * 3_600_000);
    assert!(phone.notifications().iter().all(|n| n.text.as_deref() != Some("Take medication")));
}

#[test]
fn world_clocks_show_each_city_in_its_own_zone() {
    let mut phone = phone();
    tap(&mut phone, "Clock");
    let tree = phone.tree().expect("renders").clone();
    let rows: Vec<String> = tree
        .iter()
        .filter(|(_, n)| n.resource_id.ends_with(":id/city_day") || n.resource_id.ends_with(":id/city_time"))
        .map(|(_, n)| n.text.clone())
        .collect();
    // 09:00 UTC on Monday 2 March 2026.
    assert_eq!(rows, ["Today", "9:00 AM", "Today, -5 HRS", "4:00 AM", "Today, +9 HRS", "6:00 PM"]);
}

#[test]
fn the_add_button_sets_a_new_alarm_through_the_time_picker() {
    let mut phone = phone();
    tap(&mut phone, "Add alarm");
    assert_eq!(text_of(&mut phone, "input_hour"), "07");
    phone
        .apply(&Action::Type { text: "9".into(), target: None, clear: false, enter: false })
        .expect("type hour");
    tap(&mut phone, "input_minute");
    phone
        .apply(&Action::Type { text: "41".into(), target: None, clear: false, enter: false })
        .expect("type minute");
    tap(&mut phone, "OK");
    let rows = phone
        .query("clock", "SELECT hour, minute, enabled FROM alarms ORDER BY id DESC LIMIT 1")
        .expect("query");
    assert_eq!(
        (rows[0]["hour"].clone(), rows[0]["minute"].clone(), rows[0]["enabled"].clone()),
        (9.into(), 41.into(), 1.into())
    );
    assert!(find(&mut phone, "9:41 AM").is_some(), "the list shows it");
    // It rings at 09:41 (the phone started at 09:00; a few seconds went by).
    wait(&mut phone, 41 * 60_000);
    assert!(phone.notifications().iter().any(|n| n.title == "Alarm"), "{:?}", phone.notifications());
}

#[test]
fn a_second_timer_runs_beside_the_first_and_a_timer_takes_a_label() {
    let mut phone = phone();
    tap(&mut phone, "Timer");
    for key in ["timer_setup_digit_5", "timer_setup_digit_00"] {
        tap(&mut phone, key);
    }
    tap(&mut phone, "Start");
    // "Add timer" brings the keypad back (with Cancel) while the first one runs on.
    tap(&mut phone, "Add timer");
    assert!(find(&mut phone, "cancel_add").is_some());
    tap(&mut phone, "timer_setup_digit_2");
    tap(&mut phone, "timer_setup_digit_00");
    tap(&mut phone, "Start");
    let timers = phone.query("clock", "SELECT duration_ms, state FROM timers ORDER BY id").expect("query");
    assert_eq!(timers.len(), 2, "{timers:?}");
    assert_eq!(timers[0]["duration_ms"], 300_000);
    assert_eq!(timers[1]["duration_ms"], 120_000);
    // The first card's label opens an input dialog; OK names the timer.
    tap(&mut phone, "timer_label");
    phone
        .apply(&Action::Type { text: "Pasta".into(), target: None, clear: false, enter: false })
        .expect("type");
    tap(&mut phone, "OK");
    let labels = phone.query("clock", "SELECT label FROM timers ORDER BY id").expect("query");
    assert_eq!(labels[0]["label"], "Pasta");
    assert_eq!(text_of(&mut phone, "timer_label"), "Pasta");
    // The two-minute timer rings first, the labelled one later.
    wait(&mut phone, 125_000);
    let ringing = phone.query("clock", "SELECT label FROM timers WHERE state = 'ringing'").expect("query");
    assert_eq!(ringing.len(), 1);
    assert_eq!(ringing[0]["label"], "");
}
