//! Seed 003's headline rows, B against A: per phase of connections (the file-server load, a
//! personality) each operation's mean response time, the time taken for the phase's completion,
//! the throughput per connection beside the total; per backup walk its files, extents, extents
//! per file, MiB/min and elapsed time. In the seed's order. Read from each cell's typed figures
//! ([`CellFigures`]): a figure a side's runs did not store (a run stored before its suite kept
//! it) is unknown there, never 0.

use crate::cells::{median, CellKey, Group};
use crate::noise::{judge, Judgement};
use crate::row::change_pct;
use iomatrix_store::{CellFigures, ExtentFigures, OpMean};
use serde::Serialize;
use std::collections::BTreeMap;

/// What a cell's headline rows read of its typed figures, kept per run by a [`Group`] in place
/// of the whole [`CellFigures`]: a compare of 1,400 runs a side kept 11,200 of those (each with
/// its machine's load), 40 MB.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HeadlineFigures {
    ops: BTreeMap<String, OpMean>,
    completion_ns: Option<u64>,
    avg_connection_kib_per_sec: Option<f64>,
    files: Option<u64>,
    extents: Option<ExtentFigures>,
    wall_ns: Option<u64>,
    mib_per_min: Option<f64>,
}

impl HeadlineFigures {
    /// A cell's headline figures, taken from its typed figures.
    pub fn of(figures: CellFigures) -> HeadlineFigures {
        let CellFigures {
            ops, completion_ns, avg_connection_kib_per_sec, files, extents, wall_ns, mib_per_min, ..
        } = figures;
        HeadlineFigures { ops, completion_ns, avg_connection_kib_per_sec, files, extents, wall_ns, mib_per_min }
    }
}

/// One headline figure: A and B (medians over each side's runs), the change and its verdict;
/// None where a side does not know it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeadlineRow {
    /// "open mean response time", "time taken for test completion", "throughput per connection".
    pub figure: String,
    /// The figure's unit.
    pub unit: &'static str,
    /// A's median; None where A does not know the figure.
    pub a: Option<f64>,
    /// B's median; None where B does not know the figure.
    pub b: Option<f64>,
    /// (B - A) / A in %, as the seed's "% change w.r.t." column; None where a side does not know
    /// the figure or A is 0.
    pub change_pct: Option<f64>,
    /// None for a count that is no measure of speed (files walked).
    pub verdict: Option<Judgement>,
}

/// The headline rows of one cell (a phase: "write 4k..2m (10 sizes)/4k"; a backup walk).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeadlineTable {
    /// The cell, as the tables name it.
    pub cell: String,
    /// Its headline figures, in the seed's order.
    pub rows: Vec<HeadlineRow>,
}

/// Which way a row's figure is better, if it is a measure of speed at all.
#[derive(Clone, Copy)]
enum Better {
    Higher,
    Lower,
    Neither,
}

/// The seed's order of operations: open, close, create, then the data operation; any other
/// operation a phase timed follows in its stored order.
const SEED_ORDER: [&str; 5] = ["open", "close", "create", "write", "read"];

/// Headline tables for every cell both sides have whose figures hold them.
pub fn headline_tables(a: &Group, b: &Group) -> Vec<HeadlineTable> {
    let mut tables = Vec::new();
    for (key, fa) in &a.figures {
        let Some((_, fb)) = b.figures.iter().find(|(k, _)| k == key) else { continue };
        let rows = if is_walk(fa) || is_walk(fb) {
            walk_rows(fa, fb)
        } else if is_phase(fa) || is_phase(fb) {
            phase_rows(key, a, b, fa, fb)
        } else {
            continue;
        };
        tables.push(HeadlineTable { cell: key.describe(), rows });
    }
    tables
}

/// A phase of connections: timed operations, a completion time or a per-connection rate.
fn is_phase(runs: &[HeadlineFigures]) -> bool {
    runs.iter().any(|f| {
        f.completion_ns.is_some()
            || f.avg_connection_kib_per_sec.is_some()
            || f.ops.values().any(|o| o.timed_mean_ns().is_some())
    })
}

/// A backup walk: its MiB/min.
fn is_walk(runs: &[HeadlineFigures]) -> bool {
    runs.iter().any(|f| f.mib_per_min.is_some())
}

fn phase_rows(key: &CellKey, a: &Group, b: &Group, fa: &[HeadlineFigures], fb: &[HeadlineFigures]) -> Vec<HeadlineRow> {
    let mut ops: Vec<String> = Vec::new();
    for f in fa.iter().chain(fb) {
        for (name, op) in &f.ops {
            if op.timed_mean_ns().is_some() && !ops.contains(name) {
                ops.push(name.clone());
            }
        }
    }
    let place = |name: &String| SEED_ORDER.iter().position(|o| o == name).unwrap_or(SEED_ORDER.len());
    ops.sort_by_key(place);
    let mut rows: Vec<HeadlineRow> = ops
        .iter()
        .map(|op| {
            let ms = |f: &HeadlineFigures| f.ops.get(op).and_then(|o| o.timed_mean_ns()).map(|ns| ns / 1e6);
            row(format!("{op} mean response time"), "ms", Better::Lower, fa, fb, ms)
        })
        .collect();
    let seconds = |f: &HeadlineFigures| f.completion_ns.map(|ns| ns as f64 / 1e9);
    rows.push(row("time taken for test completion".into(), "s", Better::Lower, fa, fb, seconds));
    let per_connection = |f: &HeadlineFigures| f.avg_connection_kib_per_sec.filter(|v| v.is_finite() && *v >= 0.0);
    rows.push(row("throughput per connection".into(), "KB/s", Better::Higher, fa, fb, per_connection));
    // The total beside it: the cell's compared figure, where it is a byte rate.
    let total = |g: &Group| g.cells.get(key).filter(|s| s.unit == "KB/s").map(|s| s.values.clone()).unwrap_or_default();
    rows.push(from_samples("throughput, all connections".into(), "KB/s", Better::Higher, total(a), total(b)));
    rows
}

fn walk_rows(fa: &[HeadlineFigures], fb: &[HeadlineFigures]) -> Vec<HeadlineRow> {
    let files = |f: &HeadlineFigures| f.files.map(|v| v as f64);
    let total_extents = |f: &HeadlineFigures| f.extents.as_ref().and_then(|e| e.total_extents).map(|v| v as f64);
    let per_file = |f: &HeadlineFigures| {
        let e = f.extents.as_ref().filter(|e| e.files > 0)?;
        Some(e.total_extents? as f64 / e.files as f64)
    };
    let seconds = |f: &HeadlineFigures| f.wall_ns.map(|ns| ns as f64 / 1e9);
    vec![
        row("total files".into(), "files", Better::Neither, fa, fb, files),
        row("total extents".into(), "extents", Better::Lower, fa, fb, total_extents),
        row("extents per file".into(), "extents", Better::Lower, fa, fb, per_file),
        row("backup throughput".into(), "MiB/min", Better::Higher, fa, fb, |f: &HeadlineFigures| f.mib_per_min),
        row("time taken for test completion".into(), "s", Better::Lower, fa, fb, seconds),
    ]
}

fn row(
    figure: String,
    unit: &'static str,
    better: Better,
    fa: &[HeadlineFigures],
    fb: &[HeadlineFigures],
    read: impl Fn(&HeadlineFigures) -> Option<f64>,
) -> HeadlineRow {
    let samples = |runs: &[HeadlineFigures]| runs.iter().filter_map(&read).filter(|v| v.is_finite()).collect();
    from_samples(figure, unit, better, samples(fa), samples(fb))
}

fn from_samples(figure: String, unit: &'static str, better: Better, a: Vec<f64>, b: Vec<f64>) -> HeadlineRow {
    let side = |v: &[f64]| (!v.is_empty()).then(|| median(v));
    let (ma, mb) = (side(&a), side(&b));
    let change = match (ma, mb) {
        (Some(x), Some(y)) if x != 0.0 => Some(change_pct(x, y)),
        _ => None,
    };
    let verdict = match better {
        _ if ma.is_none() || mb.is_none() => None,
        Better::Higher => Some(judge(&a, &b, true)),
        Better::Lower => Some(judge(&a, &b, false)),
        Better::Neither => None,
    };
    HeadlineRow { figure, unit, a: ma, b: mb, change_pct: change, verdict }
}

/// A side that is a published table (`iomatrix import`'s published layout): its figures are as
/// printed, with no environment and no samples behind them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PublishedSide {
    /// "A" or "B".
    pub side: &'static str,
    /// The ids of that side's runs.
    pub runs: Vec<i64>,
}

/// The sides whose runs are published tables.
pub fn published_sides(a: &Group, b: &Group) -> Vec<PublishedSide> {
    let published = |g: &Group| -> Vec<i64> {
        g.run_ids.iter().zip(&g.published).filter(|(_, published)| **published).map(|(id, _)| *id).collect()
    };
    [("A", published(a)), ("B", published(b))]
        .into_iter()
        .filter(|(_, runs)| !runs.is_empty())
        .map(|(side, runs)| PublishedSide { side, runs })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Group, SuiteShape};
    use iomatrix_store::CellRow;
    use serde_json::json;

    fn run(id: i64, metrics: serde_json::Value, kib_per_sec: f64) -> iomatrix_store::StoredRun {
        let cell = CellRow {
            test: "write".into(),
            file_size: Some(1 << 20),
            record_size: Some(4096),
            kib_per_sec,
            metrics,
            ..CellRow::blank("write", "psync")
        };
        iomatrix_store::StoredRun::new(
            iomatrix_store::RunSummary {
                id,
                suite: "fileserver".into(),
                status: iomatrix_store::RunStatus::Complete,
                started_at: String::new(),
                ended_at: None,
                host: "h".into(),
                command_line: String::new(),
                labels: Vec::new(),
                cells: 1,
                total_cells: 1,
                disturbed_cells: 0,
                error: None,
                iomatrix_version: "0".into(),
                pid: 0,
                pid_start: None,
            },
            json!({}),
            json!({}),
            json!({}),
            vec![cell],
        )
    }

    #[test]
    fn a_phase_gives_the_seeds_rows_in_the_seeds_order_and_an_unstored_figure_is_unknown() {
        let ops = |open: f64| {
            json!({"write": {"count": 10, "mean_ns": 2e6}, "create": {"count": 1, "mean_ns": 5e6},
                   "open": {"count": 1, "mean_ns": open}, "close": {"count": 1, "mean_ns": 1e6},
                   "fsync": {"count": 0, "mean_ns": 0.0}})
        };
        let a = vec![run(1, json!({"ops": ops(36.69e6), "completion_ns": 140_000_000_000u64}), 900.0)];
        // B: a run stored before the per-connection figure was kept.
        let b = vec![run(
            2,
            json!({"ops": ops(8.86e6), "completion_ns": 55_000_000_000u64, "avg_connection_kib_per_sec": "?"}),
            1800.0,
        )];
        let (ga, gb) = (Group::of("A", &a, SuiteShape::PLAIN), Group::of("B", &b, SuiteShape::PLAIN));
        let t = headline_tables(&ga, &gb);
        assert_eq!(t.len(), 1);
        let names: Vec<&str> = t[0].rows.iter().map(|r| r.figure.as_str()).collect();
        assert_eq!(
            names,
            [
                "open mean response time",
                "close mean response time",
                "create mean response time",
                "write mean response time",
                "time taken for test completion",
                "throughput per connection",
                "throughput, all connections",
            ]
        );
        let open = &t[0].rows[0];
        assert_eq!((open.a, open.b), (Some(36.69), Some(8.86)));
        assert!((open.change_pct.unwrap() - (8.86 - 36.69) / 36.69 * 100.0).abs() < 1e-9);
        let per_connection = &t[0].rows[5];
        assert_eq!((per_connection.a, per_connection.b, per_connection.change_pct), (None, None, None));
        assert_eq!(t[0].rows[6].change_pct, Some(100.0));
    }

    #[test]
    fn a_backup_walk_gives_files_extents_rate_and_time() {
        let walk = |files: u64, extents: u64, rate: f64, secs: u64| {
            json!({"files": files, "mib_per_min": rate, "wall_ns": secs * 1_000_000_000,
                   "extents": {"files": files, "total_extents": extents}})
        };
        let a = vec![run(1, walk(29451, 7482988, 272.45, 103 * 60), 0.0)];
        let b = vec![run(2, walk(29101, 67425, 1572.13, 18 * 60), 0.0)];
        let (ga, gb) = (Group::of("A", &a, SuiteShape::PLAIN), Group::of("B", &b, SuiteShape::PLAIN));
        let t = headline_tables(&ga, &gb);
        let rows: Vec<(&str, Option<f64>, Option<f64>)> =
            t[0].rows.iter().map(|r| (r.figure.as_str(), r.a, r.b)).collect();
        assert_eq!(
            rows,
            [
                ("total files", Some(29451.0), Some(29101.0)),
                ("total extents", Some(7482988.0), Some(67425.0)),
                ("extents per file", Some(7482988.0 / 29451.0), Some(67425.0 / 29101.0)),
                ("backup throughput", Some(272.45), Some(1572.13)),
                ("time taken for test completion", Some(6180.0), Some(1080.0)),
            ]
        );
        assert!(t[0].rows[0].verdict.is_none(), "a count of files is no measure of speed");
        assert!((t[0].rows[3].change_pct.unwrap() - 477.0343).abs() < 1e-3);
    }
}
