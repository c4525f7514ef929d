//! Real devices from the command line: `--device adb:SERIAL` (run, play, screenshot, probe) and
//! `phonebench fake-adb`, an adb server whose device is the simulated phone.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, anyhow};
use clap::Args;
use phonebench_actions::{Action, ParseOptions, Syntax, parse_action_with, print_action};
use phonebench_device::act::KnownApp;
use phonebench_device::fake::{FakeAdbServer, FakeDevice, FakeOptions};
use phonebench_device::{ActError, Device, DeviceOptions, apply_action};
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Catalog, Display, Phone, PhoneConfig};
use phonebench_pixels::{ScreenImage, SomStyle};
use phonebench_runner::DeviceRun;

use crate::play::{apps_dir, load_catalog};

/// Which device to play on, for the commands that can play on one.
#[derive(Args, Debug, Clone, Default)]
pub struct DeviceArgs {
    /// Play on a real Android device or emulator instead of the simulated phone:
    /// `adb:SERIAL` (serials from `adb devices`; the adb server from $ADB_SERVER_SOCKET,
    /// $ANDROID_ADB_SERVER_PORT or 127.0.0.1:5037) or `adb:SERIAL@HOST:PORT`. See docs/devices.md.
    #[arg(long)]
    pub device: Option<String>,
    /// On a device: wait this long after each action before reading the screen, ms; then dumps
    /// repeat (this far apart, at most 300 ms) until two in a row are equal, at most 4. 0 suits
    /// `phonebench fake-adb`, whose screen is settled when a command returns.
    #[arg(long, default_value_t = 500)]
    pub device_settle_ms: u64,
}

impl DeviceArgs {
    fn options(&self) -> DeviceOptions {
        DeviceOptions {
            settle_ms: self.device_settle_ms,
            stable_interval_ms: self.device_settle_ms.min(300),
            ..DeviceOptions::default()
        }
    }

    /// Connects to the device now.
    pub fn connect(&self) -> Result<Option<Box<dyn Device>>> {
        let Some(address) = &self.device else { return Ok(None) };
        let device = phonebench_device::connect(address, self.options())
            .with_context(|| format!("cannot use the device {address}"))?;
        Ok(Some(device))
    }

    /// The device a run plays on: checked once now (a wrong serial fails before any episode;
    /// not a VNC device), then opened afresh for each episode.
    pub fn run_device(&self) -> Result<Option<DeviceRun>> {
        let Some(address) = self.device.clone() else { return Ok(None) };
        // A VNC server may serve one episode per client (`phonebench vnc-server`): no probe
        // connection there; the first episode's connection is the check.
        let pixels_only = address.starts_with("vnc:");
        if !pixels_only {
            self.connect()?;
        }
        let options = self.options();
        let name = address.clone();
        Ok(Some(DeviceRun {
            name,
            open: Arc::new(move || phonebench_device::connect(&address, options)),
            pixels_only,
        }))
    }
}

/// Arguments of `phonebench fake-adb`.
#[derive(Args, Debug)]
pub struct FakeAdbArgs {
    /// Address to listen on. The real adb client finds a server at 127.0.0.1:5037, or at the
    /// port of `adb -P PORT` / $ANDROID_ADB_SERVER_PORT.
    #[arg(long, default_value = "127.0.0.1:5037")]
    pub listen: String,
    /// The device's serial.
    #[arg(long, default_value = "emulator-5554")]
    pub serial: String,
    /// App packages folder.
    #[arg(long)]
    pub apps: Option<PathBuf>,
    /// Phone seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Screen size, `WxH` or `WxH@DPI`.
    #[arg(long, default_value = "1080x2400")]
    pub size: String,
    /// Present no ADBKeyboard (non-ASCII text then cannot be typed, as on a stock device).
    #[arg(long)]
    pub no_adb_keyboard: bool,
    /// Listen on an address other machines can reach (the device is anyone's to drive).
    #[arg(long)]
    pub allow_remote: bool,
}

/// `phonebench fake-adb`: serves until killed.
pub fn fake_adb(args: &FakeAdbArgs) -> Result<()> {
    let addr: std::net::SocketAddr = args
        .listen
        .parse()
        .map_err(|_| anyhow!("--listen takes IP:PORT (127.0.0.1:5037), got `{}`", args.listen))?;
    if !addr.ip().is_loopback() && !args.allow_remote {
        anyhow::bail!("--listen {addr} is reachable from other machines; add --allow-remote to mean it");
    }
    if args.serial.is_empty() || !args.serial.chars().all(|c| c.is_ascii_graphic() && c != '@') {
        anyhow::bail!(
            "--serial takes a device serial (printable ASCII without spaces or `@`), got `{}`",
            args.serial
        );
    }
    let display: Display = args.size.parse().map_err(|e: String| anyhow!("--size: {e}"))?;
    let catalog = load_catalog(&apps_dir(args.apps.clone()))?;
    let phone = Phone::new(catalog, PhoneConfig { seed: args.seed, display, ..PhoneConfig::default() })
        .map_err(|e| anyhow!("{e}"))?;
    let device = FakeDevice::new(
        phone,
        FakeOptions { serial: args.serial.clone(), adb_keyboard: !args.no_adb_keyboard },
    );
    let server = FakeAdbServer::start(&args.listen, device)
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    out!(
        "fake adb server on {} with device {} (the simulated phone); try: adb -P {} devices",
        server.addr(),
        args.serial,
        server.addr().port()
    )?;
    std::io::stdout().flush()?;
    server.wait();
    Ok(())
}

/// `phonebench play --device`: like `play`, on a device. Returns how many lines were rejected.
pub fn play_device(
    mut device: Box<dyn Device>,
    catalog: &Catalog,
    app: Option<&str>,
    format: ObservationFormat,
) -> Result<usize> {
    let apps = KnownApp::all(catalog);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if let Some(app) = app {
        let screen = device.screen()?;
        let observation = phonebench_observe::render(&screen.tree, format);
        apply_action(
            device.as_mut(),
            &Action::OpenApp { app: app.to_string() },
            &observation,
            &screen.tree,
            &apps,
        )
        .map_err(|e| anyhow!("{e}"))?;
    }
    let mut screen = device.screen()?;
    let mut observation = phonebench_observe::render(&screen.tree, format);
    let show = |out: &mut dyn Write,
                screen: &phonebench_device::DeviceScreen,
                observation: &phonebench_observe::Observation|
     -> Result<()> {
        writeln!(out, "=== {}/{} ({} elements)", screen.package, screen.activity, observation.targets.len())?;
        write!(out, "{}", observation.text)?;
        if !observation.text.ends_with('\n') {
            writeln!(out)?;
        }
        Ok(())
    };
    show(&mut out, &screen, &observation)?;
    let mut rejected = 0;
    for (number, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line.context("reading stdin")?;
        let text = line.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let action = match parse_action_with(text, Syntax::Auto, &ParseOptions::default()) {
            Ok(a) => a,
            Err(e) => {
                writeln!(out, "!!! line {}: {e}", number + 1)?;
                rejected += 1;
                continue;
            }
        };
        let shown = print_action(&action, Syntax::Canonical).unwrap_or_else(|_| text.to_string());
        writeln!(out, ">>> {shown}")?;
        match apply_action(device.as_mut(), &action, &observation, &screen.tree, &apps) {
            Ok(applied) => {
                for note in &applied.notes {
                    writeln!(out, "note: {note}")?;
                }
                screen = device.screen()?;
                observation = phonebench_observe::render(&screen.tree, format);
                show(&mut out, &screen, &observation)?;
            }
            Err(ActError::NotDeviceAction(kind)) => {
                writeln!(out, "note: `{kind}` is for the episode, not the device; nothing changed")?;
            }
            Err(ActError::Rejected(why)) => {
                writeln!(out, "!!! line {}: {why}", number + 1)?;
                rejected += 1;
            }
            Err(ActError::Device(e)) => return Err(anyhow!("the device failed: {e}")),
        }
        out.flush()?;
    }
    Ok(rejected)
}

/// `phonebench screenshot --device`: the device's screen as a PNG, with marks when asked
/// (numbered by the observation of the device's current dump).
pub fn screenshot_device(mut device: Box<dyn Device>, som: Option<SomStyle>) -> Result<Vec<u8>> {
    let png = device.screenshot_png()?;
    let Some(style) = som else { return Ok(png) };
    let screen = device.screen()?;
    let image =
        ScreenImage::from_png(png.into()).map_err(|e| anyhow!("the screenshot does not decode: {e}"))?;
    let observation = phonebench_observe::render(&screen.tree, crate::screenshot::som_format(style));
    Ok(image.marked_png(&screen.tree, &observation.targets, style)?)
}
