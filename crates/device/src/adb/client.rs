//! A client of the adb server's host protocol: what `adb devices`, `adb shell`, `adb exec-out`
//! and `adb pull` send, and nothing else.
//!
//! Why our own instead of the `adb_client` crate (3.2): it brings 117 crates (image decoding,
//! RSA and certificate generation, rustls, USB) for direct-to-device transports we do not use;
//! the host protocol we need is a few hundred lines, and the fake server needs the same framing
//! anyway (`wire.rs` serves both). Measured build of `adb_client` alone on this machine: see
//! `docs/devices.md`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use super::wire::{self, Status, packet};

/// The adb server's default address.
pub const DEFAULT_SERVER: &str = "127.0.0.1:5037";

/// The most a command's output, a pulled file or a screenshot may be.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024 * 1024;

/// What went wrong talking to the adb server or the device behind it. Always an infrastructure
/// failure: nothing an agent does produces one.
#[derive(Debug, thiserror::Error)]
pub enum AdbError {
    /// The server cannot be reached.
    #[error("cannot reach the adb server at {addr}: {source} (is it running? `adb start-server`)")]
    Connect {
        /// Where we looked.
        addr: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The connection failed or timed out mid-way.
    #[error("adb server at {addr}: {context}: {source}")]
    Io {
        /// The server.
        addr: String,
        /// What we were doing.
        context: String,
        /// The error.
        source: std::io::Error,
    },
    /// The server refused (`FAIL`): its message (`device 'x' not found`).
    #[error("adb: {0}")]
    Refused(String),
    /// The server or device sent something the protocol does not allow.
    #[error("adb protocol: {0}")]
    Protocol(String),
    /// The address is not one.
    #[error("bad adb server address `{0}` (expected HOST:PORT or tcp:HOST:PORT)")]
    Address(String),
}

/// One line of `adb devices`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceEntry {
    /// The serial (`emulator-5554`, `R58M…`, `192.168.1.5:5555`).
    pub serial: String,
    /// `device`, `offline`, `unauthorized`, …
    pub state: String,
}

/// What a shell command printed and how it exited.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShellResult {
    /// Standard output.
    pub stdout: Vec<u8>,
    /// Standard error (empty without shell protocol v2, where it is mixed into stdout).
    pub stderr: Vec<u8>,
    /// The exit status; `None` without shell protocol v2 (old devices do not report it).
    pub exit: Option<u8>,
}

impl ShellResult {
    /// Standard output as text (lossy).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Whether the command is known to have failed.
    pub fn failed(&self) -> bool {
        self.exit.is_some_and(|e| e != 0)
    }
}

/// The adb server (by address), with the timeout every socket read gets and the longest one
/// command may take in all.
#[derive(Debug, Clone)]
pub struct AdbServer {
    addr: String,
    timeout: Duration,
    deadline: Duration,
}

/// The longest one command (its whole output) may take: a device that trickles output forever
/// is a failed device.
pub const COMMAND_DEADLINE: Duration = Duration::from_secs(120);

impl AdbServer {
    /// The server at `addr` (`HOST:PORT`, or adb's own `tcp:HOST:PORT`).
    pub fn new(addr: &str) -> Result<AdbServer, AdbError> {
        let addr = addr.strip_prefix("tcp:").unwrap_or(addr).to_string();
        if addr.rsplit_once(':').is_none_or(|(host, port)| host.is_empty() || port.parse::<u16>().is_err()) {
            return Err(AdbError::Address(addr));
        }
        Ok(AdbServer { addr, timeout: Duration::from_secs(60), deadline: COMMAND_DEADLINE })
    }

    /// The server the real adb client would use: `$ADB_SERVER_SOCKET` (`tcp:HOST:PORT`), else
    /// `127.0.0.1:$ANDROID_ADB_SERVER_PORT`, else `127.0.0.1:5037`.
    pub fn from_env() -> Result<AdbServer, AdbError> {
        let named = |var: &str, e: AdbError| AdbError::Address(format!("{e} (from ${var})"));
        if let Ok(socket) = std::env::var("ADB_SERVER_SOCKET")
            && !socket.is_empty()
        {
            return AdbServer::new(&socket).map_err(|e| named("ADB_SERVER_SOCKET", e));
        }
        if let Ok(port) = std::env::var("ANDROID_ADB_SERVER_PORT")
            && !port.is_empty()
        {
            return AdbServer::new(&format!("127.0.0.1:{port}"))
                .map_err(|e| named("ANDROID_ADB_SERVER_PORT", e));
        }
        AdbServer::new(DEFAULT_SERVER)
    }

    /// Sets the timeout of each socket read and write (a command that prints nothing for this
    /// long is a hung device).
    pub fn with_timeout(mut self, timeout: Duration) -> AdbServer {
        self.timeout = timeout;
        self
    }

    /// The server's address.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    fn io(&self, context: &str) -> impl Fn(std::io::Error) -> AdbError + '_ {
        let context = context.to_string();
        move |source| {
            // A read that timed out says "resource temporarily unavailable": say what it means.
            let source = match source.kind() {
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no answer within {} s", self.timeout.as_secs()),
                ),
                _ => source,
            };
            AdbError::Io { addr: self.addr.clone(), context: context.clone(), source }
        }
    }

    /// An error when a command has run past its deadline.
    fn past(&self, started: Instant, what: &str) -> Result<(), AdbError> {
        if started.elapsed() > self.deadline {
            return Err(AdbError::Protocol(format!(
                "`{}` did not finish within {} s",
                short(what),
                self.deadline.as_secs()
            )));
        }
        Ok(())
    }

    fn connect(&self) -> Result<TcpStream, AdbError> {
        let connect_err = |source| AdbError::Connect { addr: self.addr.clone(), source };
        let addrs: Vec<SocketAddr> = self.addr.to_socket_addrs().map_err(connect_err)?.collect();
        let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "the name resolves to no address");
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, self.timeout.min(Duration::from_secs(10))) {
                Ok(stream) => {
                    stream.set_read_timeout(Some(self.timeout)).map_err(self.io("setting a timeout"))?;
                    stream.set_write_timeout(Some(self.timeout)).map_err(self.io("setting a timeout"))?;
                    let _ = stream.set_nodelay(true);
                    return Ok(stream);
                }
                Err(e) => last = e,
            }
        }
        Err(AdbError::Connect { addr: self.addr.clone(), source: last })
    }

    /// Sends one request and reads its status.
    fn request(&self, stream: &mut TcpStream, request: &str) -> Result<(), AdbError> {
        wire::write_request(stream, request.as_bytes()).map_err(self.io(&format!("sending `{request}`")))?;
        match wire::read_status(stream).map_err(self.io(&format!("reading the reply to `{request}`")))? {
            Status::Okay => Ok(()),
            Status::Fail(message) => Err(AdbError::Refused(message)),
        }
    }

    /// A host query: one request, one length-prefixed answer.
    fn query(&self, request: &str) -> Result<String, AdbError> {
        let mut stream = self.connect()?;
        self.request(&mut stream, request)?;
        let answer = wire::read_prefixed(&mut stream).map_err(self.io(&format!("reading `{request}`")))?;
        Ok(String::from_utf8_lossy(&answer).into_owned())
    }

    /// The server's protocol version (`host:version`; 41 for every adb since 2018).
    pub fn version(&self) -> Result<u32, AdbError> {
        let text = self.query("host:version")?;
        u32::from_str_radix(text.trim(), 16)
            .map_err(|_| AdbError::Protocol(format!("host:version answered {text:?}, not a hex number")))
    }

    /// The devices the server knows (`host:devices`).
    pub fn devices(&self) -> Result<Vec<DeviceEntry>, AdbError> {
        let text = self.query("host:devices")?;
        Ok(text
            .lines()
            .filter_map(|line| {
                let (serial, state) = line.split_once('\t')?;
                Some(DeviceEntry { serial: serial.to_string(), state: state.trim().to_string() })
            })
            .collect())
    }

    /// The device's features (`host-serial:SERIAL:features`): `shell_v2`, `cmd`, …
    pub fn features(&self, serial: &str) -> Result<Vec<String>, AdbError> {
        let text = self.query(&format!("host-serial:{serial}:features"))?;
        Ok(text.split(',').map(|f| f.trim().to_string()).filter(|f| !f.is_empty()).collect())
    }

    /// A connection switched to `serial` with `service` opened on it.
    fn open(&self, serial: &str, service: &str) -> Result<TcpStream, AdbError> {
        let mut stream = self.connect()?;
        self.request(&mut stream, &format!("host:transport:{serial}"))?;
        self.request(&mut stream, service)?;
        Ok(stream)
    }

    /// Runs `command` through the device's shell. With `v2` (the device has `shell_v2`), the
    /// shell protocol separates stdout and stderr and reports the exit status; without it the
    /// output is the raw stream.
    pub fn shell(&self, serial: &str, command: &str, v2: bool) -> Result<ShellResult, AdbError> {
        if !v2 {
            let stdout = self.exec_service(serial, &format!("shell:{command}"))?;
            return Ok(ShellResult { stdout, stderr: Vec::new(), exit: None });
        }
        let started = Instant::now();
        let mut stream = self.open(serial, &format!("shell,v2,raw:{command}"))?;
        // We send no input: say so at once, as `adb shell cmd < /dev/null` does.
        wire::write_packet(&mut stream, packet::CLOSE_STDIN, &[]).map_err(self.io("closing stdin"))?;
        let mut result = ShellResult::default();
        let mut other = 0usize;
        loop {
            self.past(started, command)?;
            let packet = wire::read_packet(&mut stream, MAX_OUTPUT_BYTES)
                .map_err(self.io(&format!("reading the output of `{}`", short(command))))?;
            let Some((id, data)) = packet else {
                return Err(AdbError::Protocol(format!(
                    "the device closed the shell of `{}` without an exit status",
                    short(command)
                )));
            };
            match id {
                packet::STDOUT => result.stdout.extend_from_slice(&data),
                packet::STDERR => result.stderr.extend_from_slice(&data),
                packet::EXIT => {
                    result.exit = Some(data.first().copied().unwrap_or(0));
                    return Ok(result);
                }
                // Packets of no stream we know still count against the limit.
                _ => other += data.len(),
            }
            if result.stdout.len() + result.stderr.len() + other > MAX_OUTPUT_BYTES {
                return Err(AdbError::Protocol(format!(
                    "`{}` printed more than {MAX_OUTPUT_BYTES} bytes",
                    short(command)
                )));
            }
        }
    }

    /// Runs `command` with `exec:` (`adb exec-out`): raw bytes, no terminal, nothing added.
    pub fn exec(&self, serial: &str, command: &str) -> Result<Vec<u8>, AdbError> {
        self.exec_service(serial, &format!("exec:{command}"))
    }

    fn exec_service(&self, serial: &str, service: &str) -> Result<Vec<u8>, AdbError> {
        let started = Instant::now();
        let mut stream = self.open(serial, service)?;
        let mut out = Vec::new();
        let mut chunk = vec![0u8; 64 * 1024];
        loop {
            self.past(started, service)?;
            let n = stream
                .read(&mut chunk)
                .map_err(self.io(&format!("reading the output of `{}`", short(service))))?;
            if n == 0 {
                return Ok(out);
            }
            out.extend_from_slice(&chunk[..n]);
            if out.len() > MAX_OUTPUT_BYTES {
                return Err(AdbError::Protocol(format!(
                    "`{}` printed more than {MAX_OUTPUT_BYTES} bytes",
                    short(service)
                )));
            }
        }
    }

    /// A file's bytes (`adb pull`, the sync protocol's `STAT` then `RECV`).
    pub fn pull(&self, serial: &str, path: &str) -> Result<Vec<u8>, AdbError> {
        let started = Instant::now();
        let mut stream = self.open(serial, "sync:")?;
        let context = format!("pulling {path}");
        wire::write_sync(&mut stream, b"STAT", path.len() as u32, path.as_bytes())
            .map_err(self.io(&context))?;
        let (id, mode) = wire::read_sync_header(&mut stream).map_err(self.io(&context))?;
        let size = wire::read_u32(&mut stream).map_err(self.io(&context))?;
        let _mtime = wire::read_u32(&mut stream).map_err(self.io(&context))?;
        if &id != b"STAT" {
            return Err(AdbError::Protocol(format!(
                "STAT of {path} answered {:?}",
                String::from_utf8_lossy(&id)
            )));
        }
        if mode == 0 {
            return Err(AdbError::Refused(format!("remote object '{path}' does not exist")));
        }
        if size as usize > MAX_OUTPUT_BYTES {
            return Err(AdbError::Protocol(format!("{path} is {size} bytes, over {MAX_OUTPUT_BYTES}")));
        }
        wire::write_sync(&mut stream, b"RECV", path.len() as u32, path.as_bytes())
            .map_err(self.io(&context))?;
        let mut out = Vec::new();
        loop {
            self.past(started, &context)?;
            let (id, len) = wire::read_sync_header(&mut stream).map_err(self.io(&context))?;
            let len = len as usize;
            match &id {
                b"DATA" if len <= wire::SYNC_DATA_MAX => {
                    let start = out.len();
                    out.resize(start + len, 0);
                    stream.read_exact(&mut out[start..]).map_err(self.io(&context))?;
                    if out.len() > MAX_OUTPUT_BYTES {
                        return Err(AdbError::Protocol(format!("{path} is over {MAX_OUTPUT_BYTES} bytes")));
                    }
                }
                b"DONE" => break,
                b"FAIL" if len <= wire::MAX_REQUEST => {
                    let mut message = vec![0u8; len];
                    stream.read_exact(&mut message).map_err(self.io(&context))?;
                    return Err(AdbError::Refused(format!(
                        "pulling {path}: {}",
                        String::from_utf8_lossy(&message)
                    )));
                }
                other => {
                    return Err(AdbError::Protocol(format!(
                        "pulling {path}: unexpected {:?} ({len} bytes)",
                        String::from_utf8_lossy(other)
                    )));
                }
            }
        }
        let _ = wire::write_sync(&mut stream, b"QUIT", 0, &[]);
        let _ = stream.flush();
        Ok(out)
    }
}

/// A command shortened for messages.
fn short(command: &str) -> String {
    let mut s: String = command.chars().take(80).collect();
    if s.len() < command.len() {
        s.push('…');
    }
    s
}
