//! Generated pictures: `placeholder:KEY` images drawn from a hash of KEY, so app seeds can
//! reference hundreds of distinct photos (and a camera can "take" new ones) without binary files
//! in the repository. Same key → same pixels on every machine: the scene comes from a SplitMix64
//! stream seeded by the key's FNV-1a hash, and is drawn in the target frame itself (a picture
//! always fills its frame, as `centerCrop` does).

use std::f32::consts::TAU;

use tiny_skia::{
    FillRule, GradientStop, LinearGradient, Mask, PathBuilder, Pixmap, Point, Rect, SpreadMode, Transform,
};

use crate::paint::Frame;

/// The prefix of a generated picture's source.
pub const PLACEHOLDER: &str = "placeholder:";

/// Skies: (top, horizon) colours.
const SKIES: [([u8; 3], [u8; 3]); 6] = [
    ([70, 130, 200], [180, 215, 240]),  // clear day
    ([40, 60, 120], [240, 150, 90]),    // sunset
    ([25, 25, 60], [110, 80, 140]),     // dusk
    ([150, 160, 170], [215, 220, 225]), // overcast
    ([10, 15, 40], [40, 60, 100]),      // night
    ([90, 170, 220], [250, 230, 180]),  // golden hour
];

/// Lands, back to front: three colours per palette.
const LANDS: [[[u8; 3]; 3]; 5] = [
    [[120, 160, 110], [70, 120, 70], [35, 80, 45]],   // green hills
    [[200, 170, 120], [170, 135, 90], [130, 95, 60]], // desert
    [[140, 140, 150], [100, 100, 115], [60, 60, 75]], // mountains
    [[90, 130, 160], [50, 95, 130], [25, 60, 90]],    // sea and shore
    [[110, 100, 120], [75, 70, 90], [40, 38, 55]],    // city at dusk
];

fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// SplitMix64: a small, fixed generator (the same numbers everywhere).
struct Stream(u64);

impl Stream {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..hi`.
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }

    fn pick(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn rgb(c: [u8; 3]) -> tiny_skia::Color {
    tiny_skia::Color::from_rgba8(c[0], c[1], c[2], 255)
}

fn shade(c: [u8; 3], factor: f32) -> [u8; 3] {
    c.map(|v| (f32::from(v) * factor).clamp(0.0, 255.0) as u8)
}

/// Draws the picture `key` (the text after `placeholder:`) filling `frame`, clipped by `mask`.
pub fn draw_placeholder(pixmap: &mut Pixmap, key: &str, frame: Frame, mask: Option<&Mask>) {
    let (x, y, w, h) = (frame.x, frame.y, frame.w, frame.h);
    if !(w.is_finite() && h.is_finite() && w >= 1.0 && h >= 1.0) {
        return;
    }
    let mut s = Stream(fnv1a(key));
    let (sky_top, horizon) = SKIES[s.pick(SKIES.len())];
    let land = LANDS[s.pick(LANDS.len())];
    let brightness = s.range(0.85, 1.1);

    // Sky.
    if let (Some(shader), Some(r)) = (
        LinearGradient::new(
            Point::from_xy(x, y),
            Point::from_xy(x, y + h * 0.7),
            vec![
                GradientStop::new(0.0, rgb(shade(sky_top, brightness))),
                GradientStop::new(1.0, rgb(shade(horizon, brightness))),
            ],
            SpreadMode::Pad,
            Transform::identity(),
        ),
        Rect::from_xywh(x, y, w, h),
    ) {
        let paint = tiny_skia::Paint { shader, anti_alias: false, ..Default::default() };
        pixmap.fill_rect(r, &paint, Transform::identity(), mask);
    }

    let fill = |pixmap: &mut Pixmap, path: Option<tiny_skia::Path>, c: [u8; 3]| {
        let Some(path) = path else { return };
        let mut paint = tiny_skia::Paint::default();
        paint.set_color(rgb(c));
        paint.anti_alias = true;
        pixmap.fill_path(&path, &paint, FillRule::Winding, Transform::identity(), mask);
    };

    // Sun or moon.
    let side = w.min(h);
    let (cx, cy, r) = (x + w * s.range(0.15, 0.85), y + h * s.range(0.12, 0.4), side * s.range(0.05, 0.11));
    fill(pixmap, PathBuilder::from_circle(cx, cy, r), shade([255, 240, 200], brightness));

    // Three layers of land, back to front, each a wavy ridge; a city palette gets a skyline.
    let city = land == LANDS[4];
    for (layer, colour) in land.iter().enumerate() {
        let base = y + h * (0.5 + 0.13 * layer as f32) + h * s.range(-0.04, 0.04);
        let amplitude = h * s.range(0.03, 0.09) / (layer as f32 + 1.0);
        let (f1, f2) = (s.range(1.0, 3.5), s.range(4.0, 9.0));
        let (p1, p2) = (s.range(0.0, TAU), s.range(0.0, TAU));
        let mut pb = PathBuilder::new();
        pb.move_to(x, y + h);
        const STEPS: usize = 32;
        for i in 0..=STEPS {
            let t = i as f32 / STEPS as f32;
            let ridge = base - amplitude * ((t * f1 * TAU + p1).sin() + 0.4 * (t * f2 * TAU + p2).sin());
            pb.line_to(x + w * t, ridge);
        }
        pb.line_to(x + w, y + h);
        pb.close();
        fill(pixmap, pb.finish(), shade(*colour, brightness));
        if city && layer == 1 {
            let mut bx = x;
            while bx < x + w {
                let bw = w * s.range(0.05, 0.12);
                let bh = h * s.range(0.1, 0.35);
                let width = (bw * 0.9).min(x + w - bx);
                fill(
                    pixmap,
                    Rect::from_xywh(bx, base - bh, width, bh + h * 0.05).map(PathBuilder::from_rect),
                    shade(*colour, 0.8),
                );
                bx += bw;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picture(key: &str, w: u32, h: u32) -> Vec<u8> {
        let mut p = Pixmap::new(w, h).expect("pixmap");
        draw_placeholder(&mut p, key, Frame::new(0.0, 0.0, w as f32, h as f32), None);
        p.data().to_vec()
    }

    #[test]
    fn a_key_always_draws_the_same_picture_and_other_keys_others() {
        assert_eq!(picture("IMG_0042", 120, 90), picture("IMG_0042", 120, 90));
        let mut distinct = std::collections::BTreeSet::new();
        for i in 0..20 {
            distinct.insert(picture(&format!("photo-{i}"), 60, 40));
        }
        assert_eq!(distinct.len(), 20, "twenty keys, twenty pictures");
    }

    #[test]
    fn the_picture_fills_its_frame_and_nothing_else() {
        let mut p = Pixmap::new(100, 100).expect("pixmap");
        draw_placeholder(&mut p, "beach", Frame::new(20.0, 30.0, 50.0, 40.0), None);
        for py in 0..100u32 {
            for px in 0..100u32 {
                let alpha = p.pixel(px, py).map(|c| c.alpha()).unwrap_or(0);
                let inside = (20..70).contains(&px) && (30..70).contains(&py);
                assert_eq!(alpha == 255, inside, "pixel ({px},{py})");
            }
        }
    }

    #[test]
    fn degenerate_frames_draw_nothing() {
        let mut p = Pixmap::new(10, 10).expect("pixmap");
        for frame in [
            Frame::new(0.0, 0.0, 0.0, 5.0),
            Frame::new(0.0, 0.0, f32::NAN, 5.0),
            Frame::new(0.0, 0.0, 5.0, -1.0),
        ] {
            draw_placeholder(&mut p, "x", frame, None);
        }
        assert!(p.data().iter().all(|&b| b == 0));
    }
}
