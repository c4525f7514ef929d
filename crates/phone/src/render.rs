//! Composing the screen: every window's views laid out, scrolled, clipped and turned into one
//! [`UiTree`], with a [`NodeInfo`] per node saying how input reaches it.

use std::collections::BTreeMap;
use std::sync::Arc;

use minijinja::Value;
use phonebench_apps::{AppPackage, RenderData};
use phonebench_pixels::{Align as PaintAlign, CHECK_DP, Frame, Paint, Role, SWITCH_DP, TextLook, guess_icon};
use phonebench_uitree::{Bounds, Node, TreeBuilder, UiTree, WindowKind};

use crate::data::{RowRange, ScreenData, Scrolled, WindowCall, Windows};
use crate::layout::{Boxes, KeptLayout, LaidOut, Rect, layout, layout_kept};
use crate::markup::{LayoutError, ParsedLayout};
use crate::phone::{Foreground, Overlay, Phone, PhoneError};
use crate::system::{self, KEYBOARD, LAUNCHER, SYSTEMUI};
use crate::view::{Hooks, Kind, View};

/// How input reaches one node of the composed screen.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NodeInfo {
    /// Whether the node belongs to the foreground app's screen (not system UI or a dialog).
    pub surface_is_app: bool,
    pub kind: Kind,
    pub id: Option<String>,
    pub hooks: Hooks,
    pub enabled: bool,
    pub checked: bool,
    pub text: String,
    pub bounds: Bounds,
    /// Seek bar: (max, left edge, width) in px.
    pub seek: Option<(i64, i32, i32)>,
    /// Scroll container: (state key, max offset, current offset).
    pub scroll: Option<(String, f32, f32)>,
    /// Pager: (element id, page shown, pages).
    pub pager: Option<(String, usize, usize)>,
    /// A text field's input type.
    pub input: crate::view::InputType,
}

impl NodeInfo {
    /// Whether a tap does something here.
    pub fn takes_tap(&self) -> bool {
        self.hooks.on_click.is_some()
            || matches!(self.kind, Kind::Edit | Kind::Toggle | Kind::Radio | Kind::Seek)
    }

    /// Whether a long press does something here.
    pub fn takes_long_press(&self) -> bool {
        self.hooks.on_long_click.is_some() || self.hooks.copyable || self.kind == Kind::Edit
    }

    /// The seek bar value under screen x.
    pub fn seek_value_at(&self, x: i32) -> i64 {
        match self.seek {
            Some((max, left, width)) if width > 0 => {
                let f = f64::from(x - left) / f64::from(width);
                (f.clamp(0.0, 1.0) * max as f64).round() as i64
            }
            _ => 0,
        }
    }
}

/// What a screen's rendering depends on besides scrolling: when it is unchanged, the views and
/// their layout are reused and only scrolling and clipping are redone.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CacheKey {
    screen: String,
    args: BTreeMap<String, Value>,
    vars: BTreeMap<String, Value>,
    fields: BTreeMap<String, String>,
    /// The stamps of the databases the screen can read (its app's, then each `reads` app's).
    data: Vec<crate::data::DataStamp>,
    pages: BTreeMap<String, usize>,
    /// The clock cut to the screen's tick (a minute unless `[screens.NAME] tick` says), when
    /// the screen's template can read `now`.
    time: Option<i64>,
    /// The clipboard, when the template can read it.
    clipboard: Option<Option<String>>,
    keyboard: bool,
    /// The rows each virtualised list renders where the screen is scrolled now (the template's
    /// `window` calls of the last render, in order): a scroll past the rendered rows renders anew.
    windows: Vec<(usize, usize)>,
}

impl CacheKey {
    /// What the template's output depends on: the key without what only the views' state
    /// (text fields unless the template reads them) and the layout area (the keyboard) depend on.
    fn template_part(&self, reads_fields: bool) -> CacheKey {
        CacheKey {
            fields: if reads_fields { self.fields.clone() } else { BTreeMap::new() },
            keyboard: false,
            ..self.clone()
        }
    }
}

/// A rendered, laid-out app screen.
#[derive(Debug, Clone)]
pub(crate) struct ScreenCache {
    key: CacheKey,
    view: ScreenView,
    boxes: Boxes,
    /// The layout's taffy tree: the next render of the same screen lays out only what changed.
    kept: KeptLayout,
    /// The markup the template rendered, and the views parsed from it before the frame's state
    /// (fields, pager pages, focus) went in: markup rendered again unchanged is not parsed again.
    xml: String,
    /// Shared with [`crate::shared`] and the render that made it: cloned only to be reparsed.
    parsed: Arc<ParsedLayout>,
    /// The template's `window` calls (virtualised lists), in order, with the rows rendered.
    windows: Windows,
}

/// How many renders of its screens an app keeps (the most recent first): going back to a
/// screen, or to one shown a few steps ago, reuses its render when nothing it depends on
/// changed, as Android keeps the views of the activities on the back stack.
const RENDERS_KEPT: usize = 4;

/// An app's kept renders ([`ScreenCache`]), the most recent first, at most [`RENDERS_KEPT`].
#[derive(Debug, Default)]
pub(crate) struct Renders(Vec<ScreenCache>);

impl Renders {
    /// Forgets every kept render.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// Keeps `render` as the most recent, forgetting the oldest beyond [`RENDERS_KEPT`].
    fn keep(&mut self, render: ScreenCache) {
        self.0.insert(0, render);
        self.0.truncate(RENDERS_KEPT);
    }
}

/// How many layouts of system views [`SystemLayouts`] keeps: the status bar, the navigation
/// bar, a keyboard layer or two and the shade.
const SYSTEM_LAYOUTS_KEPT: usize = 8;

/// The last layouts of the system's views (status bar, navigation bar, keyboard, shade), each
/// with the view, area and density it was made for: the same view in the same area lays out the
/// same, and most steps change none of them (the clock moves once a minute).
#[derive(Debug, Default)]
pub(crate) struct SystemLayouts(Vec<(View, Rect, f32, crate::layout::Boxes)>);

impl SystemLayouts {
    /// `view` laid out to fill `area`: a kept layout when one was made for an equal view, area
    /// and density, else a new one (then kept, the oldest forgotten beyond
    /// [`SYSTEM_LAYOUTS_KEPT`]).
    fn layout<'a>(&mut self, view: &'a View, area: Rect, density: f32) -> Result<LaidOut<'a>, String> {
        let found = self.0.iter().position(|(v, a, d, _)| *a == area && *d == density && v == view);
        if let Some(j) = found {
            let kept = self.0.remove(j);
            let laid = LaidOut::from_boxes(view, &kept.3);
            self.0.insert(0, kept);
            return Ok(laid);
        }
        let laid = layout(view, area, true, density)?;
        self.0.insert(0, (view.clone(), area, density, laid.boxes()));
        self.0.truncate(SYSTEM_LAYOUTS_KEPT);
        Ok(laid)
    }
}

/// What one render of an app's screen made: the views to lay out, the markup, the views as
/// parsed from it and the template's `window` calls (see [`ScreenCache`]).
struct Rendered {
    view: ScreenView,
    xml: String,
    parsed: Arc<ParsedLayout>,
    windows: Windows,
    /// The markup's key in [`crate::shared`] (`None`: the phone does not share).
    parse_key: Option<crate::shared::Digest>,
}

/// App ids the launcher's dock shows, in order, when installed (at most four).
const DOCK_APPS: [&str; 6] = ["phone", "messages", "email", "camera", "browser", "chrome"];

/// The stacking layer of toast windows. Toasts do not take touches (as on Android): touch
/// dispatch skips windows on this layer.
pub(crate) const TOAST_LAYER: i32 = 10;

/// An app screen's views: the parse's own tree when the frame's state changes nothing in it
/// (no pager, every field holding the text its markup gives), else a copy with that state in.
/// Sharing the parse saves copying every view of the screen on each render (8% of a writing
/// tap's time in a profile of Settings' and the Dialer's).
#[derive(Debug, Clone)]
pub(crate) enum ScreenView {
    /// The parsed markup's tree, as parsed.
    Parsed(Arc<ParsedLayout>),
    /// A tree of its own.
    Own(Box<View>),
}

impl std::ops::Deref for ScreenView {
    type Target = View;
    fn deref(&self) -> &View {
        match self {
            ScreenView::Parsed(parsed) => &parsed.root,
            ScreenView::Own(view) => view,
        }
    }
}

impl ScreenView {
    /// The views to change: copied from the parse first, when they are its.
    fn to_mut(&mut self) -> &mut View {
        if let ScreenView::Parsed(parsed) = self {
            *self = ScreenView::Own(Box::new(parsed.root.clone()));
        }
        match self {
            ScreenView::Own(view) => view,
            // Not reached (made a copy just above); copy-on-write all the same.
            ScreenView::Parsed(parsed) => &mut Arc::make_mut(parsed).root,
        }
    }
}

/// The composed screen.
#[derive(Debug, Clone)]
pub(crate) struct Screen {
    /// Shared: episodes and screenshots hold it without copying.
    pub tree: Arc<UiTree>,
    pub infos: Vec<NodeInfo>,
    /// How each node is drawn (the screenshot's side of the tree), by node id.
    pub paints: Arc<[Paint]>,
    /// Bounds of the dialog or menu, when one is shown.
    pub overlay_bounds: Option<Bounds>,
    /// Bounds of the status bar, navigation bar and keyboard (taps there do not close overlays).
    pub system_bounds: Vec<Bounds>,
    /// The note for the agent when the foreground app's screen failed to render and its
    /// "keeps stopping" screen shows instead.
    pub crash: Option<String>,
    /// Bounds of a heads-up notification (a disturbance), when one shows.
    pub heads_up_bounds: Option<Bounds>,
}

struct WindowSpec<'a> {
    kind: WindowKind,
    layer: i32,
    package: String,
    laid: LaidOut<'a>,
    app_surface: bool,
    scroll: BTreeMap<String, f32>,
    focused: Option<String>,
}

impl Phone {
    /// Renders the screen if anything changed since the last render.
    pub(crate) fn ensure_screen(&mut self) -> Result<(), PhoneError> {
        if self.screen.is_none() {
            let screen = self.compose()?;
            self.screen = Some(screen);
        }
        Ok(())
    }

    fn compose(&mut self) -> Result<Screen, PhoneError> {
        let d = self.config.display;
        let density = d.density();
        let (screen_w, app_top) = (d.width_px(), d.status_bar_h());
        let app_bottom_full = d.height_px() - d.nav_bar_h();
        let now = self.now_ms();
        if self.toast.as_ref().is_some_and(|t| now >= t.until_ms) {
            self.toast = None;
        }
        // The app's view comes first: rendering applies autofocus, which decides the keyboard.
        let mut cached: Option<ScreenCache> = None;
        // The same screen's last render when something it depends on changed: its markup and
        // layout let this render redo only what differs.
        let mut stale: Option<ScreenCache> = None;
        let mut rendered: Option<(String, Arc<ParsedLayout>, Windows)> = None;
        // A screen that fails on the app's own data (template, markup, SQL, a limit) shows
        // Android's "<App> keeps stopping" instead: the agent sees the error and can go back.
        let mut crash: Option<(usize, String)> = None;
        let loading = matches!(self.foreground, Foreground::App(_)) && self.disturber.loading(now);
        let mut reordered = false;
        // What keys the app view's layout among phones (`shared`): the markup's parse key and
        // the frame's fields and pages, when the view is what they make (not reordered).
        let mut shared_views: Option<crate::shared::Digest> = None;
        let (main_view, main_package, app_index) = match self.foreground {
            // A slow screen (a disturbance): the app shows its progress indicator, not rendered
            // (its first render, with autofocus, comes when it has loaded).
            Foreground::App(i) if loading => {
                let package = self.apps[i].package.manifest.package.clone();
                (ScreenView::Own(Box::new(crate::disturb::loading_view(&d, &package))), package, Some(i))
            }
            Foreground::App(i) => {
                // A list that reordered (a disturbance) is rendered anew each time, never cached.
                let (depth, screen) = self.top_screen(i);
                let rotation = self.disturber.rotation_on((i, depth, screen));
                let screen = screen.to_owned();
                // A kept render of this screen whose key is the key now (each computed with
                // that render's own `window` calls).
                let hit = rotation.is_none().then(|| {
                    self.apps[i].renders.0.iter().position(|c| {
                        c.key.screen == screen && self.cache_key(i, &c.windows).as_ref() == Some(&c.key)
                    })
                });
                let view = match hit.flatten() {
                    Some(j) => {
                        let mut c = self.apps[i].renders.0.remove(j);
                        // Moved out, not copied (the parse stands in): the cache gets the view back below.
                        let view = std::mem::replace(&mut c.view, ScreenView::Parsed(Arc::clone(&c.parsed)));
                        cached = Some(c);
                        view
                    }
                    None => {
                        let renders = &mut self.apps[i].renders.0;
                        stale =
                            renders.iter().position(|c| c.key.screen == screen).map(|j| renders.remove(j));
                        let result = self.render_app(i, stale.as_mut());
                        match result {
                            Ok(Rendered { mut view, xml, parsed, windows, parse_key }) => {
                                rendered = Some((xml, parsed, windows));
                                if let Some(rotation) = rotation {
                                    crate::disturb::reorder_rows(view.to_mut(), rotation);
                                    reordered = true;
                                } else if let (Some(parse_key), Some(frame)) =
                                    (parse_key, self.apps[i].stack.last())
                                {
                                    // Equal markup with equal fields and pages: equal views.
                                    shared_views =
                                        Some(crate::shared::view_key(parse_key, &frame.fields, &frame.pages));
                                }
                                view
                            }
                            Err(e) => {
                                let message = self.app_failure(e)?;
                                let view = self.crash_screen(i, &message);
                                crash = Some((i, message));
                                // Nothing on the failed screen can take typing.
                                self.keyboard = false;
                                ScreenView::Own(Box::new(view))
                            }
                        }
                    }
                };
                (view, self.apps[i].package.manifest.package.clone(), Some(i))
            }
            Foreground::Home => {
                let entry = |i: usize| {
                    let m = &self.apps[i].package.manifest;
                    (m.name.clone(), m.icon.clone(), i)
                };
                let view = match &self.launcher_search {
                    Some(query) => {
                        let found: Vec<_> =
                            self.apps_matching(query).into_iter().map(|(_, i)| entry(i)).collect();
                        system::app_search(&d, query, &found)
                    }
                    None => {
                        // The dock holds the apps a Pixel puts there, when installed.
                        let dock: Vec<usize> = DOCK_APPS
                            .iter()
                            .filter_map(|id| self.apps.iter().position(|a| a.package.manifest.id == *id))
                            .take(4)
                            .collect();
                        let grid: Vec<_> =
                            (0..self.apps.len()).filter(|i| !dock.contains(i)).map(entry).collect();
                        let dock: Vec<_> = dock.into_iter().map(entry).collect();
                        system::launcher(&d, &grid, &dock)
                    }
                };
                (ScreenView::Own(Box::new(view)), LAUNCHER.to_string(), None)
            }
            Foreground::Overview => {
                let apps: Vec<(String, usize)> =
                    self.recents.iter().map(|&i| (self.apps[i].package.manifest.name.clone(), i)).collect();
                (ScreenView::Own(Box::new(system::overview(&d, &apps))), LAUNCHER.to_string(), None)
            }
        };
        let keyboard = self.keyboard_shown() && !loading;
        let above_keys = if keyboard { app_bottom_full - d.keyboard_h() } else { app_bottom_full };
        // A banner ad (a disturbance) takes a strip under the app's screen, which is laid out above it.
        let banner = app_index.is_some() && crash.is_none() && self.disturber.banner;
        let banner_h = if banner { crate::disturb::banner_height(&d) } else { 0.0 };
        let app_bottom = above_keys - banner_h;
        let banner_view = banner.then(|| crate::disturb::banner_view(&d, self.disturber.ad));
        let popup_view = self.disturber.active.map(|(popup, i)| {
            let m = &self.apps[i].package.manifest;
            crate::disturb::popup_view(
                &d,
                popup,
                &m.name,
                &m.package,
                self.disturber.stars,
                self.disturber.ad,
            )
        });
        let heads_up_view =
            self.disturber.heads_up.map(|(which, _)| crate::disturb::heads_up_view(&d, which));
        let app_area = Rect { x: 0.0, y: app_top, w: screen_w, h: app_bottom - app_top };
        let frame = self.top_frame().cloned();
        let overlay_view = self.overlay.as_ref().map(|o| overlay_view(&d, o));
        let toast_view = self.toast.as_ref().map(|t| (system::toast(&d, &t.message), t.package.clone()));
        let keyboard_view = keyboard.then(|| system::keyboard(&d, self.keyboard_layout(&main_view)));
        let clock = phonebench_apps::templates::format_datetime(now, "%-H:%M").unwrap_or_default();
        let home = self.foreground == Foreground::Home;
        // One status-bar icon per app with notifications, newest first.
        let mut notifying: Vec<(String, String)> = Vec::new();
        for n in &self.timeline.notifications {
            let m = &self.apps[n.app].package.manifest;
            if !notifying.iter().any(|(name, _)| name == &m.name) {
                notifying.push((m.name.clone(), m.icon.clone()));
            }
        }
        let status = system::status_bar(&d, &clock, self.battery, home && !self.shade, &notifying);
        let shade_view = self.shade.then(|| {
            let date = phonebench_apps::templates::format_datetime(now, "%a, %b %-d").unwrap_or_default();
            system::shade(&d, &date, &clock, &self.shade_rows())
        });
        let nav = system::nav_bar(&d, home);

        let fail = |message: String| PhoneError::App { app: main_package.clone(), message };
        // An app view that cannot be laid out is the app's failure too.
        let crash_view;
        let mut kept = None;
        let layout_key = shared_views
            .filter(|_| crash.is_none())
            .map(|views| crate::shared::layout_key(views, app_area, density));
        let shared_boxes = match (&cached, layout_key) {
            (None, Some(key)) => crate::shared::layout(key),
            _ => None,
        };
        let main_laid = match (&cached, shared_boxes) {
            (Some(c), _) => LaidOut::from_boxes(&main_view, &c.boxes),
            (None, Some(boxes)) => {
                // Laid out by some phone before: this phone keeps no taffy tree for it (its
                // next render of the screen lays out afresh, or finds that one shared too).
                kept = Some(KeptLayout::none());
                LaidOut::from_boxes(&main_view, &boxes)
            }
            (None, None) => {
                let laid = match stale.take().filter(|_| crash.is_none()) {
                    Some(ScreenCache { view, kept, .. }) => {
                        layout_kept(&main_view, app_area, true, density, Some((&view, kept)))
                    }
                    None => layout_kept(&main_view, app_area, true, density, None),
                };
                match (laid, app_index) {
                    (Ok((laid, k)), _) => {
                        kept = Some(k);
                        if let Some(key) = layout_key.filter(|_| crash.is_none()) {
                            crate::shared::keep_layout(key, Arc::new(laid.boxes()));
                        }
                        laid
                    }
                    (Err(message), Some(i)) if crash.is_none() => {
                        let message = self.app_failure(fail(message))?;
                        crash_view = self.crash_screen(i, &message);
                        crash = Some((i, message));
                        layout(&crash_view, app_area, true, density).map_err(fail)?
                    }
                    (Err(message), _) => return Err(fail(message)),
                }
            }
        };
        let mut windows: Vec<WindowSpec> = Vec::new();
        windows.push(WindowSpec {
            kind: WindowKind::Application,
            layer: 0,
            package: main_package.clone(),
            laid: main_laid,
            app_surface: app_index.is_some() && crash.is_none() && !loading,
            scroll: frame.as_ref().map(|f| f.scroll.clone()).unwrap_or_default(),
            focused: frame.as_ref().and_then(|f| f.focused.clone()),
        });
        let mut overlay_bounds = None;
        if let Some(view) = &overlay_view {
            let screen_area = Rect { x: 0.0, y: app_top, w: screen_w, h: app_bottom_full - app_top };
            let mut laid = layout(view, screen_area, false, density).map_err(fail)?;
            let r = laid.rects[0];
            let (x, y) = match &self.overlay {
                // At the touch, kept on screen and above the keyboard when it is up (a text
                // field's Cut / Copy / Paste menu must not open under the keys).
                Some(Overlay::Menu { anchor, .. }) => (
                    anchor.0.min(screen_w - r.w - 8.0).max(8.0),
                    anchor.1.min(app_bottom - r.h - 8.0).max(app_top + 8.0),
                ),
                // Centred in what the keyboard leaves (an input dialog stays visible).
                _ => ((screen_w - r.w) / 2.0, (app_top + (app_bottom - app_top - r.h) / 2.0).max(app_top)),
            };
            laid.translate(x - r.x, y - r.y);
            overlay_bounds = Some(to_bounds(laid.rects[0]));
            windows.push(WindowSpec {
                kind: WindowKind::Application,
                layer: 1,
                package: main_package.clone(),
                laid,
                app_surface: false,
                scroll: BTreeMap::new(),
                focused: None,
            });
        }
        if let Some(view) = &banner_view {
            let area = Rect { x: 0.0, y: app_bottom, w: screen_w, h: banner_h };
            windows.push(WindowSpec {
                kind: WindowKind::Application,
                layer: 0,
                package: "com.google.android.gms".to_string(),
                laid: layout(view, area, true, density).map_err(fail)?,
                app_surface: false,
                scroll: BTreeMap::new(),
                focused: None,
            });
        }
        if let Some((view, package)) = &popup_view {
            // Over the app and its banner, above the keyboard when it is up.
            let area = Rect { x: 0.0, y: app_top, w: screen_w, h: above_keys - app_top };
            windows.push(WindowSpec {
                kind: WindowKind::Application,
                layer: 2,
                package: package.clone(),
                laid: layout(view, area, true, density).map_err(fail)?,
                app_surface: false,
                scroll: BTreeMap::new(),
                focused: None,
            });
        }
        let mut heads_up_bounds = None;
        if let Some(view) = &heads_up_view {
            let margin = d.dp(8.0).round();
            let area = Rect { x: margin, y: app_top + margin, w: screen_w - 2.0 * margin, h: d.dp(200.0) };
            let laid = layout(view, area, false, density).map_err(fail)?;
            heads_up_bounds = Some(to_bounds(laid.rects[0]));
            windows.push(WindowSpec {
                kind: WindowKind::SystemUi,
                layer: 24,
                package: SYSTEMUI.to_string(),
                laid,
                app_surface: false,
                scroll: BTreeMap::new(),
                focused: None,
            });
        }
        if let Some((view, package)) = &toast_view {
            let mut laid = layout(
                view,
                Rect { x: 0.0, y: 0.0, w: screen_w - d.dp(36.0), h: d.dp(150.0) },
                false,
                density,
            )
            .map_err(fail)?;
            let r = laid.rects[0];
            laid.translate((screen_w - r.w) / 2.0 - r.x, app_bottom - d.dp(90.0).round() - r.h - r.y);
            windows.push(WindowSpec {
                kind: WindowKind::Overlay,
                layer: TOAST_LAYER,
                package: package.clone(),
                laid,
                app_surface: false,
                scroll: BTreeMap::new(),
                focused: None,
            });
        }
        let mut system_bounds = Vec::new();
        if let Some(view) = &shade_view {
            // Over the app, its dialogs and toasts; under the system bars, as Android's shade.
            let area = Rect { x: 0.0, y: app_top, w: screen_w, h: app_bottom_full - app_top };
            system_bounds.push(to_bounds(area));
            windows.push(WindowSpec {
                kind: WindowKind::SystemUi,
                layer: 25,
                package: SYSTEMUI.to_string(),
                laid: self.system_layouts.layout(view, area, density).map_err(fail)?,
                app_surface: false,
                scroll: self.shade_scroll.clone(),
                focused: None,
            });
        }
        if let Some(view) = &keyboard_view {
            let area = Rect { x: 0.0, y: app_bottom_full - d.keyboard_h(), w: screen_w, h: d.keyboard_h() };
            system_bounds.push(to_bounds(area));
            windows.push(WindowSpec {
                kind: WindowKind::InputMethod,
                layer: 20,
                package: KEYBOARD.to_string(),
                laid: self.system_layouts.layout(view, area, density).map_err(fail)?,
                app_surface: false,
                scroll: BTreeMap::new(),
                focused: None,
            });
        }
        let status_area = Rect { x: 0.0, y: 0.0, w: screen_w, h: app_top };
        let nav_area = Rect { x: 0.0, y: app_bottom_full, w: screen_w, h: d.nav_bar_h() };
        system_bounds.push(to_bounds(status_area));
        system_bounds.push(to_bounds(nav_area));
        for (view, area) in [(&status, status_area), (&nav, nav_area)] {
            windows.push(WindowSpec {
                kind: WindowKind::SystemUi,
                layer: 30,
                package: SYSTEMUI.to_string(),
                laid: self.system_layouts.layout(view, area, density).map_err(fail)?,
                app_surface: false,
                scroll: BTreeMap::new(),
                focused: None,
            });
        }

        let mut builder = TreeBuilder::new();
        builder.rotation(0);
        let mut infos = Vec::new();
        let mut paints = Vec::new();
        for window in &windows {
            emit(&mut builder, &mut infos, &mut paints, window, density).map_err(fail)?;
        }
        let tree = builder.finish().map_err(|e| fail(format!("building the UI tree: {e}")))?;
        if let Some(i) = app_index
            && crash.is_none()
            && !loading
            && !reordered
        {
            let parts = match cached {
                Some(c) => Some((c.boxes, c.kept, c.xml, c.parsed, c.windows)),
                None => match (kept, rendered) {
                    (Some(kept), Some((xml, parsed, calls))) => {
                        Some((windows[0].laid.boxes(), kept, xml, parsed, calls))
                    }
                    _ => None,
                },
            };
            drop(windows);
            if let Some((boxes, kept, xml, parsed, calls)) = parts
                && let Some(key) = self.cache_key(i, &calls)
            {
                self.apps[i].renders.keep(ScreenCache {
                    key,
                    view: main_view,
                    boxes,
                    kept,
                    xml,
                    parsed,
                    windows: calls,
                });
            }
        }
        let crash =
            crash.map(|(i, message)| crate::phone::crash_note(&self.apps[i].package.manifest.name, &message));
        Ok(Screen {
            tree: Arc::new(tree),
            infos,
            paints: paints.into(),
            overlay_bounds,
            system_bounds,
            crash,
            heads_up_bounds,
        })
    }

    /// The screen app `i` shows when its own screen failed: the "keeps stopping" dialog.
    fn crash_screen(&self, i: usize, message: &str) -> View {
        system::crash_screen(&self.config.display, &self.apps[i].package.manifest.name, message, i)
    }

    /// The keyboard for the focused field of `view` (the screen being composed).
    fn keyboard_layout(&self, view: &View) -> system::KeyboardLayout {
        let focused = self.top_frame().and_then(|f| f.focused.clone());
        let mut input = crate::view::InputType::Text;
        if let Some(overlay) = self.overlay_input() {
            input = overlay;
        } else if let Some(id) = focused.filter(|_| !self.searching_apps()) {
            let mut stack = vec![view];
            while let Some(v) = stack.pop() {
                if v.kind == Kind::Edit && v.id.as_deref() == Some(id.as_str()) {
                    input = v.input;
                    break;
                }
                stack.extend(v.children.iter());
            }
        }
        system::KeyboardLayout { input, shift: self.keyboard_shift, symbols: self.keyboard_symbols }
    }

    /// How finely app `i`'s top screen sees time, ms.
    fn tick_ms(&self, i: usize) -> i64 {
        let app = &self.apps[i];
        app.stack
            .last()
            .and_then(|f| app.package.manifest.screens.get(&f.screen))
            .and_then(|s| s.tick_ms)
            .unwrap_or(60_000)
    }

    /// How many views the app in front rendered for its screen (what its template's markup
    /// parsed to, pager pages and `<Gap>`s included), once it was shown; `None` for the launcher,
    /// an app screen not shown yet or one that failed.
    pub fn rendered_views(&self) -> Option<usize> {
        let Foreground::App(i) = self.foreground else { return None };
        let app = &self.apps[i];
        // The most recent kept render is another screen's when the top screen's own render
        // failed (crash, loading screen), so it counts only when it is of the top screen.
        let top = &app.stack.last()?.screen;
        let cache = app.renders.0.first().filter(|c| &c.key.screen == top)?;
        let mut count = 0;
        let mut stack = vec![&cache.parsed.root];
        while let Some(view) = stack.pop() {
            count += 1;
            stack.extend(view.children.iter());
        }
        Some(count)
    }

    /// Where app `i`'s top screen is scrolled, for its virtualised lists (`None` when lists
    /// render every row: [`Phone::set_virtual_lists`]).
    fn scrolled(&self, i: usize) -> Option<Scrolled> {
        if !self.virtual_lists {
            return None;
        }
        let frame = self.apps[i].stack.last()?;
        let d = self.config.display;
        let app_area = d.height_px() - d.status_bar_h() - d.nav_bar_h();
        Some(Scrolled {
            offsets: frame.scroll.clone(),
            density: d.density(),
            viewport_dp: f64::from(app_area / d.density()),
        })
    }

    /// What app `i`'s top screen's render depends on, `calls` being its template's `window`
    /// calls (the last render's).
    fn cache_key(&self, i: usize, calls: &[(WindowCall, RowRange)]) -> Option<CacheKey> {
        let frame = self.apps[i].stack.last().filter(|f| f.initialized)?;
        let package = &self.apps[i].package;
        let reads = package.reads_of(&frame.screen);
        // A database that cannot say where it is (a poisoned lock) makes the screen render anew.
        let mut data = vec![self.apps[i].db.stamp().ok()?];
        for id in &package.manifest.reads {
            if let Some(app) = self.apps.iter().find(|a| &a.package.manifest.id == id) {
                data.push(app.db.stamp().ok()?);
            }
        }
        Some(CacheKey {
            screen: frame.screen.clone(),
            args: frame.args.clone(),
            vars: frame.vars.clone(),
            fields: frame.fields.clone(),
            data,
            pages: frame.pages.clone(),
            time: reads.now.then(|| self.now_ms().div_euclid(self.tick_ms(i))),
            clipboard: reads.clipboard.then(|| self.clipboard.clone()),
            keyboard: self.keyboard_shown(),
            windows: match self.scrolled(i) {
                Some(scrolled) => {
                    calls.iter().map(|(call, kept)| call.range(&scrolled, Some(*kept))).collect()
                }
                None => calls.iter().map(|(call, _)| (0, call.rows)).collect(),
            },
        })
    }

    /// The key under which the parse of `xml`, markup of app `i`, is shared between phones;
    /// `None` when this phone does not share (nothing is digested then).
    fn parse_key(&self, i: usize, xml: &str) -> Option<crate::shared::Digest> {
        let app = &self.apps[i];
        self.sharing.then(|| {
            crate::shared::parse_key(
                app.package.serial,
                app.assets_digest,
                self.config.display.density(),
                xml,
            )
        })
    }

    /// Renders app `i`'s top screen to views, filling its text fields from the frame and
    /// applying autofocus the first time the screen renders.
    /// Renders app `i`'s top screen. `previous` is the same screen's last render, whose markup
    /// and parsed views are taken (not copied) where they can be reused.
    fn render_app(&mut self, i: usize, previous: Option<&mut ScreenCache>) -> Result<Rendered, PhoneError> {
        let package = self.apps[i].package.clone();
        let app_id = package.manifest.id.clone();
        let fail = |message: String| PhoneError::App { app: app_id.clone(), message };
        // `[screens.NAME] init`: once, when the screen is new, before it first renders (fills
        // an edit form from the database).
        if let Some(frame) = self.apps[i].stack.last_mut()
            && !frame.init_done
        {
            frame.init_done = true;
            let init = package.manifest.screens.get(&frame.screen).and_then(|s| s.init.clone());
            if let Some(init) = init {
                self.run_app_action(i, &init, BTreeMap::new(), &mut crate::phone::Outcome::default())?;
            }
        }
        let Some(frame) = self.apps[i].stack.last().cloned() else {
            return Err(fail("no screen on the back stack".into()));
        };
        // Nothing the template can read changed (typing into a field it does not read, the
        // keyboard): its markup and views are the last render's.
        let reads_fields = package.reads_of(&frame.screen).fields;
        let mut previous = previous;
        let calls = previous.as_deref().map(|c| c.windows.clone()).unwrap_or_default();
        let unchanged = match (previous.as_deref_mut(), self.cache_key(i, &calls)) {
            (Some(c), Some(key)) if c.key.template_part(reads_fields) == key.template_part(reads_fields) => {
                Some((std::mem::take(&mut c.xml), take_parsed(&mut c.parsed), calls.clone()))
            }
            _ => None,
        };
        let (xml, parsed, windows, parse_key) = match unchanged {
            Some((xml, parsed, calls)) => {
                let key = self.parse_key(i, &xml);
                (xml, parsed, calls, key)
            }
            None => {
                let reads = package
                    .manifest
                    .reads
                    .iter()
                    .filter_map(|id| {
                        self.apps
                            .iter()
                            .find(|a| &a.package.manifest.id == id)
                            .map(|a| (id.clone(), a.db.clone()))
                    })
                    .collect();
                let mut data = ScreenData::new(self.apps[i].db.clone(), reads, package.indexes.clone());
                data.scrolled = self.scrolled(i);
                data.density = self.config.display.density();
                data.kept_windows = calls.clone();
                let data = Arc::new(data);
                let ctx = Value::from_pairs([
                    ("args", Value::from(frame.args.clone())),
                    ("vars", Value::from(frame.vars.clone())),
                    ("fields", Value::from(frame.fields.clone())),
                    // Screens see time to the minute, as a phone shows it, or to their tick (a stopwatch:
                    // a second); actions get the exact time.
                    ("now", Value::from(self.now_ms().div_euclid(self.tick_ms(i)) * self.tick_ms(i))),
                    ("clipboard", Value::from(self.clipboard.clone().unwrap_or_default())),
                    ("pages", Value::from(frame.pages.clone())),
                    (
                        "app",
                        Value::from_pairs([
                            ("id", Value::from(package.manifest.id.clone())),
                            ("name", Value::from(package.manifest.name.clone())),
                            ("package", Value::from(package.manifest.package.clone())),
                        ]),
                    ),
                    (phonebench_apps::DATA_KEY, Value::from_object(RenderData(data.clone()))),
                ]);
                let name = AppPackage::template_name(&frame.screen);
                let file = package
                    .screens
                    .get(&frame.screen)
                    .cloned()
                    .unwrap_or_else(|| package.dir.join("screens").join(&name));
                let file = package_path(&package, &file);
                let template = package
                    .env
                    .get_template(&name)
                    .map_err(|e| fail(phonebench_apps::templates::template_error(&file, &e).to_string()))?;
                let xml = template.render(ctx).map_err(|e| fail(render_error(&file, &e)))?;
                // Markup rendered again is parsed again only where it changed; markup any
                // phone parsed before is not parsed again (`shared`).
                let same_screen = previous.filter(|c| c.key.screen == frame.screen);
                let key = self.parse_key(i, &xml);
                let parsed = match same_screen {
                    Some(c) if c.xml == xml => take_parsed(&mut c.parsed),
                    same_screen => match key.and_then(crate::shared::parse) {
                        Some(shared) => shared,
                        None => {
                            let reparsed = same_screen.and_then(|c| {
                                crate::markup::reparse_changed(
                                    &c.xml,
                                    Arc::unwrap_or_clone(take_parsed(&mut c.parsed)),
                                    &xml,
                                    &package.manifest.package,
                                    self.config.display.density(),
                                    &self.apps[i].assets,
                                )
                            });
                            let parsed = match reparsed {
                                Some(parsed) => parsed,
                                None => self.parse_screen(i, &package, &file, &template, &xml)?,
                            };
                            let parsed = Arc::new(parsed);
                            if let Some(key) = key {
                                crate::shared::keep_parse(key, Arc::clone(&parsed));
                            }
                            parsed
                        }
                    },
                };
                let windows = data.windows.lock().map(|w| w.clone()).unwrap_or_default();
                (xml, parsed, windows, key)
            }
        };
        let frame = self.apps[i].stack.last_mut().ok_or_else(|| fail("no screen".into()))?;
        let first = !frame.initialized;
        // The frame's state goes into the views: the page each pager shows, the text each
        // field holds (the markup's `value` the first time). The parse's own views are used
        // as they are when that changes none of them, and copied otherwise.
        let mut autofocus = None;
        let mut changes = false;
        let mut stack = vec![&parsed.root];
        while let Some(view) = stack.pop() {
            let page = shown_page(view, &frame.pages);
            changes |= page.is_some();
            if view.kind == Kind::Edit
                && let Some(id) = &view.id
            {
                let text =
                    frame.fields.entry(id.clone()).or_insert_with(|| view.value.clone().unwrap_or_default());
                changes |= *text != view.text;
                if first && view.focus && autofocus.is_none() {
                    autofocus = Some(id.clone());
                }
            }
            // Only the page a pager shows: the others are not on the screen.
            match page.and_then(|page| view.children.get(page)) {
                Some(shown) => stack.push(shown),
                None => stack.extend(view.children.iter().rev()),
            }
        }
        let mut root = ScreenView::Parsed(Arc::clone(&parsed));
        if changes {
            let mut stack = vec![root.to_mut()];
            while let Some(view) = stack.pop() {
                // A pager keeps only the page it shows.
                if let Some(page) = shown_page(view, &frame.pages)
                    && let Some(pager) = &mut view.pager
                {
                    let pages = view.children.len();
                    *pager = crate::view::Pager { page, pages };
                    if pages > 0 {
                        let shown = view.children.swap_remove(page);
                        view.children = vec![shown];
                    }
                }
                if view.kind == Kind::Edit
                    && let Some(text) = view.id.as_ref().and_then(|id| frame.fields.get(id))
                {
                    view.text = text.clone();
                }
                stack.extend(view.children.iter_mut().rev());
            }
        }
        frame.initialized = true;
        if let Some(id) = autofocus {
            frame.focused = Some(id);
            self.keyboard = true;
        }
        Ok(Rendered { view: root, xml, parsed, windows, parse_key })
    }

    /// Parses the markup app `i`'s screen template (`file`) rendered; an error names the
    /// template line (or the partial's) that produced the offending markup.
    fn parse_screen(
        &self,
        i: usize,
        package: &AppPackage,
        file: &std::path::Path,
        template: &minijinja::Template<'_, '_>,
        xml: &str,
    ) -> Result<ParsedLayout, PhoneError> {
        crate::markup::parse_layout_ranged(
            xml,
            &package.manifest.package,
            self.config.display.density(),
            &self.apps[i].assets,
        )
        .map_err(|e| {
            // The partials the screen may have imported, for errors a macro rendered.
            let partials: Vec<(std::path::PathBuf, String)> = package
                .env
                .templates()
                .filter(|(name, _)| name.starts_with('_'))
                .map(|(name, t)| (partial_path(file, name), t.source().to_string()))
                .collect();
            PhoneError::App {
                app: package.manifest.id.clone(),
                message: layout_error(file, template.source(), &partials, xml, &e),
            }
        })
    }
}

/// The page a pager `view` shows (`None`: not a pager): the user's page (`pages`, by the
/// pager's id), else its own `page`, within its pages.
fn shown_page(view: &View, pages: &BTreeMap<String, usize>) -> Option<usize> {
    let pager = view.pager.as_ref()?;
    let chosen = view.id.as_ref().and_then(|id| pages.get(id)).copied().unwrap_or(pager.page);
    Some(chosen.min(view.children.len().saturating_sub(1)))
}

/// Moves a kept parse out of a cache entry that is being replaced, leaving the one empty parse
/// in its place: taking is on every render's path, so it does not allocate.
fn take_parsed(parsed: &mut Arc<ParsedLayout>) -> Arc<ParsedLayout> {
    static EMPTY: std::sync::LazyLock<Arc<ParsedLayout>> = std::sync::LazyLock::new(|| {
        Arc::new(ParsedLayout { root: View::new("", Kind::Group), ranges: Vec::new() })
    });
    std::mem::replace(parsed, Arc::clone(&EMPTY))
}

fn render_error(file: &std::path::Path, err: &minijinja::Error) -> String {
    let mut message = format!("{}", phonebench_apps::templates::template_error(file, err));
    let mut source = std::error::Error::source(err);
    while let Some(inner) = source {
        // Say each cause once: a wrapped error often repeats its source's text.
        let text = inner.to_string();
        if !message.contains(&text) {
            message.push_str(&format!(": {text}"));
        }
        source = inner.source();
    }
    message
}

/// `file` of `package` as its errors name it: from the folder holding the package
/// (`contacts/screens/edit.xml`), so what the agent and the results see does not depend on where
/// the apps are installed.
pub(crate) fn package_path(package: &AppPackage, file: &std::path::Path) -> std::path::PathBuf {
    package.dir.parent().and_then(|p| file.strip_prefix(p).ok()).unwrap_or(file).to_path_buf()
}

/// Characters of a rendered or template line an error quotes.
const QUOTE_CHARS: usize = 200;

/// A layout error told in terms of the screen's template: the template file and, when only one
/// of its lines can have produced the offending rendered line, that line (`file:line:`); the
/// rendered line quoted, since values filled in may be what is wrong.
///
/// A line the screen's own file cannot account for is looked for in the partials (`_*.xml`, and
/// `_shared/*.xml`), where a macro may have produced it: when exactly one partial line fits, the
/// error names that partial and line instead.
fn layout_error(
    file: &std::path::Path,
    source: &str,
    partials: &[(std::path::PathBuf, String)],
    xml: &str,
    err: &LayoutError,
) -> String {
    let rendered = err.line.and_then(|n| xml.lines().nth(n.saturating_sub(1)));
    let in_partials = |line: &str| -> Option<String> {
        let hits: Vec<String> = partials
            .iter()
            .filter_map(|(path, src)| template_line(src, line).map(|t| format!("{}:{t}", path.display())))
            .collect();
        (hits.len() == 1).then(|| hits[0].clone())
    };
    let place = match rendered {
        Some(line) => match template_line(source, line) {
            Some(t) => format!("{}:{t}", file.display()),
            None => in_partials(line).unwrap_or_else(|| file.display().to_string()),
        },
        None => file.display().to_string(),
    };
    let mut message = match err.line {
        Some(n) => format!("{place}: the layout it rendered is wrong at rendered line {n}: {}", err.message),
        None => format!("{place}: the layout it rendered is wrong: {}", err.message),
    };
    if let Some(line) = rendered {
        message.push_str(&format!("; rendered line: `{}`", quote(line)));
    }
    message
}

/// Where a partial's template lives, as the screen's `file` is shown (`email/screens/_ui.xml`,
/// or `_shared/time.xml` for the partials shared by every app).
fn partial_path(file: &std::path::Path, name: &str) -> std::path::PathBuf {
    match name.strip_prefix("_shared/") {
        Some(_) => std::path::PathBuf::from(name),
        None => file.with_file_name(name),
    }
}

fn quote(line: &str) -> String {
    let line = line.trim();
    let mut out: String = line.chars().take(QUOTE_CHARS).collect();
    if line.chars().nth(QUOTE_CHARS).is_some() {
        out.push('…');
    }
    out
}

/// The one template line that can have rendered `rendered` (1-based): a line equal to it, or else
/// the only line whose literal text (what is outside `{{ }}`, `{% %}` and `{# #}`) appears in it
/// in order. `None` when no line or several lines fit.
fn template_line(source: &str, rendered: &str) -> Option<usize> {
    let rendered = rendered.trim();
    if rendered.is_empty() {
        return None;
    }
    let exact: Vec<usize> =
        source.lines().enumerate().filter(|(_, l)| l.trim() == rendered).map(|(i, _)| i + 1).collect();
    if !exact.is_empty() {
        return (exact.len() == 1).then(|| exact[0]);
    }
    let mut found = None;
    for (i, line) in source.lines().enumerate() {
        let pieces = literal_pieces(line);
        // A line of only markup says nothing about where the output came from.
        if pieces.iter().map(|p| p.len()).sum::<usize>() < 3 {
            continue;
        }
        let mut at = 0;
        let fits = pieces.iter().all(|p| match rendered.get(at..).and_then(|r| r.find(p)) {
            Some(k) => {
                at += k + p.len();
                true
            }
            None => false,
        });
        if fits {
            if found.is_some() {
                return None;
            }
            found = Some(i + 1);
        }
    }
    found
}

/// The parts of a template line copied to the output verbatim, trimmed, without empty ones.
fn literal_pieces(line: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut rest = line;
    loop {
        let open = ["{{", "{%", "{#"].iter().filter_map(|o| rest.find(o)).min();
        let Some(at) = open else {
            pieces.push(rest);
            break;
        };
        pieces.push(&rest[..at]);
        let close = match rest.get(at..at + 2) {
            Some("{{") => "}}",
            Some("{%") => "%}",
            _ => "#}",
        };
        match rest.get(at + 2..).and_then(|r| r.find(close)) {
            Some(end) => rest = &rest[at + 2 + end + 2..],
            None => break,
        }
    }
    pieces.into_iter().map(str::trim).filter(|p| !p.is_empty()).collect()
}

fn overlay_view(d: &crate::display::Display, overlay: &Overlay) -> View {
    match overlay {
        Overlay::Dialog { title, message, buttons, options, selected, input, input_hint, .. } => {
            let options: Vec<(String, bool)> = options
                .iter()
                .map(|(label, value)| (label.clone(), selected.as_deref() == Some(value)))
                .collect();
            let buttons: Vec<String> = buttons.iter().map(|b| b.0.clone()).collect();
            let mut view = system::dialog(d, title.as_deref(), message.as_deref(), &options, &buttons);
            if let Some(text) = input {
                // The field sits above the buttons, as AlertDialog's custom view does.
                let at = view.children.len().saturating_sub(usize::from(!buttons.is_empty()));
                view.children.insert(at, system::dialog_input(d, text, input_hint));
            }
            view
        }
        Overlay::DatePicker(p) => crate::pickers::date_picker_view(d, p),
        Overlay::TimePicker(p) => crate::pickers::time_picker_view(d, p),
        Overlay::Menu { items, .. } => {
            let labels: Vec<String> = items.iter().map(|i| i.0.clone()).collect();
            system::menu(d, &labels)
        }
        Overlay::Crash { app, name, message } => system::crash_dialog(d, name, message, *app),
        Overlay::Chooser { title, preview, targets } => {
            let rows: Vec<(String, String)> =
                targets.iter().map(|(l, i, _)| (l.clone(), i.clone())).collect();
            system::chooser(d, title, preview.as_deref(), &rows)
        }
    }
}

fn to_bounds(r: Rect) -> Bounds {
    Bounds::new(
        r.x.round() as i32,
        r.y.round() as i32,
        (r.x + r.w).round() as i32,
        (r.y + r.h).round() as i32,
    )
}

fn intersect(a: Rect, b: Rect) -> Option<Rect> {
    let x0 = a.x.max(b.x);
    let y0 = a.y.max(b.y);
    let x1 = (a.x + a.w).min(b.x + b.w);
    let y1 = (a.y + a.h).min(b.y + b.h);
    (x1 > x0 && y1 > y0).then_some(Rect { x: x0, y: y0, w: x1 - x0, h: y1 - y0 })
}

/// Adds one window's visible views to the tree. Views wholly outside their scroll container
/// (or window) are left out with their subtrees, as Android leaves out unattached list items.
fn emit(
    builder: &mut TreeBuilder,
    infos: &mut Vec<NodeInfo>,
    paints: &mut Vec<Paint>,
    window: &WindowSpec,
    density: f32,
) -> Result<(), String> {
    let laid = &window.laid;
    let n = laid.views.len();
    let mut visible: Vec<Option<Rect>> = vec![None; n];
    let mut shift = vec![0.0f32; n];
    // The palette background each view sits on (its own `bg` or its nearest ancestor's), so
    // text inside a coloured box takes the colour that reads on it.
    let mut on_bg: Vec<Option<phonebench_pixels::Swatch>> = vec![None; n];
    let mut open: Vec<(usize, i32)> = Vec::new(); // (view index, children emitted so far)
    let window_area = laid.rects[0];
    for i in 0..n {
        let view = laid.views[i];
        if view.placeholder {
            continue;
        }
        let parent = laid.parents[i];
        let (clip, base_shift) = match parent {
            None => (window_area, 0.0),
            Some(p) => {
                let Some(clip) = visible[p] else { continue };
                let pv = laid.views[p];
                let offset = if pv.kind == Kind::Scroll {
                    scroll_offset(window, pv, p, laid.max_scroll[p])
                } else {
                    0.0
                };
                (clip, shift[p] + offset)
            }
        };
        shift[i] = base_shift;
        on_bg[i] = view.bg.or(parent.and_then(|p| on_bg[p]));
        let r = laid.rects[i];
        let rect = Rect { y: r.y - base_shift, ..r };
        let Some(vis) = intersect(rect, clip).or(if parent.is_none() { Some(rect) } else { None }) else {
            continue;
        };
        visible[i] = Some(vis);

        while let Some(&(top, _)) = open.last() {
            if Some(top) == parent {
                break;
            }
            open.pop();
            builder.close().map_err(|e| e.to_string())?;
        }
        let index = match open.last_mut() {
            Some((_, count)) => {
                *count += 1;
                *count - 1
            }
            None => 0,
        };
        let bounds = to_bounds(vis);
        let focused =
            view.kind == Kind::Edit && window.app_surface && view.id.is_some() && view.id == window.focused;
        let max_scroll = laid.max_scroll[i];
        let mut node = Node::new(view.class.clone(), window.package.clone(), bounds);
        node.index = index;
        node.text = if view.password && !view.text.is_empty() {
            "•".repeat(view.text.chars().count())
        } else {
            view.text.clone()
        };
        node.resource_id = view.resource_id.clone();
        node.content_desc = view.desc.clone();
        node.checkable = matches!(view.kind, Kind::Toggle | Kind::Radio);
        node.checked = view.checked;
        node.clickable = view.is_clickable();
        node.enabled = view.enabled;
        node.focusable = node.clickable || view.kind == Kind::Edit;
        node.focused = focused;
        node.scrollable =
            view.kind == Kind::Scroll && max_scroll > 0.0 || view.pager.is_some_and(|p| p.pages > 1);
        node.long_clickable = view.is_long_clickable();
        node.password = view.password;
        node.selected = view.selected;
        if view.kind == Kind::Edit {
            node.hint = view.hint.clone();
        }
        if parent.is_none() {
            builder.open_window(node, window.kind, window.layer).map_err(|e| e.to_string())?;
        } else {
            builder.open(node).map_err(|e| e.to_string())?;
        }
        open.push((i, 0));
        paints.push(paint_of(view, rect, parent.is_none() && window.layer == 0, density, on_bg[i]));
        infos.push(NodeInfo {
            surface_is_app: window.app_surface,
            kind: view.kind,
            id: view.id.clone(),
            hooks: view.hooks.clone(),
            enabled: view.enabled,
            checked: view.checked,
            text: view.text.clone(),
            bounds,
            seek: (view.kind == Kind::Seek).then(|| (view.seek.1, bounds.left, bounds.width() as i32)),
            scroll: (view.kind == Kind::Scroll)
                .then(|| (scroll_key(view, i), max_scroll, scroll_offset(window, view, i, max_scroll))),
            pager: view.pager.map(|p| (view.id.clone().unwrap_or_default(), p.page, p.pages)),
            input: view.input,
        });
    }
    for _ in open {
        builder.close().map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// How the screenshot draws `view`, laid out at `rect` (before clipping).
fn paint_of(
    view: &View,
    rect: Rect,
    window_root: bool,
    density: f32,
    on: Option<phonebench_pixels::Swatch>,
) -> Paint {
    let mut role = view.paint_role();
    if window_root && role == Role::Plain {
        role = Role::Surface;
    }
    let frame = Frame::new(rect.x, rect.y, rect.w, rect.h);
    let p = view.style.padding;
    let mut content =
        Frame::new(rect.x + p.left, rect.y + p.top, rect.w - p.left - p.right, rect.h - p.top - p.bottom);
    // The control drawn beside a toggle's text takes the room layout gave it.
    match role {
        Role::Switch => content.w = (content.w - SWITCH_DP * density).max(0.0),
        Role::CheckBox | Role::Radio => {
            content.x += CHECK_DP * density;
            content.w = (content.w - CHECK_DP * density).max(0.0);
        }
        _ => {}
    }
    let centered = matches!(
        role,
        Role::FilledButton
            | Role::TonalButton
            | Role::OutlinedButton
            | Role::TextButton
            | Role::Fab
            | Role::Avatar
            | Role::Badge
            | Role::Tab
            | Role::LauncherIcon
    );
    Paint {
        role,
        frame,
        content,
        // An image button that names no icon gets one its description suggests.
        icon: view.icon.clone().or_else(|| {
            matches!(role, Role::IconButton).then(|| guess_icon(&view.desc)).flatten().map(str::to_string)
        }),
        text: view.look.map(|l| TextLook {
            size_px: l.size_px,
            bold: l.bold,
            max_lines: if view.kind == Kind::Edit && view.password { Some(1) } else { l.max_lines },
            tone: view.tone,
            align: if centered || view.text_center { PaintAlign::Center } else { PaintAlign::Start },
        }),
        value: if view.kind == Kind::Seek && view.seek.1 > 0 {
            (view.seek.0 as f32 / view.seek.1 as f32).clamp(0.0, 1.0)
        } else {
            0.0
        },
        density,
        image: view.src.clone(),
        bg: view.bg,
        on,
    }
}

fn scroll_key(view: &View, index: usize) -> String {
    view.id.clone().unwrap_or_else(|| format!("#{index}"))
}

fn scroll_offset(window: &WindowSpec, view: &View, index: usize, max: f32) -> f32 {
    let default = if view.start_at_end { max } else { 0.0 };
    window.scroll.get(&scroll_key(view, index)).copied().unwrap_or(default).clamp(0.0, max)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use phonebench_actions::Action;

    use crate::data::DataStamp;
    use crate::{Catalog, Phone, PhoneConfig};

    /// Kept renders and query results survive a reset only for databases still pristine; boot
    /// actions that change nothing (schedule, or update no row) must leave theirs so.
    #[test]
    fn databases_nothing_wrote_are_pristine_after_boot_and_after_reset() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
        let mut phone = Phone::new(Catalog::load_dir(&dir).unwrap(), PhoneConfig::default()).unwrap();
        let pristine = |phone: &Phone| {
            phone.apps.iter().filter(|a| a.db.stamp().unwrap() == DataStamp::PRISTINE).count()
        };
        let apps = phone.apps.len();
        let written: Vec<_> = phone
            .apps
            .iter()
            .filter(|a| a.db.stamp().unwrap() != DataStamp::PRISTINE)
            .map(|a| a.package.manifest.id.clone())
            .collect();
        assert_eq!(pristine(&phone), apps, "boot wrote a row in {written:?}");
        phone.apply(&Action::OpenApp { app: "todo".into() }).unwrap();
        phone.apply(&Action::Wait { ms: Some(3_600_000) }).unwrap();
        phone.tree().unwrap();
        phone.reset().unwrap();
        assert_eq!(pristine(&phone), apps);
    }
}
