//! The search takes two fields of a form in one order only, and never types into a field twice
//! in a row (`typing_is_redundant` in `lib.rs`): sound only if typing into a form's fields in
//! either order reaches the same state, and typing twice the state the second text alone
//! reaches. Checked here on a real app's form, by the key the search deduplicates with.
#![allow(clippy::unwrap_used)]

mod common;

use common::{centre, instance, root, step};
use phonebench_actions::{Action, Target};
use phonebench_env::{Episode, EpisodeOptions};
use phonebench_eval::{EvalContext, evaluate};
use phonebench_phone::Catalog;
use phonebench_solve::{COMPLETE, state_key};
use phonebench_tasks::TaskInstance;

/// The new-contact form of `task`'s start, then `typing` (field id, text) in order; the state's
/// key as the search computes it.
fn key_after(catalog: &Catalog, task: &TaskInstance, typing: &[(&str, &str)]) -> u128 {
    let mut episode = Episode::start(catalog, task, EpisodeOptions::default()).unwrap();
    let fab = centre(&episode, |n| n.resource_id.ends_with("floating_action_button"));
    step(&mut episode, Action::Tap { target: fab });
    for (field, text) in typing {
        let target: Target = centre(&episode, |n| n.resource_id.ends_with(field));
        step(
            &mut episode,
            Action::Type { text: text.to_string(), target: Some(target), clear: true, enter: false },
        );
    }
    let stopped = episode.stopped_with(&COMPLETE).unwrap();
    let verdict = evaluate(&task.criteria, &stopped, &EvalContext::for_task(task));
    state_key(&episode, &stopped, &verdict, &Default::default())
}

#[test]
fn a_forms_fields_typed_in_either_order_reach_one_state() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let task = instance(&catalog, "contacts.create");
    let first_then_last = key_after(&catalog, &task, &[("first_name", "Ada"), ("last_name", "Lovelace")]);
    let last_then_first = key_after(&catalog, &task, &[("last_name", "Lovelace"), ("first_name", "Ada")]);
    assert_eq!(first_then_last, last_then_first);
    // And the key tells the forms apart: the check above cannot pass by a key blind to fields.
    let other = key_after(&catalog, &task, &[("first_name", "Ada"), ("last_name", "Byron")]);
    assert_ne!(first_then_last, other);
}

#[test]
fn typing_into_a_field_twice_reaches_the_state_the_second_text_alone_does() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let task = instance(&catalog, "contacts.create");
    let twice = key_after(&catalog, &task, &[("first_name", "Grace"), ("first_name", "Ada")]);
    let once = key_after(&catalog, &task, &[("first_name", "Ada")]);
    assert_eq!(twice, once);
}
