//! Real Android devices and emulators over adb, and a fake adb server backed by the simulated
//! phone that proves the backend against the real adb client.
//!
//! - [`Device`]: what an episode needs from a device (the screen as a UI tree with its package
//!   and activity, a screenshot, gestures, keys, typing, launching and stopping apps, setup
//!   commands). [`act::apply_action`] turns an agent's [`phonebench_actions::Action`] into those.
//! - [`adb`]: our own small client of the adb server's host protocol (`host:version`,
//!   `host:devices`, transports, `shell:` / `shell,v2:`, `exec:`, `sync:` pull), and
//!   [`adb::AdbDevice`], a device driven through it.
//! - [`fake`]: `phonebench fake-adb`, an adb server whose one device is a simulated phone.
//! - [`vnc`]: [`vnc::VncDevice`], a pixels-only device behind a VNC server: the screen's tree is
//!   what an element detector finds in the framebuffer.

pub mod act;
pub mod adb;
pub mod fake;
pub mod vnc;

use phonebench_actions::Key;
use phonebench_uitree::UiTree;

pub use act::{ActError, Applied, KnownApp, apply_action};

/// Why a device could not do something. Always an infrastructure failure of the episode: the
/// device or the connection to it failed, never the agent.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// Talking to the adb server failed.
    #[error(transparent)]
    Adb(#[from] adb::AdbError),
    /// The device is not there or not ready.
    #[error("{0}")]
    NotReady(String),
    /// A command on the device failed.
    #[error("`{command}` on the device: {message}")]
    Command {
        /// The command (cut to 120 characters).
        command: String,
        /// What it printed, and its status.
        message: String,
    },
    /// The screen could not be read.
    #[error("reading the screen: {0}")]
    Dump(String),
    /// The device cannot do what was asked (and says how to make it able).
    #[error("{0}")]
    Unsupported(String),
    /// The device address is not one we know.
    #[error("{0}")]
    Address(String),
}

/// How a device is waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceOptions {
    /// Wait this long after an action before reading the screen (animations start).
    pub settle_ms: u64,
    /// Between dumps while waiting for the screen to be stable.
    pub stable_interval_ms: u64,
    /// At most this many dumps per screen: the screen is stable when two in a row are equal,
    /// and taken as it is after the last.
    pub max_dumps: u32,
}

impl Default for DeviceOptions {
    fn default() -> Self {
        DeviceOptions { settle_ms: 500, stable_interval_ms: 300, max_dumps: 4 }
    }
}

/// One screen as a device shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceScreen {
    /// The UI tree (from a uiautomator dump).
    pub tree: UiTree,
    /// The package in front.
    pub package: String,
    /// The activity in front (full class name), empty when unknown.
    pub activity: String,
}

/// A device an episode can run on: primitives only; [`apply_action`] maps agent actions to them.
pub trait Device: Send + std::fmt::Debug {
    /// How it is addressed (`adb:emulator-5554`).
    fn name(&self) -> String;
    /// Screen width, height (px) and density (dpi).
    fn display(&self) -> (u32, u32, u32);
    /// The current screen, once it is stable (bounded wait).
    fn screen(&mut self) -> Result<DeviceScreen, DeviceError>;
    /// A PNG of the screen.
    fn screenshot_png(&mut self) -> Result<Vec<u8>, DeviceError>;
    /// A tap.
    fn tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError>;
    /// Two quick taps.
    fn double_tap(&mut self, x: i32, y: i32) -> Result<(), DeviceError>;
    /// A long press.
    fn long_press(&mut self, x: i32, y: i32) -> Result<(), DeviceError>;
    /// A finger moving from `from` to `to` in `ms`.
    fn swipe(&mut self, from: (i32, i32), to: (i32, i32), ms: u32) -> Result<(), DeviceError>;
    /// Types `text` verbatim into the focused field.
    fn type_text(&mut self, text: &str) -> Result<(), DeviceError>;
    /// Clears the focused field, which shows `chars` characters.
    fn clear_text(&mut self, chars: usize) -> Result<(), DeviceError>;
    /// Presses a key.
    fn key(&mut self, key: &Key) -> Result<(), DeviceError>;
    /// The installed apps: packages with a launcher activity (what `open_app` may open).
    fn packages(&mut self) -> Result<Vec<String>, DeviceError>;
    /// Starts `package` (its launcher activity, or `activity`).
    fn launch(&mut self, package: &str, activity: Option<&str>) -> Result<(), DeviceError>;
    /// Stops `package`.
    fn force_stop(&mut self, package: &str) -> Result<(), DeviceError>;
    /// Runs a task's setup command in the device's shell; its output.
    fn run_setup(&mut self, command: &str) -> Result<String, DeviceError>;
    /// Lets `ms` pass on the device.
    fn wait(&mut self, ms: u64) -> Result<(), DeviceError>;
    /// Whether the device shows only pixels (VNC): its screen's tree is detected elements, and
    /// it knows no apps, activities or setup commands.
    fn pixels_only(&self) -> bool {
        false
    }
    /// Whether the device has `key` (a key it lacks is the agent's mistake, not a failure).
    fn has_key(&self, key: &Key) -> bool {
        let _ = key;
        true
    }
}

/// Opens a device by address: `adb:SERIAL` (the adb server from `$ADB_SERVER_SOCKET`,
/// `$ANDROID_ADB_SERVER_PORT` or 127.0.0.1:5037), `adb:SERIAL@HOST:PORT`, or `vnc:HOST:PORT`
/// (a pixels-only device; the password, if the server wants one, from
/// `$PHONEBENCH_VNC_PASSWORD`).
pub fn connect(address: &str, options: DeviceOptions) -> Result<Box<dyn Device>, DeviceError> {
    if let Some(host_port) = address.strip_prefix("vnc:") {
        if !host_port.contains(':') {
            return Err(DeviceError::Address(format!("`{address}` names no port: use vnc:HOST:PORT")));
        }
        return Ok(Box::new(vnc::VncDevice::connect_default(host_port, options)?));
    }
    let Some(rest) = address.strip_prefix("adb:") else {
        return Err(DeviceError::Address(format!(
            "unknown device address `{address}`: use adb:SERIAL, adb:SERIAL@HOST:PORT (serials: `adb devices`) or vnc:HOST:PORT"
        )));
    };
    let (serial, server) = match rest.split_once('@') {
        Some((serial, server)) => (serial, adb::AdbServer::new(server)?),
        None => (rest, adb::AdbServer::from_env()?),
    };
    if serial.is_empty() {
        return Err(DeviceError::Address(format!("`{address}` names no serial (adb:SERIAL)")));
    }
    Ok(Box::new(adb::AdbDevice::connect(server, serial, options)?))
}
