//! The adb host protocol's framing, shared by our client and the fake server (one definition of
//! the bytes on the wire, so the two cannot drift apart; the real adb client checks both).
//!
//! - A request is 4 hex digits of length, then that many bytes (`000chost:version`).
//! - A status is `OKAY`, or `FAIL` followed by a length-prefixed message.
//! - Shell protocol v2 (`shell,v2:`) frames every chunk: 1 byte stream id, u32 LE length, bytes.
//! - The sync protocol (`sync:`) frames requests and replies as a 4-byte id and a u32 LE value.

use std::io::{self, Read, Write};

/// Longest request or length-prefixed string: the length is 4 hex digits.
pub const MAX_REQUEST: usize = 0xffff;

/// Largest `DATA` chunk of the sync protocol (adb's `SYNC_DATA_MAX`).
pub const SYNC_DATA_MAX: usize = 64 * 1024;

/// Shell protocol v2 stream ids (adb's `shell_protocol.h`).
pub mod packet {
    /// Standard input, client to device.
    pub const STDIN: u8 = 0;
    /// Standard output, device to client.
    pub const STDOUT: u8 = 1;
    /// Standard error, device to client.
    pub const STDERR: u8 = 2;
    /// The exit status (one byte), device to client; the last packet.
    pub const EXIT: u8 = 3;
    /// The client closed its standard input.
    pub const CLOSE_STDIN: u8 = 4;
    /// The client's terminal changed size.
    pub const WINDOW_SIZE_CHANGE: u8 = 5;
}

/// Writes a request: 4 hex digits of length, then the bytes.
pub fn write_request(w: &mut impl Write, payload: &[u8]) -> io::Result<()> {
    if payload.len() > MAX_REQUEST {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("an adb request is at most {MAX_REQUEST} bytes; this one is {}", payload.len()),
        ));
    }
    let mut out = format!("{:04x}", payload.len()).into_bytes();
    out.extend_from_slice(payload);
    w.write_all(&out)
}

/// Reads a length-prefixed string (a request, or the payload of an `OKAY` / `FAIL`).
pub fn read_prefixed(r: &mut impl Read) -> io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    r.read_exact(&mut len)?;
    // Exactly four hex digits (`from_str_radix` alone would also take a sign: `+00c`).
    if !len.iter().all(u8::is_ascii_hexdigit) {
        return Err(invalid(format!("bad length prefix {:?}", String::from_utf8_lossy(&len))));
    }
    let text = std::str::from_utf8(&len).map_err(|_| invalid("the length prefix is not hex"))?;
    let n = usize::from_str_radix(text, 16).map_err(|_| invalid(format!("bad length prefix {text:?}")))?;
    let mut payload = vec![0u8; n];
    r.read_exact(&mut payload)?;
    Ok(payload)
}

/// Writes `OKAY`.
pub fn write_okay(w: &mut impl Write) -> io::Result<()> {
    w.write_all(b"OKAY")
}

/// Writes `OKAY` and a length-prefixed payload (a host query's answer).
pub fn write_okay_with(w: &mut impl Write, payload: &[u8]) -> io::Result<()> {
    let mut out = b"OKAY".to_vec();
    out.extend_from_slice(format!("{:04x}", payload.len().min(MAX_REQUEST)).as_bytes());
    out.extend_from_slice(&payload[..payload.len().min(MAX_REQUEST)]);
    w.write_all(&out)
}

/// Writes `FAIL` and the message.
pub fn write_fail(w: &mut impl Write, message: &str) -> io::Result<()> {
    let message = &message.as_bytes()[..message.len().min(MAX_REQUEST)];
    let mut out = b"FAIL".to_vec();
    out.extend_from_slice(format!("{:04x}", message.len()).as_bytes());
    out.extend_from_slice(message);
    w.write_all(&out)
}

/// A status the server sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// `OKAY`.
    Okay,
    /// `FAIL` and why.
    Fail(String),
}

/// Reads `OKAY` or `FAIL` + message.
pub fn read_status(r: &mut impl Read) -> io::Result<Status> {
    let mut id = [0u8; 4];
    r.read_exact(&mut id)?;
    match &id {
        b"OKAY" => Ok(Status::Okay),
        b"FAIL" => {
            let message = read_prefixed(r)?;
            Ok(Status::Fail(String::from_utf8_lossy(&message).into_owned()))
        }
        other => Err(invalid(format!("expected OKAY or FAIL, got {:?}", String::from_utf8_lossy(other)))),
    }
}

/// Writes one shell protocol v2 packet.
pub fn write_packet(w: &mut impl Write, id: u8, data: &[u8]) -> io::Result<()> {
    let len = u32::try_from(data.len()).map_err(|_| invalid("a shell packet is at most 4 GiB"))?;
    let mut out = Vec::with_capacity(5 + data.len());
    out.push(id);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(data);
    w.write_all(&out)
}

/// Reads one shell protocol v2 packet, refusing one longer than `max` bytes; `None` at a clean
/// end of the stream.
pub fn read_packet(r: &mut impl Read, max: usize) -> io::Result<Option<(u8, Vec<u8>)>> {
    let mut header = [0u8; 5];
    match r.read(&mut header[..1])? {
        0 => return Ok(None),
        _ => r.read_exact(&mut header[1..])?,
    }
    let len = u32::from_le_bytes([header[1], header[2], header[3], header[4]]) as usize;
    if len > max {
        return Err(invalid(format!("a shell packet of {len} bytes is over the {max}-byte limit")));
    }
    let mut data = vec![0u8; len];
    r.read_exact(&mut data)?;
    Ok(Some((header[0], data)))
}

/// Writes a sync message: a 4-byte id and a u32 LE value (a length, or for `STAT` the mode).
pub fn write_sync(w: &mut impl Write, id: &[u8; 4], value: u32, data: &[u8]) -> io::Result<()> {
    let mut out = Vec::with_capacity(8 + data.len());
    out.extend_from_slice(id);
    out.extend_from_slice(&value.to_le_bytes());
    out.extend_from_slice(data);
    w.write_all(&out)
}

/// Reads a sync message header: the id and the u32 LE value.
pub fn read_sync_header(r: &mut impl Read) -> io::Result<([u8; 4], u32)> {
    let mut header = [0u8; 8];
    r.read_exact(&mut header)?;
    let id = [header[0], header[1], header[2], header[3]];
    Ok((id, u32::from_le_bytes([header[4], header[5], header[6], header[7]])))
}

/// Reads a u32 LE.
pub fn read_u32(r: &mut impl Read) -> io::Result<u32> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_le_bytes(b))
}

fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn requests_round_trip_and_refuse_oversize() {
        let mut buf = Vec::new();
        write_request(&mut buf, b"host:version").unwrap();
        assert_eq!(buf, b"000chost:version");
        assert_eq!(read_prefixed(&mut &buf[..]).unwrap(), b"host:version");
        assert!(write_request(&mut Vec::new(), &vec![b'a'; MAX_REQUEST + 1]).is_err());
        assert!(read_prefixed(&mut &b"00zzabc"[..]).is_err());
        assert!(read_prefixed(&mut &b"+00c host:version"[..]).is_err());
    }

    #[test]
    fn statuses_and_packets() {
        let mut buf = Vec::new();
        write_fail(&mut buf, "device 'x' not found").unwrap();
        assert_eq!(read_status(&mut &buf[..]).unwrap(), Status::Fail("device 'x' not found".into()));
        assert!(read_status(&mut &b"NOPE"[..]).is_err());
        let mut buf = Vec::new();
        write_packet(&mut buf, packet::STDOUT, b"hi").unwrap();
        assert_eq!(buf, [1, 2, 0, 0, 0, b'h', b'i']);
        assert_eq!(read_packet(&mut &buf[..], 10).unwrap(), Some((1, b"hi".to_vec())));
        assert!(read_packet(&mut &buf[..], 1).is_err());
        assert_eq!(read_packet(&mut &b""[..], 10).unwrap(), None);
    }
}
