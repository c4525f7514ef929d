//! Measuring a typical list row: a cache miss (shaping) and a cache hit (the common case, since
//! every step measures the same strings).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use phonebench_text::{Fonts, TextStyle, clear_cache, measure};

/// A message-list preview row: 14 sp at density 2.625, wrapped to two lines.
const ROW: &str =
    "Alice Müller: Are we still on for lunch tomorrow? I booked a table for 12:30 at the usual place";
/// The same row in Chinese (from the seeded Messages app): every glyph falls back.
const CJK_ROW: &str = "明天下午三点开会，别忘了带资料。好的，收到！谢谢";
const STYLE: TextStyle = TextStyle { size_px: 36.75, bold: false, line_height: 1.2 };
const WIDTH: Option<f32> = Some(800.0);
const LINES: Option<u32> = Some(2);

fn bench(c: &mut Criterion) {
    // Load the fonts outside the timings.
    black_box(measure("warm up", &STYLE, None, None));

    c.bench_function("measure/cold (cache miss)", |b| {
        b.iter(|| {
            clear_cache();
            measure(black_box(ROW), &STYLE, WIDTH, LINES)
        })
    });
    c.bench_function("measure/warm (cache hit)", |b| {
        b.iter(|| measure(black_box(ROW), &STYLE, WIDTH, LINES))
    });
    c.bench_function("measure/short label, warm", |b| {
        b.iter(|| measure(black_box("Settings"), &STYLE, None, Some(1)))
    });
    // Characters Roboto lacks are shaped again with the fallback faces (DejaVu Sans, then Droid Sans
    // Fallback), so a Chinese preview costs several shapings on a miss.
    c.bench_function("measure/cold CJK (cache miss, fallback)", |b| {
        b.iter(|| {
            clear_cache();
            measure(black_box(CJK_ROW), &STYLE, WIDTH, LINES)
        })
    });
    c.bench_function("Fonts::measure (uncached)", |b| {
        let mut fonts = Fonts::new();
        b.iter(|| fonts.measure(black_box(ROW), &STYLE, WIDTH, LINES))
    });
    c.bench_function("Fonts::new (font system setup)", |b| b.iter(Fonts::new));
    // Faces are parsed on first use, so the first measurement of a process pays for it.
    c.bench_function("Fonts::new + first measure", |b| {
        b.iter(|| Fonts::new().measure(black_box(ROW), &STYLE, WIDTH, LINES))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
