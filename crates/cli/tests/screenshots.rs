//! `phonebench screenshot` against the golden images in `docs/images/` (the pictures the docs
//! show are the goldens, so they cannot drift from what the renderer draws).
//!
//! Each scenario runs the real binary. A frame matches its golden when no channel differs by
//! more than a small tolerance except on a tiny share of pixels (anti-aliasing may move by a
//! step between CPUs). `PHONEBENCH_BLESS=1 cargo test -p phonebench --test screenshots` rewrites
//! the goldens after a deliberate change; look at them before committing.

use std::path::{Path, PathBuf};
use std::process::Command;

use phonebench_pixels::decode_png;

/// (golden name, arguments, actions file content)
const SCENARIOS: &[(&str, &[&str], &str)] = &[
    ("launcher", &[], ""),
    ("contacts", &["--app", "contacts"], ""),
    ("messages", &["--app", "messages"], ""),
    ("settings", &["--app", "settings"], ""),
    // Contacts: a favourite's details, More options, Delete: the confirmation dialog.
    ("dialog", &["--app", "contacts"], "click [3]\nclick [3]\nclick [12]\n"),
    // Contacts search: the field takes focus and the keyboard comes up.
    ("keyboard", &["--app", "contacts"], "click [2]\ntext [1] [Da]\n"),
    // Messages: a conversation (Wei Zhang: Chinese text in the fallback font).
    ("conversation", &["--app", "messages"], "click [5]\n"),
    // Settings > Display > Dark theme on.
    ("dark", &["--app", "settings"], "click [9]\nclick [3]\n"),
    ("som-androidworld", &["--app", "contacts", "--som", "androidworld"], ""),
    ("som-sphinx", &["--app", "contacts", "--som", "sphinx"], ""),
    // Clock: alarm cards with switches, the floating button, the bottom navigation.
    ("clock", &["--app", "clock"], ""),
    // Clock > Timer, 5 and 00 on its keypad: 5 minutes, the Start button.
    ("timer-keypad", &["--app", "clock"], "click [10]\nclick [8]\nclick [13]\n"),
    // Four hours later the 13:00 alarm has rung: its notification in the shade.
    (
        "shade",
        &["--app", "clock"],
        "{\"action\":\"wait\",\"ms\":14400000}\n{\"action\":\"key\",\"key\":\"KEYCODE_NOTIFICATION\"}\n",
    ),
    // Files: the shared storage's top level, category chips, folders.
    ("files", &["--app", "files"], ""),
    // Gallery: album covers, generated pictures (`placeholder:`).
    ("gallery", &["--app", "gallery"], ""),
    // Camera: the viewfinder's scene, modes, shutter, the last shot's thumbnail.
    ("camera", &["--app", "camera"], ""),
    // Contacts > Create contact > Phone: the dial pad of a phone-number field.
    ("dial-pad", &["--app", "contacts"], "click [0]\nclick [5]\n"),
    // Markor: the notebook (folders, notes with previews, the new-file button).
    ("notes", &["--app", "notes"], ""),
    // Clock's + button: Android's time picker in its text-input mode, over the keyboard.
    ("time-picker", &["--app", "clock"], "click [0]\n"),
    // Files: long press on DCIM, Rename: an input dialog with the name, the keyboard up.
    ("input-dialog", &["--app", "files"], "longclick [3]\nclick [19]\n"),
    // Gmail: the offsite conversation: a multi-line body, two JPEG attachments from the package's
    // assets/ (`asset:`), cards, the reply bar.
    ("email-thread", &["--app", "email"], "{\"action_type\":\"click\",\"x\":540,\"y\":2080}\n"),
    // Calendar: the month grid with event chips and today marked.
    ("calendar", &["--app", "calendar"], ""),
    // Calendar > Mar 2 > Team stand-up: the event, its calendar's colour (`bg`).
    (
        "calendar-event",
        &["--app", "calendar"],
        "{\"action_type\":\"click\",\"x\":230,\"y\":400}\n{\"action_type\":\"click\",\"x\":540,\"y\":350}\n",
    ),
    // Calendar > Mar 2 > Create event > the start date: Android's date picker.
    (
        "date-picker",
        &["--app", "calendar"],
        "{\"action_type\":\"click\",\"x\":230,\"y\":400}\n{\"action_type\":\"click\",\"x\":963,\"y\":2158}\n{\"action_type\":\"navigate_back\"}\n{\"action_type\":\"click\",\"x\":500,\"y\":650}\n",
    ),
    // Contacts > Daniel Reyes > Edit: filled text fields keep their labels (floating labels).
    (
        "contact-edit",
        &["--app", "contacts"],
        "{\"action_type\":\"click\",\"x\":540,\"y\":410}\n{\"action_type\":\"click\",\"x\":881,\"y\":158}\n",
    ),
    // Gallery > Camera > a photo: the photo pager (a ViewPager page, swipe for the next).
    (
        "photo-pager",
        &["--app", "gallery"],
        "{\"action_type\":\"click\",\"x\":800,\"y\":500}\n{\"action_type\":\"click\",\"x\":180,\"y\":390}\n",
    ),
    // Markor > todo.md > Share: the share sheet built from what each app accepts.
    (
        "share-sheet",
        &["--app", "notes"],
        "{\"action_type\":\"click\",\"x\":540,\"y\":960}\n{\"action_type\":\"click\",\"x\":881,\"y\":158}\n",
    ),
    // Calendar > new event > Calendar: a single-choice dialog whose options come from SQL.
    (
        "choice-dialog",
        &["--app", "calendar"],
        "{\"action_type\":\"click\",\"x\":230,\"y\":400}\n{\"action_type\":\"click\",\"x\":963,\"y\":2158}\n{\"action_type\":\"navigate_back\"}\n{\"action_type\":\"click\",\"x\":540,\"y\":1424}\n",
    ),
    // Gmail > Compose, "Na" typed into To: contact suggestions and the e-mail keyboard (@).
    (
        "email-compose",
        &["--app", "email"],
        "{\"action_type\":\"click\",\"x\":870,\"y\":2158}\n{\"action\":\"type\",\"text\":\"Na\"}\n",
    ),
    // Contacts > Daniel Reyes > Edit, long press in First name: the text selection menu.
    (
        "text-menu",
        &["--app", "contacts"],
        "{\"action_type\":\"click\",\"x\":540,\"y\":410}\n{\"action_type\":\"click\",\"x\":881,\"y\":158}\n{\"action_type\":\"long_press\",\"x\":300,\"y\":335}\n",
    ),
    // SPHINX's 768×1280 device.
    ("settings-768x1280", &["--app", "settings", "--size", "768x1280"], ""),
];

fn images_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/images")
}

fn shoot(name: &str, args: &[&str], actions: &str, out: &Path) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_phonebench"));
    command.arg("screenshot").args(args).arg("--out").arg(out);
    if !actions.is_empty() {
        let file = out.with_extension("actions");
        std::fs::write(&file, actions).expect("write the actions");
        command.arg("--actions").arg(&file);
    }
    let output = command.output().expect("the binary runs");
    assert!(
        output.status.success(),
        "{name}: screenshot failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Pixels whose largest channel difference exceeds `tolerance`.
fn differing(a: &[u8], b: &[u8], tolerance: u8) -> usize {
    a.chunks_exact(4)
        .zip(b.chunks_exact(4))
        .filter(|(p, q)| p.iter().zip(q.iter()).any(|(x, y)| x.abs_diff(*y) > tolerance))
        .count()
}

#[test]
fn screenshots_match_the_golden_images() {
    let scratch = std::env::temp_dir().join(format!("phonebench-shots-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    let bless = std::env::var_os("PHONEBENCH_BLESS").is_some();
    let mut failures = Vec::new();
    for (name, args, actions) in SCENARIOS {
        let out = scratch.join(format!("{name}.png"));
        shoot(name, args, actions, &out);
        let golden = images_dir().join(format!("{name}.png"));
        if bless {
            std::fs::copy(&out, &golden).expect("bless the golden");
            continue;
        }
        let got = decode_png(&std::fs::read(&out).expect("read the screenshot")).expect("our PNG decodes");
        let want =
            decode_png(&std::fs::read(&golden).unwrap_or_else(|e| panic!("{}: {e}", golden.display())))
                .expect("the golden decodes");
        if (got.width(), got.height()) != (want.width(), want.height()) {
            failures.push(format!(
                "{name}: {}x{} instead of {}x{}",
                got.width(),
                got.height(),
                want.width(),
                want.height()
            ));
            continue;
        }
        let off = differing(got.data(), want.data(), 24);
        let total = (got.width() * got.height()) as usize;
        // At most 0.1% of the pixels may move by more than the tolerance.
        if off * 1000 > total {
            failures.push(format!("{name}: {off} of {total} pixels differ (kept at {})", out.display()));
        }
    }
    assert!(failures.is_empty(), "screenshots differ from docs/images:\n{}", failures.join("\n"));
}

#[test]
fn the_comparison_notices_a_changed_screen() {
    // The launcher against the contacts golden: the test above would fail on such a pair.
    let launcher =
        decode_png(&std::fs::read(images_dir().join("launcher.png")).expect("golden")).expect("png");
    let contacts =
        decode_png(&std::fs::read(images_dir().join("contacts.png")).expect("golden")).expect("png");
    let total = (launcher.width() * launcher.height()) as usize;
    assert!(differing(launcher.data(), contacts.data(), 24) * 1000 > total);
    assert_eq!(differing(launcher.data(), launcher.data(), 0), 0);
}

#[test]
fn bad_arguments_are_clear_errors() {
    let run = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_phonebench"))
            .arg("screenshot")
            .args(args)
            .output()
            .expect("the binary runs");
        assert!(!output.status.success(), "{args:?} succeeded");
        String::from_utf8_lossy(&output.stderr).to_string()
    };
    let out = std::env::temp_dir().join("phonebench-never-written.png");
    let out = out.to_str().expect("utf-8 path");
    assert!(run(&["--size", "big", "--out", out]).contains("not a screen size"));
    assert!(run(&["--som", "tesseract", "--out", out]).contains("not a set-of-marks style"));
    assert!(run(&["--app", "nope", "--out", out]).contains("nope"));
    let actions = std::env::temp_dir().join(format!("phonebench-bad-actions-{}.txt", std::process::id()));
    std::fs::write(&actions, "click [0]\nclick [99]\n").expect("write");
    let err = run(&["--app", "contacts", "--actions", actions.to_str().expect("utf-8"), "--out", out]);
    assert!(err.contains(":2:"), "the failing line is named: {err}");
    assert!(!Path::new(out).exists());
}

#[test]
fn play_saves_one_screenshot_per_step() {
    use std::io::Write;
    let dir = std::env::temp_dir().join(format!("phonebench-play-shots-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut child = Command::new(env!("CARGO_BIN_EXE_phonebench"))
        .args(["play", "--app", "contacts", "--size", "768x1280", "--screenshots"])
        .arg(&dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child.stdin.take().expect("stdin").write_all(b"click [3]\npress [back]\n").expect("write");
    assert!(child.wait_with_output().expect("ends").status.success());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the folder exists")
        .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    assert_eq!(names, ["step-000.png", "step-001.png", "step-002.png"]);
    let first = decode_png(&std::fs::read(dir.join("step-000.png")).expect("read")).expect("png");
    let second = decode_png(&std::fs::read(dir.join("step-001.png")).expect("read")).expect("png");
    let third = decode_png(&std::fs::read(dir.join("step-002.png")).expect("read")).expect("png");
    assert_eq!((first.width(), first.height()), (768, 1280));
    assert!(first.data() != second.data(), "the contact's details look different from the list");
    assert!(first.data() == third.data(), "back returns to the identical list");
}
