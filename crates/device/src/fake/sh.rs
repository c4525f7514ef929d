//! A small POSIX-sh command-line parser: what `/system/bin/sh -c LINE` does with LINE before it
//! runs anything, for the subset a fake device needs.
//!
//! Supported: words (unquoted, `'…'`, `"…"`, backslash escapes, adjacent parts joined), comments,
//! and lists of simple commands joined by `;`, newline, `&&` and `||`. Everything else that would
//! make a real shell do more than run simple commands (expansions, command substitution, pipes,
//! background jobs, redirections, compound commands) is refused for the whole line, before
//! anything runs: pretending to support it would hide exactly the quoting bugs in clients that
//! the fake device exists to catch.

/// How a command is joined to the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Connector {
    /// `;`, a newline, or the start of the line: always runs.
    Always,
    /// `&&`: runs only if the previous status was 0.
    And,
    /// `||`: runs only if the previous status was not 0.
    Or,
}

/// One simple command and how it joins the previous one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Command {
    /// When it runs, relative to the previous command's status.
    pub connector: Connector,
    /// Its words after quote removal.
    pub argv: Vec<String>,
    /// For each word, its pathname pattern when it has an unquoted `*`, `?` or `[` (quoted
    /// pattern characters escaped with `\\`): sh replaces such a word by the paths it matches,
    /// when there are any, just before the command runs.
    pub patterns: Vec<Option<String>>,
}

/// Why a line cannot be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ShError {
    /// Syntax a real shell would run but this one refuses (`$VAR`, `$(…)`, `|`, `>`…).
    Unsupported(String),
    /// Syntax a real shell rejects too (`;;`, `&& b` with nothing before it).
    Syntax(String),
}

impl ShError {
    /// The message the shell prints on stderr (without the trailing newline).
    pub(crate) fn message(&self) -> String {
        match self {
            ShError::Unsupported(what) => format!("/system/bin/sh: unsupported syntax: {what}"),
            ShError::Syntax(what) => format!("/system/bin/sh: syntax error: {what}"),
        }
    }
}

/// A token of the line.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A word; `quoted` when any part of it was quoted or escaped (so it is never a reserved word).
    Word { text: String, quoted: bool, pattern: Option<String> },
    /// `;`.
    Semicolon,
    /// A newline.
    Newline,
    /// `&&`.
    And,
    /// `||`.
    Or,
}

/// Words that start compound commands when unquoted in command position: a real shell would run
/// control flow, so they are refused rather than run as commands of that name.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for", "{", "}", "!",
    "[[", "]]", "function", "select", "time",
];

/// Whether an unquoted command word is a variable assignment (`NAME=value`), which sh performs
/// instead of running a command of that name.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Parses `line` into simple commands, or says why the whole line cannot run.
pub(crate) fn parse(line: &str) -> Result<Vec<Command>, ShError> {
    let tokens = tokenize(line)?;
    let mut commands = Vec::new();
    let mut argv: Vec<String> = Vec::new();
    let mut patterns: Vec<Option<String>> = Vec::new();
    let mut connector = Connector::Always;
    for token in tokens {
        match token {
            Token::Word { text, quoted, pattern } => {
                if argv.is_empty() && !quoted && RESERVED.contains(&text.as_str()) {
                    return Err(ShError::Unsupported(format!("`{text}` (compound commands)")));
                }
                if argv.is_empty() && !quoted && is_assignment(&text) {
                    return Err(ShError::Unsupported(format!("`{text}` (variable assignments)")));
                }
                argv.push(text);
                patterns.push(pattern);
            }
            Token::Semicolon | Token::Newline => {
                if argv.is_empty() {
                    // Blank lines are fine, also after `&&` / `||` (`a &&` NEWLINE `b`); a `;`
                    // with no command before it is not (`; a`, `a && ; b`), as in sh.
                    if token == Token::Semicolon {
                        return Err(ShError::Syntax("';' unexpected".into()));
                    }
                    continue;
                }
                let (argv, patterns) = (std::mem::take(&mut argv), std::mem::take(&mut patterns));
                commands.push(Command { connector, argv, patterns });
                connector = Connector::Always;
            }
            Token::And | Token::Or => {
                let op = if token == Token::And { "&&" } else { "||" };
                if argv.is_empty() {
                    return Err(ShError::Syntax(format!("'{op}' unexpected")));
                }
                let (argv, patterns) = (std::mem::take(&mut argv), std::mem::take(&mut patterns));
                commands.push(Command { connector, argv, patterns });
                connector = if token == Token::And { Connector::And } else { Connector::Or };
            }
        }
    }
    if !argv.is_empty() {
        commands.push(Command { connector, argv, patterns });
    } else if connector != Connector::Always {
        return Err(ShError::Syntax("unexpected end of file".into()));
    }
    Ok(commands)
}

/// Whether `$` followed by `next` would expand in sh (a name, `{`, `(`, a digit or a special
/// parameter). Anything else after `$` is a literal `$`.
fn expands(next: Option<char>) -> bool {
    match next {
        Some(c) => {
            c.is_ascii_alphanumeric()
                || matches!(c, '_' | '{' | '(' | '?' | '$' | '#' | '@' | '*' | '!' | '-')
        }
        None => false,
    }
}

/// A word being read: its text, whether any of it was quoted, and its glob pattern so far.
#[derive(Default)]
struct WordBuf {
    text: String,
    quoted: bool,
    pattern: String,
    glob: bool,
}

impl WordBuf {
    /// An unquoted character: `*`, `?` and `[` are pattern characters.
    fn plain(&mut self, c: char) {
        self.text.push(c);
        if matches!(c, '*' | '?' | '[') {
            self.glob = true;
            self.pattern.push(c);
        } else if c == ']' {
            // An unquoted `]` closes a bracket expression (elsewhere it is itself anyway).
            self.pattern.push(c);
        } else {
            self.literal_pattern(c);
        }
    }

    /// A quoted or escaped character: always itself.
    fn quoted(&mut self, c: char) {
        self.quoted = true;
        self.text.push(c);
        self.literal_pattern(c);
    }

    fn literal_pattern(&mut self, c: char) {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            self.pattern.push('\\');
        }
        self.pattern.push(c);
    }

    fn into_token(self) -> Token {
        let pattern = self.glob.then_some(self.pattern);
        Token::Word { text: self.text, quoted: self.quoted, pattern }
    }
}

/// The error for a `$` that would expand.
fn expansion(next: Option<char>) -> ShError {
    ShError::Unsupported(format!("`${}` (parameter expansion and command substitution)", next.unwrap_or(' ')))
}

/// Splits the line into words and operators, removing quotes.
fn tokenize(line: &str) -> Result<Vec<Token>, ShError> {
    let chars: Vec<char> = line.chars().collect();
    let mut tokens = Vec::new();
    // The word being built: `None` between words (so that `''` still makes an empty word).
    let mut word: Option<WordBuf> = None;
    let mut i = 0;
    fn finish(word: &mut Option<WordBuf>, tokens: &mut Vec<Token>) {
        if let Some(w) = word.take() {
            tokens.push(w.into_token());
        }
    }
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match c {
            ' ' | '\t' => {
                finish(&mut word, &mut tokens);
                i += 1;
            }
            '\n' | ';' => {
                finish(&mut word, &mut tokens);
                if c == ';' && next == Some(';') {
                    return Err(ShError::Syntax("';;' unexpected".into()));
                }
                tokens.push(if c == ';' { Token::Semicolon } else { Token::Newline });
                i += 1;
            }
            '&' => {
                finish(&mut word, &mut tokens);
                if next == Some('&') {
                    tokens.push(Token::And);
                    i += 2;
                } else {
                    return Err(ShError::Unsupported("`&` (background jobs)".into()));
                }
            }
            '|' => {
                finish(&mut word, &mut tokens);
                if next == Some('|') {
                    tokens.push(Token::Or);
                    i += 2;
                } else {
                    return Err(ShError::Unsupported("`|` (pipes)".into()));
                }
            }
            '<' | '>' => return Err(ShError::Unsupported(format!("`{c}` (redirections)"))),
            '(' | ')' => return Err(ShError::Unsupported(format!("`{c}` (subshells)"))),
            '`' => return Err(ShError::Unsupported("backticks (command substitution)".into())),
            '~' if word.is_none() => return Err(ShError::Unsupported("`~` (tilde expansion)".into())),
            '#' if word.is_none() => {
                // A comment runs to the end of the line; the newline itself still separates.
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '$' => {
                if expands(next) {
                    return Err(expansion(next));
                }
                word.get_or_insert_with(WordBuf::default).plain('$');
                i += 1;
            }
            '\\' => {
                match next {
                    // A line continuation: both characters disappear.
                    Some('\n') => {}
                    Some(escaped) => word.get_or_insert_with(WordBuf::default).quoted(escaped),
                    // A backslash at the very end stays (dash and bash keep it).
                    None => word.get_or_insert_with(WordBuf::default).quoted('\\'),
                }
                i += 2;
            }
            '\'' => {
                let w = word.get_or_insert_with(WordBuf::default);
                w.quoted = true;
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(ShError::Unsupported("unterminated quote `'`".into())),
                        Some('\'') => {
                            i += 1;
                            break;
                        }
                        Some(&ch) => {
                            w.quoted(ch);
                            i += 1;
                        }
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(WordBuf::default);
                w.quoted = true;
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(ShError::Unsupported("unterminated quote `\"`".into())),
                        Some('"') => {
                            i += 1;
                            break;
                        }
                        Some('\\') => match chars.get(i + 1) {
                            Some('\n') => i += 2,
                            Some(&e @ ('\\' | '"' | '$' | '`')) => {
                                w.quoted(e);
                                i += 2;
                            }
                            _ => {
                                w.quoted('\\');
                                i += 1;
                            }
                        },
                        Some('`') => {
                            return Err(ShError::Unsupported("backticks (command substitution)".into()));
                        }
                        Some('$') => {
                            let after = chars.get(i + 1).copied();
                            if expands(after) {
                                return Err(expansion(after));
                            }
                            w.quoted('$');
                            i += 1;
                        }
                        Some(&ch) => {
                            w.quoted(ch);
                            i += 1;
                        }
                    }
                }
            }
            other => {
                word.get_or_insert_with(WordBuf::default).plain(other);
                i += 1;
            }
        }
    }
    finish(&mut word, &mut tokens);
    Ok(tokens)
}

/// Whether `name` (one path component) matches the glob `pattern` (one component, as
/// [`Command::patterns`] writes it): `*`, `?`, `[abc]`, `[a-z]`, `[!…]`/`[^…]`, `\x` for a
/// literal x. A leading `.` in `name` must be matched by a literal `.`, as in sh.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    let tokens = glob_tokens(pattern);
    let name: Vec<char> = name.chars().collect();
    if name.first() == Some(&'.') && tokens.first() != Some(&GlobToken::Literal('.')) {
        return false;
    }
    // The classic linear matcher with one backtrack point (the last `*`).
    let (mut t, mut n) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match tokens.get(t) {
            Some(GlobToken::Star) => {
                star = Some((t, n));
                t += 1;
                continue;
            }
            Some(token) if token.matches(name[n]) => {
                t += 1;
                n += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((st, sn)) => {
                t = st + 1;
                n = sn + 1;
                star = Some((st, sn + 1));
            }
            None => return false,
        }
    }
    tokens[t.min(tokens.len())..].iter().all(|tok| *tok == GlobToken::Star)
}

/// Whether a path component of a pattern has a pattern character (else it is a plain name).
pub(crate) fn has_glob(component: &str) -> bool {
    glob_tokens(component).iter().any(|t| !matches!(t, GlobToken::Literal(_)))
}

/// A pattern component without its escapes (for components that have no pattern character).
pub(crate) fn unescape(component: &str) -> String {
    glob_tokens(component)
        .into_iter()
        .filter_map(|t| if let GlobToken::Literal(c) = t { Some(c) } else { None })
        .collect()
}

/// One piece of a glob.
#[derive(Debug, Clone, PartialEq, Eq)]
enum GlobToken {
    Literal(char),
    Any,
    Star,
    /// A bracket expression: ranges (a single character is `c..=c`), negated or not.
    Class(Vec<(char, char)>, bool),
}

impl GlobToken {
    fn matches(&self, c: char) -> bool {
        match self {
            GlobToken::Literal(l) => *l == c,
            GlobToken::Any => true,
            GlobToken::Star => false,
            GlobToken::Class(ranges, negated) => {
                ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated
            }
        }
    }
}

fn glob_tokens(pattern: &str) -> Vec<GlobToken> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                if let Some(&c) = chars.get(i + 1) {
                    tokens.push(GlobToken::Literal(c));
                }
                i += 2;
            }
            '*' => {
                // Consecutive stars are one.
                if tokens.last() != Some(&GlobToken::Star) {
                    tokens.push(GlobToken::Star);
                }
                i += 1;
            }
            '?' => {
                tokens.push(GlobToken::Any);
                i += 1;
            }
            '[' => match bracket(&chars, i) {
                Some((token, after)) => {
                    tokens.push(token);
                    i = after;
                }
                // An unterminated `[` is a literal `[`.
                None => {
                    tokens.push(GlobToken::Literal('['));
                    i += 1;
                }
            },
            c => {
                tokens.push(GlobToken::Literal(c));
                i += 1;
            }
        }
    }
    tokens
}

/// The bracket expression starting at `chars[start] == '['`, and the index after its `]`.
fn bracket(chars: &[char], start: usize) -> Option<(GlobToken, usize)> {
    let mut i = start + 1;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let c = match chars.get(i)? {
            ']' if !first => return Some((GlobToken::Class(ranges, negated), i + 1)),
            '\\' => {
                i += 1;
                *chars.get(i)?
            }
            &c => c,
        };
        first = false;
        i += 1;
        if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|&h| h != ']') {
            let hi = match chars.get(i + 1)? {
                '\\' => {
                    i += 1;
                    *chars.get(i + 1)?
                }
                &h => h,
            };
            ranges.push((c, hi));
            i += 2;
        } else {
            ranges.push((c, c));
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn argvs(line: &str) -> Vec<Vec<String>> {
        parse(line).unwrap().into_iter().map(|c| c.argv).collect()
    }

    fn words(line: &str) -> Vec<String> {
        let mut all = argvs(line);
        assert_eq!(all.len(), 1, "{line:?} is one command");
        all.remove(0)
    }

    #[test]
    fn words_and_quotes() {
        assert_eq!(words("input tap 1 2"), ["input", "tap", "1", "2"]);
        assert_eq!(words("  echo   a\tb  "), ["echo", "a", "b"]);
        assert_eq!(words("echo 'a; b' \"c && d\""), ["echo", "a; b", "c && d"]);
        assert_eq!(words("echo 'it'\\''s'"), ["echo", "it's"]);
        assert_eq!(words("echo a\\ b\\;c"), ["echo", "a b;c"]);
        assert_eq!(words("echo \"a\\\"b\\$c\\`d\\\\e\\nf\""), ["echo", "a\"b$c`d\\e\\nf"]);
        assert_eq!(words("echo '' \"\""), ["echo", "", ""]);
        assert_eq!(words("echo 'a\\b'"), ["echo", "a\\b"]);
        assert_eq!(words("echo a'b'\"c\"d"), ["echo", "abcd"]);
        assert_eq!(words("echo a\\\nb"), ["echo", "ab"]);
        assert_eq!(words("echo \"a\\\nb\""), ["echo", "ab"]);
        assert_eq!(words("echo $ a$ $% \"$ $/\" $."), ["echo", "$", "a$", "$%", "$ $/", "$."]);
        assert_eq!(words("echo a#b # comment ; rm x"), ["echo", "a#b"]);
        assert_eq!(words("echo 'é ü' 日本"), ["echo", "é ü", "日本"]);
        assert_eq!(words("echo '#' \\#"), ["echo", "#", "#"]);
    }

    #[test]
    fn lists() {
        let cmds = parse("a; b && c || d\ne").unwrap();
        let conns: Vec<Connector> = cmds.iter().map(|c| c.connector).collect();
        assert_eq!(
            conns,
            [Connector::Always, Connector::Always, Connector::And, Connector::Or, Connector::Always]
        );
        assert_eq!(argvs("a;b"), [["a"], ["b"]]);
        assert_eq!(argvs("a ;"), [["a"]]);
        assert_eq!(argvs("\n\na\n\n# only a comment\n"), [["a"]]);
        assert_eq!(argvs("a &&\nb"), [["a"], ["b"]]);
        assert!(argvs("").is_empty());
        assert!(argvs("   # nothing").is_empty());
    }

    #[test]
    fn refusals() {
        for line in [
            "echo $HOME",
            "echo ${x}",
            "echo $(id)",
            "echo $1",
            "echo $?",
            "echo \"$x\"",
            "echo \"$(id)\"",
            "echo `id`",
            "echo \"`id`\"",
            "echo a | cat",
            "sleep 1 &",
            "echo a > /sdcard/x",
            "cat < /sdcard/x",
            "echo 'a",
            "echo \"a",
            "(echo a)",
            "if true; then echo a; fi",
            "{ echo a; }",
            "A=1 echo a",
            "PATH=/x",
        ] {
            assert!(matches!(parse(line), Err(ShError::Unsupported(_))), "{line:?} is refused");
        }
        for line in ["a && && b", ";; a", "; a", "a\n; b", "a ;; b", "&& a", "a ||", "a && ;"] {
            assert!(parse(line).is_err(), "{line:?} is an error");
        }
        // Quoted reserved words and `{` inside a word are ordinary words.
        assert_eq!(words("'if' a{b}"), ["if", "a{b}"]);
        assert_eq!(words("'A=1' b=2 =3"), ["A=1", "b=2", "=3"]);
        assert_eq!(words("\\A=1"), ["A=1"]);
    }

    #[test]
    fn patterns_mark_unquoted_glob_characters() {
        let cmds = parse("rm /sdcard/*.png '/sdcard/*' a\\*b \"x?\" [ab]c plain").unwrap();
        assert_eq!(cmds[0].argv, ["rm", "/sdcard/*.png", "/sdcard/*", "a*b", "x?", "[ab]c", "plain"]);
        assert_eq!(
            cmds[0].patterns,
            [None, Some("/sdcard/*.png".into()), None, None, None, Some("[ab]c".into()), None]
        );
        assert_eq!(parse("ls 'a*'*").unwrap()[0].patterns[1].as_deref(), Some("a\\**"));
        assert!(matches!(parse("ls ~/x"), Err(ShError::Unsupported(_))));
        assert_eq!(words("echo a~ '~'"), ["echo", "a~", "~"]);
    }

    #[test]
    fn globs_match_like_sh() {
        for (pattern, name, expected) in [
            ("*", "abc", true),
            ("*", ".hidden", false),
            (".*", ".hidden", true),
            ("*.png", "s.png", true),
            ("*.png", "s.png.txt", false),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("[ab]c", "bc", true),
            ("[!ab]c", "bc", false),
            ("[a-c]x", "cx", true),
            ("[]]", "]", true),
            ("a\\*", "a*", true),
            ("a\\*", "ab", false),
            ("*a*b*", "xxaxxbxx", true),
            ("*a*b", "xxaxxbxxc", false),
            ("[a", "[a", true),
            ("", "", true),
            ("**", "", true),
        ] {
            assert_eq!(glob_match(pattern, name), expected, "{pattern:?} ~ {name:?}");
        }
        assert!(has_glob("*.png") && !has_glob("a\\*b"));
        assert_eq!(unescape("a\\*b"), "a*b");
    }

    #[test]
    fn never_panics_on_nasty_input() {
        const PIECES: &[&str] = &[
            "'", "\"", "\\", "$", "`", ";", "&", "&&", "|", "||", "\n", "#", " ", "\t", "(", ")", "{", "}",
            "<", ">", "a", "é", "日", "\u{0}", "\u{FFFD}", "$(", "${", "$1", "$?", "%s", "if", "!", "\r",
            "\\\n", "*", "?", "[", "]", "[!", "-", "~",
        ];
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let len = (next() % 12) as usize;
            let line: String = (0..len).map(|_| PIECES[(next() % PIECES.len() as u64) as usize]).collect();
            if let Ok(cmds) = parse(&line) {
                for pattern in cmds.iter().flat_map(|c| c.patterns.iter().flatten()) {
                    let _ = glob_match(pattern, &line);
                    let _ = has_glob(pattern);
                    let _ = unescape(pattern);
                }
            }
            let _ = glob_match(&line, "abc*[x");
        }
        for _ in 0..5_000 {
            let len = (next() % 24) as usize;
            let bytes: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let _ = parse(&String::from_utf8_lossy(&bytes));
        }
    }
}
