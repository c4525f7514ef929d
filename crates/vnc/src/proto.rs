//! What both ends share: pixel formats, the framebuffer, keysyms, VNC authentication, and the
//! bounded socket reader.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use des::Des;
use des::cipher::{Array, BlockCipherEncrypt, KeyInit};

use crate::VncError;

/// The largest framebuffer either end accepts (pixels): a peer-declared size above it is an
/// error, never an allocation (64 Mpx is far beyond any phone or desktop we drive).
pub const MAX_PIXELS: usize = 8192 * 8192;
/// The largest desktop name, failure reason or cut text we read (bytes).
pub const MAX_TEXT: usize = 1 << 20;

/// How pixels travel on the wire (RFC 6143 §7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PixelFormat {
    /// Bits per pixel on the wire: 8, 16 or 32.
    pub bits_per_pixel: u8,
    /// Useful bits per pixel.
    pub depth: u8,
    /// Multi-byte pixels are big-endian.
    pub big_endian: bool,
    /// True colour (channels by shift and max) rather than a colour map.
    pub true_colour: bool,
    /// Largest red value (2^bits - 1).
    pub red_max: u16,
    /// Largest green value.
    pub green_max: u16,
    /// Largest blue value.
    pub blue_max: u16,
    /// Bit position of red in the pixel value.
    pub red_shift: u8,
    /// Bit position of green.
    pub green_shift: u8,
    /// Bit position of blue.
    pub blue_shift: u8,
}

impl PixelFormat {
    /// Our native format: 32 bpp, depth 24, little-endian, so the bytes are R, G, B, X.
    pub const RGBX: PixelFormat = PixelFormat {
        bits_per_pixel: 32,
        depth: 24,
        big_endian: false,
        true_colour: true,
        red_max: 255,
        green_max: 255,
        blue_max: 255,
        red_shift: 0,
        green_shift: 8,
        blue_shift: 16,
    };

    /// 16 bpp RGB565 (red in the top five bits), in the given byte order.
    pub fn rgb565(big_endian: bool) -> PixelFormat {
        PixelFormat {
            bits_per_pixel: 16,
            depth: 16,
            big_endian,
            true_colour: true,
            red_max: 31,
            green_max: 63,
            blue_max: 31,
            red_shift: 11,
            green_shift: 5,
            blue_shift: 0,
        }
    }

    /// Reads the 16-byte wire form (3 padding bytes at the end).
    pub fn from_bytes(b: &[u8; 16]) -> PixelFormat {
        PixelFormat {
            bits_per_pixel: b[0],
            depth: b[1],
            big_endian: b[2] != 0,
            true_colour: b[3] != 0,
            red_max: u16::from_be_bytes([b[4], b[5]]),
            green_max: u16::from_be_bytes([b[6], b[7]]),
            blue_max: u16::from_be_bytes([b[8], b[9]]),
            red_shift: b[10],
            green_shift: b[11],
            blue_shift: b[12],
        }
    }

    /// The 16-byte wire form.
    pub fn to_bytes(&self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0] = self.bits_per_pixel;
        b[1] = self.depth;
        b[2] = u8::from(self.big_endian);
        b[3] = u8::from(self.true_colour);
        b[4..6].copy_from_slice(&self.red_max.to_be_bytes());
        b[6..8].copy_from_slice(&self.green_max.to_be_bytes());
        b[8..10].copy_from_slice(&self.blue_max.to_be_bytes());
        b[10] = self.red_shift;
        b[11] = self.green_shift;
        b[12] = self.blue_shift;
        b
    }

    /// Bytes per pixel on the wire.
    pub fn bytes_per_pixel(&self) -> usize {
        usize::from(self.bits_per_pixel / 8)
    }

    /// Ok when we can convert to and from this format: true colour at 8, 16 or 32 bpp.
    pub fn check(&self) -> Result<(), VncError> {
        if !matches!(self.bits_per_pixel, 8 | 16 | 32) {
            return Err(VncError::Protocol(format!(
                "pixel format with {} bits per pixel (8, 16 or 32 expected)",
                self.bits_per_pixel
            )));
        }
        if !self.true_colour {
            return Err(VncError::Protocol(
                "colour-map pixel formats are not supported (true colour only)".into(),
            ));
        }
        Ok(())
    }

    /// Appends RGBA8 pixels (`rgba.len()` a multiple of 4) in this format.
    pub fn encode(&self, rgba: &[u8], out: &mut Vec<u8>) {
        if *self == PixelFormat::RGBX {
            // Fast path: the wire bytes are R, G, B, X already (X, the padding, carries alpha).
            out.extend_from_slice(&rgba[..rgba.len() / 4 * 4]);
            return;
        }
        let scale = |c: u8, max: u16, shift: u8| -> u32 {
            let v = (u32::from(c) * u32::from(max) + 127) / 255;
            v.checked_shl(u32::from(shift)).unwrap_or(0)
        };
        for px in rgba.chunks_exact(4) {
            let v = scale(px[0], self.red_max, self.red_shift)
                | scale(px[1], self.green_max, self.green_shift)
                | scale(px[2], self.blue_max, self.blue_shift);
            match (self.bits_per_pixel, self.big_endian) {
                (8, _) => out.push(v as u8),
                (16, false) => out.extend_from_slice(&(v as u16).to_le_bytes()),
                (16, true) => out.extend_from_slice(&(v as u16).to_be_bytes()),
                (_, false) => out.extend_from_slice(&v.to_le_bytes()),
                (_, true) => out.extend_from_slice(&v.to_be_bytes()),
            }
        }
    }

    /// Converts wire pixels to RGBA8 (alpha 255) into `out` (4 bytes per whole wire pixel).
    pub fn decode(&self, wire: &[u8], out: &mut [u8]) {
        let bpp = self.bytes_per_pixel().max(1);
        if *self == PixelFormat::RGBX {
            for (src, dst) in wire.chunks_exact(4).zip(out.chunks_exact_mut(4)) {
                dst[..3].copy_from_slice(&src[..3]);
                dst[3] = 255;
            }
            return;
        }
        let channel = |v: u32, max: u16, shift: u8| -> u8 {
            if max == 0 {
                return 0;
            }
            // A max of 2^n - 1 is the mask; anything else is clamped (the RFC asks for 2^n - 1).
            let mask = (u32::from(max) + 1).next_power_of_two() - 1;
            let c = (v.checked_shr(u32::from(shift)).unwrap_or(0) & mask).min(u32::from(max));
            ((c * 255 + u32::from(max) / 2) / u32::from(max)) as u8
        };
        for (src, dst) in wire.chunks_exact(bpp).zip(out.chunks_exact_mut(4)) {
            let v = match (src.len(), self.big_endian) {
                (1, _) => u32::from(src[0]),
                (2, false) => u32::from(u16::from_le_bytes([src[0], src[1]])),
                (2, true) => u32::from(u16::from_be_bytes([src[0], src[1]])),
                (_, false) => u32::from_le_bytes([src[0], src[1], src[2], src[3]]),
                (_, true) => u32::from_be_bytes([src[0], src[1], src[2], src[3]]),
            };
            dst[0] = channel(v, self.red_max, self.red_shift);
            dst[1] = channel(v, self.green_max, self.green_shift);
            dst[2] = channel(v, self.blue_max, self.blue_shift);
            dst[3] = 255;
        }
    }
}

/// A screen's pixels: RGBA8, row-major, alpha 255.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Framebuffer {
    /// Width (px).
    pub width: u16,
    /// Height (px).
    pub height: u16,
    /// `width * height * 4` bytes.
    pub rgba: Vec<u8>,
}

impl Framebuffer {
    /// A black framebuffer.
    pub fn new(width: u16, height: u16) -> Framebuffer {
        let mut rgba = vec![0u8; usize::from(width) * usize::from(height) * 4];
        rgba.chunks_exact_mut(4).for_each(|p| p[3] = 255);
        Framebuffer { width, height, rgba }
    }

    /// The RGBA of pixel (x, y), `None` outside.
    pub fn pixel(&self, x: u16, y: u16) -> Option<[u8; 4]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = (usize::from(y) * usize::from(self.width) + usize::from(x)) * 4;
        let p = self.rgba.get(i..i + 4)?;
        Some([p[0], p[1], p[2], p[3]])
    }
}

/// X11 keysyms (what RFB key events carry) for the keys that are not characters.
pub mod keysym {
    #![allow(missing_docs)] // The names are the X11 names.
    pub const BACKSPACE: u32 = 0xff08;
    pub const TAB: u32 = 0xff09;
    pub const RETURN: u32 = 0xff0d;
    pub const ESCAPE: u32 = 0xff1b;
    pub const HOME: u32 = 0xff50;
    pub const LEFT: u32 = 0xff51;
    pub const UP: u32 = 0xff52;
    pub const RIGHT: u32 = 0xff53;
    pub const DOWN: u32 = 0xff54;
    pub const PAGE_UP: u32 = 0xff55;
    pub const PAGE_DOWN: u32 = 0xff56;
    pub const END: u32 = 0xff57;
    pub const INSERT: u32 = 0xff63;
    pub const MENU: u32 = 0xff67;
    pub const KP_ENTER: u32 = 0xff8d;
    pub const F1: u32 = 0xffbe;
    pub const SHIFT_L: u32 = 0xffe1;
    pub const CONTROL_L: u32 = 0xffe3;
    pub const ALT_L: u32 = 0xffe9;
    pub const SUPER_L: u32 = 0xffeb;
    pub const DELETE: u32 = 0xffff;
    pub const SPACE: u32 = 0x0020;
    /// XF86Back: a phone's Back key.
    pub const XF86_BACK: u32 = 0x1008_ff26;
    /// XF86HomePage: a phone's Home key.
    pub const XF86_HOME_PAGE: u32 = 0x1008_ff18;
    pub const XF86_AUDIO_LOWER_VOLUME: u32 = 0x1008_ff11;
    pub const XF86_AUDIO_RAISE_VOLUME: u32 = 0x1008_ff13;
    pub const XF86_POWER_OFF: u32 = 0x1008_ff2a;
}

/// The keysym that types `c`: Latin-1 directly, other code points as `0x0100_0000 + c`;
/// newline, carriage return, tab and backspace as the Return, Tab and BackSpace keys.
pub fn keysym_for_char(c: char) -> u32 {
    match c {
        '\n' | '\r' => keysym::RETURN,
        '\t' => keysym::TAB,
        '\u{8}' => keysym::BACKSPACE,
        ' '..='~' | '\u{a0}'..='\u{ff}' => u32::from(c),
        _ => 0x0100_0000 + u32::from(c),
    }
}

/// The printable character a keysym types, if it types one (Latin-1 or Unicode keysyms).
pub fn char_for_keysym(keysym: u32) -> Option<char> {
    match keysym {
        0x20..=0x7e | 0xa0..=0xff => char::from_u32(keysym),
        0x0100_0000..=0x0110_ffff => char::from_u32(keysym - 0x0100_0000).filter(|c| !c.is_control()),
        _ => None,
    }
}

/// The DES key of VNC authentication: the password's first 8 bytes, zero-padded, each byte's
/// bits reversed (RFB's historic quirk: the reference code fed DES its key LSB-first).
pub fn vnc_des_key(password: &str) -> [u8; 8] {
    let mut key = [0u8; 8];
    for (k, b) in key.iter_mut().zip(password.as_bytes()) {
        *k = b.reverse_bits();
    }
    key
}

/// The 16-byte response to a VNC authentication challenge: both halves DES-encrypted (ECB)
/// under [`vnc_des_key`].
pub fn vnc_auth_response(password: &str, challenge: &[u8; 16]) -> [u8; 16] {
    let cipher = Des::new(&Array::from(vnc_des_key(password)));
    let mut out = *challenge;
    for half in out.chunks_exact_mut(8) {
        let mut block = Array::<u8, _>::default();
        block.copy_from_slice(half);
        cipher.encrypt_block(&mut block);
        half.copy_from_slice(&block);
    }
    out
}

/// A TCP connection with buffered reads, each bounded by a deadline, and whole-message writes.
pub(crate) struct Wire {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl Wire {
    /// Wraps `stream`; writes time out after `write_timeout`.
    pub(crate) fn new(stream: TcpStream, write_timeout: Duration) -> Result<Wire, VncError> {
        let setup = |e| VncError::io("setting up the socket", e);
        stream.set_nodelay(true).map_err(setup)?;
        stream.set_write_timeout(Some(write_timeout.max(Duration::from_millis(1)))).map_err(setup)?;
        let writer = stream.try_clone().map_err(setup)?;
        Ok(Wire { reader: BufReader::with_capacity(1 << 16, stream), writer })
    }

    /// Fills `buf` before `deadline` (each socket read gets only the time left).
    pub(crate) fn read(&mut self, buf: &mut [u8], deadline: Instant, doing: &str) -> Result<(), VncError> {
        let mut filled = 0;
        while filled < buf.len() {
            if self.reader.buffer().is_empty() {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(VncError::Timeout { doing: doing.to_string() });
                }
                self.reader.get_ref().set_read_timeout(Some(left)).map_err(|e| VncError::io(doing, e))?;
            }
            match self.reader.read(&mut buf[filled..]) {
                Ok(0) => {
                    return Err(VncError::io(doing, io::ErrorKind::UnexpectedEof.into()));
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(VncError::io(doing, e)),
            }
        }
        Ok(())
    }

    /// Reads N bytes.
    pub(crate) fn array<const N: usize>(
        &mut self,
        deadline: Instant,
        doing: &str,
    ) -> Result<[u8; N], VncError> {
        let mut b = [0u8; N];
        self.read(&mut b, deadline, doing)?;
        Ok(b)
    }

    /// Reads a big-endian u32.
    pub(crate) fn u32(&mut self, deadline: Instant, doing: &str) -> Result<u32, VncError> {
        Ok(u32::from_be_bytes(self.array(deadline, doing)?))
    }

    /// Reads a u32 length and that many bytes as (lossy) UTF-8 text, at most [`MAX_TEXT`].
    pub(crate) fn text(&mut self, deadline: Instant, doing: &str) -> Result<String, VncError> {
        let len = self.u32(deadline, doing)? as usize;
        if len > MAX_TEXT {
            return Err(VncError::Protocol(format!("{doing}: {len} bytes of text (at most {MAX_TEXT})")));
        }
        let mut b = vec![0u8; len];
        self.read(&mut b, deadline, doing)?;
        Ok(String::from_utf8_lossy(&b).into_owned())
    }

    /// Reads and drops `n` bytes without allocating them.
    pub(crate) fn skip(&mut self, mut n: usize, deadline: Instant, doing: &str) -> Result<(), VncError> {
        let mut chunk = [0u8; 4096];
        while n > 0 {
            let k = n.min(chunk.len());
            self.read(&mut chunk[..k], deadline, doing)?;
            n -= k;
        }
        Ok(())
    }

    /// Whether a byte arrives within `wait` (`Ok(false)` when none did; clean EOF is an error).
    pub(crate) fn poll(&mut self, wait: Duration, doing: &str) -> Result<bool, VncError> {
        if !self.reader.buffer().is_empty() {
            return Ok(true);
        }
        self.reader
            .get_ref()
            .set_read_timeout(Some(wait.max(Duration::from_millis(1))))
            .map_err(|e| VncError::io(doing, e))?;
        match self.reader.fill_buf() {
            Ok([]) => Err(VncError::io(doing, io::ErrorKind::UnexpectedEof.into())),
            Ok(_) => Ok(true),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(VncError::io(doing, e)),
        }
    }

    /// Writes a whole message.
    pub(crate) fn send(&mut self, bytes: &[u8], doing: &str) -> Result<(), VncError> {
        self.writer.write_all(bytes).map_err(|e| VncError::io(doing, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn des_key_bits_are_reversed_and_the_response_matches_openssl() {
        // "secret" → 's' 0x73 = 0b0111_0011 reversed 0b1100_1110 = 0xce, ...
        assert_eq!(vnc_des_key("secret"), [0xce, 0xa6, 0xc6, 0x4e, 0xa6, 0x2e, 0, 0]);
        // Only the first 8 bytes count.
        assert_eq!(vnc_des_key("12345678"), vnc_des_key("123456789"));
        // Computed independently: `openssl enc -des-ecb -nopad -K cea6c64ea62e0000` of bytes 0..16.
        let challenge: [u8; 16] = std::array::from_fn(|i| i as u8);
        assert_eq!(
            vnc_auth_response("secret", &challenge),
            [0xee, 0x22, 0x53, 0x9f, 0x33, 0xa5, 0x98, 0x3e, 0xc1, 0x2f, 0x9c, 0x2e, 0xdb, 0xc9, 0x95, 0xdd]
        );
    }

    #[test]
    fn plain_des_matches_the_fips_vector() {
        // FIPS 81 / the classic "Now is t" vector, key 0123456789abcdef → 3fa40e8a984d4815.
        let cipher = Des::new(&Array::from([0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef]));
        let mut block = Array::from(*b"Now is t");
        cipher.encrypt_block(&mut block);
        assert_eq!(block.as_slice(), [0x3f, 0xa4, 0x0e, 0x8a, 0x98, 0x4d, 0x48, 0x15]);
    }

    #[test]
    fn keysyms_map_both_ways() {
        assert_eq!(keysym_for_char('a'), 0x61);
        assert_eq!(keysym_for_char('é'), 0xe9);
        assert_eq!(keysym_for_char('€'), 0x0100_20ac);
        assert_eq!(keysym_for_char('\n'), keysym::RETURN);
        for c in ['a', 'Z', ' ', '~', 'é', 'ÿ', '€', '中', '😀'] {
            assert_eq!(char_for_keysym(keysym_for_char(c)), Some(c), "{c}");
        }
        assert_eq!(char_for_keysym(keysym::RETURN), None);
        assert_eq!(char_for_keysym(0x0100_0000 + 0x0a), None);
        assert_eq!(char_for_keysym(0x0100_d800), None); // a surrogate is no char
    }

    #[test]
    fn pixel_formats_round_trip() {
        let rgba = [255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 0x33, 0x66, 0x99, 255];
        let mut wire = Vec::new();
        PixelFormat::rgb565(true).encode(&rgba[..4], &mut wire);
        assert_eq!(wire, [0xf8, 0x00]); // red in the top five bits, big-endian
        wire.clear();
        PixelFormat::rgb565(false).encode(&rgba[4..8], &mut wire);
        assert_eq!(wire, [0xe0, 0x07]); // green, little-endian
        let bgr233 = PixelFormat {
            bits_per_pixel: 8,
            depth: 8,
            red_max: 7,
            green_max: 7,
            blue_max: 3,
            red_shift: 0,
            green_shift: 3,
            blue_shift: 6,
            ..PixelFormat::RGBX
        };
        let bgrx_be = PixelFormat {
            big_endian: true,
            red_shift: 8,
            green_shift: 16,
            blue_shift: 24,
            ..PixelFormat::RGBX
        };
        for pf in [PixelFormat::RGBX, PixelFormat::rgb565(true), bgr233, bgrx_be] {
            pf.check().expect("supported");
            assert_eq!(PixelFormat::from_bytes(&pf.to_bytes()), pf);
            let mut wire = Vec::new();
            pf.encode(&rgba, &mut wire);
            assert_eq!(wire.len(), 4 * pf.bytes_per_pixel());
            let mut back = [0u8; 16];
            pf.decode(&wire, &mut back);
            // Pure colours survive any depth; #336699 within the channel's precision.
            assert_eq!(back[..12], rgba[..12], "{pf:?}");
            let tolerance = 255 / i32::from(pf.red_max.min(pf.blue_max)) + 1;
            for i in 12..15 {
                assert!((i32::from(back[i]) - i32::from(rgba[i])).abs() <= tolerance, "{pf:?}");
            }
        }
        let colour_map = PixelFormat { true_colour: false, ..PixelFormat::RGBX };
        assert!(colour_map.check().is_err());
        // Absurd shifts are no panic.
        let odd = PixelFormat { red_shift: 200, ..PixelFormat::rgb565(false) };
        let mut wire = Vec::new();
        odd.encode(&rgba, &mut wire);
        let mut back = [0u8; 16];
        odd.decode(&wire, &mut back);
    }
}
