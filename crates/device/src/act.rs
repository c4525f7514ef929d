//! Agent actions as device primitives: targets resolved on the screen the agent saw, scrolls as
//! swipes across the scrolling container, apps found by name among the installed packages.

use phonebench_actions::{Action, Direction, Swipe, Target};
use phonebench_observe::Observation;
use phonebench_uitree::{Bounds, Node, NodeId, UiTree};

use crate::{Device, DeviceError};

/// How long a scroll's finger motion takes (slow enough not to fling).
const SCROLL_MS: u32 = 500;

/// How long a swipe between two points takes.
const SWIPE_MS: u32 = 400;

/// How long a drag takes (long enough to pick the item up first).
const DRAG_MS: u32 = 1500;

/// The longest one `wait` lasts on a device (the step's time counts against the episode).
const MAX_WAIT_MS: u64 = 30_000;

/// A `wait` without a duration.
const DEFAULT_WAIT_MS: u64 = 1_000;

/// An app the run knows by id and name (from the catalog), so `open_app` finds its package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownApp {
    /// Its id (`contacts`).
    pub id: String,
    /// Its launcher name (`Contacts`).
    pub name: String,
    /// Its package.
    pub package: String,
}

impl KnownApp {
    /// Every app of `catalog`.
    pub fn all(catalog: &phonebench_apps::Catalog) -> Vec<KnownApp> {
        catalog
            .apps()
            .iter()
            .map(|a| KnownApp {
                id: a.manifest.id.clone(),
                name: a.manifest.name.clone(),
                package: a.manifest.package.clone(),
            })
            .collect()
    }
}

/// What an applied action touched.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Applied {
    /// The node under the touch, on the screen the agent saw.
    pub hit: Option<Node>,
    /// What the agent should know (nothing scrolls here, …).
    pub notes: Vec<String>,
}

/// Why an action was not applied.
#[derive(Debug, thiserror::Error)]
pub enum ActError {
    /// The agent's action cannot be done here (an index not on the screen, an app that is not
    /// installed, a description without grounding): its mistake, told to it.
    #[error("{0}")]
    Rejected(String),
    /// The device failed: an infrastructure failure.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// Not a device action (answer, finish, ask_user, mcp_call).
    #[error("`{0}` is not a device action")]
    NotDeviceAction(String),
}

/// Applies `action` to `device`. Targets resolve against `observation` of `tree`, the screen the
/// agent saw; `apps` name the apps `open_app` may mean besides the installed packages.
pub fn apply_action(
    device: &mut dyn Device,
    action: &Action,
    observation: &Observation,
    tree: &UiTree,
    apps: &[KnownApp],
) -> Result<Applied, ActError> {
    let resolve = |target: &Target| resolve(observation, tree, target);
    let mut applied = Applied::default();
    let hit = |node: Option<NodeId>| node.map(|n| tree.node(n).clone());
    match action {
        Action::Tap { target } => {
            let (node, (x, y)) = resolve(target)?;
            applied.hit = hit(node);
            device.tap(x, y)?;
        }
        Action::DoubleTap { target } => {
            let (node, (x, y)) = resolve(target)?;
            applied.hit = hit(node);
            device.double_tap(x, y)?;
        }
        Action::LongPress { target } => {
            let (node, (x, y)) = resolve(target)?;
            applied.hit = hit(node);
            device.long_press(x, y)?;
        }
        Action::Type { text, target, clear, enter } => {
            let mut field = tree.iter().find(|(_, n)| n.focused).map(|(id, _)| id);
            if let Some(target) = target {
                let (node, (x, y)) = resolve(target)?;
                applied.hit = hit(node);
                device.tap(x, y)?;
                // A tap puts the cursor where it touched; typing "into an element" appends, as
                // agents expect (and as the simulated phone does).
                device.key(&phonebench_actions::Key::Other("MOVE_END".into()))?;
                field = node.or(field);
            }
            if *clear {
                let shown = field.map_or(0, |f| tree.node(f).text.chars().count());
                device.clear_text(shown)?;
            }
            device.type_text(text)?;
            if *enter {
                device.key(&phonebench_actions::Key::Enter)?;
            }
        }
        Action::Swipe(Swipe::Between { from, to }) => {
            applied.hit = tree.hit_test(from.x, from.y).map(|n| tree.node(n).clone());
            device.swipe((from.x, from.y), (to.x, to.y), SWIPE_MS)?;
        }
        Action::Swipe(Swipe::Direction { direction, target }) => {
            // A finger moving one way scrolls the content the other way.
            scroll(device, observation, tree, direction.opposite(), target.as_ref(), &mut applied)?;
        }
        Action::Scroll { direction, target } => {
            scroll(device, observation, tree, *direction, target.as_ref(), &mut applied)?;
        }
        Action::Drag { from, to } => {
            let (node, a) = resolve(from)?;
            let (_, b) = resolve(to)?;
            applied.hit = hit(node);
            device.swipe(a, b, DRAG_MS)?;
        }
        Action::Key { key } if !device.has_key(key) => {
            return Err(ActError::Rejected(format!("{key:?} is not a key {} has", device.name())));
        }
        Action::Key { key } => device.key(key)?,
        Action::OpenApp { .. } | Action::RestartApp { .. } if device.pixels_only() => {
            return Err(ActError::Rejected(
                "a pixels-only device cannot open or restart apps by name: tap the app's icon on its screen"
                    .into(),
            ));
        }
        Action::OpenApp { app } => {
            let package = find_package(device, app, apps)?;
            device.launch(&package, None)?;
        }
        Action::RestartApp { app } => {
            let package = match app {
                Some(app) => find_package(device, app, apps)?,
                None => {
                    // Only an app (a package with a launcher activity) restarts: never the
                    // launcher, System UI or a keyboard.
                    let front = device.screen()?.package;
                    if !device.packages()?.contains(&front) {
                        applied.notes.push("no app is in front to restart".into());
                        return Ok(applied);
                    }
                    front
                }
            };
            device.force_stop(&package)?;
            device.launch(&package, None)?;
        }
        Action::Wait { ms } => device.wait(ms.unwrap_or(DEFAULT_WAIT_MS).min(MAX_WAIT_MS))?,
        Action::Answer { .. } | Action::Finish { .. } | Action::AskUser { .. } | Action::McpCall { .. } => {
            return Err(ActError::NotDeviceAction(action.kind().to_string()));
        }
    }
    Ok(applied)
}

/// Scrolls by half the scrolling container's extent, as the simulated phone does: a swipe
/// through the container's centre (the target's scrolling ancestor or descendant, else the
/// largest scrolling element on the screen).
/// The node (if any) and the point `target` means on the screen the agent saw.
fn resolve(
    observation: &Observation,
    tree: &UiTree,
    target: &Target,
) -> Result<(Option<NodeId>, (i32, i32)), ActError> {
    let r = observation.resolve_target(tree, target).map_err(|e| ActError::Rejected(e.to_string()))?;
    Ok((r.node, r.point))
}

fn scroll(
    device: &mut dyn Device,
    observation: &Observation,
    tree: &UiTree,
    direction: Direction,
    target: Option<&Target>,
    applied: &mut Applied,
) -> Result<(), ActError> {
    let node = match target {
        Some(t) => {
            let (node, _) = resolve(observation, tree, t)?;
            applied.hit = node.map(|n| tree.node(n).clone());
            node
        }
        None => None,
    };
    let container = match node {
        Some(n) => std::iter::once(n)
            .chain(tree.ancestors(n))
            .find(|&a| tree.node(a).scrollable)
            .or_else(|| tree.dfs(n).find(|&d| tree.node(d).scrollable))
            .or(Some(n)),
        None => tree
            .iter()
            .filter(|(_, n)| n.scrollable && n.visible_to_user != Some(false) && n.bounds.area() > 0)
            .max_by_key(|(id, n)| (n.bounds.area(), std::cmp::Reverse(id.get())))
            .map(|(id, _)| id),
    };
    let (width, height, _) = device.display();
    let area = match container {
        Some(c) => tree.node(c).bounds,
        // Nothing scrolls: the screen between the status and navigation bars.
        None => Bounds::new(0, height as i32 / 10, width as i32, height as i32 * 9 / 10),
    };
    if container.is_none() {
        applied.notes.push("nothing on this screen is marked scrollable; swiped across the screen".into());
    }
    let (cx, cy) = area.center();
    let vertical = (area.height() as f32 * 0.5).round() as i32;
    let horizontal = (area.width() as f32 * 0.5).round() as i32;
    // Content moving down into view means the finger moves up.
    // Saturating: a hostile dump's bounds may be anywhere in i32.
    let (from, to) = match direction {
        Direction::Down => {
            let (a, b) =
                (cy.saturating_add(vertical / 2), cy.saturating_add(vertical / 2).saturating_sub(vertical));
            ((cx, a), (cx, b))
        }
        Direction::Up => {
            let (a, b) =
                (cy.saturating_sub(vertical / 2), cy.saturating_sub(vertical / 2).saturating_add(vertical));
            ((cx, a), (cx, b))
        }
        Direction::Right => {
            let (a, b) = (
                cx.saturating_add(horizontal / 2),
                cx.saturating_add(horizontal / 2).saturating_sub(horizontal),
            );
            ((a, cy), (b, cy))
        }
        Direction::Left => {
            let (a, b) = (
                cx.saturating_sub(horizontal / 2),
                cx.saturating_sub(horizontal / 2).saturating_add(horizontal),
            );
            ((a, cy), (b, cy))
        }
    };
    device.swipe(from, to, SCROLL_MS)?;
    Ok(())
}

/// The package `open_app` means: a package name as it is, an app of the run by id or name, or the
/// one installed package whose last part is the name (`Contacts` → `com.android.contacts`).
fn find_package(device: &mut dyn Device, name: &str, apps: &[KnownApp]) -> Result<String, ActError> {
    let name = name.trim();
    let installed = device.packages()?;
    if installed.iter().any(|p| p == name) {
        return Ok(name.to_string());
    }
    if let Some(app) =
        apps.iter().find(|a| a.id == name || a.name.eq_ignore_ascii_case(name) || a.package == name)
        && installed.contains(&app.package)
    {
        return Ok(app.package.clone());
    }
    let squashed: String = name.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_lowercase();
    let matches: Vec<&String> = installed
        .iter()
        .filter(|p| p.rsplit('.').next().is_some_and(|last| last.eq_ignore_ascii_case(&squashed)))
        .collect();
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(ActError::Rejected(format!("no app `{name}` is installed on this device"))),
        several => Err(ActError::Rejected(format!(
            "`{name}` could be any of {}: name the package",
            several.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        ))),
    }
}
