//! The phone keeps renders (views, markup, layout) and query results, across steps and resets,
//! and redoes only what changed; phones share markup parses and layouts (`shared`): every
//! screen shown after random play of every app must equal the same screen rendered from
//! scratch by a phone that shares nothing.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use phonebench_actions::{Action, Direction, Key, Target};
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

const WORDS: [&str; 5] = ["hello", "Ada", "42", "meeting notes for the whole team today", "x"];

#[test]
fn kept_renders_equal_fresh_ones_through_random_play() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    let catalog = Catalog::load_dir(&dir).unwrap();
    let apps: Vec<String> = catalog.apps().iter().map(|a| a.manifest.id.clone()).collect();
    // `phone` keeps its renders throughout (so going back finds the screens it kept); `fresh`
    // plays the same actions, shares nothing and forgets every render before each look; `twin`
    // forgets its renders too but shares, so it lays out little itself: what `phone` parsed and
    // laid out before is reused.
    let mut phone = Phone::new(catalog.clone(), PhoneConfig::default()).unwrap();
    let mut fresh = Phone::new(catalog.clone(), PhoneConfig::default()).unwrap();
    fresh.set_sharing(false);
    let mut twin = Phone::new(catalog, PhoneConfig::default()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(21);
    let mut compared = 0;
    for app in &apps {
        for p in [&mut phone, &mut fresh, &mut twin] {
            p.reset().unwrap();
            p.apply(&Action::OpenApp { app: app.clone() }).unwrap();
        }
        let mut targets = phone.observe(ObservationFormat::SphinxTree).unwrap().targets.len();
        for step in 0..45 {
            let pick =
                |rng: &mut ChaCha8Rng| Target::Index((rng.next_u32() as usize % targets.max(1)) as u32);
            let action = match rng.next_u32() % 100 {
                0..=49 if targets > 0 => Action::Tap { target: pick(&mut rng) },
                50..=69 if targets > 0 => Action::Type {
                    text: WORDS[rng.next_u32() as usize % WORDS.len()].to_string(),
                    target: Some(pick(&mut rng)),
                    clear: rng.next_u32() % 3 == 0,
                    enter: false,
                },
                70..=84 => Action::Scroll {
                    direction: if rng.next_u32() % 2 == 0 { Direction::Down } else { Direction::Up },
                    target: None,
                },
                85..=89 => Action::Wait { ms: Some(61_000) },
                _ => Action::Key { key: Key::Back },
            };
            // Now and then a reset and the app again: renders and query results kept from
            // before the reset must not leak into what the pristine phone shows.
            let reset = rng.next_u32().is_multiple_of(15);
            for p in [&mut phone, &mut fresh, &mut twin] {
                if reset {
                    p.reset().unwrap();
                    p.apply(&Action::OpenApp { app: app.clone() }).unwrap();
                }
                // A rejected action (an index with nothing to do) is fine: the screen is what
                // counts.
                let _ = p.apply(&action);
            }
            let kept = phonebench_uitree::write_xml(phone.tree().unwrap());
            targets = phone.observe(ObservationFormat::SphinxTree).unwrap().targets.len();
            fresh.forget_renders();
            let from_scratch = phonebench_uitree::write_xml(fresh.tree().unwrap());
            assert_eq!(kept, from_scratch, "{app}, step {step}, after {action:?}");
            twin.forget_renders();
            let shared = phonebench_uitree::write_xml(twin.tree().unwrap());
            assert_eq!(shared, from_scratch, "{app}, step {step}, after {action:?} (shared)");
            compared += 1;
        }
    }
    assert_eq!(compared, apps.len() * 45);
    // The comparison is of shared work: `twin` (and `phone`, after resets) found parses and
    // layouts another phone made.
    let (hits, _) = phonebench_phone::shared::sharing_counts();
    assert!(hits > 1000, "only {hits} shared parses and layouts were reused");
}
