//! The fake adb server's network side: the host protocol (as the adb server speaks it to its
//! clients) in front of one [`FakeDevice`].
//!
//! Host services: `host:version` (41, what every adb since 2018 expects: a client kills a server
//! whose version differs), `host:devices`, `host:devices-l`, `…:features`, `…:get-state`,
//! `…:get-serialno`, `host:kill` (answered, ignored), transports (`host:transport:SERIAL`,
//! `-any`, `-local`, `-id:1`, and `host:tport:…`, which also answers the transport id). Device
//! services: `shell:`, `shell,v2,…:` (shell protocol v2: stdout, stderr and the exit status),
//! `exec:`, and `sync:` with `STAT`, `RECV`, `LIST` (empty) and `QUIT`.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::device::{FakeDevice, ShellOutput};
use crate::adb::wire::{self, packet};

/// The protocol version the fake answers to `host:version`.
pub const ADB_SERVER_VERSION: u32 = 41;

/// The features the fake device reports: shell protocol v2 and `cmd`. Not `stat_v2`, so clients
/// stat with the classic `STAT`.
pub const FEATURES: &str = "shell_v2,cmd";

/// The transport id of the one device.
const TRANSPORT_ID: u64 = 1;

/// Connections served at once; more wait in the listen queue.
const MAX_CONNECTIONS: usize = 64;

/// A connection silent this long is dropped.
const IDLE: Duration = Duration::from_secs(300);

/// A new connection must send its first request within this.
const FIRST_REQUEST: Duration = Duration::from_secs(10);

/// A running fake adb server.
pub struct FakeAdbServer {
    addr: SocketAddr,
    device: Arc<Mutex<FakeDevice>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeAdbServer {
    /// Binds `listen` (`127.0.0.1:0` picks a free port) and serves `device` on a thread.
    pub fn start(listen: &str, device: FakeDevice) -> io::Result<FakeAdbServer> {
        let listener = TcpListener::bind(listen)?;
        let addr = listener.local_addr()?;
        let device = Arc::new(Mutex::new(device));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (device, stop) = (device.clone(), stop.clone());
            std::thread::Builder::new()
                .name("fake-adb".into())
                .spawn(move || accept_loop(listener, device, stop))?
        };
        Ok(FakeAdbServer { addr, device, stop, thread: Some(thread) })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The device behind it (tests read the phone and the commands run).
    pub fn device(&self) -> &Arc<Mutex<FakeDevice>> {
        &self.device
    }

    /// Serves until the process ends.
    pub fn wait(mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for FakeAdbServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn accept_loop(listener: TcpListener, device: Arc<Mutex<FakeDevice>>, stop: Arc<AtomicBool>) {
    let live = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(stream) = stream else { continue };
        while live.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            std::thread::sleep(Duration::from_millis(5));
        }
        live.fetch_add(1, Ordering::SeqCst);
        let (device, counter) = (device.clone(), live.clone());
        let spawned = std::thread::Builder::new().name("fake-adb-conn".into()).spawn(move || {
            let _ = serve_connection(stream, &device);
            counter.fetch_sub(1, Ordering::SeqCst);
        });
        if spawned.is_err() {
            // The thread could not start: the connection was dropped with it.
            live.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// What a host request asks for.
#[derive(Debug, PartialEq, Eq)]
enum Host {
    /// Answer `OKAY` + this text, then close.
    Answer(String),
    /// Answer `OKAY` and close.
    Okay,
    /// Switch the connection to the device; `tport` also sends the transport id.
    Transport { tport: bool },
    /// Answer `FAIL` + message.
    Fail(String),
}

fn host_request(request: &str, serial: &str) -> Host {
    let not_found = |s: &str| Host::Fail(format!("device '{s}' not found"));
    // `host-serial:SERIAL:CMD`, `host-transport-id:N:CMD`, `host-local:CMD`, `host:CMD`.
    let (target, command) = if let Some(rest) = request.strip_prefix("host-serial:") {
        match rest.rsplit_once(':') {
            Some((s, command)) if s == serial => (Some(()), command),
            Some((s, _)) => return not_found(s),
            None => return Host::Fail(format!("bad request `{request}`")),
        }
    } else if let Some(rest) = request.strip_prefix("host-transport-id:") {
        match rest.split_once(':') {
            Some((id, command)) if id == TRANSPORT_ID.to_string() => (Some(()), command),
            Some((id, _)) => return Host::Fail(format!("no device with transport id '{id}'")),
            None => return Host::Fail(format!("bad request `{request}`")),
        }
    } else if let Some(command) = request.strip_prefix("host-local:") {
        (Some(()), command)
    } else if let Some(command) = request.strip_prefix("host-usb:") {
        let _ = command;
        return Host::Fail("no devices found".into());
    } else if let Some(command) = request.strip_prefix("host:") {
        (None, command)
    } else {
        return Host::Fail("no device selected: switch to a transport first (host:transport:SERIAL)".into());
    };
    let _ = target;
    match command {
        "version" => Host::Answer(format!("{ADB_SERVER_VERSION:04x}")),
        "devices" => Host::Answer(format!("{serial}\tdevice\n")),
        "devices-l" => Host::Answer(format!(
            "{serial:<22} device product:phonebench model:phonebench device:phonebench transport_id:{TRANSPORT_ID}\n"
        )),
        "features" | "host-features" => Host::Answer(FEATURES.into()),
        "get-state" => Host::Answer("device".into()),
        "get-serialno" => Host::Answer(serial.into()),
        "get-devpath" => Host::Answer("unknown".into()),
        "kill" => Host::Okay,
        "transport-any" | "transport-local" => Host::Transport { tport: false },
        "transport-usb" => Host::Fail("no devices found".into()),
        "tport:any" | "tport:local" => Host::Transport { tport: true },
        "tport:usb" => Host::Fail("no devices found".into()),
        other => {
            if let Some(s) = other.strip_prefix("transport:") {
                if s == serial { Host::Transport { tport: false } } else { not_found(s) }
            } else if let Some(s) = other.strip_prefix("tport:serial:") {
                if s == serial { Host::Transport { tport: true } } else { not_found(s) }
            } else if let Some(id) = other.strip_prefix("transport-id:") {
                if id == TRANSPORT_ID.to_string() {
                    Host::Transport { tport: false }
                } else {
                    Host::Fail(format!("no device with transport id '{id}'"))
                }
            } else {
                Host::Fail(format!("unsupported host service `{other}` (phonebench fake-adb)"))
            }
        }
    }
}

fn serve_connection(mut stream: TcpStream, device: &Mutex<FakeDevice>) -> io::Result<()> {
    // A client says what it wants at once; one that sits on a connection without asking is
    // dropped soon, so idle connections cannot use up the slots.
    stream.set_read_timeout(Some(FIRST_REQUEST))?;
    stream.set_write_timeout(Some(IDLE))?;
    let _ = stream.set_nodelay(true);
    let serial = lock(device)?.serial().to_string();
    let request = match wire::read_prefixed(&mut stream) {
        Ok(r) => String::from_utf8_lossy(&r).into_owned(),
        // The client closed, or sent garbage: nothing to answer.
        Err(_) => return Ok(()),
    };
    stream.set_read_timeout(Some(IDLE))?;
    match host_request(&request, &serial) {
        Host::Answer(text) => {
            wire::write_okay_with(&mut stream, text.as_bytes())?;
            finish(stream)
        }
        Host::Okay => {
            wire::write_okay(&mut stream)?;
            finish(stream)
        }
        Host::Fail(message) if request.starts_with("host") => {
            wire::write_fail(&mut stream, &message)?;
            finish(stream)
        }
        Host::Fail(_) => device_service(stream, &request, device, false),
        Host::Transport { tport } => {
            wire::write_okay(&mut stream)?;
            if tport {
                stream.write_all(&TRANSPORT_ID.to_le_bytes())?;
            }
            // The connection now belongs to the device: its one service request follows.
            let request = match wire::read_prefixed(&mut stream) {
                Ok(r) => String::from_utf8_lossy(&r).into_owned(),
                Err(_) => return Ok(()),
            };
            device_service(stream, &request, device, true)
        }
    }
}

fn device_service(
    mut stream: TcpStream,
    request: &str,
    device: &Mutex<FakeDevice>,
    bound: bool,
) -> io::Result<()> {
    if !bound {
        wire::write_fail(
            &mut stream,
            "no device selected: switch to a transport first (host:transport:SERIAL)",
        )?;
        return finish(stream);
    }
    if request == "sync:" {
        wire::write_okay(&mut stream)?;
        return sync(stream, device);
    }
    let (service, command) = request.split_once(':').unwrap_or((request, ""));
    let mut args = service.split(',');
    let name = args.next().unwrap_or_default();
    let v2 = match name {
        "shell" => args.any(|a| a == "v2"),
        "exec" => false,
        _ => {
            wire::write_fail(&mut stream, &format!("unsupported service `{name}` (phonebench fake-adb)"))?;
            return finish(stream);
        }
    };
    if command.is_empty() {
        wire::write_fail(
            &mut stream,
            "an interactive shell is not supported by phonebench fake-adb: give a command",
        )?;
        return finish(stream);
    }
    wire::write_okay(&mut stream)?;
    let output = lock(device)?.shell(command);
    if v2 {
        write_chunks(&mut stream, packet::STDOUT, &output.stdout)?;
        write_chunks(&mut stream, packet::STDERR, &output.stderr)?;
        wire::write_packet(&mut stream, packet::EXIT, &[output.exit])?;
    } else {
        // Without the shell protocol a device's stdout and stderr arrive as one stream.
        let ShellOutput { stdout, stderr, .. } = output;
        stream.write_all(&stdout)?;
        stream.write_all(&stderr)?;
    }
    finish(stream)
}

fn write_chunks(stream: &mut TcpStream, id: u8, data: &[u8]) -> io::Result<()> {
    for chunk in data.chunks(wire::SYNC_DATA_MAX) {
        wire::write_packet(stream, id, chunk)?;
    }
    Ok(())
}

fn sync(mut stream: TcpStream, device: &Mutex<FakeDevice>) -> io::Result<()> {
    loop {
        let (id, len) = match wire::read_sync_header(&mut stream) {
            Ok(h) => h,
            Err(_) => return Ok(()),
        };
        if &id == b"QUIT" {
            return finish(stream);
        }
        if len as usize > 1024 {
            return fail_sync(stream, "path too long");
        }
        let mut path = vec![0u8; len as usize];
        stream.read_exact(&mut path)?;
        let path = String::from_utf8_lossy(&path).into_owned();
        match &id {
            b"STAT" => {
                let stat = lock(device)?.stat(&path);
                let (mode, size, mtime) = stat.map_or((0, 0, 0), |s| (s.mode, s.size, s.mtime));
                let mut reply = b"STAT".to_vec();
                for v in [mode, size, mtime] {
                    reply.extend_from_slice(&v.to_le_bytes());
                }
                stream.write_all(&reply)?;
            }
            // Read under the lock, sent after it: a client that never reads holds no one up.
            b"RECV" => match read_file(device, &path)? {
                Ok(bytes) => {
                    for chunk in bytes.chunks(wire::SYNC_DATA_MAX) {
                        wire::write_sync(&mut stream, b"DATA", chunk.len() as u32, chunk)?;
                    }
                    wire::write_sync(&mut stream, b"DONE", 0, &[])?;
                }
                Err(message) => return fail_sync(stream, &message),
            },
            b"LIST" => {
                // Listing folders is not offered; an empty listing is an honest "nothing here".
                let mut done = b"DONE".to_vec();
                done.extend_from_slice(&[0u8; 16]);
                stream.write_all(&done)?;
            }
            other => {
                let what = String::from_utf8_lossy(other).into_owned();
                return fail_sync(stream, &format!("sync `{what}` is not supported by phonebench fake-adb"));
            }
        }
    }
}

fn read_file(device: &Mutex<FakeDevice>, path: &str) -> io::Result<Result<Vec<u8>, String>> {
    Ok(lock(device)?.read_file(path))
}

fn fail_sync(mut stream: TcpStream, message: &str) -> io::Result<()> {
    wire::write_sync(&mut stream, b"FAIL", message.len() as u32, message.as_bytes())?;
    finish(stream)
}

/// Ends a connection gracefully: stop writing, then read what the client still sends until it
/// closes (closing with unread input would reset the connection and could lose our last bytes).
fn finish(mut stream: TcpStream) -> io::Result<()> {
    stream.flush()?;
    let _ = stream.shutdown(Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut sink = [0u8; 4096];
    let mut total = 0usize;
    while let Ok(n) = stream.read(&mut sink) {
        total += n;
        if n == 0 || total > 16 * 1024 * 1024 {
            break;
        }
    }
    Ok(())
}

fn lock(device: &Mutex<FakeDevice>) -> io::Result<std::sync::MutexGuard<'_, FakeDevice>> {
    device.lock().map_err(|_| io::Error::other("the fake device's lock is poisoned"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_requests() {
        let s = "emulator-5554";
        assert_eq!(host_request("host:version", s), Host::Answer("0029".into()));
        assert_eq!(host_request("host:devices", s), Host::Answer("emulator-5554\tdevice\n".into()));
        assert_eq!(host_request("host-serial:emulator-5554:features", s), Host::Answer(FEATURES.into()));
        assert_eq!(host_request("host:transport:emulator-5554", s), Host::Transport { tport: false });
        assert_eq!(host_request("host:tport:serial:emulator-5554", s), Host::Transport { tport: true });
        assert_eq!(host_request("host:tport:any", s), Host::Transport { tport: true });
        assert_eq!(host_request("host:transport:other", s), Host::Fail("device 'other' not found".into()));
        assert!(matches!(host_request("host:nonsense", s), Host::Fail(_)));
    }
}
