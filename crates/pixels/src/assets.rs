//! Pictures a package ships in `assets/` (PNG, JPEG, SVG): decoded once, when the package loads,
//! into pixmaps kept by a key made from their bytes, so a screen names them (`src="asset:NAME"`,
//! `icon="asset:NAME"`) and every screenshot draws the same pixels.
//!
//! Packages are untrusted, so decoding is bounded: at most [`MAX_ASSET_BYTES`] per file, raster
//! images at most [`MAX_SIDE`] pixels a side (checked from the header, before the pixels are
//! allocated), and SVGs drawn once at [`SVG_SIDE`] pixels on their longer side with every
//! external reference refused (no `<image href>` to a file or a nested document, no text: shapes
//! only). The key depends only on the bytes, so two packages shipping the same file share one
//! picture, and a changed file is a different picture.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, PoisonError, RwLock};

use tiny_skia::{FilterQuality, Mask, Pattern, Pixmap, PremultipliedColorU8, Rect, SpreadMode, Transform};

use crate::paint::Frame;

/// What an asset's key starts with (`asset:` followed by the content hash).
pub const ASSET: &str = "asset:";
/// The most bytes one asset file may have.
pub const MAX_ASSET_BYTES: usize = 4 * 1024 * 1024;
/// The most pixels a decoded PNG or JPEG may have on a side.
pub const MAX_SIDE: u32 = 2048;
/// The size, in pixels on the longer side, SVGs are drawn at (then scaled like any picture).
pub const SVG_SIDE: u32 = 512;

/// An asset's format, from its file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssetKind {
    /// `.png`
    Png,
    /// `.jpg`, `.jpeg`
    Jpeg,
    /// `.svg`
    Svg,
}

impl AssetKind {
    /// The format a file name's extension says (case-insensitive), if it is one of ours.
    pub fn from_file_name(name: &str) -> Option<AssetKind> {
        let (_, ext) = name.rsplit_once('.')?;
        Some(match ext.to_ascii_lowercase().as_str() {
            "png" => AssetKind::Png,
            "jpg" | "jpeg" => AssetKind::Jpeg,
            "svg" => AssetKind::Svg,
            _ => return None,
        })
    }
}

static REGISTRY: LazyLock<RwLock<HashMap<String, Arc<Pixmap>>>> = LazyLock::new(Default::default);

/// The key of an asset with these bytes: `asset:` + FNV-1a (64-bit, hex) + `-` + length.
pub fn key_of(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{ASSET}{h:016x}-{}", bytes.len())
}

/// Decodes `bytes` as `kind` and keeps the picture; returns its key. Bytes decoded before are
/// not decoded again. The error says what is wrong with the file.
pub fn register(kind: AssetKind, bytes: &[u8]) -> Result<String, String> {
    if bytes.len() > MAX_ASSET_BYTES {
        return Err(format!("is {} bytes; an asset may have at most {MAX_ASSET_BYTES}", bytes.len()));
    }
    let key = key_of(bytes);
    if REGISTRY.read().unwrap_or_else(PoisonError::into_inner).contains_key(&key) {
        return Ok(key);
    }
    let pixmap = match kind {
        AssetKind::Png => decode_png(bytes)?,
        AssetKind::Jpeg => decode_jpeg(bytes)?,
        AssetKind::Svg => render_svg(bytes)?,
    };
    REGISTRY.write().unwrap_or_else(PoisonError::into_inner).insert(key.clone(), Arc::new(pixmap));
    Ok(key)
}

/// The picture registered under `key` (`asset:…`), if any.
pub fn get(key: &str) -> Option<Arc<Pixmap>> {
    REGISTRY.read().unwrap_or_else(PoisonError::into_inner).get(key).cloned()
}

fn check_side(w: u32, h: u32) -> Result<(), String> {
    if w == 0 || h == 0 || w > MAX_SIDE || h > MAX_SIDE {
        return Err(format!("is {w}×{h} pixels; an asset may be at most {MAX_SIDE}×{MAX_SIDE}"));
    }
    Ok(())
}

/// Straight RGBA rows into a premultiplied pixmap.
fn from_rgba(w: u32, h: u32, rgba: &[u8]) -> Result<Pixmap, String> {
    let mut pixmap = Pixmap::new(w, h).ok_or("cannot hold the picture")?;
    for (px, src) in pixmap.pixels_mut().iter_mut().zip(rgba.chunks_exact(4)) {
        let a = src[3];
        let premultiply = |c: u8| ((u16::from(c) * u16::from(a) + 127) / 255) as u8;
        *px =
            PremultipliedColorU8::from_rgba(premultiply(src[0]), premultiply(src[1]), premultiply(src[2]), a)
                .unwrap_or(PremultipliedColorU8::TRANSPARENT);
    }
    Ok(pixmap)
}

fn decode_png(bytes: &[u8]) -> Result<Pixmap, String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    // Palettes and low bit depths become 8-bit channels, 16-bit ones 8-bit.
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    decoder.set_limits(png::Limits { bytes: (MAX_SIDE * MAX_SIDE * 4) as usize });
    let mut reader = decoder.read_info().map_err(|e| format!("is not a PNG this can read: {e}"))?;
    let (w, h) = (reader.info().width, reader.info().height);
    check_side(w, h)?;
    let size = reader.output_buffer_size().ok_or("is too large to decode")?;
    let mut buffer = vec![0u8; size];
    let frame = reader.next_frame(&mut buffer).map_err(|e| format!("is not a PNG this can read: {e}"))?;
    let data = &buffer[..frame.buffer_size()];
    let rgba: Vec<u8> = match frame.color_type {
        png::ColorType::Rgba => data.to_vec(),
        png::ColorType::Rgb => data.chunks_exact(3).flat_map(|c| [c[0], c[1], c[2], 255]).collect(),
        png::ColorType::GrayscaleAlpha => {
            data.chunks_exact(2).flat_map(|c| [c[0], c[0], c[0], c[1]]).collect()
        }
        png::ColorType::Grayscale => data.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        png::ColorType::Indexed => return Err("has a palette the decoder did not expand".into()),
    };
    from_rgba(w, h, &rgba)
}

fn decode_jpeg(bytes: &[u8]) -> Result<Pixmap, String> {
    use zune_jpeg::zune_core::bytestream::ZCursor;
    use zune_jpeg::zune_core::colorspace::ColorSpace;
    use zune_jpeg::zune_core::options::DecoderOptions;
    let options = DecoderOptions::default()
        .jpeg_set_out_colorspace(ColorSpace::RGBA)
        .set_max_width(MAX_SIDE as usize)
        .set_max_height(MAX_SIDE as usize);
    let mut decoder = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(bytes), options);
    decoder.decode_headers().map_err(|e| format!("is not a JPEG this can read: {e:?}"))?;
    let info = decoder.info().ok_or("is not a JPEG this can read: no header")?;
    let (w, h) = (u32::from(info.width), u32::from(info.height));
    check_side(w, h)?;
    let rgba = decoder.decode().map_err(|e| format!("is not a JPEG this can read: {e:?}"))?;
    if rgba.len() != (w * h * 4) as usize {
        return Err("decoded to an unexpected size".into());
    }
    from_rgba(w, h, &rgba)
}

fn render_svg(bytes: &[u8]) -> Result<Pixmap, String> {
    use resvg::usvg;
    let refuse = usvg::ImageHrefResolver {
        resolve_data: Box::new(|_, _, _| None),
        resolve_string: Box::new(|_, _| None),
    };
    let options =
        usvg::Options { resources_dir: None, image_href_resolver: refuse, ..usvg::Options::default() };
    let tree =
        usvg::Tree::from_data(bytes, &options).map_err(|e| format!("is not an SVG this can read: {e}"))?;
    let size = tree.size();
    let longer = size.width().max(size.height());
    if !(longer.is_finite() && longer > 0.0) {
        return Err("is an SVG without a size".into());
    }
    let scale = SVG_SIDE as f32 / longer;
    let w = (size.width() * scale).round().clamp(1.0, SVG_SIDE as f32) as u32;
    let h = (size.height() * scale).round().clamp(1.0, SVG_SIDE as f32) as u32;
    let mut pixmap = Pixmap::new(w, h).ok_or("cannot hold the picture")?;
    resvg::render(&tree, Transform::from_scale(scale, scale), &mut pixmap.as_mut());
    Ok(pixmap)
}

/// Draws the picture `key` filling `frame` the way Android's `centerCrop` does (scaled to cover,
/// centred, the overflow cut), clipped by `mask`. `false` when no picture has that key.
pub fn draw(target: &mut Pixmap, key: &str, frame: Frame, mask: Option<&Mask>) -> bool {
    let Some(picture) = get(key) else { return false };
    let (w, h) = (picture.width() as f32, picture.height() as f32);
    let Some(rect) = Rect::from_xywh(frame.x, frame.y, frame.w, frame.h) else { return true };
    let scale = (frame.w / w).max(frame.h / h);
    let (dx, dy) = (frame.x + (frame.w - w * scale) / 2.0, frame.y + (frame.h - h * scale) / 2.0);
    let shader = Pattern::new(
        Pixmap::as_ref(&picture),
        SpreadMode::Pad,
        FilterQuality::Bilinear,
        1.0,
        Transform::from_row(scale, 0.0, 0.0, scale, dx, dy),
    );
    let paint = tiny_skia::Paint { shader, anti_alias: false, ..Default::default() };
    target.fill_rect(rect, &paint, Transform::identity(), mask);
    true
}

/// Draws the picture `key` as an icon: its shape (alpha) in `color`, fitted inside the square
/// at (`x`, `y`) of side `side`, clipped by `mask`. `false` when no picture has that key.
pub fn draw_icon(
    target: &mut Pixmap,
    key: &str,
    (x, y, side): (f32, f32, f32),
    color: tiny_skia::Color,
    mask: Option<&Mask>,
) -> bool {
    let Some(picture) = get(key) else { return false };
    let px = side.round().clamp(1.0, 1024.0) as u32;
    let Some(mut glyph) = Pixmap::new(px, px) else { return true };
    // The picture fitted (not cropped) into the square, then every pixel recoloured by its alpha.
    let (w, h) = (picture.width() as f32, picture.height() as f32);
    let scale = (px as f32 / w).min(px as f32 / h);
    let (dx, dy) = ((px as f32 - w * scale) / 2.0, (px as f32 - h * scale) / 2.0);
    glyph.draw_pixmap(
        0,
        0,
        Pixmap::as_ref(&picture),
        &tiny_skia::PixmapPaint { quality: FilterQuality::Bilinear, ..Default::default() },
        Transform::from_row(scale, 0.0, 0.0, scale, dx, dy),
        None,
    );
    let ink = color.to_color_u8();
    for p in glyph.pixels_mut() {
        let a = p.alpha();
        let tint = |c: u8| ((u16::from(c) * u16::from(a) + 127) / 255) as u8;
        let alpha = ((u16::from(ink.alpha()) * u16::from(a) + 127) / 255) as u8;
        let scaled = |c: u8| ((u16::from(tint(c)) * u16::from(ink.alpha()) + 127) / 255) as u8;
        *p = PremultipliedColorU8::from_rgba(
            scaled(ink.red()),
            scaled(ink.green()),
            scaled(ink.blue()),
            alpha,
        )
        .unwrap_or(PremultipliedColorU8::TRANSPARENT);
    }
    target.draw_pixmap(
        x.round() as i32,
        y.round() as i32,
        glyph.as_ref(),
        &tiny_skia::PixmapPaint::default(),
        Transform::identity(),
        mask,
    );
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png_bytes(w: u32, h: u32, rgba: [u8; 4]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, w, h);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().expect("header");
        let data: Vec<u8> = (0..w * h).flat_map(|_| rgba).collect();
        writer.write_image_data(&data).expect("data");
        writer.finish().expect("finish");
        out
    }

    #[test]
    fn a_png_decodes_and_draws_where_it_is_asked() {
        let bytes = png_bytes(4, 2, [200, 40, 40, 255]);
        let key = register(AssetKind::Png, &bytes).expect("a PNG registers");
        assert_eq!(key, key_of(&bytes));
        assert_eq!(register(AssetKind::Png, &bytes).expect("again"), key, "same bytes, same key");
        let mut target = Pixmap::new(40, 40).expect("pixmap");
        assert!(draw(&mut target, &key, Frame::new(10.0, 10.0, 20.0, 20.0), None));
        let at = |x: u32, y: u32| target.pixel(x, y).expect("inside");
        assert_eq!((at(20, 20).red(), at(20, 20).alpha()), (200, 255), "filled inside the frame");
        assert_eq!(at(5, 5).alpha(), 0, "nothing outside the frame");
        assert!(!draw(&mut target, "asset:none", Frame::new(0.0, 0.0, 4.0, 4.0), None));
    }

    #[test]
    fn an_svg_draws_shapes_and_refuses_what_it_would_fetch() {
        let svg = br##"<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24"><rect x="0" y="0" width="24" height="12" fill="#000"/><image href="/etc/passwd" width="24" height="24"/></svg>"##;
        let key = register(AssetKind::Svg, svg).expect("an SVG registers");
        let picture = get(&key).expect("kept");
        assert_eq!((picture.width(), picture.height()), (SVG_SIDE, SVG_SIDE));
        assert_eq!(picture.pixel(10, 10).expect("top").alpha(), 255, "the rectangle");
        assert_eq!(picture.pixel(10, SVG_SIDE - 10).expect("bottom").alpha(), 0, "no fetched image below it");
        let mut target = Pixmap::new(48, 48).expect("pixmap");
        assert!(draw_icon(
            &mut target,
            &key,
            (0.0, 0.0, 48.0),
            tiny_skia::Color::from_rgba8(0, 0, 255, 255),
            None
        ));
        let top = target.pixel(24, 6).expect("top");
        assert_eq!((top.red(), top.blue(), top.alpha()), (0, 255, 255), "the shape in the ink");
        assert_eq!(target.pixel(24, 40).expect("bottom").alpha(), 0);
    }

    #[test]
    fn bad_or_oversized_files_are_refused_with_a_reason() {
        assert!(register(AssetKind::Png, b"not a png").unwrap_err().contains("not a PNG"));
        assert!(register(AssetKind::Jpeg, b"\xFF\xD8 broken").unwrap_err().contains("not a JPEG"));
        assert!(register(AssetKind::Svg, b"<svg").unwrap_err().contains("not an SVG"));
        let huge = png_bytes(MAX_SIDE + 1, 1, [0, 0, 0, 255]);
        assert!(register(AssetKind::Png, &huge).unwrap_err().contains("at most"));
        assert_eq!(AssetKind::from_file_name("a.JPG"), Some(AssetKind::Jpeg));
        assert_eq!(AssetKind::from_file_name("a.gif"), None);
    }
}
