//! One figure over time (`iomatrix history`) as SVG: x the time each group of runs started, y
//! the figure from 0; each group's median a point with its band (lowest to highest sample) as a
//! bar, a change beyond noise against the group before marked (red slower, green faster: colour
//! is a verdict here); the dates, each change of labels and each note written under the time
//! axis in lanes, so that no two texts overlap.

use crate::svg::{clip, escape, round_up, text_width};
use iomatrix_analysis::{History, HistoryPoint};
use iomatrix_core::{format_utc, human};
use std::fmt::Write;

const WIDTH: f64 = 880.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 40.0;
const PLOT_HEIGHT: f64 = 260.0;
/// One lane of text under the axis.
const LANE: f64 = 16.0;
/// Space between two texts in one lane.
const TEXT_GAP: f64 = 10.0;
/// Longest label or note shown whole under the axis; the whole text is its tooltip.
const AXIS_TEXT_CHARS: usize = 48;

/// Where values land.
struct Frame {
    t0: f64,
    t1: f64,
    top_y: f64,
}

impl Frame {
    fn x(&self, ms: f64) -> f64 {
        LEFT + (ms - self.t0) / (self.t1 - self.t0) * (WIDTH - LEFT - RIGHT)
    }
    fn y(&self, v: f64) -> f64 {
        TOP + PLOT_HEIGHT - v / self.top_y * PLOT_HEIGHT
    }
}

/// A text under the axis: where it is anchored, what it says, its tooltip and its class.
struct AxisText {
    /// Where its moment is on the time axis.
    at: f64,
    /// Where its text starts: `at`, or left of it where the text would run past the right edge.
    x: f64,
    text: String,
    title: String,
    class: &'static str,
}

/// The history as an SVG chart, `<svg id="history-chart" ...>`.
pub fn history_svg(history: &History) -> String {
    let frame = frame_of(history);
    let axis_texts = axis_texts(history, &frame);
    let lanes = lay_out(&axis_texts);
    let lane_count = lanes.iter().copied().max().map_or(1, |m| m + 1);
    let height = TOP + PLOT_HEIGHT + 24.0 + lane_count as f64 * LANE + 10.0;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" id="history-chart" class="chart history" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">"#
    );
    let title = format!("{} ({}) over time: run #{}'s setup", history.figure, history.unit, history.run);
    let _ = write!(s, r#"<text x="4" y="16" font-size="13" font-weight="bold">{}</text>"#, escape(&title));
    s += &axes(history, &frame);
    for (t, lane) in axis_texts.iter().zip(&lanes) {
        let y = TOP + PLOT_HEIGHT + 18.0 + *lane as f64 * LANE;
        if t.class != "date" {
            // Its moment marked across the plot, not through the texts under it.
            let _ = write!(
                s,
                r##"<line class="mark-{}" x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#999" stroke-dasharray="3,3"/>"##,
                t.class,
                TOP + PLOT_HEIGHT + 4.0,
                x = t.at,
            );
        }
        let _ = write!(
            s,
            r#"<text class="{}" x="{:.1}" y="{y:.1}"><title>{}</title>{}</text>"#,
            t.class,
            t.x,
            escape(&t.title),
            escape(&t.text)
        );
    }
    s += &points(history, &frame);
    s.push_str("</svg>");
    s
}

/// A group's place in time: the middle of its runs' starts.
fn time_of(p: &HistoryPoint) -> f64 {
    let first = p.runs.first().map_or(0, |r| r.started_at_ms);
    let last = p.runs.last().map_or(0, |r| r.started_at_ms);
    f64::midpoint(first as f64, last as f64)
}

fn frame_of(history: &History) -> Frame {
    let times = history.points.iter().flat_map(|p| p.runs.iter().map(|r| r.started_at_ms as f64));
    let (lo, hi) = times.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), t| (lo.min(t), hi.max(t)));
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 0.0) };
    // A twentieth of the span (at least a second) either side: no point on the frame's edge.
    let pad = ((hi - lo) / 20.0).max(1_000.0);
    let most = history.points.iter().filter_map(|p| p.stats.map(|s| s.high)).fold(0.0, f64::max);
    let top_y = if most > 0.0 { round_up(most) } else { 1.0 };
    Frame { t0: lo - pad, t1: hi + pad, top_y }
}

/// The frame, the y axis's ticks and its label.
fn axes(history: &History, f: &Frame) -> String {
    let mut s = String::new();
    let bottom = TOP + PLOT_HEIGHT;
    let _ = write!(
        s,
        r##"<rect class="frame" x="{LEFT}" y="{TOP}" width="{}" height="{PLOT_HEIGHT}" fill="none" stroke="#444"/>"##,
        WIDTH - LEFT - RIGHT
    );
    for k in 0..=4 {
        let v = f.top_y * f64::from(k) / 4.0;
        let y = f.y(v);
        let _ = write!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            escape(&human::compact(v))
        );
    }
    let _ = write!(
        s,
        r#"<text x="14" y="{:.1}" transform="rotate(-90 14 {:.1})" text-anchor="middle">{}</text>"#,
        TOP + PLOT_HEIGHT / 2.0,
        TOP + PLOT_HEIGHT / 2.0,
        escape(&history.unit)
    );
    let _ = write!(s, r##"<line x1="{LEFT}" y1="{bottom}" x2="{}" y2="{bottom}" stroke="#444"/>"##, WIDTH - RIGHT);
    s
}

/// The dates of the first and last run, each label change and each note, in time order.
fn axis_texts(history: &History, f: &Frame) -> Vec<AxisText> {
    let mut out = Vec::new();
    let runs: Vec<_> = history.points.iter().flat_map(|p| &p.runs).collect();
    if let (Some(first), Some(last)) = (runs.first(), runs.last()) {
        for (ms, class) in [(first.started_at_ms, "date"), (last.started_at_ms, "date")] {
            let date = format_utc(ms).replace('T', " ").trim_end_matches('Z').to_string();
            if out.iter().all(|t: &AxisText| t.text != date) {
                out.push(AxisText { at: f.x(ms as f64), x: f.x(ms as f64), text: date.clone(), title: date, class });
            }
        }
    }
    let mut before: Option<&[(String, String)]> = None;
    for p in &history.points {
        if before.is_some_and(|b| b != p.labels.as_slice()) || before.is_none() && !p.labels.is_empty() {
            let words: Vec<String> = p.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let words = if words.is_empty() { "no labels".to_string() } else { words.join(" ") };
            let at = f.x(p.runs.first().map_or(0.0, |r| r.started_at_ms as f64));
            out.push(AxisText {
                at,
                x: at,
                text: clip(&words, AXIS_TEXT_CHARS),
                title: format!("labels from here: {words}"),
                class: "label-change",
            });
        }
        before = Some(&p.labels);
        for r in &p.runs {
            if let Some(note) = &r.note {
                out.push(AxisText {
                    at: f.x(r.started_at_ms as f64),
                    x: f.x(r.started_at_ms as f64),
                    text: clip(&format!("note #{}: {note}", r.id), AXIS_TEXT_CHARS),
                    title: format!("note on run #{} ({}): {note}", r.id, r.started_at),
                    class: "note",
                });
            }
        }
    }
    for t in &mut out {
        // A text that would run past the right edge ends at it instead.
        t.x = t.x.min(WIDTH - RIGHT - text_width(&t.text)).max(2.0);
    }
    out
}

/// Each text's lane: the first whose texts all end before it starts (greedy, left to right).
fn lay_out(texts: &[AxisText]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..texts.len()).collect();
    order.sort_by(|a, b| texts[*a].x.total_cmp(&texts[*b].x));
    let mut lane_ends: Vec<f64> = Vec::new();
    let mut lanes = vec![0; texts.len()];
    for i in order {
        let (start, end) = (texts[i].x, texts[i].x + text_width(&texts[i].text));
        let lane = match lane_ends.iter().position(|e| *e + TEXT_GAP <= start) {
            Some(l) => l,
            None => {
                lane_ends.push(f64::NEG_INFINITY);
                lane_ends.len() - 1
            }
        };
        lane_ends[lane] = end;
        lanes[i] = lane;
    }
    lanes
}

/// The medians joined, each point's band, and the changes beyond noise marked.
fn points(history: &History, f: &Frame) -> String {
    let mut s = String::new();
    let medians: Vec<String> = history
        .points
        .iter()
        .filter_map(|p| p.stats.map(|st| format!("{:.1},{:.1}", f.x(time_of(p)), f.y(st.median))))
        .collect();
    let _ = write!(s, r##"<polyline class="medians" fill="none" stroke="#1f77b4" points="{}"/>"##, medians.join(" "));
    for (i, p) in history.points.iter().enumerate() {
        let Some(st) = p.stats else { continue };
        let (x, y) = (f.x(time_of(p)), f.y(st.median));
        let verdict = p.verdict.as_ref().map_or("", |v| v.verdict);
        let runs: Vec<String> = p.runs.iter().map(|r| format!("#{}", r.id)).collect();
        let tip = format!(
            "group {} ({}): median {} {}, band {}..{}{}",
            i + 1,
            runs.join(" "),
            human::significant(st.median),
            history.unit,
            human::significant(st.low),
            human::significant(st.high),
            p.verdict.as_ref().map_or(String::new(), |v| format!("; against the group before: {}", v.describe()))
        );
        let _ = write!(
            s,
            r##"<g class="point" data-group="{}"><title>{}</title><line class="band" x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#1f77b4" stroke-width="2"/><line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#1f77b4"/><line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#1f77b4"/><circle cx="{x:.1}" cy="{y:.1}" r="4" fill="#1f77b4"/>"##,
            i + 1,
            escape(&tip),
            f.y(st.low),
            f.y(st.high),
            x - 5.0,
            f.y(st.low),
            x + 5.0,
            f.y(st.low),
            x - 5.0,
            f.y(st.high),
            x + 5.0,
            f.y(st.high),
        );
        if let Some(colour) = match verdict {
            "slower" => Some("#d62728"),
            "faster" => Some("#2ca02c"),
            _ => None,
        } {
            let _ = write!(
                s,
                r#"<circle class="change {verdict}" cx="{x:.1}" cy="{y:.1}" r="9" fill="none" stroke="{colour}" stroke-width="2"/>"#
            );
        }
        s.push_str("</g>");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_analysis::{HistoryRun, PointStats};

    fn point(id: i64, ms: i64, labels: &[(&str, &str)], median: f64, note: Option<&str>) -> HistoryPoint {
        HistoryPoint {
            runs: vec![HistoryRun {
                id,
                started_at: format_utc(ms),
                started_at_ms: ms,
                status: "complete".into(),
                note: note.map(str::to_string),
            }],
            labels: labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            samples: vec![median],
            stats: Some(PointStats { median, low: median * 0.9, high: median * 1.1, spread_pct: 10.0 }),
            no_samples: None,
            left_out: Vec::new(),
            verdict: None,
            change_pct: None,
        }
    }

    #[test]
    fn texts_under_the_axis_never_overlap_and_the_chart_is_well_formed() {
        // Runs a second apart, each with new labels and a note: every text starts near the same x.
        let mut points: Vec<HistoryPoint> = (0..12)
            .map(|i| {
                let build = format!("{i}");
                point(i, 1_795_320_663_000 + i * 1000, &[("build", &build)], 1000.0 + i as f64, Some("a long note"))
            })
            .collect();
        points[5].verdict = Some(iomatrix_analysis::judge(&[1.0, 2.0, 3.0, 4.0], &[0.1, 0.2, 0.3, 0.4], true));
        let h = History {
            run: 1,
            suite: "access".into(),
            target: Some("/mnt".into()),
            figure: "read 4k".into(),
            unit: "KB/s".into(),
            higher_is_better: true,
            figures: vec!["read 4k".into()],
            points,
        };
        let f = frame_of(&h);
        let texts = axis_texts(&h, &f);
        let lanes = lay_out(&texts);
        assert_eq!(texts.len(), 2 + 12 + 12, "the first and last run's dates, 12 label changes, 12 notes");
        for i in 0..texts.len() {
            for j in i + 1..texts.len() {
                let (a, b) = (&texts[i], &texts[j]);
                let overlap = a.x < b.x + text_width(&b.text) && b.x < a.x + text_width(&a.text);
                assert!(!(lanes[i] == lanes[j] && overlap), "{} and {} overlap in lane {}", a.text, b.text, lanes[i]);
            }
        }
        let svg = history_svg(&h);
        crate::svg::well_formed(&svg).unwrap();
        assert!(svg.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" id="history-chart""#));
        assert_eq!(svg.matches(r#"class="band""#).count(), 12);
        assert_eq!(svg.matches(r#"class="change slower""#).count(), 1, "the one change beyond noise is ringed");
    }
}
