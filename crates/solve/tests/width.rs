//! The width search's two measures on real screens: a state's progress (values of the goal that
//! are new to the phone, typed or stored; criteria passing) and its novelty (an atom never seen
//! at its progress in as few actions).
#![allow(clippy::unwrap_used)]

mod common;

use common::{centre, instance, root, step};
use phonebench_actions::Action;
use phonebench_env::{Episode, EpisodeOptions};
use phonebench_eval::{EvalContext, evaluate};
use phonebench_phone::Catalog;
use phonebench_solve::novelty::{Novelty, Progress, atoms, database_digests};
use phonebench_solve::text::GoalWords;
use phonebench_solve::{Budget, COMPLETE, SolveOutcome, solve};
use phonebench_tasks::TaskInstance;

fn type_into(episode: &mut Episode, id: &str, text: &str) {
    let target = centre(episode, |n| n.resource_id.ends_with(id));
    step(episode, Action::Type { text: text.into(), target: Some(target), clear: true, enter: false });
}

/// The progress of the episode's state, as the search measures it.
fn progress(measure: &mut Progress, task: &TaskInstance, goal: &GoalWords, episode: &Episode) -> i64 {
    let stopped = episode.stopped_with(&COMPLETE).unwrap();
    let verdict = evaluate(&task.criteria, &stopped, &EvalContext::for_task(task));
    measure.of(
        episode.tree(),
        &stopped,
        &database_digests(&stopped),
        &task.criteria,
        &verdict,
        goal.candidates.iter(),
    )
}

#[test]
fn progress_counts_new_values_typed_or_stored_not_names_the_phone_already_holds() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let task = instance(&catalog, "contacts.add_email");
    let goal = GoalWords::of(&task);
    let email = task.params["email"].as_str().unwrap().to_string();
    let name = task.params["c"]["display_name"].as_str().unwrap().to_string();
    let mut measure = Progress::default();
    let mut episode = Episode::start(&catalog, &task, EpisodeOptions::default()).unwrap();
    assert_eq!(progress(&mut measure, &task, &goal, &episode), 0);

    // A new contact's form: the contact's name is already in the phone (it names what to
    // find), so typing it is no progress; the new address is.
    let fab = centre(&episode, |n| n.content_desc == "Create contact");
    step(&mut episode, Action::Tap { target: fab });
    type_into(&mut episode, "first_name", &name);
    assert_eq!(progress(&mut measure, &task, &goal, &episode), 0);
    type_into(&mut episode, "email", &email);
    assert_eq!(progress(&mut measure, &task, &goal, &episode), 1);
    // A part of the value is not the value.
    let part = email.split('@').next().unwrap().to_string();
    type_into(&mut episode, "email", &part);
    assert_eq!(progress(&mut measure, &task, &goal, &episode), 0);

    // Saved (on the wrong contact: progress, not success): the address is stored, still 1; the
    // task's `state` check does not pass, so no criterion adds 8.
    type_into(&mut episode, "email", &email);
    let save = centre(&episode, |n| n.resource_id.ends_with("menu_save"));
    step(&mut episode, Action::Tap { target: save });
    assert!(
        !episode.tree().iter().any(|(_, n)| n.resource_id.ends_with("email") && n.editable == Some(true))
    );
    assert_eq!(progress(&mut measure, &task, &goal, &episode), 1);
}

#[test]
fn novelty_is_per_progress_and_prefers_fewer_actions() {
    let mut novelty = Novelty::default();
    assert!(novelty.check(0, 3, &[1, 2]));
    // The same atoms, as many or more actions in: nothing new.
    assert!(!novelty.check(0, 3, &[2, 1]));
    assert!(!novelty.check(0, 5, &[1]));
    // One new atom is enough.
    assert!(novelty.check(0, 5, &[1, 7]));
    // Reached in fewer actions: worth expanding again.
    assert!(novelty.check(0, 2, &[1]));
    // Another progress level is a fresh table.
    assert!(novelty.check(1, 9, &[1, 2]));
}

#[test]
fn atoms_tell_screens_and_typed_text_apart() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let task = instance(&catalog, "contacts.add_email");
    let mut episode = Episode::start(&catalog, &task, EpisodeOptions::default()).unwrap();
    let of = |episode: &Episode| {
        let stopped = episode.stopped_with(&COMPLETE).unwrap();
        let verdict = evaluate(&task.criteria, &stopped, &EvalContext::for_task(&task));
        let front = episode.phone().and_then(|p| p.foreground_app().map(str::to_string));
        atoms(episode.tree(), front.as_deref(), &stopped, &database_digests(&stopped), &verdict)
    };
    let list = of(&episode);
    assert_eq!(list, of(&episode), "atoms are deterministic");
    let fab = centre(&episode, |n| n.content_desc == "Create contact");
    step(&mut episode, Action::Tap { target: fab });
    let form = of(&episode);
    type_into(&mut episode, "first_name", "Zebulon");
    let typed = of(&episode);
    let mut novelty = Novelty::default();
    assert!(novelty.check(0, 0, &list));
    assert!(novelty.check(0, 1, &form), "a new screen is novel");
    assert!(novelty.check(0, 2, &typed), "a field holding new text is novel");
    assert!(!novelty.check(0, 3, &form), "the same form again, deeper, is not");
}

#[test]
fn the_portfolio_solves_what_the_cost_search_alone_does_not_within_the_same_budget() {
    // `settings.time_zone` (9 actions): the cost search does not solve it in its 1,500 states;
    // the width search does in about 600 of its own. Without snapshots (every state replayed
    // from a reset) the outcome is byte for byte the same: the width search's snapshots, kept
    // apart from the cost search's, change the cost only.
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let task = instance(&catalog, "settings.time_zone");
    let budget = Budget { max_expansions: 2300, improve_expansions: 0, ..Budget::default() };
    let a = solve(&catalog, &task, Some(9), &budget).unwrap();
    assert!(a.solved, "{:?}", a.reason);
    assert!(a.length <= 9);
    assert!(a.first_solution_at.unwrap() > phonebench_solve::COST_STATES, "found by the width search");
    let replayed = solve(&catalog, &task, Some(9), &Budget { snapshots: false, ..budget }).unwrap();
    assert_eq!(SolveOutcome { steps_replayed: 0, ..a }, SolveOutcome { steps_replayed: 0, ..replayed });
}

#[test]
fn the_cost_search_expands_states_that_show_nothing_new_at_their_estimate_later() {
    // `notes.rename` (7 actions): every chain of taps on goal words is free in the cost search
    // (`DEPTH_CREDIT`), so without novelty it goes breadth-first through them at one priority
    // and does not reach the rename within 4,000 states; with states that show nothing new at
    // their estimate put back by `COST_NOVELTY_PENALTY`, it does within its own 1,500.
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let task = instance(&catalog, "notes.rename");
    let budget =
        Budget { max_expansions: phonebench_solve::COST_STATES, improve_expansions: 0, ..Budget::default() };
    let outcome = solve(&catalog, &task, Some(7), &budget).unwrap();
    assert!(outcome.solved, "{:?}", outcome.reason);
    assert!(outcome.length <= 7);
}
