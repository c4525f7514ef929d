//! Our client against our server on 127.0.0.1, plus a hand-written raw client for what our
//! client never does (16 bpp, RFB 3.3, garbage).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use phonebench_vnc::{PixelFormat, RfbScreen, ServerOptions, VncClient, VncError, keysym, serve_with};

const T: Duration = Duration::from_secs(20);

#[derive(Debug, Clone, PartialEq)]
enum Event {
    Pointer(u16, u16, u8),
    Key(u32, bool),
}

struct State {
    version: u64,
    picture: Arc<Vec<u8>>,
    events: Vec<Event>,
}

/// A 40x30 gradient; a key press repaints it in a colour from the keysym.
struct TestScreen(Arc<Mutex<State>>);

const W: u16 = 40;
const H: u16 = 30;

fn gradient() -> Vec<u8> {
    let mut p = Vec::new();
    for y in 0..H {
        for x in 0..W {
            p.extend_from_slice(&[(x * 6) as u8, (y * 8) as u8, ((x + y) * 3) as u8, 255]);
        }
    }
    p
}

fn filled(keysym: u32) -> Vec<u8> {
    [keysym as u8, 0x80, 0x40, 255].repeat(usize::from(W) * usize::from(H))
}

impl RfbScreen for TestScreen {
    fn size(&self) -> (u16, u16) {
        (W, H)
    }
    fn picture(&mut self) -> Result<(u64, Arc<Vec<u8>>), String> {
        let s = self.0.lock().map_err(|e| e.to_string())?;
        Ok((s.version, s.picture.clone()))
    }
    fn pointer(&mut self, x: u16, y: u16, buttons: u8) {
        if let Ok(mut s) = self.0.lock() {
            s.events.push(Event::Pointer(x, y, buttons));
        }
    }
    fn key(&mut self, keysym: u32, down: bool) {
        if let Ok(mut s) = self.0.lock() {
            s.events.push(Event::Key(keysym, down));
            if down {
                s.picture = Arc::new(filled(keysym));
                s.version += 1;
            }
        }
    }
    fn name(&self) -> String {
        "test screen".into()
    }
}

/// Our server on a thread; stopped and joined on drop.
struct TestServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    stop: Arc<AtomicBool>,
    ends: Receiver<Result<(), String>>,
    thread: Option<JoinHandle<()>>,
}

impl TestServer {
    fn start(password: Option<&str>) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let state =
            Arc::new(Mutex::new(State { version: 1, picture: Arc::new(gradient()), events: Vec::new() }));
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, ends) = channel();
        let options = ServerOptions { password: password.map(str::to_string), ..ServerOptions::default() };
        let (state2, stop2) = (state.clone(), stop.clone());
        let thread = thread::spawn(move || {
            let mut screen = TestScreen(state2);
            serve_with(&listener, &mut screen, &options, &stop2, &mut |_, r| {
                let _ = tx.send(r.map_err(|e| e.to_string()));
            })
            .expect("serve");
        });
        TestServer { addr, state, stop, ends, thread: Some(thread) }
    }

    fn connect(&self, password: Option<&str>) -> Result<VncClient, VncError> {
        VncClient::connect(&self.addr.to_string(), password, T)
    }

    /// How the last connection ended, once it has.
    fn next_end(&self) -> Result<(), String> {
        self.ends.recv_timeout(T).expect("the connection ended")
    }

    fn events(&self) -> Vec<Event> {
        self.state.lock().expect("state").events.clone()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn capture_equals_the_picture_and_changes_arrive() {
    let server = TestServer::start(None);
    let mut client = server.connect(None).expect("connect");
    assert_eq!((client.width(), client.height()), (W, H));
    assert_eq!(client.name(), "test screen");
    assert_eq!(client.capture(T).expect("capture").rgba, gradient());

    // A key repaints the screen; an incremental refresh brings the new picture.
    client.key(u32::from(b'a'), true).expect("key");
    assert_eq!(client.refresh(true, T).expect("refresh").rgba, filled(0x61));

    // An incremental request with nothing new waits until the screen changes.
    let state = server.state.clone();
    let changer = thread::spawn(move || {
        thread::sleep(Duration::from_millis(200));
        let mut s = state.lock().expect("state");
        s.picture = Arc::new(filled(7));
        s.version += 1;
    });
    assert_eq!(client.refresh(true, T).expect("refresh").rgba, filled(7));
    changer.join().expect("changer");
    drop(client);
    assert_eq!(server.next_end(), Ok(()));
}

#[test]
fn pointer_and_key_events_arrive_in_order() {
    let server = TestServer::start(None);
    let mut client = server.connect(None).expect("connect");
    client.tap(5, 6).expect("tap");
    client.type_text("hé").expect("type");
    client.press_key(keysym::RETURN).expect("key");
    client.drag((0, 0), (30, 20), 0, 2).expect("drag");
    client.pointer(500, 500, 0).expect("pointer"); // outside: clamped to the screen
    client.capture(T).expect("capture"); // a round trip: everything before it was handled
    use Event::*;
    assert_eq!(
        server.events(),
        [
            Pointer(5, 6, 0),
            Pointer(5, 6, 1),
            Pointer(5, 6, 0),
            Key(0x68, true),
            Key(0x68, false),
            Key(0xe9, true),
            Key(0xe9, false),
            Key(keysym::RETURN, true),
            Key(keysym::RETURN, false),
            Pointer(0, 0, 0),
            Pointer(0, 0, 1),
            Pointer(15, 10, 1),
            Pointer(30, 20, 1),
            Pointer(30, 20, 0),
            Pointer(W - 1, H - 1, 0),
        ]
    );
}

#[test]
fn vnc_authentication_accepts_the_password_and_refuses_others() {
    let server = TestServer::start(Some("secret"));
    let mut client = server.connect(Some("secret")).expect("right password");
    assert_eq!(client.capture(T).expect("capture").rgba, gradient());
    drop(client);
    assert_eq!(server.next_end(), Ok(()));

    match server.connect(Some("wrong")) {
        Err(VncError::AuthFailed(reason)) => assert!(reason.contains("wrong password"), "{reason}"),
        other => panic!("expected an authentication failure, got {:?}", other.err()),
    }
    let end = server.next_end().expect_err("the server saw the failure");
    assert!(end.contains("authentication failed"), "{end}");

    match server.connect(None) {
        Err(VncError::AuthFailed(reason)) => assert!(reason.contains("requires a password")),
        other => panic!("expected an authentication failure, got {:?}", other.err()),
    }
}

/// A raw RFB 3.3 handshake by hand; returns the stream after ServerInit.
fn raw_client(addr: SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(T)).expect("timeout");
    let mut version = [0u8; 12];
    s.read_exact(&mut version).expect("version");
    assert_eq!(&version, b"RFB 003.008\n");
    s.write_all(b"RFB 003.003\n").expect("version");
    let mut security = [0u8; 4];
    s.read_exact(&mut security).expect("security");
    assert_eq!(u32::from_be_bytes(security), 1, "3.3: the server names type None");
    s.write_all(&[0]).expect("ClientInit");
    let mut init = [0u8; 24];
    s.read_exact(&mut init).expect("ServerInit");
    assert_eq!(&init[..4], &[0, W as u8, 0, H as u8]);
    assert_eq!(PixelFormat::from_bytes(&init[4..20].try_into().expect("16")), PixelFormat::RGBX);
    let mut name = vec![0u8; u32::from_be_bytes([init[20], init[21], init[22], init[23]]) as usize];
    s.read_exact(&mut name).expect("name");
    assert_eq!(name, b"test screen");
    s
}

#[test]
fn a_16_bpp_big_endian_client_gets_rgb565() {
    let server = TestServer::start(None);
    let mut s = raw_client(server.addr);
    let mut msg = vec![0u8, 0, 0, 0];
    msg.extend_from_slice(&PixelFormat::rgb565(true).to_bytes());
    msg.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, W as u8, 0, H as u8]);
    s.write_all(&msg).expect("SetPixelFormat + FramebufferUpdateRequest");
    let mut head = [0u8; 16];
    s.read_exact(&mut head).expect("update header");
    assert_eq!(head, [0, 0, 0, 1, 0, 0, 0, 0, 0, W as u8, 0, H as u8, 0, 0, 0, 0]);
    let mut pixels = vec![0u8; usize::from(W) * usize::from(H) * 2];
    s.read_exact(&mut pixels).expect("pixels");
    // Independently: each channel rounded to 5/6/5 bits, red on top, big-endian.
    let bits = |c: u8, max: f64| (f64::from(c) * max / 255.0).round() as u16;
    let expected: Vec<u8> = gradient()
        .chunks(4)
        .flat_map(|p| ((bits(p[0], 31.0) << 11) | (bits(p[1], 63.0) << 5) | bits(p[2], 31.0)).to_be_bytes())
        .collect();
    assert_eq!(pixels, expected);
    drop(s);
    assert_eq!(server.next_end(), Ok(()));
}

#[test]
fn garbage_ends_the_connection_with_an_error_and_the_server_goes_on() {
    let server = TestServer::start(None);
    // Not an RFB version.
    let mut s = TcpStream::connect(server.addr).expect("connect");
    s.write_all(b"GET / HTTP/1.1\r\n\r\n").expect("garbage");
    let end = server.next_end().expect_err("garbage version");
    assert!(end.contains("client version"), "{end}");
    drop(s);

    // After the handshake: an unknown message, then a colour-map format, then a huge cut text.
    let bad: [&[u8]; 3] = [
        &[0xff, 1, 2, 3],
        &[0, 0, 0, 0, 8, 8, 0, 0, 0, 7, 0, 7, 0, 3, 0, 3, 6, 0, 0, 0],
        &[6, 0, 0, 0, 0xff, 0xff, 0xff, 0xff],
    ];
    for (bytes, what) in bad.into_iter().zip(["message type 255", "colour-map", "ClientCutText"]) {
        let mut s = raw_client(server.addr);
        s.write_all(bytes).expect("garbage");
        let end = server.next_end().expect_err("garbage message");
        assert!(end.contains(what), "{end}");
    }

    // Random bytes of every length at every stage: never a panic, always an end.
    let mut seed = 0x9e37_79b9_u32;
    for len in [1usize, 5, 11, 12, 13, 40, 300] {
        let mut s = TcpStream::connect(server.addr).expect("connect");
        let mut bytes = b"RFB 003.008\n\x01\x01".to_vec();
        bytes.extend((0..len).map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as u8
        }));
        s.write_all(&bytes).expect("garbage");
        drop(s);
        let _ = server.next_end();
    }

    // The server still serves.
    let mut client = server.connect(None).expect("connect after garbage");
    assert_eq!(client.capture(T).expect("capture").rgba, gradient());
}

/// A scripted server: the handshake in RFB 3.`minor` (security None), a 2x1 ServerInit, then
/// `script`. Returns its address and, once the client hangs up, everything the client sent.
fn fake_server(minor: u8, script: Vec<u8>) -> (String, JoinHandle<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let thread = thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        s.set_read_timeout(Some(T)).expect("timeout");
        s.write_all(format!("RFB 003.00{minor}\n").as_bytes()).expect("version");
        let mut got = vec![0u8; 12];
        s.read_exact(&mut got).expect("client version");
        if minor == 3 {
            s.write_all(&1u32.to_be_bytes()).expect("security");
        } else {
            s.write_all(&[1, 1]).expect("security");
            let mut chosen = [0u8];
            s.read_exact(&mut chosen).expect("chosen");
            got.push(chosen[0]);
            if minor == 8 {
                s.write_all(&0u32.to_be_bytes()).expect("result");
            }
        }
        let mut init = vec![0u8, 2, 0, 1];
        init.extend_from_slice(&PixelFormat::RGBX.to_bytes());
        init.extend_from_slice(&[0, 0, 0, 4]);
        init.extend_from_slice(b"fake");
        s.write_all(&init).expect("ServerInit");
        s.write_all(&script).expect("script");
        let _ = s.read_to_end(&mut got); // until the client hangs up
        got
    });
    (addr, thread)
}

/// x, y, w, h, encoding, data.
type Rect<'a> = (u16, u16, u16, u16, i32, &'a [u8]);

fn update(rects: &[Rect]) -> Vec<u8> {
    let mut m = vec![0, 0];
    m.extend_from_slice(&(rects.len() as u16).to_be_bytes());
    for (x, y, w, h, encoding, data) in rects {
        for v in [x, y, w, h] {
            m.extend_from_slice(&v.to_be_bytes());
        }
        m.extend_from_slice(&encoding.to_be_bytes());
        m.extend_from_slice(data);
    }
    m
}

#[test]
fn the_client_speaks_3_3_and_skips_what_it_does_not_need() {
    let mut script = vec![2]; // Bell
    script.extend_from_slice(&[1, 0, 0, 0, 0, 1, 1, 2, 3, 4, 5, 6]); // SetColourMapEntries
    script.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, 2, b'h', b'i']); // ServerCutText
    script.extend(update(&[(0, 0, 2, 1, 0, &[10, 20, 30, 0, 40, 50, 60, 0])]));
    // Then CopyRect: the right pixel copied onto the left one.
    script.extend(update(&[(0, 0, 1, 1, 1, &[0, 1, 0, 0])]));
    let (addr, server) = fake_server(3, script);
    let mut client = VncClient::connect(&addr, None, T).expect("connect");
    assert_eq!(client.name(), "fake");
    assert_eq!(client.capture(T).expect("capture").rgba, [10, 20, 30, 255, 40, 50, 60, 255]);
    assert_eq!(client.refresh(true, T).expect("refresh").rgba, [40, 50, 60, 255, 40, 50, 60, 255]);
    drop(client);
    let sent = server.join().expect("server");
    assert_eq!(&sent[..12], b"RFB 003.003\n", "we answer a 3.3 server in 3.3");
    // Then SetPixelFormat (R, G, B, X) and SetEncodings [Raw, CopyRect, DesktopSize].
    let mut expected = vec![0, 0, 0, 0];
    expected.extend_from_slice(&PixelFormat::RGBX.to_bytes());
    expected.extend_from_slice(&[2, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0x21]);
    assert_eq!(&sent[13..13 + expected.len()], expected.as_slice());
}

#[test]
fn a_hostile_server_gets_errors_not_panics() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![9], "unknown server message type 9"),
        (update(&[(1, 0, 2, 1, 0, &[])]), "outside the 2x1 screen"),
        (update(&[(0, 0, 1, 1, 1, &[0, 5, 0, 0])]), "CopyRect source"),
        (update(&[(0, 0, 1, 1, 7, &[])]), "encoding 7"),
        (update(&[(0, 0, 65535, 65535, -223, &[])]), "over the limit"),
        (vec![3, 0, 0, 0, 0xff, 0xff, 0xff, 0xff], "ServerCutText"),
        (vec![0, 0, 0, 5], "timed out"), // five rectangles announced, none sent
    ];
    for (script, expected) in cases {
        let (addr, server) = fake_server(8, script);
        let mut client = VncClient::connect(&addr, None, T).expect("connect");
        let err = client.refresh(false, Duration::from_millis(500)).expect_err(expected).to_string();
        assert!(err.contains(expected), "{err}");
        // Out of step now: every later call fails rather than misreading.
        assert!(client.capture(T).is_err());
        drop(client);
        server.join().expect("server");
    }
}
