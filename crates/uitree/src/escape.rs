//! Attribute-value escaping for uiautomator XML.
//!
//! Reading is deliberately lenient: real dumps contain emoji written as UTF-16 surrogate-pair
//! character references (`&#55357;&#56832;`, older Android serializers), references to characters
//! XML forbids (`&#0;`), and stray `&`. quick-xml's strict unescaper rejects all of these, so this
//! module resolves references itself. Characters XML 1.0 cannot carry become U+FFFD on both the
//! read and the write side, so read → write → read is stable.

use std::borrow::Cow;

/// U+FFFD, the stand-in for characters XML 1.0 cannot represent.
const REPLACEMENT: char = '\u{FFFD}';

/// True for characters XML 1.0 allows in a document.
pub(crate) fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

fn needs_unescape(raw: &str) -> bool {
    raw.chars().any(|c| c == '&' || c == '\t' || c == '\n' || c == '\r' || !is_xml_char(c))
}

/// Resolves entity and character references in a raw attribute value and applies XML's attribute
/// normalization (literal tab, newline and CR/LF become one space each; referenced ones survive).
pub(crate) fn unescape_attribute(raw: &str) -> Cow<'_, str> {
    if !needs_unescape(raw) {
        return Cow::Borrowed(raw);
    }
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(c) = rest.chars().next() {
        match c {
            '&' => {
                let (decoded, consumed) = decode_reference(rest);
                out.push_str(&decoded);
                rest = &rest[consumed..];
            }
            '\r' => {
                out.push(' ');
                rest = rest.strip_prefix("\r\n").unwrap_or(&rest[1..]);
            }
            '\n' | '\t' => {
                out.push(' ');
                rest = &rest[1..];
            }
            c => {
                out.push(if is_xml_char(c) { c } else { REPLACEMENT });
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    Cow::Owned(out)
}

/// Decodes the reference at the start of `s` (which starts with `&`). Returns the text and how
/// many bytes were consumed. Unknown or unterminated references stay literal.
fn decode_reference(s: &str) -> (Cow<'static, str>, usize) {
    let literal = (Cow::Borrowed("&"), 1);
    // The longest reference we resolve is `&#x10FFFF;` (10 bytes); look a little further.
    let window = &s.as_bytes()[..s.len().min(16)];
    let Some(semi) = window.iter().position(|&b| b == b';') else { return literal };
    let name = &s[1..semi];
    let consumed = semi + 1;
    let named = match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        _ => None,
    };
    if let Some(c) = named {
        return (Cow::Owned(c.to_string()), consumed);
    }
    let Some(code) = parse_char_ref(name) else { return literal };
    if (0xD800..=0xDBFF).contains(&code) {
        // A high surrogate: combine with an immediately following low-surrogate reference.
        let after = &s[consumed..];
        if after.starts_with("&#") {
            let window = &after.as_bytes()[..after.len().min(16)];
            if let Some(semi2) = window.iter().position(|&b| b == b';')
                && let Some(low) = parse_char_ref(&after[1..semi2])
                && (0xDC00..=0xDFFF).contains(&low)
            {
                let combined = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                let c = char::from_u32(combined).unwrap_or(REPLACEMENT);
                return (Cow::Owned(c.to_string()), consumed + semi2 + 1);
            }
        }
        return (Cow::Borrowed("\u{FFFD}"), consumed);
    }
    let c = char::from_u32(code).filter(|c| is_xml_char(*c)).unwrap_or(REPLACEMENT);
    (Cow::Owned(c.to_string()), consumed)
}

/// Parses the inside of a character reference: `#123` or `#x7B`.
fn parse_char_ref(name: &str) -> Option<u32> {
    let digits = name.strip_prefix('#')?;
    if let Some(hex) = digits.strip_prefix('x').or_else(|| digits.strip_prefix('X')) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(hex, 16).ok()
    } else {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok()
    }
}

/// Appends `value` escaped for a double-quoted attribute, the way Android's serializer does:
/// `& < > "` as entities, tab/newline/CR as character references (so they survive attribute
/// normalization), characters XML cannot carry as U+FFFD, everything else as UTF-8.
pub(crate) fn escape_attribute_into(out: &mut String, value: &str) {
    let mut start = 0;
    for (i, c) in value.char_indices() {
        let replacement: Option<&str> = match c {
            '&' => Some("&amp;"),
            '<' => Some("&lt;"),
            '>' => Some("&gt;"),
            '"' => Some("&quot;"),
            '\n' => Some("&#10;"),
            '\r' => Some("&#13;"),
            '\t' => Some("&#9;"),
            c if !is_xml_char(c) => Some("\u{FFFD}"),
            _ => None,
        };
        if let Some(r) = replacement {
            out.push_str(&value[start..i]);
            out.push_str(r);
            start = i + c.len_utf8();
        }
    }
    out.push_str(&value[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esc(v: &str) -> String {
        let mut s = String::new();
        escape_attribute_into(&mut s, v);
        s
    }

    #[test]
    fn resolves_entities_and_char_refs() {
        assert_eq!(unescape_attribute("a &amp; b &lt;c&gt; &quot;d&quot; &apos;"), "a & b <c> \"d\" '");
        assert_eq!(unescape_attribute("line&#10;two"), "line\ntwo");
        assert_eq!(unescape_attribute("&#127807;&#x1F33F;"), "\u{1F33F}\u{1F33F}");
        assert_eq!(unescape_attribute("plain"), "plain");
    }

    #[test]
    fn combines_surrogate_pair_references() {
        assert_eq!(unescape_attribute("&#55357;&#56832;!"), "\u{1F600}!");
        assert_eq!(unescape_attribute("&#55357;x"), "\u{FFFD}x");
        assert_eq!(unescape_attribute("&#56832;"), "\u{FFFD}");
    }

    #[test]
    fn is_lenient_with_broken_references() {
        assert_eq!(unescape_attribute("AT&T"), "AT&T");
        assert_eq!(unescape_attribute("&nbsp;x"), "&nbsp;x");
        assert_eq!(unescape_attribute("&#0;&#xZZ;&#;"), "\u{FFFD}&#xZZ;&#;");
        assert_eq!(unescape_attribute("&#99999999999;"), "&#99999999999;");
        assert_eq!(unescape_attribute("&"), "&");
    }

    #[test]
    fn normalizes_literal_whitespace_like_xml() {
        assert_eq!(unescape_attribute("a\nb\tc\r\nd\re"), "a b c d e");
        assert_eq!(unescape_attribute("a\u{1}b"), "a\u{FFFD}b");
    }

    #[test]
    fn escapes_what_must_be_escaped() {
        assert_eq!(esc("a&b<c>\"d\"'e"), "a&amp;b&lt;c&gt;&quot;d&quot;'e");
        assert_eq!(esc("x\ny\tz\r"), "x&#10;y&#9;z&#13;");
        assert_eq!(esc("\u{0}"), "\u{FFFD}");
        assert_eq!(esc("日本 🌿"), "日本 🌿");
    }

    #[test]
    fn escape_then_unescape_is_identity_for_xml_chars() {
        for s in ["", "a&b", "x\ny\r\nz\t", "&amp;", "\"quoted\" <tag>", "日本 🌿 \u{FFFD}"] {
            assert_eq!(unescape_attribute(&esc(s)), s);
        }
    }
}
