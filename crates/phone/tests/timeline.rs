//! Time passing and intents, driven through small app packages: scheduled actions fire during
//! `wait` at their own time, post notifications that the shade shows and that open their app;
//! screens with a tick see seconds; share sheet, pick-and-return and writes to another app's
//! database (the file store pattern).

use std::path::{Path, PathBuf};

use phonebench_actions::{Action, Key, Point, Swipe, Target};
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use phonebench_uitree::Node;

/// Writes packages (`app id` → files) under a fresh temp folder; returns it.
fn packages(case: &str, apps: &[(&str, &[(&str, &str)])]) -> PathBuf {
    let root = std::env::temp_dir().join(format!("phonebench-timeline-{case}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for (id, files) in apps {
        for (name, text) in *files {
            let path = root.join(id).join(name);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("create the folder");
            std::fs::write(&path, text).expect("write the file");
        }
    }
    root
}

fn phone(root: &Path) -> Phone {
    let catalog = Catalog::load_dir(root).unwrap_or_else(|e| panic!("the packages load: {e}"));
    Phone::new(catalog, PhoneConfig::default()).expect("the phone starts")
}

fn find(phone: &mut Phone, key: &str) -> Option<Node> {
    phonebench_testkit::find_node(phone.tree().expect("the screen renders"), key).cloned()
}

fn act(phone: &mut Phone, action: Action) -> phonebench_phone::Outcome {
    phone.apply(&action).unwrap_or_else(|e| panic!("{action:?} failed: {e}"))
}

fn tap(phone: &mut Phone, key: &str) -> phonebench_phone::Outcome {
    let node = find(phone, key).unwrap_or_else(|| panic!("no `{key}` on screen"));
    let (x, y) = node.bounds.center();
    act(phone, Action::Tap { target: Target::Point(Point { x, y }) })
}

fn wait(phone: &mut Phone, ms: u64) -> phonebench_phone::Outcome {
    act(phone, Action::Wait { ms: Some(ms) })
}

fn query_value(phone: &Phone, app: &str, sql: &str) -> serde_json::Value {
    let rows = phone.query(app, sql).expect("the query runs");
    rows.first().and_then(|r| r.as_object()).and_then(|o| o.values().next().cloned()).unwrap_or_default()
}

const CLOCK_MANIFEST: &str = r#"id = "clock"
name = "Clock"
package = "com.google.android.deskclock"
entry = "main"
icon = "schedule"
boot = "schedule_reminders"
[screens.stopwatch]
tick = "1s"
"#;

const CLOCK_SCHEMA: &str = "CREATE TABLE fired (id INTEGER PRIMARY KEY, what TEXT, at INTEGER);
CREATE TABLE reminders (id INTEGER PRIMARY KEY, at INTEGER, title TEXT);";

const CLOCK_SEED: &str = "INSERT INTO reminders (at, title) VALUES (1772442000000 + 3600000, 'Stand-up');";

const CLOCK_ACTIONS: &str = r#"
[schedule_reminders]
steps = [ { schedule = "remind", rows = "SELECT at, title, 'r' || id AS key FROM reminders" } ]

[remind]
steps = [
  { sql = "INSERT INTO fired (what, at) VALUES (:title, :now)" },
  { notify = { title = "{{ title }}", text = "Reminder" } },
]

[start_timer]
steps = [
  { schedule = "timer_done", after = "300000", key = "'timer'" },
  { toast = "Timer started" },
]

[cancel_timer]
steps = [ { cancel = "'timer'" } ]

[timer_done]
steps = [
  { sql = "INSERT INTO fired (what, at) VALUES ('timer', :now)" },
  { notify = { title = "Timer", text = "Time's up", screen = "ringing", args = { label = "'5 min'" }, key = "'timer'" } },
]

[bad_background]
steps = [ { navigate = "ringing" } ]

[schedule_bad]
steps = [ { schedule = "bad_background", after = "1000" } ]

[schedule_then_fail]
steps = [
  { schedule = "timer_done", after = "1000" },
  { sql = "SELECT abs(-9223372036854775807 - 1)" },
]

[open_stopwatch]
steps = [ { navigate = "stopwatch" } ]
"#;

fn clock_files() -> Vec<(&'static str, &'static str)> {
    vec![
        ("app.toml", CLOCK_MANIFEST),
        ("schema.sql", CLOCK_SCHEMA),
        ("seed.sql", CLOCK_SEED),
        ("actions.toml", CLOCK_ACTIONS),
        (
            "screens/main.xml",
            r#"<LinearLayout>
  <Button id="start" text="Start timer" on-click="start_timer"/>
  <Button id="cancel" text="Cancel timer" on-click="cancel_timer"/>
  <Button id="bad" text="Bad" on-click="schedule_bad"/>
  <Button id="fail" text="Fail" on-click="schedule_then_fail"/>
  <Button id="stopwatch" text="Stopwatch" on-click="open_stopwatch"/>
</LinearLayout>"#,
        ),
        (
            "screens/ringing.xml",
            r#"<LinearLayout><TextView id="label" text="Time's up: {{ args.label }}"/></LinearLayout>"#,
        ),
        (
            "screens/stopwatch.xml",
            r#"<LinearLayout><TextView id="time" text="{{ now | datetime('%H:%M:%S') }}"/></LinearLayout>"#,
        ),
    ]
}

fn clock_phone(case: &str) -> (Phone, PathBuf) {
    let files = clock_files();
    let root = packages(case, &[("clock", &files)]);
    let mut phone = phone(&root);
    act(&mut phone, Action::OpenApp { app: "clock".into() });
    (phone, root)
}

#[test]
fn a_timer_fires_during_wait_and_its_notification_opens_the_app() {
    let (mut phone, root) = clock_phone("timer");
    let started = phone.now_ms();
    tap(&mut phone, "start");
    assert_eq!(phone.scheduled_count(), 2, "the timer and the boot-scheduled reminder wait");
    wait(&mut phone, 200_000);
    assert!(phone.notifications().is_empty(), "not due yet");
    // Go elsewhere: the timer fires in the background.
    act(&mut phone, Action::Key { key: Key::Home });
    wait(&mut phone, 120_000);
    let posted = phone.notifications();
    assert_eq!(posted.len(), 1, "{posted:?}");
    assert_eq!(posted[0].title, "Timer");
    assert_eq!(posted[0].app, "clock");
    // It ran at its own time: 300 s after the tap.
    assert_eq!(posted[0].posted_ms, started + 300_000);
    assert_eq!(query_value(&phone, "clock", "SELECT at FROM fired WHERE what = 'timer'"), started + 300_000);
    assert!(find(&mut phone, "Clock notification").is_some(), "the status bar shows the app's icon");

    // Swipe down from the status bar: the shade.
    let d = phone.display();
    let x = d.width_px() as i32 / 2;
    act(&mut phone, Action::Swipe(Swipe::Between { from: Point { x, y: 10 }, to: Point { x, y: 1200 } }));
    assert!(phone.shade_open());
    assert!(find(&mut phone, "Time's up").is_some(), "the shade lists the notification");
    tap(&mut phone, "Timer");
    assert!(!phone.shade_open());
    assert_eq!(phone.current_screen(), Some(("clock", "ringing")));
    assert!(find(&mut phone, "Time's up: 5 min").is_some(), "opened with the notification's args");
    assert!(phone.notifications().is_empty(), "opening it dismisses it");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn boot_schedules_from_rows_cancel_removes_and_reset_restores() {
    let (mut phone, root) = clock_phone("boot");
    tap(&mut phone, "start");
    tap(&mut phone, "cancel");
    wait(&mut phone, 3_600_000);
    let posted = phone.notifications();
    assert_eq!(posted.len(), 1, "only the reminder: the timer was cancelled: {posted:?}");
    assert_eq!(posted[0].title, "Stand-up");
    assert_eq!(posted[0].posted_ms, phonebench_phone::CLOCK_START_MS + 3_600_000);
    // The shade: Clear all.
    act(&mut phone, Action::Key { key: Key::Other("NOTIFICATION".into()) });
    tap(&mut phone, "Clear all");
    assert!(phone.notifications().is_empty() && !phone.shade_open());
    phone.reset().expect("reset");
    assert_eq!(phone.scheduled_count(), 1, "reset boots again: the reminder waits");
    assert!(phone.notifications().is_empty());
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn a_background_action_cannot_touch_screens_and_a_failed_action_leaves_no_schedule() {
    let (mut phone, root) = clock_phone("background");
    tap(&mut phone, "fail");
    assert_eq!(phone.scheduled_count(), 1, "the failed action's schedule was undone");
    act(&mut phone, Action::Key { key: Key::Back });
    // Due a second later: it fires as the tap's second passes.
    let outcome = tap(&mut phone, "bad");
    let notes = outcome.notes.join("\n");
    assert!(notes.contains("keeps stopping") && notes.contains("background"), "{notes}");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn a_screen_with_a_tick_sees_seconds_and_renders_as_they_pass() {
    let (mut phone, root) = clock_phone("tick");
    tap(&mut phone, "stopwatch");
    let first = find(&mut phone, "time").expect("the time").text;
    wait(&mut phone, 1_000);
    let second = find(&mut phone, "time").expect("the time").text;
    assert_ne!(first, second, "a one-second tick re-renders each second");
    assert!(second.ends_with(":02") || second.ends_with(":03"), "{first} → {second}");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn same_actions_give_the_same_screens() {
    let run = |case: &str| {
        let (mut phone, root) = clock_phone(case);
        tap(&mut phone, "start");
        wait(&mut phone, 400_000);
        act(&mut phone, Action::Key { key: Key::Other("NOTIFICATION".into()) });
        let xml = phonebench_uitree::write_xml(phone.tree().expect("tree"));
        let _ = std::fs::remove_dir_all(root);
        xml
    };
    assert_eq!(run("det-a"), run("det-b"));
}

const GALLERY_ACTIONS: &str = r#"
[share_photo]
steps = [ { share = { file = "id", mime = "'image/jpeg'", subject = "name" } } ]

[picked]
steps = [ { return = { file_id = "id", file_name = "name" } } ]
"#;

const MAIL_ACTIONS: &str = r#"
[receive]
steps = [ { navigate = "compose", args = { file_id = "file", subject = "subject" } } ]

[attach]
steps = [ { pick = { mime = "image/*", action = "attached" } } ]

[attached]
steps = [
  { sql = "INSERT INTO attachments (file_id, name, draft) VALUES (:file_id, :file_name, :draft)" },
  { toast = "Attached {{ file_name }}" },
]

[share_text]
steps = [ { share = { text = "'See you at 7'" } } ]
"#;

const CAMERA_ACTIONS: &str = r#"
[shoot]
steps = [
  { sql = "INSERT INTO photos (name) VALUES ('IMG_' || :now || '.jpg')", app = "gallery" },
  { toast = "Saved" },
]

[shoot_and_fail]
steps = [
  { sql = "INSERT INTO photos (name) VALUES ('never.jpg')", app = "gallery" },
  { sql = "SELECT abs(-9223372036854775807 - 1)" },
]
"#;

fn intent_apps(case: &str) -> PathBuf {
    packages(
        case,
        &[
            (
                "gallery",
                &[
                    (
                        "app.toml",
                        "id = \"gallery\"\nname = \"Gallery\"\npackage = \"com.example.gallery\"\nentry = \"grid\"\nicon = \"image\"\n[pick]\nmime = [\"image/*\"]\nscreen = \"pick\"\n",
                    ),
                    ("schema.sql", "CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT);"),
                    ("seed.sql", "INSERT INTO photos (name) VALUES ('beach.jpg'), ('dog.jpg');"),
                    ("actions.toml", GALLERY_ACTIONS),
                    (
                        "screens/grid.xml",
                        r#"<LinearLayout>{% for p in query("SELECT id, name FROM photos ORDER BY id") %}
<Button id="share_{{ p.id }}" text="Share {{ p.name }}" on-click="share_photo" arg-id="{{ p.id }}" arg-name="{{ p.name }}"/>{% endfor %}
</LinearLayout>"#,
                    ),
                    (
                        "screens/pick.xml",
                        r#"<LinearLayout><TextView text="Pick {{ args.mime }}"/>{% for p in query("SELECT id, name FROM photos ORDER BY id") %}
<TextView id="photo" text="{{ p.name }}" on-click="picked" arg-id="{{ p.id }}" arg-name="{{ p.name }}"/>{% endfor %}
</LinearLayout>"#,
                    ),
                ],
            ),
            (
                "mail",
                &[
                    (
                        "app.toml",
                        "id = \"mail\"\nname = \"Mail\"\npackage = \"com.example.mail\"\nentry = \"compose\"\nicon = \"mail\"\n[share]\nmime = [\"text/plain\", \"image/*\"]\naction = \"receive\"\n",
                    ),
                    (
                        "schema.sql",
                        "CREATE TABLE attachments (id INTEGER PRIMARY KEY, file_id INTEGER, name TEXT, draft TEXT);",
                    ),
                    ("actions.toml", MAIL_ACTIONS),
                    (
                        "screens/compose.xml",
                        r#"<LinearLayout>
<TextView id="subject" text="Subject: {{ args.subject or '' }} file {{ args.file_id or '-' }}"/>
<Button id="attach" text="Attach" on-click="attach" arg-draft="d1"/>
<Button id="share_text" text="Share text" on-click="share_text"/>
{% for a in query("SELECT name FROM attachments") %}<TextView text="Attachment {{ a.name }}"/>{% endfor %}
</LinearLayout>"#,
                    ),
                ],
            ),
            (
                "camera",
                &[
                    (
                        "app.toml",
                        "id = \"camera\"\nname = \"Camera\"\npackage = \"com.example.camera\"\nentry = \"viewfinder\"\nicon = \"photo_camera\"\nwrites = [\"gallery\"]\n",
                    ),
                    ("schema.sql", "CREATE TABLE settings (k TEXT);"),
                    ("actions.toml", CAMERA_ACTIONS),
                    (
                        "screens/viewfinder.xml",
                        r#"<LinearLayout><Button id="shutter" text="Shutter" on-click="shoot"/><Button id="broken" text="Broken" on-click="shoot_and_fail"/></LinearLayout>"#,
                    ),
                ],
            ),
        ],
    )
}

#[test]
fn pick_opens_the_picking_app_and_return_hands_the_choice_back() {
    let root = intent_apps("pick");
    let mut phone = phone(&root);
    act(&mut phone, Action::OpenApp { app: "mail".into() });
    tap(&mut phone, "attach");
    assert_eq!(phone.current_screen(), Some(("gallery", "pick")), "the only app that picks images opens");
    assert!(find(&mut phone, "Pick image/*").is_some());
    tap(&mut phone, "dog.jpg");
    assert_eq!(phone.current_screen(), Some(("mail", "compose")), "back in the asking app");
    assert_eq!(
        query_value(&phone, "mail", "SELECT name || '/' || file_id || '/' || draft FROM attachments"),
        "dog.jpg/2/d1"
    );
    assert!(find(&mut phone, "Attachment dog.jpg").is_some());
    // Back from the picker without choosing: nothing is attached.
    tap(&mut phone, "attach");
    act(&mut phone, Action::Key { key: Key::Back });
    assert_eq!(phone.current_screen(), Some(("mail", "compose")));
    assert_eq!(query_value(&phone, "mail", "SELECT count(*) FROM attachments"), 1);
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn the_share_sheet_lists_the_apps_that_accept_the_type() {
    let root = intent_apps("share");
    let mut phone = phone(&root);
    act(&mut phone, Action::OpenApp { app: "gallery".into() });
    tap(&mut phone, "Share beach.jpg");
    assert!(find(&mut phone, "Share").is_some(), "the sheet's title");
    assert!(find(&mut phone, "Mail").is_some(), "Mail accepts images");
    assert!(find(&mut phone, "Copy").is_none(), "no text to copy");
    assert!(find(&mut phone, "Camera").is_none(), "Camera accepts nothing");
    tap(&mut phone, "Mail");
    assert_eq!(phone.current_screen(), Some(("mail", "compose")));
    assert!(find(&mut phone, "Subject: beach.jpg file 1").is_some());
    act(&mut phone, Action::Key { key: Key::Back });
    act(&mut phone, Action::Key { key: Key::Back });
    assert_eq!(phone.current_screen(), Some(("gallery", "grid")), "back returns to the sharing app");
    // Text: Copy is offered.
    act(&mut phone, Action::OpenApp { app: "mail".into() });
    tap(&mut phone, "share_text");
    tap(&mut phone, "Copy");
    assert_eq!(phone.clipboard(), Some("See you at 7"));
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn an_app_writes_another_apps_database_only_as_a_whole_action() {
    let root = intent_apps("writes");
    let mut phone = phone(&root);
    act(&mut phone, Action::OpenApp { app: "camera".into() });
    tap(&mut phone, "shutter");
    assert_eq!(query_value(&phone, "gallery", "SELECT count(*) FROM photos"), 3);
    let outcome = tap(&mut phone, "broken");
    assert!(outcome.notes.join("\n").contains("keeps stopping"), "{:?}", outcome.notes);
    assert_eq!(
        query_value(&phone, "gallery", "SELECT count(*) FROM photos"),
        3,
        "the failed action's write to Gallery is undone"
    );
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn writing_another_app_needs_writes_in_the_manifest() {
    let root = intent_apps("no-writes");
    let manifest = root.join("camera/app.toml");
    let text = std::fs::read_to_string(&manifest).expect("read").replace("writes = [\"gallery\"]\n", "");
    std::fs::write(&manifest, text).expect("write");
    let err = Catalog::load_dir(&root).expect_err("refused").to_string();
    assert!(err.contains("actions.toml:4") && err.contains("writes = [\"gallery\"]"), "{err}");
    // SQL that does not fit the other app's schema is a load error too.
    std::fs::write(&manifest, "id = \"camera\"\nname = \"Camera\"\npackage = \"com.example.camera\"\nentry = \"viewfinder\"\nwrites = [\"gallery\"]\n").expect("write");
    let actions = root.join("camera/actions.toml");
    let text = std::fs::read_to_string(&actions)
        .expect("read")
        .replace("INSERT INTO photos (name) VALUES ('IMG_'", "INSERT INTO photoz (name) VALUES ('IMG_'");
    std::fs::write(&actions, text).expect("write");
    let err = Catalog::load_dir(&root).expect_err("refused").to_string();
    assert!(err.contains("photoz") && err.contains("gallery"), "{err}");
    let _ = std::fs::remove_dir_all(root);
}
