//! Throughput-latency curves as charts (issue 52): latency over the achieved rate, a line per
//! system on one chart, on a linear axis of rates, drawn by [`LineChart`]; and each system's
//! points by load ([`curve_lines`]), which the HTML table and the workbook's sheet show too.

use crate::svg::{short, LineChart, Series, XAxis, MAX_SERIES};
use iomatrix_analysis::{median, CellKey, CurveFigure, CurveRow, RunCurve};
use iomatrix_core::{human, CurveLoad};
use std::collections::{BTreeMap, BTreeSet};

/// One point of one system's curve: medians over the system's runs of the curve.
#[derive(Debug, Clone, PartialEq)]
pub struct CurvePoint {
    /// The load the point was offered.
    pub load: CurveLoad,
    /// Requests a second achieved, all clients together.
    pub achieved_per_sec: f64,
    /// Mean latency in ns (open loop: from each request's intended start); None where unknown.
    pub mean_ns: Option<f64>,
    /// 99th-percentile latency in ns; None where unknown.
    pub p99_ns: Option<f64>,
    /// Whether the point was past the curve's bound in any run.
    pub past_bound: bool,
}

/// One system's curve: its name and its points by load (the maximum first, then lightest to
/// heaviest), with the curve's own figures (medians over its runs).
#[derive(Debug, Clone, PartialEq)]
pub struct CurveLine {
    /// The system (the report's group) the curve is of.
    pub system: String,
    /// Its points by load.
    pub points: Vec<CurvePoint>,
    /// The curve's bound, as stored ("p99 <= 1.00 ms"); None without one.
    pub bound: Option<String>,
    /// The highest achieved rate within the bound; None without a bound or where none met it.
    pub max_within_bound: Option<f64>,
    /// SPEC SFS 2014's overall response time, ns; None with fewer than two open-loop points.
    pub overall_response_time_ns: Option<f64>,
}

/// Every curve any side has, by the curve's key, with a line per side that has it, in the
/// sides' order. `sides`: each system's name and its curves ([`iomatrix_analysis::Group::curves`]).
pub fn curve_lines(sides: &[(&str, &BTreeMap<CellKey, Vec<RunCurve>>)]) -> Vec<(CellKey, Vec<CurveLine>)> {
    let keys: BTreeSet<&CellKey> = sides.iter().flat_map(|(_, c)| c.keys()).collect();
    keys.into_iter()
        .map(|key| {
            let lines = sides.iter().filter_map(|(name, c)| Some(line(name, c.get(key)?))).collect();
            (key.clone(), lines)
        })
        .collect()
}

/// One system's line: each load's medians over the runs that have it.
fn line(system: &str, runs: &[RunCurve]) -> CurveLine {
    let mut loads: BTreeMap<CurveLoad, Vec<&iomatrix_analysis::PointFigures>> = BTreeMap::new();
    for p in runs.iter().flat_map(|r| &r.points) {
        loads.entry(p.load).or_default().push(p);
    }
    let of = |v: Vec<f64>| (!v.is_empty()).then(|| median(&v));
    let points = loads
        .into_iter()
        .map(|(load, at)| CurvePoint {
            load,
            achieved_per_sec: median(&at.iter().map(|p| p.achieved_per_sec).collect::<Vec<_>>()),
            mean_ns: of(at.iter().filter_map(|p| p.mean_ns).collect()),
            p99_ns: of(at.iter().filter_map(|p| p.p99_ns).collect()),
            past_bound: at.iter().any(|p| p.past_bound),
        })
        .collect();
    CurveLine {
        system: system.to_string(),
        points,
        bound: runs.iter().find_map(|r| r.figures.bound.as_ref().map(ToString::to_string)),
        // A curve with a point left out gives its figures no sample, as in compare.
        max_within_bound: of(runs.iter().filter(|r| r.whole).filter_map(|r| r.figures.max_within_bound_iops).collect()),
        overall_response_time_ns: of(runs
            .iter()
            .filter(|r| r.whole)
            .filter_map(|r| r.figures.overall_response_time_ns)
            .collect()),
    }
}

/// How a curve's figure is written: a rate, a time.
pub type Shown = fn(f64) -> String;

/// A compare row's two figures, each with its name and how it is written, as the HTML and
/// Markdown reports list them.
pub fn figure_rows(r: &CurveRow) -> [(&'static str, &CurveFigure, Shown); 2] {
    [
        ("max within the bound (ops/s)", &r.max_within_bound, human::significant),
        ("overall response time", &r.overall_response_time, human::nanos),
    ]
}

/// Which latency of a point a chart draws.
type Latency = fn(&CurvePoint) -> Option<f64>;

/// The two charts of a curve: the mean latency over the achieved rate, and the p99 over it, a
/// line per system (at most [`MAX_SERIES`]: the rest are left to the table). `curve` names it.
pub fn curve_charts(curve: &str, lines: &[CurveLine]) -> Vec<String> {
    let figures: [(&str, Latency); 2] = [("mean", |p| p.mean_ns), ("p99", |p| p.p99_ns)];
    figures
        .iter()
        .map(|(figure, read)| {
            let series = lines
                .iter()
                .take(MAX_SERIES)
                .map(|l| {
                    let at: Vec<(&CurvePoint, f64)> = l.points.iter().filter_map(|p| Some((p, read(p)?))).collect();
                    let points = at.iter().map(|(p, ns)| (p.achieved_per_sec, ns / 1e6)).collect();
                    let tips = at
                        .iter()
                        .map(|(p, ns)| {
                            let (rate, lat) = (human::significant(p.achieved_per_sec), human::nanos(*ns));
                            format!("{} at load {}: {rate} ops/s, {figure} {lat}", l.system, p.load)
                        })
                        .collect();
                    Series { name: l.system.clone(), points, tips, last_apart: false }
                })
                .collect();
            let title = format!("{curve}: {figure} latency by achieved ops/s");
            let y_label = format!("{figure} latency (ms)");
            let rate = |x: f64| short(x);
            let chart = LineChart {
                title: &title,
                x_label: "achieved ops/s (all clients)",
                y_label: &y_label,
                x_text: &rate,
                series,
                log_y: false,
                x_axis: XAxis::Linear,
                class: "curve",
            };
            chart.render()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_analysis::PointFigures;

    fn run(id: i64, scale: f64) -> RunCurve {
        let point = |load, achieved: f64, mean: f64| PointFigures {
            load,
            achieved_per_sec: achieved * scale,
            mean_ns: Some(mean),
            p99_ns: Some(mean * 3.0),
            past_bound: false,
        };
        let points = vec![
            point(CurveLoad::Max, 2000.0, 4e6),
            point(CurveLoad::Percent(10), 200.0, 1e6),
            point(CurveLoad::Percent(50), 1000.0, 2e6),
        ];
        RunCurve { run: id, points, figures: Default::default(), whole: true }
    }

    #[test]
    fn every_system_is_a_line_on_one_chart_at_its_achieved_rates() {
        let key = CellKey { test: "access".into(), file_size: None, record_size: None, variant: "qd=8".into() };
        let a: BTreeMap<CellKey, Vec<RunCurve>> = [(key.clone(), vec![run(1, 1.0)])].into();
        let b: BTreeMap<CellKey, Vec<RunCurve>> = [(key.clone(), vec![run(2, 2.0), run(3, 2.0)])].into();
        let curves = curve_lines(&[("ext4", &a), ("xfs", &b)]);
        assert_eq!(curves.len(), 1);
        let lines = &curves[0].1;
        assert_eq!(lines.iter().map(|l| l.system.as_str()).collect::<Vec<_>>(), ["ext4", "xfs"]);
        assert_eq!(lines[1].points[0].achieved_per_sec, 4000.0, "the median over xfs's two runs");
        let charts = curve_charts("access qd=8", lines);
        assert_eq!(charts.len(), 2, "mean and p99");
        let svg = &charts[0];
        crate::svg::well_formed(svg).unwrap();
        assert_eq!(svg.matches("<polyline").count(), 2, "a line per system: {svg}");
        assert!(svg.contains("data-x=\"4000\"") && svg.contains("data-x=\"200\""), "{svg}");
        assert!(svg.contains(">ext4</text>") && svg.contains(">xfs</text>"), "a legend entry each: {svg}");
        assert!(svg.contains("xfs at load 50%: 2000.00 ops/s, mean 2.00 ms"), "{svg}");
    }
}
