//! [`FakeDevice`]: the commands of an Android device's shell (`input`, `uiautomator`, `screencap`,
//! `am`, `pm`, `dumpsys`, `wm`, `getprop`, a few toybox tools), backed by the simulated [`Phone`].
//!
//! Output formats copy Android 13/14 closely enough for the real `adb` client and our own device
//! backend to parse them. A line is parsed by [`super::sh`] exactly as `sh -c` would split it, so a
//! client that quotes badly runs extra commands here too (or is refused, for syntax we do not run).

use std::collections::BTreeMap;

use base64::Engine;
use phonebench_actions::{Action, Key, Point, Swipe, Target};
use phonebench_phone::{Foreground, Phone, system};

use super::sh::{self, Connector};

/// What one command line printed and its exit status.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ShellOutput {
    /// Bytes written to standard output.
    pub stdout: Vec<u8>,
    /// Bytes written to standard error.
    pub stderr: Vec<u8>,
    /// The exit status (of the last command run).
    pub exit: u8,
}

impl ShellOutput {
    /// Success printing `text`.
    fn out(text: impl Into<Vec<u8>>) -> ShellOutput {
        ShellOutput { stdout: text.into(), ..ShellOutput::default() }
    }

    /// Failure with `exit`, printing `text` on stderr.
    fn err(text: impl Into<Vec<u8>>, exit: u8) -> ShellOutput {
        ShellOutput { stderr: text.into(), exit, ..ShellOutput::default() }
    }

    /// Appends another command's output (its status becomes the line's).
    fn append(&mut self, other: ShellOutput) {
        self.stdout.extend(other.stdout);
        self.stderr.extend(other.stderr);
        self.exit = other.exit;
    }
}

/// How the fake device presents itself.
#[derive(Debug, Clone)]
pub struct FakeOptions {
    /// Its serial (`emulator-5554`).
    pub serial: String,
    /// Whether ADBKeyboard (com.android.adbkeyboard/.AdbIME) is installed and the current IME.
    pub adb_keyboard: bool,
}

impl Default for FakeOptions {
    /// `emulator-5554` with ADBKeyboard installed and selected, as AndroidWorld's emulators are.
    fn default() -> Self {
        FakeOptions { serial: "emulator-5554".to_string(), adb_keyboard: true }
    }
}

/// A file's type, size and time as `stat` reports them (sync protocol).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStat {
    /// Type and permissions: `0o100644` for a file, `0o040771` for a directory.
    pub mode: u32,
    /// Size in bytes (0 for directories).
    pub size: u32,
    /// Last modification, seconds since the epoch (the phone's virtual clock).
    pub mtime: u32,
}

/// The ADBKeyboard input method's id.
const ADB_IME: &str = "com.android.adbkeyboard/.AdbIME";
/// ADBKeyboard's package.
const ADB_KEYBOARD_PACKAGE: &str = "com.android.adbkeyboard";
/// Gboard, the stock input method.
const LATIN_IME: &str = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME";
/// The launcher's activity as `dumpsys` names it.
const LAUNCHER_ACTIVITY: &str = ".NexusLauncherActivity";

/// The most bytes all files hold together (a device's free space, kept small: it is RAM).
const MAX_TOTAL_BYTES: usize = 64 << 20;
/// The most bytes one file holds.
const MAX_FILE_BYTES: usize = 32 << 20;
/// Argv entries kept in [`FakeDevice::executed`]: a long-running server must not grow forever.
const MAX_EXECUTED: usize = 100_000;

/// At most this many files (each write sums the sizes of the others).
const MAX_FILES: usize = 2_000;
/// How deep `sh -c` may nest.
const MAX_NESTING: usize = 8;

/// Folders that always exist (besides those holding files). `/storage/emulated/0` is `/sdcard`.
const FIXED_DIRS: &[&str] = &[
    "/",
    "/data",
    "/data/local",
    "/data/local/tmp",
    "/dev",
    "/sdcard",
    "/storage",
    "/storage/emulated",
    "/storage/self",
    "/system",
    "/system/bin",
    "/sdcard/Alarms",
    "/sdcard/Android",
    "/sdcard/DCIM",
    "/sdcard/Documents",
    "/sdcard/Download",
    "/sdcard/Movies",
    "/sdcard/Music",
    "/sdcard/Notifications",
    "/sdcard/Pictures",
    "/sdcard/Podcasts",
    "/sdcard/Ringtones",
];

/// A file in the device's memory.
#[derive(Debug, Clone)]
struct File {
    data: Vec<u8>,
    mtime: u32,
}

/// A simulated phone behind an Android shell. See the module documentation.
#[derive(Debug)]
pub struct FakeDevice {
    phone: Phone,
    options: FakeOptions,
    /// Files by normalised absolute path (`/sdcard/…` for shared storage).
    files: BTreeMap<String, File>,
    /// `settings` values by (namespace, key).
    settings: BTreeMap<(String, String), String>,
    /// The selected input method.
    ime: String,
    executed: Vec<Vec<String>>,
}

/// What running one simple command asks of the line: go on, or stop (`exit`).
enum Flow {
    Continue,
    Exit,
}

impl FakeDevice {
    /// A device showing `phone`.
    pub fn new(phone: Phone, options: FakeOptions) -> FakeDevice {
        let ime = if options.adb_keyboard { ADB_IME } else { LATIN_IME }.to_string();
        FakeDevice {
            phone,
            options,
            files: BTreeMap::new(),
            settings: BTreeMap::new(),
            ime,
            executed: Vec::new(),
        }
    }

    /// Its serial number.
    pub fn serial(&self) -> &str {
        &self.options.serial
    }

    /// Runs one command line as `sh -c LINE` would on the device.
    pub fn shell(&mut self, line: &str) -> ShellOutput {
        self.run_line(line, 0)
    }

    /// A file's content for `adb pull` (sync RECV). Err = the message adb prints
    /// ("No such file or directory", "Is a directory").
    pub fn read_file(&self, path: &str) -> Result<Vec<u8>, String> {
        let path = normalize(path);
        if path == "/dev/null" {
            return Ok(Vec::new());
        }
        if let Some(file) = self.files.get(&path) {
            return Ok(file.data.clone());
        }
        if self.is_dir(&path) {
            return Err("Is a directory".to_string());
        }
        Err("No such file or directory".to_string())
    }

    /// `stat` for sync STAT; None when it does not exist. `/`, `/sdcard`, `/sdcard/`,
    /// `/storage/emulated/0`, `/data/local/tmp` are directories.
    pub fn stat(&self, path: &str) -> Option<FileStat> {
        let path = normalize(path);
        if let Some(file) = self.files.get(&path) {
            let size = u32::try_from(file.data.len()).unwrap_or(u32::MAX);
            return Some(FileStat { mode: 0o100644, size, mtime: file.mtime });
        }
        if path == "/dev/null" {
            return Some(FileStat { mode: 0o020666, size: 0, mtime: self.boot_secs() });
        }
        self.is_dir(&path).then(|| FileStat { mode: 0o040771, size: 0, mtime: self.boot_secs() })
    }

    /// argv of every simple command run so far, in order (for tests). Only the most recent
    /// entries are kept on a long-running server.
    pub fn executed(&self) -> &[Vec<String>] {
        &self.executed
    }

    /// The simulated phone.
    pub fn phone(&self) -> &Phone {
        &self.phone
    }

    /// The simulated phone, to change (task setup, reset).
    pub fn phone_mut(&mut self) -> &mut Phone {
        &mut self.phone
    }

    fn run_line(&mut self, line: &str, depth: usize) -> ShellOutput {
        let commands = match sh::parse(line) {
            Ok(commands) => commands,
            Err(e) => return ShellOutput::err(format!("{}\n", e.message()), 2),
        };
        let mut output = ShellOutput::default();
        for command in commands {
            let run = match command.connector {
                Connector::Always => true,
                Connector::And => output.exit == 0,
                Connector::Or => output.exit != 0,
            };
            if !run {
                continue;
            }
            if self.executed.len() >= MAX_EXECUTED {
                self.executed.drain(..MAX_EXECUTED / 2);
            }
            // Pathname expansion happens now, after the commands before this one ran.
            let argv = self.expand(&command);
            // The log is for tests: each entry is kept to its first 4 KiB of arguments, so a
            // client sending huge command lines cannot grow it past ~400 MiB.
            let mut kept = 0usize;
            let logged: Vec<String> = argv
                .iter()
                .map(|a| {
                    let room = 4096usize.saturating_sub(kept);
                    let part: String = a.chars().take(room).collect();
                    kept += part.len();
                    part
                })
                .collect();
            self.executed.push(logged);
            let last = output.exit;
            let (result, flow) = self.run_command(&argv, last, depth);
            output.append(result);
            if let Flow::Exit = flow {
                break;
            }
        }
        output
    }

    /// Runs one simple command; `last` is the previous command's status (for `exit`).
    fn run_command(&mut self, argv: &[String], last: u8, depth: usize) -> (ShellOutput, Flow) {
        let Some(first) = argv.first() else { return (ShellOutput::default(), Flow::Continue) };
        // `/system/bin/input` is `input`.
        let name = ["/system/bin/", "/system/xbin/", "/vendor/bin/", "/bin/"]
            .iter()
            .find_map(|prefix| first.strip_prefix(prefix))
            .filter(|rest| !rest.is_empty() && !rest.contains('/'))
            .unwrap_or(first);
        let args = &argv[1..];
        let output = match name {
            "exit" => {
                let status = match args.first() {
                    None => last,
                    Some(n) => match n.parse::<i64>() {
                        Ok(n) => (n & 0xff) as u8,
                        Err(_) => {
                            return (
                                ShellOutput::err(format!("/system/bin/sh: exit: {n}: bad number\n"), 2),
                                Flow::Exit,
                            );
                        }
                    },
                };
                return (ShellOutput { exit: status, ..ShellOutput::default() }, Flow::Exit);
            }
            "sh" => self.nested_sh(args, depth),
            "true" | ":" => ShellOutput::default(),
            "false" => ShellOutput { exit: 1, ..ShellOutput::default() },
            "echo" => echo(args),
            "id" => ShellOutput::out(
                "uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),\
                 1015(sdcard_rw),1028(sdcard_r),3001(net_bt_admin),3002(net_bt),3003(inet),\
                 3006(net_bw_stats),3009(readproc),3011(uhid) context=u:r:shell:s0\n",
            ),
            "whoami" => ShellOutput::out("shell\n"),
            "pwd" => ShellOutput::out("/\n"),
            "cd" => self.cd(args),
            "sleep" => self.sleep(args),
            "cat" => self.cat(args),
            "rm" => self.rm(args),
            "ls" => self.ls(args),
            "touch" => self.touch(args),
            "mkdir" => self.mkdir(args),
            "getprop" => self.getprop(args),
            "settings" => self.settings(args),
            "wm" => self.wm(args),
            "dumpsys" => self.dumpsys(args),
            "ime" => self.ime_command(args),
            "pm" => self.pm(args),
            "cmd" => self.cmd(args),
            "uiautomator" => self.uiautomator(args),
            "screencap" => self.screencap(args),
            "input" => self.input(args),
            "am" => self.am(args),
            "monkey" => self.monkey(args),
            other => ShellOutput::err(format!("/system/bin/sh: {other}: inaccessible or not found\n"), 127),
        };
        (output, Flow::Continue)
    }

    /// `sh -c LINE`: the line runs in a nested shell (its `exit` ends only that shell).
    fn nested_sh(&mut self, args: &[String], depth: usize) -> ShellOutput {
        match args {
            [flag, line, ..] if flag == "-c" => {
                if depth >= MAX_NESTING {
                    return ShellOutput::err("/system/bin/sh: too many nested shells\n", 2);
                }
                self.run_line(line, depth + 1)
            }
            [] => ShellOutput::default(),
            _ => ShellOutput::err("/system/bin/sh: only `sh -c LINE` is supported\n", 2),
        }
    }

    // --- the phone ------------------------------------------------------------------------

    /// Makes sure the current screen is rendered, so that the next tap resolves its point on the
    /// screen as it is now (and `dumpsys` reports what shows).
    fn settle(&mut self) -> Result<(), String> {
        self.phone.shared_tree().map(|_| ()).map_err(|e| e.to_string())
    }

    /// Applies an action and renders the screen it leads to; a refusal is `Error: …`, status 1.
    fn act(&mut self, action: &Action) -> ShellOutput {
        let result = self.phone.apply(action).map_err(|e| e.to_string()).and_then(|_| self.settle());
        match result {
            Ok(()) => ShellOutput::default(),
            Err(e) => ShellOutput::err(format!("Error: {e}\n"), 1),
        }
    }

    /// The component in front, as `dumpsys` prints it.
    fn focused_component(&self) -> String {
        match self.phone.foreground() {
            Foreground::Home | Foreground::Overview => format!("{}/{LAUNCHER_ACTIVITY}", system::LAUNCHER),
            Foreground::App(i) => {
                let package = self
                    .phone
                    .catalog()
                    .apps()
                    .get(i)
                    .map(|p| p.manifest.package.clone())
                    .unwrap_or_default();
                let screen = self.phone.current_screen().map(|(_, s)| s.to_string()).unwrap_or_default();
                // The screen name as the activity class (a class without a package): trajectories
                // read through adb then name screens exactly as in-process episodes do.
                format!("{package}/{screen}")
            }
        }
    }

    /// The app id of the installed app whose Android package is `package`.
    fn app_by_package(&self, package: &str) -> Option<(String, String)> {
        self.phone
            .catalog()
            .apps()
            .iter()
            .find(|p| p.manifest.package == package)
            .map(|p| (p.manifest.id.clone(), p.manifest.entry.clone()))
    }

    /// `cmd package query-activities [--brief] -a android.intent.action.MAIN -c
    /// android.intent.category.LAUNCHER`: the launcher activities, `PACKAGE/ACTIVITY` with
    /// `--brief` (one per installed app; the launcher, System UI and keyboards have none).
    fn cmd(&mut self, args: &[String]) -> ShellOutput {
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        match words.as_slice() {
            ["package", "query-activities", rest @ ..]
                if rest.contains(&"android.intent.category.LAUNCHER") =>
            {
                let brief = rest.contains(&"--brief");
                let mut out = String::new();
                for app in self.phone.catalog().apps() {
                    let (package, entry) = (&app.manifest.package, &app.manifest.entry);
                    if brief {
                        out.push_str(&format!("{package}/{entry}\n"));
                    } else {
                        out.push_str(&format!(
                            "Activity #0:\n  ActivityInfo:\n    name={entry}\n    packageName={package}\n"
                        ));
                    }
                }
                ShellOutput::out(out)
            }
            ["package", ..] => {
                usage_error("cmd", "only `cmd package query-activities … LAUNCHER` is supported")
            }
            [service, ..] => ShellOutput::err(format!("cmd: Can't find service: {service}\n"), 20),
            [] => usage_error("cmd", "no service given"),
        }
    }

    /// Every installed package: (package, whether it is a system package), sorted.
    fn packages(&self) -> Vec<(String, bool)> {
        let mut all: Vec<(String, bool)> =
            self.phone.catalog().apps().iter().map(|p| (p.manifest.package.clone(), false)).collect();
        all.push((system::LAUNCHER.to_string(), true));
        all.push((system::KEYBOARD.to_string(), true));
        all.push((system::SYSTEMUI.to_string(), true));
        if self.options.adb_keyboard {
            all.push((ADB_KEYBOARD_PACKAGE.to_string(), false));
        }
        all.sort();
        all.dedup_by(|a, b| a.0 == b.0);
        all
    }

    // --- input ----------------------------------------------------------------------------

    fn input(&mut self, args: &[String]) -> ShellOutput {
        const SOURCES: &[&str] = &[
            "keyboard",
            "mouse",
            "joystick",
            "touchnavigation",
            "touchpad",
            "trackball",
            "dpad",
            "stylus",
            "gamepad",
            "touchscreen",
            "rotaryencoder",
        ];
        let mut args = args;
        // `input [-d DISPLAY] [SOURCE] COMMAND …`, in either order.
        loop {
            match args {
                [flag, _, rest @ ..] if flag == "-d" => args = rest,
                [source, rest @ ..] if SOURCES.contains(&source.as_str()) => args = rest,
                _ => break,
            }
        }
        let Some((command, rest)) = args.split_first() else {
            return usage_error("input", "no command given");
        };
        match command.as_str() {
            "tap" => match parse_points(rest, 2) {
                Some(p) => self.act(&Action::Tap { target: Target::Point(Point::new(p[0], p[1])) }),
                None => usage_error("input", "tap needs X Y"),
            },
            "swipe" | "draganddrop" => {
                let Some(p) = parse_points(rest, 4) else {
                    return usage_error("input", &format!("{command} needs X1 Y1 X2 Y2 [DURATION(ms)]"));
                };
                let duration = match rest.get(4) {
                    None => 0.0,
                    Some(ms) => match parse_number(ms) {
                        Some(ms) => ms,
                        None => return usage_error("input", &format!("bad duration `{ms}`")),
                    },
                };
                let (from, to) = (Point::new(p[0], p[1]), Point::new(p[2], p[3]));
                let close = (i64::from(p[0]) - i64::from(p[2])).abs() <= 10
                    && (i64::from(p[1]) - i64::from(p[3])).abs() <= 10;
                if close && duration >= 500.0 {
                    self.act(&Action::LongPress { target: Target::Point(from) })
                } else {
                    self.act(&Action::Swipe(Swipe::Between { from, to }))
                }
            }
            "keyevent" => {
                let keys: Vec<&String> =
                    rest.iter().filter(|a| !matches!(a.as_str(), "--longpress" | "--doubletap")).collect();
                if keys.is_empty() {
                    return usage_error("input", "keyevent needs a key code");
                }
                let mut parsed = Vec::new();
                for key in keys {
                    match parse_key(key) {
                        Some(k) => parsed.push(k),
                        None => return usage_error("input", &format!("unknown key code `{key}`")),
                    }
                }
                // Each key acts on the screen the previous one left (`apply` renders it first); the
                // screen after the last is rendered once, not after every key of a long batch.
                for key in parsed {
                    if let Err(e) = self.phone.apply(&Action::Key { key }) {
                        return ShellOutput::err(format!("Error: {e}\n"), 1);
                    }
                }
                match self.settle() {
                    Ok(()) => ShellOutput::default(),
                    Err(e) => ShellOutput::err(format!("Error: {e}\n"), 1),
                }
            }
            "text" => {
                let Some(text) = rest.first() else { return usage_error("input", "text needs a string") };
                let text = crate::adb::input::android_input_text(text);
                if let Some(bad) = text.chars().find(|c| !(' '..='~').contains(c)) {
                    return ShellOutput::err(
                        format!(
                            "Exception occurred while executing 'text':\n\
                             java.lang.IllegalArgumentException: the virtual keyboard's key map \
                             cannot type {bad:?} (U+{:04X})\n",
                            bad as u32
                        ),
                        255,
                    );
                }
                if text.is_empty() {
                    return ShellOutput::default();
                }
                self.act(&Action::Type { text, target: None, clear: false, enter: false })
            }
            "press" => self.act(&Action::Key { key: Key::Other("DPAD_CENTER".into()) }),
            "roll" | "motionevent" | "keycombination" | "scroll" => {
                ShellOutput::err(format!("Error: `input {command}` is not supported by this device\n"), 1)
            }
            other => usage_error("input", &format!("Unknown command: {other}")),
        }
    }

    // --- am, monkey -----------------------------------------------------------------------

    fn am(&mut self, args: &[String]) -> ShellOutput {
        let Some((command, rest)) = args.split_first() else {
            return usage_error("am", "no command given");
        };
        match command.as_str() {
            "start" | "start-activity" => self.am_start(rest),
            "force-stop" | "kill" => {
                let packages: Vec<&String> = skip_user(rest);
                let Some(package) = packages.first() else {
                    return usage_error("am", &format!("{command} needs a package"));
                };
                // `am kill` only kills a background process: nothing a screen shows changes.
                let Some((id, _)) = self.app_by_package(package).filter(|_| command == "force-stop") else {
                    return ShellOutput::default();
                };
                match self.phone.force_stop(&id).map_err(|e| e.to_string()).and_then(|_| self.settle()) {
                    Ok(()) => ShellOutput::default(),
                    Err(e) => ShellOutput::err(format!("Error: {e}\n"), 1),
                }
            }
            "broadcast" => self.am_broadcast(rest),
            other => ShellOutput::err(format!("Unknown command: {other}\n"), 255),
        }
    }

    fn am_start(&mut self, args: &[String]) -> ShellOutput {
        let intent = match Intent::parse(args) {
            Ok(intent) => intent,
            Err(e) => return ShellOutput::err(format!("Error: {e}\n"), 1),
        };
        let mut out = format!("Starting: Intent {{ {} }}\n", intent.describe());
        if intent.categories.iter().any(|c| c == "android.intent.category.HOME")
            || intent.component.as_ref().is_some_and(|(p, _)| p == system::LAUNCHER)
        {
            let result = self.act(&Action::Key { key: Key::Home });
            if result.exit != 0 {
                return result;
            }
            if intent.wait {
                out.push_str(&wait_report(&format!("{}/{LAUNCHER_ACTIVITY}", system::LAUNCHER)));
            }
            return ShellOutput::out(out);
        }
        let Some((package, activity)) = intent.component.clone() else {
            return ShellOutput {
                stdout: out.into_bytes(),
                stderr: format!(
                    "Error: Activity not started, unable to resolve Intent {{ {} flg=0x10000000 }}\n",
                    intent.describe()
                )
                .into_bytes(),
                exit: 1,
            };
        };
        let full = if let Some(short) = activity.strip_prefix('.') {
            format!("{package}.{short}")
        } else if activity.contains('.') {
            activity.clone()
        } else {
            format!("{package}.{activity}")
        };
        let Some((id, _)) = self.app_by_package(&package) else {
            return ShellOutput {
                stdout: out.into_bytes(),
                stderr: format!("Error type 3\nError: Activity class {{{package}/{full}}} does not exist.\n")
                    .into_bytes(),
                exit: 1,
            };
        };
        // `PKG/.S`, `PKG/PKG.S` and `PKG/S` name screen S; any other activity (a real app's
        // `.MainActivity`) is the launcher activity: the entry screen.
        let screen = full.strip_prefix(&format!("{package}.")).unwrap_or(&full).to_string();
        let known = self
            .phone
            .catalog()
            .apps()
            .iter()
            .any(|p| p.manifest.package == package && p.screens.contains_key(&screen));
        if intent.stop_first
            && let Err(e) = self.phone.force_stop(&id)
        {
            return ShellOutput::err(format!("Error: {e}\n"), 1);
        }
        let started = self
            .phone
            .start_app(&id, known.then_some(screen.as_str()), &BTreeMap::new())
            .map_err(|e| e.to_string())
            .and_then(|_| self.settle());
        if let Err(e) = started {
            return ShellOutput {
                stdout: out.into_bytes(),
                stderr: format!("Error: {e}\n").into_bytes(),
                exit: 1,
            };
        }
        if intent.wait {
            out.push_str(&wait_report(&self.focused_component()));
        }
        ShellOutput::out(out)
    }

    fn am_broadcast(&mut self, args: &[String]) -> ShellOutput {
        let intent = match Intent::parse(args) {
            Ok(intent) => intent,
            Err(e) => return ShellOutput::err(format!("Error: {e}\n"), 1),
        };
        let extras = if intent.extras.is_empty() { "" } else { " (has extras)" };
        let action = intent.action.clone().unwrap_or_default();
        let out = format!(
            "Broadcasting: Intent {{ act={action} flg=0x400000{extras} }}\nBroadcast completed: result=0\n"
        );
        // ADBKeyboard only receives while it is the selected input method.
        if !(self.options.adb_keyboard && self.ime == ADB_IME) {
            return ShellOutput::out(out);
        }
        let msg = intent.extras.get("msg").cloned();
        let result = match (action.as_str(), msg) {
            ("ADB_INPUT_TEXT", Some(text)) => self.type_verbatim(text, false),
            ("ADB_INPUT_B64", Some(b64)) => {
                match base64::engine::general_purpose::STANDARD.decode(b64.trim().as_bytes()) {
                    Ok(bytes) => self.type_verbatim(String::from_utf8_lossy(&bytes).into_owned(), false),
                    // ADBKeyboard logs the failure and types nothing; the broadcast still completes.
                    Err(_) => ShellOutput::default(),
                }
            }
            ("ADB_CLEAR_TEXT", _) => self.type_verbatim(String::new(), true),
            ("ADB_INPUT_CODE", _) => match intent.extras.get("code").and_then(|c| parse_key(c)) {
                Some(key) => self.act(&Action::Key { key }),
                None => ShellOutput::default(),
            },
            _ => ShellOutput::default(),
        };
        if result.exit != 0 {
            return result;
        }
        ShellOutput::out(out)
    }

    /// Types `text` as an IME commits it (no `%s` rule, any character), clearing first if asked.
    fn type_verbatim(&mut self, text: String, clear: bool) -> ShellOutput {
        if text.is_empty() && !clear {
            return ShellOutput::default();
        }
        self.act(&Action::Type { text, target: None, clear, enter: false })
    }

    fn monkey(&mut self, args: &[String]) -> ShellOutput {
        let mut out = String::new();
        for arg in args {
            out.push_str(&format!("  bash arg: {arg}\n"));
        }
        let package = args.iter().position(|a| a == "-p").and_then(|i| args.get(i + 1));
        let Some(package) = package else {
            return ShellOutput {
                stdout: out.into_bytes(),
                stderr: b"** Error: no package given (-p PKG)\n".to_vec(),
                exit: 1,
            };
        };
        let Some((id, _)) = self.app_by_package(package) else {
            return ShellOutput {
                stdout: out.into_bytes(),
                stderr: b"** No activities found to run, monkey aborted.\n".to_vec(),
                exit: 252,
            };
        };
        let result = self.act(&Action::OpenApp { app: id });
        if result.exit != 0 {
            return result;
        }
        out.push_str(&format!("args: [{}]\n", args.join(", ")));
        out.push_str("Events injected: 1\n");
        out.push_str("## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)\n");
        ShellOutput::out(out)
    }

    // --- uiautomator, screencap -----------------------------------------------------------

    fn uiautomator(&mut self, args: &[String]) -> ShellOutput {
        let Some((command, rest)) = args.split_first() else {
            return ShellOutput::err("Usage: uiautomator <subcommand> [options]\n", 1);
        };
        if command != "dump" {
            return ShellOutput::err(format!("Unknown command: {command}\n"), 1);
        }
        let file = rest.iter().find(|a| !a.starts_with("--")).map(String::as_str);
        let file = file.unwrap_or("/sdcard/window_dump.xml");
        let tree = match self.phone.shared_tree() {
            Ok(tree) => tree,
            Err(e) => return ShellOutput::err(format!("ERROR: could not get idle state: {e}\n"), 1),
        };
        let xml = phonebench_uitree::write_xml(&tree);
        let done = format!("UI hierchary dumped to: {file}\n");
        if matches!(file, "/dev/tty" | "/dev/stdout") {
            let mut stdout = xml.into_bytes();
            stdout.extend(done.into_bytes());
            return ShellOutput { stdout, ..ShellOutput::default() };
        }
        match self.write_file(file, xml.into_bytes()) {
            Ok(()) => ShellOutput::out(done),
            Err(e) => ShellOutput::err(format!("ERROR: could not write {file}: {e}\n"), 1),
        }
    }

    fn screencap(&mut self, args: &[String]) -> ShellOutput {
        let mut png = false;
        let mut file = None;
        let mut i = 0;
        while i < args.len() {
            match args[i].as_str() {
                "-p" => png = true,
                "-d" => i += 1,
                "-a" | "-j" => {}
                "-h" => return ShellOutput::err("usage: screencap [-hp] [-d display-id] [FILENAME]\n", 1),
                flag if flag.starts_with('-') && flag.len() > 1 => {
                    return ShellOutput::err(format!("screencap: invalid option -- '{}'\n", &flag[1..]), 1);
                }
                path => file = Some(path.to_string()),
            }
            i += 1;
        }
        if file.as_deref().is_some_and(|f| f.ends_with(".png")) {
            png = true;
        }
        let pixmap = match self.phone.screenshot() {
            Ok(pixmap) => pixmap,
            Err(e) => return ShellOutput::err(format!("Error: {e}\n"), 1),
        };
        let bytes = if png {
            match phonebench_pixels::encode_png(&pixmap) {
                Ok(bytes) => bytes,
                Err(e) => return ShellOutput::err(format!("Error: {e}\n"), 1),
            }
        } else {
            raw_screencap(&pixmap)
        };
        match file {
            None => ShellOutput::out(bytes),
            Some(path) if matches!(path.as_str(), "/dev/stdout" | "/dev/tty") => ShellOutput::out(bytes),
            Some(path) => match self.write_file(&path, bytes) {
                Ok(()) => ShellOutput::default(),
                Err(e) => ShellOutput::err(format!("Error opening file: {path} ({e})\n"), 1),
            },
        }
    }

    // --- dumpsys, wm, getprop, settings, ime, pm ------------------------------------------

    fn dumpsys(&mut self, args: &[String]) -> ShellOutput {
        let service = args.first().map(String::as_str).unwrap_or("");
        let what = args.get(1).map(String::as_str);
        if let Err(e) = self.settle() {
            return ShellOutput::err(format!("Error: {e}\n"), 1);
        }
        let component = self.focused_component();
        let record = format!("ActivityRecord{{4a5b6c u0 {component} t12}}");
        let focus = if self.phone.shade_open() {
            "Window{5c6d7e u0 NotificationShade}".to_string()
        } else {
            format!("Window{{1f2e3d u0 {component}}}")
        };
        let d = self.phone.display();
        let nav = d.nav_bar_h().round() as u32;
        let status = d.status_bar_h().round() as u32;
        match service {
            "window" => {
                let mut out = String::new();
                if what.is_none() || what == Some("displays") {
                    out.push_str("WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n");
                    out.push_str(&format!(
                        "  Display: mDisplayId=0 rootTasks=1\n    init={w}x{h} {dpi}dpi cur={w}x{h} app={w}x{app_h} \
                         rng={w}x{rng_lo}-{h}x{rng_hi}\n    deferred=false mLayoutNeeded=false mTouchExcludeRegion=SkRegion()\n",
                        w = d.width,
                        h = d.height,
                        dpi = d.dpi,
                        app_h = d.height.saturating_sub(nav),
                        rng_lo = d.width.saturating_sub(status + nav),
                        rng_hi = d.height.saturating_sub(status + nav),
                    ));
                    out.push_str("  mCurrentRotation=ROTATION_0\n");
                    out.push_str(&format!("  mCurrentFocus={focus}\n  mFocusedApp={record}\n"));
                }
                if what.is_none() || what == Some("windows") {
                    out.push_str("WINDOW MANAGER WINDOWS (dumpsys window windows)\n");
                    out.push_str(&format!("  Window #0 {focus}:\n    mDisplayId=0 rootTaskId=12 mSession=Session{{7a8b9c 1234:u0a10100}}\n"));
                    out.push_str(&format!(
                        "    mHasSurface=true isReadyForDisplay()=true mWindowRemovalAllowed=false\n\n  mGlobalConfiguration={{1.0 ?mcc?mnc [en_US] ldltr sw{sw}dp w{sw}dp h{hdp}dp {dpi}dpi nrml long port finger -keyb/v/h -nav/h winConfig={{ mBounds=Rect(0, 0 - {w}, {h}) mAppBounds=Rect(0, 0 - {w}, {app_h}) mMaxBounds=Rect(0, 0 - {w}, {h}) mDisplayRotation=ROTATION_0 mWindowingMode=fullscreen mActivityType=undefined mAlwaysOnTop=undefined mRotation=ROTATION_0}} s.1 fontWeightAdjustment=0}}\n",
                        sw = (d.width as f32 / d.density()).round() as u32,
                        hdp = (d.height as f32 / d.density()).round() as u32,
                        dpi = d.dpi,
                        w = d.width,
                        h = d.height,
                        app_h = d.height.saturating_sub(nav),
                    ));
                    out.push_str(&format!("  mCurrentFocus={focus}\n  mFocusedApp={record}\n"));
                    out.push_str("  mInputMethodTarget=null\n  mCurrentRotation=ROTATION_0\n");
                }
                if out.is_empty() {
                    // Another section: nothing to say, as for a section with no entries.
                    out.push_str(&format!("  mCurrentFocus={focus}\n  mFocusedApp={record}\n"));
                }
                ShellOutput::out(out)
            }
            "activity" => {
                let out = format!(
                    "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\nDisplay #0 (activities from top to bottom):\n  \
                     * Task{{8d9e0f #12 type=standard A=10100:{package} U=0 visible=true mode=fullscreen translucent=false sz=1}}\n    \
                     topResumedActivity={record}\n    * Hist  #0: {record}\n\n  mResumedActivity: {record}\n\n  \
                     ResumedActivity: {record}\n",
                    package = component.split('/').next().unwrap_or(""),
                );
                ShellOutput::out(out)
            }
            "input_method" => {
                let shown = self.phone.keyboard_shown();
                ShellOutput::out(format!(
                    "Current Input Method Manager state:\n  mCurrentMethodId={ime}\n  mInputShown={shown}\n  \
                     mIsInputViewShown={shown}\n  mCurMethodId={ime}\n",
                    ime = self.ime
                ))
            }
            "display" => ShellOutput::out(format!(
                "DISPLAY MANAGER (dumpsys display)\n  mDefaultDisplayDeviceInfo: DisplayDeviceInfo{{\"Built-in Screen\": {w} x {h}, \
                 density {dpi}}}\n  mBaseDisplayInfo=DisplayInfo{{\"Built-in Screen\", displayId 0, real {w} x {h}, \
                 rotation 0, density {dpi}, state ON}}\n",
                w = d.width,
                h = d.height,
                dpi = d.dpi
            )),
            "" => ShellOutput::err("dumpsys: dumping every service is not supported; name one\n", 1),
            other => ShellOutput::out(format!("Can't find service: {other}\n")),
        }
    }

    fn wm(&mut self, args: &[String]) -> ShellOutput {
        let d = self.phone.display();
        match args.first().map(String::as_str) {
            Some("size") if args.len() == 1 => {
                ShellOutput::out(format!("Physical size: {}x{}\n", d.width, d.height))
            }
            Some("density") if args.len() == 1 => ShellOutput::out(format!("Physical density: {}\n", d.dpi)),
            Some("size" | "density") => ShellOutput::err(
                "Error: this device's screen cannot be resized (the simulated display is fixed)\n",
                1,
            ),
            _ => usage_error("wm", "usage: wm size | wm density"),
        }
    }

    fn getprop(&self, args: &[String]) -> ShellOutput {
        let props = [
            ("ro.build.version.sdk", "34".to_string()),
            ("ro.build.version.release", "14".to_string()),
            ("ro.product.model", "phonebench".to_string()),
            ("ro.product.manufacturer", "phonebench".to_string()),
            ("ro.product.device", "phonebench".to_string()),
            ("ro.serialno", self.options.serial.clone()),
            ("sys.boot_completed", "1".to_string()),
            ("ro.kernel.qemu", "1".to_string()),
            ("ro.build.type", "userdebug".to_string()),
            ("ro.product.cpu.abi", "x86_64".to_string()),
            ("persist.sys.locale", "en-US".to_string()),
        ];
        match args.first() {
            Some(key) => {
                let value = props.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str()).unwrap_or("");
                ShellOutput::out(format!("{value}\n"))
            }
            None => {
                let mut sorted: Vec<&(&str, String)> = props.iter().collect();
                sorted.sort();
                ShellOutput::out(sorted.iter().map(|(k, v)| format!("[{k}]: [{v}]\n")).collect::<String>())
            }
        }
    }

    fn settings(&mut self, args: &[String]) -> ShellOutput {
        let args: Vec<&String> = skip_user(args);
        match args.as_slice() {
            [verb, namespace, key] if *verb == "get" => {
                if namespace.as_str() == "secure" && key.as_str() == "default_input_method" {
                    return ShellOutput::out(format!("{}\n", self.ime));
                }
                let value = self.settings.get(&((*namespace).clone(), (*key).clone()));
                ShellOutput::out(format!("{}\n", value.map(String::as_str).unwrap_or("null")))
            }
            [verb, namespace, key, value, ..] if *verb == "put" => {
                if namespace.as_str() == "secure" && key.as_str() == "default_input_method" {
                    self.ime = (*value).clone();
                }
                self.settings.insert(((*namespace).clone(), (*key).clone()), (*value).clone());
                ShellOutput::default()
            }
            [verb, namespace, key] if *verb == "delete" => {
                let removed = self.settings.remove(&((*namespace).clone(), (*key).clone())).is_some();
                ShellOutput::out(format!("Deleted {} rows\n", u8::from(removed)))
            }
            [verb, namespace] if *verb == "list" => ShellOutput::out(
                self.settings
                    .iter()
                    .filter(|((ns, _), _)| ns == *namespace)
                    .map(|((_, k), v)| format!("{k}={v}\n"))
                    .collect::<String>(),
            ),
            _ => usage_error("settings", "usage: settings get|put|delete|list NAMESPACE [KEY [VALUE]]"),
        }
    }

    fn ime_command(&mut self, args: &[String]) -> ShellOutput {
        let mut methods = Vec::new();
        if self.options.adb_keyboard {
            methods.push(ADB_IME);
        }
        methods.push(LATIN_IME);
        match args.first().map(String::as_str) {
            Some("list") => ShellOutput::out(methods.iter().map(|m| format!("{m}\n")).collect::<String>()),
            Some(verb @ ("set" | "enable" | "disable")) => {
                let Some(id) = args.iter().skip(1).find(|a| !a.starts_with('-')) else {
                    return usage_error("ime", &format!("{verb} needs an input method id"));
                };
                if !methods.contains(&id.as_str()) {
                    return ShellOutput::err(
                        format!("Unknown input method {id} cannot be selected for user #0\n"),
                        255,
                    );
                }
                let message = match verb {
                    "set" => {
                        self.ime = id.clone();
                        format!("Input method {id} selected for user #0\n")
                    }
                    "enable" => format!("Input method {id}: already enabled for user #0\n"),
                    _ => format!("Input method {id}: now disabled for user #0\n"),
                };
                ShellOutput::out(message)
            }
            _ => usage_error("ime", "usage: ime list|set|enable|disable"),
        }
    }

    fn pm(&mut self, args: &[String]) -> ShellOutput {
        let Some((command, rest)) = args.split_first() else { return usage_error("pm", "no command given") };
        let rest: Vec<&String> = skip_user(rest);
        match command.as_str() {
            "list" => {
                if rest.first().map(|s| s.as_str()) != Some("packages") {
                    return usage_error("pm", "only `pm list packages` is supported");
                }
                let mut third_party = false;
                let mut paths = false;
                let mut filter = None;
                for arg in &rest[1..] {
                    match arg.as_str() {
                        "-3" => third_party = true,
                        "-f" => paths = true,
                        flag if flag.starts_with('-') => {}
                        text => filter = Some(text.to_string()),
                    }
                }
                let out: String = self
                    .packages()
                    .into_iter()
                    .filter(|(_, system)| !(third_party && *system))
                    .filter(|(p, _)| filter.as_deref().is_none_or(|f| p.contains(f)))
                    .map(|(p, _)| {
                        if paths {
                            format!("package:/data/app/{p}/base.apk={p}\n")
                        } else {
                            format!("package:{p}\n")
                        }
                    })
                    .collect();
                ShellOutput::out(out)
            }
            "path" => match rest.first() {
                Some(p) if self.packages().iter().any(|(q, _)| q == *p) => {
                    ShellOutput::out(format!("package:/data/app/{p}/base.apk\n"))
                }
                Some(_) => ShellOutput { exit: 1, ..ShellOutput::default() },
                None => usage_error("pm", "path needs a package"),
            },
            "clear" => {
                let Some(package) = rest.first() else { return usage_error("pm", "clear needs a package") };
                if let Some((id, _)) = self.app_by_package(package) {
                    let cleared =
                        self.phone.clear_data(&id).map_err(|e| e.to_string()).and_then(|_| self.settle());
                    return match cleared {
                        Ok(()) => ShellOutput::out("Success\n"),
                        Err(e) => ShellOutput {
                            stdout: b"Failed\n".to_vec(),
                            stderr: format!("{e}\n").into_bytes(),
                            exit: 1,
                        },
                    };
                }
                if self.packages().iter().any(|(q, _)| q == *package) {
                    ShellOutput::out("Success\n")
                } else {
                    ShellOutput { stdout: b"Failed\n".to_vec(), exit: 1, ..ShellOutput::default() }
                }
            }
            other => usage_error("pm", &format!("Unknown command: {other}")),
        }
    }

    // --- files and time -------------------------------------------------------------------

    fn boot_secs(&self) -> u32 {
        secs(phonebench_phone::CLOCK_START_MS)
    }

    /// The names in folder `dir` (a normalised path), sorted.
    fn children(&self, dir: &str) -> Vec<String> {
        let prefix = if dir == "/" { "/".to_string() } else { format!("{dir}/") };
        let mut names: Vec<String> = FIXED_DIRS
            .iter()
            .copied()
            .chain(self.files.keys().map(String::as_str))
            .filter_map(|p| p.strip_prefix(&prefix))
            .filter(|rest| !rest.is_empty())
            .map(|rest| rest.split('/').next().unwrap_or(rest).to_string())
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// A command's words with each pattern word replaced by the paths it matches (sorted), or
    /// left as it is when nothing matches, as sh does (the working folder is `/`).
    fn expand(&self, command: &sh::Command) -> Vec<String> {
        let mut argv = Vec::with_capacity(command.argv.len());
        for (i, word) in command.argv.iter().enumerate() {
            let Some(pattern) = command.patterns.get(i).and_then(Option::as_ref) else {
                argv.push(word.clone());
                continue;
            };
            let matches = self.glob(pattern);
            if matches.is_empty() {
                argv.push(word.clone());
            } else {
                argv.extend(matches);
            }
        }
        argv
    }

    /// The existing paths `pattern` matches, as sh writes them (relative to `/` when relative).
    fn glob(&self, pattern: &str) -> Vec<String> {
        let absolute = pattern.starts_with('/');
        // Paths so far, as they will be printed (no leading `/` when relative).
        let mut found: Vec<String> = vec![String::new()];
        let components: Vec<&str> = pattern.split('/').filter(|c| !c.is_empty()).collect();
        let joined = |base: &str, name: &str| {
            if base.is_empty() {
                if absolute { format!("/{name}") } else { name.to_string() }
            } else {
                format!("{base}/{name}")
            }
        };
        for component in components {
            let mut next = Vec::new();
            for base in &found {
                if sh::has_glob(component) {
                    let dir = normalize(if base.is_empty() { "/" } else { base });
                    if !self.is_dir(&dir) {
                        continue;
                    }
                    for name in self.children(&dir) {
                        if sh::glob_match(component, &name) {
                            next.push(joined(base, &name));
                        }
                    }
                } else {
                    next.push(joined(base, &sh::unescape(component)));
                }
                if next.len() > 10_000 {
                    // A pattern that matches this much is a mistake; sh would list it all, but
                    // a fake device need not hold a huge argv.
                    break;
                }
            }
            found = next;
        }
        let mut found: Vec<String> =
            found.into_iter().filter(|p| !p.is_empty() && self.stat(p).is_some()).collect();
        found.sort();
        found
    }

    fn is_dir(&self, path: &str) -> bool {
        if FIXED_DIRS.contains(&path) {
            return true;
        }
        let prefix = format!("{path}/");
        self.files.range(prefix.clone()..).next().is_some_and(|(p, _)| p.starts_with(&prefix))
    }

    /// Stores a file, within the writable folders and the size limits.
    fn write_file(&mut self, path: &str, data: Vec<u8>) -> Result<(), String> {
        let path = normalize(path);
        if path == "/dev/null" {
            return Ok(());
        }
        if self.is_dir(&path) {
            return Err("Is a directory".into());
        }
        if !writable(&path) {
            return Err("Read-only file system".into());
        }
        if data.len() > MAX_FILE_BYTES {
            return Err("File too large".into());
        }
        if !self.files.contains_key(&path) && self.files.len() >= MAX_FILES {
            return Err("No space left on device (too many files)".into());
        }
        let others: usize = self.files.iter().filter(|(p, _)| **p != path).map(|(_, f)| f.data.len()).sum();
        if others + data.len() > MAX_TOTAL_BYTES {
            return Err("No space left on device".into());
        }
        let mtime = secs(self.phone.now_ms());
        self.files.insert(path, File { data, mtime });
        Ok(())
    }

    fn cd(&self, args: &[String]) -> ShellOutput {
        match args.first() {
            Some(dir) if !self.is_dir(&normalize(dir)) => {
                ShellOutput::err(format!("/system/bin/sh: cd: {dir}: No such file or directory\n"), 2)
            }
            // Every later command still runs from `/`: the fake shell has one working folder.
            _ => ShellOutput::default(),
        }
    }

    fn sleep(&mut self, args: &[String]) -> ShellOutput {
        let Some(arg) = args.first() else { return ShellOutput::err("sleep: Needs 1 argument\n", 1) };
        let (number, scale) = match arg.chars().last() {
            Some('s') => (&arg[..arg.len() - 1], 1_000.0),
            Some('m') => (&arg[..arg.len() - 1], 60_000.0),
            Some('h') => (&arg[..arg.len() - 1], 3_600_000.0),
            Some('d') => (&arg[..arg.len() - 1], 86_400_000.0),
            _ => (arg.as_str(), 1_000.0),
        };
        let Some(seconds) = parse_number(number).filter(|s| *s >= 0.0) else {
            return ShellOutput::err(format!("sleep: invalid number '{arg}'\n"), 1);
        };
        let ms = (seconds * scale).min(phonebench_phone::MAX_WAIT_MS as f64) as u64;
        if ms == 0 {
            return ShellOutput::default();
        }
        // No wall-clock wait: the phone's virtual time passes instead.
        self.act(&Action::Wait { ms: Some(ms) })
    }

    fn cat(&self, args: &[String]) -> ShellOutput {
        let mut output = ShellOutput::default();
        for path in args.iter().filter(|a| *a != "-") {
            match self.read_file(path) {
                Ok(data) => output.stdout.extend(data),
                Err(e) => {
                    output.stderr.extend(format!("cat: {path}: {e}\n").into_bytes());
                    output.exit = 1;
                }
            }
        }
        output
    }

    fn rm(&mut self, args: &[String]) -> ShellOutput {
        let mut force = false;
        let mut recursive = false;
        let mut paths = Vec::new();
        let mut options = true;
        for arg in args {
            if options && arg == "--" {
                options = false;
            } else if options && arg.starts_with('-') && arg.len() > 1 {
                force |= arg.contains('f');
                recursive |= arg.contains('r') || arg.contains('R');
            } else {
                paths.push(arg);
            }
        }
        let mut output = ShellOutput::default();
        for shown in paths {
            let path = normalize(shown);
            let failure = if self.files.remove(&path).is_some() {
                None
            } else if self.is_dir(&path) {
                if !recursive {
                    Some("Is a directory")
                } else if !writable(&format!("{path}/")) {
                    Some("Read-only file system")
                } else {
                    let prefix = format!("{path}/");
                    self.files.retain(|p, _| !p.starts_with(&prefix));
                    None
                }
            } else if force {
                None
            } else {
                Some("No such file or directory")
            };
            if let Some(failure) = failure {
                output.stderr.extend(format!("rm: {shown}: {failure}\n").into_bytes());
                output.exit = 1;
            }
        }
        output
    }

    fn ls(&self, args: &[String]) -> ShellOutput {
        let paths: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
        let root = "/".to_string();
        let paths = if paths.is_empty() { vec![&root] } else { paths };
        let many = paths.len() > 1;
        let mut output = ShellOutput::default();
        for (n, shown) in paths.iter().enumerate() {
            let path = normalize(shown);
            if self.files.contains_key(&path) {
                output.stdout.extend(format!("{shown}\n").into_bytes());
                continue;
            }
            if !self.is_dir(&path) {
                output.stderr.extend(format!("ls: {shown}: No such file or directory\n").into_bytes());
                output.exit = 1;
                continue;
            }
            let names = self.children(&path);
            if many {
                if n > 0 {
                    output.stdout.push(b'\n');
                }
                output.stdout.extend(format!("{shown}:\n").into_bytes());
            }
            for name in names {
                output.stdout.extend(format!("{name}\n").into_bytes());
            }
        }
        output
    }

    fn touch(&mut self, args: &[String]) -> ShellOutput {
        let mut output = ShellOutput::default();
        for shown in args.iter().filter(|a| !a.starts_with('-')) {
            let path = normalize(shown);
            let now = secs(self.phone.now_ms());
            let result = if let Some(file) = self.files.get_mut(&path) {
                file.mtime = now;
                Ok(())
            } else if self.is_dir(&path) {
                Ok(())
            } else {
                self.write_file(&path, Vec::new())
            };
            if let Err(e) = result {
                output.stderr.extend(format!("touch: '{shown}': {e}\n").into_bytes());
                output.exit = 1;
            }
        }
        output
    }

    fn mkdir(&self, args: &[String]) -> ShellOutput {
        let mut output = ShellOutput::default();
        for shown in args.iter().filter(|a| !a.starts_with('-')) {
            let path = normalize(shown);
            // Folders are implicit (a file's path makes them); creating one is a no-op where
            // writing is allowed.
            if !self.is_dir(&path) && !writable(&format!("{path}/")) {
                output.stderr.extend(format!("mkdir: '{shown}': Read-only file system\n").into_bytes());
                output.exit = 1;
            }
        }
        output
    }
}

/// An intent from `am start` / `am broadcast` arguments.
#[derive(Debug, Default)]
struct Intent {
    action: Option<String>,
    data: Option<String>,
    categories: Vec<String>,
    component: Option<(String, String)>,
    extras: BTreeMap<String, String>,
    wait: bool,
    stop_first: bool,
}

impl Intent {
    fn parse(args: &[String]) -> Result<Intent, String> {
        let mut intent = Intent::default();
        let mut i = 0;
        let value = |i: usize| {
            args.get(i).cloned().ok_or_else(|| format!("Argument expected after \"{}\"", args[i - 1]))
        };
        while i < args.len() {
            // Each option says how many words it took (itself and its values).
            i += match args[i].as_str() {
                "-a" => {
                    intent.action = Some(value(i + 1)?);
                    2
                }
                "-d" => {
                    intent.data = Some(value(i + 1)?);
                    2
                }
                "-c" => {
                    intent.categories.push(value(i + 1)?);
                    2
                }
                "-n" => {
                    let component = value(i + 1)?;
                    let (package, activity) = component
                        .split_once('/')
                        .filter(|(p, a)| !p.is_empty() && !a.is_empty())
                        .ok_or_else(|| format!("Bad component name: {component}"))?;
                    intent.component = Some((package.to_string(), activity.to_string()));
                    2
                }
                "-t"
                | "-f"
                | "-p"
                | "--user"
                | "--display"
                | "--windowingMode"
                | "--activityType"
                | "-P"
                | "--start-profiler"
                | "--sampling"
                | "--receiver-permission"
                | "-R" => {
                    value(i + 1)?;
                    2
                }
                "--es" | "--ei" | "--el" | "--ef" | "--ez" | "--eu" | "--ecn" | "--eia" | "--ela"
                | "--efa" | "--esa" | "-e" => {
                    let key = value(i + 1)?;
                    let val = value(i + 2)?;
                    intent.extras.insert(key, val);
                    3
                }
                "--esn" => {
                    intent.extras.insert(value(i + 1)?, String::new());
                    2
                }
                "-W" => {
                    intent.wait = true;
                    1
                }
                "-S" => {
                    intent.stop_first = true;
                    1
                }
                flag if flag.starts_with('-') => 1,
                uri => {
                    intent.data = Some(uri.to_string());
                    1
                }
            };
        }
        Ok(intent)
    }

    /// The intent as `am` echoes it: `act=… cat=[…] dat=… cmp=…`.
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(a) = &self.action {
            parts.push(format!("act={a}"));
        }
        if !self.categories.is_empty() {
            parts.push(format!("cat=[{}]", self.categories.join(",")));
        }
        if let Some(d) = &self.data {
            parts.push(format!("dat={d}"));
        }
        if let Some((p, a)) = &self.component {
            parts.push(format!("cmp={p}/{a}"));
        }
        parts.join(" ")
    }
}

/// `am start -W`'s report.
fn wait_report(component: &str) -> String {
    format!("Status: ok\nLaunchState: COLD\nActivity: {component}\nTotalTime: 120\nWaitTime: 124\nComplete\n")
}

/// Arguments without `--user N` (every `am`/`pm`/`settings` command accepts it).
fn skip_user(args: &[String]) -> Vec<&String> {
    let mut kept = Vec::new();
    let mut i = 0;
    while i < args.len() {
        if args[i] == "--user" {
            i += 2;
            continue;
        }
        kept.push(&args[i]);
        i += 1;
    }
    kept
}

/// `Error: MESSAGE` and a usage hint on stderr, status 1 (as the Android tools print on a
/// malformed command).
fn usage_error(tool: &str, message: &str) -> ShellOutput {
    ShellOutput::err(format!("Error: {message}\nUsage: {tool} … (see `{tool} help` on a real device)\n"), 1)
}

/// `echo [-n] ARGS`.
fn echo(args: &[String]) -> ShellOutput {
    let mut newline = true;
    let mut rest = args;
    while let Some((flag, tail)) = rest.split_first() {
        let is_flag = flag.len() > 1
            && flag.starts_with('-')
            && flag[1..].chars().all(|c| matches!(c, 'n' | 'e' | 'E'));
        if !is_flag {
            break;
        }
        if flag.contains('n') {
            newline = false;
        }
        rest = tail;
    }
    let mut text = rest.join(" ");
    if newline {
        text.push('\n');
    }
    ShellOutput::out(text)
}

/// A number as `input` accepts it (Java's `Float.parseFloat`): finite only.
fn parse_number(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|n| n.is_finite())
}

/// The first `count` arguments as coordinates, truncated toward zero as `input` does.
fn parse_points(args: &[String], count: usize) -> Option<Vec<i32>> {
    if args.len() < count {
        return None;
    }
    args[..count]
        .iter()
        .map(|a| parse_number(a).filter(|n| n.abs() < 1e9).map(|n| n.trunc() as i32))
        .collect()
}

/// An `input keyevent` key: a number or a name (`KEYCODE_BACK`, `BACK`, any case).
fn parse_key(text: &str) -> Option<Key> {
    if let Ok(code) = text.parse::<u32>() {
        let name = match code {
            3 => "HOME",
            4 => "BACK",
            5 => "CALL",
            6 => "ENDCALL",
            7..=16 => return Some(Key::Other(format!("{}", code - 7))),
            19 => "DPAD_UP",
            20 => "DPAD_DOWN",
            21 => "DPAD_LEFT",
            22 => "DPAD_RIGHT",
            23 => "DPAD_CENTER",
            24 => "VOLUME_UP",
            25 => "VOLUME_DOWN",
            26 => "POWER",
            27 => "CAMERA",
            29..=54 => return char::from_u32('A' as u32 + code - 29).map(|c| Key::Other(c.to_string())),
            61 => "TAB",
            62 => "SPACE",
            66 => "ENTER",
            67 => "DEL",
            82 => "MENU",
            84 => "SEARCH",
            85 => "MEDIA_PLAY_PAUSE",
            92 => "PAGE_UP",
            93 => "PAGE_DOWN",
            111 => "ESCAPE",
            112 => "FORWARD_DEL",
            122 => "MOVE_HOME",
            123 => "MOVE_END",
            164 => "VOLUME_MUTE",
            176 => "SETTINGS",
            187 => "APP_SWITCH",
            223 => "SLEEP",
            224 => "WAKEUP",
            277 => "CUT",
            278 => "COPY",
            279 => "PASTE",
            _ => return Some(Key::Other(code.to_string())),
        };
        return Key::parse(&format!("KEYCODE_{name}")).ok();
    }
    let upper = text.trim().to_ascii_uppercase();
    let code = upper.strip_prefix("KEYCODE_").unwrap_or(&upper);
    if code.is_empty() || !code.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_') {
        return None;
    }
    Key::parse(&format!("KEYCODE_{code}")).ok()
}

/// `screencap` without `-p`: width, height, format 1 (RGBA_8888), colour space 0 (u32 LE each),
/// then the pixels as straight-alpha RGBA.
fn raw_screencap(pixmap: &phonebench_pixels::Pixmap) -> Vec<u8> {
    let data = pixmap.data();
    let mut out = Vec::with_capacity(16 + data.len());
    for word in [pixmap.width(), pixmap.height(), 1, 0] {
        out.extend_from_slice(&word.to_le_bytes());
    }
    for px in data.chunks_exact(4) {
        let a = px[3];
        if a == 255 || a == 0 {
            out.extend_from_slice(if a == 0 { &[0, 0, 0, 0] } else { px });
        } else {
            let un = |c: u8| ((u32::from(c) * 255 + u32::from(a) / 2) / u32::from(a)).min(255) as u8;
            out.extend_from_slice(&[un(px[0]), un(px[1]), un(px[2]), a]);
        }
    }
    out
}

/// Seconds since the epoch of a virtual time in ms (0 before the epoch, saturating).
fn secs(ms: i64) -> u32 {
    u32::try_from(ms.max(0) / 1000).unwrap_or(u32::MAX)
}

/// Whether a normalised path lies in a folder the shell user may write.
fn writable(path: &str) -> bool {
    path.starts_with("/sdcard/") || path.starts_with("/data/local/tmp/")
}

/// An absolute path with `.`, `..` and repeated slashes resolved, relative paths taken from `/`
/// (adb shell's working folder), and shared storage's other names (`/storage/emulated/0`,
/// `/storage/self/primary`, `/mnt/sdcard`) written as `/sdcard`.
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let joined = format!("/{}", parts.join("/"));
    for alias in ["/storage/emulated/0", "/storage/self/primary", "/mnt/sdcard", "/mnt/user/0/primary"] {
        if joined == alias {
            return "/sdcard".to_string();
        }
        if let Some(rest) = joined.strip_prefix(alias)
            && rest.starts_with('/')
        {
            return format!("/sdcard{rest}");
        }
    }
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalise() {
        assert_eq!(normalize("/storage/emulated/0/a.xml"), "/sdcard/a.xml");
        assert_eq!(normalize("/storage/emulated/0"), "/sdcard");
        assert_eq!(normalize("/sdcard/"), "/sdcard");
        assert_eq!(normalize("//sdcard/./x/../y"), "/sdcard/y");
        assert_eq!(normalize("sdcard/y"), "/sdcard/y");
        assert_eq!(normalize("/../.."), "/");
        assert_eq!(normalize("/storage/emulated/01"), "/storage/emulated/01");
    }

    #[test]
    fn keys_parse_by_number_and_name() {
        assert_eq!(parse_key("4"), Some(Key::Back));
        assert_eq!(parse_key("KEYCODE_BACK"), Some(Key::Back));
        assert_eq!(parse_key("back"), Some(Key::Back));
        assert_eq!(parse_key("66"), Some(Key::Enter));
        assert_eq!(parse_key("67"), Some(Key::Backspace));
        assert_eq!(parse_key("187"), Some(Key::AppSwitch));
        assert_eq!(parse_key("KEYCODE_DPAD_UP"), Some(Key::Other("DPAD_UP".into())));
        assert_eq!(parse_key("29"), Some(Key::Other("A".into())));
        assert_eq!(parse_key("bad key"), None);
    }
}
