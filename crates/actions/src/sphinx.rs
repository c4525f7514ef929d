//! SPHINX's action syntax: `click [3]`, `longclick [3]`, `text [3] [hello]`, `swipe [3] [up]`,
//! `press [back]`, and the coordinate forms `click [120,340]`, `text [120,340] [hello]`,
//! `swipe [100,900] [100,300]`.
//!
//! Parsing reproduces upstream (`infra/android_env.py`, `parse_action_by_id` /
//! `parse_action_by_coords`), which matches a regular expression at the *start* of the text:
//! - the action name is what comes before the first `[`, and it must be followed by exactly one
//!   space and `[` (`click[3]` and `click  [3]` are format errors); names are lower case;
//! - text after the matched part is ignored (`click [3] to open it` is `click [3]`);
//! - the message of `text` and the key of `press` are **greedy up to the last `]` on the line**:
//!   `text [3] [a] [b]` types `a] [b`; a message cannot span lines (upstream's `.` stops at a
//!   newline), so `text [3] [a⏎b]` is a format error;
//! - numbers are unsigned decimal digits (`[-5,3]` and `[1, 2]` are format errors);
//! - `swipe [i] [direction=up]` is accepted as `swipe [i] [up]`; directions are `up`, `down`,
//!   `left`, `right`, and name the finger's motion (SPHINX swipes from 2/3 to 1/3 of the
//!   element);
//! - `text` clears the field first and does not press Enter;
//! - `press [home]` **restarts the app** as upstream does (it never goes to the launcher), unless
//!   [`ParseOptions::sphinx_home_restarts`] is off; `press [none]` waits; `press [stop]` ends the
//!   episode as complete.
//!
//! Upstream runs either in index mode or in coordinate mode; one parser here accepts both forms
//! (an index has no comma), and [`ParseOptions::sphinx_mode`] can hold an agent to one of them.
//! [`ParseOptions::lenient`] additionally accepts near misses upstream rejects: any case, any
//! whitespace between the parts, and spaces inside coordinates.

use crate::action::{Action, Direction, FinishStatus, Key, Point, Swipe, Target};
use crate::error::{ParseError, PrintError, quote};
use crate::syntax::{ParseOptions, SphinxMode};

/// The syntax's name in messages.
pub const SYNTAX: &str = "SPHINX";

fn invalid(message: impl Into<String>) -> ParseError {
    ParseError::invalid(SYNTAX, message)
}

/// The action names SPHINX knows, as its prompt lists them.
const ACTIONS: [&str; 5] = ["click", "longclick", "text", "swipe", "press"];

/// What `press [...]` accepts.
const PRESS_KEYS: [&str; 6] = ["back", "restart", "home", "none", "stop", "enter"];

/// Parses one SPHINX action. Surrounding whitespace is ignored (upstream strips the fenced
/// block it takes the action from).
pub fn parse_sphinx(text: &str, options: &ParseOptions) -> Result<Action, ParseError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(ParseError::Empty);
    }
    let Some(bracket) = text.find('[') else {
        return Err(invalid(format!(
            "no `[` in {}: SPHINX actions look like `click [3]`, `text [3] [hello]`, \
             `swipe [3] [up]` or `press [back]`",
            quote(text)
        )));
    };
    let before = &text[..bracket];
    let name = before.trim();
    let keyword =
        ACTIONS.into_iter().find(|k| if options.lenient { k.eq_ignore_ascii_case(name) } else { *k == name });
    let Some(keyword) = keyword else {
        return Err(unknown_action(name));
    };
    if !options.lenient && before != format!("{keyword} ") {
        return Err(invalid(if before == keyword {
            format!("{}: a space is required between `{keyword}` and `[`", quote(text))
        } else {
            format!("{}: exactly one space must separate `{keyword}` and `[`", quote(text))
        }));
    }
    let mut cursor = Cursor { text, rest: &text[bracket..], lenient: options.lenient };
    let action = match keyword {
        "press" => parse_press(&mut cursor, options)?,
        "click" => Action::Tap { target: cursor.target(keyword, options)? },
        "longclick" => Action::LongPress { target: cursor.target(keyword, options)? },
        "text" => {
            let target = cursor.target(keyword, options)?;
            cursor.separator(keyword)?;
            let message = cursor.greedy_group(keyword, "the text to type")?;
            Action::Type { text: message.to_string(), target: Some(target), clear: true, enter: false }
        }
        _ => parse_swipe(&mut cursor, options)?,
    };
    Ok(action)
}

fn unknown_action(name: &str) -> ParseError {
    if name.is_empty() {
        return invalid(
            "the action name is missing before `[`; expected click, longclick, text, swipe or press",
        );
    }
    let hint = if ACTIONS.iter().any(|k| k.eq_ignore_ascii_case(name)) {
        " (action names are lower case)"
    } else {
        match name.to_ascii_lowercase().as_str() {
            "tap" => " (SPHINX calls a tap `click`)",
            "type" | "input" | "input_text" => " (SPHINX types with `text [i] [content]`)",
            "scroll" => " (SPHINX scrolls with `swipe [i] [direction]`)",
            "back" | "home" | "enter" | "stop" => " (keys are pressed with `press [name]`)",
            _ => "",
        }
    };
    invalid(format!("unknown action {}{hint}; expected click, longclick, text, swipe or press", quote(name)))
}

fn parse_press(cursor: &mut Cursor<'_>, options: &ParseOptions) -> Result<Action, ParseError> {
    let raw = cursor.greedy_group("press", "a key")?;
    let key = if options.lenient { raw.trim().to_ascii_lowercase() } else { raw.to_string() };
    Ok(match key.as_str() {
        "back" => Action::Key { key: Key::Back },
        "enter" => Action::Key { key: Key::Enter },
        "restart" => Action::RestartApp { app: None },
        "home" if options.sphinx_home_restarts => Action::RestartApp { app: None },
        "home" => Action::Key { key: Key::Home },
        "none" => Action::Wait { ms: None },
        "stop" => Action::Finish { status: FinishStatus::Complete, reason: None },
        _ => {
            return Err(invalid(format!(
                "unknown key {} in `press [...]`; expected one of {}",
                quote(raw),
                PRESS_KEYS.join(", ")
            )));
        }
    })
}

fn parse_swipe(cursor: &mut Cursor<'_>, options: &ParseOptions) -> Result<Action, ParseError> {
    let start = cursor.target("swipe", options)?;
    cursor.separator("swipe")?;
    match start {
        Target::Point(from) => {
            let Some(Target::Point(to)) = cursor.number_group("swipe", true)? else {
                return Err(invalid(format!(
                    "{}: a swipe from a point needs an end point `[x,y]` as its second group",
                    quote(cursor.text)
                )));
            };
            Ok(Action::Swipe(Swipe::Between { from, to }))
        }
        target => {
            let raw = cursor.greedy_group("swipe", "a direction")?;
            // Upstream: `direction.split("=")[1]` when the group starts with `direction=`.
            let value = match raw.strip_prefix("direction=") {
                Some(after) => after.split('=').next().unwrap_or(""),
                None => raw,
            };
            let value = if options.lenient { value.trim().to_ascii_lowercase() } else { value.to_string() };
            let direction = parse_direction(&value).ok_or_else(|| {
                invalid(format!("invalid swipe direction {}; expected up, down, left or right", quote(raw)))
            })?;
            Ok(Action::Swipe(Swipe::Direction { direction, target: Some(target) }))
        }
    }
}

fn parse_direction(text: &str) -> Option<Direction> {
    Some(match text {
        "up" => Direction::Up,
        "down" => Direction::Down,
        "left" => Direction::Left,
        "right" => Direction::Right,
        _ => return None,
    })
}

/// The unparsed remainder of an action, starting at a `[`.
struct Cursor<'a> {
    /// The whole action, for messages.
    text: &'a str,
    rest: &'a str,
    lenient: bool,
}

impl<'a> Cursor<'a> {
    fn skip_spaces(&mut self) {
        if self.lenient {
            self.rest = self.rest.trim_start_matches([' ', '\t']);
        }
    }

    /// ` [` between two groups: exactly one space upstream; any blanks when lenient.
    fn separator(&mut self, keyword: &str) -> Result<(), ParseError> {
        let ok = if self.lenient {
            let after = self.rest.trim_start_matches([' ', '\t']);
            let ok = after.starts_with('[');
            self.rest = after;
            ok
        } else if let Some(after) = self.rest.strip_prefix(' ') {
            self.rest = after;
            after.starts_with('[')
        } else {
            false
        };
        if ok {
            Ok(())
        } else {
            Err(invalid(format!(
                "{}: `{keyword}` needs a second group after one space, e.g. {}",
                quote(self.text),
                example(keyword)
            )))
        }
    }

    /// `[i]` or `[x,y]`, checked against the agent's mode.
    fn target(&mut self, keyword: &str, options: &ParseOptions) -> Result<Target, ParseError> {
        let target = self.number_group(keyword, false)?.ok_or_else(|| {
            invalid(format!(
                "{}: expected an element index `[i]` or coordinates `[x,y]` after `{keyword}`",
                quote(self.text)
            ))
        })?;
        match (&target, options.sphinx_mode) {
            (Target::Point(_), SphinxMode::Index) => Err(invalid(format!(
                "{}: coordinates are not accepted in index mode; address elements as `{keyword} [i]`",
                quote(self.text)
            ))),
            (Target::Index(_), SphinxMode::Coordinates) => Err(invalid(format!(
                "{}: element indexes are not accepted in coordinate mode; use `{keyword} [x,y]`",
                quote(self.text)
            ))),
            _ => Ok(target),
        }
    }

    /// `[digits]` or `[digits,digits]`. `Ok(None)` when the group does not start with a digit.
    fn number_group(&mut self, keyword: &str, point_only: bool) -> Result<Option<Target>, ParseError> {
        let Some(inner) = self.rest.strip_prefix('[') else { return Ok(None) };
        self.rest = inner;
        self.skip_spaces();
        let Some(first) = self.digits(keyword)? else { return Ok(None) };
        self.skip_spaces();
        if let Some(after) = self.rest.strip_prefix(']') {
            self.rest = after;
            if point_only {
                return Ok(None);
            }
            let index = u32::try_from(first).map_err(|_| {
                invalid(format!("element index {first} in {} is too large", quote(self.text)))
            })?;
            return Ok(Some(Target::Index(index)));
        }
        let Some(after) = self.rest.strip_prefix(',') else { return Ok(None) };
        self.rest = after;
        self.skip_spaces();
        let Some(second) = self.digits(keyword)? else { return Ok(None) };
        self.skip_spaces();
        let Some(after) = self.rest.strip_prefix(']') else { return Ok(None) };
        self.rest = after;
        let coordinate = |v: u64| {
            i32::try_from(v)
                .map_err(|_| invalid(format!("coordinate {v} in {} is too large", quote(self.text))))
        };
        Ok(Some(Target::Point(Point::new(coordinate(first)?, coordinate(second)?))))
    }

    /// A run of ASCII digits as a number; `Ok(None)` when there is none.
    fn digits(&mut self, keyword: &str) -> Result<Option<u64>, ParseError> {
        let end = self.rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(self.rest.len());
        if end == 0 {
            return Ok(None);
        }
        let (number, after) = self.rest.split_at(end);
        self.rest = after;
        number
            .parse::<u64>()
            .map(Some)
            .map_err(|_| invalid(format!("the number {} after `{keyword}` is too large", quote(number))))
    }

    /// `[…]` whose content runs to the last `]` on the current line (upstream's greedy `(.*)\]`).
    fn greedy_group(&mut self, keyword: &str, what: &str) -> Result<&'a str, ParseError> {
        let Some(inner) = self.rest.strip_prefix('[') else {
            return Err(invalid(format!(
                "{}: expected `[` and {what} after `{keyword}`, e.g. {}",
                quote(self.text),
                example(keyword)
            )));
        };
        let line = inner.split('\n').next().unwrap_or("");
        let Some(close) = line.rfind(']') else {
            let reason = if line.len() < inner.len() {
                " on the same line (a SPHINX action cannot span lines)"
            } else {
                ""
            };
            return Err(invalid(format!(
                "{}: {what} after `{keyword} [` is not closed with `]`{reason}",
                quote(self.text)
            )));
        };
        self.rest = &inner[close + 1..];
        Ok(&line[..close])
    }
}

fn example(keyword: &str) -> &'static str {
    match keyword {
        "text" => "`text [3] [hello]`",
        "swipe" => "`swipe [3] [up]` or `swipe [100,900] [100,300]`",
        "press" => "`press [back]`",
        "longclick" => "`longclick [3]`",
        _ => "`click [3]`",
    }
}

fn not_expressible(action: &Action, reason: impl Into<String>) -> PrintError {
    PrintError { syntax: SYNTAX, action: action.kind(), reason: reason.into() }
}

/// `[i]` or `[x,y]`; SPHINX has no descriptions and no negative coordinates.
fn print_target(action: &Action, target: &Target) -> Result<String, PrintError> {
    match target {
        Target::Index(i) => Ok(format!("[{i}]")),
        Target::Point(p) => print_point(action, p),
        Target::Description(_) => Err(not_expressible(
            action,
            "SPHINX targets are element indexes or points; a description needs grounding first",
        )),
    }
}

fn print_point(action: &Action, p: &Point) -> Result<String, PrintError> {
    if p.x < 0 || p.y < 0 {
        return Err(not_expressible(
            action,
            format!("SPHINX coordinates are unsigned, got ({}, {})", p.x, p.y),
        ));
    }
    Ok(format!("[{},{}]", p.x, p.y))
}

/// Prints an action in SPHINX syntax, or says why SPHINX cannot express it. Parsing the output
/// with default options gives the action back.
pub fn to_sphinx(action: &Action) -> Result<String, PrintError> {
    let err = |reason: &str| Err(not_expressible(action, reason));
    match action {
        Action::Tap { target } => Ok(format!("click {}", print_target(action, target)?)),
        Action::LongPress { target } => Ok(format!("longclick {}", print_target(action, target)?)),
        Action::Type { text, target, clear, enter } => {
            let Some(target) = target else {
                return err("SPHINX's `text` always names the field to type into");
            };
            if !clear {
                return err("SPHINX's `text` always clears the field first");
            }
            if *enter {
                return err("SPHINX's `text` never presses Enter; follow it with `press [enter]`");
            }
            if text.contains('\n') {
                return err("SPHINX's `text` cannot carry a line break");
            }
            Ok(format!("text {} [{text}]", print_target(action, target)?))
        }
        Action::Swipe(Swipe::Direction { direction, target: Some(Target::Index(i)) }) => {
            Ok(format!("swipe [{i}] [{}]", direction.as_str()))
        }
        Action::Swipe(Swipe::Direction { .. }) => {
            err("SPHINX swipes in a direction only on an element index (`swipe [i] [up]`)")
        }
        Action::Swipe(Swipe::Between { from, to }) => {
            Ok(format!("swipe {} {}", print_point(action, from)?, print_point(action, to)?))
        }
        Action::Key { key: Key::Back } => Ok("press [back]".to_string()),
        Action::Key { key: Key::Enter } => Ok("press [enter]".to_string()),
        Action::Key { key: Key::Home } => {
            err("SPHINX's `press [home]` restarts the app instead of going home")
        }
        Action::Key { .. } => err("SPHINX presses only back and enter"),
        Action::RestartApp { app: None } => Ok("press [restart]".to_string()),
        Action::RestartApp { app: Some(_) } => err("SPHINX restarts only the app under test"),
        Action::Wait { ms: None } => Ok("press [none]".to_string()),
        Action::Wait { ms: Some(_) } => err("SPHINX's `press [none]` has no duration"),
        Action::Finish { status: FinishStatus::Complete, .. } => Ok("press [stop]".to_string()),
        Action::Finish { status: FinishStatus::Infeasible, .. } => {
            err("SPHINX's `press [stop]` always claims the task is complete")
        }
        Action::Scroll { .. } => err("SPHINX has no scroll; a scroll down is `swipe [i] [up]`"),
        Action::DoubleTap { .. }
        | Action::Drag { .. }
        | Action::OpenApp { .. }
        | Action::Answer { .. }
        | Action::AskUser { .. }
        | Action::McpCall { .. } => err("SPHINX's action space has no such action"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Action, ParseError> {
        parse_sphinx(text, &ParseOptions::default())
    }

    fn message(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn index_forms() {
        assert_eq!(parse("click [3]").unwrap(), Action::Tap { target: Target::Index(3) });
        assert_eq!(parse("  longclick [03]\n").unwrap(), Action::LongPress { target: Target::Index(3) });
        assert_eq!(
            parse("text [0] [56.6]").unwrap(),
            Action::Type { text: "56.6".into(), target: Some(Target::Index(0)), clear: true, enter: false }
        );
        assert_eq!(
            parse("swipe [2] [direction=down]").unwrap(),
            Action::Swipe(Swipe::Direction { direction: Direction::Down, target: Some(Target::Index(2)) })
        );
    }

    #[test]
    fn coordinate_forms() {
        assert_eq!(
            parse("click [120,340]").unwrap(),
            Action::Tap { target: Target::Point(Point::new(120, 340)) }
        );
        assert_eq!(
            parse("text [5,6] [hi]").unwrap(),
            Action::Type {
                text: "hi".into(),
                target: Some(Target::Point(Point::new(5, 6))),
                clear: true,
                enter: false
            }
        );
        assert_eq!(
            parse("swipe [100,900] [100,300]").unwrap(),
            Action::Swipe(Swipe::Between { from: Point::new(100, 900), to: Point::new(100, 300) })
        );
    }

    #[test]
    fn press_keys_including_the_home_quirk() {
        assert_eq!(parse("press [back]").unwrap(), Action::Key { key: Key::Back });
        assert_eq!(parse("press [enter]").unwrap(), Action::Key { key: Key::Enter });
        assert_eq!(parse("press [restart]").unwrap(), Action::RestartApp { app: None });
        assert_eq!(parse("press [home]").unwrap(), Action::RestartApp { app: None });
        assert_eq!(parse("press [none]").unwrap(), Action::Wait { ms: None });
        assert_eq!(
            parse("press [stop]").unwrap(),
            Action::Finish { status: FinishStatus::Complete, reason: None }
        );
        let home = ParseOptions { sphinx_home_restarts: false, ..ParseOptions::default() };
        assert_eq!(parse_sphinx("press [home]", &home).unwrap(), Action::Key { key: Key::Home });
    }

    #[test]
    fn greedy_message_and_ignored_tail() {
        let Action::Type { text, .. } = parse("text [3] [a] [1]").unwrap() else { panic!() };
        assert_eq!(text, "a] [1");
        let Action::Type { text, .. } = parse("text [3] []").unwrap() else { panic!() };
        assert_eq!(text, "");
        let Action::Type { text, .. } = parse("text [3] [ spaced ] because\nnext]").unwrap() else {
            panic!()
        };
        assert_eq!(text, " spaced ");
        assert_eq!(parse("click [3] to open the menu").unwrap(), Action::Tap { target: Target::Index(3) });
        assert_eq!(parse("click [3]]").unwrap(), Action::Tap { target: Target::Index(3) });
    }

    #[test]
    fn malformed_actions_name_the_problem() {
        assert!(message("click[3]").contains("a space is required between `click` and `[`"));
        assert!(message("click  [3]").contains("exactly one space"));
        assert!(message("Click [3]").contains("action names are lower case"));
        assert!(message("tap [3]").contains("SPHINX calls a tap `click`"));
        assert!(message("[3]").contains("action name is missing"));
        assert!(message("click 3").contains("no `[`"));
        assert!(message("click [x]").contains("element index `[i]` or coordinates"));
        assert!(message("click [-1,5]").contains("element index `[i]` or coordinates"));
        assert!(message("click [1, 2]").contains("element index `[i]` or coordinates"));
        assert!(message("click [99999999999]").contains("too large"));
        assert!(message("click [1,99999999999]").contains("too large"));
        assert!(message("click [123456789012345678901234567890]").contains("too large"));
        assert!(message("text [3]").contains("needs a second group"));
        assert!(message("text [3][hi]").contains("needs a second group"));
        assert!(message("text [3] [a\nb]").contains("same line"));
        assert!(message("text [3] [abc").contains("not closed"));
        assert!(message("swipe [3] [sideways]").contains("invalid swipe direction `sideways`"));
        assert!(message("swipe [3] [up] [x]").contains("invalid swipe direction"));
        assert!(message("swipe [1,2] [up]").contains("end point"));
        assert!(message("press [Back]").contains("unknown key `Back`"));
        assert!(message("press [back").contains("not closed"));
        assert_eq!(parse("  ").unwrap_err(), ParseError::Empty);
    }

    #[test]
    fn modes_hold_agents_to_one_form() {
        let index = ParseOptions { sphinx_mode: SphinxMode::Index, ..ParseOptions::default() };
        let coords = ParseOptions { sphinx_mode: SphinxMode::Coordinates, ..ParseOptions::default() };
        assert!(parse_sphinx("click [3]", &index).is_ok());
        assert!(parse_sphinx("click [3,4]", &index).unwrap_err().to_string().contains("index mode"));
        assert!(parse_sphinx("click [3]", &coords).unwrap_err().to_string().contains("coordinate mode"));
        assert!(parse_sphinx("press [back]", &coords).is_ok());
    }

    #[test]
    fn lenient_accepts_near_misses() {
        let lenient = ParseOptions { lenient: true, ..ParseOptions::default() };
        assert_eq!(parse_sphinx("Click[3]", &lenient).unwrap(), Action::Tap { target: Target::Index(3) });
        assert_eq!(
            parse_sphinx("CLICK [ 12 , 34 ]", &lenient).unwrap(),
            Action::Tap { target: Target::Point(Point::new(12, 34)) }
        );
        assert_eq!(parse_sphinx("press [ Back ]", &lenient).unwrap(), Action::Key { key: Key::Back });
        assert!(matches!(
            parse_sphinx("swipe [1]   [ UP ]", &lenient).unwrap(),
            Action::Swipe(Swipe::Direction { direction: Direction::Up, .. })
        ));
    }

    #[test]
    fn printing() {
        let t = |a: Action| to_sphinx(&a);
        assert_eq!(t(Action::Tap { target: Target::Index(7) }).unwrap(), "click [7]");
        assert_eq!(t(Action::Tap { target: Target::Point(Point::new(1, 2)) }).unwrap(), "click [1,2]");
        assert_eq!(
            t(Action::Type {
                text: "a] [b".into(),
                target: Some(Target::Index(1)),
                clear: true,
                enter: false
            })
            .unwrap(),
            "text [1] [a] [b]"
        );
        assert!(
            t(Action::Type { text: "x".into(), target: Some(Target::Index(1)), clear: true, enter: true })
                .unwrap_err()
                .to_string()
                .contains("press [enter]")
        );
        assert!(t(Action::Key { key: Key::Home }).unwrap_err().to_string().contains("restarts the app"));
        assert!(t(Action::Tap { target: Target::Point(Point::new(-1, 2)) }).is_err());
        assert!(t(Action::Scroll { direction: Direction::Down, target: None }).is_err());
        assert_eq!(
            t(Action::Finish { status: FinishStatus::Complete, reason: None }).unwrap(),
            "press [stop]"
        );
    }
}
