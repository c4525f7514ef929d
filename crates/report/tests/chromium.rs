//! Opens the generated report in headless Chromium: the pages must render (the dumped DOM holds
//! the summary figures and the escaped hostile text as text) with no console message at all (the
//! report has no script, so any console line is an error or a blocked script), and the episode
//! pages' screenshots must really load: a capture of the page must show the fixture PNGs' pixels
//! and the touch marker where the point is. The last test chains the real pipeline: an image
//! agent's episode on the simulated phone against the mock model server, the screenshots the
//! runner saved, the report of that results folder, and its episode page in Chromium showing the
//! real screen with the marker on the element the agent tapped.
//!
//! Chromium is required, never skipped: install the Debian package `chromium` (`.ci/run` does)
//! or point `PHONEBENCH_CHROMIUM` at a Chromium binary.

#[path = "../src/fixture.rs"]
mod fixture;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use phonebench_report::{SHOT_WIDTH, write_report};

/// How long one page may take before the test fails (a hung browser must not hang CI).
const TIMEOUT: Duration = Duration::from_secs(90);

/// The touch marker's colour (`.touch` in templates/layout.html).
const MARKER: [u8; 3] = [255, 0, 255];

/// The Chromium binary: `$PHONEBENCH_CHROMIUM`, else `chromium` on PATH. Panics with
/// instructions when there is none.
fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("PHONEBENCH_CHROMIUM") {
        return PathBuf::from(path);
    }
    let found = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).map(|d| d.join("chromium")).find(|p| p.is_file()));
    found.flatten().unwrap_or_else(|| {
        panic!(
            "headless Chromium is required by the report test and was not found: install the Debian \
             package `chromium` (`apt-get install -y chromium`; .ci/run does this) or set \
             PHONEBENCH_CHROMIUM to a Chromium binary"
        )
    })
}

/// What Chromium made of a page.
struct Loaded {
    /// The DOM after load, serialized (empty for captures).
    dom: String,
    /// Console messages: lines of Chromium's log that record a page's console output.
    console: Vec<String>,
    /// The whole log, for failure messages.
    log: String,
}

/// Whether a line of Chromium's stderr log records console output or an uncaught exception.
/// Chromium logs page console messages as `...:INFO:CONSOLE:12] "message", source: url (12)`
/// (older builds: `INFO:CONSOLE(12)`), errors included.
fn is_console_line(line: &str) -> bool {
    line.contains(":CONSOLE") || line.contains("Uncaught")
}

/// The `file://` URL of an absolute path, every segment percent-encoded (report folders may have
/// spaces, `#` or non-ASCII letters in their names).
fn file_url(path: &Path) -> String {
    let mut url = String::from("file://");
    for c in path.components().skip(1) {
        url.push('/');
        for &b in c.as_os_str().as_encoded_bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                url.push(char::from(b));
            } else {
                url.push_str(&format!("%{b:02X}"));
            }
        }
    }
    url
}

/// Runs headless Chromium with a fresh profile on `page` with the extra `args` and returns its
/// stdout, the console lines and the log.
fn chromium_on(page: &Path, profile: &Path, args: &[String]) -> Loaded {
    let page = page.canonicalize().unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    let url = file_url(&page);
    let out_path = profile.with_extension("dom");
    let err_path = profile.with_extension("log");
    // Output goes to files, not pipes: a full pipe buffer would block Chromium while we wait.
    let stdout = std::fs::File::create(&out_path).expect("create dom file");
    let stderr = std::fs::File::create(&err_path).expect("create log file");
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", chromium().display()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish loading {url} within {TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let read = |path: &Path| {
        let mut text = String::new();
        std::fs::File::open(path)
            .and_then(|mut f| f.read_to_string(&mut text))
            .expect("read chromium output");
        text
    };
    let (dom, log) = (read(&out_path), read(&err_path));
    assert!(status.success(), "chromium failed on {url} ({status}):\n{log}");
    let console = log.lines().filter(|l| is_console_line(l)).map(str::to_string).collect();
    Loaded { dom, console, log }
}

/// Loads `page` in headless Chromium with a fresh profile and returns the DOM and console lines.
fn load(page: &Path, profile: &Path) -> Loaded {
    let loaded = chromium_on(page, profile, &["--dump-dom".to_string()]);
    assert!(loaded.dom.contains("</html>"), "chromium dumped no DOM for {}:\n{}", page.display(), loaded.log);
    loaded
}

/// A capture of a page as Chromium painted it: RGB pixels, row after row.
struct Capture {
    width: usize,
    height: usize,
    rgb: Vec<u8>,
    loaded: Loaded,
}

/// The capture window: wide enough for the step layout, tall enough to hold the first two steps
/// of the fixture's screenshot episode (each about 620 px) below the facts and criteria.
/// (Headless `--screenshot` captures the window; a `#fragment` scroll is not honoured.)
const WINDOW: (usize, usize) = (1280, 2600);

/// Loads `page` and captures the window, at one device pixel per CSS pixel in sRGB so the PNGs'
/// colours arrive unchanged.
fn capture(page: &Path, profile: &Path) -> Capture {
    let file = profile.with_extension("png");
    let loaded = chromium_on(
        page,
        profile,
        &[
            format!("--screenshot={}", file.display()),
            format!("--window-size={},{}", WINDOW.0, WINDOW.1),
            "--force-device-scale-factor=1".to_string(),
            "--force-color-profile=srgb".to_string(),
            "--hide-scrollbars".to_string(),
        ],
    );
    let reader = std::fs::File::open(&file)
        .unwrap_or_else(|e| panic!("no capture {} ({e}):\n{}", file.display(), loaded.log));
    let mut decoder = png::Decoder::new(std::io::BufReader::new(reader));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().expect("read capture header");
    let mut buf = vec![0; reader.output_buffer_size().expect("capture size")];
    let info = reader.next_frame(&mut buf).expect("decode capture");
    let channels = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected capture colour type {other:?}"),
    };
    let (width, height) = (info.width as usize, info.height as usize);
    let mut rgb = Vec::with_capacity(width * height * 3);
    for row in buf[..info.buffer_size()].chunks(info.line_size) {
        for px in row[..width * channels].chunks(channels) {
            rgb.extend_from_slice(&px[..3]);
        }
    }
    Capture { width, height, rgb, loaded }
}

/// Pixels of one colour in a capture (±3 per channel): how many, their bounding box and centre.
#[derive(Debug)]
struct Blob {
    count: usize,
    /// left, top, right, bottom (inclusive).
    bounds: (usize, usize, usize, usize),
    centre: (f64, f64),
}

fn blob(c: &Capture, colour: [u8; 3]) -> Option<Blob> {
    let (mut count, mut sx, mut sy) = (0usize, 0f64, 0f64);
    let mut bounds = (usize::MAX, usize::MAX, 0, 0);
    for (i, px) in c.rgb.chunks(3).enumerate() {
        if px.iter().zip(colour).all(|(&a, b)| a.abs_diff(b) <= 3) {
            let (x, y) = (i % c.width, i / c.width);
            count += 1;
            (sx, sy) = (sx + x as f64, sy + y as f64);
            bounds = (bounds.0.min(x), bounds.1.min(y), bounds.2.max(x), bounds.3.max(y));
        }
    }
    (count > 0).then(|| Blob { count, bounds, centre: (sx / count as f64, sy / count as f64) })
}

/// The detector: the capture of the fixture's screenshot page shows both PNGs, whole, scaled to
/// [`SHOT_WIDTH`], and the touch marker centred on the touch point of the first. An image that
/// did not load (blocked by the policy, wrong URL, missing file) leaves no pixels of its colour.
fn screenshots_shown(c: &Capture) -> Result<(), String> {
    let (sw, sh) = fixture::SCREEN;
    let shown = (SHOT_WIDTH as usize, SHOT_WIDTH as usize * sh as usize / sw as usize);
    let mut first = None;
    for (n, colour) in fixture::SHOT_COLOURS.into_iter().enumerate() {
        let b = blob(c, colour).ok_or_else(|| format!("no pixel of screenshot {n}'s colour {colour:?}"))?;
        let size = (b.bounds.2 + 1 - b.bounds.0, b.bounds.3 + 1 - b.bounds.1);
        if size.0.abs_diff(shown.0) > 1
            || size.1.abs_diff(shown.1) > 1
            || b.count < shown.0 * shown.1 * 9 / 10
        {
            return Err(format!("screenshot {n} is not shown whole at {shown:?}: {b:?}"));
        }
        first.get_or_insert(b);
    }
    let image = first.expect("two colours");
    let marker = blob(c, MARKER).ok_or("no touch marker pixel")?;
    if marker.count < 50 {
        return Err(format!("too few touch marker pixels: {marker:?}"));
    }
    let (left, top, w, h) = (image.bounds.0 as f64, image.bounds.1 as f64, shown.0 as f64, shown.1 as f64);
    let expected = (
        left + w * f64::from(fixture::TOUCH.0) / f64::from(sw),
        top + h * f64::from(fixture::TOUCH.1) / f64::from(sh),
    );
    if (marker.centre.0 - expected.0).abs() > 2.0 || (marker.centre.1 - expected.1).abs() > 2.0 {
        return Err(format!("touch marker centred at {:?}, expected {expected:?}", marker.centre));
    }
    Ok(())
}

#[test]
fn console_error_detection_works() {
    // The detector must see a script error and a console.error, or a clean run below proves
    // nothing. Two pages: one broken, one clean.
    let dir = fixture::temp_dir("chromium-selfcheck");
    let bad = dir.join("bad.html");
    std::fs::write(
        &bad,
        "<!doctype html><html><body><p>x</p><script>notDefinedAnywhere();</script>\
         <script>console.error('deliberate')</script></body></html>",
    )
    .unwrap();
    let loaded = load(&bad, &dir.join("profile-bad"));
    assert!(
        loaded.console.iter().any(|l| l.contains("notDefinedAnywhere is not defined")),
        "the uncaught error was not detected; console lines {:?}; log:\n{}",
        loaded.console,
        loaded.log
    );
    assert!(
        loaded.console.iter().any(|l| l.contains("deliberate")),
        "console.error not detected:\n{}",
        loaded.log
    );

    // The report's own policy: a script that slipped through escaping is refused, and the
    // refusal is a console message we detect.
    let blocked = dir.join("blocked.html");
    std::fs::write(
        &blocked,
        "<!doctype html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\">\
         </head><body><script>document.title = 'ran'</script></body></html>",
    )
    .unwrap();
    let loaded = load(&blocked, &dir.join("profile-blocked"));
    assert!(
        !loaded.console.is_empty(),
        "a script blocked by the policy left no console line:\n{}",
        loaded.log
    );
    assert!(!loaded.dom.contains("<title>ran</title>"), "the policy did not block the script");

    let good = dir.join("good.html");
    std::fs::write(&good, "<!doctype html><html><body><p>fine</p></body></html>").unwrap();
    let loaded = load(&good, &dir.join("profile-good"));
    assert!(loaded.console.is_empty(), "a clean page reported console lines: {:?}", loaded.console);
    assert!(loaded.dom.contains("<p>fine</p>"));
    fixture::cleanup(&dir);
}

#[test]
fn report_renders_in_chromium_without_console_errors() {
    let dir = fixture::build_results("chromium-report");
    let files = write_report(&dir, &dir.join("report")).unwrap();

    let index = load(&files.index, &dir.join("profile-index"));
    assert!(index.console.is_empty(), "console messages on index.html: {:?}", index.console);
    // The summary figures made it into the rendered DOM.
    for needle in [
        "SR (success rate)",
        "66.7%",
        "77.8%",
        "60.0%",
        "0.500",
        "9.1%",
        "37.5%",
        "model server unreachable",
        "aria-label=\"SR per category\"",
        "href=\"episodes/messages.hostile_0.html\"",
    ] {
        assert!(index.dom.contains(needle), "index DOM lacks {needle:?}");
    }
    // The hostile tag value is text, not markup: no script element exists in the DOM.
    assert!(!index.dom.contains("<script"), "a script element made it into the index DOM");

    let page = files.episodes.iter().find(|p| p.ends_with("messages.hostile_0.html")).unwrap();
    let episode = load(page, &dir.join("profile-episode"));
    assert!(episode.console.is_empty(), "console messages on {}: {:?}", page.display(), episode.console);
    assert!(!episode.dom.contains("<script"), "a script element made it into the episode DOM");
    // The serializer escapes text again, so the hostile string reads as text inside the blocks.
    let as_text = "&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;";
    assert!(episode.dom.matches(as_text).count() >= 5, "hostile text not shown as text:\n{}", episode.dom);
    // Model calls and judge verdicts are text too, and the hostile screenshot path reaches the
    // image URL percent-encoded only.
    for needle in [
        format!("reasoning {as_text}"),
        format!("[image: screen {as_text}]"),
        format!("judge {as_text}"),
        "src=\"../../screenshots/%3C/pre%3E%3Cscript%3Ealert%281%29%3C/script%3E.png\"".to_string(),
    ] {
        assert!(episode.dom.contains(&needle), "episode DOM lacks {needle:?}");
    }
    for needle in [
        "Reply to Bob with",
        "a message was sent",
        "expected an action, got prose",
        "no element 99",
        "Last screen",
    ] {
        assert!(episode.dom.contains(needle), "episode DOM lacks {needle:?}");
    }
    fixture::cleanup(&dir);
}

#[test]
fn screenshots_load_with_the_touch_point_marked() {
    let dir = fixture::build_results("chromium-shots");
    // The report outside the results folder, in a folder whose name needs encoding: the page
    // reaches the PNGs through `..` and percent-encoded names in both trees.
    let out = fixture::temp_dir("chromium-shots-out ü #1");
    let files = write_report(&dir, &out).unwrap();
    let page = files.episodes.iter().find(|p| p.ends_with(fixture::SHOTS_PAGE)).unwrap();
    let html = std::fs::read_to_string(page).unwrap();

    let good = capture(page, &dir.join("profile-good"));
    assert_eq!((good.width, good.height), WINDOW);
    assert!(
        good.loaded.console.is_empty(),
        "console messages on {}: {:?}",
        page.display(),
        good.loaded.console
    );
    if let Err(why) = screenshots_shown(&good) {
        panic!(
            "the screenshots are not shown as they should be in Chromium: {why}; log:\n{}",
            good.loaded.log
        );
    }

    // Two deliberately broken copies next to it, which the detector must catch: one whose
    // policy refuses the images (as a wrong CSP would), one whose image URLs name no file (as a
    // wrong relative URL or a missing PNG would).
    let policy = "img-src 'self'";
    assert_eq!(html.matches(policy).count(), 1, "the page's image policy changed");
    let blocked = page.with_file_name("broken-policy.html");
    std::fs::write(&blocked, html.replace(policy, "img-src data:")).unwrap();
    assert_eq!(html.matches("&#x2f;step-00").count(), 6, "two img src, two links, two captions");
    let missing = page.with_file_name("broken-url.html");
    std::fs::write(&missing, html.replace("&#x2f;step-00", "&#x2f;no-such-step-00")).unwrap();
    let (blocked, missing) = std::thread::scope(|s| {
        let blocked = s.spawn(|| capture(&blocked, &dir.join("profile-blocked")));
        let missing = s.spawn(|| capture(&missing, &dir.join("profile-missing")));
        (blocked.join().unwrap(), missing.join().unwrap())
    });

    // The policy's refusal is caught twice: no pixels, and a console line.
    let why = screenshots_shown(&blocked).expect_err("images blocked by the policy went unnoticed");
    assert!(why.contains("no pixel of screenshot 0"), "{why}");
    assert!(
        blocked.loaded.console.iter().any(|l| l.contains("Content Security Policy")),
        "a blocked image left no console line:\n{}",
        blocked.loaded.log
    );
    // A URL naming no file is caught by the pixels (Chromium logs nothing for a missing file:
    // image, which is why the console alone proves nothing).
    let why = screenshots_shown(&missing).expect_err("images with a wrong URL went unnoticed");
    assert!(why.contains("no pixel of screenshot 0"), "{why}");
    fixture::cleanup(&out);
    fixture::cleanup(&dir);
}

// The real pipeline: an image agent's episode on the simulated phone, its screenshots as the
// runner saves them, the report of it, and the page in Chromium.

/// The task of the real episode: it opens on the Settings main screen.
const REAL_TASK: &str = "settings.screen_timeout";
/// The simulated phone's screen, in pixels.
const PHONE_SCREEN: (usize, usize) = (1080, 2400);

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn catalog() -> phonebench_phone::Catalog {
    phonebench_phone::Catalog::load_dir(&repo().join("apps")).expect("the apps load")
}

/// The clickable element around the "Display" label of the Settings main screen (the row the
/// agent taps), as left, top, right, bottom (right and bottom exclusive), and its label's centre.
fn display_row() -> ((i32, i32, i32, i32), (i32, i32)) {
    use phonebench_phone::{CLOCK_START_MS, Phone, PhoneConfig};
    let config = PhoneConfig { seed: 0, clock_start_ms: CLOCK_START_MS, ..PhoneConfig::default() };
    let mut phone = Phone::new(catalog(), config).expect("phone");
    phone.apply(&phonebench_actions::Action::OpenApp { app: "settings".into() }).expect("settings opens");
    let tree = phone.tree().expect("tree");
    let label = tree
        .iter()
        .filter(|(_, n)| n.text == "Display" && !n.bounds.is_empty())
        .map(|(id, _)| id)
        .last()
        .expect("a `Display` label on the Settings main screen");
    let row = std::iter::once(label)
        .chain(tree.ancestors(label))
        .find(|&id| tree.node(id).clickable)
        .expect("the `Display` label is in a clickable row");
    let b = tree.node(row).bounds;
    ((b.left, b.top, b.right, b.bottom), tree.node(label).bounds.center())
}

/// A screenshot as the report shows it: the PNG averaged over 4×4 blocks (1080×2400 shown
/// [`SHOT_WIDTH`] = 270 px wide is exactly a quarter), RGB row after row.
struct Shown {
    width: usize,
    height: usize,
    rgb: Vec<u8>,
}

fn shown(png_bytes: &[u8]) -> Shown {
    let pixmap = phonebench_pixels::decode_png(png_bytes).expect("the saved screenshot decodes");
    let (w, h) = (pixmap.width() as usize, pixmap.height() as usize);
    assert_eq!((w, h), PHONE_SCREEN, "the saved screenshot is the phone's screen");
    let f = w / SHOT_WIDTH as usize;
    let (sw, sh) = (w / f, h / f);
    let data = pixmap.data();
    let mut rgb = Vec::with_capacity(sw * sh * 3);
    for y in 0..sh {
        for x in 0..sw {
            for ch in 0..3 {
                let mut sum = 0usize;
                for dy in 0..f {
                    for dx in 0..f {
                        sum += usize::from(data[((y * f + dy) * w + x * f + dx) * 4 + ch]);
                    }
                }
                rgb.push(((sum + f * f / 2) / (f * f)) as u8);
            }
        }
    }
    Shown { width: sw, height: sh, rgb }
}

/// Points of a shown screenshot inside flat areas (a 7×7 neighbourhood of one colour, ±2), where
/// any browser's scaling filter must give the PNG's colour: one every 6 px. The most frequent
/// colour's points come last, so a search tries the telling ones first.
fn flat_points(s: &Shown) -> Vec<(usize, usize, [u8; 3])> {
    let px = |x: usize, y: usize| {
        let i = (y * s.width + x) * 3;
        [s.rgb[i], s.rgb[i + 1], s.rgb[i + 2]]
    };
    let mut points = Vec::new();
    for y in (3..s.height - 3).step_by(6) {
        for x in (3..s.width - 3).step_by(6) {
            let c = px(x, y);
            let flat = (y - 3..=y + 3).all(|yy| {
                (x - 3..=x + 3).all(|xx| px(xx, yy).iter().zip(c).all(|(&a, b)| a.abs_diff(b) <= 2))
            });
            if flat {
                points.push((x, y, c));
            }
        }
    }
    let mut counts = std::collections::HashMap::new();
    for p in &points {
        *counts.entry(p.2).or_insert(0usize) += 1;
    }
    points.sort_by_key(|p| counts[&p.2]);
    points
}

/// Whether the capture, read with its top-left at `at`, has the colours of `points` (±6 per
/// channel) but for at most `misses` of them.
fn fits(c: &Capture, at: (usize, usize), points: &[(usize, usize, [u8; 3])], misses: usize) -> bool {
    let mut missed = 0;
    for &(x, y, [r, g, b]) in points {
        let i = ((at.1 + y) * c.width + at.0 + x) * 3;
        if c.rgb[i].abs_diff(r) > 6 || c.rgb[i + 1].abs_diff(g) > 6 || c.rgb[i + 2].abs_diff(b) > 6 {
            missed += 1;
            if missed > misses {
                return false;
            }
        }
    }
    true
}

/// Where a capture may show the screenshot `s`: every top-left position at which about 60 flat
/// points of colour (not white, as the page is) have their colour, but for 3 (the touch marker
/// may cover one or two). Every fifth of them first, to be quick.
fn candidates(c: &Capture, s: &Shown) -> Result<Vec<(usize, usize)>, String> {
    let coloured: Vec<_> = flat_points(s).into_iter().filter(|p| p.2 != [255, 255, 255]).collect();
    if coloured.len() < 30 {
        return Err(format!(
            "the screenshot has {} flat coloured points, too few to find it",
            coloured.len()
        ));
    }
    let points: Vec<_> = coloured.iter().step_by(coloured.len().div_ceil(60)).copied().collect();
    let first: Vec<_> = points.iter().step_by(5).copied().collect();
    let mut found = Vec::new();
    if c.width < s.width || c.height < s.height {
        return Ok(found);
    }
    for top in 0..=c.height - s.height {
        for left in 0..=c.width - s.width {
            if fits(c, (left, top), &first, 2) && fits(c, (left, top), &points, 3) {
                found.push((left, top));
            }
        }
    }
    Ok(found)
}

/// The mean absolute difference per channel between the capture at `at` and the shown
/// screenshot, on every `step`th pixel both ways, outside the rectangle `avoid` of the capture
/// (the touch marker).
fn picture_error(
    c: &Capture,
    s: &Shown,
    at: (usize, usize),
    avoid: (usize, usize, usize, usize),
    step: usize,
) -> f64 {
    let (mut sum, mut n) = (0u64, 0u64);
    for y in (at.1..at.1 + s.height).step_by(step) {
        for x in (at.0..at.0 + s.width).step_by(step) {
            if (avoid.0..=avoid.2).contains(&x) && (avoid.1..=avoid.3).contains(&y) {
                continue;
            }
            let (i, j) = ((y * c.width + x) * 3, ((y - at.1) * s.width + x - at.0) * 3);
            sum += u64::from(c.rgb[i].abs_diff(s.rgb[j]))
                + u64::from(c.rgb[i + 1].abs_diff(s.rgb[j + 1]))
                + u64::from(c.rgb[i + 2].abs_diff(s.rgb[j + 2]));
            n += 3;
        }
    }
    sum as f64 / n.max(1) as f64
}

/// How far (mean per channel) the picture Chromium shows may be from the 4×4 box average (it
/// is about 0.04: Chromium's filter and the box average differ at a few edges; the picture one
/// pixel off is several times this far).
const MAX_PICTURE_ERROR: f64 = 0.5;

/// The detector for the real episode: the capture shows the screenshot `s` whole, once, with
/// its real pixels, and the touch marker is centred on `point` (screen pixels) scaled into the
/// shown picture. Returns where the picture is.
fn real_shot_shown(c: &Capture, s: &Shown, point: (i32, i32)) -> Result<(usize, usize), String> {
    let marker = blob(c, MARKER);
    // The marker's white halo is 2 px wide.
    let around = marker.as_ref().map_or((1, 1, 0, 0), |m| {
        let b = m.bounds;
        (b.0.saturating_sub(3), b.1.saturating_sub(3), b.2 + 3, b.3 + 3)
    });
    let mut fits: Vec<(f64, (usize, usize))> =
        candidates(c, s)?.into_iter().map(|at| (picture_error(c, s, at, around, 6), at)).collect();
    fits.sort_by(|a, b| a.0.total_cmp(&b.0));
    let Some(&(_, (left, top))) = fits.first() else {
        return Err("the screenshot's pixels are not in the capture".into());
    };
    let error = picture_error(c, s, (left, top), around, 1);
    if error > MAX_PICTURE_ERROR {
        return Err(format!(
            "the picture at {:?} differs from the screenshot by {error:.2} per channel on average",
            (left, top)
        ));
    }
    if let Some((e, at)) = fits.iter().skip(1).find(|f| f.0 <= MAX_PICTURE_ERROR) {
        return Err(format!("the screenshot is shown twice: at {:?} and {at:?} ({e:.2})", (left, top)));
    }
    let marker = marker.ok_or("no touch marker pixel")?;
    if marker.count < 50 {
        return Err(format!("too few touch marker pixels: {marker:?}"));
    }
    let scale = s.width as f64 / PHONE_SCREEN.0 as f64;
    let expected = (left as f64 + f64::from(point.0) * scale, top as f64 + f64::from(point.1) * scale);
    if (marker.centre.0 - expected.0).abs() > 2.0 || (marker.centre.1 - expected.1).abs() > 2.0 {
        return Err(format!("touch marker centred at {:?}, expected {expected:?}", marker.centre));
    }
    Ok((left, top))
}

#[test]
fn a_real_image_agent_episode_shows_its_screenshot_and_touch_point_in_chromium() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use phonebench_agents::llm::{AgentConfig, ModelAgentSpec, ModelHandle, Models};
    use phonebench_model::mock::{MockReply, MockServer};
    use phonebench_model::{ChatModel, Endpoint, OpenAiClient, RetryPolicy};
    use phonebench_runner::results::ResultsDb;
    use phonebench_runner::{AgentChoice, Limits, RunOptions, run_suite};

    let started = Instant::now();
    let (row, label) = display_row();
    // The model: a tap on the "Display" label in Qwen3-VL's 0–999 grid, then "done".
    let grid = |v: i32, of: usize| (f64::from(v) / of as f64 * 999.0).round();
    let tap = format!(
        "Thought: open Display\nAction: \"Tap Display.\"\n<tool_call>\n{{\"name\": \"mobile_use\", \"arguments\": \
         {{\"action\": \"click\", \"coordinate\": [{}, {}]}}}}\n</tool_call>",
        grid(label.0, PHONE_SCREEN.0),
        grid(label.1, PHONE_SCREEN.1)
    );
    let done = "Thought: done\nAction: \"Finish.\"\n<tool_call>\n{\"name\": \"mobile_use\", \"arguments\": \
                {\"action\": \"terminate\", \"status\": \"success\"}}\n</tool_call>";
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let server_rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let server = server_rt
        .block_on(MockServer::start(move |_: &serde_json::Value| {
            MockReply::text(if counted.fetch_add(1, Ordering::SeqCst) == 0 {
                tap.clone()
            } else {
                done.to_string()
            })
        }))
        .unwrap();

    let mut config = AgentConfig::builtin("coords").unwrap();
    config.set_option("convention=qwen3-vl").unwrap();
    let mut endpoint = Endpoint::new(server.base_url(), "mock-actor");
    endpoint.retry = RetryPolicy { max_retries: 1, base_delay_ms: 10, max_delay_ms: 20 };
    let client: Arc<dyn ChatModel> = Arc::new(OpenAiClient::new(endpoint).unwrap());
    let main = ModelHandle::new(client, &config.model);
    let agent = ModelAgentSpec::new(config, Models { main, grounding: None }).unwrap();

    let dir = fixture::temp_dir("chromium-real");
    let results = dir.join("results");
    let options = RunOptions {
        tasks: Some(REAL_TASK.into()),
        limits: Limits { max_steps: Some(4), ..Limits::default() },
        save_screenshots: true,
        ..RunOptions::new("starter", AgentChoice::Model(Arc::new(agent)), &results)
    };
    let suite = phonebench_tasks::Suite::load(&repo().join("suites/starter")).unwrap();
    let run_rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let outcome = run_rt.block_on(run_suite(&catalog(), &suite, &options)).unwrap();
    server_rt.block_on(server.stop());
    assert_eq!(calls.load(Ordering::SeqCst), 2, "one tap, then done");
    assert_eq!(outcome.episodes.len(), 1);
    let episode = &outcome.episodes[0];
    assert_eq!(episode.infrastructure_error, None);

    // The step as stored: the tap's point lies on the Display row, on the saved screen.
    let steps = ResultsDb::open_existing(&results).unwrap().steps(&episode.key).unwrap();
    let first = &steps[0];
    let point = first.point.expect("the tap's point is stored");
    assert!(
        row.0 <= point.0 && point.0 < row.2 && row.1 <= point.1 && point.1 < row.3,
        "the tap at {point:?} misses the Display row {row:?}"
    );
    assert!(first.hit.as_deref().is_some_and(|h| h.contains("Display")), "hit: {:?}", first.hit);
    assert_eq!(first.screen_size, Some((PHONE_SCREEN.0 as u32, PHONE_SCREEN.1 as u32)));
    let stored = first.screenshot.as_deref().expect("screenshots are saved");
    let shot = shown(&std::fs::read(results.join(stored)).unwrap());

    // The report elsewhere: the page reaches the PNGs through `..` out of its own tree.
    let out = fixture::temp_dir("chromium-real-out");
    let files = write_report(&results, &out).unwrap();
    let page_name = format!("{}.html", episode.key.replace('#', "_"));
    let page = files.episodes.iter().find(|p| p.ends_with(&page_name)).unwrap();
    let capture = capture(page, &dir.join("profile"));
    assert_eq!((capture.width, capture.height), WINDOW);
    assert!(
        capture.loaded.console.is_empty(),
        "console messages on {}: {:?}",
        page.display(),
        capture.loaded.console
    );
    let at = real_shot_shown(&capture, &shot, point).unwrap_or_else(|why| {
        panic!(
            "the real screenshot is not shown as it should be in Chromium: {why}; log:\n{}",
            capture.loaded.log
        )
    });

    // The detector catches a marker off the tapped point (one row lower) and a picture that is
    // not there (its box painted white, as a missing image leaves it).
    let lower = (point.0, point.1 + (row.3 - row.1));
    let why = real_shot_shown(&capture, &shot, lower).expect_err("a marker off the point went unnoticed");
    assert!(why.contains("touch marker centred at"), "{why}");
    let loaded = Loaded { dom: String::new(), console: Vec::new(), log: String::new() };
    let mut blank =
        Capture { width: capture.width, height: capture.height, rgb: capture.rgb.clone(), loaded };
    for y in at.1..at.1 + shot.height {
        let i = (y * blank.width + at.0) * 3;
        blank.rgb[i..i + shot.width * 3].fill(255);
    }
    let why = real_shot_shown(&blank, &shot, point).expect_err("a missing picture went unnoticed");
    assert!(why.contains("not in the capture"), "{why}");
    eprintln!("real episode to Chromium capture in {:?}", started.elapsed());
    fixture::cleanup(&out);
    fixture::cleanup(&dir);
}

/// A results folder of capability probes alone, with a hostile model name.
#[allow(clippy::unwrap_used)]
fn probe_results(name: &str) -> PathBuf {
    use phonebench_probe::item::{DataSource, Mode, ProbeKind};
    let dir = std::env::temp_dir().join(format!("phonebench-report-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut db = phonebench_runner::ResultsDb::open(&dir).unwrap();
    let model = "<script>alert(1)</script>";
    for probe in [ProbeKind::Knowledge, ProbeKind::Completion, ProbeKind::Grounding] {
        let config = phonebench_probe::ProbeConfig {
            probe,
            model: model.into(),
            data: vec![DataSource::Generated],
            modes: probe.default_modes().to_vec(),
            settings: phonebench_probe::AskSettings {
                parsing: phonebench_probe::Parsing::Sphinx,
                repair: true,
            },
            limit: None,
            suite: Some("full@0".into()),
            items: "0".into(),
            sampling: String::new(),
        };
        db.set_probe_config(probe.name(), &serde_json::to_string(&config).unwrap(), true).unwrap();
    }
    let result =
        |probe: ProbeKind, mode: Mode, item: &str, group: &str, units: u32, correct: u32, repaired: u32| {
            phonebench_probe::ProbeResult {
                key: phonebench_probe::ProbeResult::key_of(probe, mode, item),
                probe,
                mode,
                item: item.into(),
                source: DataSource::Generated,
                app: Some("contacts".into()),
                group: group.into(),
                trajectory: (probe == ProbeKind::Completion).then(|| "t#0".to_string()),
                answers: Vec::new(),
                units,
                correct,
                correct_repaired: repaired,
                format_errors: 0,
                repairs: 0,
                infrastructure_error: None,
                unaskable: None,
            }
        };
    for r in [
        result(ProbeKind::Knowledge, Mode::Text, "q1", "intention_level", 5, 3, 4),
        result(ProbeKind::Knowledge, Mode::Text, "q2", "app_level", 5, 5, 5),
        result(ProbeKind::Completion, Mode::Tree, "c0", "pre", 1, 0, 0),
        result(ProbeKind::Completion, Mode::Tree, "c1", "last", 1, 1, 1),
        result(ProbeKind::Grounding, Mode::Text, "g1", "click", 1, 1, 1),
    ] {
        let text = serde_json::to_string(&r).unwrap();
        db.insert_probe(&r.key, r.probe.name(), None, &text, "[]").unwrap();
    }
    dir
}

#[test]
#[allow(clippy::unwrap_used)]
fn a_probe_folder_report_shows_the_capability_radar_in_chromium() {
    let dir = probe_results("radar");
    let files = write_report(&dir, &dir.join("report")).unwrap();
    let index = load(&files.index, &dir.join("profile-index"));
    assert!(index.console.is_empty(), "console messages on index.html: {:?}", index.console);
    assert!(!index.dom.contains("<script"), "the model name became markup");
    for needle in [
        "id=\"capabilities\"",
        "class=\"radar\"",
        "data-dimension=\"goal_understanding\"",
        "Goal understanding</td><td>80.0%",
        "App knowledge</td><td>100.0%",
        "Planning</td><td>50.0%",
        "Grounding</td><td>100.0%",
        "accuracy:intention_level",
        "&lt;script&gt;alert(1)&lt;/script&gt;",
    ] {
        assert!(index.dom.contains(needle), "index DOM lacks {needle:?}:\n{}", index.dom);
    }
    assert!(!index.dom.contains("<h2>Summary</h2>"), "a folder of probes has no run summary");
    // The model's polygon is painted: pixels of its stroke colour, inside the chart.
    let c = capture(&files.index, &dir.join("profile-capture"));
    let stroke = blob(&c, [25, 118, 210]).expect("no pixel of the model's polygon");
    assert!(stroke.count > 200, "{stroke:?}");
    let (w, h) = (stroke.bounds.2 - stroke.bounds.0, stroke.bounds.3 - stroke.bounds.1);
    assert!(w > 60 && h > 60, "the polygon spans {w}×{h} px: {stroke:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
