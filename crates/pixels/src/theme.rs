//! Colours: Material 3 roles in the light and dark schemes of Google's own apps (the blue
//! baseline a Pixel shows with its default wallpaper).

/// A straight (not premultiplied) RGBA colour.
pub type Rgba = [u8; 4];

const fn rgb(hex: u32) -> Rgba {
    [(hex >> 16) as u8, (hex >> 8) as u8, hex as u8, 255]
}

/// The colour roles the renderer uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Dark scheme.
    pub dark: bool,
    /// Window background.
    pub surface: Rgba,
    /// Low container (app bars, cards).
    pub surface_container: Rgba,
    /// High container (dialogs, search bars, text fields).
    pub surface_container_high: Rgba,
    /// Text and icons on surfaces.
    pub on_surface: Rgba,
    /// Secondary text and icons.
    pub on_surface_variant: Rgba,
    /// Outlines of buttons and fields.
    pub outline: Rgba,
    /// Dividers.
    pub outline_variant: Rgba,
    /// Accent.
    pub primary: Rgba,
    /// Text and icons on the accent.
    pub on_primary: Rgba,
    /// Accent container (FAB, sent bubbles).
    pub primary_container: Rgba,
    /// Text on the accent container.
    pub on_primary_container: Rgba,
    /// Tonal container (tonal buttons, selected chips, switch tracks).
    pub secondary_container: Rgba,
    /// Text on the tonal container.
    pub on_secondary_container: Rgba,
    /// Errors and badges.
    pub error: Rgba,
    /// Text on error.
    pub on_error: Rgba,
    /// Toasts.
    pub inverse_surface: Rgba,
    /// Text on toasts.
    pub inverse_on_surface: Rgba,
    /// Keyboard background.
    pub keyboard: Rgba,
    /// Keyboard keys.
    pub key: Rgba,
    /// Wallpaper gradient, top and bottom.
    pub wallpaper: (Rgba, Rgba),
    /// Avatar backgrounds, picked by a hash of the avatar's text.
    pub avatars: [Rgba; 6],
}

impl Theme {
    /// The light scheme.
    pub const LIGHT: Theme = Theme {
        dark: false,
        surface: rgb(0xFFFFFF),
        surface_container: rgb(0xF0F4F9),
        surface_container_high: rgb(0xE9EEF6),
        on_surface: rgb(0x1F1F1F),
        on_surface_variant: rgb(0x444746),
        outline: rgb(0x747775),
        outline_variant: rgb(0xC4C7C5),
        primary: rgb(0x0B57D0),
        on_primary: rgb(0xFFFFFF),
        primary_container: rgb(0xD3E3FD),
        on_primary_container: rgb(0x041E49),
        secondary_container: rgb(0xC2E7FF),
        on_secondary_container: rgb(0x001D35),
        error: rgb(0xB3261E),
        on_error: rgb(0xFFFFFF),
        inverse_surface: rgb(0x303030),
        inverse_on_surface: rgb(0xF2F2F2),
        keyboard: rgb(0xE8EAED),
        key: rgb(0xFFFFFF),
        wallpaper: (rgb(0xA8C7FA), rgb(0xE8DEF8)),
        avatars: [rgb(0xF9DEDC), rgb(0xD3E3FD), rgb(0xC4EED0), rgb(0xFFDF99), rgb(0xE8DEF8), rgb(0xC2E7FF)],
    };

    /// The dark scheme.
    pub const DARK: Theme = Theme {
        dark: true,
        surface: rgb(0x131314),
        surface_container: rgb(0x1E1F20),
        surface_container_high: rgb(0x282A2C),
        on_surface: rgb(0xE3E3E3),
        on_surface_variant: rgb(0xC4C7C5),
        outline: rgb(0x8E918F),
        outline_variant: rgb(0x444746),
        primary: rgb(0xA8C7FA),
        on_primary: rgb(0x062E6F),
        primary_container: rgb(0x0842A0),
        on_primary_container: rgb(0xD3E3FD),
        secondary_container: rgb(0x004A77),
        on_secondary_container: rgb(0xC2E7FF),
        error: rgb(0xF2B8B5),
        on_error: rgb(0x601410),
        inverse_surface: rgb(0xE3E3E3),
        inverse_on_surface: rgb(0x303030),
        keyboard: rgb(0x202124),
        key: rgb(0x3C4043),
        wallpaper: (rgb(0x0B1D3A), rgb(0x2B1C3F)),
        avatars: [rgb(0x8C1D18), rgb(0x0842A0), rgb(0x0F5223), rgb(0x6D4C00), rgb(0x4A4458), rgb(0x004A77)],
    };

    /// The scheme for `dark`.
    pub fn for_dark(dark: bool) -> &'static Theme {
        if dark { &Theme::DARK } else { &Theme::LIGHT }
    }

    /// The avatar colour for `key`: a stable hash, so a person keeps their colour on every
    /// screen and every run.
    pub fn avatar(&self, key: &str) -> Rgba {
        // FNV-1a: stable across platforms and Rust versions, unlike `DefaultHasher`.
        let mut h: u32 = 0x811c_9dc5;
        for b in key.bytes() {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
        self.avatars[(h % self.avatars.len() as u32) as usize]
    }

    /// The fill a [`Swatch`] names in this scheme, and the text colour that reads on it.
    pub fn swatch(&self, swatch: Swatch) -> (Rgba, Rgba) {
        let on = self.on_avatar();
        match swatch {
            Swatch::Primary => (self.primary, self.on_primary),
            Swatch::PrimaryContainer => (self.primary_container, self.on_primary_container),
            Swatch::SecondaryContainer => (self.secondary_container, self.on_secondary_container),
            Swatch::Error => (self.error, self.on_error),
            Swatch::Surface => (self.surface_container_high, self.on_surface),
            Swatch::Inverse => (self.inverse_surface, self.inverse_on_surface),
            // The avatar tones: pastel in light, deep in dark, each with legible text.
            Swatch::Red => (self.avatars[0], on),
            Swatch::Blue => (self.avatars[1], on),
            Swatch::Green => (self.avatars[2], on),
            Swatch::Yellow => (self.avatars[3], on),
            Swatch::Purple => (self.avatars[4], on),
            Swatch::Teal => (self.avatars[5], on),
        }
    }

    /// The text colour on an avatar background.
    pub fn on_avatar(&self) -> Rgba {
        if self.dark { rgb(0xFFFFFF) } else { rgb(0x1F1F1F) }
    }
}

/// A background colour a layout may ask for (`bg="green"`): the palette, not free colours, so
/// every app's screens stay legible in the light and the dark scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swatch {
    /// The primary colour (text in on-primary).
    Primary,
    /// The primary container.
    PrimaryContainer,
    /// The secondary container.
    SecondaryContainer,
    /// The error colour.
    Error,
    /// A raised surface.
    Surface,
    /// The inverse surface (dark in the light scheme).
    Inverse,
    /// Red.
    Red,
    /// Blue.
    Blue,
    /// Green.
    Green,
    /// Yellow.
    Yellow,
    /// Purple.
    Purple,
    /// Teal.
    Teal,
}

impl Swatch {
    /// Every name `bg` takes, in documentation order.
    pub const NAMES: [&'static str; 12] = [
        "primary",
        "primary-container",
        "secondary-container",
        "error",
        "surface",
        "inverse",
        "red",
        "blue",
        "green",
        "yellow",
        "purple",
        "teal",
    ];

    /// The swatch a `bg` attribute names.
    pub fn from_name(name: &str) -> Option<Swatch> {
        Some(match name {
            "primary" => Swatch::Primary,
            "primary-container" => Swatch::PrimaryContainer,
            "secondary-container" => Swatch::SecondaryContainer,
            "error" => Swatch::Error,
            "surface" => Swatch::Surface,
            "inverse" => Swatch::Inverse,
            "red" => Swatch::Red,
            "blue" => Swatch::Blue,
            "green" => Swatch::Green,
            "yellow" => Swatch::Yellow,
            "purple" => Swatch::Purple,
            "teal" => Swatch::Teal,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod swatch_tests {
    use super::*;

    /// WCAG relative luminance contrast of two colours.
    fn contrast(a: Rgba, b: Rgba) -> f32 {
        let lum = |c: Rgba| {
            let ch = |v: u8| {
                let v = f32::from(v) / 255.0;
                if v <= 0.03928 { v / 12.92 } else { ((v + 0.055) / 1.055).powf(2.4) }
            };
            0.2126 * ch(c[0]) + 0.7152 * ch(c[1]) + 0.0722 * ch(c[2])
        };
        let (x, y) = (lum(a), lum(b));
        (x.max(y) + 0.05) / (x.min(y) + 0.05)
    }

    #[test]
    fn every_swatch_and_the_toast_read_in_both_schemes() {
        for theme in [&Theme::LIGHT, &Theme::DARK] {
            for name in Swatch::NAMES {
                let swatch = Swatch::from_name(name).expect("a listed name parses");
                let (fill, ink) = theme.swatch(swatch);
                assert!(contrast(fill, ink) >= 4.5, "{name} (dark: {}): {}", theme.dark, contrast(fill, ink));
            }
            // A toast is the inverse surface with its own text colour.
            assert!(contrast(theme.inverse_surface, theme.inverse_on_surface) >= 4.5);
        }
        assert_eq!(Swatch::from_name("magenta"), None);
    }
}
