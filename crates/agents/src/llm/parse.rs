//! Pulling the action out of a model's answer, the way each upstream agent does it.

/// SPHINX's phrase before the fenced action.
pub const SPHINX_SUMMARY_PHRASE: &str = "In summary, the next action I will perform is";

/// SPHINX's extraction: the text after the last "In summary, the next action I will perform is"
/// (the whole answer without it), then the first ```` ```…``` ```` block, stripped. `Err` says why
/// there is no action (SPHINX's `ActionParsingError`).
pub fn sphinx_action_text(answer: &str) -> Result<String, String> {
    let tail = match answer.rfind(SPHINX_SUMMARY_PHRASE) {
        Some(at) => &answer[at + SPHINX_SUMMARY_PHRASE.len()..],
        None => answer,
    };
    first_fenced_block(tail).map(|b| b.trim().to_string()).ok_or_else(|| {
        "no action in a ``` fenced block (expected \"In summary, the next action I will perform is ```...```\")"
            .to_string()
    })
}

/// The content of the first ```` ```…``` ```` block.
pub fn first_fenced_block(text: &str) -> Option<&str> {
    let start = text.find("```")? + 3;
    let len = text[start..].find("```")?;
    Some(&text[start..start + len])
}

/// The content of the last ```` ```…``` ```` block (Python's `text.split('```')[-2]`).
pub fn last_fenced_block(text: &str) -> Option<&str> {
    let parts: Vec<&str> = text.split("```").collect();
    if parts.len() < 3 { None } else { Some(parts[parts.len() - 2]) }
}

/// The first balanced `{…}` object in `text` (strings respected), for answers whose action JSON
/// may nest objects (MobileWorld's MCP arguments).
pub fn balanced_object(text: &str) -> Option<&str> {
    let start = text.find('{')?;
    let mut depth = 0usize;
    let mut in_string: Option<char> = None;
    let mut escaped = false;
    for (i, c) in text[start..].char_indices() {
        if let Some(q) = in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                in_string = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => in_string = Some(c),
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[start..=start + i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// A Python literal (what `ast.literal_eval` reads: single-quoted strings, `True`, `False`,
/// `None`) rewritten as JSON; JSON passes through unchanged. Anything it does not understand is
/// copied, so the JSON parser reports the problem.
pub fn python_literal_to_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                out.push('"');
                let quote = c;
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => match chars.next() {
                            // `\'` is an escaped quote in Python; JSON needs no escape for it.
                            Some('\'') => out.push('\''),
                            Some(other) => {
                                out.push('\\');
                                out.push(other);
                            }
                            None => out.push('\\'),
                        },
                        '"' if quote == '\'' => out.push_str("\\\""),
                        c if c == quote => break,
                        '\n' => out.push_str("\\n"),
                        c => out.push(c),
                    }
                }
                out.push('"');
            }
            c if c.is_ascii_alphabetic() => {
                let mut word = String::from(c);
                while let Some(&n) = chars.peek() {
                    if n.is_ascii_alphanumeric() || n == '_' {
                        word.push(n);
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push_str(match word.as_str() {
                    "True" => "true",
                    "False" => "false",
                    "None" => "null",
                    other => other,
                });
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sphinx_takes_the_first_block_after_the_last_summary_phrase() {
        let a = "Let me think. ```click [1]``` no.\nIn summary, the next action I will perform is ```click [4]``` then ```click [5]```";
        assert_eq!(sphinx_action_text(a).unwrap(), "click [4]");
        assert_eq!(sphinx_action_text("```\npress [back]\n```").unwrap(), "press [back]");
        assert!(sphinx_action_text("In summary, the next action I will perform is click [3]").is_err());
        assert!(sphinx_action_text("").is_err());
    }

    #[test]
    fn last_block_as_python_split() {
        assert_eq!(last_fenced_block("a ```x``` b ```y``` c"), Some("y"));
        assert_eq!(last_fenced_block("```x"), None);
        assert_eq!(last_fenced_block("no fences"), None);
    }

    #[test]
    fn python_literals_become_json() {
        assert_eq!(
            python_literal_to_json("{'a': True, 'b': None, 'c': 'say \"hi\"', 'd': 'it\\'s'}"),
            r#"{"a": true, "b": null, "c": "say \"hi\"", "d": "it's"}"#
        );
    }

    #[test]
    fn balanced_objects_nest_and_respect_strings() {
        assert_eq!(balanced_object("x {\"a\": {\"b\": \"}\"}} y"), Some("{\"a\": {\"b\": \"}\"}}"));
        assert_eq!(balanced_object("{ open"), None);
    }
}
