//! A pixels-only device behind a VNC server (`vnc:HOST:PORT`): an iOS device, a remote desktop,
//! a kiosk, or `phonebench vnc-server`.
//!
//! The screen is the framebuffer and nothing else: its "tree" is what a [`Detector`] finds in
//! the pixels ([`phonebench_detect::to_tree`]: one flat window of detected elements, package
//! [`phonebench_detect::PIXELS_PACKAGE`]), which is UINavBench's observation. Gestures are
//! pointer events and text is key events. A VNC device knows no apps: it cannot list, launch or
//! stop them, nor run setup commands, so tasks that need those (or criteria that read the
//! real UI tree) are refused before they start ([`Device::pixels_only`]).

use std::sync::Arc;
use std::time::Duration;

use phonebench_actions::Key;
use phonebench_detect::{ClassicDetector, Detector, Image};
use phonebench_vnc::client::VncClient;
use phonebench_vnc::proto::keysym;

use crate::{Device, DeviceError, DeviceOptions, DeviceScreen};

/// The environment variable holding a VNC server's password (never on the command line, where
/// other users could read it).
pub const PASSWORD_ENV: &str = "PHONEBENCH_VNC_PASSWORD";

/// How long one framebuffer read or the connection may take.
const TIMEOUT: Duration = Duration::from_secs(20);

/// The density a VNC device reports: RFB says nothing of it, so one pixel is one dp.
pub const VNC_DPI: u32 = 160;

/// A device seen only through VNC.
pub struct VncDevice {
    address: String,
    client: VncClient,
    detector: Arc<dyn Detector>,
    options: DeviceOptions,
}

impl std::fmt::Debug for VncDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VncDevice")
            .field("address", &self.address)
            .field("size", &(self.client.width(), self.client.height()))
            .field("detector", &self.detector.name())
            .finish()
    }
}

impl VncDevice {
    /// Connects to the VNC server at `host_port` (password from [`PASSWORD_ENV`] when the server
    /// asks for one), detecting elements with `detector`.
    pub fn connect(
        host_port: &str,
        detector: Arc<dyn Detector>,
        options: DeviceOptions,
    ) -> Result<VncDevice, DeviceError> {
        let password = std::env::var(PASSWORD_ENV).ok().filter(|p| !p.is_empty());
        let client = VncClient::connect(host_port, password.as_deref(), TIMEOUT)
            .map_err(|e| DeviceError::NotReady(format!("VNC server {host_port}: {e}")))?;
        Ok(VncDevice { address: format!("vnc:{host_port}"), client, detector, options })
    }

    /// Connects with the default detector ([`ClassicDetector`] with Tesseract OCR).
    pub fn connect_default(host_port: &str, options: DeviceOptions) -> Result<VncDevice, DeviceError> {
        VncDevice::connect(host_port, Arc::new(ClassicDetector::new()), options)
    }

    /// The current framebuffer once it is stable: two reads in a row equal (bounded by
    /// `max_dumps` reads), RGBA.
    fn stable_frame(&mut self) -> Result<Vec<u8>, DeviceError> {
        std::thread::sleep(Duration::from_millis(self.options.settle_ms));
        let mut last = self.read_frame(false)?;
        for _ in 1..self.options.max_dumps.max(1) {
            std::thread::sleep(Duration::from_millis(self.options.stable_interval_ms));
            let next = self.read_frame(false)?;
            if next == last {
                return Ok(next);
            }
            last = next;
        }
        Ok(last)
    }

    fn read_frame(&mut self, incremental: bool) -> Result<Vec<u8>, DeviceError> {
        let frame = self.client.refresh(incremental, TIMEOUT).map_err(vnc_error("reading the screen"))?;
        Ok(frame.rgba.clone())
    }

    fn size(&self) -> (u32, u32) {
        (u32::from(self.client.width()), u32::from(self.client.height()))
    }

    /// A point of the screen as RFB's unsigned coordinates (clamped to the screen).
    fn point(&self, x: i32, y: i32) -> (u16, u16) {
        let clamp =
            |v: i32, max: u16| u16::try_from(v.clamp(0, i32::from(max.saturating_sub(1)))).unwrap_or(0);
        (clamp(x, self.client.width()), clamp(y, self.client.height()))
    }

    fn unsupported(&self, what: &str) -> DeviceError {
        DeviceError::Unsupported(format!(
            "{} is a pixels-only VNC device: it cannot {what} (only the screen, pointer and keys reach it)",
            self.address
        ))
    }
}

fn vnc_error(what: &'static str) -> impl Fn(phonebench_vnc::VncError) -> DeviceError {
    move |e| DeviceError::Dump(format!("VNC, {what}: {e}"))
}

/// The X keysym a phone key is on a VNC keyboard (Back is Escape, as desktop VNC viewers and
/// `phonebench vnc-server` take it); `None` for keys a keyboard does not have.
fn keysym_of(key: &Key) -> Option<u32> {
    Some(match key {
        // What `type` into an element sends after its tap, so the text appends.
        Key::Other(name) if name.eq_ignore_ascii_case("MOVE_END") || name.eq_ignore_ascii_case("END") => {
            keysym::END
        }
        Key::Back | Key::Escape => keysym::ESCAPE,
        Key::Home => keysym::HOME,
        Key::Enter => keysym::RETURN,
        Key::Backspace => keysym::BACKSPACE,
        Key::Delete => keysym::DELETE,
        Key::Tab => keysym::TAB,
        Key::Space => keysym::SPACE,
        Key::Menu => keysym::MENU,
        _ => return None,
    })
}

impl Device for VncDevice {
    fn name(&self) -> String {
        self.address.clone()
    }

    fn display(&self) -> (u32, u32, u32) {
        let (w, h) = self.size();
        (w, h, VNC_DPI)
    }

    fn pixels_only(&self) -> bool {
        true
    }

    fn has_key(&self, key: &Key) -> bool {
        keysym_of(key).is_some()
    }

    fn screen(&mut self) -> Result<DeviceScreen, DeviceError> {
        let rgba = self.stable_frame()?;
        let (width, height) = self.size();
        let elements = self
            .detector
            .detect(Image { width, height, rgba: &rgba })
            .map_err(|e| DeviceError::Dump(format!("detecting elements ({}): {e}", self.detector.name())))?;
        Ok(DeviceScreen {
            tree: phonebench_detect::to_tree(&elements, width, height),
            package: phonebench_detect::PIXELS_PACKAGE.to_string(),
            activity: String::new(),
        })
    }

    fn screenshot_png(&mut self) -> Result<Vec<u8>, DeviceError> {
        let rgba = self.read_frame(false)?;
        let (w, h) = self.size();
        let mut pixmap = phonebench_pixels::Pixmap::new(w, h)
            .ok_or_else(|| DeviceError::Dump(format!("a {w}x{h} screen has no pixels")))?;
        if rgba.len() != pixmap.data().len() {
            return Err(DeviceError::Dump("the framebuffer does not fill the screen".into()));
        }
        // Opaque pixels: plain RGBA is premultiplied RGBA.
        for (to, from) in pixmap.data_mut().chunks_exact_mut(4).zip(rgba.chunks_exact(4)) {
            to.copy_from_slice(&[from[0], from[1], from[2], 255]);
        }
        phonebench_pixels::encode_png(&pixmap).map_err(|e| DeviceError::Dump(e.to_string()))
    }

    fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        let (x, y) = self.point(x, y);
        self.client.tap(x, y).map_err(vnc_error("tap"))
    }

    fn double_tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.tap(x, y)?;
        std::thread::sleep(Duration::from_millis(80));
        self.tap(x, y)
    }

    fn long_press(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        let (x, y) = self.point(x, y);
        self.client.long_press(x, y, 800).map_err(vnc_error("long press"))
    }

    fn swipe(&mut self, from: (i32, i32), to: (i32, i32), ms: u32) -> Result<(), DeviceError> {
        let from = self.point(from.0, from.1);
        let to = self.point(to.0, to.1);
        self.client.drag(from, to, u64::from(ms), 12).map_err(vnc_error("swipe"))
    }

    fn type_text(&mut self, text: &str) -> Result<(), DeviceError> {
        self.client.type_text(text).map_err(vnc_error("typing"))
    }

    fn clear_text(&mut self, chars: usize) -> Result<(), DeviceError> {
        // The end of the field first (where a tap left the cursor is unknown), then erase.
        self.client.press_key(keysym::END).map_err(vnc_error("clearing"))?;
        for _ in 0..chars {
            self.client.press_key(keysym::BACKSPACE).map_err(vnc_error("clearing"))?;
        }
        Ok(())
    }

    fn key(&mut self, key: &Key) -> Result<(), DeviceError> {
        match keysym_of(key) {
            Some(sym) => self.client.press_key(sym).map_err(vnc_error("key")),
            None => Err(self.unsupported(&format!("press {key:?}"))),
        }
    }

    fn packages(&mut self) -> Result<Vec<String>, DeviceError> {
        Err(self.unsupported("list its apps"))
    }

    fn launch(&mut self, package: &str, _activity: Option<&str>) -> Result<(), DeviceError> {
        Err(self.unsupported(&format!("launch `{package}`")))
    }

    fn force_stop(&mut self, package: &str) -> Result<(), DeviceError> {
        Err(self.unsupported(&format!("stop `{package}`")))
    }

    fn run_setup(&mut self, command: &str) -> Result<String, DeviceError> {
        Err(self.unsupported(&format!("run `{command}`")))
    }

    fn wait(&mut self, ms: u64) -> Result<(), DeviceError> {
        std::thread::sleep(Duration::from_millis(ms));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phone_keys_map_to_keyboard_keysyms() {
        assert_eq!(keysym_of(&Key::Back), Some(keysym::ESCAPE));
        assert_eq!(keysym_of(&Key::Enter), Some(keysym::RETURN));
        assert_eq!(keysym_of(&Key::Home), Some(keysym::HOME));
        assert_eq!(keysym_of(&Key::VolumeUp), None);
        assert_eq!(keysym_of(&Key::Other("MOVE_END".into())), Some(keysym::END));
        assert_eq!(keysym_of(&Key::Other("KEYCODE_CAMERA".into())), None);
    }
}
