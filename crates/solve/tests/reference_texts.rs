//! The reference's texts are offered only once the path has seen the hidden values in them
//! (`phonebench_solve::reference`): a code read in an email, a converted amount an MCP tool
//! answered; and the bits of what was seen carried from state to state give what reading the
//! whole path gives.
#![allow(clippy::unwrap_used)]

mod common;

use common::{centre, instance, root, step};
use phonebench_actions::Action;
use phonebench_env::{Episode, EpisodeOptions, TurnInput};
use phonebench_phone::Catalog;
use phonebench_solve::mcp::Tools;
use phonebench_solve::text::{GoalWords, learnt, learnt_after};

fn tap_text(episode: &mut Episode, text: &str) {
    let target = centre(episode, |n| n.text.contains(text));
    step(episode, Action::Tap { target });
}

fn offered(episode: &Episode, goal: &GoalWords, text: &str) -> bool {
    learnt(episode.trajectory(), goal).texts.iter().any(|c| c.text == text)
}

#[test]
fn a_message_carrying_a_code_is_offered_only_after_the_code_was_read() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let task = instance(&catalog, "crossapp.email_code_text");
    let code = task.params["code"].as_str().map_or_else(|| task.params["code"].to_string(), str::to_string);
    let message = format!("The Fabrikam code is {code}");
    let goal = GoalWords::of(&task);
    assert!(
        goal.reference.typed.iter().any(|(c, needs)| c.text == message && *needs != 0),
        "{:?}",
        goal.reference
    );
    assert!(goal.reference.facts.contains(&code), "{:?}", goal.reference.facts);
    let mut episode = Episode::start(&catalog, &task, EpisodeOptions::default()).unwrap();
    assert!(!offered(&episode, &goal, &message));
    step(&mut episode, Action::OpenApp { app: "email".into() });
    // Offered on the inbox exactly when a row there shows the code (a preview of the mail).
    let inbox_shows =
        episode.tree().iter().any(|(_, n)| n.text.split(|c: char| !c.is_alphanumeric()).any(|w| w == code));
    assert_eq!(offered(&episode, &goal, &message), inbox_shows);
    tap_text(&mut episode, "verification code");
    step(&mut episode, Action::OpenApp { app: "messages".into() });
    assert!(offered(&episode, &goal, &message), "{:?}", learnt(episode.trajectory(), &goal));
}

#[test]
fn a_converted_amount_is_offered_after_the_tool_answered_it() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let task = instance(&catalog, "mcp.convert_and_text");
    let tools = Tools::for_task(&task, &phonebench_mcp::McpConfig::default());
    let mut goal = GoalWords::of(&task);
    goal.reference = std::mem::take(&mut goal.reference).with_given(tools.told());
    let x = &task.params["x"];
    let sent = format!("{} {}", x["result"].as_str().unwrap(), x["to"].as_str().unwrap());
    let mut episode = Episode::start(&catalog, &task, EpisodeOptions::default()).unwrap();
    let before = learnt(episode.trajectory(), &goal);
    assert!(!before.texts.iter().any(|c| c.text == sent));
    // The reference's call needs nothing hidden: the goal gives its amount and currencies.
    let (tool, arguments) = before.calls.first().cloned().unwrap();
    let call = Action::McpCall { tool: tool.clone(), arguments: arguments.clone() };
    let mut turn = TurnInput::new(serde_json::to_string(&call).unwrap(), Ok(call));
    turn.mcp_reply = Some(tools.reply(&[], &tool, &arguments));
    episode.step_turn(turn).unwrap();
    assert!(learnt(episode.trajectory(), &goal).texts.iter().any(|c| c.text == sent));
}

#[test]
fn landmarks_carried_along_a_path_equal_reading_the_whole_path() {
    // The reference of a cross-app task, played step by step: after each step, the landmarks
    // carried from the step before (reading only the new screen) are those of the whole path.
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let task = instance(&catalog, "crossapp.calendar_to_email");
    let goal = GoalWords::of(&task);
    assert!(!goal.reference.facts.is_empty());
    let mut agent = phonebench_agents::ReferenceAgent::new(task.reference.clone());
    let mut episode = Episode::start(&catalog, &task, EpisodeOptions::default()).unwrap();
    let (mut carried, mut screens) = (Default::default(), 0usize);
    loop {
        let incremental = learnt_after(episode.trajectory(), &goal, carried, screens);
        assert_eq!(incremental, learnt(episode.trajectory(), &goal));
        carried = incremental.landmarks;
        screens = episode.trajectory().screens.len();
        let action = agent.decide(episode.tree());
        assert!(agent.failure.is_none(), "{:?}", agent.failure);
        if matches!(action, Action::Finish { .. }) {
            break;
        }
        step(&mut episode, action);
    }
    // By the end every fact was seen (the event's time and place) and every text placed.
    let all = |n: usize| if n == 0 { 0 } else { u64::MAX >> (64 - n) };
    assert_eq!(carried.facts, all(goal.reference.facts.len()), "{carried:?} {:?}", goal.reference);
    assert_eq!(carried.placed, all(goal.reference.typed.len()), "{carried:?} {:?}", goal.reference);
}

#[test]
fn a_goal_value_the_reference_types_into_a_short_named_field_is_named_by_it() {
    // `type #to "{{ c.display_name }}"`: the recipient is named `to`, a word too short for the
    // goal's words, so typing it into the To field costs what a matched text costs.
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let task = instance(&catalog, "email.forward_attachment");
    let recipient = task.params["c"]["display_name"].as_str().unwrap();
    let goal = GoalWords::of(&task);
    let candidate = goal.candidates.iter().find(|c| c.text == recipient).unwrap();
    assert!(candidate.key.iter().any(|k| k == "to"), "{candidate:?}");
}
