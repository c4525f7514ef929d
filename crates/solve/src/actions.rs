//! The action space: what the search may do on a screen, each with the cost that orders it.
//!
//! From the screen's elements: tap what is clickable, long-press what is long-clickable, scroll
//! scrollable containers up and down, type each text candidate into each editable field (with and
//! without Enter); and Back, `wait` (and a wait as long as each length of time the goal gives),
//! `open_app` for the task's apps not in front, and `ask_user`
//! (the goal as the question, once) when the task has a simulated user. Touches aim at the
//! element's centre, as the reference agent's do, and only where the touch would reach the
//! element (not under a dialog); two elements with one centre are one action. Keyboard keys are
//! left out (typing is one action), as are the navigation bar's Back / Home / Overview (Back is a
//! key; `open_app` reaches apps).

use std::collections::BTreeSet;

use phonebench_actions::{Action, Direction, FinishStatus, Key, Point, Target};
use phonebench_phone::Display;
use phonebench_tasks::TaskInstance;
use phonebench_uitree::{NodeId, UiTree, WindowKind};

use crate::Wants;
use crate::text::{GoalWords, Learnt, TextCandidate, words};

/// What a step costs the search: cheap for actions on elements that show the goal's words, or
/// that type a text whose name matches the field.
pub mod cost {
    /// Tap an element that shows a goal word.
    pub const TAP_RELEVANT: i64 = 2;
    /// Tap an element whose resource id (not its text) names a goal word.
    pub const TAP_NAMED: i64 = 4;
    /// Tap any other element.
    pub const TAP: i64 = 6;
    /// Long-press an element that shows a goal word.
    pub const LONG_PRESS_RELEVANT: i64 = 4;
    /// Long-press any other element.
    pub const LONG_PRESS: i64 = 9;
    /// Type a text whose name matches the field (`first` into `#first_name`).
    pub const TYPE_MATCHED: i64 = 2;
    /// Type a text the path learnt into a field whose id, hint or description has a goal word.
    pub const TYPE_LEARNT: i64 = 3;
    /// Type any other text.
    pub const TYPE: i64 = 5;
    /// Extra for pressing Enter after typing.
    pub const ENTER: i64 = 1;
    /// Scroll a container.
    pub const SCROLL: i64 = 5;
    /// Press Back.
    pub const BACK: i64 = 5;
    /// Let time pass.
    pub const WAIT: i64 = 7;
    /// Open one of the task's apps.
    pub const OPEN_APP: i64 = 2;
    /// Ask the simulated user.
    pub const ASK: i64 = 2;
    /// Call an MCP tool whose name has a goal word (`convert` for "convert it").
    pub const MCP_NAMED: i64 = 2;
    /// Call any other MCP tool.
    pub const MCP: i64 = 4;
}

/// Words of buttons that commit what a screen is for (generic UI words, the same for every task):
/// tapping them is as promising as tapping what the goal names.
pub const COMMIT_WORDS: &[&str] = &[
    "save", "done", "send", "add", "create", "apply", "confirm", "delete", "remove", "next", "continue",
    "yes", "allow", "submit", "search", "set", "start", "reply", "forward", "share", "edit", "new",
    "compose", "attach", "insert",
];

/// Words of elements that open more of an app (an overflow menu, a navigation drawer): tapped at
/// [`cost::TAP_NAMED`], between a goal word and any element. Generic UI words, like
/// [`COMMIT_WORDS`]: the Drafts folder behind `Open navigation drawer`, Delete behind `More
/// options`.
pub const HUB_WORDS: &[&str] = &["more", "options", "menu", "drawer", "navigation"];

/// Words naming a field that finds things (`Search contacts`, `#search_view`): any name or value
/// the goal gives is worth typing there, as much as into a field named like it.
pub const SEARCH_WORDS: &[&str] = &["search", "find", "filter", "query", "lookup"];

/// One action the search may take, with its cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The action.
    pub action: Action,
    /// Its cost ([`cost`]).
    pub cost: i64,
}

/// The words an element shows: its text and content description, and those of its subtree (a
/// list row's texts are its children's), at most 40 nodes.
fn element_words(tree: &UiTree, id: NodeId) -> Vec<String> {
    let mut out = Vec::new();
    for n in tree.dfs(id).take(40) {
        let node = tree.node(n);
        out.extend(words(&node.text));
        out.extend(words(&node.content_desc));
    }
    out
}

/// The words of a resource id (`compose_message_text`, `to`): [`words`], and its short words
/// too (`to`, `cc`), which name a field as well as long ones.
pub(crate) fn id_words(id: &str) -> Vec<String> {
    let mut out = words(id);
    for w in crate::text::name_words(id) {
        if w.chars().count() < 3 && w.chars().all(char::is_alphabetic) && !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

/// The words naming a field: its resource id, hint and content description.
pub(crate) fn field_words(tree: &UiTree, id: NodeId) -> Vec<String> {
    let node = tree.node(id);
    let mut out = id_words(node.resource_id.rsplit('/').next().unwrap_or(""));
    if let Some(hint) = &node.hint {
        out.extend(words(hint));
    }
    out.extend(words(&node.content_desc));
    out
}

/// Where a touch on `id` lands, if it reaches the element: its centre, on the screen, with the
/// topmost node there inside the element (or the element inside it).
fn touch_point(tree: &UiTree, id: NodeId, display: Display) -> Option<(i32, i32)> {
    let node = tree.node(id);
    if node.bounds.is_empty() || node.visible_to_user == Some(false) || !node.enabled {
        return None;
    }
    let (x, y) = node.bounds.center();
    if x < 0 || y < 0 || x >= display.width as i32 || y >= display.height as i32 {
        return None;
    }
    let hit = tree.hit_test(x, y)?;
    (tree.is_in_subtree(id, hit) || tree.is_in_subtree(hit, id)).then_some((x, y))
}

fn is_nav_button(tree: &UiTree, id: NodeId) -> bool {
    let node = tree.node(id);
    tree.window(tree.window_of(id)).kind == WindowKind::SystemUi
        && matches!(node.content_desc.as_str(), "Back" | "Home" | "Overview")
}

pub(crate) fn is_editable(node: &phonebench_uitree::Node) -> bool {
    node.editable.unwrap_or(false)
        || node.class.ends_with("EditText")
        || node.class.ends_with("AutoCompleteTextView")
}

/// Typing `text` into `target`, then with Enter pressed (one more [`cost::ENTER`]).
fn push_typing(out: &mut Vec<Candidate>, text: &str, target: Target, cost: i64) {
    for enter in [false, true] {
        out.push(Candidate {
            action: Action::Type { text: text.to_string(), target: Some(target.clone()), clear: true, enter },
            cost: cost + if enter { cost::ENTER } else { 0 },
        });
    }
}

/// The actions on this screen, in a fixed order (document order of the elements, then the
/// others), each once.
pub fn candidates(
    tree: &UiTree,
    display: Display,
    instance: &TaskInstance,
    goal: &GoalWords,
    learnt: &Learnt,
    so_far: &phonebench_env::Trajectory,
    tools: &crate::mcp::Tools,
) -> Vec<Candidate> {
    // `ask_user` once per path; no MCP call twice with the same arguments.
    let asked = !so_far.exchanges.is_empty();
    let made = &so_far.mcp_calls;
    let mut out: Vec<Candidate> = Vec::new();
    let mut points: BTreeSet<(u8, i32, i32)> = BTreeSet::new();
    let texts: Vec<&TextCandidate> = goal.candidates.iter().chain(learnt.texts.iter()).collect();
    // The hours and minutes of times the user told in a reply (the goal's are in `goal`), read
    // from the whole reply (`3:30 PM`: its words alone lose the PM). Not times a tool answered
    // (a place's opening hours) or a screen showed (every clock and list shows some): typed at
    // the cost of a matched text into an alarm's fields, screens' times took `clock.start_timer`'s
    // budget.
    let told_times: Vec<TextCandidate> = so_far
        .exchanges
        .iter()
        .filter(|x| x.fact.is_some())
        .flat_map(|x| crate::text::time_parts(&x.answer))
        .collect();
    // Words the user or a tool told (a song's name, a place): an element showing one is as
    // promising as one showing a goal word, since they answer what the goal left open.
    let told_words: BTreeSet<String> = crate::text::told_candidates(so_far)
        .iter()
        .flat_map(|c| words(&c.text))
        .filter(|w| w.chars().any(char::is_alphabetic))
        .collect();
    for (id, node) in tree.iter() {
        if tree.window(tree.window_of(id)).kind == WindowKind::InputMethod || is_nav_button(tree, id) {
            continue;
        }
        let editable = is_editable(node);
        if !(node.clickable || node.long_clickable || node.scrollable || editable) {
            continue;
        }
        let Some((x, y)) = touch_point(tree, id, display) else { continue };
        let target = || Target::Point(Point::new(x, y));
        let shown = element_words(tree, id);
        let relevant = goal.matches(&shown)
            || shown.iter().any(|w| COMMIT_WORDS.contains(&w.as_str()) || told_words.contains(w))
            // `OK` (a dialog's, a picker's) is too short to be a word.
            || node.text.trim().eq_ignore_ascii_case("ok")
            || goal.digit_key(&node.text)
            || goal.digit_key(&node.content_desc);
        // Named by a goal word only in its resource id (`#tab_timer`): between the two.
        // Also a way to more of the app (an overflow menu, a drawer): between the two as well.
        let named = !relevant
            && (goal.matches(&words(node.resource_id.rsplit('/').next().unwrap_or("")))
                || shown.iter().any(|w| HUB_WORDS.contains(&w.as_str())));
        if editable {
            if points.insert((3, x, y)) {
                let field = field_words(tree, id);
                // A value the path learnt (a reply, a tool result, an earlier screen) typed into
                // a field the goal talks about (`Text message` for "text them the amount").
                let field_in_goal = goal.matches(&field);
                let finds = field.iter().any(|w| SEARCH_WORDS.contains(&w.as_str()));
                for (i, t) in texts.iter().enumerate().filter(|(_, t)| t.text != node.text) {
                    let matched = finds || t.key.iter().any(|k| field.contains(k));
                    let learnt = i >= goal.candidates.len();
                    let base = if matched {
                        cost::TYPE_MATCHED
                    } else if learnt && field_in_goal {
                        cost::TYPE_LEARNT
                    } else {
                        cost::TYPE
                    };
                    push_typing(&mut out, &t.text, target(), base);
                }
                // A time's hour and minute, into the field named for each (a time picker's).
                let mut typed = BTreeSet::new();
                for part in goal.time_parts.iter().chain(&told_times) {
                    if part.text != node.text
                        && part.key.iter().any(|k| field.contains(k))
                        && typed.insert(&part.text)
                    {
                        push_typing(&mut out, &part.text, target(), cost::TYPE_MATCHED);
                    }
                }
                // The reference's text typed after the field's own (the end of a draft).
                for t in &learnt.appended {
                    let matched = t.key.iter().any(|k| field.contains(k));
                    for enter in [false, true] {
                        out.push(Candidate {
                            action: Action::Type {
                                text: t.text.clone(),
                                target: Some(target()),
                                clear: false,
                                enter,
                            },
                            cost: if matched { cost::TYPE_MATCHED } else { cost::TYPE }
                                + if enter { cost::ENTER } else { 0 },
                        });
                    }
                }
                if finds {
                    // A name the goal gives, searched for (`Denver`): what an agent types there.
                    for term in goal.search_terms.iter().filter(|t| **t != node.text) {
                        push_typing(&mut out, term, target(), cost::TYPE_MATCHED);
                    }
                }
            }
            continue;
        }
        if node.clickable && points.insert((0, x, y)) {
            out.push(Candidate {
                action: Action::Tap { target: target() },
                cost: if relevant {
                    cost::TAP_RELEVANT
                } else if named {
                    cost::TAP_NAMED
                } else {
                    cost::TAP
                },
            });
        }
        if node.long_clickable && points.insert((1, x, y)) {
            out.push(Candidate {
                action: Action::LongPress { target: target() },
                cost: if relevant { cost::LONG_PRESS_RELEVANT } else { cost::LONG_PRESS },
            });
        }
        if node.scrollable && points.insert((2, x, y)) {
            for direction in [Direction::Down, Direction::Up] {
                out.push(Candidate {
                    action: Action::Scroll { direction, target: Some(target()) },
                    cost: cost::SCROLL,
                });
            }
        }
    }
    out.push(Candidate { action: Action::Key { key: Key::Back }, cost: cost::BACK });
    out.push(Candidate { action: Action::Wait { ms: None }, cost: cost::WAIT });
    // As long as the goal says (a timer's length): the default wait is seconds.
    for &ms in &goal.durations_ms {
        out.push(Candidate { action: Action::Wait { ms: Some(ms) }, cost: cost::WAIT });
    }
    let front = tree.windows().iter().map(|w| tree.node(w.root).package.as_str()).collect::<Vec<_>>();
    for app in &instance.apps {
        // `open_app` brings an app to the front: offered for the task's apps not already there.
        let in_front = front.iter().any(|p| p.ends_with(&format!(".{app}")) || *p == app.as_str());
        if !in_front {
            out.push(Candidate { action: Action::OpenApp { app: app.clone() }, cost: cost::OPEN_APP });
        }
    }
    let first_call = out.len();
    for (action, named) in tools.calls(&texts, goal, made) {
        out.push(Candidate { action, cost: if named { cost::MCP_NAMED } else { cost::MCP } });
    }
    // The reference's calls whose values the path has seen, as a tool the goal names.
    for (tool, arguments) in &learnt.calls {
        let action = Action::McpCall { tool: tool.clone(), arguments: arguments.clone() };
        if tools.has(tool)
            && !made.iter().any(|c| c.tool == *tool && c.arguments == *arguments)
            && !out[first_call..].iter().any(|c| c.action == action)
        {
            out.push(Candidate { action, cost: cost::MCP_NAMED });
        }
    }
    if !instance.facts.is_empty() && !asked {
        out.push(Candidate { action: Action::AskUser { text: instance.goal.clone() }, cost: cost::ASK });
        // The reference's questions (one asked per path, like the goal).
        for question in learnt.questions.iter().filter(|q| **q != instance.goal) {
            out.push(Candidate { action: Action::AskUser { text: question.clone() }, cost: cost::ASK });
        }
    }
    out
}

/// The ways the episode may end on this screen that the criteria could accept: `finish`
/// (complete, or infeasible when a check wants it), and `answer` with each text on the screen
/// (and its parts, numbers and words with digits) and each text candidate. Nothing is guessed:
/// a count that no screen shows is out of reach.
pub fn endings(wants: &Wants, tree: &UiTree, goal: &GoalWords, learnt: &Learnt) -> Vec<Action> {
    let mut out = vec![Action::Finish { status: FinishStatus::Complete, reason: None }];
    if wants.infeasible {
        out.push(Action::Finish { status: FinishStatus::Infeasible, reason: None });
    }
    if !wants.answer {
        return out;
    }
    let mut answers: Vec<String> = Vec::new();
    let mut add = |s: &str| {
        let s = s.trim();
        if !s.is_empty() && s.chars().count() <= 300 && !answers.iter().any(|a| a == s) {
            answers.push(s.to_string());
        }
    };
    for (id, node) in tree.iter() {
        if tree.window(tree.window_of(id)).kind == WindowKind::InputMethod {
            continue;
        }
        for text in [&node.text, &node.content_desc] {
            add(text);
            // Its parts (`Size: 2.4 MB` → `2.4 MB`), its numbers and its words with digits.
            for part in text.split(['\n', ',', ':', ';', '·', '•', '|', '—']) {
                add(part);
            }
            for n in crate::text::numbers(text) {
                add(&n);
            }
            for w in text.split_whitespace() {
                let w = w.trim_matches(|c: char| !c.is_alphanumeric());
                if w.chars().any(|c| c.is_ascii_digit()) {
                    add(w);
                    let digits: String = w.chars().filter(|c| c.is_ascii_digit() || *c == '.').collect();
                    add(&digits);
                }
            }
        }
    }
    for t in goal.candidates.iter().chain(learnt.texts.iter()) {
        add(&t.text);
    }
    for a in &learnt.answers {
        add(a);
    }
    out.extend(answers.into_iter().map(|text| Action::Answer { text }));
    out
}
