//! `iomatrix sweep RUNS... --by PARAM|LABEL`: one setting over its levels
//! (seed 001's "Rate of Change" tables).

use clap::Args;
use iomatrix_analysis::{sweep, CellKey, Figure, Sweep, SweepLevel};
use iomatrix_core::{ByteSize, UsageError};
use iomatrix_store::{Store, StoredRun};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;
use std::process::ExitCode;

/// `iomatrix sweep RUNS... --by PARAM|LABEL`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The runs (ids, id lists of repeats, or label selectors); with --by LABEL each run's value of
    /// that label is its level
    #[arg(value_name = "RUNS", required = true)]
    pub runs: Vec<String>,

    /// What is swept: record, file, qd (queue depth of access specs), or a label key (e.g. cache)
    #[arg(long, value_name = "PARAM|LABEL")]
    pub by: String,

    /// Machine-readable output (schema "iomatrix.sweep/1", docs/json.md)
    #[arg(long)]
    pub json: bool,
}

/// The settings a cell carries itself; anything else is a label key.
const PARAMS: [&str; 3] = ["record", "file", "qd"];

pub fn run(args: SweepArgs, db: &Path) -> anyhow::Result<ExitCode> {
    let store = Store::open(db)?;
    let groups = super::select::resolve(&store, &args.runs)?;
    super::select::one_suite(&groups)?;
    let runs: Vec<&StoredRun> = groups.iter().flat_map(|(_, runs)| runs).collect();
    let (levels, unit) =
        if PARAMS.contains(&args.by.as_str()) { by_param(&args.by, &runs)? } else { by_label(&args.by, &runs)? };
    if levels.len() < 2 {
        return Err(UsageError::new(format!(
            "--by {}: the runs have {} level(s) of it; a sweep needs at least two",
            args.by,
            levels.len()
        ))
        .into());
    }
    let s = sweep(&args.by, &unit, levels);
    if args.json {
        let doc = serde_json::json!({"schema": "iomatrix.sweep/1", "sweep": s});
        crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    } else {
        crate::out::print(&text(&s))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Levels from a label: each run's value of `key`, numeric order where all are numbers.
fn by_label(key: &str, runs: &[&StoredRun]) -> Result<(Vec<SweepLevel>, String), UsageError> {
    let mut levels: BTreeMap<String, BTreeMap<CellKey, Vec<f64>>> = BTreeMap::new();
    let mut unit = String::new();
    for run in runs {
        let value = run.summary.labels.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone()).ok_or_else(|| {
            UsageError::new(format!(
                "--by {key}: run #{} has no label {key} (it has: {}); label runs with --label {key}=VALUE, or sweep by \
                 {}",
                run.summary.id,
                if run.summary.labels.is_empty() {
                    "none".to_string()
                } else {
                    run.summary.labels.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ")
                },
                PARAMS.join(", ")
            ))
        })?;
        let cells = levels.entry(value).or_default();
        for cell in &run.cell_results {
            if let Some(f) = Figure::of(cell) {
                unit = f.unit.to_string();
                cells.entry(CellKey::of(cell)).or_default().push(f.value);
            }
        }
    }
    let mut levels: Vec<SweepLevel> = levels.into_iter().map(|(level, cells)| SweepLevel { level, cells }).collect();
    if levels.iter().all(|l| l.level.parse::<f64>().is_ok()) {
        levels.sort_by(|a, b| a.level.parse::<f64>().unwrap_or(0.0).total_cmp(&b.level.parse::<f64>().unwrap_or(0.0)));
    }
    Ok((levels, unit))
}

/// Levels from the cells: record size, file size or queue depth, taken out of each cell's key.
fn by_param(param: &str, runs: &[&StoredRun]) -> Result<(Vec<SweepLevel>, String), UsageError> {
    let mut levels: BTreeMap<u64, BTreeMap<CellKey, Vec<f64>>> = BTreeMap::new();
    let mut unit = String::new();
    for run in runs {
        for cell in &run.cell_results {
            let Some(f) = Figure::of(cell) else { continue };
            let mut key = CellKey::of(cell);
            let level = match param {
                "record" => key.record_size.take(),
                "file" => key.file_size.take(),
                _ => {
                    let qd = cell.metrics["queue_depth"].as_u64();
                    key.variant =
                        key.variant.split(' ').filter(|p| !p.starts_with("qd=")).collect::<Vec<_>>().join(" ");
                    qd
                }
            };
            let Some(level) = level else { continue };
            unit = f.unit.to_string();
            levels.entry(level).or_default().entry(key).or_default().push(f.value);
        }
    }
    let name = |v: u64| if param == "qd" { v.to_string() } else { ByteSize(v).to_string() };
    Ok((levels.into_iter().map(|(v, cells)| SweepLevel { level: name(v), cells }).collect(), unit))
}

fn pct(v: Option<f64>) -> String {
    v.map(|p| format!("{p:+.1}%")).unwrap_or_else(|| "-".into())
}

pub fn text(s: &Sweep) -> String {
    let mut out = format!("sweep by {} ({}; medians where a level has several samples)\n", s.by, s.unit);
    let width = s.rows.iter().map(|r| r.cell.len()).max().unwrap_or(4).max(4);
    let _ = write!(out, "{:<width$}", "cell");
    for l in &s.levels {
        let _ = write!(out, " {l:>12}");
    }
    out.push('\n');
    for r in &s.rows {
        let _ = write!(out, "{:<width$}", r.cell);
        for v in &r.values {
            let _ = write!(out, " {:>12}", v.map(|v| format!("{v:.0}")).unwrap_or_else(|| "-".into()));
        }
        out.push('\n');
    }
    out.push_str("\nRate of change\n");
    let _ = write!(out, "{:<width$}", "cell");
    for w in s.levels.windows(2) {
        let _ = write!(out, " {:>12}", format!("{}->{}", w[0], w[1]));
    }
    let _ = writeln!(out, " {:>12}", "first->last");
    for r in &s.rows {
        let _ = write!(out, "{:<width$}", r.cell);
        for step in &r.steps_pct {
            let _ = write!(out, " {:>12}", pct(*step));
        }
        let _ = writeln!(out, " {:>12}", pct(r.first_to_last_pct));
    }
    let _ = write!(out, "{:<width$}", "average");
    for step in &s.average_steps_pct {
        let _ = write!(out, " {:>12}", pct(*step));
    }
    let _ = writeln!(out, " {:>12}", pct(s.average_first_to_last_pct));
    if !s.read_write.is_empty() {
        out.push_str("\nRead/write ratio\n");
        for (level, what, ratio) in &s.read_write {
            let _ = writeln!(out, "  {} = {level}, {what}: {ratio:.2}", s.by);
        }
    }
    out
}
