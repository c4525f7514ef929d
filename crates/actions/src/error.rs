//! Errors from parsing and printing actions.
//!
//! A parse error always says which syntax was being read and what is wrong with the text, in
//! words an agent developer can act on ("`click[3]`: a space is required between `click` and
//! `[`"). The runner counts every [`ParseError`] as a format error of the agent.

/// Text that is not a valid action in the syntax it was read as.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Nothing but whitespace.
    #[error("empty action: there is no text to parse")]
    Empty,
    /// The text is malformed in `syntax`; `message` names the problem.
    #[error("{syntax} action: {message}")]
    Invalid {
        /// The syntax the text was read as (`SPHINX`, `AndroidWorld JSON`, …).
        syntax: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The agent explicitly gave up producing an action (`{"action_type": "unknown"}`, which
    /// AndroidWorld and MobileWorld agents emit when their own parsing failed).
    #[error("{syntax} action: `unknown` is what an agent emits when it has no valid action")]
    NoAction {
        /// The syntax the text was read as.
        syntax: &'static str,
    },
}

impl ParseError {
    /// An [`ParseError::Invalid`] for `syntax`.
    pub fn invalid(syntax: &'static str, message: impl Into<String>) -> Self {
        ParseError::Invalid { syntax, message: message.into() }
    }
}

/// An action that a syntax cannot express.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{syntax} cannot express this `{action}` action: {reason}")]
pub struct PrintError {
    /// The syntax asked for.
    pub syntax: &'static str,
    /// The canonical kind of the action (`tap`, `type`, …).
    pub action: &'static str,
    /// Why not, and what the syntax can say instead where there is something.
    pub reason: String,
}

/// Shortens text quoted in an error message to at most 60 characters, so a 10 kB model answer
/// does not become a 10 kB error line.
pub(crate) fn quote(text: &str) -> String {
    const MAX: usize = 60;
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(MAX).collect();
    let shown = if chars.next().is_some() { format!("{head}…") } else { head };
    format!("`{}`", shown.escape_debug())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_syntax_and_problem() {
        let e = ParseError::invalid("SPHINX", "unknown action `tap`");
        assert_eq!(e.to_string(), "SPHINX action: unknown action `tap`");
        assert_eq!(ParseError::Empty.to_string(), "empty action: there is no text to parse");
        let p = PrintError { syntax: "SPHINX", action: "scroll", reason: "no scroll".into() };
        assert_eq!(p.to_string(), "SPHINX cannot express this `scroll` action: no scroll");
    }

    #[test]
    fn quotes_are_short_and_escaped() {
        assert_eq!(quote("a\nb"), "`a\\nb`");
        let long = "x".repeat(100);
        assert_eq!(quote(&long).chars().count(), 60 + 3);
    }
}
