//! `explain`: a task's reference walked through the search's action space, each step found
//! among the candidates (or not, with what is offered instead).
#![allow(clippy::unwrap_used)]

mod common;

use common::{instance, root};
use phonebench_actions::Action;
use phonebench_agents::ReferenceAgent;
use phonebench_phone::Catalog;
use phonebench_solve::explain::{Explanation, explain};
use phonebench_solve::mcp::Tools;

fn walk(catalog: &Catalog, id: &str) -> (phonebench_tasks::TaskInstance, Explanation) {
    let task = instance(catalog, id);
    let tools = Tools::for_task(&task, &phonebench_mcp::McpConfig::default());
    let mut agent = ReferenceAgent::new(task.reference.clone());
    let walked = explain(catalog, &task, &tools, |tree| {
        let action = agent.decide(tree);
        agent.failure.take().map_or(Ok(action), Err)
    })
    .unwrap();
    (task, walked)
}

#[test]
fn every_step_of_a_plain_reference_is_offered_at_its_cost() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let (task, walked) = walk(&catalog, "contacts.add_email");
    assert!(walked.passes, "{walked:?}");
    assert_eq!(walked.stopped, None);
    // Every reference step but the closing `finish` is an action step.
    assert_eq!(walked.steps.len(), task.reference.len(), "{walked:?}");
    for s in &walked.steps {
        // Every step of this reference taps a goal word or types a value into its field: the
        // cheapest kind of action, and only some of the screen's candidates reach its state.
        assert_eq!((s.cost, s.cheaper), (Some(2), 0), "{s:?}");
        assert!(s.as_cheap + 1 < s.candidates, "{s:?}");
        assert!(s.instead.is_empty(), "{s:?}");
    }
    let (ending, offered) = walked.ending.clone().unwrap();
    assert!(matches!(ending, Action::Finish { .. }) && offered, "{walked:?}");
}

#[test]
fn a_composed_text_is_offered_once_the_value_it_carries_was_learnt() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let (task, walked) = walk(&catalog, "mcp.convert_and_text");
    assert!(walked.passes, "{walked:?}");
    // The finance tool's call is offered with the goal's amount and currencies.
    assert!(matches!(walked.steps[0].action, Action::McpCall { .. }), "{walked:?}");
    assert!(walked.steps[0].cost.is_some(), "{walked:?}");
    // "<converted> <code>" is the reference's text: it needs the converted amount, which only
    // the tool's answer gives (seen after the first step), and is then typed at the cost of a
    // text named like its field.
    let result = task.params["x"]["result"].as_str().unwrap();
    assert_eq!(walked.facts, vec![(result.to_string(), Some(1))], "{walked:?}");
    let composed = walked
        .steps
        .iter()
        .find(|s| matches!(&s.action, Action::Type { text, .. } if text.contains(' ') && text.ends_with(char::is_uppercase)))
        .unwrap();
    assert_eq!(composed.cost, Some(2), "{composed:?}");
    assert!(walked.steps.iter().all(|s| s.cost.is_some()), "{walked:?}");
}

#[test]
fn a_wait_as_long_as_the_reference_waits_is_offered() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let (_, walked) = walk(&catalog, "clock.test_timer_ring");
    // The reference waits 5 minutes (the goal's timer is shorter): that wait is offered too.
    let wait = walked.steps.iter().find(|s| matches!(s.action, Action::Wait { .. })).unwrap();
    assert_eq!(wait.action, Action::Wait { ms: Some(300_000) }, "{wait:?}");
    assert!(wait.cost.is_some(), "{wait:?}");
}

#[test]
fn failing_checks_fall_as_a_sequence_holds_step_by_step() {
    // The timer test's criteria are a sequence (the tab, Start, "Time's up", Stop) and an `all`
    // of events: counted whole, they fail until the end; counted by checks, each step that
    // makes one hold lowers the count.
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    let (task, walked) = walk(&catalog, "clock.test_timer_ring");
    let failing: Vec<i64> = walked.steps.iter().map(|s| s.failing).collect();
    assert!(failing.windows(2).all(|w| w[1] <= w[0]), "{failing:?}");
    let drops = failing.windows(2).filter(|w| w[1] < w[0]).count();
    assert!(drops >= 3, "{failing:?}");
    let whole = task.criteria.iter().filter(|c| !c.guard).count() as i64;
    assert!(failing[0] > whole, "{failing:?} vs {whole} criteria");
}

/// The steps that type two digits (a time picker's hour or minute).
fn two_digit_typing(walked: &Explanation) -> Vec<&phonebench_solve::explain::StepExplanation> {
    let two_digits = |text: &str| text.len() == 2 && text.chars().all(|c| c.is_ascii_digit());
    walked
        .steps
        .iter()
        .filter(|s| matches!(&s.action, Action::Type { text, .. } if two_digits(text)))
        .collect()
}

#[test]
fn a_time_pickers_hour_and_minute_are_offered_from_the_goals_times() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    // The reference types the start's and the end's hour and minute into `#input_hour` and
    // `#input_minute`, two digits each: pieces of the goal's times (`10:00`), no text of the
    // goal on its own.
    let (task, walked) = walk(&catalog, "calendar.create_event");
    assert!(walked.passes, "{walked:?}");
    let typed = two_digit_typing(&walked);
    assert_eq!(typed.len(), 4, "{walked:?}");
    for s in &typed {
        let Action::Type { text, .. } = &s.action else { unreachable!() };
        assert!(task.goal.contains(&format!("{text}:")) || task.goal.contains(&format!(":{text}")), "{s:?}");
    }
    // The start's hour is offered as a matched text. (The others are texts the fields already
    // hold — the picker shows `00`, the end's hour is the start's plus one —, so typing them
    // changes nothing and any action that leaves the screen as it is reaches their state.)
    assert_eq!(typed[0].cost, Some(2), "{typed:?}");
    assert!(walked.steps.iter().all(|s| s.cost.is_some()), "{walked:?}");
}

#[test]
fn a_told_times_hour_and_minute_are_offered_after_the_reply() {
    let catalog = Catalog::load_dir(&root().join("apps")).unwrap();
    // The user tells the alarm's time ("Please wake me at 3:55 AM."); the goal gives none. The
    // reference types its hour and minute into the alarm's `#hour` and `#minute` fields.
    let (task, walked) = walk(&catalog, "clock.ask_flight_alarm");
    assert!(walked.passes, "{walked:?}");
    assert!(!task.goal.chars().any(|c| c.is_ascii_digit()), "{}", task.goal);
    let typed = two_digit_typing(&walked);
    assert_eq!(typed.len(), 2, "{walked:?}");
    for s in &typed {
        assert_eq!((s.cost, s.cheaper), (Some(2), 0), "{s:?}");
    }
}
