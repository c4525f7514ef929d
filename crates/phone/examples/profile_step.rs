//! A step repeated, for profiling: on `APP`'s entry screen (or the one `PATH` leads to), taps the first element whose
//! resource id ends with `ID` (a toggle that writes the database; `#N`: the element of index N) — or, with `ID` = `scroll`,
//! scrolls down and up — then observes; prints the median and p99 of apply + observe.
//! `PATH` (optional, `8,4`): the indices of elements tapped first, one after the other: a
//! `bench` row's `path` of taps (`[{"action":"tap","target":{"index":8}}, …]` is `8,4,…`).

use std::path::Path;
use std::time::Instant;

use phonebench_actions::{Action, Direction, Target};
use phonebench_observe::ObservationFormat;
use phonebench_phone::{Catalog, Phone, PhoneConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let app = args.next().unwrap_or_else(|| "email".into());
    let id = args.next().unwrap_or_else(|| "star".into());
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(2000);
    let path = args
        .next()
        .unwrap_or_default()
        .split(',')
        .filter(|i| !i.is_empty())
        .map(|i| i.parse().map(|index| Action::Tap { target: Target::Index(index) }))
        .collect::<Result<Vec<Action>, _>>()
        .map_err(|e| format!("PATH is element indices separated by commas (`8,4`): {e}"))?;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../apps");
    let mut phone = Phone::new(Catalog::load_dir(&dir)?, PhoneConfig::default())?;
    let go = |phone: &mut Phone| -> Result<_, Box<dyn std::error::Error>> {
        phone.reset()?;
        phone.apply(&Action::OpenApp { app: app.clone() })?;
        let mut observation = phone.observe(ObservationFormat::SphinxTree)?;
        for action in &path {
            phone.apply(action)?;
            observation = phone.observe(ObservationFormat::SphinxTree)?;
        }
        Ok(observation)
    };
    let observation = go(&mut phone)?;
    let tree = phone.tree()?.clone();
    let scroll = id == "scroll";
    let index = if scroll {
        Some(0)
    } else if let Some(index) = id.strip_prefix('#') {
        index.parse().ok()
    } else {
        observation.targets.iter().position(|&node| tree.node(node).resource_id.ends_with(&format!("/{id}")))
    }
    .ok_or("no such element")?;
    let tap = Action::Tap { target: Target::Index(index as u32) };
    let scrolls =
        [Direction::Down, Direction::Up].map(|direction| Action::Scroll { direction, target: None });
    let mut samples = Vec::with_capacity(n);
    // `RESET=1`: each tap from a reset phone (how `bench` times a write that no tap undoes).
    let reset = std::env::var_os("RESET").is_some();
    for i in 0..n {
        if reset {
            go(&mut phone)?;
        }
        let action = if scroll { &scrolls[i % 2] } else { &tap };
        let t = Instant::now();
        phone.apply(action)?;
        std::hint::black_box(phone.observe(ObservationFormat::SphinxTree)?);
        samples.push(t.elapsed().as_secs_f64() * 1e6);
    }
    samples.sort_by(f64::total_cmp);
    println!("{} nodes: p50 {:.0} µs, p99 {:.0} µs", tree.len(), samples[n / 2], samples[n * 99 / 100]);
    Ok(())
}
