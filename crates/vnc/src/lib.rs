//! A small blocking RFB 3.8 (RFC 6143) client and server: the screen and input of pixels-only
//! devices (`--device vnc:HOST:PORT`), and the simulated phone served to any VNC client.
//!
//! Why our own rather than a crate: on crates.io (checked 2026-11) the one maintained client is
//! `vnc-rs` (0.5), async-only on tokio, so a blocking `Device` would have to carry a runtime;
//! `rfbclient`/`rfbproto`/`rfbserver` are 0.1.0 placeholders of a few hundred bytes; `libvnc`
//! binds the C libvncserver (a C build, its docs build fails); `rfb` (Oxide) and
//! `rustvncserver` are servers only. We need both ends, blocking, with every read bounded by a
//! timeout and every peer-declared length by a cap, and only the uncompressed subset (Raw,
//! CopyRect, DesktopSize, None and VNC authentication) is needed for a phone-sized screen on a
//! local link: that is a few hundred lines over `std::net::TcpStream`, plus the RustCrypto `des`
//! crate for VNC authentication.
//!
//! - [`proto`]: pixel formats, the framebuffer, keysyms, the DES challenge-response.
//! - [`client`]: [`VncClient`] (connect, capture, pointer and key input, gestures).
//! - [`server`]: [`RfbScreen`], [`serve_connection`], [`serve`], and [`GestureTracker`], which
//!   turns a VNC pointer stream back into taps, long presses, swipes and scrolls.

pub mod client;
mod error;
pub mod proto;
pub mod server;

pub use client::VncClient;
pub use error::VncError;
pub use proto::{Framebuffer, PixelFormat, char_for_keysym, keysym, keysym_for_char};
pub use server::{Gesture, GestureTracker, RfbScreen, ServerOptions, serve, serve_connection, serve_with};
