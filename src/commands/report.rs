//! `iomatrix report RUNS... -o FILE`: the runs as a report, its format from
//! FILE's extension (.html, .xlsx, .csv, .md, .json).

use anyhow::Context;
use clap::Args;
use iomatrix_analysis::{compare, compare_many, flag_cached, CellKey, Group, Region};
use iomatrix_core::UsageError;
use iomatrix_report::document::{Report, ReportGroup};
use iomatrix_report::kind::ReportKind;
use iomatrix_report::xlsx::ScalarRow;
use iomatrix_report::xlsx_line::swept_rows;
use iomatrix_report::{csv, html, json, markdown};
use iomatrix_report::{Matrix, MatrixCell};
use iomatrix_store::{CellStateKind, Store};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `iomatrix report RUNS... -o FILE`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The runs, a group per argument: run ids (12, #12), repeats of one setup (3,4,5: medians)
    /// or labels (server=netware); every other group of the baseline's suite is compared with the
    /// baseline, and with three or more such groups all of them stand in one table
    #[arg(value_name = "RUNS", required = true)]
    pub runs: Vec<String>,

    /// The group the others are compared with: as given (server=netware, 12) or by its position
    /// (1 for the first); default the first
    #[arg(long, value_name = "RUNS")]
    pub baseline: Option<String>,

    /// The report file; its extension chooses the format: .html, .xlsx, .csv, .md, .json. A
    /// previous iomatrix report of that format there is replaced; any other file only with
    /// --force; the results database (and its -wal, -shm) never, by any name
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,

    /// Replace FILE although it is not an iomatrix report of that format
    #[arg(long)]
    pub force: bool,

    /// Flag cells faster than this as served by a cache: 100Mbit, 1Gbit, 110MB/s, or a run (#N or
    /// run:N, never a bare number) whose figures are each cell's limit
    #[arg(long, value_name = "RATE|RUN")]
    pub limit: Option<String>,

    /// In the comparisons, also summarise this region of file sizes, e.g. ..2m
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
    pub files: Option<String>,

    /// In the comparisons, also summarise this region of record sizes, e.g. ..32k
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
    pub records: Option<String>,

    /// Take cells where some clients or connections failed (partial) into the medians and
    /// comparisons, marked; by default they are left out and listed. Failed cells never enter
    #[arg(long)]
    pub include_partial: bool,

    /// Take disturbed cells (which did not run for their time: the process was stopped, its
    /// clocks disagree, a timed cell ran far past its duration) into the medians and comparisons, marked; by
    /// default they are left out and listed with their cause (docs/measuring.md)
    #[arg(long)]
    pub include_disturbed: bool,
}

const FORMATS: &str = ".html, .xlsx, .csv, .md or .json";

pub fn run(args: ReportArgs, db: &Path) -> anyhow::Result<ExitCode> {
    let kind = kind_of(&args)?;
    // Judged before the report is made, and again as it is put in place.
    let output =
        iomatrix_guard::Output { path: &args.output, flag: "-o", kind: &kind, force: args.force, database: Some(db) }
            .check()?;
    // The command as typed, without the binary's folder.
    let made_by = std::iter::once("iomatrix".to_string()).chain(std::env::args().skip(1)).collect::<Vec<_>>().join(" ");
    let (bytes, groups, runs) = render(&args, &kind, db, made_by)?;
    output.write(&bytes)?;
    eprintln!("iomatrix: wrote {} ({groups} group(s), {runs} run(s))", args.output.display());
    Ok(ExitCode::SUCCESS)
}

/// The report's format, from `-o`'s extension.
pub fn kind_of(args: &ReportArgs) -> Result<ReportKind, UsageError> {
    let format = args.output.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).unwrap_or_default();
    let Some(kind) = ReportKind::of_extension(&format) else {
        return Err(UsageError::new(format!(
            "-o {}: the format comes from the extension; end the name with {FORMATS}",
            args.output.display()
        )));
    };
    Ok(kind)
}

/// The report's bytes in `kind`'s format, saying it was made by `made_by` (`iomatrix serve`
/// gives the command its page shows), with how many groups and runs it holds. Nothing is written.
pub fn render(
    args: &ReportArgs,
    kind: &ReportKind,
    db: &Path,
    made_by: String,
) -> anyhow::Result<(Vec<u8>, usize, usize)> {
    let region = Region {
        files: super::compare::range("--files", args.files.as_deref())?,
        records: super::compare::range("--records", args.records.as_deref())?,
    };
    let baseline = super::compare::baseline(&args.runs, args.baseline.as_deref())?;
    let store = Store::open(db)?;
    let resolved = super::select::resolve(&store, &args.runs)?;
    for (name, runs) in &resolved {
        one_suite(name, runs)?;
        super::select::repeats(name, runs)?;
    }
    let pooled = super::numbers::admit(args.include_partial, args.include_disturbed);
    let limit = args.limit.as_deref().map(|l| super::compare::limit(&store, l)).transpose()?;
    let groups: Vec<ReportGroup> = resolved
        .into_iter()
        .map(|(name, runs)| {
            let summary = Group::with(&name, &runs, crate::suites::shape_of(&runs), pooled);
            let flags = limit.as_ref().map(|l| flag_cached(&summary, l));
            let hosts = runs.iter().filter_map(crate::suites::host_figures).collect();
            ReportGroup { name, runs, summary, flags, hosts }
        })
        .collect();
    // Each other group against the baseline, where the suites match; three sides or more also
    // in one table.
    let base = &groups[baseline];
    let same_suite: Vec<usize> = (0..groups.len()).filter(|i| groups[*i].summary.suite == base.summary.suite).collect();
    let (comparisons, sides) = if same_suite.len() > 2 {
        let specs: Vec<String> = same_suite.iter().map(|i| args.runs[*i].clone()).collect();
        let runs: Vec<(String, Vec<iomatrix_store::StoredRun>)> =
            same_suite.iter().map(|i| (groups[*i].name.clone(), groups[*i].runs.clone())).collect();
        let ids: Vec<Vec<i64>> = runs.iter().map(|(_, runs)| runs.iter().map(|r| r.summary.id).collect()).collect();
        super::compare::one_run_one_side(&specs, &ids)?;
        let summaries: Vec<Group> = same_suite.iter().map(|i| groups[*i].summary.clone()).collect();
        let at = same_suite.iter().position(|i| *i == baseline).unwrap_or(0);
        let mut many = compare_many(&summaries, at, region);
        let labels: Vec<Vec<&[(String, String)]>> =
            same_suite.iter().map(|i| groups[*i].runs.iter().map(|r| &r.summary.labels[..]).collect()).collect();
        for (side, labels) in many.sides.iter_mut().zip(iomatrix_analysis::distinguishing_labels(&labels)) {
            side.labels = labels;
        }
        (many.pairs.clone(), Some(many))
    } else {
        let pairs = same_suite.iter().filter(|i| **i != baseline);
        (pairs.map(|i| compare(&base.summary, &groups[*i].summary, region)).collect(), None)
    };
    for g in groups.iter().filter(|g| g.summary.suite != base.summary.suite) {
        eprintln!(
            "iomatrix: {} ({}) and {} ({}) are different suites: shown, not compared",
            g.name, g.summary.suite, base.name, base.summary.suite
        );
    }
    let report = Report {
        made_by,
        made_at: iomatrix_store::format_utc(
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64),
        ),
        groups,
        baseline,
        comparisons,
        sides,
    };
    let bytes = match kind {
        ReportKind::Html => html::render(&report).into_bytes(),
        ReportKind::Markdown => markdown::render(&report).into_bytes(),
        ReportKind::Csv => csv::render(&report).into_bytes(),
        ReportKind::Json => serde_json::to_vec_pretty(&json::render(&report))?,
        ReportKind::Xlsx => workbook(&report).context("cannot build the workbook")?,
    };
    Ok((bytes, report.groups.len(), report.groups.iter().map(|g| g.runs.len()).sum::<usize>()))
}

/// A group is repeats of one setup: runs of different suites in one
/// argument (`3,4` with #3 IOzone and #4 access) are refused.
fn one_suite(name: &str, runs: &[iomatrix_store::StoredRun]) -> Result<(), UsageError> {
    let Some(first) = runs.first() else { return Ok(()) };
    match runs.iter().find(|r| r.summary.suite != first.summary.suite) {
        Some(other) => Err(UsageError::new(format!(
            "'{name}': run #{} is {} and run #{} is {}; a group holds repeats of one setup: give them as \
             separate arguments",
            first.summary.id, first.summary.suite, other.summary.id, other.summary.suite
        ))),
        None => Ok(()),
    }
}

/// Each run's status and conditions, named by its group and id: the workbook's conditions sheet.
fn conditions_of(report: &Report) -> Vec<(String, Vec<(String, String)>)> {
    report
        .groups
        .iter()
        .flat_map(|g| {
            g.runs.iter().map(move |r| {
                let mut pairs = vec![("status".to_string(), r.summary.status.as_str().to_string())];
                pairs.extend(iomatrix_report::text::run::condition_pairs(r));
                (format!("{}: run #{}", g.name, r.summary.id), pairs)
            })
        })
        .collect()
}

fn workbook(report: &Report) -> anyhow::Result<Vec<u8>> {
    let names: Vec<String> = report.groups.iter().map(|g| g.name.clone()).collect();
    let is_matrix = |k: &CellKey| k.variant.is_empty() && k.file_size.is_some() && k.record_size.is_some();
    let matrix_groups: Vec<&ReportGroup> = report.groups.iter().filter(|g| g.summary.shape.matrix).collect();
    let tests: BTreeSet<String> = matrix_groups
        .iter()
        .flat_map(|g| g.summary.cells.keys().filter(|k| is_matrix(k)).map(|k| k.test.clone()))
        .collect();
    let sheets: Vec<(String, Vec<Matrix>)> = tests
        .into_iter()
        .map(|test| {
            let matrices = matrix_groups
                .iter()
                .map(|g| Matrix {
                    title: format!("{}: {test}", g.name),
                    unit: "KB/s".into(),
                    cells: g
                        .summary
                        .cells
                        .iter()
                        .filter(|(k, _)| k.test == test && is_matrix(k))
                        .map(|(k, s)| MatrixCell {
                            file_kib: k.file_size.unwrap_or(0) / 1024,
                            record_kib: k.record_size.unwrap_or(0) / 1024,
                            value: s.median,
                            // A median that took in partial cells (--include-partial) is marked.
                            state: if s.partial_samples > 0 { CellStateKind::Partial } else { CellStateKind::Complete },
                        })
                        .collect(),
                })
                .collect();
            (test, matrices)
        })
        .collect();
    let scalar_keys: BTreeSet<&CellKey> =
        report.groups.iter().filter(|g| !g.summary.shape.matrix).flat_map(|g| g.summary.cells.keys()).collect();
    // Per matrix test, every matrix group's mean over the cells they all have (the HTML's bars
    // side by side): a row of the figures sheet, so the test gets a chart with every group in it.
    let side_by_side: Vec<ScalarRow> = match matrix_groups.len() {
        0 | 1 => Vec::new(),
        _ => sheets
            .iter()
            .filter_map(|(test, _)| {
                let common: Vec<&CellKey> = matrix_groups[0]
                    .summary
                    .cells
                    .keys()
                    .filter(|k| &k.test == test && is_matrix(k))
                    .filter(|k| matrix_groups.iter().all(|g| g.summary.cells.contains_key(*k)))
                    .collect();
                let mean = |g: &ReportGroup| {
                    (g.summary.shape.matrix && !common.is_empty()).then(|| {
                        common.iter().filter_map(|k| g.summary.cells.get(*k)).map(|s| s.median).sum::<f64>()
                            / common.len() as f64
                    })
                };
                (!common.is_empty()).then(|| ScalarRow {
                    metric: format!("{test}: mean over {} common cells", common.len()),
                    unit: "KB/s".into(),
                    values: report.groups.iter().map(mean).collect(),
                })
            })
            .collect(),
    };
    // A swept queue depth or size among the cells is a line chart, not a bar per value.
    let swept = swept_rows(&scalar_keys.iter().copied().collect::<Vec<_>>(), side_by_side.len());
    let scalars: Vec<ScalarRow> = side_by_side
        .into_iter()
        .chain(scalar_keys.into_iter().map(|k| ScalarRow {
            metric: if report.groups.iter().any(|g| g.summary.cells.get(k).is_some_and(|s| s.partial_samples > 0)) {
                format!("{}{}", k.describe(), iomatrix_report::document::PARTIAL_MARK)
            } else {
                k.describe()
            },
            unit: report.groups.iter().find_map(|g| g.summary.cells.get(k)).map_or("", |s| s.unit).to_string(),
            values: report.groups.iter().map(|g| g.summary.cells.get(k).map(|s| s.median)).collect(),
        }))
        .collect();
    let conditions = conditions_of(report);
    let not_complete: Vec<(String, Vec<String>)> =
        report.groups.iter().map(|g| (g.name.clone(), iomatrix_report::document::not_complete(g))).collect();
    let verdicts = iomatrix_report::document::verdict_rows(report);
    let parts = iomatrix_report::ReportBook {
        tests: &sheets,
        groups: &names,
        scalars: &scalars,
        sweeps: &swept,
        verdicts: &verdicts,
        not_complete: &not_complete,
        conditions: &conditions,
    };
    iomatrix_report::report_book(&parts, &iomatrix_report::Timed::of(report)).map_err(|e| anyhow::anyhow!("{e}"))
}
