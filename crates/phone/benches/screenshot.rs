//! Screenshot cost on each app's entry screen at 1080×2400: rendering the frame, rendering plus
//! PNG encoding, and each set-of-marks overlay on top of a rendered frame.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use phonebench_actions::Action;
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Catalog, Phone, PhoneConfig};
use phonebench_pixels::{SomStyle, draw_marks, encode_png};

fn phone_on(app: &str) -> Phone {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    let catalog = Catalog::load_dir(&dir).expect("the real apps load");
    let mut phone = Phone::new(catalog, PhoneConfig::default()).expect("the phone starts");
    phone.apply(&Action::OpenApp { app: app.to_string() }).expect("open");
    phone
}

fn screenshot(c: &mut Criterion) {
    let mut group = c.benchmark_group("screenshot");
    group.sample_size(50);
    for app in ["contacts", "messages", "settings"] {
        let mut phone = phone_on(app);
        group.bench_function(format!("{app}_render"), |b| b.iter(|| phone.screenshot().expect("render")));
        group.bench_function(format!("{app}_render_png"), |b| {
            b.iter(|| encode_png(&phone.screenshot().expect("render")).expect("png"))
        });
        let frame = phone.screenshot().expect("render");
        for (style, format) in [
            (SomStyle::AndroidWorld, ObservationFormat::AndroidWorld),
            (SomStyle::Sphinx, ObservationFormat::SphinxTree),
        ] {
            let targets = phone.observe(format).expect("observe").targets;
            let tree = phone.tree().expect("tree").clone();
            // Only the overlay is timed, not the copy of the frame it draws on.
            group.bench_function(format!("{app}_som_{}", style.name()), |b| {
                b.iter_custom(|iterations| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iterations {
                        let mut copy = frame.clone();
                        let start = Instant::now();
                        draw_marks(&mut copy, &tree, black_box(&targets), style);
                        total += start.elapsed();
                        black_box(copy);
                    }
                    total
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, screenshot);
criterion_main!(benches);
