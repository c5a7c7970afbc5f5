//! `iomatrix compare A B`: B against A, cell by cell (medians where a side
//! holds several runs), as the seed authors' spreadsheets did.

use clap::Args;
use iomatrix_analysis::{
    compare, flag_cached, regressions, CacheFlags, Comparison, Gate, Group, Judgement, Limit, MatrixComparison,
    Partial, Region,
};
use iomatrix_core::{human, ByteSize, UsageError};
use iomatrix_store::{Store, StoredRun};
use std::fmt::Write;
use std::path::Path;
use std::process::ExitCode;

/// `iomatrix compare A B`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The baseline: a run id (12 or #12), repeats of one setup (3,4,5: medians), or labels
    /// (server=netware)
    #[arg(value_name = "A")]
    pub a: String,

    /// Compared against A, in the same forms; ratios are B/A
    #[arg(value_name = "B")]
    pub b: String,

    /// Also summarise this region of file sizes, e.g. ..2m, 64k..2m, 1m.. (bounds included)
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
    pub files: Option<String>,

    /// Also summarise this region of record sizes, e.g. ..32k
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true)]
    pub records: Option<String>,

    /// Flag cells faster than this as served by a cache: 100Mbit, 1Gbit, 110MB/s, or a run id
    /// (#N) whose figures (uncached) are each cell's limit
    #[arg(long, value_name = "RATE|RUN")]
    pub limit: Option<String>,

    /// Exit 5 when any figure of B is slower than A's by more than this beyond noise (5%, 0.5%;
    /// a rank test of the samples: both sides need --repeat 4 or more), listing those figures;
    /// exit 6 (not checked) when a figure of A could not be held to it (not in B, left out as
    /// partial or failed, too few samples), naming each: never a pass on what was not checked
    #[arg(long, value_name = "PERCENT")]
    pub fail_if_slower: Option<String>,

    /// With --fail-if-slower: only figures whose name contains this ("read", "write 64m/4k",
    /// "open p99")
    #[arg(long, value_name = "NAME", requires = "fail_if_slower")]
    pub metric: Option<String>,

    /// Take cells where some clients or connections failed (partial) into the medians and
    /// verdicts, marked; by default they are left out and listed. Failed cells never enter
    #[arg(long)]
    pub include_partial: bool,

    /// Machine-readable output (schema "iomatrix.compare/2", docs/json.md)
    #[arg(long)]
    pub json: bool,
}

/// `--include-partial` as the analysis takes it.
pub fn partial(include: bool) -> Partial {
    if include {
        Partial::Included
    } else {
        Partial::LeftOut
    }
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

pub fn run(args: CompareArgs, db: &Path) -> anyhow::Result<ExitCode> {
    let fail_if_slower = args.fail_if_slower.as_deref().map(threshold).transpose()?;
    let region = Region {
        files: range("--files", args.files.as_deref())?,
        records: range("--records", args.records.as_deref())?,
    };
    let store = Store::open(db)?;
    let groups = super::select::resolve(&store, &[args.a.clone(), args.b.clone()])?;
    super::select::one_suite(&groups)?;
    for (name, runs) in &groups {
        super::select::repeats(name, runs)?;
    }
    let pooled = partial(args.include_partial);
    let group =
        |(name, runs): &(String, Vec<StoredRun>)| Group::with(name, runs, crate::suites::shape_of(runs), pooled);
    let (a, b) = (group(&groups[0]), group(&groups[1]));
    let limit = args.limit.as_deref().map(|l| limit(&store, l)).transpose()?;
    let flags = limit.as_ref().map(|l| (flag_cached(&a, l), flag_cached(&b, l)));
    let comparison = compare(&a, &b, region);
    let slower = fail_if_slower.map(|t| (t, regressions(&comparison, &a, &b, t, args.metric.as_deref())));
    if let (Some((_, found)), Some(metric)) = (&slower, &args.metric) {
        let named = a.cells.keys().map(|k| k.describe()).chain(
            comparison
                .operations
                .iter()
                .flat_map(|t| t.rows.iter().map(move |r| format!("{} {} {}", t.phase, r.operation, r.figure))),
        );
        if found.slower.is_empty() && !named.into_iter().any(|n| n.contains(metric.as_str())) {
            return Err(UsageError::new(format!(
                "--metric {metric}: no compared figure has that in its name; give part of a cell's name as the \
                 tables print it (read, write 64m/4k, open p99)"
            ))
            .into());
        }
    }
    if args.json {
        let doc = serde_json::json!({
            "schema": "iomatrix.compare/2",
            "comparison": comparison,
            "cache_flags": flags.as_ref().map(|(fa, fb)| serde_json::json!({"a": fa, "b": fb})),
            "fail_if_slower": slower.as_ref().map(|(t, gate)| serde_json::json!({
                "threshold_pct": t * 100.0,
                "metric": args.metric,
                "outcome": gate_outcome(gate),
                "slower": gate.slower,
                "checked": gate.checked,
                "not_checked": gate.not_checked,
            })),
        });
        crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    } else {
        let mut out = text(&comparison, flags.as_ref());
        if let Some((t, found)) = &slower {
            out.push_str(&regression_text(*t, args.metric.as_deref(), found));
        }
        crate::out::print(&out)?;
    }
    match slower.as_ref().map(|(t, gate)| (t, gate, gate_outcome(gate))) {
        Some((_, _, "slower")) => Ok(ExitCode::from(crate::exit::SLOWER)),
        Some((t, gate, "not checked")) => {
            // A gate that cannot fail must not pass: the pipeline hears it checked nothing (or not all).
            eprintln!(
                "iomatrix: --fail-if-slower {}%: not checked: {} of the {} figure(s) asked about could not be held to \
                 it ({}){}",
                t * 100.0,
                gate.not_checked.len(),
                gate.checked + gate.not_checked.len(),
                match gate.not_checked.len() {
                    n if n > 3 => format!("{} and {} more", gate.not_checked[..3].join("; "), n - 3),
                    _ => gate.not_checked.join("; "),
                },
                if gate.not_checked.iter().any(|n| n.contains("too few samples")) {
                    "; give both sides --repeat 4 (or 4 runs each)"
                } else {
                    ""
                }
            );
            Ok(ExitCode::from(crate::exit::NOT_CHECKED))
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// "slower" (a figure beyond the threshold), "not checked" (none slower, but a figure asked
/// about could not be held to it), or "passed" (every figure asked about checked, none slower).
fn gate_outcome(gate: &Gate) -> &'static str {
    if !gate.slower.is_empty() {
        "slower"
    } else if !gate.not_checked.is_empty() || gate.checked == 0 {
        "not checked"
    } else {
        "passed"
    }
}

fn regression_text(threshold: f64, metric: Option<&str>, gate: &Gate) -> String {
    let what = metric.map(|m| format!(" (figures named \"{m}\")")).unwrap_or_default();
    let pct = threshold * 100.0;
    let mut out = match gate_outcome(gate) {
        "slower" => {
            let mut out = format!(
                "\n--fail-if-slower {pct}%{what}: {} figure(s) slower than A by more than {pct}% beyond noise:\n",
                gate.slower.len()
            );
            for r in &gate.slower {
                let _ = writeln!(
                    out,
                    "  {}: {:.1} -> {:.1} {} ({})",
                    r.cell,
                    r.a,
                    r.b,
                    r.unit,
                    human::signed_percent(r.change_pct)
                );
            }
            out
        }
        "not checked" => format!(
            "\n--fail-if-slower {pct}%{what}: NOT CHECKED: {} figure(s) checked, none slower; {} could not be \
             checked:\n",
            gate.checked,
            gate.not_checked.len()
        ),
        _ => format!(
            "\n--fail-if-slower {pct}%{what}: nothing slower than A by more than {pct}% beyond noise ({} figure(s) \
             checked)\n",
            gate.checked
        ),
    };
    for name in &gate.not_checked {
        let _ = writeln!(out, "  not checked: {name}");
    }
    out
}

/// `--limit`: a rate, or a run (`#7`, `7`) whose figures are each cell's limit.
pub fn limit(store: &Store, text: &str) -> anyhow::Result<Limit> {
    let is_run = text.trim_start_matches('#').chars().all(|c| c.is_ascii_digit()) && !text.is_empty();
    if is_run {
        let groups = super::select::resolve(store, &[text.to_string()])?;
        let name = format!("run #{}", text.trim_start_matches('#'));
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
        (None, None) => Err(UsageError::new(format!("{flag} {text}: give a range such as ..2m, 64k..2m or 1m..",))),
        (Some(l), Some(h)) if l > h => {
            Err(UsageError::new(format!("{flag} {text}: the lower bound is above the upper")))
        }
        bounds => Ok(bounds),
    }
}

fn size(bytes: u64) -> String {
    ByteSize(bytes).to_string()
}

pub fn text(c: &Comparison, flags: Option<&(CacheFlags, CacheFlags)>) -> String {
    let mut out = String::new();
    let runs = |ids: &[i64]| ids.iter().map(|i| format!("#{i}")).collect::<Vec<_>>().join(",");
    let _ = writeln!(
        out,
        "compare ({} suite): A = {} (runs {}), B = {} (runs {}); figures are medians over each side's runs",
        c.suite,
        c.a,
        runs(&c.a_runs),
        c.b,
        runs(&c.b_runs)
    );
    let both = |what: &str, list: &[iomatrix_analysis::Difference], out: &mut String| {
        if list.is_empty() {
            let _ = writeln!(out, "{what}: the same on both sides");
        } else {
            let _ = writeln!(out, "{what} that differ (A vs B):");
            for d in list {
                let _ = writeln!(out, "  {}: {} vs {}", d.name, d.a, d.b);
            }
        }
    };
    both("plan parameters", &c.plan_differences, &mut out);
    both("environment facts", &c.environment_differences, &mut out);
    if !c.unknown.is_empty() {
        let _ = writeln!(out, "not known on one side (not compared): {}", c.unknown.join(", "));
    }
    // "The same" only when it is: the plans alike too, not only the conditions named here.
    match (c.condition_differences.is_empty(), c.plan_differences.is_empty()) {
        (true, true) => out.push_str(
            "conditions: the same on both sides (plan, backend, direct/cached, clients, files vs RAM, file system, \
             partition alignment, closed or open loop, fsync/close timed, io_uring submissions, data)\n",
        ),
        (true, false) => out.push_str(
            "NOTE: the sides were measured under different plans (the parameters above): the changes below are \
             not the same work measured twice\n",
        ),
        (false, _) => {
            out.push_str("NOTE: the sides were measured under different conditions:\n");
            for d in &c.condition_differences {
                let _ = writeln!(out, "  {d}");
            }
        }
    }
    out.push_str(&left_out_text(c));
    let partial_mark = |partial: bool| if partial { " *" } else { "" };
    for (m, verdicts) in c.matrices.iter().zip(&c.matrix_verdicts) {
        out.push_str(&matrix_text(m, c.region));
        out.push_str(&verdict_line(verdicts.iter().flatten().flatten()));
    }
    if !c.scalars.is_empty() {
        let _ = writeln!(out, "\n{:<48} {:>14} {:>14} {:>9}  verdict", "metric", "A", "B", "change");
        for s in &c.scalars {
            let _ = writeln!(
                out,
                "{:<48} {:>14.1} {:>14.1} {:>9}  {}",
                format!("{} ({}){}", s.metric, s.unit, partial_mark(s.partial)),
                s.a,
                s.b,
                human::signed_percent(s.change_pct),
                s.verdict.describe()
            );
        }
    }
    for t in &c.operations {
        let _ = writeln!(out, "\n{}: per operation, A and B (medians over the samples) and % change", t.phase);
        let _ = writeln!(out, "{:<28} {:>12} {:>12} {:>9}  verdict", "operation", "A", "B", "change");
        for r in &t.rows {
            let _ = writeln!(
                out,
                "{:<28} {:>12} {:>12} {:>9}  {}",
                format!("{} {} ({}){}", r.operation, r.figure, r.unit, partial_mark(r.partial)),
                human::significant(r.a),
                human::significant(r.b),
                human::signed_percent(r.change_pct),
                r.verdict.describe()
            );
        }
    }
    let n = &c.noise;
    let total = n.faster + n.slower + n.within_noise + n.no_verdict;
    if total > 0 {
        let _ = writeln!(
            out,
            "\nNoise (Mann-Whitney rank test of the samples, two-sided, {}% level): B faster in {}, slower in {}, \
             within noise in {}, no verdict in {} of {total} compared figures",
            iomatrix_analysis::ALPHA * 100.0,
            n.faster,
            n.slower,
            n.within_noise,
            n.no_verdict
        );
        let needed = c
            .matrix_verdicts
            .iter()
            .flatten()
            .flatten()
            .flatten()
            .chain(c.scalars.iter().map(|s| &s.verdict))
            .chain(c.operations.iter().flat_map(|t| t.rows.iter().map(|r| &r.verdict)))
            .filter_map(|j| j.repeats_needed)
            .max();
        if let Some(k) = needed {
            let _ = writeln!(
                out,
                "  no verdict: too few samples for the test to reach its level; --repeat {k} (or {k} runs a side) on both \
                 sides gives one"
            );
        }
    }
    for (side, cells) in [("A", &c.only_in_a), ("B", &c.only_in_b)] {
        if !cells.is_empty() {
            let _ = writeln!(out, "\nonly in {side} ({} cells, not compared): {}", cells.len(), cells.join(", "));
        }
    }
    if let Some((fa, fb)) = flags {
        let _ = writeln!(out, "\nCaching: cells faster than the limit ({}) were served by a cache", fa.limit);
        for (side, f) in [("A", fa), ("B", fb)] {
            if f.flagged.is_empty() {
                let _ = writeln!(out, "  {side}: no cell above the limit");
            }
            for b in &f.boundaries {
                let _ = writeln!(out, "  {side}: {b}");
            }
            if f.unchecked > 0 {
                let _ = writeln!(out, "  {side}: {} cells had no limit to hold them to", f.unchecked);
            }
        }
    }
    out
}

/// The cells each side stored but left out of its medians (not whole), and with
/// `--include-partial` what the marks mean.
fn left_out_text(c: &Comparison) -> String {
    let mut out = String::new();
    if !c.left_out_a.is_empty() || !c.left_out_b.is_empty() {
        let what = match c.partial {
            Partial::LeftOut => {
                "partial and failed cells are left out of the medians and verdicts \
                                 (--include-partial takes partial ones in, marked)"
            }
            Partial::Included => "failed cells are left out of the medians and verdicts",
        };
        let _ = writeln!(out, "NOT COMPLETE: clients or connections failed in some cells; {what}:");
        for (side, cells) in [("A", &c.left_out_a), ("B", &c.left_out_b)] {
            for l in cells {
                let _ = writeln!(out, "  {side}: {}", l.describe());
            }
        }
    }
    let marked = c.scalars.iter().any(|s| s.partial)
        || c.operations.iter().flat_map(|t| &t.rows).any(|r| r.partial)
        || c.matrices.iter().flat_map(|m| m.partial.iter().flatten()).any(|p| *p);
    if marked {
        out.push_str(
            "PARTIAL CELLS TAKEN IN (--include-partial): figures marked * include samples of cells where some \
             clients or connections failed\n",
        );
    }
    out
}

/// One matrix's verdicts, counted; where none is possible, what would give one.
fn verdict_line<'a>(verdicts: impl Iterator<Item = &'a Judgement>) -> String {
    let all: Vec<&Judgement> = verdicts.collect();
    let count = |v: &str| all.iter().filter(|j| j.verdict == v).count();
    let mut out = format!(
        "verdicts: B faster in {}, slower in {}, within noise in {}",
        count("faster"),
        count("slower"),
        count("within noise")
    );
    if let Some(j) = all.iter().find(|j| j.verdict == "no verdict") {
        let _ =
            write!(out, ", no verdict in {} ({})", count("no verdict"), j.describe().trim_start_matches("no verdict "));
    }
    out.push('\n');
    out
}

fn matrix_text(m: &MatrixComparison, region: Region) -> String {
    let mut out = format!("\n{}: B/A of {} (rows: file size, columns: record size)\n", m.test, m.unit);
    let _ = write!(out, "{:>8}", "");
    for r in &m.record_sizes {
        let _ = write!(out, " {:>7}", size(*r));
    }
    let _ = writeln!(out, " | {:>7}", "mean");
    for (i, f) in m.file_sizes.iter().enumerate() {
        let _ = write!(out, "{:>8}", size(*f));
        for (ratio, partial) in m.ratios[i].iter().zip(&m.partial[i]) {
            match ratio {
                Some(r) if *partial => {
                    let _ = write!(out, " {r:>6.2}*");
                }
                Some(r) => {
                    let _ = write!(out, " {r:>7.2}");
                }
                None => out.push_str("       -"),
            }
        }
        let mean = m.by_file.iter().find(|(size, _)| size == f).map(|(_, m)| format!("{m:.2}")).unwrap_or("-".into());
        let _ = writeln!(out, " | {mean:>7}");
    }
    let _ = write!(out, "{:>8}", "mean");
    for r in &m.record_sizes {
        let mean = m.by_record.iter().find(|(size, _)| size == r).map(|(_, m)| format!("{m:.2}")).unwrap_or("-".into());
        let _ = write!(out, " {mean:>7}");
    }
    out.push_str("   (record-size view: mean per column; file-size view: mean per row)\n");
    let t = &m.overall;
    let _ = writeln!(
        out,
        "overall: mean change {} over {} cells; A faster in {}, B faster in {}, equal in {}",
        human::signed_percent(t.mean_change_pct),
        t.cells,
        t.a_wins,
        t.b_wins,
        t.ties
    );
    if let Some(t) = &m.region {
        let bound = |(lo, hi): (Option<u64>, Option<u64>)| match (lo, hi) {
            (None, None) => "all".to_string(),
            (lo, hi) => format!("{}..{}", lo.map(size).unwrap_or_default(), hi.map(size).unwrap_or_default()),
        };
        let _ = writeln!(
            out,
            "region files {} records {}: mean change {} over {} cells; A faster in {}, B faster in {}",
            bound(region.files),
            bound(region.records),
            human::signed_percent(t.mean_change_pct),
            t.cells,
            t.a_wins,
            t.b_wins
        );
    }
    out
}
