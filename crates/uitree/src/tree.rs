//! The screen: windows, each a tree of [`Node`]s, stored in one arena in document order.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::bounds::Bounds;
use crate::node::{Node, NodeId};

/// Position of a window in [`UiTree::windows`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct WindowId(pub u32);

impl WindowId {
    /// The position as a `usize`, for indexing.
    pub fn get(self) -> usize {
        self.0 as usize
    }
}

/// What a window is, which decides its stacking and whether observers show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowKind {
    /// An app's window (activity, or a dialog/popup of the app).
    Application,
    /// The soft keyboard.
    InputMethod,
    /// Status and navigation bars (`com.android.systemui`).
    SystemUi,
    /// Anything else drawn above apps: accessibility overlays, gesture strips, floating views.
    Overlay,
}

impl WindowKind {
    /// The stacking layer used when a source gives none: higher is drawn on top.
    pub fn default_layer(self) -> i32 {
        match self {
            WindowKind::Application => 0,
            WindowKind::Overlay => 10,
            WindowKind::InputMethod => 20,
            WindowKind::SystemUi => 30,
        }
    }
}

/// One top-level window: the root of a tree of nodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// The window's root node.
    pub root: NodeId,
    /// What the window is.
    pub kind: WindowKind,
    /// Stacking order: higher is on top; equal layers stack in list order (later on top).
    pub layer: i32,
}

/// Structure of one node, kept apart from its attributes so [`Node`] stays plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Links {
    parent: Option<NodeId>,
    children: Vec<NodeId>,
    depth: u32,
    window: WindowId,
    /// One past the last node of this node's subtree (subtrees are contiguous in document order).
    subtree_end: u32,
}

/// A screen's UI: windows, each a tree of nodes.
///
/// Invariants:
/// - nodes are stored in document order: depth-first pre-order within a window, windows in order;
///   a node's subtree is the contiguous range `id .. subtree_end`;
/// - every window's root has no parent and every other node's parent precedes it;
/// - a window's package is its root node's `package`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UiTree {
    nodes: Vec<Node>,
    links: Vec<Links>,
    windows: Vec<Window>,
    /// `rotation` of the `<hierarchy>` element (0–3; 0 when absent).
    pub rotation: i32,
    /// Other attributes of the `<hierarchy>` element, verbatim (Appium writes `width`, `height`…).
    pub hierarchy_extra: Vec<(String, String)>,
}

impl UiTree {
    /// Number of nodes in all windows.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// True when the screen has no node at all.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node's attributes. Panics if `id` is not from this tree.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.get()]
    }

    /// Mutable attributes of a node (structure cannot be changed through this).
    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id.get()]
    }

    /// The node if `id` belongs to this tree.
    pub fn get(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.get())
    }

    /// All node ids in document order (depth-first pre-order, window after window).
    pub fn node_ids(&self) -> impl ExactSizeIterator<Item = NodeId> + use<> {
        (0..self.nodes.len() as u32).map(NodeId)
    }

    /// All nodes with their ids, in document order.
    pub fn iter(&self) -> impl Iterator<Item = (NodeId, &Node)> {
        self.nodes.iter().enumerate().map(|(i, n)| (NodeId(i as u32), n))
    }

    /// The windows in source order (not stacking order; see [`UiTree::windows_top_down`]).
    pub fn windows(&self) -> &[Window] {
        &self.windows
    }

    /// A window by id.
    pub fn window(&self, id: WindowId) -> &Window {
        &self.windows[id.get()]
    }

    /// Window ids from the topmost (highest layer; later in the list on ties) to the bottom.
    pub fn windows_top_down(&self) -> Vec<WindowId> {
        let mut ids: Vec<WindowId> = (0..self.windows.len() as u32).map(WindowId).collect();
        ids.sort_by_key(|w| (std::cmp::Reverse(self.windows[w.get()].layer), std::cmp::Reverse(*w)));
        ids
    }

    /// The package of a window (its root node's `package`).
    pub fn window_package(&self, id: WindowId) -> &str {
        &self.node(self.window(id).root).package
    }

    /// The window a node belongs to.
    pub fn window_of(&self, id: NodeId) -> WindowId {
        self.links[id.get()].window
    }

    /// The node's parent; `None` for a window root.
    pub fn parent(&self, id: NodeId) -> Option<NodeId> {
        self.links[id.get()].parent
    }

    /// The node's children in document order.
    pub fn children(&self, id: NodeId) -> &[NodeId] {
        &self.links[id.get()].children
    }

    /// True when the node has no children.
    pub fn is_leaf(&self, id: NodeId) -> bool {
        self.links[id.get()].children.is_empty()
    }

    /// Depth below the window root (a root has depth 0).
    pub fn depth(&self, id: NodeId) -> u32 {
        self.links[id.get()].depth
    }

    /// Ancestors from the parent up to the window root.
    pub fn ancestors(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::successors(self.parent(id), move |&p| self.parent(p))
    }

    /// The subtree rooted at `id` (including `id`) in depth-first pre-order.
    pub fn dfs(&self, id: NodeId) -> impl ExactSizeIterator<Item = NodeId> + use<> {
        (id.0..self.links[id.get()].subtree_end).map(NodeId)
    }

    /// True when `descendant` is in the subtree of `ancestor` (a node is in its own subtree).
    pub fn is_in_subtree(&self, ancestor: NodeId, descendant: NodeId) -> bool {
        ancestor.0 <= descendant.0 && descendant.0 < self.links[ancestor.get()].subtree_end
    }

    /// The subtree rooted at `id` (including `id`) in breadth-first order, children in document
    /// order.
    pub fn bfs(&self, id: NodeId) -> Bfs<'_> {
        let mut queue = VecDeque::new();
        queue.push_back(id);
        Bfs { tree: self, queue }
    }

    /// Every window's nodes in breadth-first order, window after window in source order.
    pub fn bfs_all(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.windows.iter().flat_map(move |w| self.bfs(w.root))
    }

    /// The screen area: the `<hierarchy>`'s `width`/`height` when given (Appium), otherwise the
    /// union of the window roots' bounds.
    pub fn screen_bounds(&self) -> Bounds {
        let attr = |name: &str| {
            self.hierarchy_extra
                .iter()
                .find(|(k, _)| k == name)
                .and_then(|(_, v)| v.trim().parse::<i32>().ok())
        };
        if let (Some(w), Some(h)) = (attr("width"), attr("height"))
            && w > 0
            && h > 0
        {
            return Bounds::new(0, 0, w, h);
        }
        let union =
            self.windows.iter().fold(Bounds::default(), |acc, w| acc.union(&self.node(w.root).bounds));
        // Screens start at the origin even when no window covers it (e.g. a lone dialog).
        Bounds::new(0, 0, union.right.max(0), union.bottom.max(0))
    }

    /// The node a touch at `(x, y)` lands on: in the topmost window whose root contains the
    /// point, the deepest node containing it, preferring the child drawn last (highest
    /// `drawing-order`, then later in document order). Nodes the source marks invisible and
    /// empty rectangles are never hit.
    ///
    /// The search goes through containers that do not contain the point themselves: real dumps
    /// have children outside their parents, e.g. a WebView's virtual nodes under zero-height
    /// wrappers, and a tap there does reach them.
    pub fn hit_test(&self, x: i32, y: i32) -> Option<NodeId> {
        self.hit_test_where(x, y, |_| true)
    }

    /// [`UiTree::hit_test`] over the windows `keep` accepts only (a window that does not take
    /// touches, like a toast, lets them through to the windows below).
    pub fn hit_test_where(&self, x: i32, y: i32, keep: impl Fn(&Window) -> bool) -> Option<NodeId> {
        self.windows_top_down()
            .into_iter()
            .filter(|wid| keep(self.window(*wid)))
            .map(|wid| self.window(wid).root)
            .find(|&root| self.hittable(root, x, y))
            .and_then(|root| self.deepest_at(root, x, y))
    }

    fn hittable(&self, id: NodeId, x: i32, y: i32) -> bool {
        let node = self.node(id);
        node.is_visible() && node.bounds.contains(x, y)
    }

    /// The first hittable node in post-order with children visited topmost first: the deepest
    /// hit in the topmost child that has one, else the node itself. Iterative, so arbitrarily
    /// deep trees cannot overflow the stack.
    fn deepest_at(&self, root: NodeId, x: i32, y: i32) -> Option<NodeId> {
        let mut stack = vec![(root, false)];
        while let Some((id, children_done)) = stack.pop() {
            if children_done {
                if self.hittable(id, x, y) {
                    return Some(id);
                }
                continue;
            }
            stack.push((id, true));
            let children = self.children(id);
            // Pushed bottom-most first so the topmost child is searched first; a stable sort
            // keeps document order among equal drawing orders (later is on top).
            if children.iter().any(|c| self.node(*c).drawing_order.is_some()) {
                let mut by_order = children.to_vec();
                by_order.sort_by_key(|c| self.node(*c).drawing_order.unwrap_or(0));
                stack.extend(by_order.into_iter().map(|c| (c, false)));
            } else {
                stack.extend(children.iter().map(|&c| (c, false)));
            }
        }
        None
    }
}

/// Breadth-first iterator, see [`UiTree::bfs`].
pub struct Bfs<'a> {
    tree: &'a UiTree,
    queue: VecDeque<NodeId>,
}

impl Iterator for Bfs<'_> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        let id = self.queue.pop_front()?;
        self.queue.extend(self.tree.children(id).iter().copied());
        Some(id)
    }
}

/// Misuse of [`TreeBuilder`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// `close` with no open node.
    #[error("close() without an open node")]
    NothingOpen,
    /// `finish` while nodes are still open.
    #[error("{0} node(s) still open at finish()")]
    Unclosed(usize),
    /// More nodes than a `NodeId` can address.
    #[error("too many nodes for one tree")]
    TooManyNodes,
}

/// Builds a [`UiTree`] in document order: `open` a node, add its children, `close` it.
///
/// A node opened with nothing open starts a new window. Windows opened with [`TreeBuilder::open`]
/// get their kind and layer inferred at [`TreeBuilder::finish`] (see [`infer_window_kinds`]);
/// [`TreeBuilder::open_window`] sets them explicitly.
#[derive(Debug, Default)]
pub struct TreeBuilder {
    tree: UiTree,
    stack: Vec<NodeId>,
    explicit_kind: Vec<bool>,
}

impl TreeBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the `<hierarchy>` rotation.
    pub fn rotation(&mut self, rotation: i32) -> &mut Self {
        self.tree.rotation = rotation;
        self
    }

    /// Adds a `<hierarchy>` attribute other than `rotation`.
    pub fn hierarchy_attribute(&mut self, name: &str, value: &str) -> &mut Self {
        self.tree.hierarchy_extra.push((name.to_string(), value.to_string()));
        self
    }

    /// Opens a node as a child of the innermost open node, or as a new window root.
    pub fn open(&mut self, node: Node) -> Result<NodeId, BuildError> {
        self.push(node, None)
    }

    /// Opens a new window root of a known kind and layer (closing any open nodes is the caller's
    /// job: this fails with [`BuildError::Unclosed`] if some are open).
    pub fn open_window(&mut self, node: Node, kind: WindowKind, layer: i32) -> Result<NodeId, BuildError> {
        if !self.stack.is_empty() {
            return Err(BuildError::Unclosed(self.stack.len()));
        }
        self.push(node, Some((kind, layer)))
    }

    /// Opens and immediately closes a node.
    pub fn leaf(&mut self, node: Node) -> Result<NodeId, BuildError> {
        let id = self.open(node)?;
        self.close()?;
        Ok(id)
    }

    /// Closes the innermost open node.
    pub fn close(&mut self) -> Result<NodeId, BuildError> {
        let id = self.stack.pop().ok_or(BuildError::NothingOpen)?;
        self.tree.links[id.get()].subtree_end = self.tree.nodes.len() as u32;
        Ok(id)
    }

    /// How many nodes are open.
    pub fn open_depth(&self) -> usize {
        self.stack.len()
    }

    /// The finished tree.
    pub fn finish(mut self) -> Result<UiTree, BuildError> {
        if !self.stack.is_empty() {
            return Err(BuildError::Unclosed(self.stack.len()));
        }
        infer_window_kinds(&mut self.tree, &self.explicit_kind);
        Ok(self.tree)
    }

    fn push(&mut self, node: Node, window: Option<(WindowKind, i32)>) -> Result<NodeId, BuildError> {
        let id = u32::try_from(self.tree.nodes.len()).map_err(|_| BuildError::TooManyNodes)?;
        let id = NodeId(id);
        let (parent, depth, wid) = match self.stack.last() {
            Some(&p) => {
                let pl = &self.tree.links[p.get()];
                (Some(p), pl.depth + 1, pl.window)
            }
            None => {
                let wid = WindowId(self.tree.windows.len() as u32);
                let (kind, layer) = window.unwrap_or((WindowKind::Application, 0));
                self.tree.windows.push(Window { root: id, kind, layer });
                self.explicit_kind.push(window.is_some());
                (None, 0, wid)
            }
        };
        if let Some(p) = parent {
            self.tree.links[p.get()].children.push(id);
        }
        self.tree.nodes.push(node);
        self.tree.links.push(Links {
            parent,
            children: Vec::new(),
            depth,
            window: wid,
            subtree_end: id.0 + 1,
        });
        self.stack.push(id);
        Ok(id)
    }
}

/// Input-method packages are recognised by these fragments (Gboard, AOSP, Samsung, SwiftKey,
/// Sogou, Baidu, iFlytek…): dumps carry no window type, so the package is all there is.
const IME_PACKAGE_HINTS: &[&str] =
    &["inputmethod", "keyboard", "honeyboard", "swiftkey", "com.baidu.input", "ime"];

fn looks_like_ime(package: &str) -> bool {
    let p = package.to_ascii_lowercase();
    IME_PACKAGE_HINTS
        .iter()
        .any(|hint| if *hint == "ime" { p.split('.').any(|part| part == "ime") } else { p.contains(hint) })
}

/// Infers window kinds and layers for windows a dump gave without them.
///
/// uiautomator dumps list windows in no particular stacking order and say nothing of their type,
/// so: `com.android.systemui` is [`WindowKind::SystemUi`]; input-method packages are
/// [`WindowKind::InputMethod`]; of the rest, the window with the largest root (first on ties) is
/// the main [`WindowKind::Application`] window, other windows of the same package are the app's
/// dialogs and popups (application, one layer above), and windows of other packages are
/// [`WindowKind::Overlay`] (uiautomator2's floating view, gesture strips, launcher nav handles).
pub fn infer_window_kinds(tree: &mut UiTree, explicit: &[bool]) {
    let is_explicit = |i: usize| explicit.get(i).copied().unwrap_or(false);
    let mut main: Option<(usize, i64)> = None;
    for i in 0..tree.windows.len() {
        if is_explicit(i) {
            continue;
        }
        let root = tree.node(tree.windows[i].root);
        let kind = if root.package == "com.android.systemui" {
            WindowKind::SystemUi
        } else if looks_like_ime(&root.package) {
            WindowKind::InputMethod
        } else {
            WindowKind::Application
        };
        if kind == WindowKind::Application && main.is_none_or(|(_, area)| root.bounds.area() > area) {
            main = Some((i, root.bounds.area()));
        }
        tree.windows[i].kind = kind;
        tree.windows[i].layer = kind.default_layer();
    }
    let Some((main_index, _)) = main else { return };
    let main_package = tree.node(tree.windows[main_index].root).package.clone();
    for i in 0..tree.windows.len() {
        if is_explicit(i) || i == main_index || tree.windows[i].kind != WindowKind::Application {
            continue;
        }
        if tree.node(tree.windows[i].root).package == main_package {
            tree.windows[i].layer = WindowKind::Application.default_layer() + 1;
        } else {
            tree.windows[i].kind = WindowKind::Overlay;
            tree.windows[i].layer = WindowKind::Overlay.default_layer();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(class: &str, pkg: &str, b: Bounds) -> Node {
        Node::new(class, pkg, b)
    }

    /// app window with a list of two rows, plus a keyboard window listed *before* the app.
    fn sample() -> UiTree {
        let mut b = TreeBuilder::new();
        b.open(node("Keyboard", "com.google.android.inputmethod.latin", Bounds::new(0, 600, 100, 800)))
            .unwrap();
        b.leaf(node("Key", "com.google.android.inputmethod.latin", Bounds::new(0, 600, 50, 700))).unwrap();
        b.close().unwrap();
        b.open(node("Frame", "app", Bounds::new(0, 0, 100, 800))).unwrap();
        b.open(node("List", "app", Bounds::new(0, 0, 100, 700))).unwrap();
        b.leaf(node("Row1", "app", Bounds::new(0, 0, 100, 100))).unwrap();
        b.open(node("Row2", "app", Bounds::new(0, 100, 100, 200))).unwrap();
        b.leaf(node("Text", "app", Bounds::new(10, 110, 90, 190))).unwrap();
        b.close().unwrap();
        b.close().unwrap();
        b.leaf(node("Fab", "app", Bounds::new(50, 150, 100, 200))).unwrap();
        b.close().unwrap();
        b.finish().unwrap()
    }

    fn classes(t: &UiTree, ids: impl Iterator<Item = NodeId>) -> Vec<String> {
        ids.map(|i| t.node(i).class.clone()).collect()
    }

    #[test]
    fn navigation_and_orders() {
        let t = sample();
        assert_eq!(t.len(), 8);
        assert_eq!(t.windows().len(), 2);
        let app = t.windows()[1].root;
        assert_eq!(classes(&t, t.dfs(app)), ["Frame", "List", "Row1", "Row2", "Text", "Fab"]);
        assert_eq!(classes(&t, t.bfs(app)), ["Frame", "List", "Fab", "Row1", "Row2", "Text"]);
        let text = NodeId(6);
        assert_eq!(t.node(text).class, "Text");
        assert_eq!(t.depth(text), 3);
        assert_eq!(classes(&t, t.ancestors(text)), ["Row2", "List", "Frame"]);
        assert!(t.is_in_subtree(app, text));
        assert!(!t.is_in_subtree(NodeId(0), text));
        assert_eq!(t.window_of(text), WindowId(1));
        assert_eq!(t.window_package(WindowId(1)), "app");
        assert_eq!(classes(&t, t.bfs_all()).len(), 8);
    }

    #[test]
    fn inferred_kinds_put_keyboard_above_app() {
        let t = sample();
        assert_eq!(t.windows()[0].kind, WindowKind::InputMethod);
        assert_eq!(t.windows()[1].kind, WindowKind::Application);
        assert_eq!(t.windows_top_down(), vec![WindowId(0), WindowId(1)]);
    }

    #[test]
    fn hit_test_is_topmost_and_deepest() {
        let t = sample();
        // Keyboard covers y >= 600 even though it is listed first.
        assert_eq!(t.node(t.hit_test(10, 650).unwrap()).class, "Key");
        assert_eq!(t.node(t.hit_test(80, 650).unwrap()).class, "Keyboard");
        // Fab is a later sibling of List, so it is drawn on top of Row2's text.
        assert_eq!(t.node(t.hit_test(60, 160).unwrap()).class, "Fab");
        assert_eq!(t.node(t.hit_test(20, 160).unwrap()).class, "Text");
        assert_eq!(t.node(t.hit_test(5, 105).unwrap()).class, "Row2");
        assert_eq!(t.node(t.hit_test(5, 750).unwrap()).class, "Keyboard");
        assert_eq!(t.hit_test(500, 500), None);
    }

    #[test]
    fn hit_test_respects_drawing_order_and_visibility() {
        let mut b = TreeBuilder::new();
        b.open(node("Root", "p", Bounds::new(0, 0, 100, 100))).unwrap();
        let mut top = node("DrawnLast", "p", Bounds::new(0, 0, 100, 100));
        top.drawing_order = Some(5);
        b.leaf(top).unwrap();
        let mut below = node("ListedLast", "p", Bounds::new(0, 0, 100, 100));
        below.drawing_order = Some(1);
        b.leaf(below).unwrap();
        let mut hidden = node("Hidden", "p", Bounds::new(0, 0, 100, 100));
        hidden.drawing_order = Some(9);
        hidden.visible_to_user = Some(false);
        b.leaf(hidden).unwrap();
        b.close().unwrap();
        let t = b.finish().unwrap();
        assert_eq!(t.node(t.hit_test(50, 50).unwrap()).class, "DrawnLast");
    }

    #[test]
    fn hit_test_reaches_children_outside_their_parent() {
        // A WebView's virtual nodes sit under a zero-height wrapper, as in real dumps.
        let mut b = TreeBuilder::new();
        b.open(node("WebView", "p", Bounds::new(0, 0, 100, 200))).unwrap();
        b.open(node("Wrapper", "p", Bounds::new(0, 0, 100, 0))).unwrap();
        b.leaf(node("Link", "p", Bounds::new(10, 50, 90, 70))).unwrap();
        b.close().unwrap();
        b.close().unwrap();
        let t = b.finish().unwrap();
        assert_eq!(t.node(t.hit_test(20, 60).unwrap()).class, "Link");
        assert_eq!(t.node(t.hit_test(20, 100).unwrap()).class, "WebView");
    }

    #[test]
    fn builder_misuse_is_an_error() {
        let mut b = TreeBuilder::new();
        assert_eq!(b.close(), Err(BuildError::NothingOpen));
        b.open(Node::default()).unwrap();
        assert!(matches!(
            b.open_window(Node::default(), WindowKind::SystemUi, 30),
            Err(BuildError::Unclosed(1))
        ));
        assert_eq!(b.finish(), Err(BuildError::Unclosed(1)));
    }

    #[test]
    fn explicit_window_kinds_are_kept() {
        let mut b = TreeBuilder::new();
        b.open_window(node("Bar", "com.example.shell", Bounds::new(0, 0, 10, 10)), WindowKind::SystemUi, 30)
            .unwrap();
        b.close().unwrap();
        b.open(node("App", "app", Bounds::new(0, 0, 10, 10))).unwrap();
        b.close().unwrap();
        b.open(node("Other", "com.github.uiautomator", Bounds::new(0, 0, 5, 5))).unwrap();
        b.close().unwrap();
        let t = b.finish().unwrap();
        assert_eq!(t.windows()[0].kind, WindowKind::SystemUi);
        assert_eq!(t.windows()[1].kind, WindowKind::Application);
        assert_eq!(t.windows()[2].kind, WindowKind::Overlay);
        assert_eq!(t.screen_bounds(), Bounds::new(0, 0, 10, 10));
    }

    #[test]
    fn ime_detection() {
        assert!(looks_like_ime("com.google.android.inputmethod.latin"));
        assert!(looks_like_ime("com.samsung.android.honeyboard"));
        assert!(looks_like_ime("com.example.ime"));
        assert!(!looks_like_ime("com.anime.app"));
        assert!(!looks_like_ime("com.tencent.mm"));
    }
}
