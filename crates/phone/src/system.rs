//! The phone's own UI: status bar, navigation bar, launcher, overview, keyboard, dialogs, menus
//! and toasts. Built as [`View`]s so the same layout engine gives them bounds, with the package
//! names and resource ids a Pixel phone uses.

use crate::display::Display;
use phonebench_pixels::Role;

use crate::view::{Align, Axis, Dim, Edges, Handler, InputType, Kind, SystemHandler, TextLook, View};

/// Package of the status and navigation bars.
pub const SYSTEMUI: &str = "com.android.systemui";
/// Package of the launcher.
pub const LAUNCHER: &str = "com.google.android.apps.nexuslauncher";
/// Package of the keyboard.
pub const KEYBOARD: &str = "com.google.android.inputmethod.latin";

fn text(d: &Display, class: &str, text: &str, sp: f32) -> View {
    let mut v = View::new(class, Kind::Text);
    v.text = text.to_string();
    v.look = Some(TextLook { size_px: d.dp(sp), bold: false, max_lines: None });
    v
}

fn group(axis: Axis) -> View {
    let mut v = View::new("android.widget.FrameLayout", Kind::Group);
    v.style.axis = axis;
    v
}

fn with_id(mut v: View, id: &str) -> View {
    v.resource_id = id.to_string();
    v
}

/// The status bar: clock, an icon per app with notifications (`notifying`: app name and icon),
/// and battery; see-through over the launcher's wallpaper.
pub fn status_bar(
    d: &Display,
    clock: &str,
    battery: u8,
    over_wallpaper: bool,
    notifying: &[(String, String)],
) -> View {
    let mut bar = with_id(group(Axis::Horizontal), "com.android.systemui:id/status_bar");
    bar.role = Some(if over_wallpaper { Role::Wallpaper } else { Role::StatusBar });
    bar.style.width = Dim::Match;
    bar.style.height = Dim::Match;
    bar.style.align = Align::Center;
    bar.style.justify = Align::Stretch;
    bar.style.padding = Edges { left: d.dp(24.0), right: d.dp(24.0), ..Edges::default() };
    let clock = with_id(text(d, "android.widget.TextView", clock, 14.0), "com.android.systemui:id/clock");
    let mut battery_view =
        with_id(View::new("android.widget.ImageView", Kind::Image), "com.android.systemui:id/battery");
    battery_view.desc = format!("Battery {battery} percent.");
    battery_view.role = Some(Role::Battery);
    battery_view.style.width = Dim::Px(d.dp(24.0));
    battery_view.style.height = Dim::Px(d.dp(16.0));
    let mut icons = with_id(group(Axis::Horizontal), "com.android.systemui:id/notification_icon_area");
    icons.style.weight = 1.0;
    icons.style.align = Align::Center;
    icons.style.gap = d.dp(4.0);
    icons.style.padding = Edges { left: d.dp(8.0), ..Edges::default() };
    for (app, icon) in notifying.iter().take(4) {
        let mut v = View::new("android.widget.ImageView", Kind::Image);
        v.desc = format!("{app} notification");
        v.icon = Some(icon.clone());
        v.role = Some(Role::Image);
        v.style.width = Dim::Px(d.dp(16.0));
        v.style.height = Dim::Px(d.dp(16.0));
        icons.children.push(v);
    }
    bar.children = vec![clock, icons, battery_view];
    bar
}

/// The three-button navigation bar; see-through over the launcher's wallpaper.
pub fn nav_bar(d: &Display, over_wallpaper: bool) -> View {
    let mut bar = with_id(group(Axis::Horizontal), "com.android.systemui:id/navigation_bar_frame");
    bar.role = Some(if over_wallpaper { Role::Wallpaper } else { Role::NavBar });
    bar.style.width = Dim::Match;
    bar.style.height = Dim::Match;
    bar.style.align = Align::Center;
    bar.style.justify = Align::Stretch;
    bar.style.padding = Edges { left: d.dp(56.0), right: d.dp(56.0), ..Edges::default() };
    let button = |id: &str, desc: &str, handler: SystemHandler, icon: &str| {
        let mut b = with_id(View::new("android.widget.ImageView", Kind::Image), id);
        b.desc = desc.to_string();
        b.role = Some(Role::IconButton);
        b.icon = Some(icon.to_string());
        b.clickable = true;
        b.hooks.on_click = Some(Handler::System(handler));
        b.style.width = Dim::Px(d.dp(64.0));
        b.style.height = Dim::Px(d.dp(48.0));
        b
    };
    bar.children = vec![
        button("com.android.systemui:id/back", "Back", SystemHandler::Back, "arrow_back_ios_new"),
        button("com.android.systemui:id/home", "Home", SystemHandler::Home, "circle"),
        button("com.android.systemui:id/recent_apps", "Overview", SystemHandler::Recents, "crop_square"),
    ];
    bar
}

/// The launcher's home screen: the apps not in the dock as a grid of icons (label, icon name,
/// app index), four to a row; the search bar; the dock (hotseat) along the bottom.
pub fn launcher(d: &Display, apps: &[(String, String, usize)], dock: &[(String, String, usize)]) -> View {
    let mut root = with_id(group(Axis::Vertical), "com.google.android.apps.nexuslauncher:id/launcher");
    root.role = Some(Role::Wallpaper);
    root.style.width = Dim::Match;
    root.style.height = Dim::Match;
    root.style.padding = Edges { top: d.dp(48.0), left: d.dp(8.0), right: d.dp(8.0), bottom: d.dp(8.0) };
    let mut workspace = with_id(group(Axis::Vertical), "com.google.android.apps.nexuslauncher:id/workspace");
    workspace.style.gap = d.dp(16.0);
    workspace.style.weight = 1.0;
    workspace.style.height = Dim::Px(0.0);
    for chunk in apps.chunks(4) {
        let mut row = group(Axis::Horizontal);
        row.class = "android.view.ViewGroup".into();
        row.children = chunk.iter().map(|app| launcher_icon(d, app)).collect();
        workspace.children.push(row);
    }
    root.children.push(workspace);
    let mut search = with_id(
        text(d, "android.widget.TextView", "Search apps", 16.0),
        "com.google.android.apps.nexuslauncher:id/search_container_hotseat",
    );
    search.desc = "Search".into();
    search.role = Some(Role::SearchBar);
    search.icon = Some("search".into());
    search.tone = phonebench_pixels::Tone::Secondary;
    search.clickable = true;
    search.hooks.on_click = Some(Handler::System(SystemHandler::SearchApps));
    search.style.min_height = d.dp(48.0);
    search.style.margin = Edges { left: d.dp(8.0), right: d.dp(8.0), top: d.dp(8.0), bottom: d.dp(8.0) };
    search.style.padding = Edges { left: d.dp(48.0), right: d.dp(16.0), top: d.dp(14.0), bottom: d.dp(14.0) };
    // As on a Pixel: the dock, then the search bar under it.
    if !dock.is_empty() {
        let mut hotseat =
            with_id(group(Axis::Horizontal), "com.google.android.apps.nexuslauncher:id/hotseat");
        hotseat.class = "android.view.ViewGroup".into();
        hotseat.style.justify = Align::Center;
        hotseat.children = dock.iter().map(|app| launcher_icon(d, app)).collect();
        root.children.push(hotseat);
    }
    root.children.push(search);
    root
}

/// One launcher icon: the app's icon over its label; a tap opens it.
fn launcher_icon(d: &Display, (label, icon_name, index): &(String, String, usize)) -> View {
    let mut icon = with_id(
        text(d, "android.widget.TextView", label, 12.0),
        "com.google.android.apps.nexuslauncher:id/icon",
    );
    icon.desc = label.clone();
    icon.role = Some(Role::LauncherIcon);
    icon.icon = Some(icon_name.clone());
    icon.clickable = true;
    icon.hooks.on_click = Some(Handler::System(SystemHandler::Launch(*index)));
    icon.style.width = Dim::Px(((d.width_px() - d.dp(16.0)) / 4.0).floor());
    icon.style.padding = Edges { top: d.dp(64.0), bottom: d.dp(8.0), left: d.dp(4.0), right: d.dp(4.0) };
    if let Some(look) = &mut icon.look {
        look.max_lines = Some(1);
    }
    icon
}

/// The launcher's app search: the query field (typing goes into it; Enter opens the first
/// result) and the apps whose name contains it, by name.
pub fn app_search(d: &Display, query: &str, results: &[(String, String, usize)]) -> View {
    let mut root = with_id(group(Axis::Vertical), "com.google.android.apps.nexuslauncher:id/apps_view");
    root.role = Some(Role::Surface);
    root.style.width = Dim::Match;
    root.style.height = Dim::Match;
    root.style.padding = Edges { top: d.dp(16.0), left: d.dp(8.0), right: d.dp(8.0), bottom: d.dp(8.0) };
    root.style.gap = d.dp(16.0);
    let mut field = with_id(
        text(d, "android.widget.EditText", query, 16.0),
        "com.google.android.apps.nexuslauncher:id/input",
    );
    field.hint = Some("Search apps".into());
    field.role = Some(Role::SearchBar);
    field.icon = Some("search".into());
    field.clickable = true;
    field.hooks.on_click = Some(Handler::System(SystemHandler::SearchApps));
    field.style.min_height = d.dp(48.0);
    field.style.padding = Edges { left: d.dp(48.0), right: d.dp(16.0), top: d.dp(14.0), bottom: d.dp(14.0) };
    root.children.push(field);
    if results.is_empty() {
        root.children.push(with_id(
            text(d, "android.widget.TextView", &format!("No apps match \"{query}\""), 14.0),
            "com.google.android.apps.nexuslauncher:id/empty_text",
        ));
    }
    for chunk in results.chunks(4) {
        let mut row = group(Axis::Horizontal);
        row.class = "android.view.ViewGroup".into();
        row.children = chunk.iter().map(|app| launcher_icon(d, app)).collect();
        root.children.push(row);
    }
    root
}

/// The overview screen: a card per running app, most recent first.
pub fn overview(d: &Display, apps: &[(String, usize)]) -> View {
    let mut root = with_id(group(Axis::Vertical), "com.google.android.apps.nexuslauncher:id/overview_panel");
    root.class = "androidx.recyclerview.widget.RecyclerView".into();
    root.style.width = Dim::Match;
    root.style.height = Dim::Match;
    root.style.padding = Edges { top: d.dp(24.0), left: d.dp(32.0), right: d.dp(32.0), bottom: d.dp(24.0) };
    root.style.gap = d.dp(16.0);
    if apps.is_empty() {
        root.children.push(text(d, "android.widget.TextView", "No recent items", 16.0));
    }
    for (label, index) in apps {
        let mut card = with_id(
            text(d, "android.widget.TextView", label, 16.0),
            "com.google.android.apps.nexuslauncher:id/snapshot",
        );
        card.desc = label.clone();
        card.role = Some(Role::OverviewCard);
        card.clickable = true;
        card.hooks.on_click = Some(Handler::System(SystemHandler::SwitchTo(*index)));
        card.style.height = Dim::Px(d.dp(96.0));
        card.style.padding =
            Edges { top: d.dp(16.0), left: d.dp(16.0), right: d.dp(16.0), bottom: d.dp(16.0) };
        root.children.push(card);
    }
    root
}

/// Which keyboard shows: the focused field's input type, and the letters keyboard's Shift and
/// symbols (`?123`) states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KeyboardLayout {
    /// The focused field's input type.
    pub input: InputType,
    /// Shift is on: the next letter is a capital.
    pub shift: bool,
    /// The symbols layer (digits and punctuation) is shown instead of the letters.
    pub symbols: bool,
}

/// Gboard-like keyboard for the focused field: letters (with Shift and a `?123` symbols layer;
/// `@` for e-mail, `/` and `.com` for addresses), a numeric pad for numbers, the dial pad for
/// phone numbers. Keys are named by content-desc: what they type, or Shift, Delete, Space,
/// Enter, `?123`, `ABC`.
pub fn keyboard(d: &Display, layout: KeyboardLayout) -> View {
    let mut root = with_id(group(Axis::Vertical), "com.google.android.inputmethod.latin:id/keyboard_holder");
    root.role = Some(Role::Keyboard);
    root.style.width = Dim::Match;
    root.style.height = Dim::Match;
    root.style.padding = Edges { top: d.dp(8.0), bottom: d.dp(8.0), left: d.dp(4.0), right: d.dp(4.0) };
    root.style.justify = Align::Stretch;
    let key_width = (d.width_px() - d.dp(8.0)) / 10.0;
    let key = |desc: &str, handler: SystemHandler, width: f32| {
        let mut k = View::new("android.widget.FrameLayout", Kind::Group);
        k.resource_id = "com.google.android.inputmethod.latin:id/key_pos".into();
        k.desc = desc.to_string();
        k.role = Some(Role::Key);
        k.clickable = true;
        k.hooks.on_click = Some(Handler::System(handler));
        k.style.width = Dim::Px(width.floor());
        k.style.height = Dim::Px(d.dp(56.0));
        k
    };
    let typing = |text: &str, width: f32| key(text, SystemHandler::Type(text.to_string()), width);
    let row = |keys: Vec<View>| {
        let mut r = group(Axis::Horizontal);
        r.style.justify = Align::Center;
        r.children = keys;
        r
    };
    match layout.input {
        InputType::Phone => {
            // The dial pad: wide keys, three columns plus one of symbols and actions.
            let w = (d.width_px() - d.dp(8.0)) / 4.0;
            root.children = vec![
                row(vec![typing("1", w), typing("2", w), typing("3", w), typing("-", w)]),
                row(vec![
                    typing("4", w),
                    typing("5", w),
                    typing("6", w),
                    key("Space", SystemHandler::Type(" ".into()), w),
                ]),
                row(vec![
                    typing("7", w),
                    typing("8", w),
                    typing("9", w),
                    key("Delete", SystemHandler::Backspace, w),
                ]),
                row(vec![
                    typing("*", w * 0.5),
                    typing("#", w * 0.5),
                    typing("0", w),
                    typing("+", w),
                    key("Enter", SystemHandler::Enter, w),
                ]),
            ];
        }
        InputType::Number | InputType::Decimal => {
            let w = (d.width_px() - d.dp(8.0)) / 4.0;
            let point = if layout.input == InputType::Decimal { typing(".", w) } else { typing(",", w) };
            root.children = vec![
                row(vec![typing("1", w), typing("2", w), typing("3", w), typing("-", w)]),
                row(vec![
                    typing("4", w),
                    typing("5", w),
                    typing("6", w),
                    key("Space", SystemHandler::Type(" ".into()), w),
                ]),
                row(vec![
                    typing("7", w),
                    typing("8", w),
                    typing("9", w),
                    key("Delete", SystemHandler::Backspace, w),
                ]),
                row(vec![point, typing("0", w), typing(".", w), key("Enter", SystemHandler::Enter, w)]),
            ];
        }
        _ if layout.symbols => {
            let rows = ["1234567890", "@#$_&-+()/", "*\"':;!?"];
            for (i, chars) in rows.iter().enumerate() {
                let mut keys: Vec<View> = chars.chars().map(|c| typing(&c.to_string(), key_width)).collect();
                if i == 2 {
                    keys.push(key("Delete", SystemHandler::Backspace, key_width * 1.5));
                }
                root.children.push(row(keys));
            }
            root.children.push(row(vec![
                key("ABC", SystemHandler::KeyboardSymbols(false), key_width * 1.5),
                typing(",", key_width),
                key("Space", SystemHandler::Type(" ".into()), key_width * 4.5),
                typing(".", key_width),
                key("Enter", SystemHandler::Enter, key_width * 2.0),
            ]));
        }
        input => {
            for (i, letters) in ["qwertyuiop", "asdfghjkl", "zxcvbnm"].iter().enumerate() {
                let mut keys = Vec::new();
                if i == 2 {
                    let mut shift = key("Shift", SystemHandler::Shift, key_width * 1.5);
                    shift.selected = layout.shift;
                    keys.push(shift);
                }
                for c in letters.chars() {
                    let c = if layout.shift { c.to_ascii_uppercase() } else { c };
                    keys.push(typing(&c.to_string(), key_width));
                }
                if i == 2 {
                    keys.push(key("Delete", SystemHandler::Backspace, key_width * 1.5));
                }
                root.children.push(row(keys));
            }
            let mut bottom = vec![key("?123", SystemHandler::KeyboardSymbols(true), key_width * 1.5)];
            match input {
                InputType::Email => {
                    bottom.push(typing("@", key_width));
                    bottom.push(key("Space", SystemHandler::Type(" ".into()), key_width * 3.5));
                    bottom.push(typing(".", key_width));
                }
                InputType::Uri => {
                    bottom.push(typing("/", key_width));
                    bottom.push(key("Space", SystemHandler::Type(" ".into()), key_width * 2.5));
                    bottom.push(typing(".com", key_width * 1.5));
                }
                _ => {
                    bottom.push(typing(",", key_width));
                    bottom.push(key("Space", SystemHandler::Type(" ".into()), key_width * 3.5));
                    bottom.push(typing(".", key_width));
                }
            }
            bottom.push(key("Enter", SystemHandler::Enter, key_width * 2.0));
            root.children.push(row(bottom));
        }
    }
    root
}

/// An alert dialog: title, message, buttons; or a single-choice list.
pub fn dialog(
    d: &Display,
    title: Option<&str>,
    message: Option<&str>,
    options: &[(String, bool)],
    buttons: &[String],
) -> View {
    let mut root = with_id(group(Axis::Vertical), "android:id/parentPanel");
    root.role = Some(Role::Dialog);
    root.class = "android.widget.LinearLayout".into();
    root.style.width = Dim::Px((d.width_px() - d.dp(48.0)).floor());
    root.style.padding = Edges { top: d.dp(24.0), bottom: d.dp(8.0), left: 0.0, right: 0.0 };
    if let Some(t) = title {
        let mut v = with_id(text(d, "android.widget.TextView", t, 20.0), "android:id/alertTitle");
        v.style.padding = Edges { left: d.dp(24.0), right: d.dp(24.0), bottom: d.dp(16.0), top: 0.0 };
        root.children.push(v);
    }
    if let Some(m) = message {
        let mut v = with_id(text(d, "android.widget.TextView", m, 16.0), "android:id/message");
        v.style.padding = Edges { left: d.dp(24.0), right: d.dp(24.0), bottom: d.dp(16.0), top: 0.0 };
        root.children.push(v);
    }
    if !options.is_empty() {
        let mut list =
            with_id(View::new("android.widget.ListView", Kind::Group), "android:id/select_dialog_listview");
        for (i, (label, checked)) in options.iter().enumerate() {
            let mut item =
                with_id(text(d, "android.widget.CheckedTextView", label, 16.0), "android:id/text1");
            item.kind = Kind::Radio;
            item.checked = *checked;
            item.clickable = true;
            item.hooks.on_click = Some(Handler::System(SystemHandler::DialogOption(i)));
            item.style.min_height = d.dp(48.0);
            item.style.padding =
                Edges { left: d.dp(24.0), right: d.dp(24.0), top: d.dp(12.0), bottom: d.dp(12.0) };
            list.children.push(item);
        }
        root.children.push(list);
    }
    if !buttons.is_empty() {
        let mut bar = with_id(group(Axis::Horizontal), "android:id/buttonPanel");
        bar.class = "android.widget.LinearLayout".into();
        bar.style.justify = Align::End;
        bar.style.padding = Edges { left: d.dp(16.0), right: d.dp(16.0), top: d.dp(8.0), bottom: 0.0 };
        // AOSP ids: button1 is positive (rightmost), button2 negative.
        let n = buttons.len();
        for (i, label) in buttons.iter().enumerate() {
            let id = match n - i {
                1 => "android:id/button1",
                2 => "android:id/button2",
                _ => "android:id/button3",
            };
            let mut b = with_id(text(d, "android.widget.Button", label, 14.0), id);
            b.role = Some(Role::TextButton);
            if let Some(look) = &mut b.look {
                look.bold = true;
            }
            b.clickable = true;
            b.hooks.on_click = Some(Handler::System(SystemHandler::DialogButton(i)));
            b.style.min_height = d.dp(48.0);
            b.style.padding =
                Edges { left: d.dp(12.0), right: d.dp(12.0), top: d.dp(10.0), bottom: d.dp(10.0) };
            bar.children.push(b);
        }
        root.children.push(bar);
    }
    root
}

/// A popup menu.
pub fn menu(d: &Display, items: &[String]) -> View {
    let mut root = View::new("android.widget.ListView", Kind::Group);
    root.role = Some(Role::Menu);
    root.style.width = Dim::Px(d.dp(200.0));
    root.style.padding = Edges { top: d.dp(8.0), bottom: d.dp(8.0), left: 0.0, right: 0.0 };
    for (i, label) in items.iter().enumerate() {
        let mut row = View::new("android.widget.LinearLayout", Kind::Group);
        row.clickable = true;
        row.hooks.on_click = Some(Handler::System(SystemHandler::MenuItem(i)));
        row.style.min_height = d.dp(48.0);
        row.style.justify = Align::Center;
        row.style.padding = Edges { left: d.dp(16.0), right: d.dp(16.0), top: 0.0, bottom: 0.0 };
        row.children.push(with_id(text(d, "android.widget.TextView", label, 16.0), "android:id/title"));
        root.children.push(row);
    }
    root
}

/// A toast message: light text on the dark (inverse-surface) pill, as Android draws it.
pub fn toast(d: &Display, message: &str) -> View {
    let mut root = View::new("android.widget.LinearLayout", Kind::Group);
    let mut t = with_id(text(d, "android.widget.TextView", message, 14.0), "android:id/message");
    // The pill and its text colour belong to one node: a text view draws its text in the colour
    // its own role gives (a plain child of a toast-role group would draw dark on the dark pill).
    t.role = Some(Role::Toast);
    t.style.padding = Edges { top: d.dp(12.0), bottom: d.dp(12.0), left: d.dp(16.0), right: d.dp(16.0) };
    if let Some(look) = &mut t.look {
        look.max_lines = Some(2);
    }
    root.children.push(t);
    root
}

/// Characters of an app failure the "keeps stopping" dialog shows (the step's note has more).
const CRASH_MESSAGE_CHARS: usize = 600;

/// Android's "`<App>` keeps stopping" dialog for app `app` (`name`), showing what failed, with a
/// "Close app" button (back dismisses it, as any dialog).
pub fn crash_dialog(d: &Display, name: &str, message: &str, app: usize) -> View {
    let mut shown: String = message.chars().take(CRASH_MESSAGE_CHARS).collect();
    if message.chars().nth(CRASH_MESSAGE_CHARS).is_some() {
        shown.push('…');
    }
    let title = format!("{name} keeps stopping");
    let mut root = dialog(d, Some(&title), Some(&shown), &[], &["Close app".to_string()]);
    root.resource_id = "android:id/aerr_dialog".into();
    // `dialog` wires its buttons to the app dialog's handlers; this one closes the app.
    let mut stack = vec![&mut root];
    while let Some(view) = stack.pop() {
        if view.resource_id == "android:id/message"
            && let Some(look) = &mut view.look
        {
            look.max_lines = Some(12);
        }
        if matches!(view.hooks.on_click, Some(Handler::System(SystemHandler::DialogButton(_)))) {
            view.resource_id = "android:id/aerr_close".into();
            view.hooks.on_click = Some(Handler::System(SystemHandler::CloseApp(app)));
        }
        stack.extend(view.children.iter_mut());
    }
    root
}

/// What app `app` shows when its screen cannot be rendered: the "keeps stopping" dialog over
/// an empty window. Back leaves the screen as usual; "Close app" closes the app.
pub fn crash_screen(d: &Display, name: &str, message: &str, app: usize) -> View {
    let mut root = group(Axis::Vertical);
    root.style.width = Dim::Match;
    root.style.height = Dim::Match;
    root.style.align = Align::Center;
    root.style.justify = Align::Center;
    root.children.push(crash_dialog(d, name, message, app));
    root
}

/// One notification as the shade lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct ShadeRow {
    /// The posting app's name.
    pub app: String,
    /// Its launcher icon.
    pub icon: String,
    /// When it was posted, as the clock shows it.
    pub when: String,
    /// Title.
    pub title: String,
    /// Text (may be empty).
    pub text: String,
}

/// The notification shade: date and time, the notifications newest first (tap to open), and
/// "Clear all"; or "No notifications".
pub fn shade(d: &Display, date: &str, clock: &str, rows: &[ShadeRow]) -> View {
    let mut root = with_id(group(Axis::Vertical), "com.android.systemui:id/notification_panel");
    root.role = Some(Role::Surface);
    root.style.width = Dim::Match;
    root.style.height = Dim::Match;
    root.style.padding = Edges { top: d.dp(16.0), left: d.dp(16.0), right: d.dp(16.0), bottom: d.dp(16.0) };
    root.style.gap = d.dp(12.0);
    let mut header = group(Axis::Horizontal);
    header.style.align = Align::Center;
    header.style.gap = d.dp(12.0);
    let mut time = with_id(text(d, "android.widget.TextView", clock, 32.0), "com.android.systemui:id/clock");
    if let Some(look) = &mut time.look {
        look.max_lines = Some(1);
    }
    let date = with_id(text(d, "android.widget.TextView", date, 14.0), "com.android.systemui:id/date");
    header.children = vec![time, date];
    root.children.push(header);
    let mut list = with_id(
        View::new("android.widget.ScrollView", Kind::Scroll),
        "com.android.systemui:id/notification_stack_scroller",
    );
    list.style.weight = 1.0;
    list.style.height = Dim::Px(0.0);
    list.style.gap = d.dp(8.0);
    if rows.is_empty() {
        let mut empty = with_id(
            text(d, "android.widget.TextView", "No notifications", 16.0),
            "com.android.systemui:id/no_notifications",
        );
        empty.style.padding = Edges { top: d.dp(24.0), ..Edges::default() };
        list.children.push(empty);
    }
    for (i, row) in rows.iter().enumerate() {
        let mut card = with_id(group(Axis::Vertical), "com.android.systemui:id/expandableNotificationRow");
        card.class = "android.widget.FrameLayout".into();
        card.role = Some(Role::Card);
        card.clickable = true;
        card.hooks.on_click = Some(Handler::System(SystemHandler::OpenNotification(i)));
        card.style.padding =
            Edges { top: d.dp(12.0), bottom: d.dp(12.0), left: d.dp(16.0), right: d.dp(16.0) };
        card.style.gap = d.dp(4.0);
        let mut head = group(Axis::Horizontal);
        head.style.align = Align::Center;
        head.style.gap = d.dp(8.0);
        let mut icon = with_id(View::new("android.widget.ImageView", Kind::Image), "android:id/icon");
        icon.icon = Some(row.icon.clone());
        icon.role = Some(Role::Image);
        icon.style.width = Dim::Px(d.dp(18.0));
        icon.style.height = Dim::Px(d.dp(18.0));
        let app = with_id(text(d, "android.widget.TextView", &row.app, 12.0), "android:id/app_name_text");
        let when = with_id(text(d, "android.widget.TextView", &row.when, 12.0), "android:id/time");
        head.children = vec![icon, app, when];
        let mut title = with_id(text(d, "android.widget.TextView", &row.title, 16.0), "android:id/title");
        if let Some(look) = &mut title.look {
            look.bold = true;
            look.max_lines = Some(1);
        }
        card.children = vec![head, title];
        if !row.text.is_empty() {
            let mut body = with_id(text(d, "android.widget.TextView", &row.text, 14.0), "android:id/text");
            if let Some(look) = &mut body.look {
                look.max_lines = Some(2);
            }
            card.children.push(body);
        }
        list.children.push(card);
    }
    root.children.push(list);
    if !rows.is_empty() {
        let mut clear = with_id(
            text(d, "android.widget.Button", "Clear all", 14.0),
            "com.android.systemui:id/dismiss_text",
        );
        clear.role = Some(Role::TonalButton);
        clear.clickable = true;
        clear.hooks.on_click = Some(Handler::System(SystemHandler::ClearNotifications));
        clear.style.min_height = d.dp(40.0);
        clear.style.padding =
            Edges { left: d.dp(16.0), right: d.dp(16.0), top: d.dp(10.0), bottom: d.dp(10.0) };
        let mut bar = group(Axis::Horizontal);
        bar.style.justify = Align::End;
        bar.children.push(clear);
        root.children.push(bar);
    }
    root
}

/// The share sheet or an app chooser: a title, an optional preview of shared text, and one row
/// per target (label, icon).
pub fn chooser(d: &Display, title: &str, preview: Option<&str>, targets: &[(String, String)]) -> View {
    let mut root = with_id(group(Axis::Vertical), "android:id/contentPanel");
    root.class = "android.widget.LinearLayout".into();
    root.role = Some(Role::Dialog);
    root.style.width = Dim::Px((d.width_px() - d.dp(48.0)).floor());
    root.style.padding = Edges { top: d.dp(24.0), bottom: d.dp(8.0), left: 0.0, right: 0.0 };
    let mut t = with_id(text(d, "android.widget.TextView", title, 20.0), "android:id/title");
    t.style.padding = Edges { left: d.dp(24.0), right: d.dp(24.0), bottom: d.dp(12.0), top: 0.0 };
    root.children.push(t);
    if let Some(p) = preview {
        let mut v = with_id(text(d, "android.widget.TextView", p, 14.0), "android:id/content_preview_text");
        v.tone = phonebench_pixels::Tone::Secondary;
        if let Some(look) = &mut v.look {
            look.max_lines = Some(2);
        }
        v.style.padding = Edges { left: d.dp(24.0), right: d.dp(24.0), bottom: d.dp(12.0), top: 0.0 };
        root.children.push(v);
    }
    let mut list = with_id(View::new("android.widget.ListView", Kind::Group), "android:id/resolver_list");
    for (i, (label, icon_name)) in targets.iter().enumerate() {
        let mut row = group(Axis::Horizontal);
        row.class = "android.widget.LinearLayout".into();
        row.clickable = true;
        row.hooks.on_click = Some(Handler::System(SystemHandler::Choose(i)));
        row.style.min_height = d.dp(56.0);
        row.style.align = Align::Center;
        row.style.gap = d.dp(16.0);
        row.style.padding = Edges { left: d.dp(24.0), right: d.dp(24.0), top: d.dp(8.0), bottom: d.dp(8.0) };
        let mut icon = with_id(View::new("android.widget.ImageView", Kind::Image), "android:id/icon");
        icon.icon = Some(icon_name.clone());
        icon.role = Some(Role::Image);
        icon.style.width = Dim::Px(d.dp(32.0));
        icon.style.height = Dim::Px(d.dp(32.0));
        let label = with_id(text(d, "android.widget.TextView", label, 16.0), "android:id/text1");
        row.children = vec![icon, label];
        list.children.push(row);
    }
    root.children.push(list);
    root
}

/// An input dialog's text field (`android:id/input`): typing goes into it while the dialog is
/// open; a tap brings the keyboard back.
pub fn dialog_input(d: &Display, text_value: &str, hint: &str) -> View {
    let mut f = View::new("android.widget.EditText", Kind::Text);
    f.resource_id = "android:id/input".into();
    f.text = text_value.to_string();
    f.hint = (!hint.is_empty()).then(|| hint.to_string());
    f.role = Some(Role::Field);
    f.look = Some(TextLook { size_px: d.dp(16.0), bold: false, max_lines: Some(3) });
    f.clickable = true;
    f.hooks.on_click = Some(Handler::System(SystemHandler::DialogInput));
    f.style.margin = Edges { left: d.dp(24.0), right: d.dp(24.0), top: 0.0, bottom: d.dp(8.0) };
    f.style.padding = Edges { left: d.dp(12.0), right: d.dp(12.0), top: d.dp(12.0), bottom: d.dp(12.0) };
    f
}
