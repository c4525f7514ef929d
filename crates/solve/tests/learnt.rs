//! What the search learns on a path becomes text it can type: a code read in an email (a
//! cross-app task) and a built-in MCP tool's result (an MCP task), each offered to the fields of
//! a later screen; and a search reaches the same outcome with and without snapshots.
#![allow(clippy::unwrap_used)]

mod common;

use common::{centre, instance, root, step};
use phonebench_actions::Action;
use phonebench_env::{Episode, EpisodeOptions, TurnInput};
use phonebench_phone::Catalog;
use phonebench_solve::mcp::Tools;
use phonebench_solve::text::{GoalWords, dynamic_candidates};
use phonebench_solve::{Budget, solve};

/// Taps the first element whose text contains `text`.
fn tap_text(episode: &mut Episode, text: &str) {
    let target = centre(episode, |n| n.text.contains(text));
    step(episode, Action::Tap { target });
}

#[test]
fn a_code_read_in_an_email_is_a_candidate_on_later_screens() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let task = instance(&catalog, "crossapp.email_code_text");
    let code = task.params["code"].to_string();
    let goal = GoalWords::of(&task);
    // Hidden from the goal: not a candidate at the start.
    assert!(!goal.candidates.iter().any(|c| c.text == code));
    let mut episode = Episode::start(&catalog, &task, EpisodeOptions::default()).unwrap();
    step(&mut episode, Action::OpenApp { app: "email".into() });
    assert!(!dynamic_candidates(episode.trajectory(), &goal).iter().any(|c| c.text == code));
    tap_text(&mut episode, "verification code");
    step(&mut episode, Action::OpenApp { app: "messages".into() });
    let learnt = dynamic_candidates(episode.trajectory(), &goal);
    assert!(learnt.iter().any(|c| c.text == code), "{code} not in {learnt:?}");
}

#[test]
fn a_builtin_tool_is_called_with_the_goals_values_and_its_result_is_learnt() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let task = instance(&catalog, "mcp.convert_and_text");
    let x = &task.params["x"];
    let tools = Tools::for_task(&task, &phonebench_mcp::McpConfig::default());
    assert!(tools.missing.is_empty());
    let goal = GoalWords::of(&task);
    let texts: Vec<_> = goal.candidates.iter().collect();
    let calls = tools.calls(&texts, &goal, &[]);
    let (call, named) = calls
        .iter()
        .find(|(a, _)| matches!(a, Action::McpCall { tool, .. } if tool == "finance_convert"))
        .unwrap();
    assert!(named, "the goal says convert");
    let Action::McpCall { tool, arguments } = call else { unreachable!() };
    assert_eq!(arguments["from"], x["from"]);
    assert_eq!(arguments["to"], x["to"]);
    // The result (a hidden parameter) comes back from the server, and is then a candidate.
    let result = x["result"].as_str().unwrap();
    assert!(!goal.candidates.iter().any(|c| c.text == result));
    let mut episode = Episode::start(&catalog, &task, EpisodeOptions::default()).unwrap();
    let mut turn = TurnInput::new(serde_json::to_string(call).unwrap(), Ok(call.clone()));
    turn.mcp_reply = Some(tools.reply(&[], tool, arguments));
    episode.step_turn(turn).unwrap();
    let learnt = dynamic_candidates(episode.trajectory(), &goal);
    assert!(learnt.iter().any(|c| c.text == result), "{result} not in {learnt:?}");
}

#[test]
fn snapshots_change_the_cost_never_the_outcome() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    // A task whose search goes several actions deep: `contacts.phone_lookup` is now searched to
    // the end in 21 states, where replaying stepped as often as restoring (21 and 21).
    let task = instance(&catalog, "contacts.edit_phone");
    let budget = Budget { max_expansions: 300, improve_expansions: 20, ..Budget::default() };
    let with = solve(&catalog, &task, Some(5), &budget).unwrap();
    let without = solve(&catalog, &task, Some(5), &Budget { snapshots: false, ..budget }).unwrap();
    assert!(with.solved, "{with:?}");
    assert_eq!(
        (&with.solution, with.expansions, with.first_solution_at, with.exhaustive),
        (&without.solution, without.expansions, without.first_solution_at, without.exhaustive)
    );
    // Replay steps through whole paths; snapshots step once per state.
    assert!(
        with.steps_replayed < without.steps_replayed,
        "{} vs {}",
        with.steps_replayed,
        without.steps_replayed
    );
}
