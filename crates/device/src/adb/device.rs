//! [`AdbDevice`]: an Android device or emulator driven through the adb server.

use std::collections::BTreeSet;
use std::time::Duration;

use phonebench_actions::Key;
use phonebench_uitree::read_xml_bytes;

use super::client::{AdbServer, ShellResult};
use super::input::{UnicodeInput, quote, typing_commands};
use crate::{Device, DeviceError, DeviceOptions, DeviceScreen};

/// ADBKeyboard's input method id.
const ADB_KEYBOARD_IME: &str = "com.android.adbkeyboard/.AdbIME";

/// The largest screen side (px) a device may report; more is a lie that would overflow gestures.
const MAX_SIDE: u32 = 20_000;

/// How long a long press holds (ms); Android's long-press timeout is 400–500 ms.
const LONG_PRESS_MS: u32 = 1000;

/// An Android device behind an adb server.
#[derive(Debug)]
pub struct AdbDevice {
    server: AdbServer,
    serial: String,
    shell_v2: bool,
    size: (u32, u32),
    density: u32,
    unicode: UnicodeInput,
    packages: BTreeSet<String>,
    options: DeviceOptions,
}

impl AdbDevice {
    /// Connects to `serial` on `server`: checks it is listed and ready, reads its features,
    /// screen size and density, installed packages and whether ADBKeyboard is its input method.
    pub fn connect(
        server: AdbServer,
        serial: &str,
        options: DeviceOptions,
    ) -> Result<AdbDevice, DeviceError> {
        let devices = server.devices()?;
        match devices.iter().find(|d| d.serial == serial) {
            Some(d) if d.state == "device" => {}
            Some(d) => {
                return Err(DeviceError::NotReady(format!(
                    "device {serial} is `{}` (needs to be `device`: authorise this computer on it, or wait for it to boot)",
                    d.state
                )));
            }
            None => {
                let listed: Vec<String> =
                    devices.iter().map(|d| format!("{} ({})", d.serial, d.state)).collect();
                return Err(DeviceError::NotReady(format!(
                    "no device {serial} at the adb server {}; it lists: {}",
                    server.addr(),
                    if listed.is_empty() { "nothing".to_string() } else { listed.join(", ") }
                )));
            }
        }
        let shell_v2 = server.features(serial)?.iter().any(|f| f == "shell_v2");
        let mut device = AdbDevice {
            server,
            serial: serial.to_string(),
            shell_v2,
            size: (0, 0),
            density: 0,
            unicode: UnicodeInput::None,
            packages: BTreeSet::new(),
            options,
        };
        let size = device.sh("wm size")?.text();
        device.size = parse_wm_size(&size)
            .filter(|&(w, h)| (1..=MAX_SIDE).contains(&w) && (1..=MAX_SIDE).contains(&h))
            .ok_or_else(|| DeviceError::Command {
                command: "wm size".into(),
                message: format!("unreadable or implausible: {size:?}"),
            })?;
        let density = device.sh("wm density")?.text();
        device.density = parse_wm_density(&density).ok_or_else(|| DeviceError::Command {
            command: "wm density".into(),
            message: format!("unreadable: {density:?}"),
        })?;
        // ADBKeyboard types only when it is the selected input method, not merely enabled.
        let selected = device.sh("settings get secure default_input_method")?.text();
        if selected.trim() == ADB_KEYBOARD_IME {
            device.unicode = UnicodeInput::AdbKeyboard;
        }
        device.packages = device.read_packages()?;
        Ok(device)
    }

    /// The serial.
    pub fn serial(&self) -> &str {
        &self.serial
    }

    /// Runs a command; a non-zero exit status is an error with what it printed.
    fn sh(&self, command: &str) -> Result<ShellResult, DeviceError> {
        let result = self.server.shell(&self.serial, command, self.shell_v2)?;
        if result.failed() {
            let mut message = String::from_utf8_lossy(&result.stderr).trim().to_string();
            if message.is_empty() {
                message = result.text().trim().to_string();
            }
            return Err(DeviceError::Command {
                command: command.chars().take(120).collect(),
                message: format!("exit status {}: {message}", result.exit.unwrap_or_default()),
            });
        }
        Ok(result)
    }

    /// The packages that have a launcher activity: the apps an agent can open. System UI, the
    /// launcher and keyboards have none, so `open_app` and `restart_app` never stop them.
    /// (`cmd package query-activities`, Android 7+; older devices: every package but System UI's.)
    fn read_packages(&self) -> Result<BTreeSet<String>, DeviceError> {
        let query = "cmd package query-activities --brief -a android.intent.action.MAIN -c android.intent.category.LAUNCHER";
        if let Ok(result) = self.sh(query) {
            let launchable: BTreeSet<String> = result
                .text()
                .lines()
                .filter_map(|l| l.trim().split_once('/').map(|(p, _)| p.to_string()))
                .filter(|p| !p.is_empty() && !p.contains(char::is_whitespace))
                .collect();
            if !launchable.is_empty() {
                return Ok(launchable);
            }
        }
        Ok(self
            .sh("pm list packages")?
            .text()
            .lines()
            .filter_map(|l| l.trim().strip_prefix("package:").map(str::to_string))
            .filter(|p| p != "com.android.systemui")
            .collect())
    }

    /// One uiautomator dump: `exec-out uiautomator dump /dev/tty` (no file on the device), or,
    /// where that prints no XML, a dump to a file and a pull.
    fn dump_bytes(&self) -> Result<Vec<u8>, DeviceError> {
        let out = self.server.exec(&self.serial, "uiautomator dump /dev/tty")?;
        if contains(&out, b"<hierarchy") {
            return Ok(out);
        }
        let path = "/sdcard/window_dump.xml";
        let result = self.sh(&format!("uiautomator dump {path}"))?;
        if !result.text().contains("dumped to") {
            return Err(DeviceError::Dump(format!("uiautomator dump printed {:?}", result.text().trim())));
        }
        Ok(self.server.pull(&self.serial, path)?)
    }

    /// The package and activity in front, from `dumpsys window` (`mCurrentFocus`, or
    /// `mFocusedApp` while the focus is between windows).
    fn foreground(&self) -> Result<(String, String), DeviceError> {
        let text = self.sh("dumpsys window")?.text();
        Ok(parse_focus(&text).unwrap_or_default())
    }

    fn keyevents(&self, codes: &[String]) -> Result<(), DeviceError> {
        if codes.is_empty() {
            return Ok(());
        }
        self.sh(&format!("input keyevent {}", codes.join(" "))).map(|_| ())
    }
}

impl Device for AdbDevice {
    fn name(&self) -> String {
        format!("adb:{}", self.serial)
    }

    fn display(&self) -> (u32, u32, u32) {
        (self.size.0, self.size.1, self.density)
    }

    fn screen(&mut self) -> Result<DeviceScreen, DeviceError> {
        std::thread::sleep(Duration::from_millis(self.options.settle_ms));
        // Wait for stable: equal dumps in a row, or the last of a bounded number.
        let mut last = self.dump_bytes()?;
        for _ in 1..self.options.max_dumps.max(1) {
            std::thread::sleep(Duration::from_millis(self.options.stable_interval_ms));
            let next = self.dump_bytes()?;
            if next == last {
                break;
            }
            last = next;
        }
        let tree =
            read_xml_bytes(&last).map_err(|e| DeviceError::Dump(format!("the dump does not parse: {e}")))?;
        let (package, activity) = self.foreground()?;
        Ok(DeviceScreen { tree, package, activity })
    }

    fn screenshot_png(&mut self) -> Result<Vec<u8>, DeviceError> {
        let png = self.server.exec(&self.serial, "screencap -p")?;
        if !png.starts_with(b"\x89PNG\r\n\x1a\n") {
            return Err(DeviceError::Command {
                command: "screencap -p".into(),
                message: format!("not a PNG: {:?}", String::from_utf8_lossy(&png[..png.len().min(80)])),
            });
        }
        Ok(png)
    }

    fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.sh(&format!("input tap {x} {y}")).map(|_| ())
    }

    fn double_tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        // One shell line, so the taps are as close together as the device can make them.
        self.sh(&format!("input tap {x} {y} && input tap {x} {y}")).map(|_| ())
    }

    fn long_press(&mut self, x: i32, y: i32) -> Result<(), DeviceError> {
        self.sh(&format!("input swipe {x} {y} {x} {y} {LONG_PRESS_MS}")).map(|_| ())
    }

    fn swipe(&mut self, from: (i32, i32), to: (i32, i32), ms: u32) -> Result<(), DeviceError> {
        self.sh(&format!("input swipe {} {} {} {} {ms}", from.0, from.1, to.0, to.1)).map(|_| ())
    }

    fn type_text(&mut self, text: &str) -> Result<(), DeviceError> {
        for command in typing_commands(text, self.unicode).map_err(DeviceError::Unsupported)? {
            self.sh(&command)?;
        }
        Ok(())
    }

    fn clear_text(&mut self, chars: usize) -> Result<(), DeviceError> {
        if self.unicode == UnicodeInput::AdbKeyboard {
            return self.sh("am broadcast -a ADB_CLEAR_TEXT").map(|_| ());
        }
        // To the end, then delete backwards as many characters as the field shows.
        let mut codes = vec!["KEYCODE_MOVE_END".to_string()];
        codes.extend(std::iter::repeat_n("KEYCODE_DEL".to_string(), chars.min(2000)));
        for batch in codes.chunks(200) {
            self.keyevents(batch)?;
        }
        Ok(())
    }

    fn key(&mut self, key: &Key) -> Result<(), DeviceError> {
        self.keyevents(&[key.keycode()])
    }

    fn packages(&mut self) -> Result<Vec<String>, DeviceError> {
        Ok(self.packages.iter().cloned().collect())
    }

    fn launch(&mut self, package: &str, activity: Option<&str>) -> Result<(), DeviceError> {
        match activity {
            Some(activity) => {
                let component = if activity.contains('/') {
                    activity.to_string()
                } else {
                    format!("{package}/{activity}")
                };
                self.sh(&format!("am start -n {}", quote(&component))).map(|_| ())
            }
            None => self
                .sh(&format!("monkey -p {} -c android.intent.category.LAUNCHER 1", quote(package)))
                .map(|_| ()),
        }
    }

    fn force_stop(&mut self, package: &str) -> Result<(), DeviceError> {
        self.sh(&format!("am force-stop {}", quote(package))).map(|_| ())
    }

    fn run_setup(&mut self, command: &str) -> Result<String, DeviceError> {
        let out = self.sh(command)?.text();
        // A setup step may install or remove apps.
        self.packages = self.read_packages()?;
        Ok(out)
    }

    fn wait(&mut self, ms: u64) -> Result<(), DeviceError> {
        // The device's own `sleep`: the same wait on a real phone, and on a simulated one
        // (`phonebench fake-adb`) its virtual time passes as an in-process `wait` would.
        self.sh(&format!("sleep {}.{:03}", ms / 1000, ms % 1000)).map(|_| ())
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// `Physical size: 1080x2400` (an `Override size:` line wins: it is what apps lay out for).
pub fn parse_wm_size(text: &str) -> Option<(u32, u32)> {
    let pick = |prefix: &str| {
        text.lines().find_map(|l| {
            let (w, h) = l.trim().strip_prefix(prefix)?.trim().split_once('x')?;
            Some((w.trim().parse().ok()?, h.trim().parse().ok()?))
        })
    };
    pick("Override size:").or_else(|| pick("Physical size:"))
}

/// `Physical density: 420` (an `Override density:` line wins).
pub fn parse_wm_density(text: &str) -> Option<u32> {
    let pick = |prefix: &str| text.lines().find_map(|l| l.trim().strip_prefix(prefix)?.trim().parse().ok());
    pick("Override density:").or_else(|| pick("Physical density:"))
}

/// The package and activity of `dumpsys window`'s focus lines:
/// `mCurrentFocus=Window{1f2e3d u0 com.x/com.x.MainActivity}` or
/// `mFocusedApp=ActivityRecord{4a5b6c u0 com.x/.MainActivity t12}`; `.Name` is expanded to the
/// package's class. A window without an activity (`Window{… u0 StatusBar}`) gives its name as the
/// package and an empty activity.
pub fn parse_focus(text: &str) -> Option<(String, String)> {
    let component = |line: &str| -> Option<(String, String)> {
        let inner = line.split_once('{')?.1.split('}').next()?;
        let words: Vec<&str> = inner.split_whitespace().collect();
        let word = words.iter().find(|w| w.contains('/')).or(words.get(2))?;
        Some(match word.split_once('/') {
            Some((package, activity)) => {
                let activity = if activity.starts_with('.') {
                    format!("{package}{activity}")
                } else {
                    activity.to_string()
                };
                (package.to_string(), activity)
            }
            None => (word.to_string(), String::new()),
        })
    };
    let find = |key: &str| {
        text.lines().map(str::trim).filter(|l| l.starts_with(key)).find_map(|l| {
            let value = l.strip_prefix(key)?;
            if value.starts_with("null") { None } else { component(value) }
        })
    };
    find("mCurrentFocus=")
        .filter(|(_, a)| !a.is_empty())
        .or_else(|| find("mFocusedApp="))
        .or_else(|| find("mCurrentFocus="))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_wm_and_dumpsys() {
        assert_eq!(parse_wm_size("Physical size: 1080x2400\n"), Some((1080, 2400)));
        assert_eq!(parse_wm_size("Physical size: 1080x2400\nOverride size: 720x1600\n"), Some((720, 1600)));
        assert_eq!(parse_wm_density("Physical density: 420\r\n"), Some(420));
        let dumpsys = "WINDOW MANAGER\n  mCurrentFocus=Window{1f2e3d u0 com.x/com.x.ui.Main}\n  mFocusedApp=ActivityRecord{4a u0 com.x/.ui.Main t12}\n";
        assert_eq!(parse_focus(dumpsys), Some(("com.x".into(), "com.x.ui.Main".into())));
        let between = "  mCurrentFocus=null\n  mFocusedApp=ActivityRecord{4a u0 com.y/.Home t3}\n";
        assert_eq!(parse_focus(between), Some(("com.y".into(), "com.y.Home".into())));
        let shade = "  mCurrentFocus=Window{99 u0 NotificationShade}\n  mFocusedApp=ActivityRecord{4a u0 com.y/.Home t3}\n";
        assert_eq!(parse_focus(shade), Some(("com.y".into(), "com.y.Home".into())));
        assert_eq!(parse_focus("nothing"), None);
    }
}
