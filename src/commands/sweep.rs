//! `iomatrix sweep RUNS... --by PARAM|LABEL`: one setting over its levels
//! (seed 001's "Rate of Change" tables, with its Total column, averages and
//! totals per direction and read/write ratios per block size).

use clap::{Args, ValueEnum};
use iomatrix_analysis::{
    derive, mean_of_rows, sweep, Admit, CellKey, Derivation, Derived, Factor, Figure, Sweep, SweepLevel,
    SweptParameter, SWEPT_PARAMETERS,
};
use iomatrix_core::figures::Metric;
use iomatrix_core::{Figures, UsageError};
use iomatrix_report::text::{self, sweep::SweepText};
use iomatrix_store::{CellRow, Store, StoredRun, IOPS};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

/// `iomatrix sweep RUNS... --by PARAM|LABEL`.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The runs (ids, id lists of repeats, or label selectors); with --by LABEL each run's value of
    /// that label is its level
    #[arg(value_name = "RUNS", required = true)]
    pub runs: Vec<String>,

    /// What is swept: record, file, qd (queue depth of access specs), read or random (their read
    /// and random shares), or a label key (e.g. cache)
    #[arg(long, value_name = "PARAM|LABEL")]
    pub by: String,

    /// The figure swept: kbs (KB/s of 1024 bytes, as IOzone prints), mbs (MB/s of 2^20 bytes, as
    /// Iometer's MBps tables in seed 001), iops (operations per second) [default: KB/s where a cell
    /// moved bytes, else the suite's own rate (Bonnie's seeks/s, files/s)]; cells without the
    /// figure asked for are left out
    #[arg(long, value_enum, value_name = "UNIT")]
    pub unit: Option<Unit>,

    /// One table per block (record) size, or per direction (reads, writes, other); the
    /// summaries follow once
    #[arg(long, value_enum, value_name = "bs|direction")]
    pub split: Option<Split>,

    /// Several systems as rows of one table: each run's value of this label makes its own rows
    /// (e.g. --by cache --rows cluster), and the summaries are taken over their average at each
    /// level (mean over the systems, as seed 001's Average row)
    #[arg(long, value_name = "LABEL")]
    pub rows: Option<String>,

    /// A derived figure, declared: NAME = ROWS * FACTOR or NAME = FACTOR / ROWS, ROWS read, write
    /// or part of a row's name, FACTOR a number or ratio(RUNS, SIZE) (the read/write ratio at
    /// block size SIZE over the runs RUNS select, mean over mean); printed apart and marked
    /// derived, never stored (repeatable); with --rows, for each system's rows and for their
    /// average. Seed 001's estimate of the disk: --derive 'disk_read = write * ratio(site=local, 64k)'
    #[arg(long = "derive", value_name = "FORMULA")]
    pub derive: Vec<String>,

    #[command(flatten)]
    pub numbers: super::numbers::NumberArgs,

    /// Take cells where some clients or connections failed (partial) into the levels' medians,
    /// marked; by default they are left out and listed. Failed cells never enter
    #[arg(long)]
    pub include_partial: bool,

    /// Take disturbed cells (which did not run for their time: the process was stopped, its
    /// clocks disagree, a timed cell ran far past its duration) into the levels' medians, marked; by
    /// default they are left out and listed with their cause (docs/measuring.md)
    #[arg(long)]
    pub include_disturbed: bool,

    /// Machine-readable output (schema "iomatrix.sweep/1", docs/json.md)
    #[arg(long)]
    pub json: bool,
}

/// What the sweep took in that is not whole: cells left out (named), and the rows whose
/// medians took in samples of partial cells (`--include-partial`).
#[derive(Default)]
struct NotWhole {
    partial: Admit,
    left_out: Vec<String>,
    partial_rows: std::collections::BTreeSet<String>,
}

impl NotWhole {
    /// Whether `cell` of `run` gives a sample; a cell that does not is named.
    fn admits(&mut self, run: &StoredRun, cell: &CellRow, key: &CellKey) -> bool {
        if self.partial.admits(&cell.state) {
            return true;
        }
        self.left_out.push(format!("{} in run #{} ({})", key.describe(), run.summary.id, cell.state.describe()));
        false
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Unit {
    Kbs,
    Mbs,
    Iops,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Split {
    Bs,
    Direction,
}

/// A cell's figure in the unit asked for, with that unit's name.
fn figure(cell: &CellRow, unit: Option<Unit>) -> Option<(f64, &'static str)> {
    let ok = |v: f64| (v > 0.0 && v.is_finite()).then_some(v);
    match unit {
        None => Figure::of(cell).map(|f| (f.value, f.unit)),
        Some(Unit::Kbs) => ok(cell.kib_per_sec).map(|v| (v, "KB/s")),
        Some(Unit::Mbs) => ok(cell.kib_per_sec).map(|v| (v / 1024.0, "MB/s")),
        Some(Unit::Iops) => cell
            .value(IOPS.id)
            .and_then(ok)
            .or_else(|| (cell.wall_ns > 0).then(|| cell.ops as f64 * 1e9 / cell.wall_ns as f64).and_then(ok))
            .map(|v| (v, "IOPS")),
    }
}

pub fn run(args: SweepArgs, db: &Path) -> anyhow::Result<ExitCode> {
    let derivations: Vec<Derivation> =
        args.derive.iter().map(|d| Derivation::parse(d).map_err(UsageError::from)).collect::<Result<_, _>>()?;
    let store = Store::open(db)?;
    let groups = super::select::resolve(&store, &args.runs)?;
    super::select::one_suite(&groups)?;
    for (name, runs) in &groups {
        super::select::repeats(name, runs)?;
    }
    let runs: Vec<&StoredRun> = groups.iter().flat_map(|(_, runs)| runs).collect();
    let mut whole = NotWhole {
        partial: super::numbers::admit(args.include_partial, args.include_disturbed),
        ..NotWhole::default()
    };
    let rows = args.rows.as_deref();
    if rows == Some(args.by.as_str()) {
        return Err(UsageError::new(format!(
            "--rows {}: the rows' label is the swept one; name another label (e.g. --by cache --rows cluster)",
            args.by
        ))
        .into());
    }
    // The settings a cell carries itself; anything else is a label key.
    let rate = |cell: &CellRow| figure(cell, args.unit);
    let (levels, units) = levels_of(&args.by, &runs, &rate, rows, &mut whole)?;
    // What the suite measures beside each figure (its %CPU): a table of its own per level.
    let shape = crate::suites::shape_of(&groups[0].1);
    let beside = beside_tables(&args.by, &runs, shape.beside, rows, whole.partial)?;
    check_levels(&args, &levels)?;
    // One unit for the whole sweep where every row has it; else each row says its own.
    let mut distinct: Vec<&str> = units.values().map(String::as_str).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let unit = if distinct.len() == 1 { distinct[0].to_string() } else { "unit per row".to_string() };
    // With --rows: each system's rows apart, and the sweep proper over their average.
    let (mut systems, levels) = match rows {
        Some(label) => {
            let systems = sweep(&args.by, &unit, levels.clone());
            (Some(systems), mean_of_rows(&levels, |k| untag(k, label)))
        }
        None => (None, levels),
    };
    let mut s = sweep(&args.by, &unit, levels.clone());
    let unknown: Vec<&String> = args.numbers.exclude.iter().filter(|e| !s.rows.iter().any(|r| &r.cell == *e)).collect();
    if let Some(name) = unknown.first() {
        return Err(UsageError::new(format!(
            "--exclude {}: no row of this sweep is named so; name a row as the tables do (e.g. --exclude '{}')",
            iomatrix_core::text::printable(name),
            iomatrix_core::text::printable(s.rows.first().map(|r| r.cell.as_str()).unwrap_or("read 1m/4k"))
        ))
        .into());
    }
    if !args.numbers.exclude.is_empty() {
        s = iomatrix_analysis::sweep_excluding(&args.by, &unit, levels, &args.numbers.exclude);
    }
    for row in s.rows.iter_mut().chain(systems.iter_mut().flat_map(|s| s.rows.iter_mut())) {
        if let Some(u) = units.get(&row.cell) {
            row.unit = u.clone();
        }
    }
    let derived = derive_all(&store, &args, &derivations, systems.as_ref(), &s)?;
    let printed =
        Printed { s: &s, whole: &whole, systems: rows.zip(systems.as_ref()), derived: &derived, beside: &beside };
    if args.json {
        print_json(printed)?;
    } else {
        print_text(&args, printed)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What the suite measures beside each figure (its %CPU), a sweep of its own per metric.
fn beside_tables(
    by: &str,
    runs: &[&StoredRun],
    metrics: &[Metric],
    rows: Option<&str>,
    partial: Admit,
) -> Result<Vec<Sweep>, UsageError> {
    metrics
        .iter()
        .filter_map(|m| {
            let pick = |cell: &CellRow| cell.value(m.id).map(|v| (v, m.unit));
            let mut quiet = NotWhole { partial, ..NotWhole::default() };
            match levels_of(by, runs, &pick, rows, &mut quiet) {
                Ok((levels, _)) if levels.iter().any(|l| !l.cells.is_empty()) => Some(Ok(sweep(by, m.unit, levels))),
                Ok(_) => None,
                Err(e) => Some(Err(e)),
            }
        })
        .collect()
}

/// The levels are a sweep: two or more, and a figure in one at least.
fn check_levels(args: &SweepArgs, levels: &[SweepLevel]) -> Result<(), UsageError> {
    if levels.len() < 2 {
        return Err(UsageError::new(format!(
            "--by {}: the runs have {} level(s) of it; a sweep needs at least two",
            args.by,
            levels.len()
        )));
    }
    if levels.iter().all(|l| l.cells.is_empty()) {
        let why = match args.unit.and_then(|u| u.to_possible_value()) {
            Some(u) => format!(
                "--unit {}: no cell of these runs has that figure; leave out --unit for each suite's own",
                u.get_name()
            ),
            None => "no cell of these runs has a figure to sweep (a rate or KB/s); check the runs with `iomatrix show`"
                .to_string(),
        };
        return Err(UsageError::new(why));
    }
    Ok(())
}

/// Each `--derive` worked out over the sweep `s` (with `--rows`: over each system's rows too).
fn derive_all(
    store: &Store,
    args: &SweepArgs,
    derivations: &[Derivation],
    systems: Option<&Sweep>,
    s: &Sweep,
) -> anyhow::Result<Vec<Derived>> {
    let rows = args.rows.as_deref();
    let mut derived = Vec::new();
    for d in derivations {
        let factor = match &d.factor {
            Factor::Number(n) => *n,
            Factor::Ratio { runs, size } => ratio(store, runs, size, args.unit)?,
        };
        // With --rows: each system's figures worked out, then their average's.
        let worked = match (systems, rows) {
            (Some(systems), Some(label)) => {
                let mut each = derive(d, factor, &systems.rows);
                let average = derive(d, factor, &s.rows);
                each.rows.extend(average.rows.into_iter().map(|mut r| {
                    r.cell = format!("{} (the mean over each {label})", r.cell);
                    r
                }));
                each
            }
            _ => derive(d, factor, &s.rows),
        };
        if worked.rows.is_empty() {
            return Err(UsageError::new(format!(
                "--derive '{}': no row of this sweep is taken by it (rows: {}); name read, write or part of a row's \
             name",
                d.formula,
                s.rows.iter().map(|r| r.cell.as_str()).collect::<Vec<_>>().join(", ")
            ))
            .into());
        }
        derived.push(worked);
    }
    Ok(derived)
}

/// What a sweep prints: the sweep `s`, what it took in that is not whole, `--rows`' label and each
/// system's rows, the figures `--derive` worked out and the tables of what is measured beside.
#[derive(Clone, Copy)]
struct Printed<'a> {
    s: &'a Sweep,
    whole: &'a NotWhole,
    systems: Option<(&'a str, &'a Sweep)>,
    derived: &'a [Derived],
    beside: &'a [Sweep],
}

/// `sweep --json`: schema iomatrix.sweep/1.
fn print_json(printed: Printed) -> anyhow::Result<()> {
    let Printed { s, whole, systems, derived, beside } = printed;
    let mut doc = serde_json::json!({"schema": "iomatrix.sweep/1", "sweep": s});
    doc["partial"] = serde_json::to_value(whole.partial.partial)?;
    doc["disturbed"] = serde_json::to_value(whole.partial.disturbed)?;
    doc["left_out"] = serde_json::to_value(&whole.left_out)?;
    doc["partial_rows"] = serde_json::to_value(&whole.partial_rows)?;
    if let Some((label, systems)) = systems {
        doc["rows_by"] = serde_json::Value::from(label);
        doc["systems"] = serde_json::to_value(&systems.rows)?;
    }
    if !derived.is_empty() {
        doc["derived"] = serde_json::to_value(derived)?;
    }
    for b in beside {
        doc["beside"][&b.unit] = serde_json::to_value(&b.rows)?;
    }
    crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))
}

/// The sweep's tables.
fn print_text(args: &SweepArgs, printed: Printed) -> anyhow::Result<()> {
    let Printed { s, whole, systems, derived, beside } = printed;
    let out = args.numbers.render(|| {
        SweepText {
            sweep: s,
            split: args.split.map(|split| match split {
                Split::Bs => text::sweep::Split::BlockSize,
                Split::Direction => text::sweep::Split::Direction,
            }),
            systems,
            partial: whole.partial.partial,
            left_out: &whole.left_out,
            partial_rows: &whole.partial_rows,
            derived,
            beside,
        }
        .render()
    });
    crate::out::print(&out)
}

/// `ratio(RUNS, SIZE)`: read over write at block size SIZE over the runs selected, every sample
/// pooled (mean over mean), as the sweep's per-block ratio.
pub(super) fn ratio(store: &Store, runs: &str, size: &str, unit: Option<Unit>) -> anyhow::Result<f64> {
    let bytes =
        iomatrix_core::parse_size_list(size, 1).ok().filter(|v| v.len() == 1).map(|v| v[0].bytes()).ok_or_else(
            || UsageError::new(format!("--derive: ratio({runs}, {size}): '{size}' is not one block size")),
        )?;
    let groups = super::select::resolve(store, &[runs.to_string()])?;
    let levels: Vec<SweepLevel> = groups
        .iter()
        .flat_map(|(_, runs)| runs)
        .map(|run| {
            let mut cells: BTreeMap<CellKey, Vec<f64>> = BTreeMap::new();
            let mix = run.suite_facts().size_mix;
            // A factor is worked from whole cells only: a partial one measured less than its plan.
            for cell in run.cell_results.iter().filter(|c| c.state.is_complete()) {
                if let Some((v, _)) = figure(cell, unit) {
                    cells.entry(CellKey::of(cell).named_by_mix(mix.as_deref())).or_default().push(v);
                }
            }
            SweepLevel { level: run.summary.id.to_string(), cells }
        })
        .collect();
    let blocks = sweep("run", "", levels).read_write_by_block;
    let at: Vec<_> = blocks.iter().filter(|b| b.record_size == Some(bytes)).collect();
    match at.as_slice() {
        [one] => Ok(one.mean_ratio),
        [] => Err(UsageError::new(format!(
            "--derive: ratio({runs}, {size}): those runs have no read and write cells at block size {size} (they have \
             ratios at: {})",
            if blocks.is_empty() {
                "none".to_string()
            } else {
                blocks.iter().map(|b| b.what.clone()).collect::<Vec<_>>().join(", ")
            }
        ))
        .into()),
        many => Err(UsageError::new(format!(
            "--derive: ratio({runs}, {size}): several read/write pairs at {size} ({}); select runs with one",
            many.iter().map(|b| b.what.clone()).collect::<Vec<_>>().join(", ")
        ))
        .into()),
    }
}

/// A cell's figure for the sweep, with its unit: its rate (`--unit`) or what is measured beside it.
type Pick<'a> = dyn Fn(&CellRow) -> Option<(f64, &'static str)> + 'a;

/// The levels of `by` (a swept parameter or a label) over the runs, each cell's figure `pick`ed.
fn levels_of(
    by: &str,
    runs: &[&StoredRun],
    pick: &Pick,
    rows: Option<&str>,
    whole: &mut NotWhole,
) -> Result<(Vec<SweepLevel>, Units), UsageError> {
    match SweptParameter::named(by) {
        Some(param) => by_param(param, runs, pick, rows, whole),
        None => by_label(by, runs, pick, rows, whole),
    }
}

/// Levels from a label: each run's value of `key`, numeric order where all are numbers, else the cells' order.
/// Each cell's unit, by the cell's name in the sweep.
type Units = BTreeMap<String, String>;

/// With --rows LABEL: the run's value of LABEL goes into the cell's key, so each system has its rows.
fn tag(key: &mut CellKey, run: &StoredRun, rows: Option<&str>) -> Result<(), UsageError> {
    let Some(label) = rows else { return Ok(()) };
    let value = run.summary.labels.iter().find(|(k, _)| k == label).map(|(_, v)| v.as_str()).ok_or_else(|| {
        UsageError::new(format!(
            "--rows {label}: run #{} has no label {label}; label every run with --label {label}=VALUE",
            run.summary.id
        ))
    })?;
    let part = format!("{label}={value}");
    key.variant = if key.variant.is_empty() { part } else { format!("{} {part}", key.variant) };
    Ok(())
}

/// The key without --rows' part: the rows of all systems merged.
fn untag(key: &CellKey, label: &str) -> CellKey {
    let prefix = format!("{label}=");
    let variant = key.variant.split(' ').filter(|p| !p.starts_with(&prefix)).collect::<Vec<_>>().join(" ");
    CellKey { variant, ..key.clone() }
}

fn by_label(
    key: &str,
    runs: &[&StoredRun],
    pick: &Pick,
    rows: Option<&str>,
    whole: &mut NotWhole,
) -> Result<(Vec<SweepLevel>, Units), UsageError> {
    let mut pooled: BTreeMap<(String, Option<String>), Vec<&StoredRun>> = BTreeMap::new();
    let mut levels: BTreeMap<String, BTreeMap<CellKey, Vec<f64>>> = BTreeMap::new();
    let mut units = Units::new();
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
                SWEPT_PARAMETERS.map(|p| p.by).join(", ")
            ))
        })?;
        let row = rows.and_then(|label| run.summary.labels.iter().find(|(k, _)| k == label).map(|(_, v)| v.clone()));
        pooled.entry((value.clone(), row)).or_default().push(run);
        let cells = levels.entry(value).or_default();
        let mix = run.suite_facts().size_mix;
        for cell in &run.cell_results {
            let mut key = CellKey::of(cell).named_by_mix(mix.as_deref());
            if !whole.admits(run, cell, &key) {
                continue;
            }
            if let Some((value, unit)) = pick(cell) {
                units.insert(key.describe(), unit.to_string());
                tag(&mut key, run, rows)?;
                units.insert(key.describe(), unit.to_string());
                if !cell.state.is_complete() {
                    whole.partial_rows.insert(key.describe());
                }
                cells.entry(key).or_default().push(value);
            }
        }
    }
    // The runs of one level (and row) are pooled as its repeats: they must be of one setup.
    for ((level, _), runs) in pooled {
        let runs: Vec<StoredRun> = runs.into_iter().cloned().collect();
        super::select::repeats(&format!("--by {key}: level {level}"), &runs)?;
    }
    let mut levels: Vec<SweepLevel> = levels.into_iter().map(|(level, cells)| SweepLevel { level, cells }).collect();
    // Numbers by value (2.25 before 2.5); other labels in the cells' order (4k, 64k, 1m; x2, x10).
    if levels.iter().all(|l| l.level.parse::<f64>().is_ok()) {
        levels.sort_by(|a, b| a.level.parse::<f64>().unwrap_or(0.0).total_cmp(&b.level.parse::<f64>().unwrap_or(0.0)));
    } else {
        levels.sort_by(|a, b| iomatrix_core::order::natural_cmp(&a.level, &b.level));
    }
    Ok((levels, units))
}

/// Levels from the cells: record size, file size, queue depth, read or random share, taken out of
/// each cell's key.
fn by_param(
    param: SweptParameter,
    runs: &[&StoredRun],
    pick: &Pick,
    rows: Option<&str>,
    whole: &mut NotWhole,
) -> Result<(Vec<SweepLevel>, Units), UsageError> {
    let mut levels: BTreeMap<u64, BTreeMap<CellKey, Vec<f64>>> = BTreeMap::new();
    let mut units = Units::new();
    // The runs whose samples meet in one cell of one level: they are pooled as its repeats.
    let mut pooled: BTreeMap<(u64, CellKey), Vec<&StoredRun>> = BTreeMap::new();
    for run in runs {
        // Swept by file size, a cell keeps its size (the level); otherwise a size mix names it.
        let mix = if param.by == "file" { None } else { run.suite_facts().size_mix };
        for cell in &run.cell_results {
            if !whole.admits(run, cell, &CellKey::of(cell).named_by_mix(mix.as_deref())) {
                continue;
            }
            let Some((value, unit)) = pick(cell) else { continue };
            let Some((level, mut key)) = param.split(&CellKey::of(cell).named_by_mix(mix.as_deref())) else { continue };
            units.insert(key.describe(), unit.to_string());
            tag(&mut key, run, rows)?;
            units.insert(key.describe(), unit.to_string());
            if !cell.state.is_complete() {
                whole.partial_rows.insert(key.describe());
            }
            let at = pooled.entry((level, key.clone())).or_default();
            if !at.iter().any(|r| r.summary.id == run.summary.id) {
                at.push(run);
            }
            levels.entry(level).or_default().entry(key).or_default().push(value);
        }
    }
    // Runs may differ in the swept setting's list (one run at 4k, another at 4k and 64k); in
    // nothing else where their samples meet.
    for ((level, key), runs) in pooled.into_iter().filter(|(_, runs)| runs.len() > 1) {
        let runs: Vec<StoredRun> = runs.into_iter().cloned().collect();
        let what = format!("--by {}: {} at {}", param.by, key.describe(), param.level_name(level));
        // The plan fields that hold the swept list, as the runs' suite declares them.
        let swept_fields =
            runs.first().map_or(&[][..], |r| crate::suites::shape(&r.summary.suite).plan_fields(param.by));
        super::select::repeats_but(&what, &runs, swept_fields)?;
    }
    Ok((levels.into_iter().map(|(v, cells)| SweepLevel { level: param.level_name(v), cells }).collect(), units))
}
