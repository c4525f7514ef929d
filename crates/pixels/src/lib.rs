//! Screenshots of the phone: a [`phonebench_uitree::UiTree`] drawn to pixels that look like a
//! modern Android phone, PNG encoding, and set-of-marks overlays.
//!
//! The simulated phone hands the renderer its UI tree and one [`Paint`] per node (role, icon,
//! text look, unclipped frame); [`render`] draws them with tiny-skia, text with cosmic-text in
//! the embedded Roboto (`phonebench-text`, the same fonts layout measured with), icons from the
//! vendored Material Symbols ([`icons`]). Everything drawn for a node stays inside its bounds, so
//! pixels and tree agree. [`draw_marks`] adds AndroidWorld- or SPHINX-style marks numbered as the
//! text observation numbers elements; [`encode_png`] writes the frame.
//!
//! Deterministic: no system fonts, no clocks, no randomness; the same tree and paints give the
//! same bytes.

pub mod assets;
mod draw;
pub mod icons;
mod image;
mod paint;
pub mod picture;
mod som;
pub mod text;
mod theme;

pub use draw::{CHECK_DP, ICON_WITH_TEXT_DP, LINE_HEIGHT, SWITCH_DP, drawing_order, render, render_inferred};
pub use image::{Capture, ScreenImage};
pub use paint::{Align, DENSITY_RANGE, Frame, MAX_COORDINATE, Paint, Role, TextLook, Tone, guess_icon};
pub use som::{MAX_MARKS, SomStyle, draw_marks};
pub use theme::{Rgba, Swatch, Theme};
pub use tiny_skia::Pixmap;

/// Why a frame could not be drawn or encoded.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PixelsError {
    /// The pixmap size is zero or too large.
    #[error("cannot draw a {width}x{height} frame")]
    Size {
        /// Width asked for.
        width: u32,
        /// Height asked for.
        height: u32,
    },
    /// The paints do not match the tree.
    #[error("{paints} paints for a tree of {nodes} nodes")]
    PaintCount {
        /// Nodes in the tree.
        nodes: usize,
        /// Paints given.
        paints: usize,
    },
    /// PNG encoding failed.
    #[error("PNG encoding: {0}")]
    Png(String),
    /// Capturing a screenshot (from a device) failed.
    #[error("screenshot: {0}")]
    Capture(String),
}

/// Encodes a frame as an 8-bit RGB PNG, tuned for speed (fast deflate, one filter for all rows):
/// screenshots are opaque, so alpha is dropped.
pub fn encode_png(pixmap: &Pixmap) -> Result<Vec<u8>, PixelsError> {
    let (w, h) = (pixmap.width(), pixmap.height());
    let mut rgb = Vec::with_capacity(w as usize * h as usize * 3);
    // Opaque pixels: premultiplied equals straight, so the channels copy as they are.
    for px in pixmap.data().chunks_exact(4) {
        rgb.extend_from_slice(&px[..3]);
    }
    let mut out = Vec::with_capacity(rgb.len() / 8);
    {
        let mut encoder = png::Encoder::new(&mut out, w, h);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Fast);
        encoder.set_filter(png::Filter::Up);
        let mut writer = encoder.write_header().map_err(|e| PixelsError::Png(e.to_string()))?;
        writer.write_image_data(&rgb).map_err(|e| PixelsError::Png(e.to_string()))?;
        writer.finish().map_err(|e| PixelsError::Png(e.to_string()))?;
    }
    Ok(out)
}

/// Decodes an 8-bit RGB or RGBA PNG (our own screenshots, golden images) into a pixmap.
pub fn decode_png(bytes: &[u8]) -> Result<Pixmap, PixelsError> {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().map_err(|e| PixelsError::Png(e.to_string()))?;
    let size = reader.output_buffer_size().ok_or_else(|| PixelsError::Png("image too large".into()))?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(|e| PixelsError::Png(e.to_string()))?;
    let (w, h) = (info.width, info.height);
    let mut pixmap = Pixmap::new(w, h).ok_or(PixelsError::Size { width: w, height: h })?;
    let data = &buf[..info.buffer_size()];
    match (info.color_type, info.bit_depth) {
        (png::ColorType::Rgb, png::BitDepth::Eight) => {
            for (dst, src) in pixmap.data_mut().chunks_exact_mut(4).zip(data.chunks_exact(3)) {
                dst.copy_from_slice(&[src[0], src[1], src[2], 255]);
            }
        }
        (png::ColorType::Rgba, png::BitDepth::Eight) => {
            for (dst, src) in pixmap.data_mut().chunks_exact_mut(4).zip(data.chunks_exact(4)) {
                // Premultiply, as the pixmap stores colours.
                let a = u16::from(src[3]);
                let pm = |c: u8| ((u16::from(c) * a + 127) / 255) as u8;
                dst.copy_from_slice(&[pm(src[0]), pm(src[1]), pm(src[2]), src[3]]);
            }
        }
        (color, depth) => {
            return Err(PixelsError::Png(format!("unsupported PNG format {color:?} {depth:?}")));
        }
    }
    Ok(pixmap)
}
