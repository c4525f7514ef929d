//! The fake device's shell: command lines split and quoted exactly as `sh -c` does (so a client's
//! escaping bug runs an extra command here too), and the Android commands a device backend uses,
//! acting on the simulated phone.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use phonebench_device::fake::{FakeDevice, FakeOptions, FileStat, ShellOutput};
use phonebench_phone::{Catalog, Phone, PhoneConfig};

fn phone() -> Phone {
    let apps = phonebench_testkit::workspace_root().join("apps");
    let catalog = Catalog::load_dir(&apps).expect("the real apps load");
    Phone::new(catalog, PhoneConfig::default()).expect("the phone starts")
}

fn device() -> FakeDevice {
    FakeDevice::new(phone(), FakeOptions::default())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs a line that must succeed; its stdout.
fn ok(device: &mut FakeDevice, line: &str) -> String {
    let out = device.shell(line);
    assert_eq!(out.exit, 0, "`{line}` failed: {}", text(&out.stderr));
    text(&out.stdout)
}

/// The centre of the first node `key` finds (text, content-desc or resource id) on screen.
fn centre(device: &mut FakeDevice, key: &str) -> (i32, i32) {
    let tree = device.phone_mut().shared_tree().unwrap();
    let node = phonebench_testkit::find_node(&tree, key).unwrap_or_else(|| panic!("no `{key}` on screen"));
    node.bounds.center()
}

fn field_text(device: &mut FakeDevice, id: &str) -> String {
    let tree = device.phone_mut().shared_tree().unwrap();
    phonebench_testkit::find_node(&tree, id).unwrap_or_else(|| panic!("no `{id}`")).text.clone()
}

fn focus_line(device: &mut FakeDevice) -> String {
    let dump = ok(device, "dumpsys window");
    dump.lines().find(|l| l.trim_start().starts_with("mCurrentFocus=")).unwrap().trim().to_string()
}

#[test]
fn the_device_can_cross_threads() {
    fn send<T: Send>() {}
    send::<FakeDevice>();
}

#[test]
fn uiautomator_dump_writes_the_current_tree() {
    let mut device = device();
    assert_eq!(ok(&mut device, "uiautomator dump"), "UI hierchary dumped to: /sdcard/window_dump.xml\n");
    let expected = device.phone_mut().shared_tree().unwrap();
    let xml = device.read_file("/sdcard/window_dump.xml").unwrap();
    assert_eq!(phonebench_uitree::read_xml(&text(&xml)).unwrap(), *expected);
    // Shared storage has two names, and `adb pull` stats it first.
    assert_eq!(device.read_file("/storage/emulated/0/window_dump.xml").unwrap(), xml);
    let stat = device.stat("/sdcard/window_dump.xml").unwrap();
    assert_eq!((stat.mode, stat.size as usize), (0o100644, xml.len()));

    // `adb exec-out uiautomator dump /dev/tty`: the XML, then the line.
    let tty = ok(&mut device, "uiautomator dump --compressed /dev/tty");
    let (xml_part, line) = tty.split_at(tty.find("UI hierchary dumped to:").unwrap());
    assert_eq!(line, "UI hierchary dumped to: /dev/tty\n");
    assert_eq!(phonebench_uitree::read_xml(xml_part).unwrap(), *expected);

    let out = device.shell("uiautomator dump /system/x.xml");
    assert_eq!(out.exit, 1);
    assert!(text(&out.stderr).contains("Read-only file system"));
}

#[test]
fn tapping_a_launcher_icon_opens_that_app() {
    let mut device = device();
    assert_eq!(
        focus_line(&mut device),
        "mCurrentFocus=Window{1f2e3d u0 com.google.android.apps.nexuslauncher/.NexusLauncherActivity}"
    );
    let (x, y) = centre(&mut device, "Contacts");
    ok(&mut device, &format!("input tap {x} {y}"));
    assert_eq!(device.phone().foreground_app(), Some("contacts"));
    assert_eq!(focus_line(&mut device), "mCurrentFocus=Window{1f2e3d u0 com.android.contacts/list}");
    let dump = ok(&mut device, "dumpsys window windows");
    assert!(dump.contains("mFocusedApp=ActivityRecord{4a5b6c u0 com.android.contacts/list t12}"));
    let activities = ok(&mut device, "dumpsys activity activities");
    assert!(
        activities.contains("  mResumedActivity: ActivityRecord{4a5b6c u0 com.android.contacts/list t12}")
    );
    let displays = ok(&mut device, "dumpsys window displays");
    assert!(displays.contains("    init=1080x2400 420dpi cur=1080x2400 app=1080x"), "{displays}");

    // Back, by number and by name; home; floats are truncated.
    ok(&mut device, "input keyevent 4");
    assert_eq!(device.phone().foreground_app(), None);
    ok(&mut device, &format!("input touchscreen tap {x}.7 {y}.2"));
    assert_eq!(device.phone().foreground_app(), Some("contacts"));
    ok(&mut device, "input keyevent KEYCODE_HOME");
    assert_eq!(device.phone().foreground_app(), None);
    let out = device.shell("input tap 10");
    assert_eq!(out.exit, 1);
    assert!(text(&out.stderr).starts_with("Error: "));
    assert_eq!(device.shell("input keyevent NOT-A-KEY").exit, 1);
}

#[test]
fn input_text_follows_android_rules() {
    let mut device = device();
    let out = ok(&mut device, "am start -n com.android.contacts/.edit");
    assert_eq!(out, "Starting: Intent { cmp=com.android.contacts/.edit }\n");
    assert!(focus_line(&mut device).contains("com.android.contacts/edit}"));
    // `%s` is a space; only the first argument is typed.
    ok(&mut device, "input text 'a%sb' ignored");
    assert_eq!(field_text(&mut device, "first_name"), "a b");
    ok(&mut device, "input text '%d;&'");
    assert_eq!(field_text(&mut device, "first_name"), "a b%d;&");
    // A character the virtual key map cannot type: nothing is typed, the command fails.
    let out = device.shell("input text 'é'");
    assert_eq!(out.exit, 255);
    assert!(text(&out.stderr).starts_with("Exception occurred while executing 'text':\n"));
    assert_eq!(field_text(&mut device, "first_name"), "a b%d;&");
    // ADBKeyboard types anything verbatim (no `%s` rule) and clears.
    let out = ok(&mut device, "am broadcast -a ADB_CLEAR_TEXT");
    assert_eq!(
        out,
        "Broadcasting: Intent { act=ADB_CLEAR_TEXT flg=0x400000 }\nBroadcast completed: result=0\n"
    );
    assert_eq!(field_text(&mut device, "first_name"), "");
    let out = ok(&mut device, "am broadcast -a ADB_INPUT_TEXT --es msg 'é%s日'");
    assert!(out.starts_with("Broadcasting: Intent { act=ADB_INPUT_TEXT flg=0x400000 (has extras) }\n"));
    assert_eq!(field_text(&mut device, "first_name"), "é%s日");
    ok(&mut device, "am broadcast -a ADB_CLEAR_TEXT");
    ok(&mut device, "am broadcast -a ADB_INPUT_B64 --es msg w6lt");
    assert_eq!(field_text(&mut device, "first_name"), "ém");
}

#[test]
fn broadcasts_nobody_receives_do_nothing() {
    let options = FakeOptions { adb_keyboard: false, ..FakeOptions::default() };
    let mut device = FakeDevice::new(phone(), options);
    ok(&mut device, "am start -n com.android.contacts/com.android.contacts.edit");
    let out = ok(&mut device, "am broadcast -a ADB_INPUT_TEXT --es msg hello");
    assert!(out.ends_with("Broadcast completed: result=0\n"));
    assert_eq!(field_text(&mut device, "first_name"), "");
    assert!(!ok(&mut device, "pm list packages").contains("adbkeyboard"));
    assert_eq!(
        ok(&mut device, "ime list -s"),
        "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME\n"
    );
}

#[test]
fn separators_run_commands_and_quoted_ones_do_not() {
    let mut device = device();
    let out = device.shell("echo a; touch /sdcard/x");
    assert_eq!((text(&out.stdout).as_str(), out.exit), ("a\n", 0));
    assert_eq!(device.executed().len(), 2);
    assert_eq!(device.read_file("/sdcard/x").unwrap(), b"");

    let out = device.shell("echo 'a; touch /sdcard/y'");
    assert_eq!(text(&out.stdout), "a; touch /sdcard/y\n");
    assert_eq!(device.executed().len(), 3);
    assert!(device.stat("/sdcard/y").is_none());

    for line in [
        "echo \"a && touch /sdcard/y\"",
        "echo a\\;touch /sdcard/y",
        "echo 'it'\\''s' \"\\$HOME\" '$(touch /sdcard/y)' '`touch /sdcard/y`' '|' '&'",
    ] {
        let out = device.shell(line);
        assert_eq!(out.exit, 0, "{line}");
        assert!(device.stat("/sdcard/y").is_none(), "{line}");
    }
    assert_eq!(ok(&mut device, "echo 'it'\\''s' \"\\$HOME\" 100$ '#'"), "it's $HOME 100$ #\n");

    // && and || as in sh; newlines separate; comments end at the line's end.
    assert_eq!(ok(&mut device, "false && echo no || echo yes"), "yes\n");
    assert_eq!(ok(&mut device, "true || echo no; echo done # touch /sdcard/z\necho next"), "done\nnext\n");
    assert!(device.stat("/sdcard/z").is_none());
    let out = device.shell("false; true && false");
    assert_eq!(out.exit, 1);
    let out = device.shell("exit 3; touch /sdcard/z");
    assert_eq!(out.exit, 3);
    assert!(device.stat("/sdcard/z").is_none());
    assert_eq!(ok(&mut device, "sh -c 'echo inner; exit 0'; echo outer"), "inner\nouter\n");
    assert_eq!(device.shell("").exit, 0);
    assert_eq!(device.shell("   ").stdout, b"");
}

#[test]
fn expansions_pipes_and_backgrounds_are_refused_before_anything_runs() {
    let mut device = device();
    for line in [
        "touch /sdcard/a; echo $(id)",
        "touch /sdcard/a; echo `id`",
        "touch /sdcard/a; echo \"$HOME\"",
        "touch /sdcard/a; echo ${x}",
        "touch /sdcard/a; echo $1",
        "touch /sdcard/a | cat",
        "touch /sdcard/a & echo b",
        "touch /sdcard/a > /sdcard/b",
        "touch /sdcard/a; echo 'unterminated",
        "touch /sdcard/a; echo \"unterminated",
    ] {
        let out = device.shell(line);
        assert_eq!(out.exit, 2, "{line}");
        assert!(
            text(&out.stderr).starts_with("/system/bin/sh: unsupported syntax: "),
            "{line}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty());
        assert!(device.executed().is_empty(), "{line} ran {:?}", device.executed());
        assert!(device.stat("/sdcard/a").is_none());
    }
}

#[test]
fn unknown_commands_are_not_found() {
    let mut device = device();
    let out = device.shell("frobnicate --all");
    assert_eq!(out.exit, 127);
    assert_eq!(text(&out.stderr), "/system/bin/sh: frobnicate: inaccessible or not found\n");
    assert_eq!(ok(&mut device, "/system/bin/echo hi"), "hi\n");
}

#[test]
fn am_start_force_stop_and_pm_clear() {
    let mut device = device();
    let fresh = device.phone().database_bytes("contacts").unwrap();
    ok(&mut device, "am start -W -S -n com.android.contacts/com.android.contacts.list --user 0");
    assert_eq!(device.phone().current_screen(), Some(("contacts", "list")));
    ok(&mut device, "am start -n com.android.contacts/edit");
    assert_eq!(device.phone().current_screen(), Some(("contacts", "edit")));
    // A real app's activity name that is no screen: the entry screen.
    ok(&mut device, "am start -n com.android.contacts/.MainActivity");
    assert_eq!(device.phone().current_screen(), Some(("contacts", "list")));

    let out = device.shell("am start -n com.nothing.here/.Main");
    assert_eq!(out.exit, 1);
    assert!(text(&out.stderr).contains("does not exist"), "{}", text(&out.stderr));
    let out = device.shell("am start -a android.intent.action.VIEW -d https://example.com/x");
    assert_eq!(out.exit, 1);
    assert!(text(&out.stderr).starts_with("Error: Activity not started, unable to resolve Intent"));

    ok(&mut device, "am force-stop com.android.contacts");
    assert_eq!(device.phone().foreground_app(), None);
    ok(&mut device, "monkey -p com.android.contacts -c android.intent.category.LAUNCHER 1");
    assert_eq!(device.phone().current_screen(), Some(("contacts", "list")));
    let out = device.shell("monkey -p com.nothing.here -c android.intent.category.LAUNCHER 1");
    assert_eq!(out.exit, 252);
    assert!(text(&out.stderr).contains("** No activities found to run, monkey aborted."));

    ok(&mut device, "am start -a android.intent.action.MAIN -c android.intent.category.HOME");
    assert_eq!(device.phone().foreground_app(), None);

    device.phone_mut().execute("contacts", "DELETE FROM contacts", &BTreeMap::new()).unwrap();
    assert_ne!(device.phone().database_bytes("contacts").unwrap(), fresh);
    ok(&mut device, "am start -n com.android.contacts/.list");
    assert_eq!(ok(&mut device, "pm clear com.android.contacts"), "Success\n");
    assert_eq!(device.phone().database_bytes("contacts").unwrap(), fresh);
    assert_eq!(device.phone().foreground_app(), None);
    let out = device.shell("pm clear com.nothing.here");
    assert_eq!((text(&out.stdout).as_str(), out.exit), ("Failed\n", 1));
}

#[test]
fn screencap_png_and_raw() {
    let mut device = device();
    let png = device.shell("screencap -p");
    assert_eq!(png.exit, 0);
    assert!(png.stdout.starts_with(b"\x89PNG\r\n\x1a\n"));
    let raw = device.shell("screencap");
    let word = |i: usize| u32::from_le_bytes(raw.stdout[i * 4..i * 4 + 4].try_into().unwrap());
    assert_eq!([word(0), word(1), word(2), word(3)], [1080, 2400, 1, 0]);
    assert_eq!(raw.stdout.len(), 16 + 1080 * 2400 * 4);
    ok(&mut device, "screencap /sdcard/s.png");
    assert!(device.read_file("/sdcard/s.png").unwrap().starts_with(b"\x89PNG"));
}

#[test]
fn system_queries() {
    let mut device = device();
    assert_eq!(ok(&mut device, "wm size"), "Physical size: 1080x2400\n");
    assert_eq!(ok(&mut device, "wm density"), "Physical density: 420\n");
    assert_eq!(ok(&mut device, "getprop ro.build.version.sdk"), "34\n");
    assert_eq!(ok(&mut device, "getprop ro.serialno"), "emulator-5554\n");
    assert_eq!(ok(&mut device, "getprop no.such.prop"), "\n");
    let all = ok(&mut device, "getprop");
    assert!(all.contains("[sys.boot_completed]: [1]\n"));
    let packages = ok(&mut device, "pm list packages");
    let lines: Vec<&str> = packages.lines().collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted);
    for p in [
        "package:com.android.contacts",
        "package:com.google.android.apps.nexuslauncher",
        "package:com.android.adbkeyboard",
    ] {
        assert!(lines.contains(&p), "{p} in {packages}");
    }
    assert!(!ok(&mut device, "pm list packages -3").contains("nexuslauncher"));
    assert_eq!(ok(&mut device, "pm list packages contacts"), "package:com.android.contacts\n");
    assert_eq!(
        ok(&mut device, "pm path com.android.contacts"),
        "package:/data/app/com.android.contacts/base.apk\n"
    );
    assert_eq!(
        ok(&mut device, "ime list -s"),
        "com.android.adbkeyboard/.AdbIME\ncom.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME\n"
    );
    assert_eq!(
        ok(&mut device, "ime set com.android.adbkeyboard/.AdbIME"),
        "Input method com.android.adbkeyboard/.AdbIME selected for user #0\n"
    );
    assert_eq!(
        ok(&mut device, "settings get secure default_input_method"),
        "com.android.adbkeyboard/.AdbIME\n"
    );
    assert_eq!(ok(&mut device, "settings get global nothing"), "null\n");
    ok(&mut device, "settings put global stay_on_while_plugged_in 7");
    assert_eq!(ok(&mut device, "settings get global stay_on_while_plugged_in"), "7\n");
    assert_eq!(ok(&mut device, "id"), ok(&mut device, "id"));
    assert!(ok(&mut device, "id").starts_with("uid=2000(shell) gid=2000(shell)"));
    assert_eq!(ok(&mut device, "whoami"), "shell\n");
    assert_eq!(ok(&mut device, "echo -n a b"), "a b");
    let before = device.phone().now_ms();
    ok(&mut device, "sleep 2");
    assert!(device.phone().now_ms() >= before + 2_000);
}

#[test]
fn files_live_in_the_writable_folders() {
    let mut device = device();
    let dir = FileStat { mode: 0o040771, size: 0, mtime: device.stat("/").unwrap().mtime };
    for path in ["/", "/sdcard", "/sdcard/", "/storage/emulated/0", "/data/local/tmp"] {
        assert_eq!(device.stat(path), Some(dir), "{path}");
    }
    assert_eq!(device.read_file("/sdcard").unwrap_err(), "Is a directory");
    assert_eq!(device.read_file("/sdcard/none").unwrap_err(), "No such file or directory");
    assert!(device.stat("/sdcard/none").is_none());

    let out = device.shell("touch /system/x");
    assert_eq!(out.exit, 1);
    assert!(text(&out.stderr).contains("Read-only file system"));
    ok(&mut device, "mkdir -p /data/local/tmp/d && touch /data/local/tmp/d/f /storage/emulated/0/g");
    assert_eq!(ok(&mut device, "ls /data/local/tmp"), "d\n");
    assert_eq!(ok(&mut device, "ls /data/local/tmp/d"), "f\n");
    assert!(ok(&mut device, "ls /sdcard").lines().any(|l| l == "g"));
    assert_eq!(ok(&mut device, "cat /sdcard/g"), "");
    ok(&mut device, "uiautomator dump /data/local/tmp/d/u.xml");
    assert!(ok(&mut device, "cat /data/local/tmp/d/u.xml").starts_with("<?xml"));
    let out = device.shell("rm /data/local/tmp/d");
    assert_eq!(out.exit, 1);
    ok(&mut device, "rm -rf /data/local/tmp/d");
    assert!(device.stat("/data/local/tmp/d/f").is_none());
    ok(&mut device, "rm /sdcard/g");
    let out: ShellOutput = device.shell("cat /sdcard/g");
    assert_eq!((out.exit, text(&out.stderr).as_str()), (1, "cat: /sdcard/g: No such file or directory\n"));
    ok(&mut device, "rm -f /sdcard/g");
}

#[test]
fn swipes_and_long_presses() {
    let mut device = device();
    ok(&mut device, "input swipe 540 1800 540 600 300");
    ok(&mut device, "input draganddrop 540 1800 540 600");
    ok(&mut device, "input swipe 540 1200 545 1204 800");
    assert_eq!(device.shell("input swipe 1 2 3").exit, 1);
    assert_eq!(device.shell("input swipe 1 2 3 4 x").exit, 1);
}

/// Single-quotes a word the way a careful client does (`'` as `'\''`).
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

#[test]
fn hostile_text_quoted_properly_is_typed_verbatim_in_one_command() {
    let mut device = device();
    ok(&mut device, "am start -n com.android.contacts/.edit");
    let hostile = "a;b&&c||d|e`id`$(id)$HOME\"q\"'s'\\n#x>y<z";
    let before = device.executed().len();
    ok(&mut device, &format!("input text {}", quote(hostile)));
    assert_eq!(device.executed().len(), before + 1, "{:?}", device.executed());
    assert_eq!(device.executed().last().unwrap(), &["input", "text", hostile]);
    assert_eq!(field_text(&mut device, "first_name"), hostile);

    // The same text unquoted: a real shell would run more; this one refuses the whole line.
    let out = device.shell(&format!("input text {hostile}"));
    assert_eq!(out.exit, 2);
    assert_eq!(device.executed().len(), before + 1);

    // Clearing key by key, in batches as a client sends them.
    let mut keys = vec!["KEYCODE_MOVE_END"];
    keys.extend(std::iter::repeat_n("KEYCODE_DEL", 200));
    ok(&mut device, &format!("input keyevent {}", keys.join(" ")));
    assert_eq!(field_text(&mut device, "first_name"), "");
}

#[test]
fn random_command_lines_never_panic() {
    const PIECES: &[&str] = &[
        "input",
        "tap",
        "swipe",
        "text",
        "keyevent",
        "draganddrop",
        "am",
        "start",
        "-n",
        "-a",
        "-c",
        "-W",
        "-S",
        "--es",
        "msg",
        "broadcast",
        "ADB_INPUT_TEXT",
        "ADB_INPUT_B64",
        "ADB_CLEAR_TEXT",
        "force-stop",
        "pm",
        "clear",
        "list",
        "packages",
        "path",
        "monkey",
        "-p",
        "uiautomator",
        "dump",
        "/dev/tty",
        "screencap",
        "dumpsys",
        "window",
        "activity",
        "wm",
        "size",
        "getprop",
        "settings",
        "get",
        "put",
        "ime",
        "set",
        "cat",
        "rm",
        "-rf",
        "ls",
        "touch",
        "mkdir",
        "sleep",
        "exit",
        "sh",
        "-c",
        "echo",
        "0",
        "-1",
        "1e309",
        "NaN",
        "99999999999",
        "540",
        "1200",
        "0.5",
        "%s",
        "%",
        "é",
        "com.android.contacts",
        "com.android.contacts/.edit",
        "/",
        "//",
        "..",
        "/sdcard/",
        "/sdcard/f",
        "/storage/emulated/0/../0/f",
        "/data/local/tmp/",
        "KEYCODE_BACK",
        "4",
        "187",
        ";",
        "&&",
        "||",
        "'",
        "\"",
        "\\",
        "$",
        "#",
        "\n",
        "",
        "''",
        "w6lt",
        "!!",
        "--user",
    ];
    const COMMANDS: &[&str] = &[
        "input",
        "input touchscreen",
        "am",
        "am start",
        "am broadcast",
        "pm",
        "monkey",
        "uiautomator",
        "screencap",
        "dumpsys",
        "wm",
        "getprop",
        "settings",
        "ime",
        "cat",
        "rm",
        "ls",
        "touch",
        "mkdir",
        "sleep",
        "exit",
        "sh -c",
        "echo",
    ];
    let mut device = device();
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..800 {
        let len = 1 + (next() % 7) as usize;
        let mut line: Vec<&str> = (0..len).map(|_| PIECES[(next() % PIECES.len() as u64) as usize]).collect();
        line.insert(0, COMMANDS[(next() % COMMANDS.len() as u64) as usize]);
        let _ = device.shell(&line.join(" "));
    }
    // Still a working device.
    assert_eq!(ok(&mut device, "wm size"), "Physical size: 1080x2400\n");
    ok(&mut device, "uiautomator dump");
}

#[test]
fn unquoted_patterns_expand_to_existing_paths() {
    let mut device = device();
    ok(&mut device, "touch /sdcard/a.png /sdcard/b.png /sdcard/c.txt /sdcard/.hidden.png");
    assert_eq!(ok(&mut device, "echo /sdcard/*.png"), "/sdcard/a.png /sdcard/b.png\n");
    assert_eq!(
        ok(&mut device, "echo '/sdcard/*.png' /sdcard/\\*.png \"/sdcard/?.txt\""),
        "/sdcard/*.png /sdcard/*.png /sdcard/?.txt\n"
    );
    assert_eq!(
        ok(&mut device, "echo /sdcard/[ab].png /storage/emulated/0/?.txt"),
        "/sdcard/a.png /sdcard/b.png /storage/emulated/0/c.txt\n"
    );
    // No match: the word stays as it was.
    assert_eq!(ok(&mut device, "echo /sdcard/*.gif nothing*"), "/sdcard/*.gif nothing*\n");
    assert_eq!(ok(&mut device, "echo sd*"), "sdcard\n");
    // Expanded when the command runs, after the ones before it.
    ok(&mut device, "rm /sdcard/*.png; touch /sdcard/d.png; echo /sdcard/*.png");
    assert_eq!(device.executed().last().unwrap(), &["echo", "/sdcard/d.png"]);
    assert!(device.stat("/sdcard/a.png").is_none() && device.stat("/sdcard/c.txt").is_some());
    assert!(device.stat("/sdcard/.hidden.png").is_some());
}

#[test]
fn storage_is_bounded() {
    let mut device = device();
    // A raw screenshot is ~10 MB: the 7th no longer fits in 64 MiB.
    for i in 0..6 {
        ok(&mut device, &format!("screencap /data/local/tmp/s{i}.raw"));
    }
    let out = device.shell("screencap /sdcard/s6.raw");
    assert_eq!(out.exit, 1);
    assert!(text(&out.stderr).contains("No space left on device"), "{}", text(&out.stderr));
    assert!(device.stat("/sdcard/s6.raw").is_none());
    ok(&mut device, "rm /data/local/tmp/s0.raw && screencap /sdcard/s6.raw");
    assert_eq!(device.stat("/sdcard/s6.raw").unwrap().size as usize, 16 + 1080 * 2400 * 4);
}
