//! Throughput-latency curves in compare (issue 52): each run's curve gathered from its points
//! (cells named with their load), and B against A one row per curve with the curve's own
//! figures, each judged as any other figure is: the maximum within the bound (higher is better)
//! and SPEC SFS 2014's overall response time (lower is better). Read from each point's typed
//! curve figures ([`CurvePoint`]), never from a key into the stored JSON.

use crate::cells::{median, CellKey, Group};
use crate::noise::{judge, Judgement};
use crate::row::change_pct;
use iomatrix_core::figures::CurveLoad;
use iomatrix_store::{CurvePoint, StoredRun};
use serde::Serialize;
use std::collections::BTreeMap;

/// One point of one run's curve: its load, the rate it achieved and its latency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointFigures {
    /// The load it was offered (the maximum, a percentage of it, a rate).
    pub load: CurveLoad,
    /// The requests a second it achieved, all clients together.
    pub achieved_per_sec: f64,
    /// Its mean latency, reads and writes together, in ns (open loop: from each request's
    /// intended start); None where not stored.
    pub mean_ns: Option<f64>,
    /// Its 99th-percentile latency, in ns; None where not stored.
    pub p99_ns: Option<f64>,
    /// Whether it is past the curve's bound.
    pub past_bound: bool,
}

/// One run's curve: its points in the order they were stored, and the curve's own figures (those
/// stored with its last point).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunCurve {
    /// The run's id.
    pub run: i64,
    /// Its points, in the order stored (the maximum first, then lightest to heaviest).
    pub points: Vec<PointFigures>,
    /// The curve's figures as its last stored point holds them.
    #[serde(skip)]
    pub figures: CurvePoint,
    /// Whether every stored point of the curve gave samples: a curve with a point left out
    /// (partial, failed, disturbed) gives its figures, worked out over that point too, no sample.
    pub whole: bool,
}

/// The curves of `runs`, by the curve's key (its points' key without the load): one
/// [`RunCurve`] per run that has the curve, in run order, with the points `admits` takes in.
pub fn curves_of(
    runs: &[StoredRun],
    admits: impl Fn(&iomatrix_store::CellState) -> bool,
) -> BTreeMap<CellKey, Vec<RunCurve>> {
    let mut curves: BTreeMap<CellKey, Vec<RunCurve>> = BTreeMap::new();
    for run in runs {
        let mix = run.suite_facts().size_mix;
        let mut cells: Vec<_> = run.cell_results.iter().collect();
        cells.sort_by_key(|c| c.seq);
        for cell in cells {
            let figures = cell.figures();
            let Some((load, curve)) = figures.curve_point() else { continue };
            let key = curve_key(CellKey::of(cell).named_by_mix(mix.as_deref()), load);
            let admitted = admits(&cell.state);
            let point = admitted.then(|| PointFigures {
                load,
                // The suite's own rate where it stores one (access IOPS, metadata items/s), else
                // the cell's operations over its wall time (a personality's ops/s).
                achieved_per_sec: figures
                    .iops
                    .or(figures.per_sec)
                    .or_else(|| (cell.wall_ns > 0).then(|| cell.ops as f64 * 1e9 / cell.wall_ns as f64))
                    .unwrap_or(0.0),
                mean_ns: curve.latency.map(|l| l.mean_ns),
                p99_ns: curve.latency.map(|l| l.p99_ns as f64),
                past_bound: curve.past_bound,
            });
            let runs = curves.entry(key).or_default();
            if runs.last().is_none_or(|c| c.run != run.summary.id) {
                runs.push(RunCurve { run: run.summary.id, points: Vec::new(), figures: curve.clone(), whole: true });
            }
            if let Some(c) = runs.last_mut() {
                c.points.extend(point);
                c.figures = curve;
                c.whole &= admitted;
            }
        }
    }
    curves
}

/// The key of the curve a point at `load` belongs to: the point's key without its load, which
/// a suite spells in its cell's variant (access: `qd=8 ... load=50%`) or its test (metadata:
/// `file-create load=50%`).
pub fn curve_key(point: CellKey, load: CurveLoad) -> CellKey {
    let spelled = format!(" {}{load}", CurveLoad::KEY);
    let variant = point.variant.replacen(&spelled, "", 1);
    let test = point.test.replacen(&spelled, "", 1);
    CellKey { test, variant, ..point }
}

/// One of a curve's own figures, A against B: medians over each side's runs, the change and its
/// verdict; None where a side has no such figure (no bound, or no point met it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurveFigure {
    /// A's median.
    pub a: Option<f64>,
    /// B's median.
    pub b: Option<f64>,
    /// (B - A) / A in %; None where a side has none or A is 0.
    pub change_pct: Option<f64>,
    /// Better, worse or within noise, from each side's runs; None where a side has none, or
    /// (the maximum within the bound) the sides' bounds differ.
    pub verdict: Option<Judgement>,
}

/// One curve, B against A.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurveRow {
    /// The curve: its points' cell without the load ("access 8m/4k qd=8 read=100% random=100%").
    pub curve: String,
    /// A's bound ("p99 <= 1.00 ms"); None without one. Where the sides' runs differ, the first.
    pub bound_a: Option<String>,
    /// B's bound.
    pub bound_b: Option<String>,
    /// The highest achieved rate of a point within the bound, requests a second; higher is better.
    pub max_within_bound: CurveFigure,
    /// SPEC SFS 2014's overall response time, in ns; lower is better.
    pub overall_response_time: CurveFigure,
    /// The runs whose curve gave no samples: a point of it was left out (not whole).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub runs_left_out: Vec<i64>,
}

/// A row for every curve both sides have.
pub fn curve_rows(a: &Group, b: &Group) -> Vec<CurveRow> {
    let mut rows = Vec::new();
    for (key, ca) in &a.curves {
        let Some(cb) = b.curves.get(key) else { continue };
        let bound = |c: &[RunCurve]| c.iter().find_map(|r| r.figures.bound.as_ref().map(ToString::to_string));
        let (bound_a, bound_b) = (bound(ca), bound(cb));
        let within = |r: &RunCurve| r.figures.max_within_bound_iops;
        let overall = |r: &RunCurve| r.figures.overall_response_time_ns;
        let mut max_within_bound = figure(ca, cb, within, true);
        if bound_a != bound_b {
            max_within_bound.verdict = None;
        }
        rows.push(CurveRow {
            curve: key.describe(),
            bound_a,
            bound_b,
            max_within_bound,
            overall_response_time: figure(ca, cb, overall, false),
            runs_left_out: ca.iter().chain(cb).filter(|r| !r.whole).map(|r| r.run).collect(),
        });
    }
    rows
}

/// The curves' verdicts added to compare's count of verdicts, as every other figure's are.
pub(crate) fn count(noise: &mut crate::NoiseSummary, rows: &[CurveRow]) {
    let verdicts = rows.iter().flat_map(|r| [&r.max_within_bound.verdict, &r.overall_response_time.verdict]);
    for j in verdicts.flatten() {
        match j.verdict {
            "faster" => noise.faster += 1,
            "slower" => noise.slower += 1,
            "within noise" => noise.within_noise += 1,
            _ => noise.no_verdict += 1,
        }
    }
}

/// One figure of each side's runs' curves, judged.
fn figure(
    a: &[RunCurve],
    b: &[RunCurve],
    read: impl Fn(&RunCurve) -> Option<f64>,
    higher_is_better: bool,
) -> CurveFigure {
    let samples = |runs: &[RunCurve]| -> Vec<f64> {
        runs.iter().filter(|r| r.whole).filter_map(&read).filter(|v| v.is_finite()).collect()
    };
    let (sa, sb) = (samples(a), samples(b));
    let side = |v: &[f64]| (!v.is_empty()).then(|| median(v));
    let (ma, mb) = (side(&sa), side(&sb));
    let change_pct = match (ma, mb) {
        (Some(x), Some(y)) if x != 0.0 => Some(change_pct(x, y)),
        _ => None,
    };
    let verdict = (ma.is_some() && mb.is_some()).then(|| judge(&sa, &sb, higher_is_better));
    CurveFigure { a: ma, b: mb, change_pct, verdict }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_belongs_to_its_setting_without_the_load() {
        let mix = iomatrix_core::IoMix {
            read_percent: 100,
            random_percent: 100,
            queue_depth: 8,
            load: Some(CurveLoad::Percent(50)),
        };
        let point =
            CellKey { test: "access".into(), file_size: Some(8 << 20), record_size: Some(4096), variant: mix.name() };
        let curve = curve_key(point, CurveLoad::Percent(50));
        let setting = iomatrix_core::IoMix { load: None, ..mix };
        assert_eq!(curve.variant, setting.name());
        assert_eq!(curve.describe(), "access 8m/4k qd=8 read=100% random=100%");
        let phase =
            CellKey { test: "file-create load=10%".into(), file_size: None, record_size: None, variant: String::new() };
        assert_eq!(curve_key(phase, CurveLoad::Percent(10)).test, "file-create");
    }

    fn run_curve(run: i64, within: Option<f64>, overall: f64) -> RunCurve {
        let bound = Some(iomatrix_store::CurveBound { statistic: "p99".into(), ns: 1_000_000 });
        let figures = CurvePoint {
            bound,
            max_within_bound_iops: within,
            overall_response_time_ns: Some(overall),
            ..CurvePoint::default()
        };
        RunCurve { run, points: Vec::new(), figures, whole: true }
    }

    #[test]
    fn each_figure_is_judged_its_own_way_and_one_run_a_side_gives_no_verdict() {
        let key = CellKey { test: "access".into(), file_size: None, record_size: None, variant: "qd=8".into() };
        let mut a = Group::of("A", &[], crate::SuiteShape::PLAIN);
        let mut b = Group::of("B", &[], crate::SuiteShape::PLAIN);
        let five = |g: &mut Group, within: f64, overall: f64| {
            let runs = (0..5).map(|k| run_curve(k, Some(within + k as f64), overall + k as f64)).collect();
            g.curves.insert(key.clone(), runs);
        };
        five(&mut a, 1000.0, 2e6);
        five(&mut b, 2000.0, 1e6);
        let row = &curve_rows(&a, &b)[0];
        assert_eq!(row.max_within_bound.verdict.as_ref().unwrap().verdict, "faster", "more IOPS within is better");
        assert_eq!(row.overall_response_time.verdict.as_ref().unwrap().verdict, "faster", "less time is better");
        assert!((row.max_within_bound.change_pct.unwrap() - 100.0).abs() < 0.5);
        a.curves.insert(key.clone(), vec![run_curve(1, None, 2e6)]);
        b.curves.insert(key.clone(), vec![run_curve(2, Some(500.0), 1e6)]);
        let row = &curve_rows(&a, &b)[0];
        assert_eq!(
            (row.max_within_bound.a, row.max_within_bound.verdict.as_ref()),
            (None, None),
            "none met: no figure"
        );
        assert_eq!(row.overall_response_time.verdict.as_ref().unwrap().verdict, "no verdict");
        // A curve with a point left out gives no sample: its figures took that point in.
        b.curves.insert(key.clone(), vec![RunCurve { whole: false, ..run_curve(3, Some(500.0), 1e6) }]);
        let row = &curve_rows(&a, &b)[0];
        assert_eq!((row.overall_response_time.b, row.runs_left_out.as_slice()), (None, &[3][..]));
    }
}
