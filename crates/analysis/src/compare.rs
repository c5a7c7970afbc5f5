//! B against A, cell by cell (seed 000's ratio matrices, seed 003's
//! "% change" tables).

pub use crate::bound::BoundEffect;
use crate::cells::{CellKey, CellStats, Group, LeftOut, Partial};
use crate::gate::{hold, Candidate, Gate, FAMILY_ALPHA};
use crate::headline::{headline_tables, published_sides, HeadlineTable, PublishedSide};
use crate::hint::{sweep_hint, SweepHint};
use crate::noise::{judge, Judgement};
use crate::outlier::Flagged;
pub use crate::row::{change_pct, ScalarRow};
use crate::BadFlag;
use iomatrix_store::reader::Flat;
use iomatrix_store::{ExtentFigures, OpSummary};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A part of the matrix ("the sweet spot"): inclusive bounds, open where None.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Region {
    /// File sizes in bytes: (lowest, highest), inclusive; None leaves that end open.
    pub files: (Option<u64>, Option<u64>),
    /// Record sizes in bytes: (lowest, highest), inclusive; None leaves that end open.
    pub records: (Option<u64>, Option<u64>),
}

impl Region {
    /// Whether no bound is set: the region is the whole matrix.
    pub fn is_everything(&self) -> bool {
        *self == Region::default()
    }

    /// Whether the cell of this file and record size (bytes) lies inside the region.
    pub fn contains(&self, file: u64, record: u64) -> bool {
        let within =
            |v: u64, (lo, hi): (Option<u64>, Option<u64>)| lo.is_none_or(|l| v >= l) && hi.is_none_or(|h| v <= h);
        within(file, self.files) && within(record, self.records)
    }
}

/// A plan parameter or environment fact one side does not know: `jobs[0].options.bs`, unknown
/// in "A".
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotKnown {
    /// The parameter's or fact's name, e.g. `jobs[0].options.bs`.
    pub name: String,
    /// The side that does not know it: "A" or "B".
    pub unknown_in: &'static str,
}

impl NotKnown {
    /// `jobs[0].options.bs (unknown in A)`.
    pub fn describe(&self) -> String {
        format!("{} (unknown in {})", self.name, self.unknown_in)
    }
}

/// Mean change and wins over a set of cells.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Tally {
    /// How many cells (ratios) it is over.
    pub cells: usize,
    /// Mean of the ratios B/A, minus one, in %.
    pub mean_change_pct: f64,
    /// Cells where B/A is below 1: A was faster.
    pub a_wins: usize,
    /// Cells where B/A is above 1: B was faster.
    pub b_wins: usize,
    /// Cells where B/A is exactly 1.
    pub ties: usize,
}

impl Tally {
    pub(crate) fn of(ratios: &[f64]) -> Tally {
        if ratios.is_empty() {
            return Tally::default();
        }
        let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
        Tally {
            cells: ratios.len(),
            mean_change_pct: (mean - 1.0) * 100.0,
            a_wins: ratios.iter().filter(|r| **r < 1.0).count(),
            b_wins: ratios.iter().filter(|r| **r > 1.0).count(),
            ties: ratios.iter().filter(|r| **r == 1.0).count(),
        }
    }
}

/// One matrix test: the ratio matrix B/A (medians over each side's runs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatrixComparison {
    /// The test's name ("write", "random read").
    pub test: String,
    /// The unit of both sides' figures ("KB/s").
    pub unit: &'static str,
    /// Rows: file sizes; columns: record sizes (bytes), as in IOzone's tables.
    pub file_sizes: Vec<u64>,
    /// The columns' record sizes in bytes, ascending.
    pub record_sizes: Vec<u64>,
    /// `ratios[file][record]`: B/A, None where either side lacks the cell.
    pub ratios: Vec<Vec<Option<f64>>>,
    /// The record-size view: the mean ratio of each column.
    pub by_record: Vec<(u64, f64)>,
    /// The file-size view: the mean ratio of each row.
    pub by_file: Vec<(u64, f64)>,
    /// Mean change and wins over every cell both sides have.
    pub overall: Tally,
    /// The same over the region asked for, if any.
    pub region: Option<Tally>,
    /// `partial[file][record]`: a side's median there took in samples of partial cells.
    pub partial: Vec<Vec<bool>>,
    /// Cells left out of every mean above at the user's word (`--exclude`), as "write 64k/4k":
    /// their ratios still stand in the matrix.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<String>,
}

/// A plan parameter or environment fact that differs: "interleave: 1 vs 5".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    /// The parameter's or fact's name.
    pub name: String,
    /// A's value, as shown.
    pub a: String,
    /// B's value, as shown.
    pub b: String,
}

/// One figure of one operation (seed 003's rows): A and B (medians over the
/// samples), the change, and its verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OperationRow {
    /// The operation's name, as its suite stores it.
    pub operation: String,
    /// "mean", "p50", "p99", "max" (times, ms) or "rate" (operations/s).
    pub figure: &'static str,
    /// "ms" for times, "ops/s" for a rate.
    pub unit: &'static str,
    /// A's median.
    pub a: f64,
    /// B's median.
    pub b: f64,
    /// B against A: (B - A) / A, in %.
    pub change_pct: f64,
    /// Faster, slower or within noise, from each side's samples.
    pub verdict: Judgement,
    /// A side's samples include partial cells' (`--include-partial`).
    pub partial: bool,
}

/// Seed 003's response-time table for one phase (a cell: "write", "read").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OperationTable {
    /// The phase (the cell's test).
    pub phase: String,
    /// One row per operation and figure.
    pub rows: Vec<OperationRow>,
}

/// Every compared figure with its verdict, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct NoiseSummary {
    /// Figures B was faster at, beyond noise.
    pub faster: usize,
    /// Figures B was slower at, beyond noise.
    pub slower: usize,
    /// Figures whose change is within the run-to-run noise.
    pub within_noise: usize,
    /// Figures with too few samples on a side for a verdict.
    pub no_verdict: usize,
    /// Figures not counted on their own because they are part of an effect counted once
    /// ([`BoundEffect`]): the compared figures are the counts above plus these.
    #[serde(skip_serializing_if = "is_zero")]
    pub bound: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Latency percentiles of one operation side by side (medians over runs), ns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyRow {
    /// The cell, as the tables name it.
    pub cell: String,
    /// The operation ("read", "write", or the suite's own).
    pub operation: String,
    /// (percentile name, A, B)
    pub percentiles: Vec<(String, f64, f64)>,
}

/// B against A ([`compare`]): what differs between the sides, each figure's change and verdict,
/// and the cells one side lacks or left out.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// Side A's name, as the user gave it ("#12").
    pub a: String,
    /// Side B's name.
    pub b: String,
    /// The ids of A's runs.
    pub a_runs: Vec<i64>,
    /// The ids of B's runs.
    pub b_runs: Vec<i64>,
    /// The suite both sides ran.
    pub suite: String,
    /// Plan parameters (every flag, by its plan name) that differ between the sides.
    pub plan_differences: Vec<Difference>,
    /// Environment facts that differ: kernel, CPU, RAM, file system, mount options,
    /// block device and its queue, `vm.dirty_*`, iomatrix version.
    pub environment_differences: Vec<Difference>,
    /// Plan parameters and facts one side does not know (imported runs): not differences.
    pub unknown: Vec<String>,
    /// `unknown`'s plan parameters and environment facts apart, for the text to count each kind.
    #[serde(skip)]
    pub unknown_plan: Vec<NotKnown>,
    /// The environment facts of `unknown`.
    #[serde(skip)]
    pub unknown_environment: Vec<NotKnown>,
    /// How many plan parameters and environment facts both sides know: those compared.
    #[serde(skip)]
    pub plan_compared: usize,
    /// How many environment facts both sides know: those compared.
    #[serde(skip)]
    pub environment_compared: usize,
    /// Differences in the conditions that produced the figures, to state above the tables.
    pub condition_differences: Vec<String>,
    /// One ratio matrix per matrix test, for suites whose cells form matrices.
    pub matrices: Vec<MatrixComparison>,
    /// One row per figure, for scalar suites.
    pub scalars: Vec<ScalarRow>,
    /// Latency percentiles per cell and operation.
    pub latency: Vec<LatencyRow>,
    /// Per phase, each operation's mean, p50, p99 (or slowest) and rate.
    pub operations: Vec<OperationTable>,
    /// Seed 003's headline rows per phase of connections and per backup walk ([`headline_tables`]);
    /// left out of the JSON where there are none (other suites).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub headline: Vec<HeadlineTable>,
    /// One row per throughput-latency curve both sides have: its maximum within the bound and
    /// its overall response time, judged ([`crate::curve`]); left out of the JSON where none is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub curves: Vec<crate::CurveRow>,
    /// The sides that are published tables, not measured runs; left out of the JSON where none is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub published: Vec<PublishedSide>,
    /// Matrix cells' verdicts, as `ratios` is laid out (None where no ratio).
    pub matrix_verdicts: Vec<Vec<Vec<Option<Judgement>>>>,
    /// Verdicts over every compared figure (matrix cells, metrics, operations), each set of
    /// figures bound together by construction counted once ([`Comparison::effects`]).
    pub noise: NoiseSummary,
    /// The sets of figures that move together by construction (a closed loop's per-operation
    /// rates), each one effect in `noise`; left out of the JSON where there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub effects: Vec<BoundEffect>,
    /// A's samples flagged as outliers or descheduled cells ([`crate::outlier`]): still in its
    /// medians, marked beside their figures; left out of the JSON where there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flagged_a: Vec<Flagged>,
    /// B's flagged samples, as `flagged_a` is A's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flagged_b: Vec<Flagged>,
    /// Cells only one side has: listed, never silently dropped.
    pub only_in_a: Vec<String>,
    /// Cells only B has.
    pub only_in_b: Vec<String>,
    /// Where the sides' cells differ in one swept parameter only (QD 1 against QD 32): the
    /// sweep that compares them level by level.
    pub sweep_hint: Option<SweepHint>,
    /// Stored cells of each side kept out of its medians and verdicts because they are not
    /// whole (some or all of their clients or connections failed).
    pub left_out_a: Vec<LeftOut>,
    /// B's cells left out, as `left_out_a` is A's.
    pub left_out_b: Vec<LeftOut>,
    /// Whether partial cells entered the medians (`--include-partial`; failed cells never do).
    pub partial: Partial,
    /// The part of the matrices `--files` and `--records` asked about; everything when not given.
    pub region: Region,
}

const PERCENTILES: [(&str, SummaryField); 5] = [
    ("p50", |s| s.p50_ns),
    ("p90", |s| s.p90_ns),
    ("p99", |s| s.p99_ns),
    ("p99.9", |s| s.p99_9_ns),
    ("max", |s| s.max_ns),
];

/// B against A. Cells with a file and a record size and no access-spec
/// variant form matrices (one per test); all others are scalar rows.
pub fn compare(a: &Group, b: &Group, region: Region) -> Comparison {
    let keys_a: BTreeSet<&CellKey> = a.cells.keys().collect();
    let keys_b: BTreeSet<&CellKey> = b.cells.keys().collect();
    // A cell the other side stored but left out is named with the left-out cells, not as one side's alone.
    let left_out = |g: &Group, key: &CellKey| g.left_out.iter().any(|l| &l.key == key);
    let only_in_a = keys_a.difference(&keys_b).filter(|k| !left_out(b, k)).map(|k| k.describe()).collect();
    let only_in_b = keys_b.difference(&keys_a).filter(|k| !left_out(a, k)).map(|k| k.describe()).collect();
    let both: Vec<&CellKey> = keys_a.intersection(&keys_b).copied().collect();

    let mut by_test: BTreeMap<&str, Vec<&CellKey>> = BTreeMap::new();
    let mut scalars = Vec::new();
    for key in &both {
        let is_matrix = key.file_size.is_some() && key.record_size.is_some() && key.variant.is_empty();
        if is_matrix && a.shape.matrix {
            by_test.entry(key.test.as_str()).or_default().push(key);
        } else {
            let (sa, sb) = (&a.cells[*key], &b.cells[*key]);
            if a.shape.leads_with_operations {
                scalars.extend(operations_row(key, a, b));
            }
            scalars.push(rate_row(key, sa, sb));
        }
    }
    let mut scalars = crate::beside::interleave(scalars, a, b);
    scalars.extend(extent_rows(a, b));
    let matrices: Vec<MatrixComparison> =
        by_test.into_iter().map(|(test, keys)| matrix(test, &keys, a, b, region)).collect();
    let matrix_verdicts: Vec<Vec<Vec<Option<Judgement>>>> = matrices.iter().map(|m| matrix_verdicts(m, a, b)).collect();
    let operations = operation_tables(a, b);
    let effects = crate::bound::effects(a, b, &scalars, &operations);
    let curves = crate::curve::curve_rows(a, b);
    let mut noise = crate::bound::count(&matrix_verdicts, &scalars, &operations, &effects);
    crate::curve::count(&mut noise, &curves);
    let (plan_differences, unknown_plan, plan_compared) = differences(&a.plans, &b.plans, &[]);
    let (environment_differences, unknown_environment, environment_compared) =
        differences(&a.environments, &b.environments, &["target.free_bytes"]);
    let unknown = unknown_plan.iter().chain(&unknown_environment).map(NotKnown::describe).collect();
    fn stored(g: &Group) -> Vec<&CellKey> {
        g.cells.keys().chain(g.left_out.iter().map(|l| &l.key)).collect()
    }
    let differing: Vec<String> = plan_differences.iter().map(|d| d.name.clone()).collect();
    let sweep_hint = sweep_hint(stored(a), stored(b), (&a.run_ids, &b.run_ids), &differing, a.shape);
    Comparison {
        a: a.name.clone(),
        b: b.name.clone(),
        a_runs: a.run_ids.clone(),
        b_runs: b.run_ids.clone(),
        suite: a.suite.clone(),
        plan_differences,
        environment_differences,
        unknown,
        unknown_plan,
        unknown_environment,
        plan_compared,
        environment_compared,
        condition_differences: condition_differences(a, b),
        matrices,
        scalars,
        latency: latency_rows(a, b),
        operations,
        headline: headline_tables(a, b),
        curves,
        published: published_sides(a, b),
        matrix_verdicts,
        noise,
        effects,
        flagged_a: a.flagged.clone(),
        flagged_b: b.flagged.clone(),
        only_in_a,
        only_in_b,
        sweep_hint,
        left_out_a: a.left_out.clone(),
        left_out_b: b.left_out.clone(),
        partial: if a.partial == Partial::Included || b.partial == Partial::Included {
            Partial::Included
        } else {
            Partial::LeftOut
        },
        region,
    }
}

/// A cell's operations per second, A against B: the row a suite that leads with them
/// ([`crate::SuiteShape::leads_with_operations`]) shows before the cell's KB/s.
fn operations_row(key: &CellKey, a: &Group, b: &Group) -> Option<ScalarRow> {
    Some(rate_row(key, a.ops_per_sec.get(key)?, b.ops_per_sec.get(key)?))
}

/// A cell's rate (higher is better), A's samples against B's: its medians, change and verdict.
fn rate_row(key: &CellKey, sa: &CellStats, sb: &CellStats) -> ScalarRow {
    ScalarRow {
        metric: key.describe(),
        unit: sa.unit,
        a: sa.median,
        b: sb.median,
        change_pct: change_pct(sa.median, sb.median),
        verdict: judge(&sa.values, &sb.values, true),
        partial: sa.partial_samples + sb.partial_samples > 0,
    }
}

fn matrix(test: &str, keys: &[&CellKey], a: &Group, b: &Group, region: Region) -> MatrixComparison {
    let file_sizes: Vec<u64> = keys.iter().filter_map(|k| k.file_size).collect::<BTreeSet<_>>().into_iter().collect();
    let record_sizes: Vec<u64> =
        keys.iter().filter_map(|k| k.record_size).collect::<BTreeSet<_>>().into_iter().collect();
    let mut ratios = vec![vec![None; record_sizes.len()]; file_sizes.len()];
    let mut partial = vec![vec![false; record_sizes.len()]; file_sizes.len()];
    let mut all = Vec::new();
    let mut in_region = Vec::new();
    let mut unit = "KB/s";
    for key in keys {
        let (Some(f), Some(r)) = (key.file_size, key.record_size) else { continue };
        let (sa, sb) = (&a.cells[*key], &b.cells[*key]);
        unit = sa.unit;
        if sa.median <= 0.0 {
            continue;
        }
        let ratio = sb.median / sa.median;
        let (i, j) = (file_sizes.binary_search(&f).unwrap_or(0), record_sizes.binary_search(&r).unwrap_or(0));
        ratios[i][j] = Some(ratio);
        partial[i][j] = sa.partial_samples + sb.partial_samples > 0;
        all.push(ratio);
        if region.contains(f, r) {
            in_region.push(ratio);
        }
    }
    let mean = |v: Vec<f64>| if v.is_empty() { None } else { Some(v.iter().sum::<f64>() / v.len() as f64) };
    let by_record = record_sizes
        .iter()
        .enumerate()
        .filter_map(|(j, r)| mean(ratios.iter().filter_map(|row| row[j]).collect()).map(|m| (*r, m)))
        .collect();
    let by_file = file_sizes
        .iter()
        .enumerate()
        .filter_map(|(i, f)| mean(ratios[i].iter().flatten().copied().collect()).map(|m| (*f, m)))
        .collect();
    MatrixComparison {
        test: test.to_string(),
        unit,
        file_sizes,
        record_sizes,
        ratios,
        by_record,
        by_file,
        overall: Tally::of(&all),
        region: (!region.is_everything()).then(|| Tally::of(&in_region)),
        partial,
        excluded: Vec::new(),
    }
}

fn matrix_verdicts(m: &MatrixComparison, a: &Group, b: &Group) -> Vec<Vec<Option<Judgement>>> {
    m.file_sizes
        .iter()
        .enumerate()
        .map(|(i, f)| {
            m.record_sizes
                .iter()
                .enumerate()
                .map(|(j, r)| {
                    m.ratios[i][j]?;
                    let key = CellKey {
                        test: m.test.clone(),
                        file_size: Some(*f),
                        record_size: Some(*r),
                        variant: String::new(),
                    };
                    Some(judge(&a.cells.get(&key)?.values, &b.cells.get(&key)?.values, true))
                })
                .collect()
        })
        .collect()
}

/// Every figure of A held against B by `--fail-if-slower` (`threshold` 0.05: 5%): the headline
/// rates, or what `metric` names (a unit, a percentile, part of a name); see [`crate::hold`].
pub fn regressions(
    c: &Comparison,
    a: &Group,
    b: &Group,
    threshold: f64,
    metric: Option<&str>,
) -> Result<Gate, BadFlag> {
    hold(gate_candidates(c, a, b), metric, threshold, FAMILY_ALPHA)
}

/// Every figure the gate could hold B to: A's cells (rates), each operation's figures (its
/// rate and its times), and those of A that B lacks or that were left out, with why.
pub fn gate_candidates(c: &Comparison, a: &Group, b: &Group) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (key, sa) in &a.cells {
        let samples = match b.cells.get(key) {
            Some(sb) => Ok((sa.values.clone(), sb.values.clone())),
            None => Err(missing_in_b(b, key)),
        };
        let request_bytes = key.record_size.filter(|_| sa.unit == "KB/s");
        out.push(Candidate {
            name: key.describe(),
            unit: sa.unit,
            figure: "",
            higher_is_better: true,
            samples,
            request_bytes,
        });
    }
    for l in a.left_out.iter().filter(|l| !a.cells.contains_key(&l.key)) {
        let unit = b.cells.get(&l.key).map_or("", |s| s.unit);
        let samples = Err(format!("A's cell left out: {}", l.state.describe()));
        let request_bytes = l.key.record_size.filter(|_| unit == "KB/s");
        out.push(Candidate { name: l.cell.clone(), unit, figure: "", higher_is_better: true, samples, request_bytes });
    }
    for table in &c.operations {
        for row in &table.rows {
            let name = format!("{} {} {}", table.phase, row.operation, row.figure);
            let Some(samples) = operation_samples(a, b, &table.phase, &row.operation, row.figure) else { continue };
            let higher_is_better = row.figure == "rate";
            let samples = Ok(samples);
            out.push(Candidate {
                name,
                unit: row.unit,
                figure: row.figure,
                higher_is_better,
                samples,
                request_bytes: None,
            });
        }
    }
    for (key, op) in a.latency.keys().filter(|k| !b.latency.contains_key(*k)) {
        // The operation's rate stands for its figures: a headline rate B lacks.
        let name = format!("{} {op}", key.describe());
        let samples = Err(missing_in_b(b, key));
        out.push(Candidate {
            name,
            unit: "ops/s",
            figure: "rate",
            higher_is_better: true,
            samples,
            request_bytes: None,
        });
    }
    out
}

/// Why B has no figure of a cell A has.
fn missing_in_b(b: &Group, key: &CellKey) -> String {
    match b.left_out.iter().find(|l| &l.key == key) {
        Some(l) => format!("B's cell left out: {} in run #{}", l.state.describe(), l.run),
        None => "not in B".to_string(),
    }
}

/// A time an operation's summary holds, in ns.
type SummaryField = fn(&OpSummary) -> Option<f64>;

/// The figures of each operation: its name, the time in the summary (None: the rate), and its
/// unit. Times in ms as the seeds print them.
const OPERATION_FIGURES: [(&str, Option<SummaryField>, &str); 5] = [
    ("mean", Some(|s| s.mean_ns), "ms"),
    ("p50", Some(|s| s.p50_ns), "ms"),
    ("p99", Some(|s| s.p99_ns), "ms"),
    ("max", Some(|s| s.max_ns), "ms"),
    ("rate", None, "ops/s"),
];

/// One sample of one figure from a stored summary: ms, or operations per second of the cell's wall time.
fn operation_value(summary: &OpSummary, figure: &str) -> Option<f64> {
    match OPERATION_FIGURES.iter().find(|f| f.0 == figure)?.1 {
        None => {
            let wall = summary.cell_wall_ns.filter(|w| *w > 0.0)?;
            Some(summary.count? / (wall / 1e9))
        }
        Some(time) => time(summary).map(|ns| ns / 1e6),
    }
}

fn operation_samples(a: &Group, b: &Group, phase: &str, op: &str, figure: &str) -> Option<(Vec<f64>, Vec<f64>)> {
    let find = |g: &Group| {
        g.latency
            .iter()
            .find(|((k, o), _)| k.describe() == phase && o == op)
            .map(|(_, s)| s.iter().filter_map(|v| operation_value(v, figure)).collect::<Vec<f64>>())
    };
    Some((find(a)?, find(b)?))
}

/// Seed 003's tables: per phase, each operation's mean, p50, p99 (max where a suite
/// records no percentiles, as Bonnie) and rate, A, B and % change.
fn operation_tables(a: &Group, b: &Group) -> Vec<OperationTable> {
    // By the phase's key, not its name: phases list in the cells' order (qd=4 before qd=16).
    let mut tables: BTreeMap<CellKey, Vec<OperationRow>> = BTreeMap::new();
    for ((key, op), sa) in &a.latency {
        let Some(sb) = b.latency.get(&(key.clone(), op.clone())) else { continue };
        let has_percentiles = sa[0].percentiles;
        for (figure, _, unit) in OPERATION_FIGURES {
            // Percentiles where stored; the slowest operation only where they are not.
            let skip = match figure {
                "max" => has_percentiles,
                "p50" | "p99" => !has_percentiles,
                _ => false,
            };
            if skip {
                continue;
            }
            let va: Vec<f64> = sa.iter().filter_map(|v| operation_value(v, figure)).collect();
            let vb: Vec<f64> = sb.iter().filter_map(|v| operation_value(v, figure)).collect();
            if va.is_empty() || vb.is_empty() {
                continue;
            }
            let (ma, mb) = (crate::median(&va), crate::median(&vb));
            tables.entry(key.clone()).or_default().push(OperationRow {
                operation: op.clone(),
                figure,
                unit,
                a: ma,
                b: mb,
                change_pct: change_pct(ma, mb),
                verdict: judge(&va, &vb, figure == "rate"),
                partial: sa.iter().chain(sb).any(|v| v.partial),
            });
        }
    }
    // In the order a file is used (seed 003's tables), then by name; figures as listed above.
    const ORDER: [&str; 6] = ["create", "open", "write", "read", "fsync", "close"];
    let rank = |op: &str| ORDER.iter().position(|o| *o == op).unwrap_or(ORDER.len());
    let figure = |f: &str| OPERATION_FIGURES.iter().position(|x| x.0 == f).unwrap_or(0);
    tables
        .into_iter()
        .map(|(key, mut rows)| {
            rows.sort_by(|x, y| {
                (rank(&x.operation), &x.operation, figure(x.figure)).cmp(&(
                    rank(&y.operation),
                    &y.operation,
                    figure(y.figure),
                ))
            });
            OperationTable { phase: key.describe(), rows }
        })
        .collect()
}

/// The keys whose values differ between the sides (values of several runs
/// of a side joined with " / "), and those one side does not know: absent
/// from its runs (an imported run's plan and environment say little) or
/// recorded as unknown; and how many keys both sides know (compared). A stored null reads as the
/// reader shows it: "none" for a plan (a flag not given), "unknown" for an environment (a fact
/// not read).
fn differences(fa: &[Flat], fb: &[Flat], skip: &[&str]) -> (Vec<Difference>, Vec<NotKnown>, usize) {
    let keys: BTreeSet<&String> = fa.iter().chain(fb).flat_map(|m| m.keys()).collect();
    let (mut diffs, mut unknown, mut known) = (Vec::new(), Vec::new(), 0);
    for key in keys.into_iter().filter(|k| !skip.contains(&k.as_str())) {
        let values = |side: &[Flat]| -> BTreeSet<String> {
            side.iter().map(|m| m.get(key).cloned().unwrap_or_else(|| "unknown".into())).collect()
        };
        let (va, vb) = (values(fa), values(fb));
        let not_known = |v: &BTreeSet<String>| v.iter().all(|s| s == "unknown");
        known += usize::from(!not_known(&va) && !not_known(&vb));
        if va == vb {
            continue;
        }
        let join = |v: &BTreeSet<String>| v.iter().cloned().collect::<Vec<_>>().join(" / ");
        if not_known(&va) || not_known(&vb) {
            let side = if not_known(&va) { "A" } else { "B" };
            unknown.push(NotKnown { name: key.clone(), unknown_in: side });
        } else {
            diffs.push(Difference { name: key.clone(), a: join(&va), b: join(&vb) });
        }
    }
    (diffs, unknown, known)
}

fn condition_differences(a: &Group, b: &Group) -> Vec<String> {
    let mut out = Vec::new();
    let values = |g: &Group, name: &str| -> BTreeSet<String> {
        g.conditions
            .iter()
            .map(|c| c.iter().find(|(n, _)| n == name).map_or_else(|| "unknown".into(), |(_, fact)| fact.shown()))
            .collect()
    };
    for name in condition_names(a, b) {
        let (va, vb) = (values(a, &name), values(b, &name));
        let join = |v: &BTreeSet<String>| v.iter().cloned().collect::<Vec<_>>().join(" / ");
        if va.len() > 1 {
            out.push(format!("{name} differs within A ({}): {}", a.name, join(&va)));
        }
        if vb.len() > 1 {
            out.push(format!("{name} differs within B ({}): {}", b.name, join(&vb)));
        }
        if va != vb {
            out.push(format!("{name}: A ({}) {}, B ({}) {}", a.name, join(&va), b.name, join(&vb)));
        }
    }
    out
}

/// The conditions the sides' runs name, each once, in the order the runs give them.
fn condition_names(a: &Group, b: &Group) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (name, _) in a.conditions.iter().chain(&b.conditions).flatten() {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}

/// Per cell both sides mapped with FIEMAP: extents per file and fragmented files (medians over
/// the runs), as rows beside the rates they explain.
fn extent_rows(a: &Group, b: &Group) -> Vec<ScalarRow> {
    let mut rows = Vec::new();
    for (key, xa) in &a.extents {
        let Some(xb) = b.extents.get(key) else { continue };
        let med = |s: &[ExtentFigures], f: &dyn Fn(&ExtentFigures) -> Option<f64>| {
            crate::median(&s.iter().filter_map(f).collect::<Vec<_>>())
        };
        let per_file = |v: &ExtentFigures| Some(v.total_extents? as f64 / v.files as f64);
        let fragmented = |v: &ExtentFigures| v.fragmented_files;
        for (what, unit, f) in [
            ("extents per file", "extents", &per_file as &dyn Fn(&ExtentFigures) -> Option<f64>),
            ("fragmented files", "files", &fragmented),
        ] {
            let (va, vb) = (med(xa, f), med(xb, f));
            let samples = |s: &[ExtentFigures]| s.iter().filter_map(f).collect::<Vec<f64>>();
            // A side that does not know the figure (a published table gives no fragmented files)
            // has no row: its median of nothing would read 0.
            if samples(xa).is_empty() || samples(xb).is_empty() {
                continue;
            }
            rows.push(ScalarRow {
                // Fewer extents, fewer fragmented files: better.
                verdict: judge(&samples(xa), &samples(xb), false),
                metric: format!("{} {what}", key.describe()),
                unit,
                a: va,
                b: vb,
                // From none to some is no percentage (NaN: shown as "-", null in JSON).
                change_pct: if va == 0.0 && vb != 0.0 { f64::NAN } else { change_pct(va, vb) },
                partial: false,
            });
        }
    }
    rows
}

fn latency_rows(a: &Group, b: &Group) -> Vec<LatencyRow> {
    let mut rows = Vec::new();
    for ((key, op), summaries_a) in &a.latency {
        if !summaries_a[0].percentiles {
            continue; // Bonnie's tests: in the operation tables only
        }
        let Some(summaries_b) = b.latency.get(&(key.clone(), op.clone())) else { continue };
        let med = |s: &[OpSummary], field: SummaryField| crate::median(&s.iter().filter_map(field).collect::<Vec<_>>());
        let percentiles = PERCENTILES
            .iter()
            .map(|(name, field)| (name.to_string(), med(summaries_a, *field), med(summaries_b, *field)))
            .collect();
        rows.push(LatencyRow { cell: key.describe(), operation: op.clone(), percentiles });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cells::CellStats;
    use crate::SuiteShape;

    const MATRIX: SuiteShape = SuiteShape { matrix: true, whole_cell_latency: None, ..SuiteShape::PLAIN };

    fn group(name: &str, cells: &[((u64, u64), Vec<f64>)]) -> Group {
        Group {
            name: name.into(),
            run_ids: vec![1],
            suite: "iozone".into(),
            shape: MATRIX,
            cells: cells
                .iter()
                .map(|((f, r), v)| {
                    let key = CellKey {
                        test: "read".into(),
                        file_size: Some(*f),
                        record_size: Some(*r),
                        variant: String::new(),
                    };
                    (key, CellStats::of(v.clone(), "KB/s"))
                })
                .collect(),
            partial: Partial::LeftOut,
            disturbed: Default::default(),
            left_out: Vec::new(),
            conditions: vec![conditions(serde_json::json!({"backend": "psync", "direct": false, "clients": 1}))],
            published: vec![false],
            plans: vec![plan(serde_json::json!({"interleave": null}))],
            environments: vec![environment(serde_json::json!({"kernel": "6.18"}))],
            latency: BTreeMap::new(),
            extents: BTreeMap::new(),
            beside: BTreeMap::new(),
            figures: Vec::new(),
            flagged: Vec::new(),
            ops_per_sec: BTreeMap::new(),
            bound: Vec::new(),
            curves: BTreeMap::new(),
        }
    }

    /// A closed loop's per-operation rates, all 15% lower in B, are one effect in the verdict
    /// counts with the phase's operations per second, which leads the scalar rows; their
    /// latencies are counted each on its own.
    #[test]
    fn a_closed_loops_rates_count_as_one_effect_and_ops_per_second_leads() {
        let phase = CellKey { test: "run".into(), file_size: None, record_size: Some(16384), variant: String::new() };
        let side = |name: &str, scale: f64| {
            let mut g = group(name, &[]);
            g.shape = SuiteShape { leads_with_operations: true, ..SuiteShape::PLAIN };
            g.bound = vec![iomatrix_store::reader::BoundRates {
                test: "run".into(),
                operations: vec!["open".into(), "read".into(), "close".into()],
                what: "flow loop",
            }];
            let jitter = |i: i32| 1.0 + f64::from(i) * 0.002;
            g.cells.insert(phase.clone(), CellStats::of((0..5).map(|i| 1e5 * scale * jitter(i)).collect(), "KB/s"));
            g.ops_per_sec
                .insert(phase.clone(), CellStats::of((0..5).map(|i| 3e3 * scale * jitter(i)).collect(), "ops/s"));
            for op in ["open", "read", "close"] {
                let summary = |i: i32| OpSummary {
                    count: Some(1000.0 * scale * jitter(i)),
                    mean_ns: Some(1e4 * jitter(i)),
                    p50_ns: Some(1e4),
                    p99_ns: Some(1e5),
                    cell_wall_ns: Some(1e9),
                    percentiles: true,
                    ..OpSummary::default()
                };
                g.latency.insert((phase.clone(), op.into()), (0..5).map(summary).collect());
            }
            g
        };
        let c = compare(&side("A", 1.0), &side("B", 0.85), Region::default());
        let rows: Vec<(&str, &str)> = c.scalars.iter().map(|r| (r.metric.as_str(), r.unit)).collect();
        assert_eq!(rows, [("run", "ops/s"), ("run", "KB/s")], "ops/s first");
        assert_eq!(c.effects.len(), 1, "{:?}", c.effects);
        let e = &c.effects[0];
        assert_eq!((e.operations.len(), e.with_total, e.verdict.verdict), (3, true, "slower"));
        assert_eq!(e.describe(), "3 rates of one flow loop (run) and its ops/s: -15.0% (each -15.0% to -15.0%)");
        // The effect once, KB/s once; per operation mean, p50 and p99: the means move (within
        // noise: the same jitter), the percentiles stand (within noise).
        assert_eq!(c.noise.slower, 2, "{:?}", c.noise);
        assert_eq!(c.noise.bound, 3, "4 figures counted as 1");
        assert_eq!(c.noise.slower + c.noise.within_noise + c.noise.faster + c.noise.no_verdict, 2 + 9);
        // An open loop on one side binds nothing.
        let mut open = side("B", 0.85);
        open.bound.clear();
        let c = compare(&side("A", 1.0), &open, Region::default());
        assert!(c.effects.is_empty());
        assert_eq!(c.noise.slower, 5, "ops/s, KB/s and three rates: {:?}", c.noise);
    }

    /// A stored run of no cells with this plan, environment and conditions.
    fn holding(
        plan: serde_json::Value,
        environment: serde_json::Value,
        conditions: serde_json::Value,
    ) -> iomatrix_store::StoredRun {
        let summary = stored(1, &[], iomatrix_store::CellState::complete(1)).summary;
        iomatrix_store::StoredRun::new(summary, plan, environment, conditions, Vec::new())
    }

    fn plan(records: serde_json::Value) -> Flat {
        holding(records, serde_json::json!({}), serde_json::json!({})).plan_facts()
    }

    fn environment(records: serde_json::Value) -> Flat {
        holding(serde_json::json!({}), records, serde_json::json!({})).environment_facts_flat()
    }

    fn conditions(records: serde_json::Value) -> Vec<(String, iomatrix_store::reader::Fact)> {
        holding(serde_json::json!({}), serde_json::json!({}), records).compared_conditions()
    }

    #[test]
    fn ratios_views_and_wins_are_computed_by_hand() {
        let a = group(
            "A",
            &[((64, 4), vec![100.0]), ((64, 8), vec![200.0]), ((128, 4), vec![100.0]), ((128, 8), vec![50.0])],
        );
        let b = group(
            "B",
            &[((64, 4), vec![150.0]), ((64, 8), vec![100.0]), ((128, 4), vec![100.0]), ((256, 4), vec![1.0])],
        );
        let c = compare(&a, &b, Region { files: (None, Some(64)), records: (None, None) });
        assert_eq!(c.only_in_a, ["read 128/8"]);
        assert_eq!(c.only_in_b, ["read 256/4"]);
        let m = &c.matrices[0];
        assert_eq!(m.file_sizes, [64, 128]);
        assert_eq!(m.record_sizes, [4, 8]);
        assert_eq!(m.ratios, [[Some(1.5), Some(0.5)], [Some(1.0), None]]);
        // Record 4: (1.5 + 1.0) / 2; record 8: 0.5. File 64: (1.5 + 0.5) / 2; file 128: 1.0.
        assert_eq!(m.by_record, [(4, 1.25), (8, 0.5)]);
        assert_eq!(m.by_file, [(64, 1.0), (128, 1.0)]);
        assert_eq!((m.overall.cells, m.overall.a_wins, m.overall.b_wins, m.overall.ties), (3, 1, 1, 1));
        assert!(m.overall.mean_change_pct.abs() < 1e-12, "(1.5 + 0.5 + 1.0) / 3 = 1");
        let region = m.region.unwrap();
        assert_eq!(region.cells, 2);
        assert!(region.mean_change_pct.abs() < 1e-12);
        assert!(c.condition_differences.is_empty());
    }

    #[test]
    fn medians_of_repeats_are_compared_and_differences_stated() {
        let a = group("A", &[((64, 4), vec![100.0, 300.0, 200.0])]);
        let mut b = group("B", &[((64, 4), vec![250.0, 50.0])]);
        b.conditions = vec![conditions(serde_json::json!({"backend": "psync", "direct": true, "clients": 1}))];
        let c = compare(&a, &b, Region::default());
        assert_eq!(c.matrices[0].ratios, [[Some(150.0 / 200.0)]]);
        assert!(c.matrices[0].region.is_none());
        assert_eq!(c.condition_differences, ["direct: A (A) false, B (B) true"]);
    }

    #[test]
    fn extents_per_file_and_fragmented_files_are_compared_where_both_sides_mapped_them() {
        let key = CellKey { test: "backup".into(), file_size: None, record_size: None, variant: String::new() };
        let side = |name: &str, per_run: &[(u64, u64, u64)]| {
            let mut g = group(name, &[]);
            g.suite = "backup".into();
            g.shape = SuiteShape::PLAIN;
            g.extents.insert(
                key.clone(),
                per_run
                    .iter()
                    .map(|(files, total, fragmented)| ExtentFigures {
                        files: *files,
                        total_extents: Some(*total),
                        fragmented_files: Some(*fragmented as f64),
                        summary: serde_json::Value::Null,
                    })
                    .collect(),
            );
            g
        };
        // delalloc: one extent per file; nodelalloc: 571 over 97 files, then 600 (median of 2 runs).
        let a = side("delalloc", &[(97, 97, 0)]);
        let b = side("nodelalloc", &[(97, 571, 96), (100, 600, 98)]);
        let c = compare(&a, &b, Region::default());
        let rows: Vec<(&str, f64, f64)> = c.scalars.iter().map(|r| (r.metric.as_str(), r.a, r.b)).collect();
        let per_file = f64::midpoint(571.0 / 97.0, 6.0);
        assert_eq!(rows, [("backup extents per file", 1.0, per_file), ("backup fragmented files", 0.0, 97.0)]);
        assert!(c.scalars[1].change_pct.is_nan(), "from 0 to 97 files is no percentage");
        assert!((c.scalars[0].change_pct - (per_file - 1.0) * 100.0).abs() < 1e-9);
        let lone = compare(&a, &group("none", &[]), Region::default());
        assert!(lone.scalars.is_empty(), "no row without both sides' extents");
    }

    #[test]
    fn regions_hold_their_bounds() {
        let r = Region { files: (None, Some(2 << 20)), records: (Some(4096), Some(32 << 10)) };
        assert!(r.contains(2 << 20, 32 << 10));
        assert!(!r.contains(4 << 20, 4096));
        assert!(!r.contains(1 << 20, 2048));
        assert!(Region::default().contains(u64::MAX, 0));
    }

    #[test]
    fn plan_and_environment_differences_are_listed_and_unknowns_kept_apart() {
        let mut a = group("A", &[((64, 4), vec![100.0])]);
        let mut b = group("B", &[((64, 4), vec![100.0])]);
        a.plans = vec![plan(serde_json::json!({"interleave": 1, "record": 4096, "then": "Read"}))];
        b.plans = vec![plan(serde_json::json!({"interleave": 5, "record": 4096, "then": "Read"}))];
        let env = |options: &str, free: u64| {
            serde_json::json!({"kernel": "6.18", "vm_dirty": {"dirty_ratio": "20"},
                "target": {"mount_options": options, "free_bytes": free, "block_device": null}})
        };
        a.environments = vec![environment(env("rw,relatime", 1))];
        b.environments = vec![environment(env("rw,noatime", 2))];
        let c = compare(&a, &b, Region::default());
        let d = |name: &str, a: &str, b: &str| Difference { name: name.into(), a: a.into(), b: b.into() };
        assert_eq!(c.plan_differences, [d("interleave", "1", "5")]);
        assert_eq!(c.environment_differences, [d("target.mount_options", "rw,relatime", "rw,noatime")]);
        assert!(c.unknown.is_empty(), "{:?}", c.unknown);
        // An imported run knows only its host: the rest is unknown, not a difference.
        b.environments = vec![environment(serde_json::json!({"kernel": "6.18", "host": "old"}))];
        let c = compare(&a, &b, Region::default());
        assert!(c.environment_differences.is_empty(), "{:?}", c.environment_differences);
        assert!(c.unknown.contains(&"target.mount_options (unknown in B)".to_string()), "{:?}", c.unknown);
        assert!(c.unknown.contains(&"host (unknown in A)".to_string()), "{:?}", c.unknown);
    }

    #[test]
    fn operation_tables_give_mean_p50_p99_rate_and_their_change() {
        let mut a = group("A", &[]);
        let mut b = group("B", &[]);
        let phase = CellKey {
            test: "write".into(),
            file_size: None,
            record_size: Some(4096),
            variant: "4k..1m (3 sizes)".into(),
        };
        let summary = |mean: f64, count: u64| OpSummary {
            count: Some(count as f64),
            mean_ns: Some(mean),
            p50_ns: Some(mean),
            p99_ns: Some(mean * 3.0),
            max_ns: Some(mean * 9.0),
            cell_wall_ns: Some(1e9),
            percentiles: true,
            ..OpSummary::default()
        };
        // Five repeats a side; B's opens take half as long and there are twice as many.
        a.latency
            .insert((phase.clone(), "open".into()), (0..5).map(|i| summary(2e6 + f64::from(i) * 1e4, 100)).collect());
        b.latency
            .insert((phase.clone(), "open".into()), (0..5).map(|i| summary(1e6 + f64::from(i) * 1e4, 200)).collect());
        let c = compare(&a, &b, Region::default());
        assert_eq!(c.operations.len(), 1);
        let t = &c.operations[0];
        assert_eq!(t.phase, "write 4k..1m (3 sizes)/4k");
        let figures: Vec<(&str, f64, f64, f64, &str)> =
            t.rows.iter().map(|r| (r.figure, r.a, r.b, r.change_pct, r.verdict.verdict)).collect();
        assert_eq!(
            figures,
            [
                ("mean", 2.02, 1.02, change_pct(2.02, 1.02), "faster"),
                ("p50", 2.02, 1.02, change_pct(2.02, 1.02), "faster"),
                ("p99", 6.06, 3.06, change_pct(6.06, 3.06), "faster"),
                ("rate", 100.0, 200.0, 100.0, "faster"),
            ]
        );
        assert_eq!(c.noise, NoiseSummary { faster: 4, ..NoiseSummary::default() });
        // B's opens twice as slow instead: every figure a regression beyond 5%.
        let c = compare(&b, &a, Region::default());
        assert_eq!(c.noise.slower, 4);
        // The gate's default family is the headline rates: the open rate; its times join when asked.
        let gate = |metric| regressions(&c, &b, &a, 0.05, metric).unwrap();
        assert_eq!(
            gate(None).slower.iter().map(|r| r.cell.as_str()).collect::<Vec<_>>(),
            ["write 4k..1m (3 sizes)/4k open rate"]
        );
        assert_eq!((gate(Some("ms")).figures, gate(Some("ms")).slower.len()), (3, 3));
        assert_eq!(gate(Some("MS")).family, "unit ms");
        assert_eq!(gate(Some("p99")).slower.len(), 1);
        assert_eq!(gate(Some("open p99")).slower.len(), 1);
        assert!(regressions(&c, &b, &a, 0.05, Some("p99.9")).unwrap_err().0.contains("percentile (p50, p99)"));
    }

    #[test]
    fn repeated_cells_get_verdicts_and_single_samples_say_what_would_give_one() {
        let a = group("A", &[((64, 4), vec![100.0, 101.0, 99.0, 100.5, 99.5]), ((64, 8), vec![100.0])]);
        let b = group("B", &[((64, 4), vec![80.0, 81.0, 79.0, 80.5, 79.5]), ((64, 8), vec![50.0])]);
        let c = compare(&a, &b, Region::default());
        let v = &c.matrix_verdicts[0][0];
        assert_eq!(v[0].as_ref().unwrap().verdict, "slower");
        assert_eq!(v[1].as_ref().unwrap().verdict, "no verdict");
        assert_eq!(v[1].as_ref().unwrap().repeats_needed, Some(4));
        assert_eq!(c.noise, NoiseSummary { slower: 1, no_verdict: 1, ..NoiseSummary::default() });
        let gate = regressions(&c, &a, &b, 0.05, None).unwrap();
        assert_eq!(gate.slower.iter().map(|r| r.cell.as_str()).collect::<Vec<_>>(), ["read 64/4"]);
        assert_eq!(gate.checked, 1);
        assert_eq!(
            gate.not_checked,
            ["read 64/8 (too few samples: 1 vs 1: the one-sided test's smallest p, 0.5, is above Holm's first \
              level 0.025; needs at least 4 repeats a side)"]
        );
        assert!(regressions(&c, &a, &b, 0.25, None).unwrap().slower.is_empty(), "20% slower is not 25% slower");
    }

    #[test]
    fn a_list_of_tables_differs_by_field_and_a_list_of_values_whole() {
        let a = serde_json::json!({"records": [4096, 65536], "phases": [{"name": "run", "flows": [{"rate": null}, {"rate": null}]}]});
        let b = serde_json::json!({"records": [4096], "phases": [{"name": "run", "flows": [{"rate": 300.0}, {"rate": null}]}]});
        let (diffs, unknown, _) = differences(&[plan(a)], &[plan(b)], &[]);
        let named: Vec<(String, String, String)> = diffs.into_iter().map(|d| (d.name, d.a, d.b)).collect();
        assert_eq!(
            named,
            [
                ("phases[0].flows[0].rate".to_string(), "none".to_string(), "300.0".to_string()),
                ("records".to_string(), "[4096,65536]".to_string(), "[4096]".to_string()),
            ]
        );
        assert!(unknown.is_empty(), "{unknown:?}");
        let c = serde_json::json!({"phases": [{"name": "a"}, {"name": "b"}]});
        let d = serde_json::json!({"phases": [{"name": "a"}]});
        let (diffs, unknown, _) = differences(&[plan(c)], &[plan(d)], &[]);
        assert_eq!(
            diffs.iter().map(|d| (d.name.as_str(), d.a.as_str(), d.b.as_str())).collect::<Vec<_>>(),
            [("phases (entries)", "2", "1")]
        );
        assert_eq!(unknown.iter().map(NotKnown::describe).collect::<Vec<_>>(), ["phases[1].name (unknown in B)"]);
    }

    /// A stored IOzone run of one cell per value, every cell in `state`.
    fn stored(id: i64, values: &[f64], state: iomatrix_store::CellState) -> iomatrix_store::StoredRun {
        let cells = values
            .iter()
            .enumerate()
            .map(|(seq, v)| iomatrix_store::CellRow {
                seq,
                test: "read".into(),
                file_size: Some(64),
                record_size: Some(4),
                backend: "psync".into(),
                direct: false,
                clients: 4,
                bytes: 1,
                ops: 1,
                wall_ns: 1,
                user_ns: 0,
                sys_ns: 0,
                kib_per_sec: *v,
                cpu_percent: Some(0.0),
                metrics: serde_json::json!({"repeat": seq + 1}),
                client_figures: serde_json::json!([]),
                state: state.clone(),
                blobs: Vec::new(),
            })
            .collect();
        iomatrix_store::StoredRun::new(
            iomatrix_store::RunSummary {
                id,
                suite: "iozone".into(),
                status: iomatrix_store::RunStatus::Complete,
                started_at: String::new(),
                ended_at: None,
                host: "h".into(),
                command_line: String::new(),
                labels: Vec::new(),
                cells: values.len(),
                total_cells: values.len(),
                disturbed_cells: 0,
                error: None,
                iomatrix_version: "0".into(),
                pid: 0,
                pid_start: None,
            },
            serde_json::json!({}),
            serde_json::json!({}),
            serde_json::json!({}),
            cells,
        )
    }

    #[test]
    fn a_partial_cell_is_left_out_and_named_unless_taken_in_and_then_marked() {
        use iomatrix_store::CellState;
        let a = vec![stored(1, &[100.0, 101.0, 99.0, 100.0], CellState::complete(4))];
        let b =
            vec![stored(2, &[100.0], CellState::complete(4)), stored(3, &[30.0], CellState::counted(3, 4, "clients"))];
        let (ga, gb) = (Group::of("A", &a, MATRIX), Group::of("B", &b, MATRIX));
        let key = gb.cells.keys().next().unwrap().clone();
        assert_eq!(gb.cells[&key].values, [100.0], "the partial sample is no sample");
        assert_eq!(gb.left_out.len(), 1);
        assert_eq!(gb.left_out[0].describe(), "read 64/4 in run #3 (partial: 3 of 4 clients)");
        let c = compare(&ga, &gb, Region::default());
        assert_eq!(c.matrices[0].ratios, [[Some(1.0)]]);
        assert_eq!(c.matrices[0].partial, [[false]]);
        assert_eq!(c.left_out_b.len(), 1);
        let gb = Group::with("B", &b, MATRIX, Partial::Included);
        assert_eq!(gb.cells[&key].values, [100.0, 30.0]);
        assert_eq!(gb.cells[&key].partial_samples, 1);
        assert!(gb.left_out.is_empty());
        let c = compare(&ga, &gb, Region::default());
        assert_eq!(c.matrices[0].ratios, [[Some(65.0 / 100.0)]]);
        assert_eq!(c.matrices[0].partial, [[true]], "a ratio with a partial sample is marked");
        assert_eq!(c.partial, Partial::Included);
        // A failed cell (none of its clients finished) never enters, even when partial ones do.
        let failed = vec![stored(4, &[900.0], CellState::counted(0, 4, "clients"))];
        let gf = Group::with("F", &failed, MATRIX, Partial::Included);
        assert!(gf.cells.is_empty());
        assert_eq!(gf.left_out[0].state.describe(), "failed: 0 of 4 clients");
        let c = compare(&ga, &gf, Region::default());
        assert!(c.only_in_a.is_empty(), "B stored the cell: it is named as left out, not missing");
    }

    #[test]
    fn the_gate_names_every_figure_it_could_not_check_and_never_counts_them_as_passed() {
        use iomatrix_store::CellState;
        let a = vec![stored(1, &[100.0, 101.0, 99.0, 100.0], CellState::complete(4))];
        let b = vec![stored(2, &[10.0, 11.0, 9.0, 10.0], CellState::counted(1, 4, "clients"))];
        let (ga, gb) = (Group::of("A", &a, MATRIX), Group::of("B", &b, MATRIX));
        let c = compare(&ga, &gb, Region::default());
        let gate = regressions(&c, &ga, &gb, 0.05, None).unwrap();
        assert_eq!((gate.checked, gate.slower.len()), (0, 0));
        assert_eq!(gate.not_checked, ["read 64/4 (B's cell left out: partial: 1 of 4 clients in run #2)"]);
        // Taken in, the partial samples are judged: 90% slower.
        let gb = Group::with("B", &b, MATRIX, Partial::Included);
        let c = compare(&ga, &gb, Region::default());
        let gate = regressions(&c, &ga, &gb, 0.05, None).unwrap();
        assert_eq!((gate.checked, gate.slower.len()), (1, 1));
        assert!(gate.not_checked.is_empty());
        // A metric that names no figure is refused, naming what there is.
        let refused = regressions(&c, &ga, &gb, 0.05, Some("write")).unwrap_err();
        assert!(refused.0.contains("a unit (KB/s)"), "{refused}");
    }
}
