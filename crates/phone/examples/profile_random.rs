//! Random steps on every app, for profiling (`perf record`): apply + observe in a loop, a reset
//! every 40 steps. Prints steps per second and where the time went (apply vs observe).

use std::path::Path;
use std::time::{Duration, Instant};

use phonebench_actions::{Action, Direction, Key, Target};
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

/// Runs the workload (also from `profile_random_mimalloc`).
pub fn main() -> Result<(), Box<dyn std::error::Error>> {
    let steps: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    let catalog = Catalog::load_dir(&dir)?;
    let apps: Vec<String> = catalog.apps().iter().map(|a| a.manifest.id.clone()).collect();
    let made = Instant::now();
    for _ in 0..20 {
        std::hint::black_box(Phone::new(catalog.clone(), PhoneConfig::default())?);
    }
    println!("Phone::new: {:.2} ms", made.elapsed().as_secs_f64() * 1000.0 / 20.0);
    let mut phone = Phone::new(catalog, PhoneConfig::default())?;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (mut apply, mut observe, mut reset) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let mut targets = 0usize;
    let start = Instant::now();
    for i in 0..steps {
        if i % 40 == 0 {
            let t = Instant::now();
            phone.reset()?;
            reset += t.elapsed();
            let app = apps[(rng.next_u32() as usize) % apps.len()].clone();
            phone.apply(&Action::OpenApp { app })?;
            targets = phone.observe(ObservationFormat::SphinxTree)?.targets.len();
            continue;
        }
        let pick = |rng: &mut ChaCha8Rng| Target::Index((rng.next_u32() as usize % targets.max(1)) as u32);
        let action = match rng.next_u32() % 100 {
            0..=59 if targets > 0 => Action::Tap { target: pick(&mut rng) },
            60..=74 if targets > 0 => Action::Type {
                text: "hello".into(),
                target: Some(pick(&mut rng)),
                clear: false,
                enter: false,
            },
            75..=92 => Action::Scroll {
                direction: if rng.next_u32() % 2 == 0 { Direction::Down } else { Direction::Up },
                target: None,
            },
            _ => Action::Key { key: Key::Back },
        };
        let t = Instant::now();
        let _ = phone.apply(&action);
        let t2 = Instant::now();
        apply += t2 - t;
        targets = phone.observe(ObservationFormat::SphinxTree)?.targets.len();
        observe += t2.elapsed();
    }
    let total = start.elapsed();
    println!(
        "{steps} steps in {:.2} s: {:.0} steps/s; apply {:.2} s, observe {:.2} s, reset {:.2} s",
        total.as_secs_f64(),
        steps as f64 / total.as_secs_f64(),
        apply.as_secs_f64(),
        observe.as_secs_f64(),
        reset.as_secs_f64()
    );
    Ok(())
}
