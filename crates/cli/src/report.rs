//! `phonebench report DIR`: writes the static HTML report of a results folder.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use phonebench_runner::{ResultsDb, ResultsLock};

/// Arguments of `phonebench report`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// The results folder (holding results.sqlite) of `phonebench run`.
    pub dir: PathBuf,
    /// Where to write the report (default: DIR/report).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// `phonebench solve --json` output: also print SPL against the oracle's solution lengths
    /// (over the tasks it solved; the ordinary SPL is unchanged).
    #[arg(long)]
    pub oracle: Option<PathBuf>,
}

/// Writes the report and prints where its index page is. The results are only read; a report
/// written into the results folder (the default) is written under the folder's lock, so never
/// while a run is writing there.
pub fn run(args: &ReportArgs) -> Result<()> {
    let out = args.out.clone().unwrap_or_else(|| args.dir.join("report"));
    let context = || format!("writing the report of {} into {}", args.dir.display(), out.display());
    // Checked first, so that nothing (not even the lock file) is created in a folder that does
    // not hold our results.
    let db = ResultsDb::open_existing(&args.dir).with_context(context)?;
    let oracle = match &args.oracle {
        Some(file) => {
            let text =
                std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
            let lengths = phonebench_runner::metrics::read_oracle_lengths(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            let episodes = db.episodes().with_context(context)?;
            Some(phonebench_runner::metrics::oracle_spl(&episodes, &lengths))
        }
        None => None,
    };
    drop(db);
    let _lock = if inside(&out, &args.dir) {
        Some(ResultsLock::acquire(&args.dir).with_context(|| {
            format!(
                "the report goes into the results folder {}, which must not be written while a run writes it (--out DIR writes it elsewhere)",
                args.dir.display()
            )
        })?)
    } else {
        None
    };
    let files = phonebench_report::write_report(&args.dir, &out).with_context(context)?;
    out!("{} ({} episode pages)", files.index.display(), files.episodes.len())?;
    if let Some(o) = oracle {
        out!(
            "SPL against the oracle: {} over {} scored episodes of tasks the oracle solved ({} episodes without an oracle length left out)",
            phonebench_runner::metrics::percent(o.spl),
            o.episodes,
            o.without_oracle
        )?;
    }
    Ok(())
}

/// Whether `path` is `dir` or lies inside it (symbolic links of `dir` resolved; `path` need not
/// exist yet).
fn inside(path: &Path, dir: &Path) -> bool {
    phonebench_runner::results::resolve_path(path).starts_with(phonebench_runner::results::resolve_path(dir))
}
