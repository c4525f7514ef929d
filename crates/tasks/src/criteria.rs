//! The criteria language (`docs/criteria.md`): one tree of checks for every evaluator we speak —
//! SPHINX trajectory evaluators, UINavBench screen validators, MobileWorld state checks.
//!
//! This module is the data model and its TOML/JSON form; `phonebench-eval` gives it meaning over a
//! recorded trajectory. A criterion table has exactly one *kind* key (`all`, `element`, `state`,
//! …) and optional modifiers (`name`, `on`, `check`, …); anything else is an error naming the key.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One check, possibly built from others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawCriterion", into = "RawCriterion")]
pub struct Criterion {
    /// A label for reports (`name = "..."`); the kind and its key fields otherwise.
    pub name: Option<String>,
    /// A guard (`guard = true`, top level only): a "do no harm" check that gates success but
    /// counts neither way in the completion proportion (ACP), so that doing nothing, which keeps
    /// everything as it was, earns no progress (`docs/criteria.md`).
    pub guard: bool,
    /// What is checked.
    pub kind: CriterionKind,
}

/// Which screens (or actions) a screen or action check looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The last screen of the trajectory (the one the agent stopped on) / the last action.
    #[default]
    Last,
    /// Any screen / any action, the first that matches (in trajectory order).
    Any,
}

/// How a rule compares an attribute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// The whole value equals.
    Equals(String),
    /// The value contains this text (SPHINX `include`).
    Contains(String),
    /// The value matches this regular expression (Rust `regex` syntax, unanchored).
    Regex(String),
}

impl Op {
    /// The operand text.
    pub fn operand(&self) -> &str {
        match self {
            Op::Equals(s) | Op::Contains(s) | Op::Regex(s) => s,
        }
    }

    fn operand_mut(&mut self) -> &mut String {
        match self {
            Op::Equals(s) | Op::Contains(s) | Op::Regex(s) => s,
        }
    }
}

/// Attribute rules: every rule must hold. Order is kept (it is the order written).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Rules(pub Vec<(String, Op)>);

impl Rules {
    /// No rules at all (matches everything).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The rule on `attribute`, if any.
    pub fn get(&self, attribute: &str) -> Option<&Op> {
        self.0.iter().find(|(a, _)| a == attribute).map(|(_, op)| op)
    }
}

impl Serialize for Rules {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (attribute, op) in &self.0 {
            match op {
                Op::Equals(v) => map.serialize_entry(attribute, v)?,
                other => map.serialize_entry(attribute, other)?,
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Rules {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum RuleValue {
            Text(String),
            Integer(i64),
            Float(f64),
            Bool(bool),
            Op(Op),
        }
        let map: indexed::OrderedMap<RuleValue> = Deserialize::deserialize(deserializer)?;
        Ok(Rules(
            map.0
                .into_iter()
                .map(|(k, v)| {
                    let op = match v {
                        RuleValue::Text(s) => Op::Equals(s),
                        RuleValue::Integer(i) => Op::Equals(i.to_string()),
                        RuleValue::Float(f) => Op::Equals(f.to_string()),
                        RuleValue::Bool(b) => Op::Equals(b.to_string()),
                        RuleValue::Op(op) => op,
                    };
                    (k, op)
                })
                .collect(),
        ))
    }
}

/// A map that keeps its keys in document order (rules are reported in the order written).
mod indexed {
    use serde::Deserialize;
    use serde::de::{MapAccess, Visitor};
    use std::fmt;
    use std::marker::PhantomData;

    pub struct OrderedMap<V>(pub Vec<(String, V)>);

    impl<'de, V: Deserialize<'de>> Deserialize<'de> for OrderedMap<V> {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct V2<V>(PhantomData<V>);
            impl<'de, V: Deserialize<'de>> Visitor<'de> for V2<V> {
                type Value = OrderedMap<V>;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("a table of attribute = value rules")
                }
                fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
                    let mut out = Vec::new();
                    while let Some((k, v)) = access.next_entry::<String, V>()? {
                        out.push((k, v));
                    }
                    Ok(OrderedMap(out))
                }
            }
            deserializer.deserialize_map(V2(PhantomData))
        }
    }
}

/// A count constraint: `count = 2` (exactly) or `count = { min = 1, max = 3 }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CountRange {
    /// At least this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u64>,
    /// At most this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
}

impl CountRange {
    /// Whether `n` is within the range.
    pub fn contains(&self, n: u64) -> bool {
        self.min.is_none_or(|m| n >= m) && self.max.is_none_or(|m| n <= m)
    }

    /// At least one (the default for "was it done").
    pub fn at_least_one() -> CountRange {
        CountRange { min: Some(1), max: None }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum CountRepr {
    Exactly(u64),
    Range(CountRange),
}

fn de_count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<CountRange>, D::Error> {
    Ok(Option::<CountRepr>::deserialize(d)?.map(|c| match c {
        CountRepr::Exactly(n) => CountRange { min: Some(n), max: Some(n) },
        CountRepr::Range(r) => r,
    }))
}

/// What a check is.
#[derive(Debug, Clone, PartialEq)]
pub enum CriterionKind {
    /// Every child holds (SPHINX `present`; the top level of a task is an implicit `all`).
    All(Vec<Criterion>),
    /// At least one child holds.
    Any(Vec<Criterion>),
    /// The child does not hold.
    Not(Box<Criterion>),
    /// The children hold in order: each is searched from where the previous one matched
    /// (inclusive, so one step may satisfy several; SPHINX `sequential`).
    Sequence(Vec<Criterion>),
    /// The children hold one right after another: each within the next step of the previous
    /// match (SPHINX `consecutive`, windows of three trace entries).
    Consecutive(Vec<Criterion>),
    /// An element on a screen (SPHINX `stoppage` with `on = "last"`, `findelement` with `any`).
    Element(ElementCheck),
    /// Text shown on a screen: some node's text or content description contains it.
    Text(TextCheck),
    /// Two texts shown near each other (UINavBench text proximity).
    Near(NearCheck),
    /// A time or date shown by an element lies within a range (UINavBench time ranges).
    Time(TimeCheck),
    /// The app and/or screen in front.
    Screen(ScreenCheck),
    /// An action the agent took and the element it hit (SPHINX `findaction`, `lastaction`).
    Action(ActionCheck),
    /// An element on the screen where a matching action was taken (SPHINX `findelementbyaction`).
    ActionElement(ActionElementCheck),
    /// SQL over an app's final database.
    State(StateCheck),
    /// Rows added, removed or updated in a table between the start and the end of the episode.
    Changes(ChangesCheck),
    /// The agent's answer.
    Answer(AnswerCheck),
    /// App events emitted (MobileWorld callbacks).
    Event(EventCheck),
    /// How many times the agent asked the user.
    Asked(CountRange),
    /// MCP tools called.
    Mcp(McpCheck),
    /// How the agent ended the episode: `finish` complete or infeasible, with a reason.
    Finish(FinishCheck),
}

/// `finish = { status, reason }`: the agent ended the episode with `finish` of this status (an
/// infeasible task's right outcome), optionally giving a reason that satisfies a rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FinishCheck {
    /// The status the agent must have finished with.
    pub status: FinishWanted,
    /// A rule over the reason it gave (`{ contains = "no such channel" }`); absent: any reason,
    /// or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Op>,
}

/// The finish status a [`FinishCheck`] wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishWanted {
    /// The agent said the goal is reached.
    Complete,
    /// The agent said the goal cannot be reached.
    Infeasible,
}

/// `element = { ... }`: an element on a screen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElementCheck {
    /// Which screens.
    pub on: Scope,
    /// Rules that find the element (the first in BFS order that matches). `activity` in here gates
    /// which screens are searched.
    pub find: Rules,
    /// Rules then checked on the element found. Upstream semantics check only the first element
    /// found; any-match semantics look for an element that satisfies both.
    pub check: Rules,
}

/// `text = "..."`: text shown somewhere on a screen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextCheck {
    /// Which screens.
    pub on: Scope,
    /// The text (contained in a node's text or content description).
    pub text: String,
}

/// `near = { text, to, within }`: two texts close together on one screen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NearCheck {
    /// Which screens.
    #[serde(default)]
    pub on: Scope,
    /// The first text (contained in a node's text or content description).
    pub text: String,
    /// The other text.
    pub to: String,
    /// Maximum distance in pixels between the two nodes' boxes (0 = touching or overlapping).
    #[serde(default = "default_within")]
    pub within: u32,
}

fn default_within() -> u32 {
    200
}

/// `time = { element, from, to }`: an element's text read as a time or date, within a range.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeCheck {
    /// Which screens.
    #[serde(default)]
    pub on: Scope,
    /// The element whose text holds the time.
    pub element: Rules,
    /// Earliest accepted (inclusive): `HH:MM`, `YYYY-MM-DD` or `YYYY-MM-DD HH:MM`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Latest accepted (inclusive), same forms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

/// `screen = { app, screen }`: what is in front.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScreenCheck {
    /// Which screens.
    #[serde(default)]
    pub on: Scope,
    /// The app id (or package) in front.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// The screen (simulated apps: the screen name; real devices: the activity class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<String>,
}

/// `action = { ... }`: an action and the element it hit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionCheck {
    /// `last`: the last action before the agent stopped; `any`: the first action that matches.
    pub on: Scope,
    /// Rules that find the action. Action attributes: `action_type` (SPHINX names: click,
    /// longclick, input, swipe, back, enter, restart, none, stop), `type` (canonical kinds),
    /// `message` (typed text), `key`, `direction`, `app`; any other key is an attribute of the
    /// element at the action's point.
    pub find: Rules,
    /// Rules then checked on that action.
    pub check: Rules,
}

/// `action_element = { action, element, check }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionElementCheck {
    /// Rules that find the action (as in [`ActionCheck::find`]).
    pub action: Rules,
    /// Rules that find an element on the screen where it was taken.
    pub element: Rules,
    /// Rules checked on that element.
    #[serde(default)]
    pub check: Rules,
}

/// `state = { app, sql, ... }`: a query over an app's final database.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateCheck {
    /// The app id.
    pub app: String,
    /// A read-only query; `:name` parameters are bound from the task's parameters.
    pub sql: String,
    /// The first column of the first row equals this (numbers compare as numbers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equals: Option<serde_json::Value>,
    /// The rows, exactly and in order (each row a list of column values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<Vec<Vec<serde_json::Value>>>,
    /// How many rows. Without `equals`, `rows` or `count`, at least one row must come back.
    #[serde(default, deserialize_with = "de_count", skip_serializing_if = "Option::is_none")]
    pub count: Option<CountRange>,
}

/// `changes = { app, table, added, removed, updated, only }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangesCheck {
    /// The app id.
    pub app: String,
    /// The table compared (rows keyed by `rowid`).
    pub table: String,
    /// Rows added.
    #[serde(default, deserialize_with = "de_count", skip_serializing_if = "Option::is_none")]
    pub added: Option<CountRange>,
    /// Rows removed.
    #[serde(default, deserialize_with = "de_count", skip_serializing_if = "Option::is_none")]
    pub removed: Option<CountRange>,
    /// Rows whose values changed.
    #[serde(default, deserialize_with = "de_count", skip_serializing_if = "Option::is_none")]
    pub updated: Option<CountRange>,
    /// Nothing changed in any other table of the app.
    #[serde(default)]
    pub only: bool,
}

/// `answer = { ... }`: how the agent's answer is compared (exactly one form).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum AnswerCheck {
    /// Byte for byte (after trimming surrounding whitespace).
    Exact(String),
    /// Equal after case folding, dropping punctuation and collapsing whitespace.
    Normalized(String),
    /// Contains this text after normalizing both.
    Contains(String),
    /// Matches this regular expression (unanchored).
    Regex(String),
    /// The first number in the answer is within `tolerance` of `value`.
    Number {
        /// The expected number.
        value: f64,
        /// Allowed absolute difference.
        #[serde(default)]
        tolerance: f64,
    },
    /// The answer, split at commas, semicolons, newlines and " and ", is this set (normalized).
    Items(Vec<String>),
}

/// `event = { app, name, data, count }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventCheck {
    /// The app that emitted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// The event name.
    pub name: String,
    /// Rules over the event's data fields (values compared as text).
    #[serde(default)]
    pub data: Rules,
    /// How many matching events (default: at least one).
    #[serde(default, deserialize_with = "de_count", skip_serializing_if = "Option::is_none")]
    pub count: Option<CountRange>,
}

/// `mcp = { tool, arguments, result, ok, count }`: calls the agent made to MCP tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpCheck {
    /// The tool name (exposed, `server_tool`); any tool when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Rules over the call's arguments (each argument compared as text: strings as they are,
    /// other values as JSON; names are the argument names).
    #[serde(default, skip_serializing_if = "Rules::is_empty")]
    pub arguments: Rules,
    /// A rule over the result text the agent got (`{ contains = "130.43" }`): ties a task's
    /// expected values to what the server really answers, so validation catches a task whose
    /// expectation the server contradicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Op>,
    /// `true`: only calls that succeeded; `false`: only calls that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// How many calls (default: at least one).
    #[serde(default, deserialize_with = "de_count", skip_serializing_if = "Option::is_none")]
    pub count: Option<CountRange>,
}

/// A model-judged check (UINavBench's model judge): a model reads the goal, the answer and the
/// last screens and says pass or fail. Written as a top-level entry of a task's `criteria`,
/// `{ judge = { question = "...", screens = 2, images = true }, name = "..." }`; never part of the
/// deterministic score.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeCheck {
    /// A label for reports.
    #[serde(default)]
    pub name: Option<String>,
    /// What the judge should decide, beyond "was the goal accomplished" (a template over the
    /// task's parameters).
    #[serde(default)]
    pub question: Option<String>,
    /// How many of the last screens the judge reads (1 = the final screen).
    #[serde(default = "one")]
    pub screens: u32,
    /// Also send the final screenshot.
    #[serde(default)]
    pub images: bool,
}

fn one() -> u32 {
    1
}

/// The on-disk form: every key optional; [`TryFrom`] checks exactly one kind key is present.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCriterion {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    guard: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    on: Option<Scope>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    check: Option<Rules>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    all: Option<Vec<Criterion>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    any: Option<Vec<Criterion>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    not: Option<Box<Criterion>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sequence: Option<Vec<Criterion>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    consecutive: Option<Vec<Criterion>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    element: Option<Rules>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    near: Option<NearCheck>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    time: Option<TimeCheck>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    screen: Option<ScreenCheck>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    action: Option<Rules>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    action_element: Option<ActionElementCheck>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    state: Option<StateCheck>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    changes: Option<ChangesCheck>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    answer: Option<AnswerCheck>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    event: Option<EventCheck>,
    #[serde(default, deserialize_with = "de_count", skip_serializing_if = "Option::is_none")]
    asked: Option<CountRange>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mcp: Option<McpCheck>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    finish: Option<FinishCheck>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    judge: Option<serde_json::Value>,
}

const KIND_KEYS: &str = "all, any, not, sequence, consecutive, element, text, near, time, screen, action, \
                         action_element, state, changes, answer, event, asked, mcp, finish";

impl TryFrom<RawCriterion> for Criterion {
    type Error = String;

    fn try_from(raw: RawCriterion) -> Result<Criterion, String> {
        if raw.judge.is_some() {
            return Err(
                "`judge` (model-judged) criteria may only appear at the top level of a task's `criteria`: \
                        they are scored apart, by a model, and cannot be combined with deterministic checks"
                    .into(),
            );
        }
        let mut kinds: Vec<(&str, CriterionKind)> = Vec::new();
        let on = raw.on.unwrap_or_default();
        let mut check = raw.check;
        // A guard is a property of a whole top-level criterion; inside a combinator it would have
        // no meaning (the combinator's verdict is what counts), so it is refused, not ignored.
        let no_guard = |key: &str, v: &[Criterion]| {
            if v.iter().any(|c| c.guard) {
                Err(format!(
                    "`guard` marks a top-level criterion: it cannot stand inside `{key}` (mark the `{key}` itself)"
                ))
            } else {
                Ok(())
            }
        };
        let non_empty = |key: &str, v: Vec<Criterion>| {
            no_guard(key, &v)?;
            if v.is_empty() { Err(format!("`{key}` needs at least one criterion")) } else { Ok(v) }
        };
        if let Some(v) = raw.all {
            kinds.push(("all", CriterionKind::All(non_empty("all", v)?)));
        }
        if let Some(v) = raw.any {
            kinds.push(("any", CriterionKind::Any(non_empty("any", v)?)));
        }
        if let Some(v) = raw.not {
            no_guard("not", std::slice::from_ref(&v))?;
            kinds.push(("not", CriterionKind::Not(v)));
        }
        if let Some(v) = raw.sequence {
            kinds.push(("sequence", CriterionKind::Sequence(non_empty("sequence", v)?)));
        }
        if let Some(v) = raw.consecutive {
            kinds.push(("consecutive", CriterionKind::Consecutive(non_empty("consecutive", v)?)));
        }
        if let Some(find) = raw.element {
            if find.is_empty() && check.as_ref().is_none_or(Rules::is_empty) {
                return Err("`element` needs at least one attribute rule".into());
            }
            let check = check.take().unwrap_or_default();
            kinds.push(("element", CriterionKind::Element(ElementCheck { on, find, check })));
        }
        if let Some(text) = raw.text {
            kinds.push(("text", CriterionKind::Text(TextCheck { on, text })));
        }
        if let Some(v) = raw.near {
            kinds.push(("near", CriterionKind::Near(v)));
        }
        if let Some(v) = raw.time {
            if v.from.is_none() && v.to.is_none() {
                return Err("`time` needs `from`, `to` or both".into());
            }
            kinds.push(("time", CriterionKind::Time(v)));
        }
        if let Some(v) = raw.screen {
            if v.app.is_none() && v.screen.is_none() {
                return Err("`screen` needs `app`, `screen` or both".into());
            }
            kinds.push(("screen", CriterionKind::Screen(v)));
        }
        if let Some(find) = raw.action {
            let check = check.take().unwrap_or_default();
            kinds.push(("action", CriterionKind::Action(ActionCheck { on, find, check })));
        }
        if let Some(v) = raw.action_element {
            kinds.push(("action_element", CriterionKind::ActionElement(v)));
        }
        if let Some(v) = raw.state {
            kinds.push(("state", CriterionKind::State(v)));
        }
        if let Some(v) = raw.changes {
            if v.added.is_none() && v.removed.is_none() && v.updated.is_none() && !v.only {
                return Err("`changes` needs `added`, `removed`, `updated` or `only`".into());
            }
            kinds.push(("changes", CriterionKind::Changes(v)));
        }
        if let Some(v) = raw.answer {
            kinds.push(("answer", CriterionKind::Answer(v)));
        }
        if let Some(v) = raw.event {
            kinds.push(("event", CriterionKind::Event(v)));
        }
        if let Some(v) = raw.asked {
            kinds.push(("asked", CriterionKind::Asked(v)));
        }
        if let Some(v) = raw.mcp {
            kinds.push(("mcp", CriterionKind::Mcp(v)));
        }
        if let Some(v) = raw.finish {
            kinds.push(("finish", CriterionKind::Finish(v)));
        }
        if check.is_some() {
            return Err("`check` belongs with `element` or `action`".into());
        }
        // `on` beside the kind key only means something for element, text and action; the
        // others take it inside their own table. Silently ignoring it would check the wrong screens.
        if raw.on.is_some()
            && let Some((key, _)) = kinds.iter().find(|(k, _)| !matches!(*k, "element" | "text" | "action"))
        {
            return Err(format!("`on` does not apply to `{key}` here; write it inside the `{key}` table"));
        }
        match kinds.len() {
            0 => Err(format!("a criterion needs one of: {KIND_KEYS}")),
            1 => {
                let (_, kind) = kinds.remove(0);
                Ok(Criterion { name: raw.name, guard: raw.guard, kind })
            }
            _ => {
                let keys: Vec<&str> = kinds.iter().map(|(k, _)| *k).collect();
                Err(format!(
                    "a criterion has exactly one kind, this one has {}: split it or wrap them in `all = [...]`",
                    keys.join(", ")
                ))
            }
        }
    }
}

impl From<Criterion> for RawCriterion {
    fn from(c: Criterion) -> RawCriterion {
        let mut raw = RawCriterion { name: c.name, guard: c.guard, ..RawCriterion::default() };
        let scope = |on: Scope| if on == Scope::Last { None } else { Some(on) };
        let rules = |r: Rules| if r.is_empty() { None } else { Some(r) };
        match c.kind {
            CriterionKind::All(v) => raw.all = Some(v),
            CriterionKind::Any(v) => raw.any = Some(v),
            CriterionKind::Not(v) => raw.not = Some(v),
            CriterionKind::Sequence(v) => raw.sequence = Some(v),
            CriterionKind::Consecutive(v) => raw.consecutive = Some(v),
            CriterionKind::Element(e) => {
                raw.on = scope(e.on);
                raw.element = Some(e.find);
                raw.check = rules(e.check);
            }
            CriterionKind::Text(t) => {
                raw.on = scope(t.on);
                raw.text = Some(t.text);
            }
            CriterionKind::Near(v) => raw.near = Some(v),
            CriterionKind::Time(v) => raw.time = Some(v),
            CriterionKind::Screen(v) => raw.screen = Some(v),
            CriterionKind::Action(a) => {
                raw.on = scope(a.on);
                raw.action = Some(a.find);
                raw.check = rules(a.check);
            }
            CriterionKind::ActionElement(v) => raw.action_element = Some(v),
            CriterionKind::State(v) => raw.state = Some(v),
            CriterionKind::Changes(v) => raw.changes = Some(v),
            CriterionKind::Answer(v) => raw.answer = Some(v),
            CriterionKind::Event(v) => raw.event = Some(v),
            CriterionKind::Asked(v) => raw.asked = Some(v),
            CriterionKind::Mcp(v) => raw.mcp = Some(v),
            CriterionKind::Finish(v) => raw.finish = Some(v),
        }
        raw
    }
}

impl Criterion {
    /// A criterion without a label.
    pub fn new(kind: CriterionKind) -> Criterion {
        Criterion { name: None, guard: false, kind }
    }

    /// The children of a combinator (empty for leaves).
    pub fn children(&self) -> &[Criterion] {
        match &self.kind {
            CriterionKind::All(v)
            | CriterionKind::Any(v)
            | CriterionKind::Sequence(v)
            | CriterionKind::Consecutive(v) => v,
            CriterionKind::Not(c) => std::slice::from_ref(c),
            _ => &[],
        }
    }

    /// A short human label: the `name`, else the kind and its key operands.
    pub fn label(&self) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        let rules = |r: &Rules| {
            r.0.iter()
                .map(|(k, op)| match op {
                    Op::Equals(v) => format!("{k}={v:?}"),
                    Op::Contains(v) => format!("{k}~{v:?}"),
                    Op::Regex(v) => format!("{k}=/{v}/"),
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        match &self.kind {
            CriterionKind::All(v) => format!("all of {}", v.len()),
            CriterionKind::Any(v) => format!("any of {}", v.len()),
            CriterionKind::Not(c) => format!("not ({})", c.label()),
            CriterionKind::Sequence(v) => format!("sequence of {}", v.len()),
            CriterionKind::Consecutive(v) => format!("consecutive {}", v.len()),
            CriterionKind::Element(e) => {
                let check =
                    if e.check.is_empty() { String::new() } else { format!(" ⇒ {}", rules(&e.check)) };
                format!("element ({}) {}{}", scope_name(e.on), rules(&e.find), check)
            }
            CriterionKind::Text(t) => format!("text {:?}", t.text),
            CriterionKind::Near(n) => format!("{:?} near {:?}", n.text, n.to),
            CriterionKind::Time(t) => format!("time of {} in {:?}..{:?}", rules(&t.element), t.from, t.to),
            CriterionKind::Screen(s) => {
                format!("screen {}{}", s.app.as_deref().unwrap_or(""), s.screen.as_deref().unwrap_or(""))
            }
            CriterionKind::Action(a) => {
                let check =
                    if a.check.is_empty() { String::new() } else { format!(" ⇒ {}", rules(&a.check)) };
                format!("action ({}) {}{}", scope_name(a.on), rules(&a.find), check)
            }
            CriterionKind::ActionElement(a) => {
                format!("after {}: {} ⇒ {}", rules(&a.action), rules(&a.element), rules(&a.check))
            }
            CriterionKind::State(s) => format!("{}: {}", s.app, s.sql),
            CriterionKind::Changes(c) => format!("{}.{} changes", c.app, c.table),
            CriterionKind::Answer(a) => format!("answer {a:?}"),
            CriterionKind::Event(e) => format!("event {} {}", e.name, rules(&e.data)),
            CriterionKind::Asked(c) => format!("asked {:?}..{:?} times", c.min, c.max),
            CriterionKind::Mcp(m) => format!("MCP {}", m.tool.as_deref().unwrap_or("any tool")),
            CriterionKind::Finish(c) => format!("finish {:?}", c.status),
        }
    }

    /// Applies `f` to every string that may hold a template (goal parameters): rule operands,
    /// texts, expected answers and values, SQL is left alone (parameters are bound, never spliced).
    pub fn map_strings(&mut self, f: &mut dyn FnMut(&str) -> Result<String, String>) -> Result<(), String> {
        fn rules(r: &mut Rules, f: &mut dyn FnMut(&str) -> Result<String, String>) -> Result<(), String> {
            for (_, op) in &mut r.0 {
                let s = op.operand_mut();
                *s = f(s)?;
            }
            Ok(())
        }
        fn json(
            v: &mut serde_json::Value,
            f: &mut dyn FnMut(&str) -> Result<String, String>,
        ) -> Result<(), String> {
            match v {
                serde_json::Value::String(s) => *s = f(s)?,
                serde_json::Value::Array(a) => {
                    for x in a {
                        json(x, f)?;
                    }
                }
                _ => {}
            }
            Ok(())
        }
        if let Some(name) = &mut self.name {
            *name = f(name)?;
        }
        match &mut self.kind {
            CriterionKind::All(v)
            | CriterionKind::Any(v)
            | CriterionKind::Sequence(v)
            | CriterionKind::Consecutive(v) => {
                for c in v {
                    c.map_strings(f)?;
                }
            }
            CriterionKind::Not(c) => c.map_strings(f)?,
            CriterionKind::Element(e) => {
                rules(&mut e.find, f)?;
                rules(&mut e.check, f)?;
            }
            CriterionKind::Text(t) => t.text = f(&t.text)?,
            CriterionKind::Near(n) => {
                n.text = f(&n.text)?;
                n.to = f(&n.to)?;
            }
            CriterionKind::Time(t) => {
                rules(&mut t.element, f)?;
                if let Some(s) = &mut t.from {
                    *s = f(s)?;
                }
                if let Some(s) = &mut t.to {
                    *s = f(s)?;
                }
            }
            CriterionKind::Screen(_) => {}
            CriterionKind::Action(a) => {
                rules(&mut a.find, f)?;
                rules(&mut a.check, f)?;
            }
            CriterionKind::ActionElement(a) => {
                rules(&mut a.action, f)?;
                rules(&mut a.element, f)?;
                rules(&mut a.check, f)?;
            }
            CriterionKind::State(s) => {
                if let Some(v) = &mut s.equals {
                    json(v, f)?;
                }
                if let Some(rows) = &mut s.rows {
                    for row in rows {
                        for v in row {
                            json(v, f)?;
                        }
                    }
                }
            }
            CriterionKind::Mcp(m) => {
                for (_, op) in &mut m.arguments.0 {
                    *op.operand_mut() = f(op.operand())?;
                }
                if let Some(op) = &mut m.result {
                    *op.operand_mut() = f(op.operand())?;
                }
            }
            CriterionKind::Finish(c) => {
                if let Some(op) = &mut c.reason {
                    *op.operand_mut() = f(op.operand())?;
                }
            }
            CriterionKind::Changes(_) | CriterionKind::Asked(_) => {}
            CriterionKind::Answer(a) => match a {
                AnswerCheck::Exact(s)
                | AnswerCheck::Normalized(s)
                | AnswerCheck::Contains(s)
                | AnswerCheck::Regex(s) => *s = f(s)?,
                AnswerCheck::Number { .. } => {}
                AnswerCheck::Items(items) => {
                    for s in items {
                        *s = f(s)?;
                    }
                }
            },
            CriterionKind::Event(e) => rules(&mut e.data, f)?,
        }
        Ok(())
    }

    /// Checks what can be checked without a trajectory: regular expressions compile.
    pub fn check_static(&self) -> Result<(), String> {
        // A regex built from a template is checked once rendered (at instantiation).
        let regex = |s: &str| {
            if s.contains("{{") || s.contains("{%") {
                return Ok(());
            }
            regex::Regex::new(s).map(|_| ()).map_err(|e| format!("bad regex `{s}`: {e}"))
        };
        let rules = |r: &Rules| -> Result<(), String> {
            for (_, op) in &r.0 {
                if let Op::Regex(s) = op {
                    regex(s)?;
                }
            }
            Ok(())
        };
        match &self.kind {
            CriterionKind::Element(e) => {
                rules(&e.find)?;
                rules(&e.check)?;
            }
            CriterionKind::Action(a) => {
                rules(&a.find)?;
                rules(&a.check)?;
            }
            CriterionKind::ActionElement(a) => {
                rules(&a.action)?;
                rules(&a.element)?;
                rules(&a.check)?;
            }
            CriterionKind::Time(t) => rules(&t.element)?,
            CriterionKind::Event(e) => rules(&e.data)?,
            CriterionKind::Mcp(m) => {
                rules(&m.arguments)?;
                if let Some(Op::Regex(s)) = &m.result {
                    regex(s)?;
                }
            }
            CriterionKind::Answer(AnswerCheck::Regex(s)) => regex(s)?,
            CriterionKind::Finish(FinishCheck { reason: Some(Op::Regex(s)), .. }) => regex(s)?,
            _ => {}
        }
        for c in self.children() {
            c.check_static()?;
        }
        Ok(())
    }

    /// The `state` and `changes` checks in this criterion, itself included, in pre-order (the
    /// order [`crate::spec::TaskLines::criteria_sql`] gives their lines in).
    pub fn sql_leaves(&self) -> Vec<&Criterion> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(c) = stack.pop() {
            if matches!(c.kind, CriterionKind::State(_) | CriterionKind::Changes(_)) {
                out.push(c);
            }
            // Reversed, so that the first child is popped first.
            stack.extend(c.children().iter().rev());
        }
        out
    }

    /// Apps whose state this criterion reads (`state`, `changes`), in order of appearance.
    pub fn state_apps(&self, out: &mut Vec<String>) {
        match &self.kind {
            CriterionKind::State(s) if !out.contains(&s.app) => out.push(s.app.clone()),
            CriterionKind::Changes(c) if !out.contains(&c.app) => out.push(c.app.clone()),
            _ => {}
        }
        for c in self.children() {
            c.state_apps(out);
        }
    }
}

fn scope_name(on: Scope) -> &'static str {
    match on {
        Scope::Last => "last",
        Scope::Any => "any",
    }
}

/// Parameters are bound into state SQL under these names (see `docs/task-format.md`).
pub type SqlParams = BTreeMap<String, serde_json::Value>;
