//! Rendering every observation format from the largest real dump in `../shared`.

use criterion::{Criterion, criterion_group, criterion_main};
use phonebench_observe::{ObservationFormat, render};
use phonebench_testkit::{display_name, largest_real_xml};
use phonebench_uitree::read_xml;

fn formats(c: &mut Criterion) {
    let path = largest_real_xml();
    let text = std::fs::read_to_string(&path).expect("largest dump readable");
    let tree = read_xml(&text).expect("largest dump parses");
    eprintln!("{}: {} nodes", display_name(&path), tree.len());

    let mut group = c.benchmark_group("render_largest_real_dump");
    for format in ObservationFormat::ALL {
        group.bench_function(format.name(), |b| b.iter(|| render(std::hint::black_box(&tree), format)));
    }
    group.bench_function("read_then_sphinx_tree", |b| {
        b.iter(|| {
            let tree = read_xml(std::hint::black_box(&text)).expect("parses");
            render(&tree, ObservationFormat::SphinxTree)
        })
    });
    group.finish();
}

criterion_group!(benches, formats);
criterion_main!(benches);
