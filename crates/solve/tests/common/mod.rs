//! What the solve crate's tests share: the repository's apps and suite, an instance of a task
//! as `phonebench run` sets it up, and a scripted step.
#![allow(clippy::unwrap_used)]
// Each test file uses a part of it.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;

use phonebench_actions::{Action, Point, Target};
use phonebench_env::{Episode, TurnInput};
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use phonebench_tasks::{Suite, TaskInstance};

/// The repository's root.
pub fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Instance 0 of the full suite's task `id` at the suite's seed.
pub fn instance(catalog: &Catalog, id: &str) -> TaskInstance {
    let suite = Suite::load(&root().join("suites/full")).unwrap();
    let spec = suite.select(Some(id)).into_iter().next().unwrap();
    let phone = Phone::new(catalog.clone(), PhoneConfig::default()).unwrap();
    let mut rows =
        |app: &str, sql: &str| phone.query_with(app, sql, &BTreeMap::new()).map_err(|e| e.to_string());
    spec.instantiate(suite.manifest.seed, 0, &mut rows).unwrap()
}

/// One turn of a scripted agent.
pub fn step(episode: &mut Episode, action: Action) {
    let raw = serde_json::to_string(&action).unwrap();
    episode.step_turn(TurnInput::new(raw, Ok(action))).unwrap();
}

/// The centre of the first element `pick` accepts, as a touch target.
pub fn centre(episode: &Episode, pick: impl Fn(&phonebench_uitree::Node) -> bool) -> Target {
    let tree = episode.tree().clone();
    let (_, node) = tree.iter().find(|(_, n)| pick(n)).unwrap();
    let (x, y) = node.bounds.center();
    Target::Point(Point::new(x, y))
}
