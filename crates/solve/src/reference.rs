//! The texts of the task's reference — what it types, answers, asks and sends to MCP tools —
//! offered to the search once the path has seen every hidden value in them.
//!
//! A reference's texts are drawn from the task's parameters (`"{{ e.title }} is at {{ e.time }}
//! at {{ e.location }}."`), which is what the issue asks typed text to be drawn from. Many carry
//! values the goal does not give, which an agent learns by looking (the event's time, the code
//! in a mail), by asking (the user's PIN) or by calling a tool (the converted amount). A text
//! typed before its values were seen would be a path no agent could take, and a solution shorter
//! than any agent's. So each text *needs* its **facts**, the words of it that the goal does not
//! give and that carry information:
//!
//! - its words with digits (a time, an amount, a code, a date, a count);
//! - its words that are words of a hidden parameter value (the room, the place, a name read in
//!   a mail), or capitalised other than at a sentence's start (a name a tool answered);
//!
//! and is offered only on a path that has seen each of them: as a word of a text on one of the
//! path's screens (an app's window: the status bar, navigation bar and keyboard are not looked
//! at), of a reply of the simulated user, or of an MCP result. Numbers match by value (`412.5`
//! is seen in `€412.50`), and a number of one or two digits also as a part of a time shown (`08`
//! and `55` in `8:55 AM`, what a time picker takes). A word is a run of letters and digits,
//! with `:` `.` `-` `/` `'` `@` `_` kept between two of them (`19:00`, `555-0114`).
//!
//! What the words of a composed text say beyond its facts ("FYI, see the attachments.") is free:
//! an agent writes its own words, and the criteria check the facts. Only the texts are taken,
//! never where or when the reference uses them: the search still finds which screen, which field
//! and which order, and may find a shorter path than the reference. What the gate cannot tell:
//! whether a number was *counted* (a count is gated as a number seen, like any other), or where
//! a word was seen (on the right event, or another).

use phonebench_env::Trajectory;
use phonebench_tasks::{RefStep, SelectorTerm, TaskInstance};
use phonebench_uitree::{UiTree, WindowKind};
use serde_json::{Map, Value};

use std::collections::BTreeSet;

use phonebench_actions::{Action, Target};

use crate::text::{STOP_WORDS, TextCandidate, words};

/// The most facts a task's reference texts may need (a bit each in [`Learnt::facts_seen`]); a
/// text needing a fact beyond them is not offered.
pub const MAX_FACTS: usize = 64;

/// What a path has achieved of what the reference's texts need, as bits: the facts it has seen
/// ([`ReferenceTexts::facts`]), and the typed texts it has *placed* — held in a field named like
/// the one the reference types them into, or typed there with Enter (sent). Both only grow along
/// a path, so they are landmarks: the search counts those still pending as it counts failing
/// checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Landmarks {
    /// Facts seen, a bit per [`ReferenceTexts::facts`].
    pub facts: u64,
    /// Texts placed, a bit per [`ReferenceTexts::typed`], then per [`ReferenceTexts::appended`].
    pub placed: u64,
}

impl Landmarks {
    /// How many landmarks are achieved.
    pub fn count(&self) -> i64 {
        i64::from(self.facts.count_ones() + self.placed.count_ones())
    }
}

/// Words of a field's resource id that say it is a field, not what it is for.
const FIELD_WORDS: &[&str] = &["text", "view", "edit", "input", "field", "box", "et", "txt", "value"];

/// What the reference offers, each item with the facts it needs (a bit set over
/// [`ReferenceTexts::facts`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReferenceTexts {
    /// The hidden values some item needs, lower-case, in the order first needed.
    pub facts: Vec<String>,
    /// Texts typed into a field cleared first (named by the words of the field the reference
    /// types them into).
    pub typed: Vec<(TextCandidate, u64)>,
    /// Texts typed after a field's text (the reference's `append`: the end of a draft).
    pub appended: Vec<(TextCandidate, u64)>,
    /// Answers given.
    pub answers: Vec<(String, u64)>,
    /// Questions asked of the simulated user.
    pub questions: Vec<(String, u64)>,
    /// MCP calls: the tool's exposed name and its arguments.
    pub calls: Vec<(String, Map<String, Value>, u64)>,
    /// Texts an agent is given, read as if on every path's first screen: the goal (a fact is
    /// a word the goal does not give, but the goal may give it in another form: `March 28` for
    /// `2026-03-28`, `pounds` for `GBP`) and the MCP tools' descriptions and argument schemas
    /// ([`ReferenceTexts::with_given`]).
    pub given: Vec<String>,
}

/// The text fields of `tree` an app shows (not the keyboard's, not the status bar's): where the
/// reference's texts are typed.
fn app_fields(tree: &UiTree) -> impl Iterator<Item = phonebench_uitree::NodeId> + '_ {
    tree.iter()
        .filter(|(id, node)| {
            crate::actions::is_editable(node)
                && !matches!(
                    tree.window(tree.window_of(*id)).kind,
                    WindowKind::InputMethod | WindowKind::SystemUi
                )
        })
        .map(|(id, _)| id)
}

impl ReferenceTexts {
    /// The texts of `instance`'s (rendered) reference.
    pub fn of(instance: &TaskInstance) -> ReferenceTexts {
        let goal = words_of(&instance.goal);
        let hidden = hidden_words(instance, &goal);
        let mut out = ReferenceTexts { given: vec![instance.goal.clone()], ..ReferenceTexts::default() };
        let mut steps: Vec<&RefStep> = instance.reference.iter().collect();
        let mut i = 0;
        while let Some(step) = steps.get(i).copied() {
            i += 1;
            match step {
                RefStep::If { then, .. } => steps.push(then),
                RefStep::Type { target, text, clear, .. } => {
                    let mut key = Vec::new();
                    for term in &target.0 {
                        match term {
                            // The words a field's words are matched with (`crate::actions`),
                            // short ones too: `#to`, `#cc` name their fields.
                            SelectorTerm::Id(id) => key.extend(
                                crate::actions::id_words(id.rsplit('/').next().unwrap_or(""))
                                    .into_iter()
                                    .filter(|w| !FIELD_WORDS.contains(&w.as_str())),
                            ),
                            SelectorTerm::Text(t) | SelectorTerm::Contains(t) | SelectorTerm::Desc(t) => {
                                key.extend(words(t))
                            }
                        }
                    }
                    if let Some(needs) = out.needs(&hidden, &goal, &[text.as_str()]) {
                        // Appended text keeps its spaces (`" 1 pm in the canteen?"`).
                        let text = if *clear { text.trim().to_string() } else { text.clone() };
                        let list = if *clear { &mut out.typed } else { &mut out.appended };
                        if !text.trim().is_empty() && !list.iter().any(|(c, _)| c.text == text) {
                            list.push((TextCandidate { text, key }, needs));
                        }
                    }
                }
                RefStep::Answer { text } => {
                    if let Some(needs) = out.needs(&hidden, &goal, &[text.as_str()])
                        && !out.answers.iter().any(|(a, _)| a == text)
                    {
                        out.answers.push((text.clone(), needs));
                    }
                }
                RefStep::Ask { text } => {
                    if let Some(needs) = out.needs(&hidden, &goal, &[text.as_str()])
                        && !out.questions.iter().any(|(q, _)| q == text)
                    {
                        out.questions.push((text.clone(), needs));
                    }
                }
                RefStep::Mcp { tool, arguments } => {
                    let Ok(Value::Object(arguments)) = serde_json::from_str::<Value>(arguments) else {
                        continue;
                    };
                    let mut leaves = Vec::new();
                    json_strings(&Value::Object(arguments.clone()), &mut leaves);
                    let texts: Vec<&str> = leaves.iter().map(String::as_str).collect();
                    if let Some(needs) = out.needs(&hidden, &goal, &texts)
                        && !out.calls.iter().any(|(t, a, _)| t == tool && *a == arguments)
                    {
                        out.calls.push((tool.clone(), arguments, needs));
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The facts `texts` need, as bits (registering new ones); `None` when there are more than
    /// [`MAX_FACTS`] in all.
    fn needs(&mut self, hidden: &BTreeSet<String>, goal: &[Word], texts: &[&str]) -> Option<u64> {
        let mut mask = 0u64;
        for text in texts {
            for fact in facts_of(text, hidden, goal) {
                let index = match self.facts.iter().position(|f| *f == fact) {
                    Some(i) => i,
                    None if self.facts.len() < MAX_FACTS => {
                        self.facts.push(fact);
                        self.facts.len() - 1
                    }
                    None => return None,
                };
                mask |= 1 << index;
            }
        }
        Some(mask)
    }

    /// The same, with `given` read on every path too (what an agent is told besides the goal:
    /// the tools it may call, with their arguments' choices).
    pub fn with_given<'t>(mut self, given: impl Iterator<Item = &'t str>) -> ReferenceTexts {
        self.given.extend(given.map(str::to_string));
        self
    }

    /// Every fact some item needs, as bits.
    pub fn needed(&self) -> u64 {
        if self.facts.len() >= MAX_FACTS { u64::MAX } else { (1u64 << self.facts.len()) - 1 }
    }

    /// How many landmarks there are ([`Landmarks`]): the facts, and the typed texts (64 at most).
    pub fn landmark_count(&self) -> i64 {
        (self.facts.len().min(MAX_FACTS) + (self.typed.len() + self.appended.len()).min(64)) as i64
    }

    /// Whether there is nothing to offer.
    pub fn is_empty(&self) -> bool {
        self.typed.is_empty()
            && self.appended.is_empty()
            && self.answers.is_empty()
            && self.questions.is_empty()
            && self.calls.is_empty()
    }

    /// The facts `trajectory` has seen (its screens, the current one included; the user's
    /// replies; MCP results), as bits.
    pub fn seen(&self, trajectory: &Trajectory) -> u64 {
        self.seen_after(trajectory, 0, 0)
    }

    /// The landmarks `trajectory` achieved ([`Landmarks`]), given those `earlier` achieved on its
    /// screens before `screens_from` (0: read the whole path).
    pub fn landmarks_after(
        &self,
        trajectory: &Trajectory,
        earlier: Landmarks,
        screens_from: usize,
    ) -> Landmarks {
        let facts = self.seen_after(trajectory, earlier.facts, screens_from);
        let mut placed = earlier.placed;
        let items = self.typed.len() + self.appended.len();
        let all = if items >= 64 { u64::MAX } else { (1u64 << items) - 1 };
        for k in screens_from..trajectory.screens.len() {
            if placed == all {
                break;
            }
            placed |= self.placed_at(trajectory, k, facts);
        }
        Landmarks { facts, placed }
    }

    /// The texts placed on the path's screen `k` (after its `k`-th step): held by a field named
    /// for them there, or typed with Enter into such a field by that step.
    fn placed_at(&self, trajectory: &Trajectory, k: usize, facts: u64) -> u64 {
        let Some(screen) = trajectory.screens.get(k) else { return 0 };
        let tree = &screen.tree;
        let named = |tree: &UiTree, id: phonebench_uitree::NodeId, key: &[String]| {
            key.is_empty() || crate::actions::field_words(tree, id).iter().any(|w| key.contains(w))
        };
        // The field the step typed into with Enter, on the screen before it.
        let entered =
            k.checked_sub(1).and_then(|s| trajectory.steps.get(s)).and_then(|step| match &step.action {
                Some(Action::Type { text, target: Some(Target::Point(p)), enter: true, .. }) => {
                    let before = &trajectory.screens.get(k - 1)?.tree;
                    Some((text.as_str(), before, before.hit_test(p.x, p.y)?))
                }
                _ => None,
            });
        let items = self.typed.iter().map(|i| (i, false)).chain(self.appended.iter().map(|i| (i, true)));
        let mut placed = 0u64;
        for (bit, ((c, needs), append)) in items.enumerate().take(64) {
            if needs & !facts != 0 {
                continue;
            }
            let holds = |t: &str| {
                if append {
                    t.ends_with(c.text.as_str())
                } else {
                    t.trim().eq_ignore_ascii_case(c.text.trim())
                }
            };
            let in_field = app_fields(tree).any(|id| holds(&tree.node(id).text) && named(tree, id, &c.key));
            let sent = entered.is_some_and(|(text, before, id)| text == c.text && named(before, id, &c.key));
            if in_field || sent {
                placed |= 1 << bit;
            }
        }
        placed
    }

    /// How many typed texts not yet placed, whose facts were seen, have a field named for them on
    /// `tree` (the screen to type them on is reached).
    pub fn fields_ready(&self, tree: &UiTree, landmarks: Landmarks) -> i64 {
        let items = self.typed.iter().chain(self.appended.iter());
        let mut fields: Option<Vec<Vec<String>>> = None;
        let mut ready = 0;
        for (bit, (c, needs)) in items.enumerate().take(64) {
            if landmarks.placed & (1 << bit) != 0 || needs & !landmarks.facts != 0 || c.key.is_empty() {
                continue;
            }
            let fields = fields.get_or_insert_with(|| {
                app_fields(tree).map(|id| crate::actions::field_words(tree, id)).collect()
            });
            if fields.iter().any(|f| f.iter().any(|w| c.key.contains(w))) {
                ready += 1;
            }
        }
        ready
    }

    /// [`ReferenceTexts::seen`] for a path known to have seen `earlier` on its screens before
    /// `screens_from`: only the later screens are read (and the replies and results, which are
    /// few). The search carries each state's bits to its children this way.
    pub fn seen_after(&self, trajectory: &Trajectory, earlier: u64, screens_from: usize) -> u64 {
        let all = self.needed();
        let mut seen = earlier & all;
        if self.facts.is_empty() || seen == all {
            return seen;
        }
        let mut look = |text: &str| {
            if text.is_empty() {
                return;
            }
            let words = words_of(text);
            let mut times: Option<Vec<TextCandidate>> = None;
            for (i, fact) in self.facts.iter().enumerate() {
                if seen & (1 << i) != 0 {
                    continue;
                }
                let mut shown = words.iter().any(|w| same(&w.lower, fact))
                    || CURRENCY_SIGNS.iter().any(|(sign, code)| code == fact && text.contains(*sign))
                    || CURRENCY_NAMES
                        .iter()
                        .any(|(name, code)| code == fact && words.iter().any(|w| w.lower == *name))
                    || iso_date_shown(fact, &words);
                if !shown && fact.len() <= 2 && fact.chars().all(|c| c.is_ascii_digit()) && text.contains(':')
                {
                    let parts = times.get_or_insert_with(|| crate::text::time_parts(text));
                    shown = parts.iter().any(|p| same(&p.text, fact));
                }
                if shown {
                    seen |= 1 << i;
                }
            }
        };
        if screens_from == 0 {
            for t in &self.given {
                look(t);
            }
        }
        for x in trajectory.exchanges.iter().filter(|x| x.fact.is_some()) {
            look(&x.answer);
        }
        for c in trajectory.mcp_calls.iter().filter(|c| !c.is_error) {
            look(&c.result);
        }
        for screen in trajectory.screens.iter().skip(screens_from) {
            for_each_looked_text(&screen.tree, &mut look);
        }
        seen
    }
}

/// Calls `f` with each text and content description of `tree`'s app windows (not the status
/// bar, navigation bar or keyboard: every screen shows a clock there).
fn for_each_looked_text(tree: &UiTree, mut f: impl FnMut(&str)) {
    for (id, node) in tree.iter() {
        if matches!(tree.window(tree.window_of(id)).kind, WindowKind::InputMethod | WindowKind::SystemUi) {
            continue;
        }
        f(&node.text);
        f(&node.content_desc);
    }
}

/// One word of a text: lower-cased, with whether it was capitalised and whether it starts a
/// sentence (the text's first word, or one after `.` `!` `?` `:` or a line break).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The word, lower-case.
    pub lower: String,
    /// Its first character is upper-case.
    pub capitalised: bool,
    /// It starts the text or a sentence.
    pub initial: bool,
}

/// The words of `text`: runs of letters and digits, with `:` `.` `-` `/` `'` `’` `@` `_` kept
/// where they join two of them (`19:00`, `555-0114`, `a.b@c.org`); a possessive's `'s` cut.
pub fn words_of(text: &str) -> Vec<Word> {
    let joins = |c: char| matches!(c, ':' | '.' | '-' | '/' | '\'' | '’' | '@' | '_');
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut initial = true;
    while i < chars.len() {
        if !chars[i].is_alphanumeric() {
            if matches!(chars[i], '.' | '!' | '?' | ':' | '\n') {
                initial = true;
            }
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len()
            && (chars[i].is_alphanumeric()
                || (joins(chars[i]) && chars.get(i + 1).is_some_and(|c| c.is_alphanumeric())))
        {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect::<String>().to_lowercase();
        // A possessive is its word (`Ingrid's` is `Ingrid`).
        let lower = word.strip_suffix("'s").or_else(|| word.strip_suffix("’s")).unwrap_or(&word);
        let lower = calendar_word(lower).unwrap_or(lower).to_string();
        out.push(Word { capitalised: chars[start].is_uppercase(), lower, initial });
        initial = false;
    }
    out
}

/// Months and weekdays by their three letters (`march` and `mar` are one word, as a date is
/// read either way).
const CALENDAR_WORDS: &[&str] = &[
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec", "mon", "tue", "wed",
    "thu", "fri", "sat", "sun",
];

/// `word`'s three letters when it is a month's or weekday's name (`march`, `sept`, `tues`).
fn calendar_word(word: &str) -> Option<&'static str> {
    const FULL: &[&str] = &[
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    ];
    if word.len() < 3 || !word.is_ascii() {
        return None;
    }
    let short = &word[..3];
    let i = CALENDAR_WORDS.iter().position(|c| *c == short)?;
    (FULL[i].starts_with(word) || word == "sept" || word == "tues" || word == "thur" || word == "thurs")
        .then_some(CALENDAR_WORDS[i])
}

/// The words a currency sign stands for (`€412.50` shows `eur`).
const CURRENCY_SIGNS: &[(char, &str)] =
    &[('€', "eur"), ('£', "gbp"), ('$', "usd"), ('¥', "jpy"), ('₹', "inr")];

/// The code a currency's name stands for (`pounds` shows `gbp`).
const CURRENCY_NAMES: &[(&str, &str)] = &[
    ("euro", "eur"),
    ("euros", "eur"),
    ("pound", "gbp"),
    ("pounds", "gbp"),
    ("sterling", "gbp"),
    ("dollar", "usd"),
    ("dollars", "usd"),
    ("yen", "jpy"),
    ("franc", "chf"),
    ("francs", "chf"),
    ("rupee", "inr"),
    ("rupees", "inr"),
];

/// `word`'s value when it is a plain number (`412.50`, `08`).
fn number(word: &str) -> Option<f64> {
    let ok = !word.is_empty()
        && word.chars().next().is_some_and(|c| c.is_ascii_digit())
        && word.chars().all(|c| c.is_ascii_digit() || c == '.')
        && word.matches('.').count() <= 1;
    if ok { word.parse().ok() } else { None }
}

/// Whether `word` (a word of a looked-at text, [`words_of`]) is `fact`: the same word, or the
/// same number.
fn same(word: &str, fact: &str) -> bool {
    word == fact || matches!((number(word), number(fact)), (Some(a), Some(b)) if a == b)
}

/// Whether `fact` is a date written `YYYY-MM-DD` whose month and day `words` give side by side
/// (`Mar 20`, `20 March`): the year is the phone's, and an agent writes the date as the tool
/// wants it.
fn iso_date_shown(fact: &str, words: &[Word]) -> bool {
    let parts: Vec<&str> = fact.split('-').collect();
    let [y, m, d] = parts[..] else { return false };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 || !fact.chars().all(|c| c.is_ascii_digit() || c == '-') {
        return false;
    }
    let (Ok(m), Ok(d)) = (m.parse::<usize>(), d.parse::<u32>()) else { return false };
    let Some(month) = m.checked_sub(1).and_then(|i| CALENDAR_WORDS.get(i)).filter(|_| m <= 12) else {
        return false;
    };
    let day = |w: &Word| w.lower.parse::<u32>().ok() == Some(d);
    words.windows(2).any(|p| (p[0].lower == *month && day(&p[1])) || (day(&p[0]) && p[1].lower == *month))
}

/// Whether `text` shows `fact` ([`words_of`] each, numbers by value; a number of one or two
/// digits also as the hour or minute of a time the text gives).
pub fn shows(text: &str, fact: &str) -> bool {
    let one =
        ReferenceTexts { facts: vec![fact.to_string()], given: vec![text.to_string()], ..Default::default() };
    one.seen(&Trajectory::default()) != 0
}

/// The words of the task's parameter values that the goal does not give (the goal's own words
/// left out), lower-case. A long value (more than four words: a composed reply, a note's body)
/// gives only its words with digits and its capitalised words not at a sentence's start: its
/// other words are the wording, not what was learnt.
fn hidden_words(instance: &TaskInstance, goal: &[Word]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut add = |v: &Value| {
        let text = match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            _ => return,
        };
        let words = words_of(&text);
        let long = words.len() > 4;
        for w in words {
            let informative = w.lower.chars().any(|c| c.is_ascii_digit())
                || if long {
                    w.capitalised && !w.initial && w.lower.chars().count() >= 2
                } else {
                    w.lower.chars().count() >= 3 && !STOP_WORDS.contains(&w.lower.as_str())
                };
            if informative && !goal.iter().any(|g| same(&g.lower, &w.lower)) {
                out.insert(w.lower);
            }
        }
    };
    for value in instance.params.values() {
        match value {
            Value::Object(fields) => fields.values().for_each(&mut add),
            v => add(v),
        }
    }
    out
}

/// The facts of `text`, in order, each once: its words the goal does not give that have a
/// digit, or are words of hidden parameter values (`hidden`), or are capitalised other than at a
/// sentence's start.
fn facts_of(text: &str, hidden: &BTreeSet<String>, goal: &[Word]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in words_of(text) {
        let informative = w.lower.chars().any(|c| c.is_ascii_digit())
            || hidden.contains(&w.lower)
            || (w.capitalised && !w.initial && w.lower.chars().count() >= 2);
        if informative && !goal.iter().any(|g| same(&g.lower, &w.lower)) && !out.contains(&w.lower) {
            out.push(w.lower);
        }
    }
    out
}

/// The strings and numbers of a JSON document, as text.
fn json_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(fields) => fields.values().for_each(|v| json_strings(v, out)),
        Value::Array(items) => items.iter().for_each(|v| json_strings(v, out)),
        Value::String(s) => out.push(s.clone()),
        Value::Number(n) => out.push(n.to_string()),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(text: &str, hidden: &[&str], goal: &str) -> Vec<String> {
        let goal = words_of(goal);
        let hidden = hidden.iter().map(|h| h.to_string()).collect();
        facts_of(text, &hidden, &goal)
    }

    #[test]
    fn a_fact_is_a_whole_word_numbers_by_value_and_a_times_parts() {
        assert!(shows("Book club · 19:00 – 20:00", "19:00"));
        assert!(!shows("19:00 – 20:00", "9:00"));
        assert!(shows("Ingrid's place", "ingrid"));
        assert!(shows("Amount due: €412.50", "412.5"));
        assert!(!shows("Amount due: €412.55", "412.5"));
        // The hour and the minute of a time shown, as a picker takes them; not any digit.
        assert!(shows("Dentist at 8:55 AM", "08"));
        assert!(shows("Dentist at 8:55 AM", "55"));
        assert!(shows("Dentist at 8:05 PM", "20"));
        assert!(!shows("13:45", "3"));
        assert!(!shows("call 555-0114", "55"));
        assert!(shows("4 of us", "4"));
        // A currency by its sign, a date by its month and day, months by their three letters.
        assert!(shows("Invoice total €412.50", "eur"));
        assert!(shows("Fri, Mar 20 · Lisbon", "2026-03-20"));
        assert!(shows("20 March 2026", "2026-03-20"));
        assert!(!shows("Mar 21", "2026-03-20"));
        assert!(shows("2 March", "mar"));
        assert!(shows("the total in British pounds", "gbp"));
        assert!(!shows("14 of us", "4"));
    }

    #[test]
    fn words_keep_joiners_between_letters_and_digits() {
        let w: Vec<String> = words_of("Call (206) 555-0114, at 19:00. Ingrid's — a.b@c.org!")
            .into_iter()
            .map(|w| w.lower)
            .collect();
        assert_eq!(w, ["call", "206", "555-0114", "at", "19:00", "ingrid", "a.b@c.org"]);
        let initial: Vec<bool> = words_of("Hi Lucia. Thanks").into_iter().map(|w| w.initial).collect();
        assert_eq!(initial, [true, false, true]);
    }

    #[test]
    fn facts_are_words_the_goal_does_not_give() {
        let goal = "Email Ingrid Mensah the time and the place of our \"Book club\" (subject: Book club).";
        // The place's words are a hidden value's; the time has digits; the rest is the goal's.
        assert_eq!(facts("Book club is at 19:00 at Ingrid's place.", &["place"], goal), ["19:00"]);
        assert_eq!(
            facts("Book club is at 19:00 at the cafe Lumen.", &["cafe", "lumen"], goal),
            ["19:00", "cafe", "lumen"]
        );
        // A converted amount no parameter holds; the currency the goal gives is free.
        assert_eq!(facts("That is 448.37 USD for me.", &[], "Convert 400 EUR to USD"), ["448.37"]);
        // A name a tool answered, capitalised mid-sentence.
        assert_eq!(facts("How about Golden Wok? It is near.", &[], "Find dinner"), ["golden", "wok"]);
        // Composed words alone need nothing.
        assert!(facts("FYI, see the attachments.", &["ingrid"], goal).is_empty());
    }
}
