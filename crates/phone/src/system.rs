//! The phone's own UI: status bar, navigation bar, launcher, overview, keyboard, dialogs, menus
//! and toasts. Built as [`View`]s so the same layout engine gives them bounds, with the package
//! names and resource ids a Pixel phone uses.

use crate::view::{Align, Axis, Dim, Edges, Handler, Kind, SystemHandler, TextLook, View, dp};

/// Screen width, px.
pub const SCREEN_W: f32 = 1080.0;
/// Screen height, px.
pub const SCREEN_H: f32 = 2400.0;
/// Status bar height (32 dp, rounded to px).
pub const STATUS_BAR_H: f32 = 84.0;
/// Navigation bar height (48 dp).
pub const NAV_BAR_H: f32 = 126.0;
/// Keyboard height (264 dp, rounded).
pub const KEYBOARD_H: f32 = 693.0;

/// Package of the status and navigation bars.
pub const SYSTEMUI: &str = "com.android.systemui";
/// Package of the launcher.
pub const LAUNCHER: &str = "com.google.android.apps.nexuslauncher";
/// Package of the keyboard.
pub const KEYBOARD: &str = "com.google.android.inputmethod.latin";

fn text(class: &str, text: &str, sp: f32) -> View {
    let mut v = View::new(class, Kind::Text);
    v.text = text.to_string();
    v.look = Some(TextLook { size_px: dp(sp), bold: false, max_lines: None });
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

/// The status bar: clock and battery.
pub fn status_bar(clock: &str, battery: u8) -> View {
    let mut bar = with_id(group(Axis::Horizontal), "com.android.systemui:id/status_bar");
    bar.style.width = Dim::Match;
    bar.style.height = Dim::Match;
    bar.style.align = Align::Center;
    bar.style.justify = Align::Stretch;
    bar.style.padding = Edges { left: dp(24.0), right: dp(24.0), ..Edges::default() };
    let clock = with_id(text("android.widget.TextView", clock, 14.0), "com.android.systemui:id/clock");
    let mut battery_view =
        with_id(View::new("android.widget.ImageView", Kind::Image), "com.android.systemui:id/battery");
    battery_view.desc = format!("Battery {battery} percent.");
    battery_view.style.width = Dim::Px(dp(24.0));
    battery_view.style.height = Dim::Px(dp(16.0));
    bar.children = vec![clock, battery_view];
    bar
}

/// The three-button navigation bar.
pub fn nav_bar() -> View {
    let mut bar = with_id(group(Axis::Horizontal), "com.android.systemui:id/navigation_bar_frame");
    bar.style.width = Dim::Match;
    bar.style.height = Dim::Match;
    bar.style.align = Align::Center;
    bar.style.justify = Align::Stretch;
    bar.style.padding = Edges { left: dp(56.0), right: dp(56.0), ..Edges::default() };
    let button = |id: &str, desc: &str, handler: SystemHandler| {
        let mut b = with_id(View::new("android.widget.ImageView", Kind::Image), id);
        b.desc = desc.to_string();
        b.clickable = true;
        b.hooks.on_click = Some(Handler::System(handler));
        b.style.width = Dim::Px(dp(64.0));
        b.style.height = Dim::Px(dp(48.0));
        b
    };
    bar.children = vec![
        button("com.android.systemui:id/back", "Back", SystemHandler::Back),
        button("com.android.systemui:id/home", "Home", SystemHandler::Home),
        button("com.android.systemui:id/recent_apps", "Overview", SystemHandler::Recents),
    ];
    bar
}

/// The launcher's home screen: one icon per app, four to a row.
pub fn launcher(apps: &[(String, usize)]) -> View {
    let mut root = with_id(group(Axis::Vertical), "com.google.android.apps.nexuslauncher:id/launcher");
    root.style.width = Dim::Match;
    root.style.height = Dim::Match;
    root.style.padding = Edges { top: dp(48.0), left: dp(8.0), right: dp(8.0), bottom: 0.0 };
    let mut workspace = with_id(group(Axis::Vertical), "com.google.android.apps.nexuslauncher:id/workspace");
    workspace.style.gap = dp(16.0);
    for chunk in apps.chunks(4) {
        let mut row = group(Axis::Horizontal);
        row.class = "android.view.ViewGroup".into();
        for (label, index) in chunk {
            let mut icon = with_id(
                text("android.widget.TextView", label, 12.0),
                "com.google.android.apps.nexuslauncher:id/icon",
            );
            icon.desc = label.clone();
            icon.clickable = true;
            icon.hooks.on_click = Some(Handler::System(SystemHandler::Launch(*index)));
            icon.style.width = Dim::Px(((SCREEN_W - dp(16.0)) / 4.0).floor());
            icon.style.padding = Edges { top: dp(64.0), bottom: dp(8.0), left: dp(4.0), right: dp(4.0) };
            if let Some(look) = &mut icon.look {
                look.max_lines = Some(1);
            }
            row.children.push(icon);
        }
        workspace.children.push(row);
    }
    root.children.push(workspace);
    root
}

/// The overview screen: a card per running app, most recent first.
pub fn overview(apps: &[(String, usize)]) -> View {
    let mut root = with_id(group(Axis::Vertical), "com.google.android.apps.nexuslauncher:id/overview_panel");
    root.class = "androidx.recyclerview.widget.RecyclerView".into();
    root.style.width = Dim::Match;
    root.style.height = Dim::Match;
    root.style.padding = Edges { top: dp(24.0), left: dp(32.0), right: dp(32.0), bottom: dp(24.0) };
    root.style.gap = dp(16.0);
    if apps.is_empty() {
        root.children.push(text("android.widget.TextView", "No recent items", 16.0));
    }
    for (label, index) in apps {
        let mut card = with_id(
            text("android.widget.TextView", label, 16.0),
            "com.google.android.apps.nexuslauncher:id/snapshot",
        );
        card.desc = label.clone();
        card.clickable = true;
        card.hooks.on_click = Some(Handler::System(SystemHandler::SwitchTo(*index)));
        card.style.height = Dim::Px(dp(96.0));
        card.style.padding = Edges { top: dp(16.0), left: dp(16.0), right: dp(16.0), bottom: dp(16.0) };
        root.children.push(card);
    }
    root
}

/// Gboard-like keyboard: letter rows, delete, space, enter. Keys are named by content-desc.
/// Shift is drawn but types nothing: agents type through `type` actions, and capitals there.
pub fn keyboard() -> View {
    let mut root = with_id(group(Axis::Vertical), "com.google.android.inputmethod.latin:id/keyboard_holder");
    root.style.width = Dim::Match;
    root.style.height = Dim::Match;
    root.style.padding = Edges { top: dp(8.0), bottom: dp(8.0), left: dp(4.0), right: dp(4.0) };
    root.style.justify = Align::Stretch;
    let key_width = (SCREEN_W - dp(8.0)) / 10.0;
    let key = |desc: &str, handler: SystemHandler, width: f32| {
        let mut k = View::new("android.widget.FrameLayout", Kind::Group);
        k.resource_id = "com.google.android.inputmethod.latin:id/key_pos".into();
        k.desc = desc.to_string();
        k.clickable = true;
        k.hooks.on_click = Some(Handler::System(handler));
        k.style.width = Dim::Px(width.floor());
        k.style.height = Dim::Px(dp(56.0));
        k
    };
    for (i, letters) in ["qwertyuiop", "asdfghjkl", "zxcvbnm"].iter().enumerate() {
        let mut row = group(Axis::Horizontal);
        row.style.justify = Align::Center;
        if i == 2 {
            row.children.push(key("Shift", SystemHandler::Type(String::new()), key_width * 1.5));
        }
        for c in letters.chars() {
            row.children.push(key(&c.to_string(), SystemHandler::Type(c.to_string()), key_width));
        }
        if i == 2 {
            row.children.push(key("Delete", SystemHandler::Backspace, key_width * 1.5));
        }
        root.children.push(row);
    }
    let mut bottom = group(Axis::Horizontal);
    bottom.style.justify = Align::Center;
    bottom.children = vec![
        key(",", SystemHandler::Type(",".into()), key_width),
        key("Space", SystemHandler::Type(" ".into()), key_width * 5.0),
        key(".", SystemHandler::Type(".".into()), key_width),
        key("Enter", SystemHandler::Enter, key_width * 2.0),
    ];
    root.children.push(bottom);
    root
}

/// An alert dialog: title, message, buttons; or a single-choice list.
pub fn dialog(
    title: Option<&str>,
    message: Option<&str>,
    options: &[(String, bool)],
    buttons: &[String],
) -> View {
    let mut root = with_id(group(Axis::Vertical), "android:id/parentPanel");
    root.class = "android.widget.LinearLayout".into();
    root.style.width = Dim::Px((SCREEN_W - dp(48.0)).floor());
    root.style.padding = Edges { top: dp(24.0), bottom: dp(8.0), left: 0.0, right: 0.0 };
    if let Some(t) = title {
        let mut v = with_id(text("android.widget.TextView", t, 20.0), "android:id/alertTitle");
        v.style.padding = Edges { left: dp(24.0), right: dp(24.0), bottom: dp(16.0), top: 0.0 };
        root.children.push(v);
    }
    if let Some(m) = message {
        let mut v = with_id(text("android.widget.TextView", m, 16.0), "android:id/message");
        v.style.padding = Edges { left: dp(24.0), right: dp(24.0), bottom: dp(16.0), top: 0.0 };
        root.children.push(v);
    }
    if !options.is_empty() {
        let mut list =
            with_id(View::new("android.widget.ListView", Kind::Group), "android:id/select_dialog_listview");
        for (i, (label, checked)) in options.iter().enumerate() {
            let mut item = with_id(text("android.widget.CheckedTextView", label, 16.0), "android:id/text1");
            item.kind = Kind::Radio;
            item.checked = *checked;
            item.clickable = true;
            item.hooks.on_click = Some(Handler::System(SystemHandler::DialogOption(i)));
            item.style.min_height = dp(48.0);
            item.style.padding = Edges { left: dp(24.0), right: dp(24.0), top: dp(12.0), bottom: dp(12.0) };
            list.children.push(item);
        }
        root.children.push(list);
    }
    if !buttons.is_empty() {
        let mut bar = with_id(group(Axis::Horizontal), "android:id/buttonPanel");
        bar.class = "android.widget.LinearLayout".into();
        bar.style.justify = Align::End;
        bar.style.padding = Edges { left: dp(16.0), right: dp(16.0), top: dp(8.0), bottom: 0.0 };
        // AOSP ids: button1 is positive (rightmost), button2 negative.
        let n = buttons.len();
        for (i, label) in buttons.iter().enumerate() {
            let id = match n - i {
                1 => "android:id/button1",
                2 => "android:id/button2",
                _ => "android:id/button3",
            };
            let mut b = with_id(text("android.widget.Button", label, 14.0), id);
            b.clickable = true;
            b.hooks.on_click = Some(Handler::System(SystemHandler::DialogButton(i)));
            b.style.min_height = dp(48.0);
            b.style.padding = Edges { left: dp(12.0), right: dp(12.0), top: dp(10.0), bottom: dp(10.0) };
            bar.children.push(b);
        }
        root.children.push(bar);
    }
    root
}

/// A popup menu.
pub fn menu(items: &[String]) -> View {
    let mut root = View::new("android.widget.ListView", Kind::Group);
    root.style.width = Dim::Px(dp(200.0));
    root.style.padding = Edges { top: dp(8.0), bottom: dp(8.0), left: 0.0, right: 0.0 };
    for (i, label) in items.iter().enumerate() {
        let mut row = View::new("android.widget.LinearLayout", Kind::Group);
        row.clickable = true;
        row.hooks.on_click = Some(Handler::System(SystemHandler::MenuItem(i)));
        row.style.min_height = dp(48.0);
        row.style.justify = Align::Center;
        row.style.padding = Edges { left: dp(16.0), right: dp(16.0), top: 0.0, bottom: 0.0 };
        row.children.push(with_id(text("android.widget.TextView", label, 16.0), "android:id/title"));
        root.children.push(row);
    }
    root
}

/// A toast message.
pub fn toast(message: &str) -> View {
    let mut root = View::new("android.widget.LinearLayout", Kind::Group);
    root.style.padding = Edges { top: dp(12.0), bottom: dp(12.0), left: dp(16.0), right: dp(16.0) };
    let mut t = with_id(text("android.widget.TextView", message, 14.0), "android:id/message");
    if let Some(look) = &mut t.look {
        look.max_lines = Some(2);
    }
    root.children.push(t);
    root
}
