//! Views: the element tree a screen's layout XML describes (or the phone builds for its own
//! system UI), before layout gives it bounds.

use std::collections::BTreeMap;

use phonebench_pixels::{Role, Tone};

/// A size along one axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dim {
    /// Sized by content.
    Wrap,
    /// Fills the parent.
    Match,
    /// Fixed, in px.
    Px(f32),
    /// Share of the parent, 0..=1.
    Fraction(f32),
}

/// How a container lays out its children.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Top to bottom.
    Vertical,
    /// Start to end.
    Horizontal,
    /// First child in flow, the rest placed over it by `gravity` (FrameLayout).
    Stack,
}

/// Cross-axis or main-axis alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Start edge.
    Start,
    /// Centre.
    Center,
    /// End edge.
    End,
    /// Fill (cross axis) / spread (main axis).
    Stretch,
}

/// What a text field takes (`input`, Android's `inputType`): it decides the keyboard shown
/// and which typed characters the field keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InputType {
    /// Any text (letters keyboard).
    #[default]
    Text,
    /// Whole numbers (a numeric pad; digits and `-`).
    Number,
    /// Numbers with a decimal point.
    Decimal,
    /// Phone numbers (the dial pad; digits, `+`, `*`, `#`, spaces, `-`, `(`, `)`).
    Phone,
    /// E-mail addresses (letters with `@` and `.`).
    Email,
    /// Web addresses (letters with `/` and `.com`).
    Uri,
    /// Several lines: Enter starts a new line.
    Multiline,
}

impl InputType {
    /// Parses an `input` attribute value.
    pub fn parse(value: &str) -> Result<InputType, String> {
        Ok(match value.trim() {
            "text" | "password" => InputType::Text,
            "number" => InputType::Number,
            "decimal" => InputType::Decimal,
            "phone" => InputType::Phone,
            "email" => InputType::Email,
            "uri" | "url" => InputType::Uri,
            "multiline" => InputType::Multiline,
            other => {
                return Err(format!(
                    "`{other}` is not an input type (text, number, decimal, phone, email, uri, multiline, password)"
                ));
            }
        })
    }

    /// Whether a field of this type keeps character `c` (as Android's key listeners filter).
    pub fn accepts(self, c: char) -> bool {
        match self {
            InputType::Number => c.is_ascii_digit() || c == '-',
            InputType::Decimal => c.is_ascii_digit() || c == '-' || c == '.' || c == ',',
            InputType::Phone => c.is_ascii_digit() || "+*#;,-() .N/".contains(c),
            _ => true,
        }
    }
}

/// A pager's state: its children are pages, only `page` is laid out and in the tree (as
/// ViewPager2's RecyclerView attaches only the page on screen).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pager {
    /// The page shown, from 0.
    pub page: usize,
    /// How many pages the template gave.
    pub pages: usize,
}

/// Four edges in px.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Edges {
    /// Top.
    pub top: f32,
    /// Right.
    pub right: f32,
    /// Bottom.
    pub bottom: f32,
    /// Left.
    pub left: f32,
}

/// Box layout of one view.
#[derive(Debug, Clone, PartialEq)]
pub struct BoxStyle {
    /// Width.
    pub width: Dim,
    /// Height.
    pub height: Dim,
    /// Flex grow along the parent's axis.
    pub weight: f32,
    /// Inner spacing.
    pub padding: Edges,
    /// Outer spacing.
    pub margin: Edges,
    /// Space between children.
    pub gap: f32,
    /// Cross-axis alignment of children.
    pub align: Align,
    /// Main-axis distribution of children.
    pub justify: Align,
    /// How children are laid out (containers).
    pub axis: Axis,
    /// Where a stacked child sits in a FrameLayout: (horizontal, vertical).
    pub gravity: (Align, Align),
    /// Minimum height, px.
    pub min_height: f32,
}

impl Default for BoxStyle {
    fn default() -> Self {
        BoxStyle {
            width: Dim::Wrap,
            height: Dim::Wrap,
            weight: 0.0,
            padding: Edges::default(),
            margin: Edges::default(),
            gap: 0.0,
            align: Align::Stretch,
            justify: Align::Start,
            axis: Axis::Vertical,
            gravity: (Align::Start, Align::Start),
            min_height: 0.0,
        }
    }
}

/// Text look of a view that shows text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextLook {
    /// Size in px.
    pub size_px: f32,
    /// Bold face.
    pub bold: bool,
    /// Maximum lines shown.
    pub max_lines: Option<u32>,
}

/// What a view is, which decides how input reaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A container.
    Group,
    /// A vertical scroll container.
    Scroll,
    /// Shows text.
    Text,
    /// A text field.
    Edit,
    /// Switch or check box: a tap flips it.
    Toggle,
    /// A radio button.
    Radio,
    /// A seek bar: a tap or drag sets its value.
    Seek,
    /// An image or icon button.
    Image,
}

/// Something the phone does itself when a system view is used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SystemHandler {
    /// Launcher icon: open app `i`.
    Launch(usize),
    /// Navigation bar: back.
    Back,
    /// Navigation bar: home.
    Home,
    /// Navigation bar: overview (recent apps).
    Recents,
    /// Keyboard key: type this text.
    Type(String),
    /// Keyboard delete key.
    Backspace,
    /// Keyboard enter key.
    Enter,
    /// Dialog button `i`.
    DialogButton(usize),
    /// Single-choice dialog option `i`.
    DialogOption(usize),
    /// Menu item `i`.
    MenuItem(usize),
    /// Overview card: switch to app `i`.
    SwitchTo(usize),
    /// The "keeps stopping" dialog's "Close app": close app `i` (its back stack goes).
    CloseApp(usize),
    /// Notification `i` of the shade: open it.
    OpenNotification(usize),
    /// The shade's "Clear all".
    ClearNotifications,
    /// Entry `i` of the share sheet or app chooser.
    Choose(usize),
    /// The launcher's search bar: open the app search.
    SearchApps,
    /// A button of a disturbance (`disturb.rs`): a pop-up's, an ad's, a notification's.
    Disturbance(crate::disturb::DisturbanceButton),
    /// Keyboard Shift: the next letter is a capital.
    Shift,
    /// Keyboard `?123` (true) / `ABC` (false): the symbols layer or the letters.
    KeyboardSymbols(bool),
    /// An input dialog's field: bring the keyboard up.
    DialogInput,
    /// Date picker: the month before (-1) or after (+1).
    PickerMonth(i32),
    /// Date picker: a day of the month shown.
    PickerDay(u32),
    /// Time picker: the hour (0) or minute (1) field takes typing.
    PickerField(u8),
    /// Time picker: AM (false) or PM (true).
    PickerAmPm(bool),
    /// A picker's OK.
    PickerOk,
    /// A picker's Cancel.
    PickerCancel,
}

/// What runs when a view is used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handler {
    /// A named action of the foreground app.
    App(String),
    /// The phone's own behaviour.
    System(SystemHandler),
}

/// The event handlers and arguments of a view.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Hooks {
    /// On tap.
    pub on_click: Option<Handler>,
    /// On long press.
    pub on_long_click: Option<Handler>,
    /// On value change (text, toggle, seek bar).
    pub on_change: Option<Handler>,
    /// On Enter in a text field.
    pub on_submit: Option<Handler>,
    /// `arg-*` attributes, in name order.
    pub args: BTreeMap<String, String>,
    /// Long press offers Copy.
    pub copyable: bool,
}

/// One view.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    /// Android class name.
    pub class: String,
    /// What it is.
    pub kind: Kind,
    /// The element id as written (`name` or `android:id/name`), if any.
    pub id: Option<String>,
    /// Full resource id.
    pub resource_id: String,
    /// Text shown.
    pub text: String,
    /// content-desc.
    pub desc: String,
    /// Hint of a text field.
    pub hint: Option<String>,
    /// Enabled.
    pub enabled: bool,
    /// Checked.
    pub checked: bool,
    /// Selected.
    pub selected: bool,
    /// Password field.
    pub password: bool,
    /// Forced clickable.
    pub clickable: bool,
    /// Focus on open (text fields).
    pub focus: bool,
    /// Initial text of a text field.
    pub value: Option<String>,
    /// Seek bar progress and maximum.
    pub seek: (i64, i64),
    /// Scroll container that opens scrolled to its end (a conversation).
    pub start_at_end: bool,
    /// A pager (`ViewPager`): the page shown and how many there are.
    pub pager: Option<Pager>,
    /// The picture an `ImageView` shows (`src`): `placeholder:KEY`.
    pub src: Option<String>,
    /// What a text field takes (`input`).
    pub input: InputType,
    /// Event handlers.
    pub hooks: Hooks,
    /// Box layout.
    pub style: BoxStyle,
    /// Text look, for views that show text.
    pub look: Option<TextLook>,
    /// How the screenshot draws it (`style`); `None`: the widget's default.
    pub role: Option<Role>,
    /// A Material Symbols icon (`icon`).
    pub icon: Option<String>,
    /// Text colour (`color`).
    pub tone: Tone,
    /// A palette background (`bg`), drawn only.
    pub bg: Option<phonebench_pixels::Swatch>,
    /// Text drawn centred in the view (system views such as the date picker's day cells).
    pub text_center: bool,
    /// A `<Gap>`: takes its height in the layout and is neither in the tree nor drawn (it stands
    /// for the rows a virtualised list does not render; see the template function `window`).
    pub placeholder: bool,
    /// Children.
    pub children: Vec<View>,
}

impl View {
    /// A view of `class` with the defaults of `kind`.
    pub fn new(class: &str, kind: Kind) -> View {
        View {
            class: class.to_string(),
            kind,
            id: None,
            resource_id: String::new(),
            text: String::new(),
            desc: String::new(),
            hint: None,
            enabled: true,
            checked: false,
            selected: false,
            password: false,
            clickable: false,
            focus: false,
            value: None,
            seek: (0, 100),
            start_at_end: false,
            pager: None,
            src: None,
            input: InputType::Text,
            hooks: Hooks::default(),
            style: BoxStyle::default(),
            look: None,
            role: None,
            icon: None,
            tone: Tone::Normal,
            bg: None,
            text_center: false,
            placeholder: false,
            children: Vec::new(),
        }
    }

    /// Whether a tap does something here.
    pub fn is_clickable(&self) -> bool {
        self.clickable
            || self.hooks.on_click.is_some()
            || matches!(self.kind, Kind::Edit | Kind::Toggle | Kind::Radio | Kind::Seek) && self.enabled
    }

    /// Whether a long press does something here.
    pub fn is_long_clickable(&self) -> bool {
        self.hooks.on_long_click.is_some() || self.hooks.copyable || self.kind == Kind::Edit
    }

    /// Whether it shows text that layout must measure.
    pub fn shows_text(&self) -> bool {
        self.look.is_some()
    }

    /// How it is drawn: its `style`, or the Material 3 default for its widget.
    pub fn paint_role(&self) -> Role {
        if let Some(role) = self.role {
            return role;
        }
        match self.kind {
            Kind::Edit => Role::Field,
            Kind::Toggle if self.class.ends_with("Switch") => Role::Switch,
            Kind::Toggle => Role::CheckBox,
            Kind::Radio => Role::Radio,
            Kind::Seek => Role::Seek,
            Kind::Image if self.class.ends_with("ImageButton") => Role::IconButton,
            Kind::Image => Role::Image,
            Kind::Text if self.class.ends_with(".Button") => Role::FilledButton,
            Kind::Group if self.class.ends_with("Toolbar") => Role::AppBar,
            _ => Role::Plain,
        }
    }
}
