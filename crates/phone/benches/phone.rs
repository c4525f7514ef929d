//! Phone latency on the real apps: a step (an action, then the new screen observed) on each
//! app's busiest screen, and a reset of all three apps.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use phonebench_actions::{Action, Direction};
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Catalog, Phone, PhoneConfig};

fn new_phone() -> Phone {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    let catalog = Catalog::load_dir(&dir).expect("the real apps load");
    Phone::new(catalog, PhoneConfig::default()).expect("the phone starts")
}

/// Apply + observe(SphinxTree) on each app's entry screen (its busiest: the Contacts and Messages
/// lists, the Settings homepage), alternating scrolls down and up so every step renders anew.
fn step(c: &mut Criterion) {
    let mut group = c.benchmark_group("step");
    for (app, screen) in [("contacts", "list"), ("messages", "list"), ("settings", "main")] {
        let mut phone = new_phone();
        phone.apply(&Action::OpenApp { app: app.to_string() }).expect("open");
        assert_eq!(phone.current_screen(), Some((app, screen)));
        let nodes = phone.tree().expect("tree").len();
        eprintln!("{app}/{screen}: {nodes} nodes");
        let actions =
            [Direction::Down, Direction::Up].map(|direction| Action::Scroll { direction, target: None });
        let mut i = 0usize;
        group.bench_function(format!("{app}_{screen}"), |b| {
            b.iter(|| {
                i += 1;
                phone.apply(black_box(&actions[i % 2])).expect("scroll");
                phone.observe(ObservationFormat::SphinxTree).expect("observe")
            })
        });
    }
    group.finish();
}

/// Reset with all three apps installed, each time after a step that leaves something to undo
/// (only the reset is timed).
fn reset(c: &mut Criterion) {
    let mut phone = new_phone();
    let open = Action::OpenApp { app: "contacts".into() };
    c.bench_function("reset_all_apps", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                phone.apply(&open).expect("open");
                let start = Instant::now();
                phone.reset().expect("reset");
                total += start.elapsed();
            }
            total
        })
    });
}

criterion_group!(benches, step, reset);
criterion_main!(benches);
