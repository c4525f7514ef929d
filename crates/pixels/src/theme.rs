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

    /// The text colour on an avatar background.
    pub fn on_avatar(&self) -> Rgba {
        if self.dark { rgb(0xFFFFFF) } else { rgb(0x1F1F1F) }
    }
}
