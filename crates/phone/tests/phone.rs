//! The phone through its public API, on the real app packages in `apps/`.
//!
//! Elements are found by resource id, text or content-desc and touched at their centre with a
//! point target (never by index), so the tests survive template changes.

use std::path::{Path, PathBuf};

use phonebench_actions::{Action, Direction, Key, Point, Target};
use phonebench_apps::AppPackage;
use phonebench_observe::{Observation, ObservationFormat, render};
use phonebench_phone::system::KEYBOARD;
use phonebench_phone::{CLOCK_START_MS, Catalog, Foreground, Outcome, Phone, PhoneConfig};
use phonebench_uitree::{Bounds, Node, NodeId, WindowKind};

// --- helpers -------------------------------------------------------------------------------------

fn apps_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps")
}

fn new_phone(seed: u64) -> Phone {
    let catalog = Catalog::load_dir(&apps_dir()).expect("the real apps load");
    Phone::new(catalog, PhoneConfig { seed, ..PhoneConfig::default() }).expect("the phone starts")
}

/// Whether `node` is what `key` names: its resource id (`<package>:id/<key>` or the whole id),
/// its text or its content-desc.
fn matches(node: &Node, key: &str) -> bool {
    node.text == key
        || node.content_desc == key
        || node.resource_id == key
        || node.resource_id.strip_suffix(key).is_some_and(|rest| rest.ends_with(":id/"))
}

/// The first node named `key` in the topmost window that has one.
fn find(phone: &mut Phone, key: &str) -> Option<(NodeId, Node)> {
    let tree = phone.tree().expect("the screen renders");
    for window in tree.windows_top_down() {
        let root = tree.window(window).root;
        if let Some(id) = tree.dfs(root).find(|&id| matches(tree.node(id), key)) {
            return Some((id, tree.node(id).clone()));
        }
    }
    None
}

/// Whether anything named `key` is on screen.
fn shows(phone: &mut Phone, key: &str) -> bool {
    find(phone, key).is_some()
}

/// The screen as text, for failure messages.
fn dump(phone: &mut Phone) -> String {
    let place = format!("{:?} {:?}", phone.foreground(), phone.current_screen());
    let tree = phone.tree().expect("the screen renders");
    format!("{place}\n{}", render(tree, ObservationFormat::SphinxTree).text)
}

/// The node named `key`, or a failure showing the screen.
fn expect_node(phone: &mut Phone, key: &str) -> Node {
    match find(phone, key) {
        Some((_, node)) => node,
        None => panic!("no `{key}` on screen:\n{}", dump(phone)),
    }
}

/// The text of the node named `key`.
fn text_of(phone: &mut Phone, key: &str) -> String {
    expect_node(phone, key).text
}

fn centre(bounds: Bounds) -> Target {
    let (x, y) = bounds.center();
    Target::Point(Point { x, y })
}

fn act(phone: &mut Phone, action: Action) -> Outcome {
    match phone.apply(&action) {
        Ok(outcome) => outcome,
        Err(e) => panic!("{action:?} failed: {e}\n{}", dump(phone)),
    }
}

/// A point target at the centre of the node named `key`.
fn target_of(phone: &mut Phone, key: &str) -> Target {
    centre(expect_node(phone, key).bounds)
}

/// Taps the centre of the node named `key`.
fn tap(phone: &mut Phone, key: &str) -> Outcome {
    let target = target_of(phone, key);
    act(phone, Action::Tap { target })
}

/// Long-presses the centre of the node named `key`.
fn long_press(phone: &mut Phone, key: &str) -> Outcome {
    let target = target_of(phone, key);
    act(phone, Action::LongPress { target })
}

fn open(phone: &mut Phone, app: &str) -> Outcome {
    act(phone, Action::OpenApp { app: app.to_string() })
}

fn key(phone: &mut Phone, key: Key) -> Outcome {
    act(phone, Action::Key { key })
}

fn back(phone: &mut Phone) -> Outcome {
    key(phone, Key::Back)
}

fn type_text(phone: &mut Phone, text: &str) -> Outcome {
    act(phone, Action::Type { text: text.to_string(), target: None, clear: false, enter: false })
}

fn scroll(phone: &mut Phone, direction: Direction) -> Outcome {
    act(phone, Action::Scroll { direction, target: None })
}

fn screen(phone: &Phone) -> Option<(String, String)> {
    phone.current_screen().map(|(a, s)| (a.to_string(), s.to_string()))
}

fn at(app: &str, screen: &str) -> Option<(String, String)> {
    Some((app.to_string(), screen.to_string()))
}

/// One value of a one-row, one-column query.
fn query_value(phone: &Phone, app: &str, sql: &str) -> serde_json::Value {
    let rows = phone.query(app, sql).expect("the query runs");
    let row = rows.first().unwrap_or_else(|| panic!("`{sql}` returned no rows"));
    row.as_object()
        .and_then(|o| o.values().next().cloned())
        .unwrap_or_else(|| panic!("`{sql}` returned an empty row"))
}

fn query_text(phone: &Phone, app: &str, sql: &str) -> String {
    match query_value(phone, app, sql) {
        serde_json::Value::String(s) => s,
        other => panic!("`{sql}` returned {other}, not text"),
    }
}

/// Bounds of the root of the foreground app's main window (layer 0).
fn app_window_bounds(phone: &mut Phone) -> Bounds {
    let tree = phone.tree().expect("the screen renders");
    let window = tree
        .windows()
        .iter()
        .find(|w| w.kind == WindowKind::Application && w.layer == 0)
        .expect("an application window");
    tree.node(window.root).bounds
}

fn has_keyboard_window(phone: &mut Phone) -> bool {
    let tree = phone.tree().expect("the screen renders");
    tree.windows_top_down().into_iter().any(|w| tree.window_package(w) == KEYBOARD)
}

/// Messages: opens the newest conversation from the list.
fn open_first_thread(phone: &mut Phone) {
    open(phone, "messages");
    assert_eq!(screen(phone), at("messages", "list"));
    tap(phone, "swipeableContainer");
    assert_eq!(screen(phone), at("messages", "conversation"), "{}", dump(phone));
}

/// Contacts: opens `name`'s details from the list.
fn open_contact(phone: &mut Phone, name: &str) {
    open(phone, "contacts");
    assert_eq!(screen(phone), at("contacts", "list"));
    tap(phone, name);
    assert_eq!(screen(phone), at("contacts", "detail"), "{}", dump(phone));
    assert_eq!(text_of(phone, "large_title"), name);
}

const APPS: [&str; 3] = ["contacts", "messages", "settings"];

// --- input reaches what is drawn ------------------------------------------------------------------

/// A tap at a list row's centre (a point, as coordinate agents send) opens it.
#[test]
fn point_tap_on_a_list_row_opens_it() {
    let mut phone = new_phone(0);
    open(&mut phone, "contacts");
    let row = expect_node(&mut phone, "Lucia Fernandez");
    let outcome = act(&mut phone, Action::Tap { target: centre(row.bounds) });
    assert_eq!(screen(&phone), at("contacts", "detail"), "notes: {:?}", outcome.notes);
    assert!(outcome.notes.is_empty(), "{:?}", outcome.notes);
}

/// A finger swipe up on the Contacts list scrolls it.
#[test]
fn swipe_on_a_list_scrolls_it() {
    let mut phone = new_phone(0);
    open(&mut phone, "contacts");
    let list = expect_node(&mut phone, "contact_list").bounds;
    let before = phone.tree().expect("tree").clone();
    let (x, y) = list.center();
    let swipe = phonebench_actions::Swipe::Between {
        from: Point { x, y: y + list.height() as i32 / 4 },
        to: Point { x, y: y - list.height() as i32 / 4 },
    };
    let outcome = act(&mut phone, Action::Swipe(swipe));
    assert!(outcome.notes.is_empty(), "{:?}", outcome.notes);
    assert_ne!(phone.tree().expect("tree"), &before, "the list moved");
}

/// A minimal package: a button and a list, under a full-screen, non-clickable layer that holds a
/// floating button in the corner (the CoordinatorLayout/FAB pattern), in `<tmp>/<case>/probe`.
fn layered_phone(case: &str) -> (Phone, PathBuf) {
    let files = [
        ("schema.sql", "CREATE TABLE taps (id INTEGER PRIMARY KEY, what TEXT NOT NULL);\n"),
        ("actions.toml", "[tapped]\nsteps = [{ sql = \"INSERT INTO taps (what) VALUES (:what)\" }]\n"),
    ];
    let (root, dir) = phonebench_testkit::probe_package(&format!("phone-{case}"), &files);
    let rows: String = (0..40)
        .map(|i| format!("      <TextView id=\"row\" text=\"Row {i}\" height=\"56\" width=\"match\"/>\n"))
        .collect();
    let screen = format!(
        "<FrameLayout width=\"match\" height=\"match\">\n\
         \x20 <LinearLayout width=\"match\" height=\"match\">\n\
         \x20   <Button id=\"under\" text=\"Under\" on-click=\"tapped\" arg-what=\"under\"/>\n\
         \x20   <RecyclerView id=\"list\" width=\"match\" weight=\"1\">\n{rows}    </RecyclerView>\n\
         \x20 </LinearLayout>\n\
         \x20 <LinearLayout width=\"match\" height=\"match\" justify=\"end\" align=\"end\" padding=\"16\">\n\
         \x20   <ImageButton id=\"fab\" desc=\"Fab\" on-click=\"tapped\" arg-what=\"fab\"/>\n\
         \x20 </LinearLayout>\n\
         </FrameLayout>\n"
    );
    std::fs::write(dir.join("screens/main.xml"), screen).expect("write the screen");
    let package = AppPackage::load(&dir).unwrap_or_else(|e| panic!("the probe package loads: {e}"));
    let catalog = Catalog::new(vec![package]).unwrap_or_else(|e| panic!("the probe catalog loads: {e}"));
    let mut phone = Phone::new(catalog, PhoneConfig::default()).expect("the phone starts");
    open(&mut phone, "probe");
    (phone, root)
}

/// Android passes a touch that a view does not consume on to the views under it: a full-screen
/// layer that is not clickable (here, the one holding a floating button) does not block taps,
/// long presses or swipes on what is drawn below.
#[test]
fn touches_pass_through_a_non_clickable_layer_to_views_below() {
    let (mut phone, root) = layered_phone("layer");
    let taps = "SELECT group_concat(what, ',') FROM taps";

    let fab = expect_node(&mut phone, "fab").bounds;
    act(&mut phone, Action::Tap { target: centre(fab) });
    assert_eq!(query_value(&phone, "probe", taps), serde_json::json!("fab"), "the layer's own button works");

    let under = expect_node(&mut phone, "under").bounds;
    let outcome = act(&mut phone, Action::Tap { target: centre(under) });
    assert_eq!(
        query_value(&phone, "probe", taps),
        serde_json::json!("fab,under"),
        "a tap on the button under the layer reaches it; notes {:?}",
        outcome.notes
    );

    let list = expect_node(&mut phone, "list").bounds;
    assert!(!shows(&mut phone, "Row 39"));
    let (x, y) = list.center();
    let swipe = phonebench_actions::Swipe::Between {
        from: Point { x, y: y + list.height() as i32 / 4 },
        to: Point { x, y: y - list.height() as i32 / 4 },
    };
    let outcome = act(&mut phone, Action::Swipe(swipe));
    assert!(outcome.notes.is_empty(), "a swipe on the list under the layer scrolls it: {:?}", outcome.notes);
    assert!(!shows(&mut phone, "Row 0"), "the list scrolled");
    std::fs::remove_dir_all(root).expect("clean up");
}

// --- back stack ----------------------------------------------------------------------------------

#[test]
fn back_closes_keyboard_then_menu_then_pops_the_screen() {
    let mut phone = new_phone(0);
    open_contact(&mut phone, "Lucia Fernandez");
    tap(&mut phone, "Edit contact");
    assert_eq!(screen(&phone), at("contacts", "edit"));
    assert!(!phone.keyboard_shown(), "editing an existing contact does not focus a field");
    assert_eq!(text_of(&mut phone, "first_name"), "Lucia");

    // A long press on a field with text: the field takes focus (keyboard) and a Cut/Copy menu opens.
    long_press(&mut phone, "first_name");
    assert!(phone.keyboard_shown(), "{}", dump(&mut phone));
    assert!(shows(&mut phone, "Cut") && shows(&mut phone, "Copy"), "{}", dump(&mut phone));

    back(&mut phone);
    assert!(!phone.keyboard_shown(), "back closes the keyboard first");
    assert!(shows(&mut phone, "Cut"), "the menu stays while the keyboard closes");
    assert_eq!(screen(&phone), at("contacts", "edit"));

    back(&mut phone);
    assert!(!shows(&mut phone, "Cut"), "back closes the menu next");
    assert_eq!(screen(&phone), at("contacts", "edit"));

    back(&mut phone);
    assert_eq!(screen(&phone), at("contacts", "detail"), "then back pops the screen");
    back(&mut phone);
    assert_eq!(screen(&phone), at("contacts", "list"));

    // At the root, back goes to the launcher; the app keeps its (one-screen) stack.
    back(&mut phone);
    assert_eq!(phone.foreground(), Foreground::Home);
    assert_eq!(phone.foreground_app(), None);
    assert_eq!(phone.current_screen(), None);
    open(&mut phone, "contacts");
    assert_eq!(screen(&phone), at("contacts", "list"));
}

#[test]
fn back_closes_a_dialog_before_the_screen() {
    let mut phone = new_phone(0);
    open_contact(&mut phone, "Lucia Fernandez");
    tap(&mut phone, "More options");
    tap(&mut phone, "Delete");
    assert!(shows(&mut phone, "Delete this contact?"), "{}", dump(&mut phone));
    back(&mut phone);
    assert!(!shows(&mut phone, "Delete this contact?"), "back closes the dialog");
    assert_eq!(screen(&phone), at("contacts", "detail"));
    let left = query_value(
        &phone,
        "contacts",
        "SELECT count(*) FROM contacts WHERE display_name = 'Lucia Fernandez'",
    );
    assert_eq!(left, serde_json::json!(1), "closing the dialog deletes nothing");
    back(&mut phone);
    assert_eq!(screen(&phone), at("contacts", "list"));
}

#[test]
fn home_keeps_the_stack_and_restart_app_resets_it() {
    let mut phone = new_phone(0);
    open_contact(&mut phone, "Lucia Fernandez");

    key(&mut phone, Key::Home);
    assert_eq!(phone.foreground(), Foreground::Home);
    open(&mut phone, "contacts");
    assert_eq!(screen(&phone), at("contacts", "detail"), "home keeps the back stack");
    assert_eq!(text_of(&mut phone, "large_title"), "Lucia Fernandez");

    // The launcher icon does the same as open_app.
    key(&mut phone, Key::Home);
    tap(&mut phone, "Contacts");
    assert_eq!(screen(&phone), at("contacts", "detail"));

    // Back from the detail, then back at the root: the launcher.
    back(&mut phone);
    back(&mut phone);
    assert_eq!(phone.foreground(), Foreground::Home);

    open_contact(&mut phone, "Lucia Fernandez");
    act(&mut phone, Action::RestartApp { app: Some("contacts".into()) });
    assert_eq!(screen(&phone), at("contacts", "list"), "restart_app starts at the entry screen");

    tap(&mut phone, "Lucia Fernandez");
    assert_eq!(screen(&phone), at("contacts", "detail"));
    act(&mut phone, Action::RestartApp { app: None });
    assert_eq!(
        screen(&phone),
        at("contacts", "list"),
        "restart_app without an app restarts the one in front"
    );
}

// --- keyboard ------------------------------------------------------------------------------------

#[test]
fn keyboard_window_follows_text_field_focus_and_shrinks_the_app() {
    let mut phone = new_phone(0);
    open_first_thread(&mut phone);
    assert!(!phone.keyboard_shown(), "a conversation with messages does not focus its field");
    assert!(!has_keyboard_window(&mut phone));
    let full = app_window_bounds(&mut phone);

    tap(&mut phone, "compose_message_text");
    assert!(phone.keyboard_shown());
    assert!(has_keyboard_window(&mut phone), "{}", dump(&mut phone));
    let shrunk = app_window_bounds(&mut phone);
    assert!(shrunk.bottom < full.bottom, "the app's area shrinks: {shrunk:?} vs {full:?}");
    assert_eq!(shrunk.top, full.top);
    let keyboard_top = {
        let tree = phone.tree().expect("tree");
        let id = tree
            .windows_top_down()
            .into_iter()
            .find(|&w| tree.window_package(w) == KEYBOARD)
            .expect("keyboard window");
        tree.node(tree.window(id).root).bounds.top
    };
    assert!(shrunk.bottom <= keyboard_top, "the app ends where the keyboard starts");
    // The compose field is still on screen, above the keyboard.
    let field = expect_node(&mut phone, "compose_message_text");
    assert!(field.bounds.bottom <= keyboard_top, "{:?} is under the keyboard", field.bounds);

    // The keyboard's keys type into the focused field.
    tap(&mut phone, "h");
    tap(&mut phone, "i");
    assert_eq!(text_of(&mut phone, "compose_message_text"), "hi");

    back(&mut phone);
    assert!(!phone.keyboard_shown());
    assert!(!has_keyboard_window(&mut phone), "back hides the keyboard");
    assert_eq!(app_window_bounds(&mut phone), full, "the app gets its area back");
    assert_eq!(screen(&phone), at("messages", "conversation"), "that back did not leave the screen");
    assert_eq!(text_of(&mut phone, "compose_message_text"), "hi");
}

// --- scrolling -----------------------------------------------------------------------------------

#[test]
fn scrolling_attaches_and_detaches_list_items_and_stops_at_the_end() {
    let mut phone = new_phone(0);
    open(&mut phone, "contacts");
    let last = query_text(
        &phone,
        "contacts",
        "SELECT display_name FROM contacts ORDER BY display_name COLLATE NOCASE DESC LIMIT 1",
    );
    assert!(!shows(&mut phone, &last), "`{last}` is far down the list");

    let mut downs = 0;
    while !shows(&mut phone, &last) {
        let outcome = scroll(&mut phone, Direction::Down);
        downs += 1;
        assert!(downs < 40, "`{last}` never appeared; last notes {:?}", outcome.notes);
    }
    assert!(downs >= 2, "the list is longer than two screens ({downs} scrolls)");
    assert!(!shows(&mut phone, "Favorites"), "the top of the list scrolled away");

    for _ in 0..downs {
        scroll(&mut phone, Direction::Up);
    }
    assert!(!shows(&mut phone, &last), "scrolling back up detaches `{last}` again");
    assert!(shows(&mut phone, "Favorites"));
    let note = scroll(&mut phone, Direction::Up).notes;
    assert!(note.iter().any(|n| n.contains("top")), "scrolling above the top is noted: {note:?}");

    let mut at_end = false;
    for _ in 0..40 {
        let outcome = scroll(&mut phone, Direction::Down);
        if outcome.notes.iter().any(|n| n.contains("end")) {
            at_end = true;
            break;
        }
    }
    assert!(at_end, "scrolling down reaches the end");
    let before = phone.tree().expect("tree").clone();
    let outcome = scroll(&mut phone, Direction::Down);
    assert!(outcome.notes.iter().any(|n| n.contains("end")), "{:?}", outcome.notes);
    assert_eq!(phone.tree().expect("tree"), &before, "a scroll past the end changes nothing");
    assert!(shows(&mut phone, &last));
}

#[test]
fn scroll_position_survives_a_visit_to_another_screen() {
    let mut phone = new_phone(0);
    open(&mut phone, "settings");
    assert_eq!(screen(&phone), at("settings", "main"));
    let mut downs = 0;
    while !shows(&mut phone, "About phone") {
        scroll(&mut phone, Direction::Down);
        downs += 1;
        assert!(downs < 20, "`About phone` never appeared");
    }
    let list = expect_node(&mut phone, "About phone").bounds;
    tap(&mut phone, "About phone");
    assert_eq!(screen(&phone), at("settings", "about"));
    back(&mut phone);
    assert_eq!(screen(&phone), at("settings", "main"));
    assert_eq!(expect_node(&mut phone, "About phone").bounds, list, "the list is where it was left");
}

// --- clipboard -----------------------------------------------------------------------------------

#[test]
fn context_menu_copies_text_and_pastes_it_into_a_field() {
    let mut phone = new_phone(0);
    let number =
        query_text(&phone, "contacts", "SELECT phone FROM contacts WHERE display_name = 'Lucia Fernandez'");
    open_contact(&mut phone, "Lucia Fernandez");

    long_press(&mut phone, &number);
    assert!(shows(&mut phone, "Copy"), "{}", dump(&mut phone));
    assert!(!shows(&mut phone, "Paste"), "nothing to paste into a text view");
    tap(&mut phone, "Copy");
    assert_eq!(phone.clipboard(), Some(number.as_str()));
    assert!(!shows(&mut phone, "Copy"), "choosing an item closes the menu");

    back(&mut phone);
    tap(&mut phone, "Search contacts");
    assert_eq!(screen(&phone), at("contacts", "search"));
    assert_eq!(text_of(&mut phone, "search_view"), "");

    // An empty field offers only Paste.
    long_press(&mut phone, "search_view");
    assert!(shows(&mut phone, "Paste"), "{}", dump(&mut phone));
    assert!(!shows(&mut phone, "Cut") && !shows(&mut phone, "Copy"));
    tap(&mut phone, "Paste");
    assert_eq!(text_of(&mut phone, "search_view"), number);
    assert!(shows(&mut phone, "Lucia Fernandez"), "the pasted number finds the contact");

    // A field with text: Copy takes the field's text.
    act(&mut phone, Action::Type { text: "Zoe".into(), target: None, clear: true, enter: false });
    assert_eq!(text_of(&mut phone, "search_view"), "Zoe");
    long_press(&mut phone, "search_view");
    assert!(shows(&mut phone, "Cut") && shows(&mut phone, "Copy") && shows(&mut phone, "Paste"));
    tap(&mut phone, "Copy");
    assert_eq!(phone.clipboard(), Some("Zoe"));
    // Cut empties the field and keeps the text.
    long_press(&mut phone, "search_view");
    tap(&mut phone, "Cut");
    assert_eq!(text_of(&mut phone, "search_view"), "");
    assert_eq!(phone.clipboard(), Some("Zoe"));
}

// --- app switching -------------------------------------------------------------------------------

#[test]
fn switching_apps_keeps_each_apps_screen_and_unsent_text() {
    let mut phone = new_phone(0);
    open_contact(&mut phone, "Lucia Fernandez");
    open(&mut phone, "messages");
    assert_eq!(screen(&phone), at("messages", "list"));
    key(&mut phone, Key::Home);
    open(&mut phone, "contacts");
    assert_eq!(screen(&phone), at("contacts", "detail"));
    assert_eq!(text_of(&mut phone, "large_title"), "Lucia Fernandez");

    // A draft typed in a conversation survives leaving and coming back.
    open_first_thread(&mut phone);
    tap(&mut phone, "compose_message_text");
    type_text(&mut phone, "draft: see you at 6");
    open(&mut phone, "contacts");
    assert_eq!(screen(&phone), at("contacts", "detail"));
    key(&mut phone, Key::Home);
    open(&mut phone, "messages");
    assert_eq!(screen(&phone), at("messages", "conversation"));
    assert_eq!(text_of(&mut phone, "compose_message_text"), "draft: see you at 6");

    // The overview brings an app back the same way.
    key(&mut phone, Key::AppSwitch);
    assert_eq!(phone.foreground(), Foreground::Overview);
    tap(&mut phone, "Contacts");
    assert_eq!(screen(&phone), at("contacts", "detail"));
    let unsent = query_value(&phone, "messages", "SELECT count(*) FROM messages WHERE body LIKE 'draft%'");
    assert_eq!(unsent, serde_json::json!(0), "a draft is not a message");
}

#[test]
fn send_message_from_contacts_opens_messages_and_back_returns() {
    let mut phone = new_phone(0);
    let number =
        query_text(&phone, "contacts", "SELECT phone FROM contacts WHERE display_name = 'Lucia Fernandez'");
    open_contact(&mut phone, "Lucia Fernandez");
    tap(&mut phone, "Send message");
    assert_eq!(phone.foreground_app(), Some("messages"));
    assert_eq!(screen(&phone), at("messages", "conversation"));
    assert_eq!(text_of(&mut phone, "conversation_title"), "Lucia Fernandez", "the recipient is filled in");

    tap(&mut phone, "compose_message_text");
    type_text(&mut phone, "On my way");
    tap(&mut phone, "Send SMS");
    let sent = phone
        .query(
            "messages",
            "SELECT t.address, m.body, m.outgoing FROM messages m JOIN threads t ON t.id = m.thread_id \
             ORDER BY m.id DESC LIMIT 1",
        )
        .expect("query");
    let digits = |s: &str| s.chars().filter(char::is_ascii_digit).collect::<String>();
    assert_eq!(sent[0]["body"], "On my way");
    assert_eq!(sent[0]["outgoing"], 1);
    let address = sent[0]["address"].as_str().expect("address is text");
    assert!(digits(address).ends_with(&digits(&number)), "sent to {address}, not {number}");
    assert_eq!(text_of(&mut phone, "compose_message_text"), "", "sending empties the field");
    let event = phone.events().last().expect("an event").clone();
    assert_eq!((event.app.as_str(), event.name.as_str()), ("messages", "message_sent"));
    assert_eq!(event.data["body"], "On my way");

    if phone.keyboard_shown() {
        back(&mut phone);
    }
    back(&mut phone);
    assert_eq!(phone.foreground_app(), Some("contacts"), "back returns to the app that opened Messages");
    assert_eq!(screen(&phone), at("contacts", "detail"));
    assert_eq!(text_of(&mut phone, "large_title"), "Lucia Fernandez");
}

// --- reset ---------------------------------------------------------------------------------------

#[test]
fn reset_restores_every_database_byte_for_byte_and_clears_the_session() {
    let mut phone = new_phone(7);
    let pristine: Vec<Vec<u8>> =
        APPS.iter().map(|app| phone.database_bytes(app).expect("database bytes")).collect();
    let first_screen = phone.observe(ObservationFormat::Uiautomator).expect("observe");

    // Contacts: star a contact and copy its number.
    let unstarred = phone
        .query(
            "contacts",
            "SELECT display_name, phone FROM contacts WHERE starred = 0 AND phone <> '' \
             ORDER BY display_name COLLATE NOCASE, id LIMIT 1",
        )
        .expect("query");
    let name = unstarred[0]["display_name"].as_str().expect("a name").to_string();
    let number = unstarred[0]["phone"].as_str().expect("a number").to_string();
    open_contact(&mut phone, &name);
    tap(&mut phone, "Add to favorites");
    long_press(&mut phone, &number);
    tap(&mut phone, "Copy");
    // Messages: send a message.
    open_first_thread(&mut phone);
    tap(&mut phone, "compose_message_text");
    type_text(&mut phone, "reset me");
    tap(&mut phone, "Send SMS");
    // Settings: flip a switch.
    open(&mut phone, "settings");
    tap(&mut phone, "Display");
    assert_eq!(screen(&phone), at("settings", "display"));
    let adaptive = "SELECT value FROM settings WHERE key = 'adaptive_brightness'";
    let was = query_text(&phone, "settings", adaptive);
    tap(&mut phone, "Adaptive brightness");
    assert_ne!(query_text(&phone, "settings", adaptive), was, "the switch changed the setting");

    for (app, bytes) in APPS.iter().zip(&pristine) {
        assert_ne!(&phone.database_bytes(app).expect("bytes"), bytes, "{app} changed");
    }
    assert!(phone.events().len() >= 3, "{:?}", phone.events());
    assert!(phone.clipboard().is_some());
    assert!(phone.now_ms() > CLOCK_START_MS);

    phone.reset().expect("reset");
    for (app, bytes) in APPS.iter().zip(&pristine) {
        assert!(&phone.database_bytes(app).expect("bytes") == bytes, "{app} is restored byte for byte");
    }
    assert!(phone.events().is_empty());
    assert_eq!(phone.clipboard(), None);
    assert_eq!(phone.now_ms(), CLOCK_START_MS);
    assert_eq!(phone.foreground(), Foreground::Home);
    assert_eq!(phone.observe(ObservationFormat::Uiautomator).expect("observe"), first_screen);
    open(&mut phone, "contacts");
    assert_eq!(screen(&phone), at("contacts", "list"), "back stacks are gone");

    // A reset phone behaves as a new one with the same seed.
    let mut fresh = new_phone(7);
    open(&mut fresh, "contacts");
    for format in ObservationFormat::ALL {
        assert_eq!(phone.observe(format).expect("observe"), fresh.observe(format).expect("observe"));
    }
}

// --- determinism ---------------------------------------------------------------------------------

fn script() -> Vec<Action> {
    let tap = |i: u32| Action::Tap { target: Target::Index(i) };
    let point = |x: i32, y: i32| Action::Tap { target: Target::Point(Point { x, y }) };
    let scroll = |direction| Action::Scroll { direction, target: None };
    let key = |key| Action::Key { key };
    let text = |t: &str| Action::Type { text: t.to_string(), target: None, clear: false, enter: false };
    vec![
        Action::OpenApp { app: "Contacts".into() },
        tap(3),
        key(Key::Back),
        scroll(Direction::Down),
        scroll(Direction::Down),
        tap(5),
        Action::LongPress { target: Target::Index(6) },
        key(Key::Back),
        key(Key::Back),
        tap(1),
        text("Ana"),
        key(Key::Back),
        tap(0),
        Action::OpenApp { app: "messages".into() },
        tap(2),
        point(540, 2150),
        text("hello there"),
        key(Key::Enter),
        key(Key::Back),
        key(Key::Home),
        Action::OpenApp { app: "Settings".into() },
        scroll(Direction::Down),
        tap(4),
        key(Key::Back),
        key(Key::AppSwitch),
        tap(0),
        Action::Wait { ms: Some(5_000) },
        Action::Swipe(phonebench_actions::Swipe::Between {
            from: Point { x: 540, y: 1800 },
            to: Point { x: 540, y: 600 },
        }),
        Action::RestartApp { app: None },
        point(540, 1200),
    ]
}

/// Every format, SphinxTree last (so indexes in the next action refer to it).
fn observe_all(phone: &mut Phone) -> Vec<Observation> {
    let mut out: Vec<Observation> = ObservationFormat::ALL
        .into_iter()
        .filter(|&f| f != ObservationFormat::SphinxTree)
        .map(|f| phone.observe(f).expect("observe"))
        .collect();
    out.push(phone.observe(ObservationFormat::SphinxTree).expect("observe"));
    out
}

#[test]
fn same_seed_and_actions_give_identical_observations_in_every_format() {
    let script = script();
    assert_eq!(script.len(), 30);
    let (mut a, mut b) = (new_phone(42), new_phone(42));
    assert_eq!(observe_all(&mut a), observe_all(&mut b));
    let mut seen = std::collections::BTreeSet::new();
    for (step, action) in script.iter().enumerate() {
        let (ra, rb) = (a.apply(action), b.apply(action));
        assert_eq!(ra, rb, "step {step}: {action:?}");
        let (oa, ob) = (observe_all(&mut a), observe_all(&mut b));
        assert_eq!(oa.len(), ObservationFormat::ALL.len());
        for (x, y) in oa.iter().zip(&ob) {
            assert!(x.text == y.text && x.targets == y.targets, "step {step} ({action:?}), {}", x.format);
        }
        assert_eq!(a.events(), b.events(), "step {step}");
        seen.insert(format!("{:?}", a.current_screen()));
    }
    for app in APPS {
        assert!(a.database_bytes(app).expect("bytes") == b.database_bytes(app).expect("bytes"), "{app}");
    }
    assert!(seen.len() >= 5, "the script visits several screens: {seen:?}");
}

// --- typed text is data --------------------------------------------------------------------------

const TRICKY: [&str; 7] = [
    "'); DROP TABLE messages; --",
    "{{ 7*7 }}",
    "{% if %}",
    "\"a\" 'b'",
    "😀👍",
    "你好，世界",
    "<b>&amp;</b> {# x #} :to",
];

#[test]
fn characters_xml_cannot_hold_are_entered_and_shown_as_replacement_characters() {
    // A model may type NUL or other control characters: the phone lets them in as U+FFFD (XML,
    // and so no screen, can hold them), says so, and the screen still renders.
    let mut phone = new_phone(0);
    open_first_thread(&mut phone);
    let field = expect_node(&mut phone, "compose_message_text");
    let text = "a\u{0}b\u{1}c\u{b}d\u{FFFE}e";
    let entered = "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}e";
    let outcome = act(
        &mut phone,
        Action::Type { text: text.into(), target: Some(centre(field.bounds)), clear: true, enter: false },
    );
    assert!(outcome.notes.iter().any(|n| n.contains("4 character(s)")), "{:?}", outcome.notes);
    assert_eq!(text_of(&mut phone, "compose_message_text"), entered, "the field holds what was let in");
    tap(&mut phone, "Send SMS");
    let body = query_text(&phone, "messages", "SELECT body FROM messages ORDER BY id DESC LIMIT 1");
    assert_eq!(body, entered, "stored as let in");
    // The bubble is rendered from the database through the screen's template.
    let tree = phone.tree().expect("the conversation renders");
    let bubble = tree
        .iter()
        .filter(|(_, n)| n.resource_id.ends_with(":id/message_text"))
        .last()
        .map(|(_, n)| n.text.clone());
    assert_eq!(bubble.as_deref(), Some(entered));
    for format in ObservationFormat::ALL {
        phone.observe(format).expect("every observation format renders");
    }
    phone.screenshot().expect("the screen draws");
}

#[test]
fn typed_text_is_stored_and_shown_verbatim() {
    let mut phone = new_phone(0);
    for text in TRICKY {
        phone.reset().expect("reset");
        open_first_thread(&mut phone);
        let field = expect_node(&mut phone, "compose_message_text");
        act(
            &mut phone,
            Action::Type {
                text: text.to_string(),
                target: Some(centre(field.bounds)),
                clear: true,
                enter: false,
            },
        );
        assert_eq!(text_of(&mut phone, "compose_message_text"), text, "the field holds the text");
        tap(&mut phone, "Send SMS");

        let body = query_text(&phone, "messages", "SELECT body FROM messages ORDER BY id DESC LIMIT 1");
        assert_eq!(body, text, "stored verbatim");
        let tables =
            query_value(&phone, "messages", "SELECT count(*) FROM sqlite_master WHERE name = 'messages'");
        assert_eq!(tables, serde_json::json!(1), "the messages table is still there");
        let event = phone.events().last().expect("message_sent").clone();
        assert_eq!(event.data["body"], text);

        let tree = phone.tree().expect("tree");
        let shown: Vec<&str> = tree
            .iter()
            .filter(|(_, n)| n.resource_id.ends_with(":id/message_text"))
            .map(|(_, n)| n.text.as_str())
            .collect();
        assert_eq!(shown.last().copied(), Some(text), "the newest bubble shows the text: {shown:?}");
        assert!(!shown.contains(&"49"), "`{{{{ 7*7 }}}}` was not evaluated");
        let observation = phone.observe(ObservationFormat::SphinxTree).expect("observe");
        assert!(observation.text.contains(text), "sphinx-tree shows `{text}`:\n{}", observation.text);
        let elements = phone.observe(ObservationFormat::Elements).expect("observe");
        let json = serde_json::to_string(text).expect("json");
        assert!(elements.text.contains(&json[1..json.len() - 1]), "elements show `{text}`");

        // The conversation list shows it as the snippet.
        back(&mut phone);
        if screen(&phone) != at("messages", "list") {
            back(&mut phone);
        }
        assert_eq!(screen(&phone), at("messages", "list"));
        assert_eq!(text_of(&mut phone, "conversation_snippet"), format!("You: {text}"));
    }
}

// --- malformed packages --------------------------------------------------------------------------

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy");
    for entry in std::fs::read_dir(from).expect("list the package") {
        let path = entry.expect("entry").path();
        let target = to.join(path.file_name().expect("file name"));
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("copy a file");
        }
    }
}

/// A fresh copy of `apps/contacts` in a unique temporary folder `<tmp>/<case>/contacts`.
fn contacts_copy(case: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("phonebench-phone-{}-{case}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join("contacts");
    copy_dir(&apps_dir().join("contacts"), &dir);
    dir
}

/// Replaces the first `from` in `dir/file` with `to`; returns the 1-based line it was on.
fn break_file(dir: &Path, file: &str, from: &str, to: &str) -> usize {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).expect("read the file");
    let at = text.find(from).unwrap_or_else(|| panic!("`{from}` is not in {file}"));
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write the file");
    text[..at].matches('\n').count() + 1
}

/// Loading the broken package, alone and in a catalog, fails with `file:line: ...words...`.
fn assert_load_error(dir: &Path, file: &str, line: usize, words: &[&str]) {
    let err = match AppPackage::load(dir) {
        Ok(_) => panic!("{file}: the broken package loaded"),
        Err(e) => e.to_string(),
    };
    let place = format!("{file}:{line}: ");
    assert!(err.contains(&place), "`{err}` does not name {place}");
    for word in words {
        assert!(err.contains(word), "`{err}` does not say `{word}`");
    }
    let parent = dir.parent().expect("parent");
    let catalog_err = match Catalog::load_dir(parent) {
        Ok(_) => panic!("{file}: the catalog loaded"),
        Err(e) => e.to_string(),
    };
    assert_eq!(catalog_err, err);
    std::fs::remove_dir_all(parent).expect("clean up");
}

#[test]
fn unclosed_template_block_fails_with_file_and_line() {
    let dir = contacts_copy("unclosed");
    let file = "screens/search.xml";
    break_file(
        &dir,
        file,
        "<LinearLayout id=\"search_root\"",
        "{% if q %}\n<LinearLayout id=\"search_root\"",
    );
    let lines = std::fs::read_to_string(dir.join(file)).expect("read").lines().count();
    let err = AppPackage::load(&dir).map(|_| ()).expect_err("an unclosed `if` does not load").to_string();
    // minijinja notices an unclosed block where the input ends, so the line is near the end.
    let line = err
        .split("search.xml:")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("`{err}` does not name search.xml:<line>:"));
    assert!((1..=lines).contains(&line), "line {line} is not in the file ({lines} lines)");
    assert!(err.contains("syntax error") && err.contains("end of input"), "{err}");
    let catalog_err = Catalog::load_dir(dir.parent().expect("parent")).map(|_| ()).expect_err("catalog");
    assert_eq!(catalog_err.to_string(), err);
    std::fs::remove_dir_all(dir.parent().expect("parent")).expect("clean up");
}

#[test]
fn bad_template_syntax_fails_with_file_and_line() {
    let dir = contacts_copy("syntax");
    let line = break_file(
        &dir,
        "screens/detail.xml",
        "<LinearLayout id=\"detail_root\"",
        "{% if %}{% endif %}<LinearLayout id=\"detail_root\"",
    );
    assert_load_error(&dir, "detail.xml", line, &["syntax error"]);
}

#[test]
fn bad_sql_in_an_action_fails_with_file_and_line() {
    let dir = contacts_copy("sql");
    let line = break_file(&dir, "actions.toml", "DELETE FROM contacts WHERE", "DELETE FROM contactz WHERE");
    assert_load_error(&dir, "actions.toml", line, &["SQL error", "contactz", "delete_contact"]);
}

#[test]
fn unknown_on_click_action_fails_with_file_and_line() {
    let dir = contacts_copy("on-click");
    let line = break_file(&dir, "screens/list.xml", "on-click=\"open_search\"", "on-click=\"open_serch\"");
    assert_load_error(&dir, "list.xml", line, &["unknown action", "open_serch"]);
}

#[test]
fn navigate_to_a_missing_screen_fails_with_file_and_line() {
    let dir = contacts_copy("navigate");
    let line = break_file(&dir, "actions.toml", "navigate = \"detail\"", "navigate = \"detials\"");
    assert_load_error(&dir, "actions.toml", line, &["unknown screen", "detials"]);
}

#[test]
fn missing_entry_screen_fails_with_file_and_line() {
    let dir = contacts_copy("entry");
    let line = break_file(&dir, "app.toml", "entry = \"list\"", "entry = \"nowhere\"");
    assert_load_error(&dir, "app.toml", line, &["entry screen", "nowhere", "does not exist"]);
}

#[test]
fn bad_seed_sql_fails_with_file_and_line() {
    let dir = contacts_copy("seed");
    let seed = dir.join("seed.sql");
    let mut text = std::fs::read_to_string(&seed).expect("read seed");
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let line = text.lines().count() + 1;
    text.push_str("INSERT INTO contacts (id, nickname) VALUES (999, 'x');\n");
    std::fs::write(&seed, text).expect("write seed");
    assert_load_error(&dir, "seed.sql", line, &["nickname"]);
}

#[test]
fn toasts_do_not_take_touches() {
    let mut phone = new_phone(0);
    act(&mut phone, Action::OpenApp { app: "settings".into() });
    while !shows(&mut phone, "About phone") {
        scroll(&mut phone, Direction::Down);
    }
    tap(&mut phone, "About phone");
    for _ in 0..10 {
        if shows(&mut phone, "Build number") {
            break;
        }
        scroll(&mut phone, Direction::Down);
    }
    for _ in 0..7 {
        tap(&mut phone, "Build number");
    }
    act(&mut phone, Action::Key { key: Key::Back });
    // The "You are now a developer" toast is still up over the list; a tap on the row under it
    // reaches the row, as on Android.
    assert!(phone.tree().expect("renders").windows().iter().any(|w| w.layer == 10), "a toast is showing");
    let outcome = tap(&mut phone, "System");
    assert_eq!(
        phone.current_screen().map(|(_, s)| s.to_string()).as_deref(),
        Some("system"),
        "{outcome:?}\n{}",
        dump(&mut phone)
    );
}
