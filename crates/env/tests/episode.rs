//! Episodes on the real app packages: setup and start screen, the simulated user, format errors,
//! budgets, answers, events and databases in the trajectory, determinism.

use std::path::Path;

use phonebench_actions::{Action, FinishStatus, Key, Target};
use phonebench_env::{Episode, Trajectory};
use phonebench_env::{EpisodeEnd, EpisodeOptions, FormatErrorPolicy, REFUSAL};
use phonebench_phone::Catalog;
use phonebench_tasks::{TaskInstance, TaskSpec};

fn catalog() -> Catalog {
    Catalog::load_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps")).expect("the apps load")
}

const TASK: &str = r#"
id = "t"
goal = "Text {{ who }} the code."
category = "ask_user"
apps = ["contacts", "messages"]
max_steps = 6
start = { app = "contacts" }
reference = ["finish"]

[params]
who = { pool = ["Aaa Quill"] }
code = { pool = ["4711"] }

[[setup]]
app = "contacts"
sql = "INSERT INTO contacts (first_name, last_name, display_name, phone, created_at, updated_at) VALUES ('Aaa', 'Quill', 'Aaa Quill', :code, 0, 0)"

[[facts]]
about = ["code"]
answer = "The code is {{ code }}."

[[criteria]]
asked = { min = 1 }
"#;

fn instance() -> TaskInstance {
    let spec = TaskSpec::parse(Path::new("t.toml"), TASK).expect("the task parses");
    spec.instantiate(0, 0, &mut |_, _| Ok(vec![])).expect("the task instantiates")
}

fn ok(action: Action) -> (String, Result<Action, String>) {
    (serde_json::to_string(&action).expect("actions print"), Ok(action))
}

#[test]
fn setup_start_screen_user_and_answer_are_recorded() {
    let catalog = catalog();
    let mut ep = Episode::start(&catalog, &instance(), EpisodeOptions::default()).unwrap();
    assert_eq!(ep.trajectory().screens[0].app.as_deref(), Some("contacts"));
    assert!(ep.observation().text.contains("Quill"), "setup row is on the start screen");

    let (raw, a) = ok(Action::AskUser { text: "Which code should I send?".into() });
    let fb = ep.step(raw, a).unwrap();
    assert_eq!(fb.message.as_deref(), Some("The code is 4711."));
    let (raw, a) = ok(Action::AskUser { text: "Is it raining?".into() });
    assert_eq!(ep.step(raw, a).unwrap().message.as_deref(), Some(REFUSAL));

    let fb = ep.step("click [".into(), Err("unterminated".into())).unwrap();
    assert!(!fb.done, "format errors continue by default");
    let (raw, a) = ok(Action::Answer { text: "sent".into() });
    assert!(ep.step(raw, a).unwrap().done);
    assert!(ep.step("x".into(), Err("late".into())).is_err(), "no steps after the end");

    let t = ep.finish().unwrap();
    assert_eq!(t.end, Some(EpisodeEnd::Answered));
    assert_eq!(t.answer.as_deref(), Some("sent"));
    assert_eq!(t.exchanges.len(), 2);
    assert_eq!((t.exchanges[0].fact, t.exchanges[1].fact), (Some(0), None));
    assert_eq!(t.format_errors(), 1);
    assert_eq!(t.screens.len(), t.steps.len() + 1);
    // Both tracked apps have databases; setup is in the initial state already.
    assert_eq!(t.databases.keys().collect::<Vec<_>>(), ["contacts", "messages"]);
    assert_eq!(t.databases["contacts"].initial, t.databases["contacts"].last);
}

fn play(actions: &[Action], options: EpisodeOptions) -> Trajectory {
    let catalog = catalog();
    let mut ep = Episode::start(&catalog, &instance(), options).expect("the episode starts");
    for a in actions {
        if ep.is_done() {
            break;
        }
        let (raw, parsed) = ok(a.clone());
        ep.step(raw, parsed).expect("the step runs");
    }
    ep.finish().expect("the episode finishes")
}

#[test]
fn budget_policy_and_rejections() {
    let back = Action::Key { key: Key::Back };
    let t = play(&vec![back.clone(); 10], EpisodeOptions::default());
    assert_eq!(t.steps.len(), 6, "max_steps = 6");
    assert_eq!(t.end, Some(EpisodeEnd::Budget));

    let t = play(&vec![back; 10], EpisodeOptions { stop_on_repetition: true, ..EpisodeOptions::default() });
    assert_eq!((t.steps.len(), t.end.clone()), (3, Some(EpisodeEnd::Repetition)));

    let catalog = catalog();
    let options = EpisodeOptions { format_errors: FormatErrorPolicy::End, ..EpisodeOptions::default() };
    let mut ep = Episode::start(&catalog, &instance(), options).unwrap();
    assert!(ep.step("??".into(), Err("no action".into())).unwrap().done);
    assert_eq!(ep.finish().unwrap().end, Some(EpisodeEnd::FormatError));

    // A bad index is the agent's mistake: recorded, the episode goes on.
    let t = play(
        &[
            Action::Tap { target: Target::Index(9999) },
            Action::Finish { status: FinishStatus::Complete, reason: None },
        ],
        EpisodeOptions::default(),
    );
    assert!(t.steps[0].rejected.is_some());
    assert_eq!(t.end, Some(EpisodeEnd::Finished { status: FinishStatus::Complete }));
}

#[test]
fn same_actions_give_identical_trajectories_and_events_carry_their_step() {
    let actions = [
        Action::OpenApp { app: "messages".into() },
        Action::Tap { target: Target::Index(0) },
        Action::Key { key: Key::Back },
        Action::Key { key: Key::Back },
    ];
    let a = play(&actions, EpisodeOptions::default());
    let b = play(&actions, EpisodeOptions::default());
    assert_eq!(a, b);
    assert_eq!(a.screens[1].app.as_deref(), Some("messages"));
    for e in &a.events {
        assert!(e.step < a.steps.len());
    }
}
