//! Runs split across processes or machines: a deterministic slice of a run's episodes
//! ([`Shard`]), and [`merge`] of the slices' results folders into one that is the same as an
//! unsharded run's (its `episodes.jsonl` byte for byte).
//!
//! The episodes of a run are its selected tasks in suite order, each with its instances
//! `0..instances`; episode `k` of that list belongs to shard `k mod count`. Dealing them out in
//! turn spreads every task's instances and the suite's slow and fast tasks evenly over the
//! shards. Nothing about an episode depends on which shard runs it, so the union of the shards
//! is the unsharded run.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::record::disturbed_key;
use crate::results::{ResultsDb, ResultsError, ResultsLock, RunConfig, clear, resolve_path};

/// One slice of a run: shard `index` of `count` (0-based, as Kubernetes Indexed Jobs'
/// `JOB_COMPLETION_INDEX` and Slurm arrays started at 0 number them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which slice, `0..count`.
    pub index: u32,
    /// How many slices.
    pub count: u32,
}

impl Shard {
    /// Whether episode number `k` of the run (in suite order) is this shard's.
    pub fn holds(self, k: usize) -> bool {
        k % self.count as usize == self.index as usize
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let usage = || format!("`{s}` is not a shard: write I/N, slice I (0 to N-1) of N, e.g. 0/4");
        let (i, n) = s.split_once('/').ok_or_else(usage)?;
        let index: u32 = i.trim().parse().map_err(|_| usage())?;
        let count: u32 = n.trim().parse().map_err(|_| usage())?;
        if count == 0 {
            return Err(format!("`{s}`: the number of shards must be at least 1"));
        }
        if index >= count {
            return Err(format!("`{s}`: shards are numbered 0 to {} (0-based)", count - 1));
        }
        Ok(Shard { index, count })
    }
}

/// Why shards could not be merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// Reading or writing results failed.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// The folders are not the shards of one run, or not all of them.
    #[error("{0}")]
    Refused(String),
    /// Copying screenshots failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// What a merge produced.
#[derive(Debug)]
pub struct MergeOutcome {
    /// The merged run's configuration (without a shard).
    pub config: RunConfig,
    /// Episodes merged.
    pub episodes: usize,
    /// The `episodes.jsonl` written.
    pub jsonl: PathBuf,
    /// The merged folder's lock, still held (the caller writes the report under it).
    pub lock: ResultsLock,
}

/// Merges the results folders `shards` (each a `phonebench run --shard I/N`) into `out`.
///
/// Refused, with what is wrong: folders of different runs (any setting, task file, app or build
/// differs), two folders of one shard, a missing shard, an episode stored twice, or an episode
/// of the run stored nowhere (a shard that did not finish: resume it first). `out` must not
/// hold results unless `fresh`.
pub fn merge(shards: &[PathBuf], out: &Path, fresh: bool) -> Result<MergeOutcome, MergeError> {
    let refuse = |m: String| Err(MergeError::Refused(m));
    if shards.is_empty() {
        return refuse("no shard folders given".into());
    }
    let mut sources = Vec::new();
    for dir in shards {
        let db = ResultsDb::open_existing(dir)?;
        let Some(config) = db.config()? else {
            return refuse(format!("{}: holds no run (no configuration stored)", dir.display()));
        };
        sources.push((dir.clone(), db, config));
    }
    // One run: equal configurations once the shard is set aside.
    let unsharded = |c: &RunConfig| RunConfig { shard: None, ..c.clone() };
    let (first_dir, _, first) = &sources[0];
    let merged_config = unsharded(first);
    for (dir, _, config) in &sources[1..] {
        let differences = merged_config.differences(&unsharded(config));
        if !differences.is_empty() {
            return refuse(format!(
                "{} and {} are not shards of one run; what differs: {}",
                first_dir.display(),
                dir.display(),
                differences.join("; ")
            ));
        }
    }
    // Every shard exactly once.
    let mut seen: BTreeMap<u32, &Path> = BTreeMap::new();
    let mut count = None;
    for (dir, _, config) in &sources {
        let Some(text) = &config.shard else {
            return refuse(format!(
                "{}: not a shard (run without --shard), nothing to merge it with",
                dir.display()
            ));
        };
        let shard: Shard =
            text.parse().map_err(|e| MergeError::Refused(format!("{}: {e}", dir.display())))?;
        if count.is_some_and(|n| n != shard.count) {
            return refuse(format!(
                "{}: shard {shard}, but another folder splits the run into {} shards",
                dir.display(),
                count.unwrap_or(0)
            ));
        }
        count = Some(shard.count);
        if let Some(other) = seen.insert(shard.index, dir) {
            return refuse(format!(
                "shard {shard} is given twice: {} and {}",
                other.display(),
                dir.display()
            ));
        }
    }
    let count = count.unwrap_or(1);
    let missing: Vec<String> =
        (0..count).filter(|i| !seen.contains_key(i)).map(|i| format!("{i}/{count}")).collect();
    if !missing.is_empty() {
        return refuse(format!("missing shards: {}", missing.join(", ")));
    }
    // Every episode of the run exactly once, at every disturbance level it asked for.
    let levels: Vec<phonebench_phone::Disturbances> = if merged_config.disturbances.is_empty() {
        vec![phonebench_phone::Disturbances::None]
    } else {
        merged_config.disturbances.iter().filter_map(|l| l.parse().ok()).collect()
    };
    let expected: BTreeSet<String> = merged_config
        .task_files
        .keys()
        .flat_map(|task| (0..merged_config.instances).map(move |i| (task, i)))
        .flat_map(|(task, i)| levels.iter().map(move |l| disturbed_key(task, i, *l)))
        .collect();
    let mut owner: BTreeMap<String, &Path> = BTreeMap::new();
    let mut stored = Vec::new();
    for (dir, db, _) in &sources {
        let walls = db.wall_times()?;
        let accounting = db.accounting()?;
        for episode in db.episodes()? {
            if let Some(other) = owner.insert(episode.key.clone(), dir) {
                return refuse(format!(
                    "episode `{}` is stored in both {} and {}",
                    episode.key,
                    other.display(),
                    dir.display()
                ));
            }
            if !expected.contains(&episode.key) {
                return refuse(format!(
                    "{}: episode `{}` is not one of the run's",
                    dir.display(),
                    episode.key
                ));
            }
            let steps = db.steps(&episode.key)?;
            let spent = accounting.get(&episode.key).cloned().unwrap_or_default();
            let wall = walls.get(&episode.key).copied().unwrap_or(0);
            stored.push((episode, steps, spent, wall));
        }
    }
    let absent: Vec<&String> = expected.iter().filter(|k| !owner.contains_key(*k)).collect();
    if !absent.is_empty() {
        let shown: Vec<&str> = absent.iter().take(5).map(|k| k.as_str()).collect();
        return refuse(format!(
            "{} episodes of the run are in no shard (e.g. {}): a shard did not finish; complete it with --resume, then merge",
            absent.len(),
            shown.join(", ")
        ));
    }
    // The merged folder must lie outside every shard: `--fresh` would clear a shard it is,
    // and copying a shard's screenshots into a folder inside them would never end.
    let resolved_out = resolve_path(out);
    for dir in shards {
        if resolved_out.starts_with(resolve_path(dir)) {
            return refuse(format!(
                "--out {} is (or lies inside) the shard folder {}: merge into a folder of its own",
                out.display(),
                dir.display()
            ));
        }
    }
    let lock = ResultsLock::acquire(out)?;
    if fresh {
        clear(&lock)?;
    }
    let mut db = ResultsDb::open_locked(&lock)?;
    if db.count()? > 0 {
        return refuse(format!(
            "{} already holds results: choose another --out, or --fresh to replace them",
            out.display()
        ));
    }
    db.claim(&merged_config, false)?;
    for (episode, steps, spent, wall) in &stored {
        db.insert(episode, steps, spent, *wall)?;
    }
    for (dir, _, _) in &sources {
        copy_tree(&dir.join(crate::run::SCREENSHOTS_DIR), &out.join(crate::run::SCREENSHOTS_DIR))?;
    }
    let jsonl = db.export_jsonl()?;
    Ok(MergeOutcome { config: merged_config, episodes: stored.len(), jsonl, lock })
}

/// Copies the folders and regular files under `from` into `to` (symbolic links are not
/// followed: a results folder holds none of its own).
fn copy_tree(from: &Path, to: &Path) -> Result<(), MergeError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| MergeError::Io { path, source }
    };
    if !from.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(to).map_err(io(to))?;
    for entry in std::fs::read_dir(from).map_err(io(from))? {
        let entry = entry.map_err(io(from))?;
        let kind = entry.file_type().map_err(io(&entry.path()))?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).map_err(io(&target))?;
        }
    }
    Ok(())
}
