//! The search does not open an app, ask the user or call a tool right after an action that
//! changed only the screen (`is_screen_blind` in `lib.rs`): the state before offered the same
//! action, and it reaches the same state from there. Checked here on real apps by the keys the
//! search deduplicates with (`state_key`) and compares worlds with (`world_key`).
#![allow(clippy::unwrap_used)]

mod common;

use common::{centre, instance, root, step};
use phonebench_actions::Action;
use phonebench_env::{Episode, EpisodeOptions};
use phonebench_eval::{EvalContext, evaluate};
use phonebench_phone::Catalog;
use phonebench_solve::text::{GoalWords, learnt};
use phonebench_solve::{COMPLETE, state_key, world_key};
use phonebench_tasks::TaskInstance;

/// The search's two keys of `episode`'s state: (state, world).
fn keys(episode: &Episode, task: &TaskInstance) -> (u128, u64) {
    let stopped = episode.stopped_with(&COMPLETE).unwrap();
    let verdict = evaluate(&task.criteria, &stopped, &EvalContext::for_task(task));
    let learnt = learnt(episode.trajectory(), &GoalWords::of(task));
    (state_key(episode, &stopped, &verdict, &learnt), world_key(episode, &stopped, &verdict, &learnt))
}

fn tap_id(episode: &mut Episode, id: &str) {
    let target = centre(episode, |n| n.resource_id.ends_with(id));
    step(episode, Action::Tap { target });
}

#[test]
fn opening_an_app_after_a_screen_only_change_reaches_the_state_opening_it_before_does() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let task = instance(&catalog, "crossapp.create_and_text");
    let start = || {
        let mut episode = Episode::start(&catalog, &task, EpisodeOptions::default()).unwrap();
        step(&mut episode, Action::OpenApp { app: "contacts".into() });
        episode
    };
    let mut straight = start();
    let before = keys(&straight, &task);
    step(&mut straight, Action::OpenApp { app: "messages".into() });

    let mut detour = start();
    tap_id(&mut detour, "floating_action_button");
    let on_form = keys(&detour, &task);
    assert_ne!(on_form.0, before.0, "the form is another screen");
    assert_eq!(on_form.1, before.1, "and the same world");
    step(&mut detour, Action::OpenApp { app: "messages".into() });
    assert_eq!(keys(&detour, &task).0, keys(&straight, &task).0);
}

#[test]
fn saving_changes_the_world() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let task = instance(&catalog, "contacts.create");
    let mut episode = Episode::start(&catalog, &task, EpisodeOptions::default()).unwrap();
    tap_id(&mut episode, "floating_action_button");
    let target = centre(&episode, |n| n.resource_id.ends_with("first_name"));
    step(&mut episode, Action::Type { text: "Ada".into(), target: Some(target), clear: true, enter: false });
    let typed = keys(&episode, &task);
    tap_id(&mut episode, "menu_save");
    assert_ne!(keys(&episode, &task).1, typed.1, "a saved contact is in the database");
}
