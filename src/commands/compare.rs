//! `iomatrix compare A B`: B against A, cell by cell (medians where a side
//! holds several runs), as the seed authors' spreadsheets did.

use clap::Args;
use iomatrix_analysis::{compare, flag_cached, CacheFlags, Comparison, Group, Limit, MatrixComparison, Region};
use iomatrix_core::{ByteSize, UsageError};
use iomatrix_store::Store;
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

    /// Machine-readable output (schema "iomatrix.compare/1", docs/json.md)
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: CompareArgs, db: &Path) -> anyhow::Result<ExitCode> {
    let region = Region {
        files: range("--files", args.files.as_deref())?,
        records: range("--records", args.records.as_deref())?,
    };
    let store = Store::open(db)?;
    let groups = super::select::resolve(&store, &[args.a.clone(), args.b.clone()])?;
    super::select::one_suite(&groups)?;
    let (a, b) = (Group::of(&groups[0].0, &groups[0].1), Group::of(&groups[1].0, &groups[1].1));
    let limit = args.limit.as_deref().map(|l| limit(&store, l)).transpose()?;
    let flags = limit.as_ref().map(|l| (flag_cached(&a, l), flag_cached(&b, l)));
    let comparison = compare(&a, &b, region);
    if args.json {
        let doc = serde_json::json!({
            "schema": "iomatrix.compare/1",
            "comparison": comparison,
            "cache_flags": flags.as_ref().map(|(fa, fb)| serde_json::json!({"a": fa, "b": fb})),
        });
        crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    } else {
        crate::out::print(&text(&comparison, flags.as_ref()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `--limit`: a rate, or a run (`#7`, `7`) whose figures are each cell's limit.
pub fn limit(store: &Store, text: &str) -> anyhow::Result<Limit> {
    let is_run = text.trim_start_matches('#').chars().all(|c| c.is_ascii_digit()) && !text.is_empty();
    if is_run {
        let groups = super::select::resolve(store, &[text.to_string()])?;
        let name = format!("run #{}", text.trim_start_matches('#'));
        return Ok(Limit::from_group(&Group::of(&name, &groups[0].1)));
    }
    Ok(Limit::parse_rate(text).map_err(UsageError::new)?)
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

fn signed(pct: f64) -> String {
    if pct.is_finite() {
        format!("{pct:+.1}%")
    } else {
        "-".into()
    }
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
    if c.condition_differences.is_empty() {
        out.push_str(
            "conditions: the same on both sides (backend, direct/cached, clients, files vs RAM, file system, \
             partition alignment)\n",
        );
    } else {
        out.push_str("NOTE: the sides were measured under different conditions:\n");
        for d in &c.condition_differences {
            let _ = writeln!(out, "  {d}");
        }
    }
    for m in &c.matrices {
        out.push_str(&matrix_text(m, c.region));
    }
    if !c.scalars.is_empty() {
        let _ = writeln!(out, "\n{:<48} {:>14} {:>14} {:>9}", "metric", "A", "B", "change");
        for s in &c.scalars {
            let _ = writeln!(
                out,
                "{:<48} {:>14.1} {:>14.1} {:>9}",
                format!("{} ({})", s.metric, s.unit),
                s.a,
                s.b,
                signed(s.change_pct)
            );
        }
    }
    if !c.latency.is_empty() {
        out.push_str("\nLatency, microseconds (A / B)\n");
        for l in &c.latency {
            let cols: Vec<String> =
                l.percentiles.iter().map(|(p, a, b)| format!("{p} {:.1} / {:.1}", a / 1e3, b / 1e3)).collect();
            let _ = writeln!(out, "  {} {}: {}", l.cell, l.operation, cols.join(", "));
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

fn matrix_text(m: &MatrixComparison, region: Region) -> String {
    let mut out = format!("\n{}: B/A of {} (rows: file size, columns: record size)\n", m.test, m.unit);
    let _ = write!(out, "{:>8}", "");
    for r in &m.record_sizes {
        let _ = write!(out, " {:>7}", size(*r));
    }
    let _ = writeln!(out, " | {:>7}", "mean");
    for (i, f) in m.file_sizes.iter().enumerate() {
        let _ = write!(out, "{:>8}", size(*f));
        for ratio in &m.ratios[i] {
            match ratio {
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
        signed(t.mean_change_pct),
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
            signed(t.mean_change_pct),
            t.cells,
            t.a_wins,
            t.b_wins
        );
    }
    out
}
