//! The screen the phone has: its size in pixels and its density.

use std::fmt;
use std::str::FromStr;

/// A phone screen: size in pixels and density in dots per inch. Everything an app declares in dp
/// is multiplied by [`Display::density`], so the same layout fills a 1080×2400 Pixel 6 and a
/// 768×1280 SPHINX device alike, and the UI tree's bounds follow the size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Display {
    /// Width, px.
    pub width: u32,
    /// Height, px.
    pub height: u32,
    /// Dots per inch (160 = 1 px per dp).
    pub dpi: u32,
}

impl Default for Display {
    /// AndroidWorld's Pixel 6: 1080×2400 at 420 dpi.
    fn default() -> Self {
        Display { width: 1080, height: 2400, dpi: 420 }
    }
}

/// Devices whose density is known; any other size gets the density that makes it 411 dp wide.
const KNOWN: &[(u32, u32, u32)] = &[
    (1080, 2400, 420), // Pixel 6 (AndroidWorld, MobileWorld)
    (1080, 1920, 420), // Pixel 2
    (1440, 3120, 560), // Pixel 7 Pro
    (768, 1280, 320),  // Nexus 4 class (SPHINX)
    (720, 1280, 320),  // Nexus 5-class emulator default
    (1280, 2856, 480), // Pixel 8 Pro class
];

/// Smallest and largest sizes accepted: below this nothing fits, above it frames are huge.
const MIN_SIDE: u32 = 240;
const MAX_SIDE: u32 = 4096;

impl Display {
    /// A display of `width`×`height` px with the density of the matching known device, or one
    /// that makes the screen 411 dp wide (a typical phone width).
    pub fn with_size(width: u32, height: u32) -> Display {
        let dpi = KNOWN
            .iter()
            .find(|(w, h, _)| (*w, *h) == (width, height))
            .map(|k| k.2)
            .unwrap_or_else(|| ((width as f32 * 160.0 / 411.0).round() as u32).max(80));
        Display { width, height, dpi }
    }

    /// Pixels per dp.
    pub fn density(&self) -> f32 {
        self.dpi as f32 / 160.0
    }

    /// `value` dp in px (not rounded).
    pub fn dp(&self, value: f32) -> f32 {
        value * self.density()
    }

    /// Width, px.
    pub fn width_px(&self) -> f32 {
        self.width as f32
    }

    /// Height, px.
    pub fn height_px(&self) -> f32 {
        self.height as f32
    }

    /// Status bar height: 32 dp, whole pixels.
    pub fn status_bar_h(&self) -> f32 {
        self.dp(32.0).round()
    }

    /// Navigation bar height: 48 dp, whole pixels.
    pub fn nav_bar_h(&self) -> f32 {
        self.dp(48.0).round()
    }

    /// Keyboard height: 264 dp, whole pixels.
    pub fn keyboard_h(&self) -> f32 {
        self.dp(264.0).round()
    }

    /// Checks the size and density are usable.
    pub fn check(&self) -> Result<(), String> {
        for (name, side) in [("width", self.width), ("height", self.height)] {
            if !(MIN_SIDE..=MAX_SIDE).contains(&side) {
                return Err(format!("screen {name} {side} px is outside {MIN_SIDE}..={MAX_SIDE}"));
            }
        }
        if !(80..=800).contains(&self.dpi) {
            return Err(format!("{} dpi is outside 80..=800", self.dpi));
        }
        if self.width_px() / self.density() < 240.0 || self.height_px() / self.density() < 400.0 {
            return Err(format!(
                "{self} is {:.0}×{:.0} dp; a phone screen needs at least 240×400 dp",
                self.width_px() / self.density(),
                self.height_px() / self.density()
            ));
        }
        Ok(())
    }
}

impl fmt::Display for Display {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}@{}", self.width, self.height, self.dpi)
    }
}

impl FromStr for Display {
    type Err = String;

    /// `WxH` (density from [`Display::with_size`]) or `WxH@DPI`.
    fn from_str(s: &str) -> Result<Display, String> {
        let bad = || format!("`{s}` is not a screen size (WxH or WxH@DPI, e.g. 1080x2400 or 768x1280@320)");
        let (size, dpi) = match s.trim().split_once('@') {
            Some((size, dpi)) => (size, Some(dpi.trim().parse::<u32>().map_err(|_| bad())?)),
            None => (s.trim(), None),
        };
        let (w, h) = size.split_once(['x', 'X', '×']).ok_or_else(bad)?;
        let width = w.trim().parse::<u32>().map_err(|_| bad())?;
        let height = h.trim().parse::<u32>().map_err(|_| bad())?;
        let mut display = Display::with_size(width, height);
        if let Some(dpi) = dpi {
            display.dpi = dpi;
        }
        display.check()?;
        Ok(display)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sizes_and_densities() {
        assert_eq!("1080x2400".parse::<Display>().unwrap(), Display::default());
        assert_eq!("768x1280".parse::<Display>().unwrap(), Display { width: 768, height: 1280, dpi: 320 });
        assert_eq!("720x1600@280".parse::<Display>().unwrap().dpi, 280);
        assert_eq!(Display::with_size(822, 1800).dpi, 320);
        for bad in ["", "1080", "1080x", "axb", "10x10", "1080x2400@5", "5000x2400", "2400x1080@900"] {
            assert!(bad.parse::<Display>().is_err(), "{bad}");
        }
        assert_eq!(Display::default().status_bar_h(), 84.0);
        assert_eq!(Display::default().nav_bar_h(), 126.0);
        assert_eq!(Display::default().keyboard_h(), 693.0);
        assert_eq!(Display::default().to_string(), "1080x2400@420");
    }
}
