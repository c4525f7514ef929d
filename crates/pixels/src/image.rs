//! [`ScreenImage`]: one screen's picture, drawn or decoded only when someone asks for it.
//!
//! An episode offers every agent the current screenshot, but most agents read text only; a
//! `ScreenImage` holds what is needed to draw the frame (the tree and paints, shared, so making
//! one costs two reference counts) and draws it on first use. The frame and its PNG are kept, so
//! an agent that sends the screenshot and a runner that saves it encode it once.

use std::sync::{Arc, OnceLock};

use phonebench_uitree::{NodeId, UiTree};
use tiny_skia::Pixmap;

use crate::{Paint, PixelsError, SomStyle, Theme, decode_png, draw_marks, encode_png, render};

/// Takes a device's screenshot (PNG bytes) when first asked for.
pub type Capture = Box<dyn Fn() -> Result<Vec<u8>, String> + Send + Sync>;

enum Source {
    /// The simulated phone's screen: drawn from its tree.
    Drawn { tree: Arc<UiTree>, paints: Arc<[Paint]>, theme: Theme },
    /// A captured PNG (a real device's screencap).
    Png(Arc<[u8]>),
    /// A device's screen, captured on first use (a device screenshot costs real time).
    Captured(Capture),
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Drawn { tree, .. } => {
                f.debug_struct("Drawn").field("nodes", &tree.len()).finish_non_exhaustive()
            }
            Source::Png(bytes) => f.debug_tuple("Png").field(&bytes.len()).finish(),
            Source::Captured(_) => f.write_str("Captured"),
        }
    }
}

#[derive(Debug)]
struct Inner {
    source: Source,
    width: u32,
    height: u32,
    pixmap: OnceLock<Result<Pixmap, PixelsError>>,
    png: OnceLock<Result<Arc<[u8]>, PixelsError>>,
}

/// A screen's picture, produced lazily; cloning shares it.
#[derive(Debug, Clone)]
pub struct ScreenImage(Arc<Inner>);

impl ScreenImage {
    /// The picture of `tree` drawn with `paints` at `width`×`height` in `theme` (not drawn yet).
    pub fn drawn(
        tree: Arc<UiTree>,
        paints: Arc<[Paint]>,
        width: u32,
        height: u32,
        theme: Theme,
    ) -> ScreenImage {
        ScreenImage::new(Source::Drawn { tree, paints, theme }, width, height)
    }

    /// A captured PNG; its size is read from the header.
    pub fn from_png(bytes: Arc<[u8]>) -> Result<ScreenImage, PixelsError> {
        let decoder = png::Decoder::new(std::io::Cursor::new(&bytes[..]));
        let reader = decoder.read_info().map_err(|e| PixelsError::Png(e.to_string()))?;
        let (width, height) = (reader.info().width, reader.info().height);
        Ok(ScreenImage::new(Source::Png(bytes), width, height))
    }

    /// A device's screen of `width`×`height`, captured by `capture` only when its pixels or PNG
    /// are first asked for (then kept). The capture must show the screen as it is when asked:
    /// whoever makes one makes sure it is not forced after the screen changed.
    pub fn captured(width: u32, height: u32, capture: Capture) -> ScreenImage {
        ScreenImage::new(Source::Captured(capture), width, height)
    }

    fn new(source: Source, width: u32, height: u32) -> ScreenImage {
        ScreenImage(Arc::new(Inner { source, width, height, pixmap: OnceLock::new(), png: OnceLock::new() }))
    }

    /// Width and height in pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.0.width, self.0.height)
    }

    /// Whether the pixels have been produced yet (for tests of laziness).
    pub fn is_drawn(&self) -> bool {
        self.0.pixmap.get().is_some() || self.0.png.get().is_some()
    }

    /// The pixels (drawn or decoded on first use).
    pub fn pixmap(&self) -> Result<&Pixmap, PixelsError> {
        self.0
            .pixmap
            .get_or_init(|| match &self.0.source {
                Source::Drawn { tree, paints, theme } => {
                    render(tree, paints, self.0.width, self.0.height, theme)
                }
                Source::Png(bytes) => decode_png(bytes),
                Source::Captured(_) => self.png().and_then(|bytes| decode_png(&bytes)),
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The pixels as an owned frame: drawn afresh unless they are kept already, so a one-off
    /// screenshot costs one render and no copy.
    pub fn to_pixmap(&self) -> Result<Pixmap, PixelsError> {
        match (self.0.pixmap.get(), &self.0.source) {
            (Some(kept), _) => kept.clone(),
            (None, Source::Drawn { tree, paints, theme }) => {
                render(tree, paints, self.0.width, self.0.height, theme)
            }
            (None, Source::Png(bytes)) => decode_png(bytes),
            (None, Source::Captured(_)) => self.png().and_then(|bytes| decode_png(&bytes)),
        }
    }

    /// The PNG (encoded on first use; a captured PNG is returned as it came).
    pub fn png(&self) -> Result<Arc<[u8]>, PixelsError> {
        self.0
            .png
            .get_or_init(|| match &self.0.source {
                Source::Png(bytes) => Ok(bytes.clone()),
                Source::Captured(capture) => capture().map(Arc::from).map_err(PixelsError::Capture),
                Source::Drawn { .. } => self.pixmap().and_then(encode_png).map(Arc::from),
            })
            .clone()
    }

    /// A PNG with set-of-marks: element `i` of `targets` (an observation's index table over
    /// `tree`) numbered `i`, in `style`. Not kept: each call draws anew.
    pub fn marked_png(
        &self,
        tree: &UiTree,
        targets: &[NodeId],
        style: SomStyle,
    ) -> Result<Vec<u8>, PixelsError> {
        let mut pixmap = self.pixmap()?.clone();
        draw_marks(&mut pixmap, tree, targets, style);
        encode_png(&pixmap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phonebench_uitree::{Bounds, Node, TreeBuilder};

    fn tree() -> Arc<UiTree> {
        let mut b = TreeBuilder::new();
        b.open(Node::new("android.widget.FrameLayout", "com.example", Bounds::new(0, 0, 100, 200))).unwrap();
        let button = Node::new("android.widget.Button", "com.example", Bounds::new(10, 10, 90, 50));
        b.open(button).unwrap();
        b.close().unwrap();
        b.close().unwrap();
        Arc::new(b.finish().unwrap())
    }

    #[test]
    fn draws_only_when_asked_and_once() {
        let t = tree();
        let paints: Arc<[Paint]> = t.iter().map(|(_, n)| Paint::infer(n, 1.0)).collect();
        let image = ScreenImage::drawn(t.clone(), paints, 100, 200, *Theme::for_dark(false));
        assert!(!image.is_drawn());
        assert_eq!(image.size(), (100, 200));
        let png = image.png().unwrap();
        assert!(image.is_drawn());
        assert!(Arc::ptr_eq(&png, &image.clone().png().unwrap()), "encoded once, shared by clones");
        assert_eq!(image.to_pixmap().unwrap().data(), image.pixmap().unwrap().data());
        let back = ScreenImage::from_png(png.clone()).unwrap();
        assert_eq!(back.size(), (100, 200));
        assert_eq!(back.pixmap().unwrap().data(), image.pixmap().unwrap().data());
        let marked = image.marked_png(&t, &[NodeId(1)], SomStyle::AndroidWorld).unwrap();
        assert_ne!(&marked[..], &png[..]);
    }

    #[test]
    fn a_captured_screen_is_taken_only_when_asked_and_once() {
        let t = tree();
        let paints: Arc<[Paint]> = t.iter().map(|(_, n)| Paint::infer(n, 1.0)).collect();
        let png = ScreenImage::drawn(t, paints, 100, 200, *Theme::for_dark(false)).png().unwrap();
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = calls.clone();
        let image = ScreenImage::captured(
            100,
            200,
            Box::new(move || {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Ok(png.to_vec())
            }),
        );
        assert!(!image.is_drawn());
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 0);
        assert_eq!(image.pixmap().unwrap().width(), 100);
        assert!(image.png().is_ok() && image.clone().to_pixmap().is_ok());
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1, "captured once, shared by clones");
        let failing = ScreenImage::captured(10, 10, Box::new(|| Err("the device is gone".into())));
        assert!(failing.png().unwrap_err().to_string().contains("the device is gone"));
    }

    #[test]
    fn a_bad_png_is_an_error() {
        assert!(ScreenImage::from_png(Arc::from(&b"not a png"[..])).is_err());
    }
}
