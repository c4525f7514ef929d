//! The RFB client: a screen to capture and a pointer and keyboard to drive.

use std::net::{TcpStream, ToSocketAddrs};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::VncError;
use crate::proto::{
    Framebuffer, MAX_PIXELS, MAX_TEXT, PixelFormat, Wire, keysym_for_char, vnc_auth_response,
};

/// Encodings we ask for: Raw (0), CopyRect (1), and the DesktopSize pseudo-encoding (-223).
const ENCODINGS: [i32; 3] = [0, 1, -223];

/// A connected RFB client. After an error mid-message (a timeout, say) the stream is out of step,
/// so every later call fails: reconnect.
pub struct VncClient {
    wire: Wire,
    format: PixelFormat,
    name: String,
    fb: Framebuffer,
    broken: bool,
    /// Scratch for one row of wire pixels.
    row: Vec<u8>,
}

impl VncClient {
    /// Connects, authenticates (None, or VNC authentication with `password`), and sets our pixel
    /// format (32 bpp R, G, B, X) and encodings. `timeout` bounds the connect and each step.
    pub fn connect(addr: &str, password: Option<&str>, timeout: Duration) -> Result<VncClient, VncError> {
        let doing = format!("connecting to {addr}");
        let mut last = None;
        let addrs = addr.to_socket_addrs().map_err(|e| VncError::io(&doing, e))?;
        let mut stream = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, timeout) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let stream = match (stream, last) {
            (Some(s), _) => s,
            (None, Some(e)) => return Err(VncError::io(&doing, e)),
            (None, None) => {
                return Err(VncError::Protocol(format!("{addr} resolves to no address")));
            }
        };
        let mut wire = Wire::new(stream, timeout)?;
        let deadline = Instant::now() + timeout;

        let version: [u8; 12] = wire.array(deadline, "reading the server's version")?;
        let minor = parse_version(&version)?;
        // We speak 3.3, 3.7 and 3.8; servers announcing more (Apple's 3.889) get 3.8.
        let minor = match minor {
            0..=6 => 3,
            7 => 7,
            _ => 8,
        };
        wire.send(format!("RFB 003.{minor:03}\n").as_bytes(), "sending our version")?;

        let security = if minor == 3 {
            // 3.3: the server decides, as a u32 (0 = failure, followed by a reason).
            match wire.u32(deadline, "reading the security type")? {
                0 => {
                    let reason = wire.text(deadline, "reading the refusal reason")?;
                    return Err(VncError::AuthFailed(reason));
                }
                t => t,
            }
        } else {
            let n = wire.array::<1>(deadline, "reading the security types")?[0];
            if n == 0 {
                let reason = wire.text(deadline, "reading the refusal reason")?;
                return Err(VncError::AuthFailed(reason));
            }
            let mut types = vec![0u8; usize::from(n)];
            wire.read(&mut types, deadline, "reading the security types")?;
            // None when offered; VNC authentication when we have a password.
            let chosen = if types.contains(&1) {
                1
            } else if types.contains(&2) && password.is_some() {
                2
            } else if types.contains(&2) {
                return Err(VncError::AuthFailed("the server requires a password and none was given".into()));
            } else {
                return Err(VncError::Protocol(format!(
                    "no security type we speak (None or VNC authentication) among {types:?}"
                )));
            };
            wire.send(&[chosen], "choosing the security type")?;
            u32::from(chosen)
        };
        match security {
            1 => {}
            2 => {
                let Some(password) = password else {
                    return Err(VncError::AuthFailed(
                        "the server requires a password and none was given".into(),
                    ));
                };
                let challenge: [u8; 16] = wire.array(deadline, "reading the challenge")?;
                wire.send(&vnc_auth_response(password, &challenge), "answering the challenge")?;
            }
            t => {
                return Err(VncError::Protocol(format!(
                    "the server chose security type {t} (None or VNC authentication expected)"
                )));
            }
        }
        // 3.8 always sends SecurityResult; 3.3 and 3.7 only after VNC authentication.
        if minor == 8 || security == 2 {
            let result = wire.u32(deadline, "reading the security result")?;
            if result != 0 {
                let reason = if minor == 8 {
                    wire.text(deadline, "reading the failure reason")?
                } else {
                    "the server refused the password".to_string()
                };
                return Err(VncError::AuthFailed(reason));
            }
        }

        wire.send(&[1], "sending ClientInit")?; // shared: other viewers stay connected
        let init: [u8; 20] = wire.array(deadline, "reading ServerInit")?;
        let width = u16::from_be_bytes([init[0], init[1]]);
        let height = u16::from_be_bytes([init[2], init[3]]);
        check_size(width, height, "ServerInit")?;
        let name = wire.text(deadline, "reading the desktop name")?;

        let format = PixelFormat::RGBX;
        let mut msg = vec![0u8, 0, 0, 0];
        msg.extend_from_slice(&format.to_bytes());
        msg.extend_from_slice(&[2, 0]);
        msg.extend_from_slice(&(ENCODINGS.len() as u16).to_be_bytes());
        for e in ENCODINGS {
            msg.extend_from_slice(&e.to_be_bytes());
        }
        wire.send(&msg, "sending SetPixelFormat and SetEncodings")?;
        Ok(VncClient {
            wire,
            format,
            name,
            fb: Framebuffer::new(width, height),
            broken: false,
            row: Vec::new(),
        })
    }

    /// Screen width (px).
    pub fn width(&self) -> u16 {
        self.fb.width
    }

    /// Screen height (px).
    pub fn height(&self) -> u16 {
        self.fb.height
    }

    /// The desktop name from ServerInit.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The framebuffer as last updated.
    pub fn framebuffer(&self) -> &Framebuffer {
        &self.fb
    }

    /// Asks for the whole screen and applies messages until one FramebufferUpdate is complete.
    /// `incremental`: the server may wait until something changes (and `timeout` may pass).
    pub fn refresh(&mut self, incremental: bool, timeout: Duration) -> Result<&Framebuffer, VncError> {
        self.usable()?;
        let result = self.refresh_inner(incremental, Instant::now() + timeout);
        self.broken = result.is_err();
        result?;
        Ok(&self.fb)
    }

    /// The whole screen now (a non-incremental refresh).
    pub fn capture(&mut self, timeout: Duration) -> Result<&Framebuffer, VncError> {
        self.refresh(false, timeout)
    }

    fn refresh_inner(&mut self, incremental: bool, deadline: Instant) -> Result<(), VncError> {
        let mut req = vec![3u8, u8::from(incremental), 0, 0, 0, 0];
        req.extend_from_slice(&self.fb.width.to_be_bytes());
        req.extend_from_slice(&self.fb.height.to_be_bytes());
        self.wire.send(&req, "sending FramebufferUpdateRequest")?;
        loop {
            let kind = self.wire.array::<1>(deadline, "waiting for a FramebufferUpdate")?[0];
            match kind {
                0 => return self.read_update(deadline),
                1 => {
                    // SetColourMapEntries: irrelevant in true colour; skip it.
                    let head: [u8; 5] = self.wire.array(deadline, "reading SetColourMapEntries")?;
                    let n = u16::from_be_bytes([head[3], head[4]]);
                    self.wire.skip(usize::from(n) * 6, deadline, "reading SetColourMapEntries")?;
                }
                2 => {} // Bell
                3 => {
                    self.wire.skip(3, deadline, "reading ServerCutText")?;
                    let len = self.wire.u32(deadline, "reading ServerCutText")? as usize;
                    if len > MAX_TEXT {
                        return Err(VncError::Protocol(format!(
                            "ServerCutText of {len} bytes (at most {MAX_TEXT})"
                        )));
                    }
                    self.wire.skip(len, deadline, "reading ServerCutText")?;
                }
                k => {
                    return Err(VncError::Protocol(format!("unknown server message type {k}")));
                }
            }
        }
    }

    fn read_update(&mut self, deadline: Instant) -> Result<(), VncError> {
        let doing = "reading a FramebufferUpdate";
        let head: [u8; 3] = self.wire.array(deadline, doing)?;
        let rects = u16::from_be_bytes([head[1], head[2]]);
        let bpp = self.format.bytes_per_pixel();
        for _ in 0..rects {
            // Per rectangle, not only when the socket is read: thousands of buffered small
            // rectangles (each a large copy) must not outlast the deadline.
            if Instant::now() >= deadline {
                return Err(VncError::Timeout { doing: doing.to_string() });
            }
            let r: [u8; 12] = self.wire.array(deadline, doing)?;
            let [x, y, w, h] = [0, 2, 4, 6].map(|i| usize::from(u16::from_be_bytes([r[i], r[i + 1]])));
            let encoding = i32::from_be_bytes([r[8], r[9], r[10], r[11]]);
            if encoding == -223 {
                // DesktopSize: the screen changed size; its new contents follow.
                check_size(w as u16, h as u16, "DesktopSize")?;
                if (w as u16, h as u16) != (self.fb.width, self.fb.height) {
                    self.fb = Framebuffer::new(w as u16, h as u16);
                }
                continue;
            }
            let (fw, fh) = (usize::from(self.fb.width), usize::from(self.fb.height));
            if x + w > fw || y + h > fh {
                return Err(VncError::Protocol(format!(
                    "rectangle {w}x{h}+{x}+{y} outside the {fw}x{fh} screen"
                )));
            }
            match encoding {
                0 => {
                    self.row.resize(w * bpp, 0);
                    for row in y..y + h {
                        self.wire.read(&mut self.row, deadline, doing)?;
                        let start = (row * fw + x) * 4;
                        self.format.decode(&self.row, &mut self.fb.rgba[start..start + w * 4]);
                    }
                }
                1 => {
                    let src: [u8; 4] = self.wire.array(deadline, doing)?;
                    let sx = usize::from(u16::from_be_bytes([src[0], src[1]]));
                    let sy = usize::from(u16::from_be_bytes([src[2], src[3]]));
                    if sx + w > fw || sy + h > fh {
                        return Err(VncError::Protocol(format!(
                            "CopyRect source {w}x{h}+{sx}+{sy} outside the {fw}x{fh} screen"
                        )));
                    }
                    // Copy through a buffer: source and destination may overlap.
                    let mut copy = Vec::with_capacity(w * h * 4);
                    for row in sy..sy + h {
                        let s = (row * fw + sx) * 4;
                        copy.extend_from_slice(&self.fb.rgba[s..s + w * 4]);
                    }
                    for (i, row) in (y..y + h).enumerate() {
                        let d = (row * fw + x) * 4;
                        self.fb.rgba[d..d + w * 4].copy_from_slice(&copy[i * w * 4..(i + 1) * w * 4]);
                    }
                }
                e => {
                    return Err(VncError::Protocol(format!(
                        "rectangle in encoding {e}, which we did not ask for (Raw, CopyRect, DesktopSize)"
                    )));
                }
            }
        }
        Ok(())
    }

    fn usable(&self) -> Result<(), VncError> {
        if self.broken {
            return Err(VncError::Protocol(
                "the connection is out of step after an earlier error; reconnect".into(),
            ));
        }
        Ok(())
    }

    /// A PointerEvent: the pointer at (x, y) with the RFB button mask (1 = left, 8/16 = wheel).
    pub fn pointer(&mut self, x: u16, y: u16, buttons: u8) -> Result<(), VncError> {
        self.usable()?;
        let [x0, x1] = x.to_be_bytes();
        let [y0, y1] = y.to_be_bytes();
        self.wire.send(&[5, buttons, x0, x1, y0, y1], "sending a PointerEvent")
    }

    /// A KeyEvent: `keysym` pressed (`down`) or released.
    pub fn key(&mut self, keysym: u32, down: bool) -> Result<(), VncError> {
        self.usable()?;
        let mut msg = vec![4, u8::from(down), 0, 0];
        msg.extend_from_slice(&keysym.to_be_bytes());
        self.wire.send(&msg, "sending a KeyEvent")
    }

    /// Moves to (x, y), presses and releases the left button.
    pub fn tap(&mut self, x: u16, y: u16) -> Result<(), VncError> {
        self.pointer(x, y, 0)?;
        self.pointer(x, y, 1)?;
        self.pointer(x, y, 0)
    }

    /// Presses the left button at (x, y) for `ms` milliseconds.
    pub fn long_press(&mut self, x: u16, y: u16, ms: u64) -> Result<(), VncError> {
        self.pointer(x, y, 0)?;
        self.pointer(x, y, 1)?;
        sleep(Duration::from_millis(ms));
        self.pointer(x, y, 0)
    }

    /// Drags with the left button from `from` to `to` over `ms` milliseconds, in `steps`
    /// evenly spaced motion events (at least one).
    pub fn drag(&mut self, from: (u16, u16), to: (u16, u16), ms: u64, steps: u32) -> Result<(), VncError> {
        let steps = steps.max(1);
        self.pointer(from.0, from.1, 0)?;
        self.pointer(from.0, from.1, 1)?;
        let lerp = |a: u16, b: u16, i: u32| {
            let t = f64::from(i) / f64::from(steps);
            (f64::from(a) + (f64::from(b) - f64::from(a)) * t).round() as u16
        };
        for i in 1..=steps {
            sleep(Duration::from_millis(ms / u64::from(steps)));
            self.pointer(lerp(from.0, to.0, i), lerp(from.1, to.1, i), 1)?;
        }
        self.pointer(to.0, to.1, 0)
    }

    /// Presses and releases a key.
    pub fn press_key(&mut self, keysym: u32) -> Result<(), VncError> {
        self.key(keysym, true)?;
        self.key(keysym, false)
    }

    /// Types `text`, one press and release per character ([`keysym_for_char`]); a `\r\n` line
    /// break is one Return, as on the adb path.
    pub fn type_text(&mut self, text: &str) -> Result<(), VncError> {
        text.replace("\r\n", "\n").chars().try_for_each(|c| self.press_key(keysym_for_char(c)))
    }
}

/// The minor version of a ProtocolVersion message (`RFB 003.008\n` → 8).
fn parse_version(v: &[u8; 12]) -> Result<u16, VncError> {
    let bad = || {
        VncError::Protocol(format!("not an RFB server (version message {:?})", String::from_utf8_lossy(v)))
    };
    if &v[..4] != b"RFB " || v[7] != b'.' || v[11] != b'\n' {
        return Err(bad());
    }
    let num = |b: &[u8]| -> Option<u16> { std::str::from_utf8(b).ok()?.parse().ok() };
    let major = num(&v[4..7]).ok_or_else(bad)?;
    let minor = num(&v[8..11]).ok_or_else(bad)?;
    match major {
        3 if minor >= 3 => Ok(minor),
        m if m > 3 => Ok(8),
        _ => Err(VncError::Protocol(format!("RFB version {major}.{minor} is older than 3.3"))),
    }
}

/// A peer-declared screen size within [`MAX_PIXELS`].
pub(crate) fn check_size(w: u16, h: u16, what: &str) -> Result<(), VncError> {
    if w == 0 || h == 0 {
        return Err(VncError::Protocol(format!("{what}: a {w}x{h} screen has no pixels")));
    }
    if usize::from(w) * usize::from(h) > MAX_PIXELS {
        return Err(VncError::Protocol(format!(
            "{what}: a {w}x{h} screen is over the limit of {MAX_PIXELS} pixels"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse() {
        assert_eq!(parse_version(b"RFB 003.008\n").ok(), Some(8));
        assert_eq!(parse_version(b"RFB 003.889\n").ok(), Some(889));
        assert_eq!(parse_version(b"RFB 004.001\n").ok(), Some(8));
        assert!(parse_version(b"RFB 002.000\n").is_err());
        assert!(parse_version(b"HTTP/1.1 200").is_err());
    }
}
