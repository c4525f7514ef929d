//! Two app package folders played side by side, for checking that a rewrite of an app (a faster
//! template, say) changes nothing an agent or a check can see: for each app (`APP`, or all),
//! `EPISODES` episodes of `STEPS` random steps (seeded, the same actions on both phones),
//! comparing after every step the observation text, the screenshot-free UI tree's bounds and
//! every database byte for byte. Prints the first difference and exits 1, or how much it compared.
//!
//! `compare_apps OLD_DIR NEW_DIR [APP|all] [EPISODES] [STEPS]`
//!
//! With `NEW_DIR` = `-`, plays `OLD_DIR` alone and prints one digest per state instead: run it
//! with two builds of the phone and `diff` the outputs to check a change of the engine.

use std::path::PathBuf;

use phonebench_actions::{Action, Direction, Key, Target};
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

const WORDS: [&str; 5] = ["hello", "Ada", "42", "meeting notes", "a"];

/// Taps most (three in five steps, so play goes deep), then typing, scrolls, waits and Back.
fn random_action(rng: &mut ChaCha8Rng, targets: usize) -> Action {
    let pick = |rng: &mut ChaCha8Rng| Target::Index((rng.next_u32() as usize % targets.max(1)) as u32);
    match rng.next_u32() % 100 {
        0..=59 if targets > 0 => Action::Tap { target: pick(rng) },
        60..=64 if targets > 0 => Action::LongPress { target: pick(rng) },
        65..=74 if targets > 0 => Action::Type {
            text: WORDS[rng.next_u32() as usize % WORDS.len()].to_string(),
            target: Some(pick(rng)),
            clear: rng.next_u32().is_multiple_of(2),
            enter: rng.next_u32().is_multiple_of(4),
        },
        75..=86 => Action::Scroll {
            direction: if rng.next_u32().is_multiple_of(3) { Direction::Up } else { Direction::Down },
            target: None,
        },
        87..=90 => Action::Wait { ms: Some(61_000 * (1 + rng.next_u32() as u64 % 90)) },
        _ => Action::Key { key: Key::Back },
    }
}

/// What is compared: the observation text, each node's bounds, each database's bytes.
type State = (String, String, Vec<Vec<u8>>);

/// The state after `action`, the action's outcome and how many elements the next action may target.
type Step = (Result<phonebench_phone::Outcome, String>, State, usize);

fn play(phone: &mut Phone, action: &Action, apps: &[String]) -> Result<Step, Box<dyn std::error::Error>> {
    let outcome = phone.apply(action).map_err(|e| e.to_string());
    let observation = phone.observe(ObservationFormat::SphinxTree)?;
    let tree = phone.tree()?;
    let bounds = tree.iter().map(|(_, n)| format!("{:?}", n.bounds)).collect::<Vec<_>>().join(" ");
    let dbs = apps.iter().map(|a| phone.database_bytes(a)).collect::<Result<_, _>>()?;
    Ok((outcome, (observation.text, bounds, dbs), observation.targets.len()))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "compare_apps OLD_DIR NEW_DIR [APP|all] [EPISODES] [STEPS]";
    let old = PathBuf::from(args.next().ok_or(usage)?);
    let new = PathBuf::from(args.next().ok_or(usage)?);
    let only = args.next().unwrap_or_else(|| "all".into());
    let episodes: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(40);
    let steps: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(40);
    let old_catalog = Catalog::load_dir(&old)?;
    let apps: Vec<String> = old_catalog.apps().iter().map(|a| a.manifest.id.clone()).collect();
    let mut a = Phone::new(old_catalog, PhoneConfig::default())?;
    // Digests: one phone, nothing to compare it with.
    let mut b = match new.as_os_str() == "-" {
        true => None,
        false => Some(Phone::new(Catalog::load_dir(&new)?, PhoneConfig::default())?),
    };
    let mut compared = 0usize;
    for app in apps.iter().filter(|app| only == "all" || **app == only) {
        for episode in 0..episodes {
            let mut rng = ChaCha8Rng::seed_from_u64(episode);
            a.reset()?;
            if let Some(b) = &mut b {
                b.reset()?;
            }
            let mut trail = vec![Action::OpenApp { app: app.clone() }];
            let mut targets = 0;
            for step in 0..=steps {
                let action = if step == 0 { trail[0].clone() } else { random_action(&mut rng, targets) };
                if step > 0 {
                    trail.push(action.clone());
                }
                let (ra, sa, next_targets) = play(&mut a, &action, &apps)?;
                targets = next_targets;
                compared += 1;
                let Some(b) = &mut b else {
                    use std::hash::{Hash, Hasher};
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    (format!("{ra:?}"), &sa).hash(&mut h);
                    println!("{app} {episode} {step} {:016x}", h.finish());
                    continue;
                };
                let (rb, sb, _) = play(b, &action, &apps)?;
                let what = if ra != rb {
                    Some(format!("the action's outcome: {ra:?} against {rb:?}"))
                } else if sa.0 != sb.0 {
                    Some(format!("the observation:\n--- old\n{}\n--- new\n{}", sa.0, sb.0))
                } else if sa.1 != sb.1 {
                    Some("the nodes' bounds".to_string())
                } else if sa.2 != sb.2 {
                    let which: Vec<_> = apps
                        .iter()
                        .zip(sa.2.iter().zip(&sb.2))
                        .filter(|(_, (x, y))| x != y)
                        .map(|(n, _)| n)
                        .collect();
                    Some(format!("the databases of {which:?}"))
                } else {
                    None
                };
                if let Some(what) = what {
                    let trail: Vec<_> =
                        trail.iter().map(phonebench_actions::canonical::to_canonical_json).collect();
                    println!("{app} episode {episode} step {step}: {what}\nactions: {}", trail.join(" "));
                    std::process::exit(1);
                }
            }
        }
    }
    println!("identical: {compared} states compared");
    Ok(())
}
