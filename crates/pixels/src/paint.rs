//! What the renderer needs to know about a node beyond the UI tree: its role (what it looks
//! like), icon, text look, and the rectangles layout gave it before clipping.
//!
//! The simulated phone fills one [`Paint`] per tree node from its views; for a tree that came
//! without paints (a real device's dump), [`Paint::infer`] guesses one from the node's class.

use phonebench_uitree::Node;

use crate::draw::{CHECK_DP, SWITCH_DP};

/// A rectangle in screen pixels (not rounded; may extend past the node's visible bounds when
/// the node is scrolled partly out of view).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Frame {
    /// Left edge.
    pub x: f32,
    /// Top edge.
    pub y: f32,
    /// Width.
    pub w: f32,
    /// Height.
    pub h: f32,
}

impl Frame {
    /// A rectangle from its left, top, width and height.
    pub fn new(x: f32, y: f32, w: f32, h: f32) -> Frame {
        Frame { x, y, w: w.max(0.0), h: h.max(0.0) }
    }

    /// Right edge.
    pub fn right(&self) -> f32 {
        self.x + self.w
    }

    /// Bottom edge.
    pub fn bottom(&self) -> f32 {
        self.y + self.h
    }

    /// Centre.
    pub fn center(&self) -> (f32, f32) {
        (self.x + self.w / 2.0, self.y + self.h / 2.0)
    }

    /// The rectangle shrunk by `d` on every side.
    pub fn inset(&self, d: f32) -> Frame {
        Frame::new(self.x + d, self.y + d, self.w - 2.0 * d, self.h - 2.0 * d)
    }

    /// The frame with every edge within ±[`MAX_COORDINATE`] (a NaN edge becomes 0) and a
    /// non-negative size; a frame already so is returned unchanged, bit for bit. Edges are clamped
    /// rather than the size, so a huge frame still covers what it covered on screen.
    pub fn clamped(&self) -> Frame {
        let ok = |v: f32| v.is_finite() && v.abs() <= MAX_COORDINATE;
        if ok(self.x) && ok(self.y) && ok(self.right()) && ok(self.bottom()) && self.w >= 0.0 && self.h >= 0.0
        {
            return *self;
        }
        let edge = |v: f32| if v.is_nan() { 0.0 } else { v.clamp(-MAX_COORDINATE, MAX_COORDINATE) };
        let size = |v: f32| if v.is_nan() { 0.0 } else { v.max(0.0) };
        let (left, top) = (edge(self.x), edge(self.y));
        let (right, bottom) = (edge(self.x + size(self.w)), edge(self.y + size(self.h)));
        Frame { x: left, y: top, w: (right - left).max(0.0), h: (bottom - top).max(0.0) }
    }
}

/// Frame edges are clamped to ±this many pixels before drawing (see [`Frame::clamped`]): far
/// beyond any screen, and small enough that every size and offset derived from them stays finite
/// and exact enough for tiny-skia.
pub const MAX_COORDINATE: f32 = (1 << 22) as f32;

/// Densities are clamped to this range before drawing (a NaN density is 1): line widths and radii
/// are multiples of it.
pub const DENSITY_RANGE: (f32, f32) = (0.1, 64.0);

/// A density fit for drawing: within [`DENSITY_RANGE`], 1 when NaN.
pub(crate) fn sane_density(density: f32) -> f32 {
    if density.is_nan() { 1.0 } else { density.clamp(DENSITY_RANGE.0, DENSITY_RANGE.1) }
}

/// What a node looks like. Layout XML chooses it with `style="…"` (the names in
/// [`Role::from_style`]); widgets get their Material 3 default otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    /// Draws only its text or icon (most containers and labels).
    #[default]
    Plain,
    /// A window's background (app screens, the launcher draws its wallpaper instead).
    Surface,
    /// A top app bar.
    AppBar,
    /// An elevated card (`style="card"`).
    Card,
    /// A circle with a colour picked from its text, showing the text (`style="avatar"`).
    Avatar,
    /// A floating action button (`style="fab"`).
    Fab,
    /// A filled button: the default for `Button`.
    FilledButton,
    /// A tonal button (`style="tonal"`).
    TonalButton,
    /// An outlined button (`style="outlined"`).
    OutlinedButton,
    /// A text button (`style="text"`; dialog buttons).
    TextButton,
    /// A chip: outlined, filled when selected (`style="chip"`).
    Chip,
    /// A filled text field: the default for `EditText`.
    Field,
    /// A rounded search bar (`style="search"`).
    SearchBar,
    /// A switch, drawn at the end of its row.
    Switch,
    /// A check box, drawn at the start.
    CheckBox,
    /// A radio button, drawn at the start.
    Radio,
    /// A seek bar.
    Seek,
    /// An icon button: the default for `ImageButton`.
    IconButton,
    /// An image: its icon, or a placeholder.
    Image,
    /// A 1 dp line (`style="divider"`).
    Divider,
    /// A received chat bubble (`style="bubble-in"`).
    BubbleIn,
    /// A sent chat bubble (`style="bubble-out"`).
    BubbleOut,
    /// A tab: primary text and an indicator when selected (`style="tab"`).
    Tab,
    /// A small count badge (`style="badge"`).
    Badge,
    /// A tonal container with rounded corners (`style="tonal-box"`), e.g. a banner.
    TonalBox,
    /// The status bar.
    StatusBar,
    /// The battery gauge in the status bar.
    Battery,
    /// The navigation bar.
    NavBar,
    /// The keyboard's background.
    Keyboard,
    /// A keyboard key: the label is its content description.
    Key,
    /// A dialog (drawn over a scrim).
    Dialog,
    /// A popup menu.
    Menu,
    /// A toast.
    Toast,
    /// The launcher's home screen (wallpaper).
    Wallpaper,
    /// An app icon on the launcher: a round icon over its label.
    LauncherIcon,
    /// An app card in the overview.
    OverviewCard,
}

impl Role {
    /// The role a layout's `style` attribute names, or `None` for an unknown name.
    pub fn from_style(name: &str) -> Option<Role> {
        Some(match name {
            "plain" => Role::Plain,
            "surface" => Role::Surface,
            "app-bar" => Role::AppBar,
            "card" => Role::Card,
            "avatar" => Role::Avatar,
            "fab" => Role::Fab,
            "filled" => Role::FilledButton,
            "tonal" => Role::TonalButton,
            "outlined" => Role::OutlinedButton,
            "text" => Role::TextButton,
            "chip" => Role::Chip,
            "field" => Role::Field,
            "search" => Role::SearchBar,
            "divider" => Role::Divider,
            "bubble-in" => Role::BubbleIn,
            "bubble-out" => Role::BubbleOut,
            "tab" => Role::Tab,
            "badge" => Role::Badge,
            "tonal-box" => Role::TonalBox,
            _ => return None,
        })
    }

    /// The names [`Role::from_style`] accepts, for error messages.
    pub const STYLE_NAMES: &'static [&'static str] = &[
        "plain",
        "surface",
        "app-bar",
        "card",
        "avatar",
        "fab",
        "filled",
        "tonal",
        "outlined",
        "text",
        "chip",
        "field",
        "search",
        "divider",
        "bubble-in",
        "bubble-out",
        "tab",
        "badge",
        "tonal-box",
    ];
}

/// Which theme colour a text uses (the role may override it: a filled button's text is always
/// on-primary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tone {
    /// On-surface: ordinary text.
    #[default]
    Normal,
    /// On-surface-variant: summaries, timestamps, hints (`color="secondary"`).
    Secondary,
    /// Primary: links, section headers (`color="primary"`).
    Primary,
    /// Error (`color="error"`).
    Error,
}

impl Tone {
    /// The tone a layout's `color` attribute names.
    pub fn from_name(name: &str) -> Option<Tone> {
        Some(match name {
            "normal" => Tone::Normal,
            "secondary" => Tone::Secondary,
            "primary" => Tone::Primary,
            "error" => Tone::Error,
            _ => return None,
        })
    }
}

/// Horizontal placement of text in its box.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Align {
    /// Left.
    #[default]
    Start,
    /// Centred.
    Center,
    /// Right.
    End,
}

/// How a node's text (or a text field's hint) is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextLook {
    /// Font size, px.
    pub size_px: f32,
    /// Bold face.
    pub bold: bool,
    /// Lines shown at most.
    pub max_lines: Option<u32>,
    /// Colour.
    pub tone: Tone,
    /// Horizontal placement.
    pub align: Align,
}

/// Everything the renderer needs about one node besides the node itself.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Paint {
    /// What it looks like.
    pub role: Role,
    /// The node's full rectangle before clipping.
    pub frame: Frame,
    /// Where its text or icon goes (the frame less padding and any control beside the text).
    pub content: Frame,
    /// A Material Symbols icon name (see [`crate::icons::names`]).
    pub icon: Option<String>,
    /// Text look, for nodes that show text.
    pub text: Option<TextLook>,
    /// A seek bar's position, 0..=1.
    pub value: f32,
    /// Pixels per dp, for line widths and corner radii.
    pub density: f32,
    /// A picture filling the frame (an `ImageView`'s `src`): `placeholder:KEY` is generated
    /// from KEY ([`crate::picture`]).
    pub image: Option<String>,
    /// A background from the palette (`bg`), drawn under the role's own shapes; text on it
    /// takes the swatch's text colour.
    pub bg: Option<crate::theme::Swatch>,
    /// The palette background the node sits on (its own `bg` or an ancestor's): ordinary and
    /// secondary text and icons take that swatch's text colour.
    pub on: Option<crate::theme::Swatch>,
}

impl Paint {
    /// The paint with its geometry made safe to draw: frames [clamped](Frame::clamped), density in
    /// [`DENSITY_RANGE`], value in 0..=1, text size finite and at most
    /// [`phonebench_text::MAX_SIZE_PX`] (0, which draws nothing, when it is not a positive
    /// number). Paints the phone makes are unchanged by it.
    pub fn sanitized(&self) -> Paint {
        let mut p = self.clone();
        p.frame = p.frame.clamped();
        p.content = p.content.clamped();
        p.density = sane_density(p.density);
        p.value = if p.value.is_nan() { 0.0 } else { p.value.clamp(0.0, 1.0) };
        if let Some(look) = &mut p.text {
            let size = look.size_px;
            look.size_px =
                if size.is_finite() && size > 0.0 { size.min(phonebench_text::MAX_SIZE_PX) } else { 0.0 };
        }
        p
    }
}

/// Content-description words → icon, for image buttons that name no icon (real dumps, and app
/// screens that leave it out). The first entry whose word occurs in the description wins.
const ICON_WORDS: &[(&str, &str)] = &[
    ("navigate up", "arrow_back"),
    ("back", "arrow_back"),
    ("search", "search"),
    ("more options", "more_vert"),
    ("more", "more_vert"),
    ("menu", "menu"),
    ("close", "close"),
    ("clear", "close"),
    ("cancel", "close"),
    ("send", "send"),
    ("attach", "attach_file"),
    ("call", "call"),
    ("phone", "call"),
    ("video", "photo_camera"),
    ("camera", "photo_camera"),
    ("photo", "image"),
    ("picture", "image"),
    ("edit", "edit"),
    ("delete", "delete"),
    ("remove from favorites", "star_fill"),
    ("add to favorites", "star"),
    ("favorite", "star"),
    ("star", "star"),
    ("share", "share"),
    ("create", "add"),
    ("new", "add"),
    ("add", "add"),
    ("start chat", "chat"),
    ("message", "sms"),
    ("settings", "settings"),
    ("mail", "mail"),
    ("email", "mail"),
    ("location", "location_on"),
    ("address", "location_on"),
    ("birthday", "event"),
    ("calendar", "calendar_today"),
    ("note", "edit"),
    ("info", "info"),
    ("help", "help"),
    ("refresh", "refresh"),
    ("sort", "sort"),
    ("filter", "filter_list"),
    ("voice", "mic"),
    ("copy", "content_copy"),
    ("archive", "archive"),
    ("block", "block"),
    ("contact", "person"),
    ("account", "account_circle"),
    ("profile", "account_circle"),
];

/// The icon a content description suggests (see `ICON_WORDS`), if any.
pub fn guess_icon(desc: &str) -> Option<&'static str> {
    let desc = desc.to_lowercase();
    ICON_WORDS.iter().find(|(word, _)| desc.contains(word)).map(|(_, icon)| *icon)
}

impl Paint {
    /// A paint guessed from a node alone (a real device's dump has no style information):
    /// widgets by class, text at 14 sp, frames from the bounds.
    pub fn infer(node: &Node, density: f32) -> Paint {
        let density = sane_density(density);
        let b = node.bounds;
        let frame = Frame::new(b.left as f32, b.top as f32, b.width() as f32, b.height() as f32);
        let class = node.class.rsplit('.').next().unwrap_or("");
        let role = match class {
            "Button" => Role::OutlinedButton,
            "EditText" | "AutoCompleteTextView" => Role::Field,
            "Switch" | "SwitchCompat" | "SwitchMaterial" => Role::Switch,
            "CheckBox" | "CheckedTextView" => Role::CheckBox,
            "RadioButton" => Role::Radio,
            "SeekBar" => Role::Seek,
            "ImageButton" => Role::IconButton,
            "ImageView" => Role::Image,
            "Toolbar" => Role::AppBar,
            _ => Role::Plain,
        };
        let pad = 4.0 * density;
        let content = match role {
            Role::CheckBox | Role::Radio => {
                Frame::new(frame.x + CHECK_DP * density, frame.y, frame.w - CHECK_DP * density, frame.h)
            }
            Role::Switch => Frame::new(frame.x, frame.y, frame.w - SWITCH_DP * density, frame.h),
            _ => frame.inset(pad.min(frame.w / 4.0).min(frame.h / 4.0)),
        };
        let shows_text = !node.text.is_empty() || node.hint.as_deref().is_some_and(|h| !h.is_empty());
        let center = matches!(role, Role::OutlinedButton);
        Paint {
            role,
            frame,
            content,
            icon: matches!(role, Role::IconButton | Role::Image)
                .then(|| guess_icon(&node.content_desc))
                .flatten()
                .map(str::to_string),
            text: shows_text.then_some(TextLook {
                size_px: 14.0 * density,
                bold: center,
                max_lines: None,
                tone: Tone::Normal,
                align: if center { Align::Center } else { Align::Start },
            }),
            value: 0.0,
            density,
            image: None,
            bg: None,
            on: None,
        }
    }
}
