//! Typing text on a device through its shell without the shell (or `input`) changing it.
//!
//! Two layers interpret what we send, and each gets its own escaping:
//! 1. The device's `sh -c` (adb joins a command's words with spaces and hands the line to the
//!    shell): every argument is single-quoted, `'` written as `'\''`. Inside single quotes `sh`
//!    gives every other character its literal meaning, so `;`, `&`, `|`, `$`, backticks, `"`
//!    and newlines are data, never syntax ([`quote`]).
//! 2. Android's `input text`: it types only its first argument, and turns every `%s` into a
//!    space (its only escape; there is none for a literal `%s`). Spaces are written `%s`; a
//!    literal `%` followed by `s` ends the command after the `%`, and the `s` starts the next
//!    one (a `%` at the end of an argument stays a `%`).
//!
//! `input text` types through the virtual key map, which has only printable ASCII. Other text
//! (accents, CJK, emoji) goes through ADBKeyboard (<https://github.com/senzhk/ADBKeyBoard>, an
//! IME that types what a broadcast carries), base64-encoded so that no shell or intent layer
//! sees the characters: `am broadcast -a ADB_INPUT_B64 --es msg <base64>`. Newlines and tabs
//! become the Enter and Tab keys.

use base64::Engine;

/// The most characters of one `input text` command (long ones are slow and some devices drop
/// keys; several commands type the same text).
const MAX_CHARS_PER_COMMAND: usize = 500;

/// The most bytes of text per ADBKeyboard broadcast.
const MAX_BYTES_PER_BROADCAST: usize = 3000;

/// How to type non-ASCII text, when the device has a way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnicodeInput {
    /// ADBKeyboard is installed and selected: `am broadcast -a ADB_INPUT_B64`.
    AdbKeyboard,
    /// Only `input text`: ASCII only.
    None,
}

/// Single-quotes `word` for a POSIX shell (Android's mksh).
pub fn quote(word: &str) -> String {
    let mut out = String::with_capacity(word.len() + 2);
    out.push('\'');
    for c in word.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// The shell commands that type `text` verbatim, in order; an error says why it cannot be typed
/// (non-ASCII text on a device without ADBKeyboard).
pub fn typing_commands(text: &str, unicode: UnicodeInput) -> Result<Vec<String>, String> {
    // Newlines (`\r\n`, `\r`, `\n`) are the Enter key and tabs the Tab key, however the rest is
    // typed; other control characters cannot be typed and are left out.
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut commands = Vec::new();
    let mut segment = String::new();
    for c in text.chars() {
        match c {
            '\n' | '\t' => {
                segment_commands(&segment, unicode, &mut commands)?;
                segment.clear();
                commands.push(format!("input keyevent {}", if c == '\n' { 66 } else { 61 }));
            }
            c if c.is_control() => {}
            c => segment.push(c),
        }
    }
    segment_commands(&segment, unicode, &mut commands)?;
    Ok(commands)
}

/// The commands typing `segment` (no newlines, tabs or control characters).
fn segment_commands(segment: &str, unicode: UnicodeInput, commands: &mut Vec<String>) -> Result<(), String> {
    if segment.is_empty() {
        return Ok(());
    }
    if !segment.chars().all(|c| (' '..='~').contains(&c)) {
        return match unicode {
            UnicodeInput::AdbKeyboard => {
                commands.extend(broadcast_commands(segment));
                Ok(())
            }
            UnicodeInput::None => Err(
                "this text has characters `input text` cannot type (only printable ASCII); typing it needs \
                 ADBKeyboard selected as the device's input method (https://github.com/senzhk/ADBKeyBoard: install it, then \
                 `adb shell ime enable com.android.adbkeyboard/.AdbIME` and `adb shell ime set com.android.adbkeyboard/.AdbIME`)"
                    .into(),
            ),
        };
    }
    let mut arg = String::new();
    let mut chars_in_arg = 0;
    let flush = |arg: &mut String, chars: &mut usize, commands: &mut Vec<String>| {
        if !arg.is_empty() {
            commands.push(format!("input text {}", quote(arg)));
            arg.clear();
        }
        *chars = 0;
    };
    let mut iter = segment.chars().peekable();
    while let Some(c) = iter.next() {
        match c {
            ' ' => {
                arg.push_str("%s");
                chars_in_arg += 1;
            }
            '%' if iter.peek() == Some(&'s') => {
                // A `%` then `s` in one argument would type a space: end the argument here.
                arg.push('%');
                flush(&mut arg, &mut chars_in_arg, commands);
            }
            c => {
                arg.push(c);
                chars_in_arg += 1;
            }
        }
        // Splitting anywhere is safe: a `%` ending an argument stays a `%`.
        if chars_in_arg >= MAX_CHARS_PER_COMMAND {
            flush(&mut arg, &mut chars_in_arg, commands);
        }
    }
    flush(&mut arg, &mut chars_in_arg, commands);
    Ok(())
}

/// ADBKeyboard broadcasts typing `text`, split at character boundaries.
fn broadcast_commands(text: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut part = String::new();
    for c in text.chars() {
        if part.len() + c.len_utf8() > MAX_BYTES_PER_BROADCAST {
            commands.push(broadcast(&part));
            part.clear();
        }
        part.push(c);
    }
    if !part.is_empty() {
        commands.push(broadcast(&part));
    }
    commands
}

fn broadcast(text: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    format!("am broadcast -a ADB_INPUT_B64 --es msg {}", quote(&encoded))
}

/// What Android's `input text` types for one argument (InputShellCommand.sendText): `%s`
/// becomes a space; a `%` before anything else stays. Copied step by step from the Java loop,
/// including `%%s` → `% `. The fake device types by it, and the tests check our escaping
/// against it.
pub fn android_input_text(text: &str) -> String {
    let mut buff: Vec<char> = text.chars().collect();
    let mut escape = false;
    let mut i = 0usize;
    while i < buff.len() {
        if escape {
            escape = false;
            if buff[i] == 's' {
                buff[i] = ' ';
                buff.remove(i - 1);
                i -= 1;
            }
        }
        if buff[i] == '%' {
            escape = true;
        }
        i += 1;
    }
    buff.into_iter().collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// What the commands type, read back the way the device's shell and `input` would
    /// (quotes removed as sh does for our quoting, then the `%s` rule).
    fn typed(commands: &[String]) -> String {
        let mut out = String::new();
        for c in commands {
            if let Some(arg) = c.strip_prefix("input text ") {
                out.push_str(&android_input_text(&unquote(arg)));
            } else if c == "input keyevent 66" {
                out.push('\n');
            } else if c == "input keyevent 61" {
                out.push('\t');
            } else {
                panic!("unexpected {c}");
            }
        }
        out
    }

    fn unquote(word: &str) -> String {
        word.strip_prefix('\'').unwrap().strip_suffix('\'').unwrap().replace("'\\''", "'")
    }

    #[test]
    fn percent_s_rule_matches_android() {
        assert_eq!(android_input_text("a%sb"), "a b");
        assert_eq!(android_input_text("%s%s"), "  ");
        assert_eq!(android_input_text("100%"), "100%");
        assert_eq!(android_input_text("%%s"), "% ");
        assert_eq!(android_input_text("%d%"), "%d%");
        assert_eq!(android_input_text("s%"), "s%");
        assert_eq!(android_input_text(""), "");
    }

    #[test]
    fn ascii_text_round_trips_through_both_layers() {
        for text in [
            "hello world",
            "it's \"quoted\" & ; | $(rm -rf /) `id` \\ %s 100% %%s",
            "a%",
            "%s%s",
            "  spaces  ",
            "line\nnext\tcell",
            "",
        ] {
            let commands = typing_commands(text, UnicodeInput::None).unwrap();
            assert_eq!(typed(&commands), text, "{commands:?}");
            for c in &commands {
                // Every argument is one single-quoted word after the command.
                assert!(c.starts_with("input keyevent ") || c.starts_with("input text '"), "{c}");
            }
        }
    }

    #[test]
    fn newlines_are_enter_everywhere_and_controls_are_dropped() {
        let commands = typing_commands("a\r\nb\rc\u{7}d", UnicodeInput::None).unwrap();
        assert_eq!(typed(&commands), "a\nb\ncd");
        let mixed = typing_commands("é\nx", UnicodeInput::AdbKeyboard).unwrap();
        assert_eq!(mixed.len(), 3);
        assert!(
            mixed[0].starts_with("am broadcast")
                && mixed[1] == "input keyevent 66"
                && mixed[2] == "input text 'x'"
        );
    }

    #[test]
    fn long_text_is_split() {
        let text = "ab ".repeat(700);
        let commands = typing_commands(&text, UnicodeInput::None).unwrap();
        assert!(commands.len() > 2);
        assert_eq!(typed(&commands), text);
    }

    #[test]
    fn unicode_needs_adb_keyboard() {
        let err = typing_commands("café", UnicodeInput::None).unwrap_err();
        assert!(err.contains("ADBKeyboard"), "{err}");
        let commands = typing_commands("café 日本 🙂", UnicodeInput::AdbKeyboard).unwrap();
        assert_eq!(commands.len(), 1);
        let b64 = unquote(commands[0].strip_prefix("am broadcast -a ADB_INPUT_B64 --es msg ").unwrap());
        let bytes = base64::engine::general_purpose::STANDARD.decode(b64).unwrap();
        assert_eq!(String::from_utf8(bytes).unwrap(), "café 日本 🙂");
    }
}
