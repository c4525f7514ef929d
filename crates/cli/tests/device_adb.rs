//! Real devices over adb, proven against the real adb client: Debian's `adb` binary talks to
//! `phonebench fake-adb` (the simulated phone behind the adb host protocol), and our own device
//! backend plays tasks through the same server.
//!
//! Needs the `adb` binary (Debian package `adb`; tools/test.sh installs it): fails without it.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::MutexGuard;
use std::time::Duration;

use phonebench_actions::{Action, Key};
use phonebench_agents::ReferenceAgent;
use phonebench_device::adb::input::{UnicodeInput, typing_commands};
use phonebench_device::adb::{AdbDevice, AdbServer};
use phonebench_device::fake::{FakeAdbServer, FakeDevice, FakeOptions};
use phonebench_device::{Device, DeviceError, DeviceOptions, DeviceScreen, apply_action};
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use phonebench_tasks::Suite;
use phonebench_testkit::workspace_root;
use phonebench_uitree::{UiTree, read_xml_bytes, write_xml};

/// Whether two trees show the same nodes (a dump carries no window kinds: readers infer them, so
/// a toast's window reads back as an application window).
fn same_screen(a: &UiTree, b: &UiTree) -> bool {
    a.len() == b.len()
        && a.iter().zip(b.iter()).all(|((_, x), (_, y))| x == y)
        && write_xml(a) == write_xml(b)
}

fn catalog() -> Catalog {
    Catalog::load_dir(&workspace_root().join("apps")).unwrap()
}

fn fake(adb_keyboard: bool) -> FakeAdbServer {
    let phone = Phone::new(catalog(), PhoneConfig::default()).unwrap();
    let options = FakeOptions { adb_keyboard, ..FakeOptions::default() };
    FakeAdbServer::start("127.0.0.1:0", FakeDevice::new(phone, options)).unwrap()
}

fn device_of(server: &FakeAdbServer) -> MutexGuard<'_, FakeDevice> {
    server.device().lock().unwrap()
}

/// Runs Debian's `adb` client against the server at `port`; never waits more than a minute.
fn adb(port: u16, args: &[&str]) -> (bool, Vec<u8>, String) {
    let child = Command::new("adb")
        .arg("-P")
        .arg(port.to_string())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("the `adb` binary is needed (Debian package `adb`; tools/test.sh installs it): {e}")
        });
    let pid = child.id();
    // Read its output on another thread (a full pipe would stop adb), and give up after a minute.
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    let Ok(output) = result.recv_timeout(Duration::from_secs(60)) else {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        panic!("adb {args:?} hangs");
    };
    let output = output.unwrap();
    (output.status.success(), output.stdout, String::from_utf8_lossy(&output.stderr).into_owned())
}

/// A device driven by the real adb client, one `adb shell` per primitive (what a shell script
/// driving a phone does).
#[derive(Debug)]
struct AdbCli {
    port: u16,
}

impl AdbCli {
    fn shell(&self, command: &str) -> Result<String, DeviceError> {
        let (ok, out, err) = adb(self.port, &["shell", command]);
        if !ok {
            return Err(DeviceError::Command { command: command.into(), message: err });
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }
}

impl Device for AdbCli {
    fn name(&self) -> String {
        "adb-cli".into()
    }
    fn display(&self) -> (u32, u32, u32) {
        (1080, 2400, 420)
    }
    fn screen(&mut self) -> Result<DeviceScreen, DeviceError> {
        let (ok, xml, err) = adb(self.port, &["exec-out", "uiautomator", "dump", "/dev/tty"]);
        assert!(ok, "{err}");
        let tree = read_xml_bytes(&xml).map_err(|e| DeviceError::Dump(e.to_string()))?;
        let focus = self.shell("dumpsys window")?;
        let (package, activity) = phonebench_device::adb::device::parse_focus(&focus).unwrap_or_default();
        Ok(DeviceScreen { tree, package, activity })
    }
    fn screenshot_png(&mut self) -> Result<Vec<u8>, DeviceError> {
        Ok(adb(self.port, &["exec-out", "screencap", "-p"]).1)
    }
    fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.shell(&format!("input tap {x} {y}")).map(|_| ())
    }
    fn double_tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.shell(&format!("input tap {x} {y} && input tap {x} {y}")).map(|_| ())
    }
    fn long_press(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.shell(&format!("input swipe {x} {y} {x} {y} 1000")).map(|_| ())
    }
    fn swipe(&mut self, from: (i32, i32), to: (i32, i32), ms: u32) -> Result<(), DeviceError> {
        self.shell(&format!("input swipe {} {} {} {} {ms}", from.0, from.1, to.0, to.1)).map(|_| ())
    }
    fn type_text(&mut self, text: &str) -> Result<(), DeviceError> {
        for command in typing_commands(text, UnicodeInput::AdbKeyboard).map_err(DeviceError::Unsupported)? {
            self.shell(&command)?;
        }
        Ok(())
    }
    fn clear_text(&mut self, _chars: usize) -> Result<(), DeviceError> {
        self.shell("am broadcast -a ADB_CLEAR_TEXT").map(|_| ())
    }
    fn key(&mut self, key: &Key) -> Result<(), DeviceError> {
        self.shell(&format!("input keyevent {}", key.keycode())).map(|_| ())
    }
    fn packages(&mut self) -> Result<Vec<String>, DeviceError> {
        Ok(self
            .shell("pm list packages")?
            .lines()
            .filter_map(|l| l.strip_prefix("package:"))
            .map(str::to_string)
            .collect())
    }
    fn launch(&mut self, package: &str, _activity: Option<&str>) -> Result<(), DeviceError> {
        self.shell(&format!("monkey -p {package} -c android.intent.category.LAUNCHER 1")).map(|_| ())
    }
    fn force_stop(&mut self, package: &str) -> Result<(), DeviceError> {
        self.shell(&format!("am force-stop {package}")).map(|_| ())
    }
    fn run_setup(&mut self, command: &str) -> Result<String, DeviceError> {
        self.shell(command)
    }
    fn wait(&mut self, ms: u64) -> Result<(), DeviceError> {
        self.shell(&format!("sleep {}.{:03}", ms / 1000, ms % 1000)).map(|_| ())
    }
}

#[test]
fn the_real_adb_client_lists_the_device_and_pulls_the_phones_tree() {
    let server = fake(true);
    let port = server.addr().port();
    let (ok, out, err) = adb(port, &["devices"]);
    assert!(ok, "{err}");
    let listed = String::from_utf8_lossy(&out);
    assert!(listed.contains("emulator-5554\tdevice"), "{listed}");

    let (ok, out, err) = adb(port, &["shell", "uiautomator", "dump", "/sdcard/window_dump.xml"]);
    assert!(ok, "{err}");
    assert!(String::from_utf8_lossy(&out).contains("dumped to: /sdcard/window_dump.xml"));
    let dir = tempfile_dir("pull");
    let local = dir.join("window_dump.xml");
    let (ok, _, err) = adb(port, &["pull", "/sdcard/window_dump.xml", local.to_str().unwrap()]);
    assert!(ok, "{err}");
    let pulled = read_xml_bytes(&std::fs::read(&local).unwrap()).unwrap();
    let expected = device_of(&server).phone_mut().shared_tree().unwrap();
    assert!(same_screen(&pulled, &expected), "the pulled dump is the simulated phone's tree");
    // And the same through exec-out, as our backend reads it.
    let (ok, xml, _) = adb(port, &["exec-out", "uiautomator", "dump", "/dev/tty"]);
    assert!(ok);
    assert!(same_screen(&read_xml_bytes(&xml).unwrap(), &expected));
    // A missing file is adb's own error, not a hang or an empty file.
    // (adb 29 prints sync errors on stdout.)
    let (ok, out, err) = adb(port, &["pull", "/sdcard/nothing.xml", dir.join("x").to_str().unwrap()]);
    let said = format!("{}{err}", String::from_utf8_lossy(&out));
    assert!(!ok && said.contains("remote object '/sdcard/nothing.xml' does not exist"), "{said}");
    // A wrong serial is refused by name.
    let (ok, _, err) = adb(port, &["-s", "emulator-9999", "shell", "true"]);
    assert!(!ok && err.contains("emulator-9999"), "{err}");
    let (ok, png, _) = adb(port, &["exec-out", "screencap", "-p"]);
    assert!(ok && png.starts_with(b"\x89PNG\r\n\x1a\n"));
}

/// Plays a starter task's reference through `device` and, action for action, on an in-process
/// phone; both start from the same fresh phone.
fn play_both(task_id: &str, device: &mut dyn Device, server: &FakeAdbServer) -> Phone {
    let suite = Suite::load(&workspace_root().join("suites/full")).unwrap();
    let spec = suite.tasks.iter().find(|t| t.id == task_id).unwrap();
    let catalog = catalog();
    let inst = phonebench_runner::instantiate(&catalog, spec, 0, 0).unwrap();
    assert!(inst.setup.is_empty(), "a task without SQL setup: a device is staged by launching its app");
    let mut phone = Phone::new(catalog.clone(), PhoneConfig::default()).unwrap();
    let app = inst.start.app.clone().unwrap();
    let package = catalog.get(&app).unwrap().manifest.package.clone();
    phone.start_app(&app, None, &Default::default()).unwrap();
    device.launch(&package, None).unwrap();
    let apps = phonebench_device::act::KnownApp { id: app.clone(), name: String::new(), package };
    let mut agent = ReferenceAgent::new(inst.reference.clone());
    for _ in 0..=inst.max_steps {
        let screen = device.screen().unwrap();
        let observation = phonebench_observe::render(&screen.tree, ObservationFormat::SphinxTree);
        let local = phone.observe(ObservationFormat::SphinxTree).unwrap();
        assert!(
            same_screen(&screen.tree, &phone.shared_tree().unwrap()),
            "{task_id}: the device shows what the phone shows"
        );
        assert_eq!(observation.targets, local.targets);
        let action = agent.decide(&screen.tree);
        assert!(agent.failure.is_none(), "{task_id}: {:?}", agent.failure);
        if matches!(action, Action::Finish { .. } | Action::Answer { .. }) {
            break;
        }
        apply_action(device, &action, &observation, &screen.tree, std::slice::from_ref(&apps)).unwrap();
        phone.apply(&action).unwrap();
    }
    let _ = server;
    phone
}

#[test]
fn the_real_adb_client_drives_starter_tasks_to_the_in_process_final_state() {
    for task in ["contacts.create", "settings.add_wifi"] {
        let server = fake(true);
        let mut device = AdbCli { port: server.addr().port() };
        let mut local = play_both(task, &mut device, &server);
        let mut fake = device_of(&server);
        let app = if task.starts_with("contacts") { "contacts" } else { "settings" };
        // The same data, row for row. Time stamps (`*_at`) are left out: on a device, typing
        // into a field is a tap and then the typing, two actions where in-process play takes
        // one, and each action takes a virtual second.
        let rows = |phone: &Phone| {
            let tables = phone
                .query(app, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                .unwrap();
            let mut all = Vec::new();
            for table in tables {
                let name = table["name"].as_str().unwrap().to_string();
                for mut row in phone.query(app, &format!("SELECT * FROM \"{name}\"")).unwrap() {
                    if let Some(fields) = row.as_object_mut() {
                        fields.retain(|k, _| !k.ends_with("_at"));
                    }
                    all.push((name.clone(), row));
                }
            }
            all
        };
        let (on_device, in_process) = (rows(fake.phone()), rows(&local));
        assert!(on_device.len() > 10, "{task}: the app has data");
        assert_eq!(
            on_device, in_process,
            "{task}: the app's data after adb shell input equals in-process play"
        );
        assert_ne!(
            rows(&Phone::new(catalog(), PhoneConfig::default()).unwrap()),
            on_device,
            "{task}: the task changed the data"
        );
        assert!(
            same_screen(&fake.phone_mut().shared_tree().unwrap(), &local.shared_tree().unwrap()),
            "{task}: the same last screen"
        );
    }
}

#[test]
fn typed_text_arrives_intact_and_never_runs_a_command() {
    let hostile = [
        "two words",
        "it's \"quoted\"",
        "a & b; c | d",
        "$(touch /sdcard/pwned) `touch /sdcard/pwned2` $HOME",
        "%s 100% %%s\\n",
        "'; touch /sdcard/pwned3; echo '",
    ];
    let unicode = ["café crème", "日本語 テキスト", "emoji 🙂 ok", "mixed ' & ; é"];
    let server = fake(true);
    let adb_server = AdbServer::new(&server.addr().to_string()).unwrap();
    let options = DeviceOptions { settle_ms: 0, stable_interval_ms: 0, max_dumps: 2 };
    let mut device = AdbDevice::connect(adb_server, "emulator-5554", options).unwrap();
    for text in hostile.iter().chain(unicode.iter()) {
        // Contacts' search field, cleared, then the text typed into it.
        let package = catalog().get("contacts").unwrap().manifest.package.clone();
        device.force_stop(&package).unwrap();
        device.launch(&package, None).unwrap();
        let screen = device.screen().unwrap();
        let observation = phonebench_observe::render(&screen.tree, ObservationFormat::SphinxTree);
        let search = screen.tree.iter().find(|(_, n)| n.resource_id.ends_with("menu_search")).unwrap().0;
        let index = observation.targets.iter().position(|t| *t == search).unwrap() as u32;
        let tap = Action::Tap { target: phonebench_actions::Target::Index(index) };
        apply_action(&mut device, &tap, &observation, &screen.tree, &[]).unwrap();
        let before = device_of(&server).executed().len();
        device.type_text(text).unwrap();
        let screen = device.screen().unwrap();
        let field = screen.tree.iter().find(|(_, n)| n.focused).map(|(_, n)| n.text.clone());
        assert_eq!(field.as_deref(), Some(*text), "typed {text:?}");
        let fake = device_of(&server);
        let ran: Vec<&Vec<String>> = fake.executed()[before..].iter().collect();
        for argv in &ran {
            assert!(
                matches!(argv.first().map(String::as_str), Some("input" | "am" | "uiautomator" | "dumpsys")),
                "typing {text:?} ran {argv:?}"
            );
        }
        for file in ["/sdcard/pwned", "/sdcard/pwned2", "/sdcard/pwned3"] {
            assert!(fake.stat(file).is_none(), "typing {text:?} created {file}");
        }
    }
    // Without ADBKeyboard, non-ASCII text is refused with the way to fix it, and nothing typed.
    let plain = fake(false);
    let adb_server = AdbServer::new(&plain.addr().to_string()).unwrap();
    let mut device = AdbDevice::connect(adb_server, "emulator-5554", options).unwrap();
    let err = device.type_text("café").unwrap_err().to_string();
    assert!(err.contains("ADBKeyboard"), "{err}");
}

fn tempfile_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("phonebench-device-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `phonebench fake-adb` on a free port, killed when dropped.
struct FakeAdbProcess {
    child: std::process::Child,
    port: u16,
}

impl FakeAdbProcess {
    fn start() -> FakeAdbProcess {
        use std::io::BufRead;
        let mut child = Command::new(env!("CARGO_BIN_EXE_phonebench"))
            .args(["fake-adb", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        // "fake adb server on 127.0.0.1:PORT with device …"
        let addr = line.split_whitespace().nth(4).unwrap_or_else(|| panic!("unexpected first line {line:?}"));
        let port = addr.rsplit_once(':').unwrap().1.parse().unwrap();
        FakeAdbProcess { child, port }
    }
}

impl Drop for FakeAdbProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Key → (success, ACP, end, steps) of a results folder.
fn verdicts(out: &Path) -> std::collections::BTreeMap<String, (bool, f64, String, u64)> {
    common::episodes(out)
        .into_iter()
        .map(|e| {
            let key = e["key"].as_str().unwrap().to_string();
            (
                key,
                (
                    e["success"].as_bool().unwrap(),
                    e["acp"].as_f64().unwrap(),
                    e["end"].as_str().unwrap().into(),
                    e["steps"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

fn run(cache: &Path, out: &Path, args: &[&str], adb_port: Option<u16>) {
    let mut cmd = common::bin(cache);
    cmd.args(["run", "--suite", "device", "--quiet", "--out"]).arg(out).args(args);
    if let Some(port) = adb_port {
        // The real adb client's own way of naming the server; `adb:SERIAL` alone finds it.
        cmd.env("ADB_SERVER_SOCKET", format!("tcp:127.0.0.1:{port}"));
        cmd.args(["--device", "adb:emulator-5554", "--device-settle-ms", "0"]);
    }
    let output = cmd.output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn a_run_on_the_fake_device_gives_the_in_process_verdicts() {
    let dir = tempfile_dir("run");
    let cache = dir.join("cache");
    // The reference on every task of the `device` suite, and the random agent (same seed, so the
    // same taps when the screens are the same) on a slice of it.
    for (name, args) in [
        ("reference", &["--agent", "reference"][..]),
        ("random", &["--agent", "random", "--tasks", "c*"][..]),
    ] {
        let fake = FakeAdbProcess::start();
        let (on_device, in_process) = (dir.join(format!("{name}-device")), dir.join(format!("{name}-sim")));
        run(&cache, &on_device, args, Some(fake.port));
        run(&cache, &in_process, args, None);
        let (device, sim) = (verdicts(&on_device), verdicts(&in_process));
        assert!(sim.len() >= if name == "reference" { 60 } else { 10 }, "{name}: {} episodes", sim.len());
        assert_eq!(device.keys().collect::<Vec<_>>(), sim.keys().collect::<Vec<_>>());
        for (key, expected) in &sim {
            let got = &device[key];
            // Same verdict; and the same number of steps, except where the reference waits a day
            // for a delivery: a device waits at most 30 s per `wait` (real time), so it waits
            // again.
            assert_eq!((got.0, got.1, &got.2), (expected.0, expected.1, &expected.2), "{name} {key}");
            if !key.starts_with("shop.wait_delivery") {
                assert_eq!(got.3, expected.3, "{name} {key}: steps");
            }
        }
        if name == "reference" {
            assert!(sim.values().all(|v| v.0), "the reference solves every device task");
        }
        // The stored configuration says where the episodes ran (and so a resume cannot mix
        // device and simulated episodes).
        let config: String = rusqlite::Connection::open(on_device.join("results.sqlite"))
            .unwrap()
            .query_row("SELECT config FROM run", [], |r| r.get(0))
            .unwrap();
        let config: serde_json::Value = serde_json::from_str(&config).unwrap();
        assert_eq!(config["device"], "adb:emulator-5554");
    }
}

#[test]
fn a_device_run_refuses_tasks_a_device_cannot_judge() {
    let dir = tempfile_dir("refuse");
    let fake = FakeAdbProcess::start();
    let output = common::bin(&dir.join("cache"))
        .args(["run", "--suite", "starter", "--tasks", "contacts.create", "--quiet", "--out"])
        .arg(dir.join("out"))
        .args(["--device", &format!("adb:emulator-5554@127.0.0.1:{}", fake.port), "--device-settle-ms", "0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        err.contains("cannot run on a device") && err.contains("contacts.create") && err.contains("state"),
        "{err}"
    );
    // A wrong serial is named, with what the server lists.
    let output = common::bin(&dir.join("cache"))
        .args(["run", "--suite", "device", "--quiet", "--out"])
        .arg(dir.join("out2"))
        .args(["--device", &format!("adb:nope@127.0.0.1:{}", fake.port)])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success() && err.contains("no device nope") && err.contains("emulator-5554"),
        "{err}"
    );
}

#[test]
fn agent_mistakes_on_a_device_are_rejected_or_noted_never_infrastructure() {
    let server = fake(true);
    let adb_server = AdbServer::new(&server.addr().to_string()).unwrap();
    let options = DeviceOptions { settle_ms: 0, stable_interval_ms: 0, max_dumps: 2 };
    let mut device = AdbDevice::connect(adb_server, "emulator-5554", options).unwrap();
    device.key(&Key::Home).unwrap();
    let screen = device.screen().unwrap();
    let observation = phonebench_observe::render(&screen.tree, ObservationFormat::SphinxTree);
    // Restarting "the app in front" on the home screen restarts nothing (and stops no launcher).
    let applied =
        apply_action(&mut device, &Action::RestartApp { app: None }, &observation, &screen.tree, &[])
            .unwrap();
    assert_eq!(applied.notes, ["no app is in front to restart"]);
    // System UI, the launcher and keyboards are not apps an agent can open or restart.
    for name in ["com.android.systemui", "com.google.android.apps.nexuslauncher", "com.android.adbkeyboard"] {
        for action in [Action::OpenApp { app: name.into() }, Action::RestartApp { app: Some(name.into()) }] {
            let err = apply_action(&mut device, &action, &observation, &screen.tree, &[]).unwrap_err();
            assert!(matches!(err, phonebench_device::ActError::Rejected(_)), "{action:?}: {err}");
        }
    }
    // An app by its launcher name, through the installed packages.
    apply_action(&mut device, &Action::OpenApp { app: "contacts".into() }, &observation, &screen.tree, &[])
        .unwrap();
    assert_eq!(device.screen().unwrap().package, "com.android.contacts");
    // Control characters are left out, `\r\n` is Enter, as typing on a phone does.
    assert!(device.type_text("ok\r\n\u{7}").is_ok());
}
