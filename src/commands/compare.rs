//! `iomatrix compare A B [C ...]`: B against A, cell by cell (medians where a side
//! holds several runs), as the seed authors' spreadsheets did; with more sides, each against the
//! baseline (`--baseline`), in one table with the sides as columns.

use clap::Args;
use iomatrix_analysis::{
    compare, derive_compare, flag_cached, regressions, CacheFlags, Comparison, Derivation, Derived, Factor, Gate,
    Group, Limit, Region,
};
use iomatrix_core::{ByteSize, UsageError};
use iomatrix_report::text;
use iomatrix_store::{Store, StoredRun};
use std::path::Path;
use std::process::ExitCode;

/// `iomatrix compare A B [C ...]`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The sides, two or more: each a run id (12 or #12), repeats of one setup (3,4,5: medians),
    /// or labels (server=netware). With two, B against A (ratios B/A); with more, every side
    /// against the baseline in one table, the sides as columns, and ratio matrices and
    /// per-operation tables per pair
    #[arg(value_name = "SIDE", required = true)]
    pub sides: Vec<String>,

    /// The side the others are compared with: as given on the command line (server=netware, 12)
    /// or by its position (1 for the first); default the first
    #[arg(long, value_name = "SIDE")]
    pub baseline: Option<String>,

    /// Also summarise this region of file sizes, e.g. ..2m, 64k..2m, 1m.. (bounds included)
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
    pub files: Option<String>,

    /// Also summarise this region of record sizes, e.g. ..32k
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
    pub records: Option<String>,

    /// Flag cells faster than this as served by a cache: 100Mbit, 1Gbit, 110MB/s, or a run (#N or
    /// run:N, never a bare number) whose figures (uncached) are each cell's limit
    #[arg(long, value_name = "RATE|RUN")]
    pub limit: Option<String>,

    /// Exit 5 when a figure of B is slower than A's by more than this beyond noise (10%, 0.5%),
    /// listing those figures. The figures (the headline rates, or --metric's) are one family: a
    /// one-sided rank test per figure, Holm's correction over them, 5% family-wise. Exit 6 (not
    /// checked) when a figure could not be held to it (not in B, left out as partial or failed,
    /// too few samples to reach the corrected level, or a spread that hides a change of this
    /// size), naming each and the repeats a side it needs: never a pass on what was not checked.
    /// With more than two sides, every side is held against the baseline: exit 5 when any side
    /// has a figure slower, else 6 when any figure of any side could not be checked
    #[arg(long, value_name = "PERCENT")]
    pub fail_if_slower: Option<String>,

    /// With --fail-if-slower: the figures held to it instead of the headline rates: a unit (KB/s,
    /// IOPS, ops/s, ms; any case), a percentile (p50, p99: the latencies there) or part of a
    /// figure's name ("read", "write 64m/4k", "open p99")
    #[arg(long, value_name = "UNIT|PERCENTILE|NAME", requires = "fail_if_slower")]
    pub metric: Option<String>,

    /// Take cells where some clients or connections failed (partial) into the medians and
    /// verdicts, marked; by default they are left out and listed. Failed cells never enter
    #[arg(long)]
    pub include_partial: bool,

    /// Take disturbed cells (which did not run for their time: the process was stopped, its
    /// clocks disagree, a timed cell ran far past its duration) into the medians and verdicts, marked; by
    /// default they are left out and listed with their cause (docs/measuring.md)
    #[arg(long)]
    pub include_disturbed: bool,

    /// List every plan field and environment fact one side does not know (an imported run's
    /// tool options, a native run's facts), where the text otherwise counts them in one line
    #[arg(long)]
    pub all: bool,

    /// A derived figure, declared: NAME = ROWS * FACTOR or NAME = FACTOR / ROWS, ROWS read, write
    /// or part of a metric row's name, FACTOR a number or ratio(RUNS, SIZE); worked from A's and
    /// B's figures, printed apart and marked derived, never stored (repeatable). Seed 003's backup
    /// window, 200 GB (209715200 KB) over the backup's KB/s, in hours (/3600): --derive
    /// 'window_hours = 58254.2 / backup'
    #[arg(long = "derive", value_name = "FORMULA")]
    pub derive: Vec<String>,

    #[command(flatten)]
    pub numbers: super::numbers::NumberArgs,

    /// Machine-readable output (schema "iomatrix.compare/2"; with more than two sides
    /// "iomatrix.compare/3", docs/json.md)
    #[arg(long)]
    pub json: bool,
}

/// One side, summarised: what compare keeps of its runs once they are dropped.
struct Side {
    /// Whether its runs are repeats of one setup.
    repeats: Result<(), UsageError>,
    /// Its summary; None where its runs are not one suite's repeats of one setup.
    group: Option<Group>,
    ids: Vec<i64>,
    labels: Vec<Vec<(String, String)>>,
    suites: Vec<(String, String)>,
}

/// `--fail-if-slower 5%` as a fraction (0.05).
fn threshold(text: &str) -> Result<f64, UsageError> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..100.0).contains(&v) => Ok(v / 100.0),
        _ => {
            Err(UsageError::new(format!("--fail-if-slower {text}: give a percentage from 0 to below 100, such as 5%")))
        }
    }
}

/// `db_given`: the database was named (`--db`, IOMATRIX_DB), so the sweep compare suggests names it too.
pub fn run(args: CompareArgs, db: &Path, db_given: bool) -> anyhow::Result<ExitCode> {
    let fail_if_slower = args.fail_if_slower.as_deref().map(threshold).transpose()?;
    let region = Region {
        files: range("--files", args.files.as_deref())?,
        records: range("--records", args.records.as_deref())?,
    };
    let store = Store::open(db)?;
    if args.sides.len() < 2 {
        return Err(UsageError::new(format!(
            "compare needs two sides or more, got {}: give the baseline and what to hold against it, e.g. \
             iomatrix compare 12 13, or server=netware server=linux",
            args.sides.len()
        ))
        .into());
    }
    let baseline = baseline(&args.sides, args.baseline.as_deref())?;
    let pooled = super::numbers::admit(args.include_partial, args.include_disturbed);
    // Each side summarised as it is loaded, its runs dropped before the next side's are read.
    let sides = super::select::resolve_each(&store, &args.sides, |spec, runs| {
        let mut side = vec![(spec.to_string(), runs)];
        with_native_fields(&mut side);
        let (name, runs) = side.pop().unwrap_or_default();
        // Held, not raised: as ever, the sides' suites are checked before any side's repeats,
        // and a side is summarised only when its runs are one suite's repeats of one setup.
        let repeats = super::select::repeats(&name, &runs);
        let suites = super::select::suites_of(&name, &runs);
        let fit = repeats.is_ok() && super::select::one_suite_of(suites.clone()).is_ok();
        Ok(Side {
            repeats,
            group: fit.then(|| Group::with(&name, &runs, crate::suites::shape_of(&runs), pooled)),
            ids: runs.iter().map(|r| r.summary.id).collect(),
            labels: runs.iter().map(|r| r.summary.labels.clone()).collect(),
            suites,
        })
    })?;
    super::select::one_suite_of(sides.iter().flat_map(|s| s.suites.iter().cloned()).collect())?;
    for side in &sides {
        side.repeats.clone()?;
    }
    let mut groups: Vec<Group> = Vec::with_capacity(sides.len());
    let mut labels_of: Vec<Vec<Vec<(String, String)>>> = Vec::with_capacity(sides.len());
    let mut ids_of: Vec<Vec<i64>> = Vec::with_capacity(sides.len());
    for side in sides {
        groups.extend(side.group);
        labels_of.push(side.labels);
        ids_of.push(side.ids);
    }
    if groups.len() > 2 {
        one_run_one_side(&args.sides, &ids_of)?;
        let labels: Vec<Vec<&[(String, String)]>> =
            labels_of.iter().map(|runs| runs.iter().map(|l| &l[..]).collect()).collect();
        let labels = iomatrix_analysis::distinguishing_labels(&labels);
        let many = super::compare_many::ManyArgs {
            json: args.json,
            all: args.all,
            metric: args.metric.as_deref(),
            numbers: &args.numbers,
            derive: !args.derive.is_empty(),
            limit: args.limit.as_deref().map(|l| limit(&store, l)).transpose()?,
        };
        return super::compare_many::run(&many, &groups, &labels, baseline, region, fail_if_slower);
    }
    // Two sides: the baseline is A.
    let Ok([first, second]) = <[Group; 2]>::try_from(groups) else {
        return Err(anyhow::anyhow!("compare: two sides were checked for, and not found (a bug)"));
    };
    let (a, b) = match baseline {
        0 => (first, second),
        _ => (second, first),
    };
    let limit = args.limit.as_deref().map(|l| limit(&store, l)).transpose()?;
    let flags = limit.as_ref().map(|l| (flag_cached(&a, l), flag_cached(&b, l)));
    let mut comparison = compare(&a, &b, region);
    super::numbers::exclude(&mut comparison, &args.numbers.exclude)?;
    let derived = derive(&store, &args.derive, &comparison, &a)?;
    if let Some(hint) = comparison.sweep_hint.as_mut().filter(|_| db_given) {
        hint.command += &format!(" --db {}", shell_words::quote(&db.to_string_lossy()));
    }
    let slower = match fail_if_slower {
        Some(t) => Some((t, regressions(&comparison, &a, &b, t, args.metric.as_deref()).map_err(UsageError::from)?)),
        None => None,
    };
    print_two_sides(&args, &comparison, flags.as_ref(), slower.as_ref(), &derived)?;
    match slower.as_ref().map(|(t, gate)| (t, gate, gate.outcome())) {
        Some((_, _, "slower")) => Ok(ExitCode::from(crate::exit::SLOWER)),
        Some((t, gate, "not checked")) => {
            // A gate that cannot fail must not pass: the pipeline hears it checked nothing (or not all).
            eprintln!("iomatrix: {}", text::compare::not_checked(*t, gate));
            Ok(ExitCode::from(crate::exit::NOT_CHECKED))
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// A fio run imported before its plan carried the native fields gets them here, as an import
/// today gives them: its plan is held against a native one field by field either way.
fn with_native_fields(groups: &mut [(String, Vec<StoredRun>)]) {
    let importers = crate::suites::importers();
    for run in groups.iter_mut().flat_map(|(_, runs)| runs.iter_mut()) {
        // The suite's importer reads the stored plan by its own types.
        if let Some(fields) = importers.native_plan_fields(run.records().plan, &run.cell_results) {
            run.extend_plan(fields);
        }
    }
}

/// Two sides' comparison, as JSON (schema iomatrix.compare/2) or tables; `slower` is
/// `--fail-if-slower`'s threshold and what its gate found.
fn print_two_sides(
    args: &CompareArgs,
    comparison: &Comparison,
    flags: Option<&(CacheFlags, CacheFlags)>,
    slower: Option<&(f64, Gate)>,
    derived: &[Derived],
) -> anyhow::Result<()> {
    if args.json {
        let mut doc = serde_json::json!({
            "schema": "iomatrix.compare/2",
            "comparison": comparison,
            "cache_flags": flags.map(|(fa, fb)| serde_json::json!({"a": fa, "b": fb})),
            "fail_if_slower": slower.map(|(t, gate)| gate_json(*t, args.metric.as_deref(), gate)),
        });
        if !derived.is_empty() {
            doc["derived"] = serde_json::to_value(derived)?;
        }
        crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    } else {
        let out = args.numbers.render(|| {
            let mut out = text::compare::comparison(comparison, flags, args.all);
            out.push_str(&text::derived::compared(derived));
            if let Some((t, found)) = slower {
                out.push_str(&text::compare::gate(*t, args.metric.as_deref(), found));
            }
            out
        });
        crate::out::print(&out)?;
    }
    Ok(())
}

/// `--fail-if-slower`'s gate as JSON: the threshold, what it found, and how it tested (family,
/// test, correction, detectable change, each figure's check).
pub(super) fn gate_json(threshold: f64, metric: Option<&str>, gate: &Gate) -> serde_json::Value {
    let mut doc =
        serde_json::json!({ "threshold_pct": threshold * 100.0, "metric": metric, "outcome": gate.outcome() });
    if let (Some(doc), Ok(serde_json::Value::Object(fields))) = (doc.as_object_mut(), serde_json::to_value(gate)) {
        doc.extend(fields);
    }
    doc
}

/// `--baseline`: the index of the side it names, as given or by position (1..N); without it the
/// first. A name that is also another side's position is refused as ambiguous.
pub fn baseline(sides: &[String], given: Option<&str>) -> Result<usize, UsageError> {
    let Some(given) = given else { return Ok(0) };
    let listed = || sides.iter().enumerate().map(|(i, s)| format!("{} ({s})", i + 1)).collect::<Vec<_>>().join(", ");
    let by_name = sides.iter().position(|s| s == given);
    let by_position = given.parse::<usize>().ok().filter(|p| (1..=sides.len()).contains(p)).map(|p| p - 1);
    match (by_name, by_position) {
        (Some(n), Some(p)) if n != p => Err(UsageError::new(format!(
            "--baseline {given}: both the side given as '{given}' (position {}) and the side at position {given} \
             ('{}'); give the run as #{given} on the command line, or the baseline by its other position",
            n + 1,
            sides[p]
        ))),
        (Some(i), _) | (None, Some(i)) => Ok(i),
        (None, None) => Err(UsageError::new(format!(
            "--baseline {given}: no side is given as '{given}'; name one of the sides as given, or its position: \
             {}",
            listed()
        ))),
    }
}

/// With more than two sides, a run (of one host, with `RUNS@HOST`) is on one side only: on two
/// it would be one sample in two columns. `sides`: each side's run ids.
pub fn one_run_one_side(specs: &[String], sides: &[Vec<i64>]) -> Result<(), UsageError> {
    let mut seen: std::collections::HashMap<(i64, Option<&str>), usize> = std::collections::HashMap::new();
    for (side, (spec, ids)) in specs.iter().zip(sides).enumerate() {
        let host = super::select::host_of(spec);
        for id in ids {
            if let Some(first) = seen.insert((*id, host), side).filter(|f| *f != side) {
                return Err(UsageError::new(format!(
                    "run #{} is on two sides, {} ('{}') and {} ('{spec}'): a run is a sample of one side; give each \
                     run to one side (narrow the labels, or list the runs: 3,4,5)",
                    id,
                    first + 1,
                    specs[first],
                    side + 1
                )));
            }
        }
    }
    Ok(())
}

/// `--limit`: a rate with its unit (`100Mbit`, `110MB/s`), or a run (`#7`, `run:7`) whose figures
/// are each cell's limit. A bare number is refused: `--limit 1` read as "run #1" by some and as
/// a rate of 1 by others, so it must say which.
pub fn limit(store: &Store, text: &str) -> anyhow::Result<Limit> {
    let digits = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    if digits(text.trim()) {
        return Err(UsageError::new(format!(
            "--limit {text}: a run or a rate? give --limit #{n} for run #{n}'s figures as each cell's limit, \
             or a rate with its unit, e.g. --limit 100Mbit or --limit 110MB/s",
            n = text.trim()
        ))
        .into());
    }
    if let Some(id) = text.strip_prefix('#').or_else(|| text.strip_prefix("run:")).filter(|id| digits(id)) {
        let groups = super::select::resolve(store, &[id.to_string()])?;
        let name = format!("run #{id}");
        return Ok(Limit::from_group(&Group::of(&name, &groups[0].1, crate::suites::shape_of(&groups[0].1))));
    }
    Ok(Limit::parse_rate(text).map_err(UsageError::from)?)
}

/// `..2m`, `64k..`, `64k..2m`, `1m` (exactly): inclusive bounds.
pub fn range(flag: &str, text: Option<&str>) -> Result<(Option<u64>, Option<u64>), UsageError> {
    let Some(text) = text else { return Ok((None, None)) };
    let size = |s: &str| -> Result<Option<u64>, UsageError> {
        if s.trim().is_empty() {
            return Ok(None);
        }
        s.trim()
            .parse::<ByteSize>()
            .map(|b| Some(b.bytes()))
            .map_err(|e| UsageError::new(format!("{flag} {text}: {e}")))
    };
    let (lo, hi) = match text.split_once("..") {
        Some((lo, hi)) => (size(lo)?, size(hi)?),
        None => {
            let exact = size(text)?;
            (exact, exact)
        }
    };
    match (lo, hi) {
        (None, None) => Err(UsageError::new(format!("{flag} {text}: give a range such as ..2m, 64k..2m or 1m.."))),
        (Some(l), Some(h)) if l > h => {
            Err(UsageError::new(format!("{flag} {text}: the lower bound is above the upper")))
        }
        bounds => Ok(bounds),
    }
}

/// `compare --derive`: each formula worked from A's and B's rows; a formula that takes no row is
/// refused, naming the rows there are.
pub fn derive(store: &Store, formulas: &[String], c: &Comparison, a: &Group) -> anyhow::Result<Vec<Derived>> {
    let mut out = Vec::new();
    for text in formulas {
        let d = Derivation::parse(text).map_err(UsageError::from)?;
        let factor = match &d.factor {
            Factor::Number(n) => *n,
            Factor::Ratio { runs, size } => super::sweep::ratio(store, runs, size, None)?,
        };
        let derived = derive_compare(&d, factor, c, a);
        if derived.rows.is_empty() {
            let rows: Vec<&str> = c.scalars.iter().map(|s| s.metric.as_str()).collect();
            return Err(UsageError::new(format!(
                "--derive '{text}': no compared row is named so; compare derives from its metric rows ({}), not from \
                 the matrices' cells",
                if rows.is_empty() { "this comparison has none".to_string() } else { rows.join(", ") }
            ))
            .into());
        }
        out.push(derived);
    }
    Ok(out)
}
