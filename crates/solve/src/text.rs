//! Text the search types and answers, and the goal's words it steers by.
//!
//! Typed and answered text comes from the task's parameters that the goal shows (every scalar,
//! and every field of a table, whose text appears in the goal: a hidden parameter, such as an
//! expected answer, is never used), the goal (quoted strings, numbers), what the episode learnt (`ask_user` replies,
//! MCP results: quoted strings and words with digits; values read on earlier screens), and the
//! reference's texts once the path has seen the hidden values in them ([`crate::reference`]);
//! answers also from the screen.

use std::collections::BTreeSet;

use phonebench_env::Trajectory;
use phonebench_tasks::TaskInstance;
use phonebench_uitree::UiTree;
use serde_json::{Map, Value};

use crate::reference::{Landmarks, ReferenceTexts};

/// Words too common to steer by.
pub(crate) const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "from", "that", "this", "then", "than", "what", "which", "when", "where",
    "who", "how", "into", "onto", "your", "you", "are", "was", "were", "has", "have", "had", "its", "it's",
    "all", "any", "our", "out", "not", "but", "can", "will", "just", "about", "there", "their", "them",
    "they", "his", "her", "she", "him", "one", "use", "using", "make", "sure", "app", "please", "tell",
    "give", "answer",
];

/// Lower-case words of `text` (letters and digits, at least three characters, or any number),
/// stop words left out.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| {
            (w.chars().count() >= 3 || w.chars().all(|c| c.is_ascii_digit()))
                && !STOP_WORDS.contains(&w.as_str())
        })
        .collect()
}

/// Every lower-case word of a name (`x.from` → `x`, `from`): parameter and field names are
/// matched whole, short ones included (a tool's `to` argument).
pub fn name_words(name: &str) -> Vec<String> {
    name.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// A text the search may type or answer, with the words naming what it is (the parameter and
/// field names, or the question it answered), to match a field's id and hint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextCandidate {
    /// The text.
    pub text: String,
    /// What it is: words of its parameter and field names.
    pub key: Vec<String>,
}

/// The goal's words (and the parameters'), which actions on elements that show them favour.
#[derive(Debug, Clone, Default)]
pub struct GoalWords {
    /// Words of the goal and the parameter values.
    pub words: BTreeSet<String>,
    /// The static text candidates (parameters, then the goal's quoted strings and numbers).
    pub candidates: Vec<TextCandidate>,
    /// The digits of the goal's numbers.
    pub digits: BTreeSet<char>,
    /// Names the goal gives that are not candidates ([`names`]): typed only into fields that
    /// find things (a search for "Denver"), where a name is what an agent would type.
    pub search_terms: Vec<String>,
    /// Lengths of time the goal gives ([`durations_ms`]): how long a `wait` may be worth
    /// (a timer of 2 minutes rings after 2 minutes).
    pub durations_ms: Vec<u64>,
    /// The hours and minutes of the goal's times of day ([`time_parts`]), typed only into a
    /// field named for them (a time picker's `#input_hour`).
    pub time_parts: Vec<TextCandidate>,
    /// What the task's reference types, answers, asks and calls, each offered once the path has
    /// seen the hidden values in it ([`crate::reference`]).
    pub reference: ReferenceTexts,
}

impl GoalWords {
    /// The goal's words and text candidates of `instance`.
    pub fn of(instance: &TaskInstance) -> GoalWords {
        let mut words: BTreeSet<String> = words(&instance.goal).into_iter().collect();
        let mut candidates = Vec::new();
        // Only what the agent is told: a parameter the goal does not show (an expected answer,
        // an id) is hidden from agents, and so from the oracle.
        let goal = instance.goal.to_lowercase();
        let shown = |c: &TextCandidate| goal.contains(&c.text.to_lowercase());
        for (name, value) in &instance.params {
            let key = name_words(name);
            match value {
                Value::Object(fields) => {
                    for (field, v) in fields {
                        let mut k = key.clone();
                        k.extend(name_words(field));
                        push_value(&mut candidates, v, k);
                    }
                }
                v => push_value(&mut candidates, v, key),
            }
        }
        candidates.retain(shown);
        for c in &candidates {
            words.extend(self::words(&c.text));
        }
        for q in quoted(&instance.goal) {
            push(&mut candidates, q, Vec::new());
        }
        for n in numbers(&instance.goal) {
            push(&mut candidates, n, Vec::new());
        }
        // Zero pads keypad entries (`1`, `2`, `00` for 12 minutes).
        let digits = instance.goal.chars().filter(char::is_ascii_digit).chain(std::iter::once('0')).collect();
        let search_terms =
            names(&instance.goal).into_iter().filter(|n| !candidates.iter().any(|c| &c.text == n)).collect();
        let mut durations_ms = durations_ms(&instance.goal);
        // And as long as the reference waits (a reply that comes in 5 minutes): a length of
        // time, not a text, and free of facts.
        let mut steps: Vec<&phonebench_tasks::RefStep> = instance.reference.iter().collect();
        while let Some(step) = steps.pop() {
            match step {
                phonebench_tasks::RefStep::Wait { ms: Some(ms) } if !durations_ms.contains(ms) => {
                    durations_ms.push(*ms)
                }
                phonebench_tasks::RefStep::If { then, .. } => steps.push(then),
                _ => {}
            }
        }
        let time_parts = time_parts(&instance.goal);
        let reference = ReferenceTexts::of(instance);
        // A goal's value the reference types is named by its field too (`Kavya Novak` into the
        // recipient field).
        // Not a text the reference appends: typed over the field, it would replace what it follows.
        for (r, _) in &reference.typed {
            if let Some(c) = candidates.iter_mut().find(|c| c.text == r.text) {
                add_words(&mut c.key, &r.key);
            }
        }
        GoalWords { words, candidates, digits, search_terms, durations_ms, time_parts, reference }
    }

    /// How many of the goal's words the screen shows (texts and content descriptions).
    pub fn on_screen(&self, tree: &UiTree) -> usize {
        let mut shown = BTreeSet::new();
        for (_, node) in tree.iter() {
            for w in words(&node.text).into_iter().chain(words(&node.content_desc)) {
                if self.words.contains(&w) {
                    shown.insert(w);
                }
            }
        }
        shown.len()
    }

    /// Whether `label` is a keypad key for the goal's numbers: one or two digits, each a digit of
    /// a number in the goal (`4` and `5` for "45 minutes").
    pub fn digit_key(&self, label: &str) -> bool {
        let label = label.trim();
        !label.is_empty()
            && label.len() <= 2
            && label.chars().all(|c| c.is_ascii_digit() && self.digits.contains(&c))
    }

    /// Whether any of `words` is one of the goal's.
    pub fn matches(&self, words: &[String]) -> bool {
        words.iter().any(|w| self.words.contains(w))
    }
}

/// Adds to `key` the words of `more` it does not have.
fn add_words(key: &mut Vec<String>, more: &[String]) {
    for w in more {
        if !key.contains(w) {
            key.push(w.clone());
        }
    }
}

fn push_value(out: &mut Vec<TextCandidate>, value: &Value, key: Vec<String>) {
    match value {
        Value::String(s) => push(out, s.clone(), key),
        Value::Number(n) => push(out, n.to_string(), key),
        _ => {}
    }
}

fn push(out: &mut Vec<TextCandidate>, text: String, key: Vec<String>) {
    let text = text.trim().to_string();
    if text.is_empty() || text.chars().count() > 200 || out.iter().any(|c| c.text == text) {
        return;
    }
    out.push(TextCandidate { text, key });
}

/// The names in `text`: runs of capitalised words (`Denver`, `Wi-Fi`, `Battery Saver`), a
/// possessive's `'s` cut; a comma, a possessive or a sentence's end ends a run. The first word
/// of a sentence is capitalised whatever it is, so it counts only as the start of a longer run
/// (`Farah Okafor sent…`, not `Check that…`).
pub fn names(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let mut run_starts_sentence = false;
    let flush = |run: &mut Vec<&str>, starts_sentence: bool, out: &mut Vec<String>| {
        if run.len() > usize::from(starts_sentence) {
            let name = run.join(" ");
            if !out.contains(&name) {
                out.push(name);
            }
        }
        run.clear();
    };
    let mut sentence_start = true;
    for token in text.split_whitespace() {
        let trimmed = token.trim_matches(|c: char| !c.is_alphanumeric());
        let word = trimmed.strip_suffix("'s").or_else(|| trimmed.strip_suffix("’s"));
        let possessive = word.is_some();
        let word = word.unwrap_or(trimmed);
        let capitalised =
            word.chars().next().is_some_and(char::is_uppercase) && word.chars().any(char::is_lowercase);
        if capitalised {
            if run.is_empty() {
                run_starts_sentence = sentence_start;
            }
            run.push(word);
        } else {
            flush(&mut run, run_starts_sentence, &mut out);
        }
        let end = token.trim_end_matches(['"', '\'', '”', ')']);
        sentence_start = end.ends_with(['.', '!', '?', ':']);
        if sentence_start || possessive || end.ends_with([',', ';']) {
            flush(&mut run, run_starts_sentence, &mut out);
        }
    }
    flush(&mut run, run_starts_sentence, &mut out);
    out
}

/// Strings between quotes (`"…"`, `“…”`, `'…'` when it does not look like an apostrophe).
pub fn quoted(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [('"', '"'), ('“', '”'), ('\'', '\'')] {
        let mut rest = text;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            let inner = &after[..end];
            let apostrophe = open == '\''
                && (rest[..start].chars().last().is_some_and(char::is_alphanumeric)
                    || inner.contains(' ') && inner.len() > 60);
            if !apostrophe && !inner.trim().is_empty() {
                out.push(inner.to_string());
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    out
}

/// Lengths of time `text` gives, in milliseconds: each number followed by a unit (`2 minutes`,
/// `90 s`, `1.5 hours`, `10-minute`), then, when there are several, their sum (`1 hour 30
/// minutes`); each once, in order.
pub fn durations_ms(text: &str) -> Vec<u64> {
    let tokens: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == '-' || c == ',' || c == '(' || c == ')')
        .map(|w| w.trim_end_matches(['.', '!', '?', ';', ':']))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out: Vec<u64> = Vec::new();
    for (i, pair) in tokens.windows(2).enumerate() {
        let Ok(n) = pair[0].parse::<f64>() else { continue };
        // A kind of clock, not a length of time (`24-hour format`, `12 hour time`).
        if tokens
            .get(i + 2)
            .is_some_and(|w| ["format", "clock", "time", "mode"].contains(&w.to_lowercase().as_str()))
        {
            continue;
        }
        let unit_ms = match pair[1].to_lowercase().as_str() {
            "ms" | "millisecond" | "milliseconds" => 1.0,
            "s" | "sec" | "secs" | "second" | "seconds" => 1_000.0,
            "min" | "mins" | "minute" | "minutes" => 60_000.0,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000.0,
            _ => continue,
        };
        let ms = (n * unit_ms).round();
        if ms.is_finite() && ms >= 1.0 && ms <= phonebench_phone::MAX_WAIT_MS as f64 {
            out.push(ms as u64);
        }
    }
    let sum: u64 = out.iter().sum();
    if out.len() > 1 && sum <= phonebench_phone::MAX_WAIT_MS as u64 {
        out.push(sum);
    }
    let mut seen = BTreeSet::new();
    out.retain(|d| seen.insert(*d));
    out
}

/// The hour and the minute of each time of day `text` gives (`7:30`, `16:45`, `3:55 AM`,
/// `8:05 p.m.`, `10 AM`), as a time picker's two fields take them: two digits each. The hour is
/// keyed `hour`, the minute `minute`. An afternoon hour is given on both clocks, the 24-hour one
/// first (`3:30 PM` → `15`, `03`, `30`): a 12-hour picker takes `03` and its PM button. Each
/// part once, in order. A duration written like a time (`1:30`) gives parts too: they are typed
/// only into fields named for hours and minutes.
pub fn time_parts(text: &str) -> Vec<TextCandidate> {
    let tokens: Vec<&str> = text
        // A range's dash parts its times (`10:00-11:30`; `9–5 pm` gives `5 pm` only).
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '(' | ')' | '-' | '–' | '—'))
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|w| !w.is_empty())
        .collect();
    // `am` / `pm` at the start of `word` (`AM`, `p.m.`, `pm"`), if so.
    let meridiem = |word: &str| -> Option<bool> {
        let w: String = word
            .chars()
            .take_while(|c| c.is_alphabetic() || *c == '.')
            .filter(|c| *c != '.')
            .collect::<String>()
            .to_lowercase();
        match w.as_str() {
            "am" => Some(false),
            "pm" => Some(true),
            _ => None,
        }
    };
    let mut out = Vec::new();
    let mut add = |text: String, key: &str| {
        let part = TextCandidate { text, key: vec![key.to_string()] };
        if !out.contains(&part) {
            out.push(part);
        }
    };
    for (i, token) in tokens.iter().enumerate() {
        let digits_end = token.find(|c: char| !c.is_ascii_digit() && c != ':').unwrap_or(token.len());
        let (clock, rest) = token.split_at(digits_end);
        let (hour, minute) = match clock.split_once(':') {
            Some((h, m)) if (1..=2).contains(&h.len()) && m.len() == 2 => (h, m),
            None if (1..=2).contains(&clock.len()) => (clock, "00"),
            _ => continue,
        };
        let (Ok(hour), Ok(minute)) = (hour.parse::<u32>(), minute.parse::<u32>()) else { continue };
        let after =
            if rest.is_empty() { tokens.get(i + 1).copied().and_then(meridiem) } else { meridiem(rest) };
        // A bare number is a time only with `am` / `pm` (`10 AM`), never a count.
        if !clock.contains(':') && after.is_none() {
            continue;
        }
        let hour = match after {
            Some(pm) if (1..=12).contains(&hour) => hour % 12 + if pm { 12 } else { 0 },
            Some(_) => continue,
            None => hour,
        };
        if hour >= 24 || minute >= 60 {
            continue;
        }
        add(format!("{hour:02}"), "hour");
        if hour > 12 {
            add(format!("{:02}", hour - 12), "hour");
        }
        add(format!("{minute:02}"), "minute");
    }
    out
}

/// Numbers and times in `text` (`42`, `7:30`, `3.5`), trailing punctuation cut.
pub fn numbers(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == ',' || c == '(' || c == ')')
        .map(|w| w.trim_end_matches(['.', '!', '?', ';']))
        .filter(|w| {
            !w.is_empty()
                && w.chars().next().is_some_and(|c| c.is_ascii_digit())
                && w.chars().all(|c| c.is_ascii_digit() || c == ':' || c == '.' || c == '-' || c == '/')
        })
        .map(str::to_string)
        .collect()
}

/// Text the episode learnt: from each `ask_user` reply and MCP result, its quoted strings, its
/// words with digits, and the whole reply when it is short; then what earlier screens on the
/// path showed ([`screen_candidates`]).
pub fn dynamic_candidates(trajectory: &Trajectory, goal: &GoalWords) -> Vec<TextCandidate> {
    let mut out = told_candidates(trajectory);
    let earlier = trajectory.screens.len().saturating_sub(1);
    for c in screen_candidates(&trajectory.screens[..earlier], goal) {
        if !goal.candidates.iter().any(|g| g.text == c.text) {
            push(&mut out, c.text, c.key);
        }
    }
    out
}

/// What a path has learnt: the texts it may type (what it was told, what earlier screens
/// showed, and the reference's texts whose facts it has seen), the answers, questions and MCP
/// calls of the reference it may now give, and which of those facts it has seen.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Learnt {
    /// Texts to type (and to answer with).
    pub texts: Vec<TextCandidate>,
    /// The reference's texts typed after a field's text, whose facts were seen.
    pub appended: Vec<TextCandidate>,
    /// The reference's answers whose facts were seen.
    pub answers: Vec<String>,
    /// The reference's questions for the simulated user whose facts were seen.
    pub questions: Vec<String>,
    /// The reference's MCP calls (tool, arguments) whose facts were seen.
    pub calls: Vec<(String, Map<String, Value>)>,
    /// The reference's facts seen and texts placed ([`Landmarks`]): part of the state (a path
    /// that read the event's time is not the path that did not).
    pub landmarks: Landmarks,
}

/// What `trajectory` learnt: [`dynamic_candidates`], then the reference's items whose facts it
/// has seen.
pub fn learnt(trajectory: &Trajectory, goal: &GoalWords) -> Learnt {
    learnt_after(trajectory, goal, Landmarks::default(), 0)
}

/// [`learnt`] for a path known to have achieved the landmarks `earlier` on its screens before
/// `screens_from` ([`ReferenceTexts::landmarks_after`]): the same, reading fewer screens.
pub fn learnt_after(
    trajectory: &Trajectory,
    goal: &GoalWords,
    earlier: Landmarks,
    screens_from: usize,
) -> Learnt {
    let mut texts = dynamic_candidates(trajectory, goal);
    let reference = &goal.reference;
    let landmarks = reference.landmarks_after(trajectory, earlier, screens_from);
    let facts_seen = landmarks.facts;
    let open = |needs: u64| needs & !facts_seen == 0;
    for (c, needs) in &reference.typed {
        if !open(*needs) || goal.candidates.iter().any(|g| g.text == c.text) {
            continue;
        }
        // A text learnt otherwise (a tool's result) is named by the reference's field too. Not
        // `push`: a reference's text may be long (a note's lines), and it is the task's own.
        match texts.iter_mut().find(|t| t.text == c.text) {
            Some(t) => add_words(&mut t.key, &c.key),
            None => texts.push(c.clone()),
        }
    }
    Learnt {
        texts,
        appended: reference.appended.iter().filter(|(_, n)| open(*n)).map(|(c, _)| c.clone()).collect(),
        answers: reference.answers.iter().filter(|(_, n)| open(*n)).map(|(a, _)| a.clone()).collect(),
        questions: reference.questions.iter().filter(|(_, n)| open(*n)).map(|(q, _)| q.clone()).collect(),
        calls: reference
            .calls
            .iter()
            .filter(|(_, _, n)| open(*n))
            .map(|(t, a, _)| (t.clone(), a.clone()))
            .collect(),
        landmarks,
    }
}

/// Text the episode was told: from each `ask_user` reply and MCP result, its quoted strings,
/// its words with digits, and the whole reply when it is short (the first part of
/// [`dynamic_candidates`]).
pub fn told_candidates(trajectory: &Trajectory) -> Vec<TextCandidate> {
    let mut out = Vec::new();
    let replies = trajectory
        .exchanges
        .iter()
        .filter(|x| x.fact.is_some())
        .map(|x| (&x.answer, &x.question))
        .chain(trajectory.mcp_calls.iter().filter(|c| !c.is_error).map(|c| (&c.result, &c.tool)));
    for (reply, about) in replies {
        let key = words(about);
        // A JSON result (a tool's): its leaf values, each named by its field.
        if let Ok(json) = serde_json::from_str::<Value>(reply.trim_start_matches("error: "))
            && (json.is_object() || json.is_array())
        {
            json_leaves(&json, &key, &mut out);
            continue;
        }
        for q in quoted(reply) {
            push(&mut out, q, key.clone());
        }
        for w in reply.split_whitespace() {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric());
            if w.chars().any(|c| c.is_ascii_digit()) {
                push(&mut out, w.to_string(), key.clone());
            }
        }
        if reply.chars().count() <= 40 {
            push(&mut out, reply.trim_end_matches('.').to_string(), key.clone());
        }
    }
    out
}

/// The scalar values of a JSON document (strings of at most 200 characters, numbers), each
/// named by its field's words and `key`, in document order.
fn json_leaves(value: &Value, key: &[String], out: &mut Vec<TextCandidate>) {
    let mut stack: Vec<(&Value, Vec<String>)> = vec![(value, key.to_vec())];
    while let Some((v, k)) = stack.pop() {
        match v {
            Value::Object(fields) => {
                for (name, child) in fields.iter().rev() {
                    let mut k = k.clone();
                    k.extend(name_words(name));
                    stack.push((child, k));
                }
            }
            Value::Array(items) => stack.extend(items.iter().rev().map(|i| (i, k.clone()))),
            Value::String(s) => push(out, s.clone(), k),
            Value::Number(n) => push(out, n.to_string(), k),
            _ => {}
        }
    }
}

/// Screen texts offered for typing at most (the most relevant first).
pub const MAX_SCREEN_CANDIDATES: usize = 6;

/// Texts read on `screens` (earlier screens on the path) that an agent could type elsewhere,
/// from texts next to the goal's words (a small row, card or labelled value whose texts share a
/// word with the goal): the text when it is short and has digits (a phone number, a code), its
/// words with digits or `@`, and the capitalised words (a name) of a text that itself has a goal
/// word. Each is named by the words of the texts around it (the label), to match a field's id or
/// hint.
/// Ranked: texts with digits first, then the screens' order, at most
/// [`MAX_SCREEN_CANDIDATES`].
pub fn screen_candidates(screens: &[phonebench_env::ScreenRecord], goal: &GoalWords) -> Vec<TextCandidate> {
    let mut with_digits = Vec::new();
    let mut other = Vec::new();
    let mut visited: BTreeSet<&str> = BTreeSet::new();
    for screen in screens {
        let tree = &screen.tree;
        for (id, node) in tree.iter() {
            let kind = tree.window(tree.window_of(id)).kind;
            if matches!(
                kind,
                phonebench_uitree::WindowKind::InputMethod | phonebench_uitree::WindowKind::SystemUi
            ) || node.text.trim().is_empty()
                || node.editable.unwrap_or(false)
                || !visited.insert(node.text.as_str())
            {
                continue;
            }
            // The texts around it: its parent's subtree (a row, a card, a label and its value),
            // when that is small; else the text alone.
            let around = tree.parent(id).filter(|&p| tree.dfs(p).len() <= 12).unwrap_or(id);
            let mut context: Vec<String> = Vec::new();
            for n in tree.dfs(around).take(40) {
                context.extend(words(&tree.node(n).text));
                context.extend(words(&tree.node(n).content_desc));
            }
            if !goal.matches(&context) {
                continue;
            }
            let text = node.text.trim();
            let own = words(text);
            let key: Vec<String> = context.iter().filter(|w| !own.contains(w)).cloned().collect();
            let mut add = |t: &str, digits: bool| {
                let t = t.trim().trim_end_matches(['.', '!', '?', ',', ';', ':']);
                if t.chars().count() < 2 || goal.words.contains(&t.to_lowercase()) {
                    return;
                }
                let c = TextCandidate { text: t.to_string(), key: key.clone() };
                let list = if digits { &mut with_digits } else { &mut other };
                if !list.iter().any(|x: &TextCandidate| x.text == c.text) {
                    list.push(c);
                }
            };
            let digits = |t: &str| t.chars().filter(char::is_ascii_digit).count() >= 3;
            // A number, a code, a phone number: the whole text when short, and its words.
            if digits(text) && text.chars().count() <= 40 {
                add(text, true);
            }
            for w in text.split_whitespace() {
                let w = w.trim_matches(|c: char| !c.is_alphanumeric());
                if digits(w) || w.contains('@') {
                    add(w, true);
                }
            }
            // A name in a text that itself has a goal word ("This is Riley, the dog walker").
            if goal.matches(&own) {
                for w in text.split_whitespace().skip(1).take(30) {
                    let w = w.trim_matches(|c: char| !c.is_alphanumeric());
                    if w.chars().count() >= 3
                        && w.chars().next().is_some_and(char::is_uppercase)
                        && w.chars().skip(1).all(char::is_lowercase)
                        && !STOP_WORDS.contains(&w.to_lowercase().as_str())
                    {
                        add(w, false);
                    }
                }
            }
        }
    }
    with_digits.extend(other);
    with_digits.truncate(MAX_SCREEN_CANDIDATES);
    with_digits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(durations_ms("Start a timer for 2 minutes."), vec![120_000]);
        assert_eq!(durations_ms("a 1 hour 30 minutes drive"), vec![3_600_000, 1_800_000, 5_400_000]);
        assert_eq!(durations_ms("a 10-minute break, then 90 s"), vec![600_000, 90_000, 690_000]);
        assert_eq!(durations_ms("call 555 0182 at 7:30"), Vec::<u64>::new());
        // A kind of clock, a length rounding to nothing: no wait.
        assert_eq!(durations_ms("Switch to the 24-hour format, 0.0001 s"), Vec::<u64>::new());
    }

    #[test]
    fn times_give_their_hour_and_minute() {
        let parts = |text: &str| -> Vec<(String, String)> {
            time_parts(text).into_iter().map(|c| (c.text, c.key.concat())).collect()
        };
        let p = |hours: &[&str], m: &str| -> Vec<(String, String)> {
            let mut out: Vec<_> = hours.iter().map(|h| (h.to_string(), "hour".to_string())).collect();
            out.push((m.to_string(), "minute".to_string()));
            out
        };
        assert_eq!(parts("from 08:45 to 9:15."), [p(&["08"], "45"), p(&["09"], "15")].concat());
        assert_eq!(parts("wake me at 3:55 AM"), p(&["03"], "55"));
        // An afternoon hour on both clocks, the 24-hour one first.
        assert_eq!(parts("dinner at 8:05 p.m. sharp"), p(&["20", "08"], "05"));
        assert_eq!(
            parts("\"7:30 PM\", or 7:05pm—"),
            [p(&["19", "07"], "30"), vec![("05".into(), "minute".into())]].concat()
        );
        assert_eq!(
            parts("at 12 am, or 12pm"),
            [p(&["00"], "00"), vec![("12".into(), "hour".into())]].concat()
        );
        assert_eq!(parts("at 16:30, 10 AM"), [p(&["16", "04"], "30"), p(&["10"], "00")].concat());
        assert_eq!(parts("open 10:00-17:30"), [p(&["10"], "00"), p(&["17", "05"], "30")].concat());
        // Counts, phone numbers, dates, clock readings with seconds and impossible times are no
        // time of day; text around digits that are not ASCII is no trouble.
        assert_eq!(
            parts("buy 12 eggs, call (206) 555-0181 on 2026-03-05, 25:10, 13 pm, 1:30:00, 3:1, ٣:٣٠ 🙂"),
            vec![]
        );
    }

    #[test]
    fn quotes_numbers_and_words() {
        assert_eq!(quoted(r#"Rename it to "Groceries" and 'Work'; don't"#), vec!["Groceries", "Work"]);
        assert_eq!(numbers("Set an alarm at 7:30, call (206) 555-0181."), vec!["7:30", "206", "555-0181"]);
        assert_eq!(words("Add the new contact: Nadia"), vec!["add", "new", "contact", "nadia"]);
        assert_eq!(names("What's the confirmation code for my flight to Denver?"), vec!["Denver"]);
        assert_eq!(
            names("Test the Settings search: search for Wi-Fi, open the Wi-Fi result. Then stop."),
            vec!["Settings", "Wi-Fi"]
        );
        assert_eq!(names("Check that Battery Saver can be reached"), vec!["Battery Saver"]);
        assert_eq!(names("Reply to Ingrid's book club email, I said"), vec!["Ingrid"]);
        assert_eq!(
            names("Farah Okafor sent me a link. Forward it to Ana Lima"),
            vec!["Farah Okafor", "Ana Lima"]
        );
    }
}
