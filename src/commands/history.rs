//! `iomatrix history RUN`: one figure of a run over time, for the runs of its setup (its suite,
//! its plan without the number of repeats, its target as given), complete or partial, oldest
//! first: a line per group of consecutive runs with the same labels (a `note` label aside), each
//! group's median and band, and compare's verdict against the group before.

use iomatrix_analysis::{history, History};
use iomatrix_core::UsageError;
use iomatrix_report::text::history::{history_json, history_text};
use iomatrix_store::{Store, StoredRun};
use std::path::Path;
use std::process::ExitCode;

/// `iomatrix history RUN`.
#[derive(clap::Args, Debug)]
pub struct HistoryArgs {
    /// The run whose setup and target give the runs (see `iomatrix runs`)
    pub run: i64,

    /// The figure drawn, as compare names its row ("write 64m/4k", "read read p99"): a name, part
    /// of one, a unit (KB/s, IOPS, ops/s, ms) or a percentile (p99) that picks exactly one of the
    /// run's figures, as `compare --metric` reads it [default: the run's first headline rate;
    /// the text lists the others]
    #[arg(long, value_name = "NAME")]
    pub figure: Option<String>,

    /// Machine-readable output (schema: docs/json.md, "iomatrix.history/1")
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: HistoryArgs, db: &Path) -> anyhow::Result<ExitCode> {
    let store = Store::open(db)?;
    let (text, history) = history_output(&store, args.run, args.figure.as_deref())?;
    if args.json {
        crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&history_json(&history))?))?;
    } else {
        crate::out::print(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What `iomatrix history RUN [--figure NAME]` prints, and the history it prints: the viewer
/// shows these same bytes, and its chart is `iomatrix_report::history_svg` of that history. A run not
/// stored, not complete or partial, or a figure that names none or several of the run's is a
/// [`UsageError`].
pub fn history_output(store: &Store, run: i64, figure: Option<&str>) -> anyhow::Result<(String, History)> {
    let Some(summary) = store.load_run_summary(run)? else {
        return Err(UsageError::new(format!(
            "no run #{run} in {}; `iomatrix runs` lists the stored runs",
            store.path().display()
        ))
        .into());
    };
    let setup = store.runs_of_same_setup(run)?;
    if !setup.iter().any(|r| r.summary.id == run) {
        return Err(UsageError::new(format!(
            "run #{run} is {}: a history is drawn from complete and partial runs; give one of those (`iomatrix runs`)",
            summary.status.as_str()
        ))
        .into());
    }
    let mut runs: Vec<StoredRun> = Vec::with_capacity(setup.len());
    for r in &setup {
        // Summarised, as compare reads its sides: a history reads no figure over time.
        runs.push(store.load_run_summarised(r.summary.id)?.ok_or_else(|| {
            anyhow::anyhow!("run #{} was removed while its history was read: ask again", r.summary.id)
        })?);
    }
    let started_at_ms: Vec<i64> = setup.iter().map(|r| r.started_at_ms).collect();
    let shape = crate::suites::shape_of(&runs);
    let history = history(run, &runs, &started_at_ms, shape, figure).map_err(UsageError::from)?;
    Ok((history_text(&history), history))
}
