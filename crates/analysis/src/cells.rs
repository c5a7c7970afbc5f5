//! Cells as the analysis sees them: a key, a compared figure, and a group
//! of runs summarised cell by cell.

use crate::outlier::{flag, CellSamples, Flagged, Sample};
use crate::SuiteShape;
use iomatrix_core::figures::MetricId;
use iomatrix_core::order::natural_cmp;
use iomatrix_core::Figures;
use iomatrix_store::reader::{BoundRates, Fact, Flat};
use iomatrix_store::{CellFigures, CellRow, CellState, CellStateKind, ExtentFigures, OpSummary, StoredRun};
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// What makes two cells comparable. For the IOzone matrix: test, file size,
/// record size. Access specs add queue depth and the read/random mix; a
/// repeat number (Bonnie's `-x`) is not part of the key: repeats are samples.
///
/// Keys order by their parameters' values ([`Ord`]), so every table, chart and report that lists
/// cells from a map of keys lists them qd=1, 4, 16, 32 and 4k, 64k, 1m.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct CellKey {
    /// The test's name as its suite stores it ("write", "seeks").
    pub test: String,
    /// The file size in bytes; None where the cell has none (or a size mix names it).
    pub file_size: Option<u64>,
    /// The record (request) size in bytes; None where the cell has none.
    pub record_size: Option<u64>,
    /// An access cell's mix ([`iomatrix_core::IoMix::name`]: "qd=4 read=70% random=100%"), or a
    /// size mix; empty elsewhere.
    pub variant: String,
}

/// The one ordering rule of cells: test, then file and record size in bytes, then the variant
/// (the mix "qd=4 read=70% random=100%", a size mix, `sweep --rows`' label) with its numbers by
/// value ([`natural_cmp`]): queue depth 1 < 4 < 16 < 32, read and random shares as numbers.
impl Ord for CellKey {
    fn cmp(&self, other: &Self) -> Ordering {
        self.test.cmp(&other.test).then_with(|| self.cmp_parameters(other))
    }
}

impl PartialOrd for CellKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl CellKey {
    /// The order of the keys' parameters, their tests aside: file and record size in bytes, then
    /// the variant with its numbers by value. A list that keeps its tests in their own order
    /// (a run's cells in the CSV: IOzone's write before read) orders its cells by it.
    pub fn cmp_parameters(&self, other: &CellKey) -> Ordering {
        (self.file_size, self.record_size)
            .cmp(&(other.file_size, other.record_size))
            .then_with(|| natural_cmp(&self.variant, &other.variant))
    }

    /// The key of a stored cell: its test, sizes and access mix.
    pub fn of(cell: &CellRow) -> CellKey {
        CellKey::of_figures(cell, &cell.figures())
    }

    /// [`CellKey::of`] where the cell's figures are read already (`figures`: `cell.figures()`).
    pub fn of_figures(cell: &CellRow, figures: &CellFigures) -> CellKey {
        let variant = figures.mix().map(|mix| mix.name()).unwrap_or_default();
        CellKey { test: cell.test.clone(), file_size: cell.file_size, record_size: cell.record_size, variant }
    }

    /// The key named by its run's size mix ([`iomatrix_store::reader::SuiteFacts::size_mix`]), if it has one: a
    /// file-server cell stores the mix's largest size as its file size, and the mix, not that
    /// size, says what ran.
    #[must_use]
    pub fn named_by_mix(mut self, mix: Option<&str>) -> CellKey {
        if let Some(mix) = mix {
            self.file_size = None;
            self.variant = mix.to_string();
        }
        self
    }

    /// "write 64m/4k", "access 8m/4k qd=4 read=70% random=100%", "seeks".
    pub fn describe(&self) -> String {
        let mut s = self.test.clone();
        match (self.file_size, self.record_size) {
            // A size mix ("4k..1m (3 sizes)") in the variant stands where the file size would.
            (None, Some(r)) if !self.variant.is_empty() => return format!("{s} {}/{}", self.variant, size(r)),
            (Some(f), Some(r)) => s += &format!(" {}/{}", size(f), size(r)),
            (Some(f), None) => s += &format!(" {}", size(f)),
            _ => {}
        }
        if !self.variant.is_empty() {
            s += &format!(" {}", self.variant);
        }
        s
    }
}

/// 4k, 64m, 1g: the short binary sizes of IOzone's tables.
pub fn size(bytes: u64) -> String {
    iomatrix_core::ByteSize(bytes).to_string()
}

/// The figure compared for a cell: KB/s where the cell moved bytes at a
/// rate, else the suite's own rate (Bonnie's seeks/s and files/s).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Figure {
    /// The figure, in `unit`.
    pub value: f64,
    /// "KB/s" (KiB per second), or the suite's own rate unit.
    pub unit: &'static str,
}

impl Figure {
    /// The figure a stored cell is compared by; None when it has no positive, finite rate.
    pub fn of(cell: &CellRow) -> Option<Figure> {
        if cell.kib_per_sec > 0.0 && cell.kib_per_sec.is_finite() {
            return Some(Figure { value: cell.kib_per_sec, unit: "KB/s" });
        }
        let per_sec = cell.figures().per_sec.filter(|v| *v > 0.0 && v.is_finite())?;
        Some(Figure { value: per_sec, unit: cell.unit() })
    }
}

/// One cell over the runs of a group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellStats {
    /// Every sample, in run order.
    pub values: Vec<f64>,
    /// The median of the finite samples (0 when there are none).
    pub median: f64,
    /// The smallest sample.
    pub min: f64,
    /// The largest sample.
    pub max: f64,
    /// The sample furthest from the median, its distance in % of the
    /// median (seed 001's "+/- 20%"): 0 for one sample.
    pub spread_pct: f64,
    /// The samples' unit ([`Figure::unit`]).
    pub unit: &'static str,
    /// Samples from partial cells (some clients or connections failed), taken in only when
    /// asked ([`Partial::Included`]): a figure with any is marked wherever it is shown.
    pub partial_samples: usize,
    /// Of those, samples from disturbed cells (`--include-disturbed`): a figure with any is
    /// marked as one with partial samples is, and said apart.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub disturbed_samples: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl CellStats {
    /// The statistics of `values`, every sample counted as complete.
    pub fn of(values: Vec<f64>, unit: &'static str) -> CellStats {
        let median = median(&values);
        let min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let spread_pct = if median > 0.0 { (max - median).max(median - min) / median * 100.0 } else { 0.0 };
        CellStats { values, median, min, max, spread_pct, unit, partial_samples: 0, disturbed_samples: 0 }
    }
}

/// Whether cells that are not whole enter medians and verdicts: a partial cell (some of its
/// clients or connections failed) measured less work than its plan, so by default it is left
/// out; `--include-partial` takes it in, marked. A failed cell (none finished) never enters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Partial {
    /// Partial cells give no samples (the default).
    #[default]
    LeftOut,
    /// Partial cells give samples, marked (`--include-partial`).
    Included,
}

impl Partial {
    /// Whether a cell in `state` gives samples (a disturbed cell does not: see [`Admit`]).
    pub fn admits(self, state: &CellState) -> bool {
        Admit::from(self).admits(state)
    }
}

/// Whether disturbed cells (which did not run for their time: stopped, clocks that disagree, a
/// timed cell far past its duration) enter medians and verdicts: left out by default;
/// `--include-disturbed` takes them in, marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Disturbed {
    /// Disturbed cells give no samples (the default).
    #[default]
    LeftOut,
    /// Disturbed cells give samples, marked (`--include-disturbed`).
    Included,
}

/// Which cells that are not plain complete give samples: partial ones (`--include-partial`) and
/// disturbed ones (`--include-disturbed`). A disturbed cell whose parts did not all finish needs
/// both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Admit {
    /// Whether partial cells give samples.
    pub partial: Partial,
    /// Whether disturbed cells give samples.
    pub disturbed: Disturbed,
}

impl From<Partial> for Admit {
    fn from(partial: Partial) -> Admit {
        Admit { partial, disturbed: Disturbed::LeftOut }
    }
}

impl Admit {
    /// Whether a cell in `state` gives samples.
    pub fn admits(self, state: &CellState) -> bool {
        let partial_ok = self.partial == Partial::Included;
        match state.kind {
            CellStateKind::Complete => true,
            CellStateKind::Partial => partial_ok,
            CellStateKind::Failed => false,
            CellStateKind::Disturbed => self.disturbed == Disturbed::Included && (!state.is_partial() || partial_ok),
        }
    }
}

/// A stored cell kept out of a group's medians and verdicts, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LeftOut {
    /// The cell's key.
    pub key: CellKey,
    /// The key as the tables name it ("write 64m/4k").
    pub cell: String,
    /// The id of the run that stored it.
    pub run: i64,
    /// Its place in the run's order of cells.
    pub seq: usize,
    /// Why it is left out: partial, failed or disturbed.
    pub state: CellState,
}

impl LeftOut {
    /// "write 1m/4k in run #2 (partial: 3 of 4 connections)".
    pub fn describe(&self) -> String {
        format!("{} in run #{} ({})", self.cell, self.run, self.state.describe())
    }
}

/// The median: the middle sample, or the mean of the two middle ones.
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        f64::midpoint(v[n / 2 - 1], v[n / 2])
    }
}

/// A cell's samples of one figure as they are gathered: the values, their unit, and how many
/// came from partial cells.
type Samples = (Vec<f64>, &'static str, Marked);

/// How many of a cell's samples came from cells not plain complete: (any such, disturbed ones).
type Marked = (usize, usize);

/// One side of a comparison: a run, or repeats of one setup, every cell
/// summarised over the runs (and over repeats within a run).
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    /// How the user named it: "#12", "server=netware".
    pub name: String,
    /// The ids of its runs, in the order given.
    pub run_ids: Vec<i64>,
    /// The suite its runs ran (every run of a group runs the same one).
    pub suite: String,
    /// What the suite says of its cells: matrices or scalar rows, how latencies are summarised.
    #[serde(skip)]
    pub shape: SuiteShape,
    /// Every cell that gave a sample, summarised over the group's runs.
    pub cells: BTreeMap<CellKey, CellStats>,
    /// Whether partial cells gave samples.
    pub partial: Partial,
    /// Whether disturbed cells gave samples.
    pub disturbed: Disturbed,
    /// Stored cells that gave no sample because they are not whole: listed, never dropped silently.
    pub left_out: Vec<LeftOut>,
    /// Each run's conditions that compare names when they differ (backend, direct, clients,
    /// files vs RAM..., and its suite's own), in the order compare names them.
    #[serde(skip)]
    pub conditions: Vec<Vec<(String, Fact)>>,
    /// Each run's source where it was imported from a published table (its runs' ids say which).
    #[serde(skip)]
    pub published: Vec<bool>,
    /// Each run's latency summaries by cell: (key, "read"/"write"/op, percentiles).
    #[serde(skip)]
    pub latency: BTreeMap<(CellKey, String), Vec<OpSummary>>,
    /// Each run's plan, environment (with its iomatrix version) and labels, for the
    /// differences stated above the tables.
    #[serde(skip)]
    pub plans: Vec<Flat>,
    /// Each run's stored environment as named facts (with its iomatrix version), in run order.
    #[serde(skip)]
    pub environments: Vec<Flat>,
    /// Each run's extent summary by cell (the backup walk's FIEMAP counts): how the file system
    /// laid the files out, which explains a rate (seed 003's delayed allocation).
    #[serde(skip)]
    pub extents: BTreeMap<CellKey, Vec<ExtentFigures>>,
    /// What the suite measures beside each cell's figure ([`SuiteShape::beside`]: its %CPU),
    /// by cell and metric, over the same samples as `cells`.
    #[serde(skip)]
    pub beside: BTreeMap<CellKey, BTreeMap<MetricId, CellStats>>,
    /// Each run's typed figures by cell, in the order the cells were first stored (a load's
    /// write phase before its read), for seed 003's headline rows (`headline`).
    #[serde(skip)]
    pub figures: Vec<(CellKey, Vec<crate::headline::HeadlineFigures>)>,
    /// Its samples flagged as outliers among their repeats or as descheduled cells
    /// ([`crate::outlier`]): still samples, marked wherever their figure is shown.
    #[serde(skip)]
    pub flagged: Vec<Flagged>,
    /// Each cell's operations per second (its operations over its wall time), over the same
    /// samples as `cells`: the figure a suite whose compare leads with it shows first
    /// ([`SuiteShape::leads_with_operations`]).
    #[serde(skip)]
    pub ops_per_sec: BTreeMap<CellKey, CellStats>,
    /// The figures its suite declares bound together by construction (a closed loop's
    /// per-operation rates), where every run of the group declares the same.
    #[serde(skip)]
    pub bound: Vec<BoundRates>,
    /// Its runs' throughput-latency curves by the curve's key (its points' key without the
    /// load), each run's curve from its points that gave samples ([`crate::curve`]).
    #[serde(skip)]
    pub curves: BTreeMap<CellKey, Vec<crate::RunCurve>>,
}

impl Group {
    /// Summarises `runs` (which the caller checked are of one suite, shaped as `shape` says)
    /// from their complete cells; the others are listed in `left_out`.
    pub fn of(name: &str, runs: &[StoredRun], shape: SuiteShape) -> Group {
        Group::with(name, runs, shape, Partial::LeftOut)
    }

    /// As [`Group::of`], with partial and disturbed cells left out or taken in as `admit` says.
    pub fn with(name: &str, runs: &[StoredRun], shape: SuiteShape, admit: impl Into<Admit>) -> Group {
        let admit: Admit = admit.into();
        let mut samples: BTreeMap<CellKey, Samples> = BTreeMap::new();
        let mut latency: BTreeMap<(CellKey, String), Vec<OpSummary>> = BTreeMap::new();
        let mut extents: BTreeMap<CellKey, Vec<ExtentFigures>> = BTreeMap::new();
        let mut beside: BTreeMap<CellKey, BTreeMap<MetricId, Samples>> = BTreeMap::new();
        let mut figures: Vec<(CellKey, Vec<crate::headline::HeadlineFigures>)> = Vec::new();
        let mut left_out = Vec::new();
        for run in runs {
            let mix = run.suite_facts().size_mix;
            for cell in &run.cell_results {
                let typed = cell.figures();
                let key = CellKey::of_figures(cell, &typed).named_by_mix(mix.as_deref());
                if !admit.admits(&cell.state) {
                    left_out.push(LeftOut {
                        cell: key.describe(),
                        key,
                        run: run.summary.id,
                        seq: cell.seq,
                        state: cell.state.clone(),
                    });
                    continue;
                }
                let is_partial = !cell.state.is_complete();
                let is_disturbed = cell.state.kind == CellStateKind::Disturbed;
                let mark = |at: &mut Marked| {
                    at.0 += usize::from(is_partial);
                    at.1 += usize::from(is_disturbed);
                };
                if let Some(f) = Figure::of(cell) {
                    let entry = samples.entry(key.clone()).or_insert((Vec::new(), f.unit, (0, 0)));
                    entry.0.push(f.value);
                    mark(&mut entry.2);
                    for m in shape.beside {
                        if let Some(v) = cell.value(m.id) {
                            let at = beside.entry(key.clone()).or_default().entry(m.id).or_insert((
                                Vec::new(),
                                m.unit,
                                (0, 0),
                            ));
                            at.0.push(v);
                            mark(&mut at.2);
                        }
                    }
                }
                for (phase, what, summary) in latency_summaries(shape, &key, cell) {
                    let summary = OpSummary { partial: is_partial, disturbed: is_disturbed, ..summary };
                    latency.entry((phase, what)).or_default().push(summary);
                }
                if let Some(counted) = typed.extents.clone().filter(|e| e.files > 0) {
                    extents.entry(key.clone()).or_default().push(counted);
                }
                let typed = crate::headline::HeadlineFigures::of(typed);
                match figures.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, runs)) => runs.push(typed),
                    None => figures.push((key.clone(), vec![typed])),
                }
            }
        }
        let (sources, ops_per_sec) = sources_and_rates(runs, admit);
        let flagged = flag_samples(sources, &samples);
        Group {
            name: name.to_string(),
            run_ids: runs.iter().map(|r| r.summary.id).collect(),
            suite: runs.first().map(|r| r.summary.suite.clone()).unwrap_or_default(),
            shape,
            cells: samples.into_iter().map(|(k, (v, unit, marked))| (k, marked_stats(v, unit, marked))).collect(),
            partial: admit.partial,
            disturbed: admit.disturbed,
            left_out,
            conditions: runs.iter().map(StoredRun::compared_conditions).collect(),
            published: runs
                .iter()
                .map(|r| r.conditions_facts().imported.and_then(|i| i.published) == Some(true))
                .collect(),
            plans: runs.iter().map(StoredRun::plan_facts).collect(),
            environments: runs.iter().map(StoredRun::environment_facts_flat).collect(),
            latency,
            extents,
            beside: beside
                .into_iter()
                .map(|(k, by_metric)| {
                    let stats = by_metric
                        .into_iter()
                        .map(|(m, (v, unit, marked))| (m, marked_stats(v, unit, marked)))
                        .collect();
                    (k, stats)
                })
                .collect(),
            figures,
            flagged,
            ops_per_sec: ops_per_sec
                .into_iter()
                .map(|(k, (v, unit, marked))| (k, marked_stats(v, unit, marked)))
                .collect(),
            bound: agreed_bound(runs),
            curves: crate::curve::curves_of(runs, |state| admit.admits(state)),
        }
    }
}

/// Each admitted cell's samples with where they were stored (for [`flag`]), and its operations
/// per second, by key, as [`Group::with`] gathers its figures.
fn sources_and_rates(runs: &[StoredRun], admit: Admit) -> (BTreeMap<CellKey, Vec<Sample>>, BTreeMap<CellKey, Samples>) {
    let mut sources: BTreeMap<CellKey, Vec<Sample>> = BTreeMap::new();
    let mut ops_per_sec: BTreeMap<CellKey, Samples> = BTreeMap::new();
    for run in runs {
        let mix = run.suite_facts().size_mix;
        for cell in run.cell_results.iter().filter(|c| admit.admits(&c.state)) {
            let Some(f) = Figure::of(cell) else { continue };
            let key = CellKey::of(cell).named_by_mix(mix.as_deref());
            let at = Sample { run: run.summary.id, seq: cell.seq, value: f.value, cpu_percent: cell.cpu_percent };
            sources.entry(key.clone()).or_default().push(at);
            if cell.ops > 0 && cell.wall_ns > 0 {
                let rate = cell.ops as f64 * 1e9 / cell.wall_ns as f64;
                let entry = ops_per_sec.entry(key).or_insert((Vec::new(), "ops/s", (0, 0)));
                entry.0.push(rate);
                entry.2 .0 += usize::from(!cell.state.is_complete());
                entry.2 .1 += usize::from(cell.state.kind == CellStateKind::Disturbed);
            }
        }
    }
    (sources, ops_per_sec)
}

/// Each cell's samples with its name, test and unit, flagged.
fn flag_samples(sources: BTreeMap<CellKey, Vec<Sample>>, samples: &BTreeMap<CellKey, Samples>) -> Vec<Flagged> {
    let cells: Vec<CellSamples> = sources
        .into_iter()
        .map(|(k, s)| CellSamples {
            name: k.describe(),
            unit: samples.get(&k).map_or("", |v| v.1),
            peers: format!("{} {:?}", k.test, k.file_size),
            samples: s,
        })
        .collect();
    flag(&cells)
}

/// The bound figures every run declares alike; none where they differ (runs of other plans).
fn agreed_bound(runs: &[StoredRun]) -> Vec<BoundRates> {
    let mut each = runs.iter().map(|r| r.suite_facts().bound_rates);
    let first = each.next().unwrap_or_default();
    if each.all(|b| b == first) {
        first
    } else {
        Vec::new()
    }
}

/// A cell's statistics over `values`, with how many came from cells not plain complete.
fn marked_stats(values: Vec<f64>, unit: &'static str, (partial, disturbed): Marked) -> CellStats {
    CellStats { partial_samples: partial, disturbed_samples: disturbed, ..CellStats::of(values, unit) }
}

/// A list of file sizes of more than one size, named by its range and count ("4k..1m (3
/// sizes)"), as cells name them; None for one size or none. A suite whose plan mixes sizes
/// names its runs' mix with it ([`iomatrix_store::reader::SuiteFacts::size_mix`]).
pub fn size_range(sizes: &[u64]) -> Option<String> {
    let (lo, hi) = (sizes.iter().min()?, sizes.iter().max()?);
    let distinct = sizes.iter().collect::<std::collections::BTreeSet<_>>().len();
    (distinct > 1).then(|| format!("{}..{} ({distinct} sizes)", size(*lo), size(*hi)))
}

/// A cell's per-operation summaries, by (phase, operation): objects in
/// `metrics` with a `p50_ns` and a non-zero count (access's read/write, the
/// file-server's operations), each with the cell's wall time beside it (for
/// the operation's rate). A cell of a suite whose cells are timed whole
/// (Bonnie's tests, [`SuiteShape::whole_cell_latency`]) is one operation of
/// the suite's phase: its mean is wall time over operations, its slowest
/// operation bonnie++'s latency column; it has no percentiles.
fn latency_summaries(shape: SuiteShape, key: &CellKey, cell: &CellRow) -> Vec<(CellKey, String, OpSummary)> {
    let mut out = Vec::new();
    let wall = cell.wall_ns;
    if let Some(phase) = shape.whole_cell_latency {
        if cell.ops > 0 && wall > 0 {
            let phase = CellKey { test: phase.into(), ..key.clone() };
            let summary = OpSummary {
                count: Some(cell.ops as f64),
                mean_ns: Some(wall as f64 / cell.ops as f64),
                max_ns: cell.figures().max_latency_ns.filter(|v| *v > 0).map(|v| v as f64),
                cell_wall_ns: Some(wall as f64),
                ..OpSummary::default()
            };
            out.push((phase, cell.test.clone(), summary));
        }
        return out;
    }
    for (name, v) in cell.latency_summaries() {
        out.push((key.clone(), name, OpSummary { cell_wall_ns: Some(wall as f64), ..v }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disturbed_cell_gives_samples_only_under_include_disturbed_and_a_partial_one_needs_both() {
        let stopped = CellState::complete(2).disturbed("stopped for 20 s".into());
        let stopped_partial = CellState::counted(1, 2, "clients").disturbed("stopped for 20 s".into());
        let both = Admit { partial: Partial::Included, disturbed: Disturbed::Included };
        let disturbed_only = Admit { partial: Partial::LeftOut, disturbed: Disturbed::Included };
        assert!(!Admit::default().admits(&stopped));
        assert!(!Partial::Included.admits(&stopped), "--include-partial does not take a disturbed cell in");
        assert!(disturbed_only.admits(&stopped));
        assert!(!disturbed_only.admits(&stopped_partial), "partial too: --include-partial is needed as well");
        assert!(both.admits(&stopped_partial));
        assert!(!both.admits(&CellState::counted(0, 2, "clients")), "a failed cell never");
        assert!(Admit::default().admits(&CellState::complete(2)));
    }

    #[test]
    fn cells_order_by_their_parameters_values() {
        let access = |record: u64, mix: &str| CellKey {
            test: "access".into(),
            file_size: Some(8 << 20),
            record_size: Some(record),
            variant: mix.into(),
        };
        let mix = |qd: u64, read: u64| {
            iomatrix_core::IoMix { read_percent: read, random_percent: 100, queue_depth: qd, load: None }.name()
        };
        let mut keys: Vec<CellKey> = [(16, 100), (4, 100), (32, 100), (1, 100), (4, 70), (4, 0)]
            .map(|(qd, r)| access(4096, &mix(qd, r)))
            .to_vec();
        keys.extend([access(1 << 20, &mix(1, 100)), access(64 << 10, &mix(1, 100))]);
        keys.sort();
        let named: Vec<String> = keys.iter().map(CellKey::describe).collect();
        let expected = [
            "access 8m/4k qd=1 read=100% random=100%",
            "access 8m/4k qd=4 read=0% random=100%",
            "access 8m/4k qd=4 read=70% random=100%",
            "access 8m/4k qd=4 read=100% random=100%",
            "access 8m/4k qd=16 read=100% random=100%",
            "access 8m/4k qd=32 read=100% random=100%",
            "access 8m/64k qd=1 read=100% random=100%",
            "access 8m/1m qd=1 read=100% random=100%",
        ];
        assert_eq!(named, expected);
        let set: std::collections::BTreeSet<CellKey> = keys.iter().rev().cloned().collect();
        assert_eq!(set.iter().map(CellKey::describe).collect::<Vec<_>>(), expected, "a set of keys lists them so");
    }

    #[test]
    fn medians_and_spreads() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
        let s = CellStats::of(vec![90.0, 100.0, 110.0], "KB/s");
        assert_eq!((s.median, s.min, s.max), (100.0, 90.0, 110.0));
        assert!((s.spread_pct - 10.0).abs() < 1e-12, "110 is 10% above the median");
        assert_eq!(CellStats::of(vec![5.0], "KB/s").spread_pct, 0.0);
    }

    #[test]
    fn a_size_mix_is_named_by_its_range_never_by_one_size() {
        assert_eq!(size_range(&[65536, 4096, 1048576, 4096]).as_deref(), Some("4k..1m (3 sizes)"));
        assert_eq!(size_range(&[4096, 4096]), None);
        assert_eq!(size_range(&[]), None);
        let key = CellKey {
            test: "write".into(),
            file_size: None,
            record_size: Some(4096),
            variant: "4k..1m (3 sizes)".into(),
        };
        assert_eq!(key.describe(), "write 4k..1m (3 sizes)/4k");
    }

    #[test]
    fn sizes_print_as_iozone_does() {
        assert_eq!(size(4096), "4k");
        assert_eq!(size(64 << 20), "64m");
        assert_eq!(size(1 << 30), "1g");
        assert_eq!(size(1000), "1000");
    }
}
