//! `rollouts` (a run made to be exported: screenshots always saved, the verifier-confirmed
//! count at the end) and `export` (a run folder as training data: `phonebench_runner::export`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{ArgMatches, Args, Command, FromArgMatches};
use phonebench_actions::Syntax;
use phonebench_runner::export::{ExportFormat, ExportOptions, ImageMode, rollout_counts};

use crate::suite::{self, RunArgs};

/// `phonebench rollouts`: every flag of `phonebench run`, with `--out` required and
/// `--save-screenshots` always on.
///
/// The flags are `RunArgs`' own (so the two commands cannot drift apart); clap's derive cannot
/// change another struct's arguments, so this type adjusts them by hand: `--out` becomes
/// required, and `--save-screenshots` defaults to true and is hidden, since an export without
/// screenshots would train a text-only model by accident.
#[derive(Debug, Clone)]
pub struct RolloutsArgs {
    run: RunArgs,
    out: PathBuf,
}

/// The id clap derives for `RunArgs::out`.
const OUT_ID: &str = "out";
/// The id clap derives for `RunArgs::save_screenshots`.
const SCREENSHOTS_ID: &str = "save_screenshots";

impl FromArgMatches for RolloutsArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let run = RunArgs::from_arg_matches(matches)?;
        let out = matches.get_one::<PathBuf>(OUT_ID).cloned().ok_or_else(|| {
            clap::Error::raw(clap::error::ErrorKind::MissingRequiredArgument, "rollouts needs --out DIR\n")
        })?;
        Ok(RolloutsArgs { run, out })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = RolloutsArgs::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Args for RolloutsArgs {
    fn augment_args(cmd: Command) -> Command {
        RunArgs::augment_args(cmd)
            .mut_arg(OUT_ID, |a| a.required(true).help("Results folder (then `phonebench export DIR`)"))
            .mut_arg(SCREENSHOTS_ID, |a| a.default_value("true").hide(true))
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        RolloutsArgs::augment_args(cmd)
    }
}

/// Runs the suite as `phonebench run` does (the same function), then prints how many episodes
/// the verifier confirmed and the export command to run next. `Ok(false)` as `run`: the run is
/// incomplete.
pub fn rollouts(args: &RolloutsArgs) -> Result<bool> {
    let complete = suite::run(&args.run)?;
    let counts = rollout_counts(&args.out)
        .with_context(|| format!("counting the verified episodes of {}", args.out.display()))?;
    out!(
        "verifier-confirmed: {} of {} scored episodes ({} agent steps){}",
        counts.confirmed,
        counts.scored,
        counts.confirmed_steps,
        if counts.infrastructure > 0 {
            format!("; {} infrastructure failures not scored", counts.infrastructure)
        } else {
            String::new()
        }
    )?;
    if counts.confirmed == 0 && counts.scored > 0 {
        out!(
            "next: phonebench export {} --format trajectory --all (no episode was confirmed: --all exports the failures, reward 0)",
            shell_word(&args.out)
        )?;
    } else {
        out!("next: phonebench export {} --format sft", shell_word(&args.out))?;
    }
    Ok(complete)
}

/// A path as one shell word: quoted when it holds anything a shell would split or expand.
fn shell_word(path: &Path) -> String {
    let text = path.display().to_string();
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c)) {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// `phonebench export`.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// The run folder (the --out of `phonebench rollouts` or `phonebench run`).
    dir: PathBuf,
    /// `sft`: one chat per agent step (LLaMA-Factory ShareGPT with images, TRL); `trajectory`:
    /// one record per step with the episode's reward on its last step.
    #[arg(long, value_parser = parse_format)]
    format: ExportFormat,
    /// The JSON Lines file (default: DIR/export/sft.jsonl or DIR/export/trajectory.jsonl); the
    /// dataset card README.md and images/ go beside it.
    #[arg(long)]
    out: Option<PathBuf>,
    /// `path`: screenshots copied into images/ beside the file and referenced relatively;
    /// `inline`: embedded as data:image/png;base64 URLs.
    #[arg(long, default_value = "path", value_parser = parse_images)]
    images: ImageMode,
    /// The syntax assistant turns are printed in: canonical (JSON), json (the same), sphinx,
    /// androidworld, mobileworld. Parsing a turn in this syntax gives the stored action back.
    #[arg(long, default_value = "canonical", value_parser = parse_syntax)]
    syntax: Syntax,
    /// Keep every scored episode, failures included with reward 0 (infrastructure failures are
    /// never exported).
    #[arg(long)]
    all: bool,
}

fn parse_format(s: &str) -> Result<ExportFormat, String> {
    s.parse()
}

fn parse_images(s: &str) -> Result<ImageMode, String> {
    s.parse()
}

fn parse_syntax(s: &str) -> Result<Syntax, String> {
    match s.parse::<Syntax>() {
        Ok(Syntax::Auto) => {
            Err("auto names no way of printing; choose canonical, json, sphinx, androidworld or mobileworld"
                .into())
        }
        Ok(syntax) => Ok(syntax),
        Err(e) => Err(e.to_string()),
    }
}

/// Writes the export and prints what it holds and what it left out.
pub fn export(args: &ExportArgs) -> Result<()> {
    let options = ExportOptions {
        format: args.format,
        images: args.images,
        syntax: args.syntax,
        all: args.all,
        out: args.out.clone(),
    };
    let summary = phonebench_runner::export(&args.dir, &options)
        .with_context(|| format!("exporting {} as {}", args.dir.display(), args.format))?;
    out!(
        "{}: {} records from {} episodes ({} verifier-confirmed), {} images",
        summary.file.display(),
        summary.records,
        summary.episodes_kept,
        summary.episodes_confirmed,
        summary.images
    )?;
    let mut left_out = Vec::new();
    if summary.episodes_failed_left_out > 0 {
        left_out.push(format!("{} failed episodes (--all keeps them)", summary.episodes_failed_left_out));
    }
    if summary.episodes_infrastructure > 0 {
        left_out.push(format!("{} infrastructure failures", summary.episodes_infrastructure));
    }
    if summary.steps_format_error > 0 {
        left_out.push(format!("{} steps whose output did not parse", summary.steps_format_error));
    }
    if summary.steps_inexpressible > 0 {
        left_out.push(format!("{} steps {} cannot express", summary.steps_inexpressible, args.syntax));
    }
    if summary.steps_earlier_trials > 0 {
        left_out.push(format!("{} steps of earlier trials", summary.steps_earlier_trials));
    }
    if !left_out.is_empty() {
        out!("left out: {}", left_out.join(", "))?;
    }
    out!("dataset card: {}", summary.card.display())?;
    Ok(())
}
