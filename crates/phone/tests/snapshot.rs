//! `Phone::snapshot` / `Phone::restore_snapshot`: through random play of every app, a restore
//! gives back the screen and every database byte for byte as they were at the snapshot, and the
//! same next action then gives the same state as it did the first time; a reset after restores
//! still gives the pristine phone.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use phonebench_actions::{Action, Direction, Key, Target};
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

const WORDS: [&str; 4] = ["hello", "Ada", "42", "meeting notes"];

fn random_action(rng: &mut ChaCha8Rng, targets: usize) -> Action {
    let pick = |rng: &mut ChaCha8Rng| Target::Index((rng.next_u32() as usize % targets.max(1)) as u32);
    match rng.next_u32() % 100 {
        0..=54 if targets > 0 => Action::Tap { target: pick(rng) },
        55..=69 if targets > 0 => Action::Type {
            text: WORDS[rng.next_u32() as usize % WORDS.len()].to_string(),
            target: Some(pick(rng)),
            clear: rng.next_u32().is_multiple_of(2),
            enter: rng.next_u32().is_multiple_of(4),
        },
        70..=82 => Action::Scroll {
            direction: if rng.next_u32().is_multiple_of(2) { Direction::Down } else { Direction::Up },
            target: None,
        },
        83..=87 => Action::Wait { ms: Some(61_000) },
        _ => Action::Key { key: Key::Back },
    }
}

/// The observation text, every database's bytes and the clock.
fn state(phone: &mut Phone, apps: &[String]) -> (String, Vec<Vec<u8>>, i64) {
    let text = phone.observe(ObservationFormat::SphinxTree).unwrap().text;
    let dbs = apps.iter().map(|a| phone.database_bytes(a).unwrap()).collect();
    (text, dbs, phone.now_ms())
}

#[test]
fn a_restored_snapshot_is_the_state_it_took_and_plays_on_the_same() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    let catalog = Catalog::load_dir(&dir).unwrap();
    let apps: Vec<String> = catalog.apps().iter().map(|a| a.manifest.id.clone()).collect();
    let mut phone = Phone::new(catalog, PhoneConfig::default()).unwrap();
    phone.observe(ObservationFormat::SphinxTree).unwrap();
    let pristine = state(&mut phone, &apps);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut compared = 0;
    for app in &apps {
        phone.reset().unwrap();
        phone.apply(&Action::OpenApp { app: app.clone() }).unwrap();
        for _ in 0..12 {
            let snapshot = phone.snapshot().unwrap();
            let before = state(&mut phone, &apps);
            let targets = phone.observe(ObservationFormat::SphinxTree).unwrap().targets.len();
            let first = random_action(&mut rng, targets);
            // A rejected action (an index with nothing to do) is fine: the state is what counts.
            let _ = phone.apply(&first);
            let after_first = state(&mut phone, &apps);
            for _ in 0..3 {
                let targets = phone.observe(ObservationFormat::SphinxTree).unwrap().targets.len();
                let _ = phone.apply(&random_action(&mut rng, targets));
            }
            phone.restore_snapshot(&snapshot).unwrap();
            assert!(state(&mut phone, &apps) == before, "{app}: the restored state differs");
            let _ = phone.apply(&first);
            assert!(
                state(&mut phone, &apps) == after_first,
                "{app}: {first:?} after a restore gave another state"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, apps.len() * 12);
    // Databases restored from snapshots are not mistaken for pristine ones.
    phone.reset().unwrap();
    assert!(state(&mut phone, &apps) == pristine, "reset after restores is not the pristine phone");
}
