//! Opens the generated report in headless Chromium: the pages must render (the dumped DOM holds
//! the summary figures and the escaped hostile text as text) with no console message at all (the
//! report has no script, so any console line is an error or a blocked script), and the episode
//! pages' screenshots must really load: a capture of the page must show the fixture PNGs' pixels
//! and the touch marker where the point is.
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
