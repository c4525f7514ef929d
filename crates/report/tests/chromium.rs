//! Opens the generated report in headless Chromium: the pages must render (the dumped DOM holds
//! the summary figures and the escaped hostile text as text) with no console message at all (the
//! report has no script, so any console line is an error or a blocked script).
//!
//! Chromium is required, never skipped: install the Debian package `chromium` (`.ci/run` does)
//! or point `PHONEBENCH_CHROMIUM` at a Chromium binary.

#[path = "../src/fixture.rs"]
mod fixture;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use phonebench_report::write_report;

/// How long one page may take before the test fails (a hung browser must not hang CI).
const TIMEOUT: Duration = Duration::from_secs(90);

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
    /// The DOM after load, serialized.
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

/// Loads `page` in headless Chromium with a fresh profile and returns the DOM and console lines.
fn load(page: &Path, profile: &Path) -> Loaded {
    let page = page.canonicalize().unwrap_or_else(|e| panic!("{}: {e}", page.display()));
    let url = format!("file://{}", page.display());
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
        .arg("--dump-dom")
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
    assert!(dom.contains("</html>"), "chromium dumped no DOM for {url}:\n{log}");
    let console = log.lines().filter(|l| is_console_line(l)).map(str::to_string).collect();
    Loaded { dom, console, log }
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
