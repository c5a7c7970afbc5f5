//! A cell's figures over time as a line chart: its operations per second interval by interval,
//! on a linear time axis. Each point sits at the middle of its interval and is the interval's
//! count over ITS own length, so the last interval, cut short by the cell's end, is drawn at its
//! own rate (a hollow point apart from the line, said in its tooltip), never as a dip of the line.

use crate::svg::{escape, short};
use iomatrix_stats::Series;
use std::fmt::Write;

/// The chart's size and margins.
const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 260.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 44.0;

/// `series` of the cell `title` as an SVG line chart of ops/s over seconds; None for no interval.
pub fn series_chart(title: &str, series: &Series) -> Option<String> {
    let last = series.intervals.last()?;
    let end_s = (last.start_ns + last.length_ns) as f64 / 1e9;
    let points: Vec<(f64, f64)> = series
        .intervals
        .iter()
        .map(|i| ((i.start_ns as f64 + i.length_ns as f64 / 2.0) / 1e9, i.ops_per_sec()))
        .collect();
    let top_y = points.iter().map(|p| p.1).fold(0.0, f64::max).max(1e-9) * 1.1;
    let px = |x: f64| LEFT + x / end_s.max(1e-12) * (WIDTH - LEFT - RIGHT);
    let py = |y: f64| TOP + (1.0 - y / top_y) * (HEIGHT - TOP - BOTTOM);
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart series" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="11">"#
    );
    let _ = write!(s, r#"<text x="4" y="16" font-size="13" font-weight="bold">{}</text>"#, escape(title));
    axes(&mut s, end_s, top_y, (&px, &py));
    let partial = last.length_ns < series.interval_ns;
    // The line joins the whole intervals; the last, cut short, stands apart as its own point.
    let joined = if partial { &points[..points.len() - 1] } else { &points[..] };
    let line: Vec<String> = joined.iter().map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y))).collect();
    let _ = write!(s, r##"<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="{}"/>"##, line.join(" "));
    for (k, &(x, y)) in points.iter().enumerate() {
        let cut = partial && k + 1 == points.len();
        let (fill, note) = if cut { ("white", ", the last interval: its own length") } else { ("#1f77b4", "") };
        let _ = write!(
            s,
            r##"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{fill}" stroke="#1f77b4"><title>{} s: {} ops/s over {} s{note}</title></circle>"##,
            px(x),
            py(y),
            short(series.intervals[k].start_ns as f64 / 1e9),
            short(y),
            short(series.intervals[k].length_ns as f64 / 1e9),
        );
    }
    s.push_str("</svg>");
    Some(s)
}

/// The axes, five ticks on each and their labels.
fn axes(s: &mut String, end_s: f64, top_y: f64, (px, py): (&dyn Fn(f64) -> f64, &dyn Fn(f64) -> f64)) {
    let (bx, by) = (LEFT, HEIGHT - BOTTOM);
    let _ = write!(
        s,
        r##"<line x1="{bx}" y1="{TOP}" x2="{bx}" y2="{by}" stroke="#333"/><line x1="{bx}" y1="{by}" x2="{:.1}" y2="{by}" stroke="#333"/>"##,
        WIDTH - RIGHT
    );
    for k in 0..=4 {
        let (x, y) = (end_s / 4.0 * f64::from(k), top_y / 4.0 * f64::from(k));
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            px(x),
            by + 14.0,
            short(x),
            bx - 6.0,
            py(y) + 4.0,
            short(y)
        );
    }
    let _ = write!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">seconds from the cell's start</text><text x="14" y="{:.1}" transform="rotate(-90 14 {:.1})" text-anchor="middle">ops/s</text>"#,
        f64::midpoint(LEFT, WIDTH - RIGHT),
        HEIGHT - 10.0,
        f64::midpoint(TOP, by),
        f64::midpoint(TOP, by),
    );
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
        let series =
            Series { asked_interval_ns: 1_000_000_000, interval_ns: 1_000_000_000, merges: 0, clients: 1, intervals };
        let svg = series_chart("cell 0", &series).unwrap();
        assert_eq!(svg.matches("<circle").count(), 4, "{svg}");
        assert_eq!(svg.matches(": 1000 ops/s").count(), 4, "every point at 1000 ops/s, the last too: {svg}");
        assert!(svg.contains("the last interval: its own length"), "{svg}");
        let line = svg.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
        assert_eq!(line.split(' ').count(), 3, "the line joins the 3 whole intervals only: {line}");
        assert!(series_chart("none", &Series::default()).is_none());
    }
}
