//! Read and write throughput on the largest real dump in `../shared`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use phonebench_testkit::{display_name, largest_real_xml};
use phonebench_uitree::{read_xml, write_xml};

fn xml(c: &mut Criterion) {
    let path = largest_real_xml();
    let text = std::fs::read_to_string(&path).expect("largest dump readable");
    let tree = read_xml(&text).expect("largest dump parses");
    let written = write_xml(&tree);
    eprintln!("{}: {} bytes, {} nodes", display_name(&path), text.len(), tree.len());

    let mut group = c.benchmark_group("uiautomator_xml");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("read_largest_real_dump", |b| b.iter(|| read_xml(std::hint::black_box(&text))));
    group.throughput(Throughput::Bytes(written.len() as u64));
    group.bench_function("write_largest_real_dump", |b| b.iter(|| write_xml(std::hint::black_box(&tree))));
    group.finish();
}

criterion_group!(benches, xml);
criterion_main!(benches);
