//! Throughput-latency curves (`--curve`, vdbench's `iorate=curve`) and open loop (`--arrivals`).
//!
//! A curve is a run of cells for one setting: first the maximum, closed loop (as many requests
//! as the queue depth keeps in flight), then open-loop points at fractions of it (vdbench's 10,
//! 50, 70, 80, 90 and 100%) or at absolute rates. Each client offers its own share: a fraction of
//! the rate it achieved itself at the maximum (so the clients' offered rates add up to the
//! fraction of the maximum, also across MPI ranks, which share nothing between cells), or an
//! absolute rate split evenly over the clients. `--stop-curve` ends the curve at the first
//! open-loop point past a latency bound (vdbench's `stopcurve=`): the leader marks the curve's
//! remaining cells, which every client then leaves out.
//!
//! The curve's figures ([`CurveFigures`]) are worked out at the leader as each point is stored,
//! and stored with that point: the last stored point of a curve holds the curve's final figures,
//! the maximum within the bound and SPEC SFS 2014's overall response time among them.

use iomatrix_core::{parse_duration, CurveLoad, UsageError};
use iomatrix_stats::Latency;
use serde::{Deserialize, Serialize};

/// vdbench's curve: these percentages of the maximum, after it.
pub const VDBENCH_POINTS: &str = "10,50,70,80,90,100";

/// A point (or `--rate` with `--arrivals`) offers each client at least this many requests per
/// cell: fewer say nothing of a latency percentile, and a Poisson stream of fewer may hold none.
pub const MIN_ARRIVALS_PER_CELL: f64 = 10.0;

/// The highest rate a client is offered, a second: arrivals are 1 us apart at it. The clients
/// schedule arrivals in nanoseconds on a clock read in tens of them, but a request's own issue
/// takes about a microsecond on the fastest backend here (io_uring), so a faster rate would not
/// be what was offered.
pub const MAX_RATE_PER_CLIENT: u64 = 1_000_000;

/// `--curve`: the open-loop points after the maximum, and where the curve stops.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Curve {
    /// The points after the maximum, lightest first (the order they run in).
    pub points: Vec<CurveLoad>,
    /// `--stop-curve`: the bound whose first open-loop point past it ends the curve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Bound>,
}

/// Which latency figure of a point a bound judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Statistic {
    /// The mean (vdbench's stopcurve judges the mean response time).
    Mean,
    /// The median.
    P50,
    /// The 99th percentile.
    P99,
    /// The 99.9th percentile.
    #[serde(rename = "p99.9")]
    P999,
}

impl Statistic {
    /// `mean`, `p50`, `p99`, `p99.9`.
    pub fn name(self) -> &'static str {
        match self {
            Statistic::Mean => "mean",
            Statistic::P50 => "p50",
            Statistic::P99 => "p99",
            Statistic::P999 => "p99.9",
        }
    }

    /// This figure of `latency`, in ns (0 for no request).
    pub fn of(self, latency: &Latency) -> f64 {
        if latency.count() == 0 {
            return 0.0;
        }
        match self {
            Statistic::Mean => latency.summary().mean_ns,
            Statistic::P50 => latency.quantile_ns(0.5) as f64,
            Statistic::P99 => latency.quantile_ns(0.99) as f64,
            Statistic::P999 => latency.quantile_ns(0.999) as f64,
        }
    }
}

/// A latency bound: a point meets it when its `statistic` is at most `ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bound {
    /// The figure judged.
    pub statistic: Statistic,
    /// Its highest value that meets the bound, in ns.
    pub ns: u64,
}

impl std::fmt::Display for Bound {
    /// `p99 <= 1.00 ms`
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} <= {}", self.statistic.name(), iomatrix_core::human::nanos(self.ns as f64))
    }
}

/// `--stop-curve 5ms` (the mean), `p99:5ms`, `mean:500us`, `p50:`, `p99.9:`.
pub fn parse_bound(text: &str) -> Result<Bound, UsageError> {
    let bad = |why: String| UsageError::new(format!("--stop-curve {text}: {why}"));
    let (statistic, time) = match text.trim().split_once(':') {
        None => (Statistic::Mean, text.trim()),
        Some((name, time)) => {
            let statistic = match name.trim() {
                "mean" => Statistic::Mean,
                "p50" => Statistic::P50,
                "p99" => Statistic::P99,
                "p99.9" => Statistic::P999,
                other => return Err(bad(format!("'{other}' is not a latency figure; give mean, p50, p99 or p99.9"))),
            };
            (statistic, time.trim())
        }
    };
    let d = parse_duration(time).map_err(|e| bad(format!("{e}; give a time such as 5ms or 500us")))?;
    let ns = u64::try_from(d.as_nanos()).map_err(|_| bad("too long".into()))?;
    if ns == 0 {
        return Err(bad("a bound of 0 is met by no request; give a time above 0".into()));
    }
    Ok(Bound { statistic, ns })
}

/// `--curve`: percentages of the maximum (`10,50,70`, `%` optional), a range with its step
/// (`10-100,10`), or absolute rates of all clients together (`500/s,1000/s`); empty is vdbench's
/// points. Lightest first, each once.
pub fn parse_points(text: &str) -> Result<Vec<CurveLoad>, UsageError> {
    let text = if text.trim().is_empty() { VDBENCH_POINTS } else { text.trim() };
    let bad = |why: String| UsageError::new(format!("--curve {text}: {why}"));
    let mut points = if text.contains("/s") {
        text.split(',').map(|t| rate(t.trim(), &bad)).collect::<Result<Vec<_>, _>>()?
    } else if let Some((range, step)) = text.split_once('-').and_then(|(a, rest)| {
        let (b, step) = rest.split_once(',')?;
        Some(((a, b), step))
    }) {
        let (from, to) = (percent(range.0, &bad)?, percent(range.1, &bad)?);
        let step = step.trim().trim_end_matches('%').parse::<u32>().ok().filter(|s| *s > 0);
        let Some(step) = step else { return Err(bad("the step after the range is not a whole number above 0".into())) };
        if from > to {
            return Err(bad(format!("the range runs down ({from}% to {to}%); give the lighter load first")));
        }
        (from..=to).step_by(step as usize).map(CurveLoad::Percent).collect()
    } else {
        text.split(',').map(|t| percent(t, &bad).map(CurveLoad::Percent)).collect::<Result<Vec<_>, _>>()?
    };
    points.sort_unstable();
    points.dedup();
    Ok(points)
}

/// `50` or `50%`: a percentage of the maximum, 1 to 100; else `bad`'s error.
fn percent(text: &str, bad: &dyn Fn(String) -> UsageError) -> Result<u32, UsageError> {
    let t = text.trim().trim_end_matches('%');
    match t.parse::<u32>() {
        Ok(p @ 1..=100) => Ok(p),
        Ok(p) => Err(bad(format!(
            "{p}% is outside 1-100%: the curve's points are shares of the maximum measured first (past it an \
             open-loop point only grows its backlog); give 1 to 100, or absolute rates such as 500/s"
        ))),
        Err(_) => {
            Err(bad(format!("'{text}' is neither a percentage (50) nor a rate (500/s); mix no kinds in one curve")))
        }
    }
}

/// `500/s`: all clients' requests a second, above 0; else `bad`'s error.
fn rate(text: &str, bad: &dyn Fn(String) -> UsageError) -> Result<CurveLoad, UsageError> {
    match text.strip_suffix("/s").map(|n| n.trim().parse::<u64>()) {
        Some(Ok(r)) if r > 0 => Ok(CurveLoad::Rate(r)),
        Some(Ok(_)) => Err(bad("a rate of 0/s offers nothing; give rates above 0".into())),
        _ => Err(bad(format!("'{text}' is not a rate such as 500/s (every point of a curve of rates ends in /s)"))),
    }
}

/// The checks a rate offered to each client meets at plan time: within what the clients
/// schedule, and enough arrivals in a cell of `duration_ms` to measure. `what` names the flag.
pub fn check_rate(what: &str, per_client: f64, duration_ms: u64) -> Result<(), UsageError> {
    if per_client > MAX_RATE_PER_CLIENT as f64 {
        return Err(UsageError::new(format!(
            "{what}: {per_client:.0} requests a second per client puts arrivals less than 1 us apart, finer than a \
             client issues them (a request's own issue takes about 1 us); give at most {MAX_RATE_PER_CLIENT} per \
             client, or more clients"
        )));
    }
    let arrivals = per_client * duration_ms as f64 / 1000.0;
    if arrivals < MIN_ARRIVALS_PER_CELL {
        return Err(UsageError::new(format!(
            "{what}: {per_client} requests a second per client for {duration_ms} ms is {arrivals:.1} arrivals per \
             client, fewer than the {MIN_ARRIVALS_PER_CELL:.0} a cell needs to say anything of its latency; give a \
             longer --duration or a higher rate"
        )));
    }
    Ok(())
}

/// A curve's figures after one of its points, stored with that point: the last point stored
/// holds the curve's own.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CurveFigures {
    /// This point's latency, reads and writes together (open loop: from each request's
    /// intended start).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<iomatrix_stats::LatencySummary>,
    /// The maximum measured first (closed loop), all clients' requests a second.
    pub max_iops: f64,
    /// `--stop-curve`, where given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<Bound>,
    /// This point's figure that the bound judges, in ns (with a bound).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judged_ns: Option<f64>,
    /// Whether this point is past the bound.
    pub past_bound: bool,
    /// The highest achieved rate of a point so far that meets the bound; None without a bound or
    /// where no point met it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_within_bound_iops: Option<f64>,
    /// The highest achieved rate of any point so far (the maximum among them).
    pub peak_iops: f64,
    /// SPEC SFS 2014's overall response time over the open-loop points so far, in ns: the area
    /// under their mean response time over their achieved rate (trapezoids between measured
    /// points, no point assumed at the origin), divided by their highest achieved rate. None
    /// with fewer than two such points.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overall_response_time_ns: Option<f64>,
    /// How the curve ended, in words, where the bound ended it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended: Option<String>,
}

/// One point as the leader saw it.
#[derive(Debug, Clone, Copy)]
struct Seen {
    load: CurveLoad,
    achieved: f64,
    mean_ns: f64,
    judged_ns: f64,
}

/// A curve's points so far, at the leader.
#[derive(Debug, Clone, Default)]
pub struct Judge {
    bound: Option<Bound>,
    points: Vec<Seen>,
}

impl Judge {
    /// A curve judged against `bound`.
    pub fn new(bound: Option<Bound>) -> Judge {
        Judge { bound, points: Vec::new() }
    }

    /// A point measured at `load`: its rate `achieved` and every request's `latency`. Returns the
    /// curve's figures so far, and whether the curve ends here (an open-loop point past the
    /// bound; the maximum is the curve's reference and never ends it).
    pub fn see(&mut self, load: CurveLoad, achieved: f64, latency: &Latency) -> (CurveFigures, bool) {
        let judged_ns = self.bound.map_or(0.0, |b| b.statistic.of(latency));
        self.points.push(Seen { load, achieved, mean_ns: Statistic::Mean.of(latency), judged_ns });
        let past = self.bound.is_some_and(|b| judged_ns > b.ns as f64);
        let ends = past && load != CurveLoad::Max;
        let mut figures = self.figures();
        figures.latency = Some(latency.summary());
        figures.judged_ns = self.bound.map(|_| judged_ns);
        figures.past_bound = past;
        if ends {
            figures.ended = Some(self.ending(load, judged_ns, figures.max_within_bound_iops.is_none()));
        }
        (figures, ends)
    }

    /// The curve's figures over its points so far.
    fn figures(&self) -> CurveFigures {
        let max_iops = self.points.iter().find(|p| p.load == CurveLoad::Max).map_or(0.0, |p| p.achieved);
        let within = |p: &&Seen| self.bound.is_some_and(|b| p.judged_ns <= b.ns as f64);
        CurveFigures {
            max_iops,
            bound: self.bound,
            max_within_bound_iops: self.points.iter().filter(within).map(|p| p.achieved).reduce(f64::max),
            peak_iops: self.points.iter().map(|p| p.achieved).fold(0.0, f64::max),
            overall_response_time_ns: overall_response_time(
                self.points.iter().filter(|p| p.load != CurveLoad::Max).map(|p| (p.achieved, p.mean_ns)),
            ),
            ..CurveFigures::default()
        }
    }

    /// Why the curve ended at `load`, whose judged figure is `judged_ns`: no point met the bound
    /// (`none_met`), or this one is the first past it.
    fn ending(&self, load: CurveLoad, judged_ns: f64, none_met: bool) -> String {
        let Some(bound) = self.bound else { return String::new() };
        let name = bound.statistic.name();
        let shown = iomatrix_core::human::nanos(judged_ns);
        if none_met {
            format!("no load point meets {bound}; the lightest point's {name} is {shown}")
        } else {
            format!("the curve ended at {load}: its {name} {shown} is past {bound}")
        }
    }
}

/// SPEC SFS 2014's overall response time of `points` (achieved rate, mean response time in ns):
/// the area under the response time over the achieved rate, by trapezoids between the points
/// in order of rate (no point assumed at the origin), divided by the highest rate. None with
/// fewer than two points or no rate above 0.
pub fn overall_response_time(points: impl Iterator<Item = (f64, f64)>) -> Option<f64> {
    let mut points: Vec<(f64, f64)> = points.filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let peak = points.last()?.0;
    if points.len() < 2 || peak <= 0.0 {
        return None;
    }
    let area: f64 = points.windows(2).map(|w| (w[1].0 - w[0].0) * (w[0].1 + w[1].1) / 2.0).sum();
    Some(area / peak)
}

/// One stored point of a curve as [`text`] shows it: what the suite read from its cell.
#[derive(Debug, Clone, Default)]
pub struct ShownPoint {
    /// Its load (`max`, `50%`, `500/s`).
    pub load: Option<CurveLoad>,
    /// Open loop: the rate offered, all clients; None for the closed-loop maximum.
    pub offered_per_sec: Option<f64>,
    /// The rate achieved, as the suite shows it (with its cell's mark where it has one).
    pub achieved: String,
    /// %CPU of the cell.
    pub cpu_percent: Option<f64>,
    /// Open loop: requests (operations) issued over 1 ms late.
    pub late: Option<u64>,
    /// Open loop: arrivals never issued.
    pub backlog: Option<u64>,
    /// The curve's figures after this point.
    pub figures: CurveFigures,
}

/// A curve as text: `heading` (the suite's line naming the curve and its maximum), a table of
/// its points (load, offered, achieved in `unit`, latency figures, %CPU, late, backlog, bound),
/// and the curve's figures from its last point (the maximum within the bound, SPEC SFS 2014's
/// overall response time, how the bound ended it). Empty for no point.
pub fn text(heading: &str, unit: &str, points: &[ShownPoint]) -> String {
    use iomatrix_core::human;
    use iomatrix_report::table::{Column, Table};
    let Some(last) = points.last().map(|p| &p.figures) else { return String::new() };
    let latency = |ns: f64| if ns <= 0.0 { "-".to_string() } else { human::nanos(ns) };
    let mut table = Table::new(vec![
        Column::right("load", 6),
        Column::right("offered", 9),
        Column::right(unit, 9),
        Column::right("mean", 9).gap(" | "),
        Column::right("p50", 9),
        Column::right("p99", 9),
        Column::right("p99.9", 9),
        Column::right("max", 9),
        Column::right("CPU%", 5).gap(" | "),
        Column::right("late", 7),
        Column::right("backlog", 7),
        Column::right("bound", 5),
    ]);
    for p in points {
        let l = p.figures.latency.unwrap_or_default();
        table.row(vec![
            p.load.map_or("-".into(), |l| l.to_string()),
            p.offered_per_sec.map_or("closed".into(), |o| human::fixed(o, 0)),
            p.achieved.clone(),
            latency(l.mean_ns),
            latency(l.p50_ns as f64),
            latency(l.p99_ns as f64),
            latency(l.p99_9_ns as f64),
            latency(l.max_ns as f64),
            p.cpu_percent.map_or("-".into(), |c| human::fixed(c, 0)),
            p.late.map_or("-".into(), |n| n.to_string()),
            p.backlog.map_or("-".into(), |n| n.to_string()),
            match (p.figures.bound, p.figures.past_bound) {
                (None, _) => "-".into(),
                (Some(_), true) => "past".into(),
                (Some(_), false) => "meets".into(),
            },
        ]);
    }
    let within = match (last.bound, last.max_within_bound_iops) {
        (Some(bound), Some(rate)) => format!("{} {unit} within {bound}", human::fixed(rate, 0)),
        (Some(bound), None) => format!("no load point within {bound}"),
        (None, _) => format!("{} {unit} at most (no bound: --stop-curve)", human::fixed(last.peak_iops, 0)),
    };
    let ort = last.overall_response_time_ns.map_or("- (fewer than two open-loop points)".into(), latency);
    let mut out = format!("\n{heading}\n{}", table.render());
    out += &format!("maximum within the bound: {within}\noverall response time (SPEC SFS 2014): {ort}\n");
    if let Some(ended) = &last.ended {
        out += &format!("{ended}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_are_read_as_vdbench_and_the_issue_write_them() {
        let p = |t: &str| parse_points(t).map(|v| v.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(","));
        assert_eq!(p("").unwrap(), "10%,50%,70%,80%,90%,100%");
        assert_eq!(p("10-100,10").unwrap(), "10%,20%,30%,40%,50%,60%,70%,80%,90%,100%");
        assert_eq!(p("1000/s,500/s,500/s").unwrap(), "500/s,1000/s");
        assert_eq!(p("90%,10").unwrap(), "10%,90%");
        assert!(p("0,50").unwrap_err().to_string().contains("outside 1-100%"));
        assert!(p("110").unwrap_err().to_string().contains("outside 1-100%"));
        assert!(p("50,500/s").unwrap_err().to_string().contains("ends in /s"));
        assert!(p("90-10,10").unwrap_err().to_string().contains("runs down"));
        assert!(p("10-90,0").unwrap_err().to_string().contains("step"));
        assert!(p("0/s").unwrap_err().to_string().contains("offers nothing"));
    }

    #[test]
    fn bounds_name_their_figure_and_default_to_the_mean() {
        assert_eq!(parse_bound("5ms").unwrap(), Bound { statistic: Statistic::Mean, ns: 5_000_000 });
        assert_eq!(parse_bound("p99:1ms").unwrap(), Bound { statistic: Statistic::P99, ns: 1_000_000 });
        assert_eq!(parse_bound("p99.9:500us").unwrap().statistic, Statistic::P999);
        assert!(parse_bound("p42:1ms").unwrap_err().to_string().contains("give mean, p50, p99 or p99.9"));
        assert!(parse_bound("p99:soon").is_err());
        assert_eq!(parse_bound("p99:1ms").unwrap().to_string(), "p99 <= 1.00 ms");
        let json = serde_json::to_value(parse_bound("p99.9:2ms").unwrap()).unwrap();
        assert_eq!(json["statistic"], "p99.9");
    }

    #[test]
    fn the_overall_response_time_is_the_area_over_the_peak() {
        // Flat at 1 ms from 100 to 1,000/s: area 900 x 1 ms over a peak of 1,000 = 0.9 ms.
        let flat = overall_response_time([(100.0, 1e6), (1000.0, 1e6)].into_iter()).unwrap();
        assert!((flat - 0.9e6).abs() < 1.0, "{flat}");
        // Rising 1 ms to 3 ms from 0 to 1,000/s: mean height 2 ms over the whole peak.
        let rising = overall_response_time([(1000.0, 3e6), (0.0, 1e6)].into_iter()).unwrap();
        assert!((rising - 2e6).abs() < 1.0, "{rising}");
        assert_eq!(overall_response_time([(100.0, 1e6)].into_iter()), None, "one point has no area");
    }

    fn latency_of(ns: u64, n: usize) -> Latency {
        let mut l = Latency::new();
        (0..n).for_each(|_| l.record(ns));
        l
    }

    #[test]
    fn a_curve_ends_at_its_first_open_point_past_the_bound_and_says_so() {
        let mut judge = Judge::new(Some(parse_bound("p99:1ms").unwrap()));
        // The maximum is past the bound: it is the reference and never ends the curve.
        let (max, ends) = judge.see(CurveLoad::Max, 2000.0, &latency_of(4_000_000, 100));
        assert!(!ends && max.past_bound && max.max_within_bound_iops.is_none());
        let (light, ends) = judge.see(CurveLoad::Percent(10), 200.0, &latency_of(20_000, 100));
        assert!(!ends);
        assert_eq!(light.max_within_bound_iops, Some(200.0));
        let (heavy, ends) = judge.see(CurveLoad::Percent(50), 1000.0, &latency_of(2_000_000, 100));
        assert!(ends);
        assert_eq!(heavy.max_within_bound_iops, Some(200.0));
        assert_eq!(heavy.peak_iops, 2000.0);
        assert!(heavy.overall_response_time_ns.is_some());
        let said = heavy.ended.unwrap();
        assert!(said.starts_with("the curve ended at 50%: its p99 2.00 ms is past p99 <= 1.00 ms"), "{said}");
    }

    #[test]
    fn what_a_point_stores_reads_back_through_the_stores_reader() {
        let mut judge = Judge::new(Some(parse_bound("p99:1ms").unwrap()));
        judge.see(CurveLoad::Max, 2000.0, &latency_of(4_000_000, 100));
        judge.see(CurveLoad::Percent(10), 200.0, &latency_of(20_000, 100));
        let (stored, _) = judge.see(CurveLoad::Percent(50), 1000.0, &latency_of(500_000, 100));
        let read: iomatrix_store::CurvePoint = serde_json::from_value(serde_json::to_value(&stored).unwrap()).unwrap();
        assert_eq!(read.max_within_bound_iops, stored.max_within_bound_iops);
        assert_eq!(read.overall_response_time_ns, stored.overall_response_time_ns);
        assert_eq!((read.max_iops, read.peak_iops), (Some(stored.max_iops), Some(stored.peak_iops)));
        assert_eq!(read.latency, stored.latency);
        assert_eq!(read.past_bound, stored.past_bound);
        assert_eq!(read.bound.unwrap().to_string(), stored.bound.unwrap().to_string());
    }

    #[test]
    fn a_curve_is_shown_as_one_table_with_its_figures_under_it() {
        let mut judge = Judge::new(Some(parse_bound("p99:1ms").unwrap()));
        let (max, _) = judge.see(CurveLoad::Max, 2000.0, &latency_of(4_000_000, 100));
        let (light, _) = judge.see(CurveLoad::Percent(10), 200.0, &latency_of(20_000, 100));
        let (heavy, _) = judge.see(CurveLoad::Percent(50), 1000.0, &latency_of(2_000_000, 100));
        let point = |load, offered: Option<f64>, figures| ShownPoint {
            load: Some(load),
            offered_per_sec: offered,
            achieved: "~1".into(),
            cpu_percent: Some(5.0),
            late: offered.map(|_| 3),
            backlog: offered.map(|_| 0),
            figures,
        };
        let points = [
            point(CurveLoad::Max, None, max),
            point(CurveLoad::Percent(10), Some(200.0), light),
            point(CurveLoad::Percent(50), Some(1000.0), heavy),
        ];
        let shown = text("curve x: maximum 2000 ops/s", "ops/s", &points);
        let lines: Vec<&str> = shown.lines().collect();
        assert_eq!(lines[1], "curve x: maximum 2000 ops/s", "{shown}");
        assert!(lines[2].trim_start().starts_with("load   offered     ops/s |      mean"), "{shown}");
        let cells = |line: &str| line.split_whitespace().map(str::to_string).collect::<Vec<_>>();
        assert_eq!(cells(lines[3])[..3], ["max", "closed", "~1"], "the suite's own mark is kept: {shown}");
        assert_eq!(cells(lines[3]).last().unwrap(), "past", "{shown}");
        assert_eq!(cells(lines[4])[..2], ["10%", "200"], "{shown}");
        assert!(lines[4].ends_with("3       0 meets"), "{shown}");
        assert!(shown.contains("maximum within the bound: 200 ops/s within p99 <= 1.00 ms\n"), "{shown}");
        assert!(shown.contains("\nthe curve ended at 50%: its p99 2.00 ms is past p99 <= 1.00 ms\n"), "{shown}");
        assert_eq!(text("curve x", "ops/s", &[]), "", "no point, no curve");
    }

    #[test]
    fn a_bound_below_the_idle_latency_is_said_and_no_maximum_is_made_up() {
        let mut judge = Judge::new(Some(parse_bound("p99:1ms").unwrap()));
        judge.see(CurveLoad::Max, 2000.0, &latency_of(4_000_000, 100));
        let (lightest, ends) = judge.see(CurveLoad::Percent(10), 200.0, &latency_of(1_800_000, 100));
        assert!(ends);
        assert_eq!(lightest.max_within_bound_iops, None);
        let said = lightest.ended.unwrap();
        assert!(said.starts_with("no load point meets p99 <= 1.00 ms; the lightest point's p99 is 1.80 ms"), "{said}");
    }
}
