//! A cell's figures over time as a line chart: its operations per second interval by interval,
//! on a linear time axis, drawn by [`LineChart`]. Each point sits at the middle of its interval
//! and is the interval's count over ITS own length, so the last interval, cut short by the
//! cell's end, is drawn at its own rate (a hollow point apart from the line, said in its
//! tooltip), never as a dip of the line.

use crate::svg::{short, LineChart, Series, XAxis};
use iomatrix_stats::Series as Intervals;

/// Each interval of `series` as a point: the middle of the interval (s from the cell's start)
/// and its ops/s over its own length.
pub fn points(series: &Intervals) -> Vec<(f64, f64)> {
    series.intervals.iter().map(|i| ((i.start_ns as f64 + i.length_ns as f64 / 2.0) / 1e9, i.ops_per_sec())).collect()
}

/// `series` of the cell `title` as an SVG line chart of ops/s over seconds; None for no interval.
pub fn series_chart(title: &str, series: &Intervals) -> Option<String> {
    let last = series.intervals.last()?;
    let partial = last.length_ns < series.interval_ns;
    let points = points(series);
    let tips = series
        .intervals
        .iter()
        .zip(&points)
        .enumerate()
        .map(|(k, (i, (_, y)))| {
            let cut = partial && k + 1 == points.len();
            let note = if cut { ", the last interval: its own length" } else { "" };
            let (start, length) = (i.start_ns as f64 / 1e9, i.length_ns as f64 / 1e9);
            format!("{} s: {} ops/s over {} s{note}", short(start), short(*y), short(length))
        })
        .collect();
    let line = Series { name: "ops/s".into(), points, tips, last_apart: partial };
    let seconds = |x: f64| short(x);
    let chart = LineChart {
        title,
        x_label: "seconds from the cell's start",
        y_label: "ops/s",
        x_text: &seconds,
        series: vec![line],
        log_y: false,
        x_axis: XAxis::Linear,
        class: "series",
    };
    Some(chart.render())
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_stats::Interval;

    #[test]
    fn the_last_short_interval_is_drawn_at_its_own_rate_not_as_a_dip() {
        let whole = |k: u64| Interval {
            start_ns: k * 1_000_000_000,
            length_ns: 1_000_000_000,
            reads: 1000,
            ..Default::default()
        };
        let mut intervals: Vec<Interval> = (0..3).map(whole).collect();
        intervals.push(Interval { start_ns: 3_000_000_000, length_ns: 250_000_000, reads: 250, ..Default::default() });
        let series = Intervals {
            asked_interval_ns: 1_000_000_000,
            interval_ns: 1_000_000_000,
            merges: 0,
            clients: 1,
            intervals,
        };
        let svg = series_chart("cell 0", &series).unwrap();
        assert_eq!(svg.matches("<circle").count(), 4, "{svg}");
        assert_eq!(svg.matches(": 1000 ops/s").count(), 4, "every point at 1000 ops/s, the last too: {svg}");
        assert!(svg.contains("the last interval: its own length"), "{svg}");
        let line = svg.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
        assert_eq!(line.split(' ').count(), 3, "the line joins the 3 whole intervals only: {line}");
        assert!(series_chart("none", &Intervals::default()).is_none());
    }
}
