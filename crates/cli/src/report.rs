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
}

/// Writes the report and prints where its index page is. The results are only read; a report
/// written into the results folder (the default) is written under the folder's lock, so never
/// while a run is writing there.
pub fn run(args: &ReportArgs) -> Result<()> {
    let out = args.out.clone().unwrap_or_else(|| args.dir.join("report"));
    let context = || format!("writing the report of {} into {}", args.dir.display(), out.display());
    // Checked first, so that nothing (not even the lock file) is created in a folder that does
    // not hold our results.
    ResultsDb::open_existing(&args.dir).with_context(context)?;
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
    Ok(())
}

/// Whether `path` is `dir` or lies inside it (symbolic links of `dir` resolved; `path` need not
/// exist yet).
fn inside(path: &Path, dir: &Path) -> bool {
    phonebench_runner::results::resolve_path(path).starts_with(phonebench_runner::results::resolve_path(dir))
}
