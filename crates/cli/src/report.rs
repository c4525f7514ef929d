//! `phonebench report DIR`: writes the static HTML report of a results folder.

use std::path::PathBuf;

use anyhow::{Context, Result};

/// Arguments of `phonebench report`.
#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// The results folder (holding results.sqlite) of `phonebench run`.
    pub dir: PathBuf,
    /// Where to write the report (default: DIR/report).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Writes the report and prints where its index page is.
pub fn run(args: &ReportArgs) -> Result<()> {
    let out = args.out.clone().unwrap_or_else(|| args.dir.join("report"));
    let files = phonebench_report::write_report(&args.dir, &out)
        .with_context(|| format!("writing the report of {} into {}", args.dir.display(), out.display()))?;
    println!("{} ({} episode pages)", files.index.display(), files.episodes.len());
    Ok(())
}
