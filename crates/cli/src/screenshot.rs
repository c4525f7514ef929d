//! `phonebench screenshot`: the simulated phone (or a real dump) as a PNG, with optional
//! set-of-marks.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use clap::Args;
use phonebench_actions::{Action, ParseOptions, Syntax, parse_action_with};
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Display, Phone, PhoneConfig, PhoneError};
use phonebench_pixels::{SomStyle, Theme, draw_marks, encode_png, render_inferred};

use crate::FormatArg;
use crate::play::{apps_dir, load_catalog};

/// Arguments of `phonebench screenshot`.
#[derive(Args, Debug)]
pub struct ScreenshotArgs {
    /// App to open first (id or name); without it the launcher is shown.
    #[arg(long)]
    pub app: Option<String>,
    /// Actions to apply first, one per line in any syntax (`#` starts a comment). Element
    /// indexes refer to the observation in `--format` before each action.
    #[arg(long)]
    pub actions: Option<PathBuf>,
    /// Screen size, `WxH` or `WxH@DPI` (default 1080x2400@420, or a dump's own extent with
    /// `--xml`; 768x1280 is SPHINX's).
    #[arg(long)]
    pub size: Option<String>,
    /// Draw set-of-marks numbered like the text observation: `androidworld` (indexes of the
    /// `androidworld` format) or `sphinx` (indexes of `sphinx-tree`).
    #[arg(long)]
    pub som: Option<String>,
    /// Observation format whose indexes `--actions` use.
    #[arg(long, value_enum, default_value_t = FormatArg::SphinxTree)]
    pub format: FormatArg,
    /// Render this uiautomator dump instead of the simulated phone (looks guessed from
    /// classes; size from `--size`).
    #[arg(long, conflicts_with_all = ["app", "actions"])]
    pub xml: Option<PathBuf>,
    /// Phone seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// App packages folder.
    #[arg(long)]
    pub apps: Option<PathBuf>,
    /// The PNG to write.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub device: crate::device::DeviceArgs,
}

/// Parses the `--som` value.
pub fn som_style(value: Option<&str>) -> Result<Option<SomStyle>> {
    value.map(|v| v.parse::<SomStyle>().map_err(|e| anyhow!(e))).transpose()
}

/// The observation format whose indexes a set-of-marks style shows.
pub fn som_format(style: SomStyle) -> ObservationFormat {
    match style {
        SomStyle::AndroidWorld => ObservationFormat::AndroidWorld,
        SomStyle::Sphinx => ObservationFormat::SphinxTree,
    }
}

/// `phonebench screenshot`.
pub fn run(args: &ScreenshotArgs) -> Result<()> {
    if args.device.device.is_some()
        && (args.xml.is_some()
            || args.app.is_some()
            || args.actions.is_some()
            || args.size.is_some()
            || args.seed != 0)
    {
        anyhow::bail!(
            "--device takes the device's screen as it is, at its own size (--app, --actions, --xml, --size and --seed are for the simulated phone; drive a device with `phonebench play --device`)"
        );
    }
    let given: Option<Display> =
        args.size.as_deref().map(str::parse).transpose().map_err(|e: String| anyhow!("--size: {e}"))?;
    let som = som_style(args.som.as_deref())?;
    if let Some(device) = args.device.connect()? {
        return write_png(&args.out, &crate::device::screenshot_device(device, som)?);
    }
    if let Some(xml) = &args.xml {
        let bytes = std::fs::read(xml).with_context(|| format!("cannot read {}", xml.display()))?;
        let tree = phonebench_uitree::read_xml_bytes(&bytes)
            .map_err(|e| anyhow!("{}:{}:{}: {}", xml.display(), e.line, e.column, e.message))?;
        // Without --size, the dump's own extent (its screen's pixels).
        let display = match given {
            Some(d) => d,
            None => {
                let b = tree.screen_bounds();
                let (w, h) = (b.right.max(1) as u32, b.bottom.max(1) as u32);
                let d = Display::with_size(w, h);
                d.check().map_err(|e| anyhow!("{}: {e}; give --size", xml.display()))?;
                d
            }
        };
        let mut pixmap =
            render_inferred(&tree, display.width, display.height, display.density(), &Theme::LIGHT)?;
        if let Some(style) = som {
            let observation = phonebench_observe::render(&tree, som_format(style));
            draw_marks(&mut pixmap, &tree, &observation.targets, style);
        }
        return write_png(&args.out, &encode_png(&pixmap)?);
    }
    let display = given.unwrap_or_default();
    let catalog = load_catalog(&apps_dir(args.apps.clone()))?;
    let mut phone = Phone::new(catalog, PhoneConfig { seed: args.seed, display, ..PhoneConfig::default() })
        .map_err(|e| anyhow!("{e}"))?;
    if let Some(app) = &args.app {
        phone.apply(&Action::OpenApp { app: app.clone() }).map_err(|e| anyhow!("{e}"))?;
    }
    if let Some(file) = &args.actions {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
        apply_script(&mut phone, &text, args.format.into())
            .map_err(|e| anyhow!("{}:{}", file.display(), e))?;
    }
    let png = screenshot_png(&mut phone, som)?;
    write_png(&args.out, &png)
}

/// Applies one action per line; errors are `line: message`.
fn apply_script(phone: &mut Phone, text: &str, format: ObservationFormat) -> Result<(), String> {
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fail = |e: String| format!("{}: {e}", number + 1);
        let action = parse_action_with(line, Syntax::Auto, &ParseOptions::default())
            .map_err(|e| fail(e.to_string()))?;
        phone.observe(format).map_err(|e| fail(e.to_string()))?;
        match phone.apply(&action) {
            Ok(_) | Err(PhoneError::NotDeviceAction(_)) => {}
            Err(e) => return Err(fail(e.to_string())),
        }
    }
    Ok(())
}

/// The phone's current screen as PNG bytes, with marks when asked. The marks are numbered by a
/// fresh observation in the style's format, which also becomes the phone's latest observation.
pub fn screenshot_png(phone: &mut Phone, som: Option<SomStyle>) -> Result<Vec<u8>> {
    let mut pixmap = phone.screenshot().map_err(|e| anyhow!("{e}"))?;
    if let Some(style) = som {
        let observation = phone.observe(som_format(style)).map_err(|e| anyhow!("{e}"))?;
        let tree = phone.tree().map_err(|e| anyhow!("{e}"))?;
        draw_marks(&mut pixmap, tree, &observation.targets, style);
    }
    Ok(encode_png(&pixmap)?)
}

fn write_png(path: &Path, png: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(path, png).with_context(|| format!("cannot write {}", path.display()))
}
