//! The names a goal gives (`Denver`) are typed into fields that find things, and only there:
//! what solves "What's the confirmation code for my flight to Denver?", whose goal has no
//! parameter or quoted text to type.
#![allow(clippy::unwrap_used)]

mod common;

use common::{centre, instance, root, step};
use phonebench_actions::Action;
use phonebench_env::{Episode, EpisodeOptions};
use phonebench_phone::Catalog;
use phonebench_solve::actions::{candidates, cost};
use phonebench_solve::mcp::Tools;
use phonebench_solve::text::GoalWords;
use phonebench_solve::{Budget, solve};

/// The typing actions offered on the episode's screen, as (text, field resource id, cost).
fn typing(
    episode: &Episode,
    task: &phonebench_tasks::TaskInstance,
    goal: &GoalWords,
) -> Vec<(String, String, i64)> {
    let tree = episode.tree().clone();
    let tools = Tools::for_task(task, &phonebench_mcp::McpConfig::default());
    let offered = candidates(
        &tree,
        episode.options().display,
        task,
        goal,
        &Default::default(),
        episode.trajectory(),
        &tools,
    );
    offered
        .into_iter()
        .filter_map(|c| match c.action {
            Action::Type {
                text, target: Some(phonebench_actions::Target::Point(p)), enter: false, ..
            } => {
                let hit = tree.hit_test(p.x, p.y).unwrap();
                Some((text, tree.node(hit).resource_id.clone(), c.cost))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_name_in_the_goal_is_typed_into_a_search_field_only() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let task = instance(&catalog, "messages.flight_code");
    let goal = GoalWords::of(&task);
    assert_eq!(goal.search_terms, vec!["Denver".to_string()]);
    assert!(goal.candidates.iter().all(|c| c.text != "Denver"), "not a general text: {:?}", goal.candidates);

    let mut episode = Episode::start(&catalog, &task, EpisodeOptions::default()).unwrap();
    let search = centre(&episode, |n| n.content_desc == "Search");
    step(&mut episode, Action::Tap { target: search });
    let offered = typing(&episode, &task, &goal);
    assert!(
        offered.iter().any(|(text, id, c)| text == "Denver"
            && id.ends_with("/search_text")
            && *c == cost::TYPE_MATCHED),
        "{offered:?}"
    );

    // A field that does not find things (a new message's text) is not offered the name.
    step(&mut episode, Action::Key { key: phonebench_actions::Key::Back });
    step(&mut episode, Action::Key { key: phonebench_actions::Key::Back });
    let start_chat = centre(&episode, |n| n.text == "Start chat");
    step(&mut episode, Action::Tap { target: start_chat });
    assert!(
        episode
            .tree()
            .iter()
            .any(|(_, n)| n.class.ends_with("EditText") && n.resource_id.ends_with("/recipient_text_view")),
        "the new conversation screen has its recipient field"
    );
    let offered = typing(&episode, &task, &goal);
    assert!(offered.iter().all(|(text, _, _)| text != "Denver"), "{offered:?}");
}

#[test]
fn the_flight_code_is_found_by_searching_for_the_goals_name() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let task = instance(&catalog, "messages.flight_code");
    let budget = Budget { max_expansions: 200, improve_expansions: 50, ..Budget::default() };
    let outcome = solve(&catalog, &task, Some(4), &budget).unwrap();
    assert!(outcome.solved, "{outcome:?}");
    assert!(
        outcome.solution.iter().any(|a| matches!(a, Action::Type { text, .. } if text == "Denver")),
        "{:?}",
        outcome.solution
    );
    assert!(
        matches!(outcome.solution.last(), Some(Action::Answer { text }) if text.contains("QX7RTL")),
        "{:?}",
        outcome.solution
    );
    assert!(outcome.solution.len() <= 4);
}
