//! The acceptance test: our client against a VNC server we did not write (Debian's `x11vnc`) on
//! an `Xvfb` display showing real X programs. It reads the screen, a tap presses xmessage's
//! button, typed text reaches a shell in xterm; and VNC authentication works with `-passwd`.
//! Needs the Debian packages xvfb, x11vnc, x11-utils (xmessage, xwininfo), x11-xserver-utils
//! (xsetroot) and xterm; it fails (never skips) without them.

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use phonebench_vnc::{VncClient, VncError, keysym};

const T: Duration = Duration::from_secs(20);
/// The root window's colour (#336699), seen wherever no window is.
const ROOT: [u8; 4] = [0x33, 0x66, 0x99, 255];

/// Every process the test started, ended on drop (even when an assertion fails).
struct Children {
    dir: PathBuf,
    procs: Vec<(String, Child)>,
}

impl Children {
    fn spawn(&mut self, name: &str, cmd: &mut Command) -> usize {
        let log = fs::File::create(self.dir.join(format!("{name}.log"))).expect("log file");
        let err = log.try_clone().expect("log file");
        let child = cmd
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name}: {e}"));
        self.procs.push((name.to_string(), child));
        self.procs.len() - 1
    }

    fn log(&self, name: &str) -> String {
        fs::read_to_string(self.dir.join(format!("{name}.log"))).unwrap_or_default()
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        // SIGTERM first, so Xvfb removes its lock file and socket; SIGKILL what lingers.
        for (_, child) in self.procs.iter_mut().rev() {
            let _ = Command::new("kill").arg(child.id().to_string()).status();
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        for (_, child) in self.procs.iter_mut().rev() {
            while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
                sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn require_tools() {
    for tool in ["Xvfb", "x11vnc", "xsetroot", "xmessage", "xwininfo", "xterm"] {
        let found = std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()));
        assert!(
            found,
            "{tool} is not installed: tools/test.sh installs what this test needs \
             (Debian packages xvfb x11vnc x11-utils x11-xserver-utils xterm)"
        );
    }
}

/// Waits for `ok` (checked every 50 ms) until `T` passes; panics with `what` and `context()`.
fn wait_for(what: &str, mut ok: impl FnMut() -> bool, context: impl Fn() -> String) {
    let deadline = Instant::now() + T;
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}\n{}", context());
        sleep(Duration::from_millis(50));
    }
}

/// Starts Xvfb on the first free display from :91; returns the display name. `-noreset`: an X
/// server resets when its last client leaves, which would undo `xsetroot`.
fn start_xvfb(children: &mut Children) -> String {
    for n in 91..200 {
        if Path::new(&format!("/tmp/.X{n}-lock")).exists()
            || Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
        {
            continue;
        }
        let i = children.spawn(
            "xvfb",
            Command::new("Xvfb").args([
                &format!(":{n}"),
                "-screen",
                "0",
                "640x480x24",
                "-nolisten",
                "tcp",
                "-noreset",
            ]),
        );
        let socket = format!("/tmp/.X11-unix/X{n}");
        let deadline = Instant::now() + T;
        loop {
            if Path::new(&socket).exists() {
                return format!(":{n}");
            }
            // Lost a race for the display (or Xvfb failed): try the next one.
            if !matches!(children.procs[i].1.try_wait(), Ok(None)) || Instant::now() > deadline {
                break;
            }
            sleep(Duration::from_millis(50));
        }
    }
    panic!("no free X display in :91..:199\n{}", children.log("xvfb"));
}

/// `xwininfo -root -tree` of the display.
fn window_tree(display: &str) -> String {
    Command::new("xwininfo")
        .args(["-display", display, "-root", "-tree"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// The centre of xmessage's button: the lowest small window below the "xmessage" top level
/// (the message text sits above the button row).
fn xmessage_button(tree: &str) -> Option<(u16, u16)> {
    let mut lines = tree.lines().skip_while(|l| !l.contains("\"xmessage\": ("));
    let top_indent = lines.next()?.find("0x")?;
    let mut best: Option<(u16, u16, u16, u16)> = None; // (abs y, abs x, w, h)
    for line in lines {
        if line.trim().is_empty() {
            break;
        }
        // Skip the "2 children:" lines; stop at the next window as high as the top level.
        let Some(indent) = line.find("0x").filter(|_| line.trim_start().starts_with("0x")) else {
            continue;
        };
        if indent <= top_indent {
            break;
        }
        // "0x200032 (has no name): ()  22x17+4+29  +105+330"
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (Some(geometry), Some(absolute)) = (fields.iter().rev().nth(1), fields.last()) else {
            continue;
        };
        let size: Vec<u16> = geometry.split(['x', '+']).filter_map(|s| s.parse().ok()).collect();
        let pos: Vec<u16> = absolute.split('+').filter_map(|s| s.parse().ok()).collect();
        if let ([w, h, ..], [x, y]) = (size.as_slice(), pos.as_slice())
            && *h < 40
            && *w < 200
            && best.is_none_or(|b| *y >= b.0)
        {
            best = Some((*y, *x, *w, *h));
        }
    }
    best.map(|(y, x, w, h)| (x + w / 2, y + h / 2))
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

/// Starts x11vnc on `display` with `extra` arguments; returns its address.
fn start_x11vnc(children: &mut Children, name: &str, display: &str, extra: &[&str]) -> String {
    let port = free_port().to_string();
    let mut cmd = Command::new("x11vnc");
    cmd.args(["-display", display, "-rfbport", &port, "-forever", "-shared", "-localhost"])
        // x11vnc draws the cursor into the picture for clients without cursor encodings.
        .arg("-nocursor")
        .args(extra);
    children.spawn(name, &mut cmd);
    format!("127.0.0.1:{port}")
}

/// Connects once x11vnc listens (it takes a moment to start).
fn connect(children: &Children, name: &str, addr: &str, password: Option<&str>) -> VncClient {
    let deadline = Instant::now() + T;
    loop {
        match VncClient::connect(addr, password, T) {
            Ok(c) => return c,
            Err(VncError::Io { .. }) if Instant::now() < deadline => sleep(Duration::from_millis(100)),
            Err(e) => panic!("connecting to {name}: {e}\n{}", children.log(name)),
        }
    }
}

#[test]
fn our_client_drives_real_x_programs_through_x11vnc() {
    require_tools();
    let dir = std::env::temp_dir().join(format!("phonebench-vnc-x11vnc-{}", std::process::id()));
    fs::create_dir_all(&dir).expect("temp dir");
    let mut children = Children { dir: dir.clone(), procs: Vec::new() };
    let display = start_xvfb(&mut children);
    let status = Command::new("xsetroot")
        .args(["-display", &display, "-solid", "#336699"])
        .status()
        .expect("xsetroot");
    assert!(status.success(), "xsetroot failed");

    // xterm at the top left running a shell that saves one typed line; xmessage below it.
    let typed = dir.join("typed.txt");
    let script = format!("read line; printf %s \"$line\" > '{}'", typed.display());
    children.spawn(
        "xterm",
        Command::new("xterm").args(["-display", &display, "-T", "vnc-xterm"]).args([
            "-geometry",
            "80x10+0+0",
            "-e",
            "sh",
            "-c",
            &script,
        ]),
    );
    let xmessage = children.spawn(
        "xmessage",
        Command::new("xmessage").args(["-display", &display, "-buttons", "OK:3"]).args([
            "-geometry",
            "+100+300",
            "hello",
        ]),
    );
    wait_for(
        "xterm and xmessage windows",
        || {
            let tree = window_tree(&display);
            tree.contains("\"vnc-xterm\"") && xmessage_button(&tree).is_some()
        },
        || window_tree(&display),
    );
    let button = xmessage_button(&window_tree(&display)).expect("xmessage button");

    let addr = start_x11vnc(&mut children, "x11vnc", &display, &["-nopw"]);
    let mut client = connect(&children, "x11vnc", &addr, None);
    assert_eq!((client.width(), client.height()), (640, 480));

    // The screen: the root colour where no window is, something else where xterm is.
    let fb = client.capture(T).expect("capture");
    assert_eq!(fb.pixel(620, 460), Some(ROOT), "root colour at (620, 460)");
    assert_eq!(fb.pixel(630, 10), Some(ROOT), "root colour at (630, 10)");
    assert_ne!(fb.pixel(20, 20), Some(ROOT), "xterm at (20, 20)");
    assert_ne!(fb.pixel(button.0, button.1), Some(ROOT), "xmessage's button");

    // A tap reaches xmessage: its OK button exits with status 3.
    client.tap(button.0, button.1).expect("tap");
    let mut code = None;
    wait_for(
        "xmessage to exit after the tap",
        || {
            code = children.procs[xmessage].1.try_wait().ok().flatten();
            code.is_some()
        },
        || format!("tapped {button:?}\n{}", window_tree(&display)),
    );
    assert_eq!(code.and_then(|c| c.code()), Some(3), "xmessage's exit status");

    // Typed text reaches the shell in xterm (the focus follows the pointer: no window manager).
    client.tap(200, 60).expect("tap into xterm");
    client.type_text("hello vnc").expect("type");
    client.press_key(keysym::RETURN).expect("Return");
    wait_for(
        "the typed line in the file",
        || fs::read_to_string(&typed).is_ok_and(|s| s == "hello vnc"),
        || format!("file: {:?}", fs::read_to_string(&typed)),
    );
    // The screen changed where xmessage was: an incremental refresh shows the root again.
    let deadline = Instant::now() + T;
    while client.framebuffer().pixel(button.0, button.1) != Some(ROOT) {
        assert!(Instant::now() < deadline, "xmessage still on screen");
        client.refresh(true, T).expect("refresh");
    }
    drop(client);

    // VNC authentication against x11vnc's -passwd.
    let addr = start_x11vnc(&mut children, "x11vnc-auth", &display, &["-passwd", "secret"]);
    let mut client = connect(&children, "x11vnc-auth", &addr, Some("secret"));
    let fb = client.capture(T).expect("capture with a password");
    assert_eq!(fb.pixel(620, 460), Some(ROOT));
    drop(client);
    match VncClient::connect(&addr, None, T) {
        Err(VncError::AuthFailed(reason)) => assert!(reason.contains("password"), "{reason}"),
        other => panic!("no password: expected a refusal, got {:?}", other.err()),
    }
    match VncClient::connect(&addr, Some("wrong"), T) {
        Err(VncError::AuthFailed(_)) => {}
        other => panic!("wrong password: expected a refusal, got {:?}", other.err()),
    }
}
