//! Reference solutions: one line per step, addressing elements by resource id, text or content
//! description rather than by index or position, so a reference survives layout changes.
//!
//! ```text
//! tap #add                      tap the element whose resource id ends in `/add`
//! tap "Ada Lovelace"            tap the element whose text (or content-desc) is exactly that
//! tap #name ~"Ada"              several terms: all must hold (`~` = contains)
//! type #first_name "{{ first }}"   focus the field, clear it, type (the text is a template)
//! type #body "hi" enter         … then press Enter
//! append #body " there"         type without clearing
//! long_press "Ada Lovelace"     double_tap #photo
//! scroll down [#list]           swipe up|down|left|right [selector]  (scroll follows content)
//! scroll_to "Zed Quill" [up]    scroll (down by default) until the element is on screen
//! back  home  enter  key <name> open Messages  wait
//! answer "{{ contact.phone }}"  ask "What is the number?"  finish  finish infeasible
//! ```

use phonebench_apps::error::LoadError;
use serde::{Deserialize, Serialize};

/// One term of a selector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SelectorTerm {
    /// `#name`: the resource id is `name` or ends in `/name`.
    Id(String),
    /// `"text"`: the text or content description is exactly this.
    Text(String),
    /// `~"text"`: the text or content description contains this.
    Contains(String),
    /// `@"desc"`: the content description is exactly this.
    Desc(String),
}

/// An element address: every term must hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Selector(pub Vec<SelectorTerm>);

impl std::fmt::Display for Selector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|t| match t {
                SelectorTerm::Id(s) => format!("#{s}"),
                SelectorTerm::Text(s) => format!("{s:?}"),
                SelectorTerm::Contains(s) => format!("~{s:?}"),
                SelectorTerm::Desc(s) => format!("@{s:?}"),
            })
            .collect();
        f.write_str(&parts.join(" "))
    }
}

/// One step of a reference solution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "step")]
pub enum RefStep {
    /// Tap the element.
    Tap {
        /// Which element.
        target: Selector,
    },
    /// Long-press the element.
    LongPress {
        /// Which element.
        target: Selector,
    },
    /// Double-tap the element.
    DoubleTap {
        /// Which element.
        target: Selector,
    },
    /// Focus the field and type.
    Type {
        /// The field.
        target: Selector,
        /// The text (template over the task's parameters).
        text: String,
        /// Clear the field first (`type`; `append` does not).
        clear: bool,
        /// Press Enter after typing.
        enter: bool,
    },
    /// Scroll content (`down` reveals what is below).
    Scroll {
        /// Direction.
        direction: String,
        /// The scrollable element; the screen's main list when absent.
        target: Option<Selector>,
    },
    /// Scroll until the element is on screen, then go on (the scrolls are steps).
    ScrollTo {
        /// The element looked for.
        target: Selector,
        /// Which way to scroll.
        direction: String,
    },
    /// Press a key (`back`, `home`, `enter`, …).
    Key {
        /// The key's name.
        key: String,
    },
    /// Open an app by id or name.
    Open {
        /// The app.
        app: String,
    },
    /// Let time pass: one turn (the backend's default), or `ms` of virtual time (`wait 5m`).
    Wait {
        /// How long, when given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ms: Option<u64>,
    },
    /// Run `then` only when `target` is on the screen (`if SEL then STEP`), or only when it is
    /// not (`if not SEL then STEP`); skipping it costs no turn. How a reference branches when
    /// instances take different paths (a dialog that only some instances raise).
    If {
        /// The element looked for.
        target: Selector,
        /// `true`: run `then` when the element is absent.
        negate: bool,
        /// The step to run.
        then: Box<RefStep>,
    },
    /// Give the answer (template).
    Answer {
        /// The answer text.
        text: String,
    },
    /// Ask the user (template).
    Ask {
        /// The question.
        text: String,
    },
    /// Call an MCP tool: `mcp geo_route {"origin": "Home", "destination": "{{ place }}"}`. The
    /// arguments are a JSON object written as a template (rendered, then parsed, per instance).
    Mcp {
        /// The tool's exposed name (`server_tool`).
        tool: String,
        /// The arguments: JSON object text (a template until the instance is rendered).
        arguments: String,
    },
    /// End the episode: `finish`, `finish infeasible`, `finish infeasible "why"` (template).
    Finish {
        /// `true` for `finish infeasible`.
        infeasible: bool,
        /// The reason given with it, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

impl RefStep {
    /// Applies `f` to the step's template strings (typed text, answers, questions, selector text).
    pub fn map_strings(&mut self, f: &mut dyn FnMut(&str) -> Result<String, String>) -> Result<(), String> {
        let sel = |s: &mut Selector, f: &mut dyn FnMut(&str) -> Result<String, String>| {
            for term in &mut s.0 {
                match term {
                    SelectorTerm::Id(_) => {}
                    SelectorTerm::Text(t) | SelectorTerm::Contains(t) | SelectorTerm::Desc(t) => *t = f(t)?,
                }
            }
            Ok::<(), String>(())
        };
        match self {
            RefStep::Tap { target } | RefStep::LongPress { target } | RefStep::DoubleTap { target } => {
                sel(target, f)?
            }
            RefStep::Type { target, text, .. } => {
                sel(target, f)?;
                *text = f(text)?;
            }
            RefStep::Scroll { target, .. } => {
                if let Some(t) = target {
                    sel(t, f)?;
                }
            }
            RefStep::ScrollTo { target, .. } => sel(target, f)?,
            RefStep::Answer { text } | RefStep::Ask { text } => *text = f(text)?,
            RefStep::Finish { reason: Some(reason), .. } => *reason = f(reason)?,
            RefStep::Mcp { arguments, .. } => *arguments = f(arguments)?,
            RefStep::If { target, then, .. } => {
                sel(target, f)?;
                then.map_strings(f)?;
            }
            RefStep::Key { .. } | RefStep::Open { .. } | RefStep::Wait { .. } | RefStep::Finish { .. } => {}
        }
        Ok(())
    }
}

const DIRECTIONS: [&str; 4] = ["up", "down", "left", "right"];

/// Parses one reference line. Errors say what is wrong (the caller adds file and line).
pub fn parse_step(line: &str) -> Result<RefStep, String> {
    let trimmed = line.trim_start();
    if let Some(rest) =
        trimmed.strip_prefix("mcp").filter(|r| r.is_empty() || r.starts_with(char::is_whitespace))
    {
        return parse_mcp(rest.trim());
    }
    parse_tokens(&tokenize(line)?)
}

/// `mcp TOOL {json}`: the rest of the line after the tool's name is the arguments object, so
/// JSON need not be quoted again. Template expressions are checked by standing in a `0` for each.
fn parse_mcp(rest: &str) -> Result<RefStep, String> {
    let (tool, arguments) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let valid = !tool.is_empty() && tool.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid {
        return Err("`mcp` takes a tool name (`geo_route`) and then its arguments as a JSON object".into());
    }
    let arguments = if arguments.trim().is_empty() { "{}".to_string() } else { arguments.trim().to_string() };
    let mut probe = String::new();
    let mut left = arguments.as_str();
    while let Some(open) = left.find("{{") {
        let Some(close) = left[open..].find("}}") else { break };
        probe.push_str(&left[..open]);
        probe.push('0');
        left = &left[open + close + 2..];
    }
    probe.push_str(left);
    match serde_json::from_str::<serde_json::Value>(&probe) {
        Ok(serde_json::Value::Object(_)) => Ok(RefStep::Mcp { tool: tool.to_string(), arguments }),
        Ok(_) => Err(format!("`mcp {tool}`: the arguments must be a JSON object")),
        Err(e) => Err(format!("`mcp {tool}`: the arguments are not a JSON object: {e}")),
    }
}

/// Most a reference `wait` may ask for: a day, as the phone's own limit.
const MAX_WAIT_MS: u64 = 86_400_000;

/// `90s`, `5m`, `2h`, `1500ms` → milliseconds.
fn parse_duration(text: &str) -> Result<u64, String> {
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let unit_ms = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(format!("`{text}` is not a duration: a number with ms, s, m or h (`90s`, `5m`)")),
    };
    let n: u64 = digits.parse().map_err(|_| format!("`{text}` is not a duration (`90s`, `5m`)"))?;
    match n.checked_mul(unit_ms) {
        Some(ms) if ms <= MAX_WAIT_MS => Ok(ms),
        _ => Err(format!("`{text}` is longer than a day, the most one wait may take")),
    }
}

fn parse_tokens(tokens: &[Token]) -> Result<RefStep, String> {
    let Some((Token::Word(verb), rest)) = tokens.split_first() else {
        return Err("a step starts with a verb (tap, type, scroll, back, answer, …)".into());
    };
    let words_only = |rest: &[Token]| -> Result<Vec<String>, String> {
        rest.iter()
            .map(|t| match t {
                Token::Word(w) => Ok(w.clone()),
                other => Err(format!("unexpected {other} after `{verb}`")),
            })
            .collect()
    };
    let one_string = |rest: &[Token]| -> Result<String, String> {
        match rest {
            [Token::Str(s)] => Ok(s.clone()),
            _ => Err(format!("`{verb}` takes one quoted string")),
        }
    };
    let step = match verb.as_str() {
        "tap" | "long_press" | "double_tap" => {
            let target = selector(rest)?;
            match verb.as_str() {
                "tap" => RefStep::Tap { target },
                "long_press" => RefStep::LongPress { target },
                _ => RefStep::DoubleTap { target },
            }
        }
        "type" | "append" => {
            let mut rest = rest.to_vec();
            let enter = matches!(rest.last(), Some(Token::Word(w)) if w == "enter");
            if enter {
                rest.pop();
            }
            let Some(Token::Str(text)) = rest.pop() else {
                return Err(format!("`{verb}` needs a selector and then the quoted text to type"));
            };
            RefStep::Type { target: selector(&rest)?, text, clear: verb == "type", enter }
        }
        "scroll" | "swipe" => {
            let Some((Token::Word(dir), rest)) = rest.split_first() else {
                return Err(format!("`{verb}` needs a direction: up, down, left or right"));
            };
            if !DIRECTIONS.contains(&dir.as_str()) {
                return Err(format!("`{dir}` is not a direction (up, down, left, right)"));
            }
            // A swipe follows the finger: swiping up scrolls the content down.
            let direction = if verb == "swipe" { opposite(dir) } else { dir.clone() };
            let target = if rest.is_empty() { None } else { Some(selector(rest)?) };
            RefStep::Scroll { direction, target }
        }
        "scroll_to" => {
            let mut rest = rest.to_vec();
            let direction = match rest.last() {
                Some(Token::Word(w)) if DIRECTIONS.contains(&w.as_str()) => {
                    let d = w.clone();
                    rest.pop();
                    d
                }
                _ => "down".to_string(),
            };
            RefStep::ScrollTo { target: selector(&rest)?, direction }
        }
        "back" | "home" | "enter" => {
            words_only(rest)?.is_empty().then_some(()).ok_or(format!("`{verb}` takes nothing"))?;
            RefStep::Key { key: verb.clone() }
        }
        "key" => match words_only(rest)?.as_slice() {
            [k] => RefStep::Key { key: k.clone() },
            _ => return Err("`key` takes one key name".into()),
        },
        "open" => match rest {
            [Token::Word(app)] | [Token::Str(app)] => RefStep::Open { app: app.clone() },
            _ => return Err("`open` takes one app id or name".into()),
        },
        "wait" => match words_only(rest)?.as_slice() {
            [] => RefStep::Wait { ms: None },
            [d] => RefStep::Wait { ms: Some(parse_duration(d)?) },
            _ => return Err("`wait` takes nothing or one duration (`90s`, `5m`, `2h`)".into()),
        },
        "if" => {
            let (negate, rest) = match rest.split_first() {
                Some((Token::Word(w), tail)) if w == "not" => (true, tail),
                _ => (false, rest),
            };
            let Some(at) = rest.iter().position(|t| matches!(t, Token::Word(w) if w == "then")) else {
                return Err(
                    "`if` needs `then`: `if SELECTOR then STEP` or `if not SELECTOR then STEP`".into()
                );
            };
            let target = selector(&rest[..at])?;
            let then = parse_tokens(&rest[at + 1..])?;
            if matches!(then, RefStep::If { .. }) {
                return Err("`if` steps do not nest".into());
            }
            RefStep::If { target, negate, then: Box::new(then) }
        }
        "answer" => RefStep::Answer { text: one_string(rest)? },
        "ask" => RefStep::Ask { text: one_string(rest)? },
        "finish" => match rest {
            [] => RefStep::Finish { infeasible: false, reason: None },
            [Token::Word(w)] if w == "infeasible" => RefStep::Finish { infeasible: true, reason: None },
            [Token::Word(w), Token::Str(reason)] if w == "infeasible" => {
                RefStep::Finish { infeasible: true, reason: Some(reason.clone()) }
            }
            _ => return Err("`finish` takes nothing, `infeasible`, or `infeasible \"reason\"`".into()),
        },
        other => {
            return Err(format!(
                "unknown step `{other}` (tap, long_press, double_tap, type, append, scroll, swipe, \
                 scroll_to, back, home, enter, key, open, wait, if, answer, ask, mcp, finish)"
            ));
        }
    };
    Ok(step)
}

fn opposite(dir: &str) -> String {
    match dir {
        "up" => "down",
        "down" => "up",
        "left" => "right",
        _ => "left",
    }
    .to_string()
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Str(String),
    Id(String),
    Contains(String),
    Desc(String),
}

impl std::fmt::Display for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Token::Word(w) => write!(f, "`{w}`"),
            Token::Str(s) => write!(f, "{s:?}"),
            Token::Id(s) => write!(f, "`#{s}`"),
            Token::Contains(s) => write!(f, "`~{s:?}`"),
            Token::Desc(s) => write!(f, "`@{s:?}`"),
        }
    }
}

fn selector(tokens: &[Token]) -> Result<Selector, String> {
    if tokens.is_empty() {
        return Err("a selector is missing (`#id`, `\"text\"`, `~\"part\"` or `@\"description\"`)".into());
    }
    tokens
        .iter()
        .map(|t| match t {
            Token::Id(s) => Ok(SelectorTerm::Id(s.clone())),
            Token::Str(s) => Ok(SelectorTerm::Text(s.clone())),
            Token::Contains(s) => Ok(SelectorTerm::Contains(s.clone())),
            Token::Desc(s) => Ok(SelectorTerm::Desc(s.clone())),
            Token::Word(w) => Err(format!("`{w}` is not a selector term (quote text: \"{w}\")")),
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Selector)
}

fn tokenize(line: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    let mut out = Vec::new();
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let (prefix, start) = match c {
            '~' | '@' => (Some(c), i + 1),
            _ => (None, i),
        };
        if start < chars.len() && (chars[start] == '"' || chars[start] == '\'') {
            let (s, next) = quoted(&chars, start)?;
            out.push(match prefix {
                Some('~') => Token::Contains(s),
                Some('@') => Token::Desc(s),
                _ => Token::Str(s),
            });
            i = next;
            continue;
        }
        if prefix.is_some() {
            return Err(format!("`{c}` must be followed by a quoted string"));
        }
        let begin = i;
        while i < chars.len() && !chars[i].is_whitespace() {
            i += 1;
        }
        let word: String = chars[begin..i].iter().collect();
        if let Some(id) = word.strip_prefix('#') {
            if id.is_empty() {
                return Err("`#` must be followed by a resource id name".into());
            }
            out.push(Token::Id(id.to_string()));
        } else {
            out.push(Token::Word(word));
        }
    }
    Ok(out)
}

/// `text` as a `"…"` reference string: the inverse of what [`parse_step`] reads (`\n`, `\t`,
/// `\"`, `\\` escaped). Reference strings are templates; callers writing untrusted text keep
/// template syntax out themselves.
pub fn quote_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A `"…"` string (JSON escapes) or a `'…'` string (no escapes) starting at `start`.
fn quoted(chars: &[char], start: usize) -> Result<(String, usize), String> {
    let quote = chars[start];
    let mut i = start + 1;
    let mut s = String::new();
    while i < chars.len() {
        let c = chars[i];
        if c == quote {
            return Ok((s, i + 1));
        }
        if c == '\\' && quote == '"' {
            let next = chars.get(i + 1).ok_or("a string ends in a lone backslash")?;
            s.push(match next {
                'n' => '\n',
                't' => '\t',
                '"' => '"',
                '\\' => '\\',
                other => return Err(format!("unknown escape `\\{other}`")),
            });
            i += 2;
            continue;
        }
        s.push(c);
        i += 1;
    }
    Err(format!("unterminated string starting with {quote}"))
}

/// Parses every line, reporting the first bad one at its line.
pub fn parse_reference(lines: &[(usize, String)], file: &std::path::Path) -> Result<Vec<RefStep>, LoadError> {
    lines
        .iter()
        .map(|(line, text)| {
            parse_step(text).map_err(|e| LoadError::at(file, *line, format!("reference: {e}")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn quoted_strings_read_back_as_written() {
        for text in ["plain", "say \"hi\"", "back\\slash", "two\nlines\tand tab", "", "é 日本"] {
            let written: Vec<char> = quote_string(text).chars().collect();
            assert_eq!(quoted(&written, 0), Ok((text.to_string(), written.len())), "{text:?}");
        }
    }

    use super::*;

    #[test]
    fn parses_every_verb() {
        assert_eq!(
            parse_step("tap #add").unwrap(),
            RefStep::Tap { target: Selector(vec![SelectorTerm::Id("add".into())]) }
        );
        assert_eq!(
            parse_step(r#"type #first "Ada \"A\" L" enter"#).unwrap(),
            RefStep::Type {
                target: Selector(vec![SelectorTerm::Id("first".into())]),
                text: "Ada \"A\" L".into(),
                clear: true,
                enter: true
            }
        );
        assert_eq!(
            parse_step("swipe up").unwrap(),
            RefStep::Scroll { direction: "down".into(), target: None }
        );
        assert_eq!(
            parse_step(r#"scroll_to ~"Zed" up"#).unwrap(),
            RefStep::ScrollTo {
                target: Selector(vec![SelectorTerm::Contains("Zed".into())]),
                direction: "up".into()
            }
        );
        assert_eq!(
            parse_step("finish infeasible").unwrap(),
            RefStep::Finish { infeasible: true, reason: None }
        );
        assert_eq!(
            parse_step(r#"finish infeasible "no such channel""#).unwrap(),
            RefStep::Finish { infeasible: true, reason: Some("no such channel".into()) }
        );
        assert!(parse_step(r#"finish "done""#).is_err());
        assert_eq!(parse_step("open 'Messages'").unwrap(), RefStep::Open { app: "Messages".into() });
    }

    #[test]
    fn rejects_with_reasons() {
        assert!(parse_step("tapp #x").unwrap_err().contains("unknown step `tapp`"));
        assert!(parse_step("tap").unwrap_err().contains("selector is missing"));
        assert!(parse_step("type #x").unwrap_err().contains("quoted text"));
        assert!(parse_step("scroll sideways").unwrap_err().contains("not a direction"));
        assert!(parse_step("tap \"open").unwrap_err().contains("unterminated"));
        assert!(parse_step("tap Save").unwrap_err().contains("quote text"));
        assert!(parse_step("wait 5 minutes").unwrap_err().contains("one duration"));
        assert!(parse_step("wait 5d").unwrap_err().contains("not a duration"));
        assert!(parse_step("wait 25h").unwrap_err().contains("longer than a day"));
        assert!(parse_step("if \"OK\" tap \"OK\"").unwrap_err().contains("needs `then`"));
        assert!(parse_step("if \"A\" then if \"B\" then back").unwrap_err().contains("do not nest"));
        assert!(parse_step("if then back").unwrap_err().contains("selector is missing"));
    }

    #[test]
    fn waits_take_durations_and_ifs_wrap_one_step() {
        assert_eq!(parse_step("wait").unwrap(), RefStep::Wait { ms: None });
        assert_eq!(
            parse_step(r#"mcp geo_route {"origin": "Home", "destination": "{{ p.name }}", "n": {{ n }}}"#)
                .unwrap(),
            RefStep::Mcp {
                tool: "geo_route".into(),
                arguments: r#"{"origin": "Home", "destination": "{{ p.name }}", "n": {{ n }}}"#.into()
            }
        );
        assert_eq!(
            parse_step("mcp weather_list_cities").unwrap(),
            RefStep::Mcp { tool: "weather_list_cities".into(), arguments: "{}".into() }
        );
        assert!(parse_step("mcp geo_route [1]").unwrap_err().contains("JSON object"));
        assert!(parse_step(r#"mcp geo_route {"a": }"#).unwrap_err().contains("not a JSON object"));
        assert!(parse_step("mcp").unwrap_err().contains("tool name"));
        assert_eq!(parse_step("wait 90s").unwrap(), RefStep::Wait { ms: Some(90_000) });
        assert_eq!(parse_step("wait 5m").unwrap(), RefStep::Wait { ms: Some(300_000) });
        assert_eq!(parse_step("wait 2h").unwrap(), RefStep::Wait { ms: Some(7_200_000) });
        assert_eq!(
            parse_step(r#"if not #chip "Work" then tap "Next""#).unwrap(),
            RefStep::If {
                target: Selector(vec![SelectorTerm::Id("chip".into()), SelectorTerm::Text("Work".into())]),
                negate: true,
                then: Box::new(RefStep::Tap { target: Selector(vec![SelectorTerm::Text("Next".into())]) }),
            }
        );
    }
}
