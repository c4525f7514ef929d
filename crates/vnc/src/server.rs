//! The RFB server: any [`RfbScreen`] served to VNC clients, and [`GestureTracker`], which turns
//! their pointer streams into phone gestures.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::VncError;
use crate::proto::{PixelFormat, Wire, vnc_auth_response};

/// What an RFB server shows and where its input goes.
pub trait RfbScreen {
    /// Current size (px).
    fn size(&self) -> (u16, u16);
    /// The current picture (RGBA8, width*height*4) and a version that changes whenever it may have.
    fn picture(&mut self) -> Result<(u64, Arc<Vec<u8>>), String>;
    /// A pointer event (x, y, RFB button mask).
    fn pointer(&mut self, x: u16, y: u16, buttons: u8);
    /// A key event.
    fn key(&mut self, keysym: u32, down: bool);
    /// The desktop name.
    fn name(&self) -> String;
    /// Text the client put on its clipboard (ClientCutText). Ignored unless a screen has a use
    /// for it.
    fn cut_text(&mut self, text: &str) {
        let _ = text;
    }
    /// A client got past the handshake (authenticated, initialised): from here on it is
    /// served. Connections that fail before never reach the screen.
    fn connected(&mut self) {}
    /// The client asked for the whole screen now (a non-incremental update request), as
    /// opposed to waiting for a change: the picture that follows should be up to date.
    fn full_update_requested(&mut self) {}
}

/// How a connection is served.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// Require VNC authentication with this password (only its first 8 bytes count, as in every
    /// VNC server); `None` offers security type None.
    pub password: Option<String>,
    /// Bounds the handshake, and each client message once its first byte has arrived.
    pub message_timeout: Duration,
    /// Bounds each write (a client that stops reading is dropped).
    pub write_timeout: Duration,
    /// How often a waiting incremental update request looks for a new picture.
    pub poll_interval: Duration,
    /// Ends a connection silent for this long (`None`: viewers may watch idle for ever).
    pub idle_timeout: Option<Duration>,
}

impl Default for ServerOptions {
    fn default() -> ServerOptions {
        ServerOptions {
            password: None,
            message_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(30),
            poll_interval: Duration::from_millis(30),
            idle_timeout: None,
        }
    }
}

/// Serves one client until it disconnects (`Ok`) or fails (a protocol violation, a failed
/// authentication, a timeout, the screen's error).
pub fn serve_connection(
    stream: TcpStream,
    screen: &mut dyn RfbScreen,
    options: &ServerOptions,
) -> Result<(), VncError> {
    serve_until(stream, screen, options, &AtomicBool::new(false))
}

/// Accepts connections on `listener` one after another and serves each with `screen` until
/// `stop` is set (checked every `poll_interval`, also during a connection). A failed connection
/// does not stop the server: its error goes to standard error and the next client is served.
/// The listener is left in non-blocking mode.
pub fn serve(
    listener: &TcpListener,
    screen: &mut dyn RfbScreen,
    options: &ServerOptions,
    stop: &AtomicBool,
) -> Result<(), VncError> {
    serve_with(listener, screen, options, stop, &mut |peer, result| {
        if let Err(e) = result {
            eprintln!("vnc server: connection from {peer}: {e}");
        }
    })
}

/// [`serve`], telling `on_end` how each connection ended instead of printing failures.
pub fn serve_with(
    listener: &TcpListener,
    screen: &mut dyn RfbScreen,
    options: &ServerOptions,
    stop: &AtomicBool,
    on_end: &mut dyn FnMut(SocketAddr, Result<(), VncError>),
) -> Result<(), VncError> {
    // Non-blocking accept, so `stop` is seen without a connection arriving.
    listener.set_nonblocking(true).map_err(|e| VncError::io("setting up the listener", e))?;
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, peer)) => {
                let result = stream
                    .set_nonblocking(false)
                    .map_err(|e| VncError::io("setting up the connection", e))
                    .and_then(|()| serve_until(stream, screen, options, stop));
                on_end(peer, result);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => sleep(options.poll_interval),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(VncError::io("accepting a connection", e)),
        }
    }
    Ok(())
}

fn serve_until(
    stream: TcpStream,
    screen: &mut dyn RfbScreen,
    options: &ServerOptions,
    stop: &AtomicBool,
) -> Result<(), VncError> {
    let mut wire = Wire::new(stream, options.write_timeout)?;
    handshake(&mut wire, screen, options)?;
    screen.connected();
    let mut session = Session {
        format: PixelFormat::RGBX,
        desktop_size: false,
        sent_version: None,
        sent_size: screen.size(),
        out: Vec::new(),
    };
    let mut pending = false; // an incremental request waits for a new picture
    let mut next_check = Instant::now();
    let mut last_heard = Instant::now();
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        if pending && Instant::now() >= next_check {
            next_check = Instant::now() + options.poll_interval;
            let (version, picture) = screen.picture().map_err(VncError::Screen)?;
            if session.sent_version != Some(version) {
                session.send_update(&mut wire, screen, version, &picture)?;
                pending = false;
            }
        }
        match wire.poll(options.poll_interval, "waiting for a client message") {
            Ok(true) => last_heard = Instant::now(),
            Ok(false) => {
                if options.idle_timeout.is_some_and(|t| last_heard.elapsed() > t) {
                    return Err(VncError::Timeout { doing: "waiting for a client message (idle)".into() });
                }
                continue;
            }
            Err(e) if e.is_eof() => return Ok(()),
            Err(e) => return Err(e),
        }
        let deadline = Instant::now() + options.message_timeout;
        let kind = wire.array::<1>(deadline, "reading a client message")?[0];
        match kind {
            0 => {
                let m: [u8; 19] = wire.array(deadline, "reading SetPixelFormat")?;
                let mut pf = [0u8; 16];
                pf.copy_from_slice(&m[3..]);
                let format = PixelFormat::from_bytes(&pf);
                format.check()?;
                session.format = format;
            }
            2 => {
                let n = wire.array::<3>(deadline, "reading SetEncodings")?;
                let n = u16::from_be_bytes([n[1], n[2]]);
                session.desktop_size = false;
                for _ in 0..n {
                    let e = wire.u32(deadline, "reading SetEncodings")? as i32;
                    session.desktop_size |= e == -223;
                }
            }
            3 => {
                let m: [u8; 9] = wire.array(deadline, "reading FramebufferUpdateRequest")?;
                if m[0] == 0 {
                    // Non-incremental: the whole picture now, changed or not.
                    screen.full_update_requested();
                    let (version, picture) = screen.picture().map_err(VncError::Screen)?;
                    session.send_update(&mut wire, screen, version, &picture)?;
                    pending = false;
                } else {
                    pending = true;
                    next_check = Instant::now(); // look right away
                }
            }
            4 => {
                let m: [u8; 7] = wire.array(deadline, "reading KeyEvent")?;
                screen.key(u32::from_be_bytes([m[3], m[4], m[5], m[6]]), m[0] != 0);
            }
            5 => {
                let m: [u8; 5] = wire.array(deadline, "reading PointerEvent")?;
                let (w, h) = screen.size();
                // Clients may report the pointer just outside the screen: clamp it in.
                let x = u16::from_be_bytes([m[1], m[2]]).min(w.saturating_sub(1));
                let y = u16::from_be_bytes([m[3], m[4]]).min(h.saturating_sub(1));
                screen.pointer(x, y, m[0]);
            }
            6 => {
                wire.skip(3, deadline, "reading ClientCutText")?;
                // Length-checked against `MAX_TEXT` before anything is allocated.
                let text = wire.text(deadline, "reading ClientCutText")?;
                screen.cut_text(&text);
            }
            k => {
                return Err(VncError::Protocol(format!("unknown client message type {k}")));
            }
        }
    }
}

/// Version, security and init; returns the minor version agreed (3, 7 or 8).
fn handshake(wire: &mut Wire, screen: &mut dyn RfbScreen, options: &ServerOptions) -> Result<u16, VncError> {
    let deadline = Instant::now() + options.message_timeout;
    wire.send(b"RFB 003.008\n", "sending our version")?;
    let v: [u8; 12] = wire.array(deadline, "reading the client's version")?;
    let minor = match &v {
        b"RFB 003.003\n" | b"RFB 003.005\n" => 3, // 3.5 is 3.3 (RFC 6143 §7.1.1)
        b"RFB 003.007\n" => 7,
        b"RFB 003.008\n" => 8,
        _ => {
            return Err(VncError::Protocol(format!(
                "client version {:?} (3.3, 3.7 or 3.8 expected)",
                String::from_utf8_lossy(&v)
            )));
        }
    };
    let security: u8 = if options.password.is_some() { 2 } else { 1 };
    if minor == 3 {
        wire.send(&u32::from(security).to_be_bytes(), "sending the security type")?;
    } else {
        wire.send(&[1, security], "sending the security types")?;
        let chosen = wire.array::<1>(deadline, "reading the chosen security type")?[0];
        if chosen != security {
            let reason = format!("security type {chosen} was not offered");
            if minor == 8 {
                send_failure(wire, &reason)?;
            }
            return Err(VncError::Protocol(reason));
        }
    }
    if let Some(password) = &options.password {
        let mut challenge = [0u8; 16];
        getrandom::fill(&mut challenge)
            .map_err(|e| VncError::Protocol(format!("no random challenge: {e}")))?;
        wire.send(&challenge, "sending the challenge")?;
        let response: [u8; 16] = wire.array(deadline, "reading the challenge response")?;
        if response != vnc_auth_response(password, &challenge) {
            let reason = "wrong password";
            if minor == 8 {
                send_failure(wire, reason)?;
            } else {
                wire.send(&1u32.to_be_bytes(), "sending the security result")?;
            }
            return Err(VncError::AuthFailed(reason.into()));
        }
        wire.send(&0u32.to_be_bytes(), "sending the security result")?;
    } else if minor == 8 {
        wire.send(&0u32.to_be_bytes(), "sending the security result")?;
    }
    wire.array::<1>(deadline, "reading ClientInit")?; // shared or not: we serve one at a time
    let (w, h) = screen.size();
    let name = screen.name();
    let mut init = Vec::with_capacity(24 + name.len());
    init.extend_from_slice(&w.to_be_bytes());
    init.extend_from_slice(&h.to_be_bytes());
    init.extend_from_slice(&PixelFormat::RGBX.to_bytes());
    init.extend_from_slice(&(name.len() as u32).to_be_bytes());
    init.extend_from_slice(name.as_bytes());
    wire.send(&init, "sending ServerInit")?;
    Ok(minor)
}

fn send_failure(wire: &mut Wire, reason: &str) -> Result<(), VncError> {
    let mut m = 1u32.to_be_bytes().to_vec();
    m.extend_from_slice(&(reason.len() as u32).to_be_bytes());
    m.extend_from_slice(reason.as_bytes());
    wire.send(&m, "sending the security result")
}

/// What this client has been told and asked for.
struct Session {
    format: PixelFormat,
    desktop_size: bool,
    sent_version: Option<u64>,
    sent_size: (u16, u16),
    out: Vec<u8>,
}

impl Session {
    /// Sends `picture` as one Raw rectangle (after a DesktopSize one when the size changed and
    /// the client understands it; otherwise cropped or padded to the size it knows).
    fn send_update(
        &mut self,
        wire: &mut Wire,
        screen: &dyn RfbScreen,
        version: u64,
        picture: &[u8],
    ) -> Result<(), VncError> {
        let (w, h) = screen.size();
        let (uw, uh) = (usize::from(w), usize::from(h));
        if picture.len() != uw * uh * 4 {
            return Err(VncError::Screen(format!(
                "a picture of {} bytes for a {w}x{h} screen",
                picture.len()
            )));
        }
        let resize = (w, h) != self.sent_size && self.desktop_size;
        if resize {
            self.sent_size = (w, h);
        }
        let (sw, sh) = self.sent_size;
        self.out.clear();
        self.out.extend_from_slice(&[0, 0]);
        self.out.extend_from_slice(&(1 + u16::from(resize)).to_be_bytes());
        if resize {
            rect_header(&mut self.out, w, h, -223);
        }
        rect_header(&mut self.out, sw, sh, 0);
        let black = vec![0u8; usize::from(sw) * 4];
        for row in 0..usize::from(sh) {
            let have = usize::from(sw).min(uw);
            if row < uh {
                let start = row * uw * 4;
                self.format.encode(&picture[start..start + have * 4], &mut self.out);
            }
            let missing = if row < uh { usize::from(sw) - have } else { usize::from(sw) };
            self.format.encode(&black[..missing * 4], &mut self.out);
        }
        wire.send(&self.out, "sending a FramebufferUpdate")?;
        self.sent_version = Some(version);
        Ok(())
    }
}

fn rect_header(out: &mut Vec<u8>, w: u16, h: u16, encoding: i32) {
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&w.to_be_bytes());
    out.extend_from_slice(&h.to_be_bytes());
    out.extend_from_slice(&encoding.to_be_bytes());
}

/// A gesture recognised from a VNC pointer stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gesture {
    /// Pressed and released within [`TAP_SLOP_PX`] and [`LONG_PRESS`].
    Tap {
        /// Where it was pressed.
        x: u16,
        /// Where it was pressed.
        y: u16,
    },
    /// Held at least [`LONG_PRESS`] without moving [`TAP_SLOP_PX`].
    LongPress {
        /// Where it was pressed.
        x: u16,
        /// Where it was pressed.
        y: u16,
    },
    /// Moved [`TAP_SLOP_PX`] or more while pressed.
    Swipe {
        /// Where it was pressed.
        from: (u16, u16),
        /// Where it was released.
        to: (u16, u16),
        /// How long it was held, clamped to 50..=3000 ms.
        ms: u64,
    },
    /// A scroll-wheel click (RFB buttons 4 up, 5 down).
    Scroll {
        /// Pointer position.
        x: u16,
        /// Pointer position.
        y: u16,
        /// Wheel down (button 5), i.e. content moves up.
        down: bool,
    },
}

/// Movement (px) that turns a press into a swipe.
pub const TAP_SLOP_PX: f64 = 24.0;
/// Hold time that turns a press into a long press.
pub const LONG_PRESS: Duration = Duration::from_millis(500);

/// Turns button-1 press / motion / release and wheel clicks into [`Gesture`]s. Pure: the
/// caller passes the time of each event.
#[derive(Clone, Debug, Default)]
pub struct GestureTracker {
    buttons: u8,
    press: Option<Press>,
}

#[derive(Clone, Debug)]
struct Press {
    x: u16,
    y: u16,
    at: Instant,
    moved: bool,
}

impl GestureTracker {
    /// A tracker with no button down.
    pub fn new() -> GestureTracker {
        GestureTracker::default()
    }

    /// One pointer event at `now`; the gesture it completes, if any (a button-1 release
    /// completes a tap, long press or swipe; a wheel-button press a scroll).
    pub fn pointer(&mut self, x: u16, y: u16, buttons: u8, now: Instant) -> Option<Gesture> {
        let pressed = buttons & !self.buttons;
        let released = self.buttons & !buttons;
        self.buttons = buttons;
        if let Some(p) = &mut self.press {
            let (dx, dy) = (f64::from(x) - f64::from(p.x), f64::from(y) - f64::from(p.y));
            p.moved |= dx.hypot(dy) >= TAP_SLOP_PX;
        }
        let mut gesture = None;
        if released & 1 != 0
            && let Some(p) = self.press.take()
        {
            let held = now.saturating_duration_since(p.at);
            gesture = Some(if p.moved {
                Gesture::Swipe { from: (p.x, p.y), to: (x, y), ms: (held.as_millis() as u64).clamp(50, 3000) }
            } else if held < LONG_PRESS {
                Gesture::Tap { x: p.x, y: p.y }
            } else {
                Gesture::LongPress { x: p.x, y: p.y }
            });
        }
        if pressed & 1 != 0 {
            self.press = Some(Press { x, y, at: now, moved: false });
        }
        // Wheel clicks arrive as press+release of buttons 4 (mask 8) and 5 (mask 16).
        if gesture.is_none() && pressed & (8 | 16) != 0 {
            gesture = Some(Gesture::Scroll { x, y, down: pressed & 16 != 0 });
        }
        gesture
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gestures_are_recognised() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let mut g = GestureTracker::new();
        assert_eq!(g.pointer(10, 10, 0, ms(0)), None);
        assert_eq!(g.pointer(10, 10, 1, ms(0)), None);
        assert_eq!(g.pointer(20, 15, 1, ms(100)), None); // jitter under 24 px
        assert_eq!(g.pointer(20, 15, 0, ms(200)), Some(Gesture::Tap { x: 10, y: 10 }));

        g.pointer(50, 50, 1, ms(1000));
        assert_eq!(g.pointer(52, 50, 0, ms(1600)), Some(Gesture::LongPress { x: 50, y: 50 }));

        g.pointer(100, 400, 1, ms(2000));
        g.pointer(100, 300, 1, ms(2100));
        assert_eq!(
            g.pointer(100, 100, 0, ms(2300)),
            Some(Gesture::Swipe { from: (100, 400), to: (100, 100), ms: 300 })
        );
        // A fling is at least 50 ms; a slow drag at most 3 s.
        g.pointer(0, 0, 1, ms(3000));
        assert!(matches!(g.pointer(0, 100, 0, ms(3001)), Some(Gesture::Swipe { ms: 50, .. })));
        g.pointer(0, 0, 1, ms(4000));
        assert!(matches!(g.pointer(0, 100, 0, ms(9000)), Some(Gesture::Swipe { ms: 3000, .. })));
        // Moving away and back is still a swipe, not a tap.
        g.pointer(0, 0, 1, ms(10_000));
        g.pointer(0, 50, 1, ms(10_050));
        assert!(matches!(g.pointer(0, 0, 0, ms(10_100)), Some(Gesture::Swipe { .. })));

        // Wheel: press of button 5 scrolls down, its release does nothing.
        assert_eq!(g.pointer(30, 40, 16, ms(11_000)), Some(Gesture::Scroll { x: 30, y: 40, down: true }));
        assert_eq!(g.pointer(30, 40, 0, ms(11_001)), None);
        assert_eq!(g.pointer(30, 40, 8, ms(11_002)), Some(Gesture::Scroll { x: 30, y: 40, down: false }));
        // A release without a press is nothing.
        let mut fresh = GestureTracker::new();
        fresh.buttons = 1;
        assert_eq!(fresh.pointer(1, 1, 0, ms(0)), None);
    }
}
