//! Charts as self-contained SVG: heatmaps (sequential and diverging), line
//! charts over a log2 axis of sizes or a linear one of rates and times, bar charts. Hand-written: no script, no
//! font file, no system library; text is escaped.

use std::fmt::Write;

/// Escapes text for SVG and HTML.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// How a heatmap colours its values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// Low to high, white to blue.
    Sequential,
    /// Ratios: red below 1, white at 1, blue above, symmetric on a log scale.
    Diverging,
}

/// A matrix to draw: rows down, columns across.
pub struct Heatmap<'a> {
    /// The chart's title, above it.
    pub title: &'a str,
    /// What the rows are (the label of the left axis).
    pub row_label: &'a str,
    /// What the columns are (the label of the bottom axis).
    pub column_label: &'a str,
    /// Each row's label, top to bottom.
    pub rows: Vec<String>,
    /// Each column's label, left to right.
    pub columns: Vec<String>,
    /// `values[row][column]`
    pub values: Vec<Vec<Option<f64>>>,
    /// Cells to outline (e.g. served by a cache), same shape as `values`.
    pub marked: Vec<Vec<bool>>,
    /// Cells whose change is within the run-to-run noise (a ratio map's
    /// verdicts), same shape as `values`: drawn with a dashed outline and "~".
    pub within_noise: Vec<Vec<bool>>,
    /// Cells whose samples were too few for a verdict, same shape as `values`. On a ratio map
    /// these and the cells within noise are grey: only a change beyond the noise is coloured.
    pub no_verdict: Vec<Vec<bool>>,
    /// Cells whose figure takes in samples of partial cells (some clients or connections
    /// failed; `--include-partial`), same shape as `values`: marked with a dagger.
    pub partial: Vec<Vec<bool>>,
    /// How values are coloured.
    pub scale: Scale,
    /// The values' unit, shown in the legend.
    pub unit: &'a str,
}

const CELL_W: f64 = 74.0;
const CELL_H: f64 = 26.0;

fn blend(a: (f64, f64, f64), b: (f64, f64, f64), t: f64) -> String {
    let t = t.clamp(0.0, 1.0);
    let c = |x: f64, y: f64| (x + (y - x) * t).round() as u8;
    format!("#{:02x}{:02x}{:02x}", c(a.0, b.0), c(a.1, b.1), c(a.2, b.2))
}

/// Compact numbers for cells: 1234567 -> 1.23M, 0.873 -> 0.87.
pub use iomatrix_core::human::compact as short;

const WHITE: (f64, f64, f64) = (255.0, 255.0, 255.0);
const BLUE: (f64, f64, f64) = (33.0, 102.0, 172.0);
const RED: (f64, f64, f64) = (178.0, 24.0, 43.0);
/// A ratio map's cell within noise or without a verdict.
const UNJUDGED_CELL: &str = "#dddddd";

/// A power of ten as a tick label: 0.01, 0.1, 1, 10, 100, 1000, 10k, 1M.
fn decade(v: f64) -> String {
    if v >= 1e4 {
        short(v).replace(".00", "")
    } else if v >= 1.0 {
        format!("{v:.0}")
    } else {
        let digits = (-v.log10()).ceil().clamp(0.0, 12.0) as usize;
        format!("{v:.digits$}")
    }
}

/// About how wide `text` is at font-size 11 sans-serif, in pixels (a little
/// wide: DejaVu Sans digits, `=` and `%` are wider than the average letter).
pub(crate) fn text_width(text: &str) -> f64 {
    text.chars().count() as f64 * 7.0
}

/// `text` cut to at most `max` characters, an ellipsis marking the cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('\u{2026}');
    out
}

/// A label that may be cut: the full text stays in a `<title>` (a tooltip).
fn label(text: &str, max: usize, attributes: &str) -> String {
    let shown = clip(text, max);
    if shown == text {
        format!("<text {attributes}>{}</text>", escape(text))
    } else {
        format!("<text {attributes}><title>{}</title>{}</text>", escape(text), escape(&shown))
    }
}

impl Heatmap<'_> {
    fn colour(&self, v: f64, lo: f64, hi: f64) -> String {
        match self.scale {
            Scale::Sequential => {
                let t = if hi > lo { (v - lo) / (hi - lo) } else { 0.5 };
                blend(WHITE, BLUE, 0.1 + 0.9 * t)
            }
            Scale::Diverging => {
                // log2 of the ratio, full colour at the largest |log2| seen (at least 1: twice or half).
                let span = lo.abs().max(hi.abs()).max(1.0);
                let l = v.max(1e-12).log2() / span;
                if l >= 0.0 {
                    blend(WHITE, BLUE, l)
                } else {
                    blend(WHITE, RED, -l)
                }
            }
        }
    }

    /// The colour scale as a row of steps from the lowest to the highest
    /// value (for ratios: from the smallest to the largest ratio drawn, white
    /// at 1), the end values printed beside it.
    fn colour_bar(&self, x: f64, y: f64, lo: f64, hi: f64) -> String {
        const STEPS: usize = 12;
        const STEP_W: f64 = 16.0;
        let (from, to) = match self.scale {
            Scale::Sequential => (lo, hi),
            Scale::Diverging => {
                let span = lo.abs().max(hi.abs()).max(1.0);
                (2f64.powf(-span), 2f64.powf(span))
            }
        };
        let value_at = |t: f64| match self.scale {
            Scale::Sequential => from + (to - from) * t,
            Scale::Diverging => 2f64.powf(from.log2() + (to.log2() - from.log2()) * t),
        };
        let mut s = format!(
            r#"<g class="legend"><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
            x - 4.0,
            y + 10.0,
            short(from)
        );
        for i in 0..STEPS {
            let v = value_at((i as f64 + 0.5) / STEPS as f64);
            let _ = write!(
                s,
                r#"<rect x="{:.1}" y="{y:.1}" width="{STEP_W}" height="12" fill="{}"/>"#,
                x + STEP_W * i as f64,
                self.colour(v, lo, hi)
            );
        }
        let _ = write!(
            s,
            r##"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="12" fill="none" stroke="#999"/><text x="{:.1}" y="{:.1}">{}</text>"##,
            STEP_W * STEPS as f64,
            x + STEP_W * STEPS as f64 + 4.0,
            y + 10.0,
            escape(&format!("{} {}", short(to), self.unit))
        );
        if self.scale == Scale::Diverging {
            let _ = write!(
                s,
                r##"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="#333"/>"##,
                x + STEP_W * STEPS as f64 / 2.0,
                y - 2.0,
                y + 14.0
            );
        }
        s.push_str("</g>");
        s
    }

    /// The heatmap as a standalone SVG document.
    pub fn render(&self) -> String {
        let left = 70.0;
        let top = 48.0;
        // Wide enough for the legend lines under small matrices.
        let width = (left + CELL_W * self.columns.len() as f64 + 20.0).max(470.0);
        let height = top + CELL_H * self.rows.len() as f64 + 82.0;
        let finite: Vec<f64> = self.values.iter().flatten().flatten().copied().filter(|v| v.is_finite()).collect();
        let (lo, hi) = match self.scale {
            Scale::Sequential => (
                finite.iter().copied().fold(f64::INFINITY, f64::min),
                finite.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            ),
            Scale::Diverging => {
                let logs: Vec<f64> = finite.iter().map(|v| v.max(1e-12).log2()).collect();
                (logs.iter().copied().fold(0.0, f64::min), logs.iter().copied().fold(0.0, f64::max))
            }
        };
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart heatmap" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="11">"#
        );
        let _ = write!(s, r#"<text x="4" y="16" font-size="13" font-weight="bold">{}</text>"#, escape(self.title));
        let _ = write!(
            s,
            r##"<text x="{left}" y="36" fill="#555">{} across, {} down ({})</text>"##,
            escape(self.column_label),
            escape(self.row_label),
            escape(self.unit)
        );
        for (j, c) in self.columns.iter().enumerate() {
            let x = left + CELL_W * (j as f64 + 0.5);
            let _ = write!(s, r#"<text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"#, top - 2.0, escape(c));
        }
        for (i, r) in self.rows.iter().enumerate() {
            let y = top + CELL_H * i as f64;
            let _ =
                write!(s, r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#, left - 6.0, y + 17.0, escape(r));
            for j in 0..self.columns.len() {
                let x = left + CELL_W * j as f64;
                self.draw_cell(&mut s, (i, j), (x, y), (lo, hi));
            }
        }
        let legend_y = top + CELL_H * self.rows.len() as f64 + 22.0;
        if !finite.is_empty() {
            s.push_str(&self.colour_bar(left, legend_y - 12.0, lo, hi));
        }
        self.legends(&mut s, left, legend_y, finite.is_empty());
        s.push_str("</svg>");
        s
    }

    /// The cell of row `i`, column `j` at (`x`, `y`): its colour on the scale from `lo` to `hi`,
    /// its outline (cached, within noise) and its figure; grey where it has none.
    fn draw_cell(&self, s: &mut String, (i, j): (usize, usize), (x, y): (f64, f64), (lo, hi): (f64, f64)) {
        let r = &self.rows[i];
        let v = self.values.get(i).and_then(|row| row.get(j)).copied().flatten();
        let marked = self.marked.get(i).and_then(|row| row.get(j)).copied().unwrap_or(false);
        let noise = self.within_noise.get(i).and_then(|row| row.get(j)).copied().unwrap_or(false);
        let partial = self.partial.get(i).and_then(|row| row.get(j)).copied().unwrap_or(false);
        let unjudged = self.scale == Scale::Diverging
            && (noise || self.no_verdict.get(i).and_then(|row| row.get(j)).copied().unwrap_or(false));
        match v.filter(|v| v.is_finite()) {
            Some(v) => {
                let fill = if unjudged { UNJUDGED_CELL.to_string() } else { self.colour(v, lo, hi) };
                let stroke = match (marked, noise) {
                    (true, _) => r##" stroke="#e08000" stroke-width="3""##,
                    (false, true) => r##" stroke="#555" stroke-width="2" stroke-dasharray="4 3""##,
                    _ => r##" stroke="#fff""##,
                };
                let _ = write!(
                    s,
                    r#"<rect x="{x:.1}" y="{y:.1}" width="{CELL_W}" height="{CELL_H}" fill="{fill}"{stroke}><title>{}, {}: {} {}</title></rect>"#,
                    escape(r),
                    escape(&self.columns[j]),
                    v,
                    escape(self.unit)
                );
                let dark = !unjudged
                    && match self.scale {
                        Scale::Sequential => hi > lo && (v - lo) / (hi - lo) > 0.6,
                        Scale::Diverging => v.max(1e-12).log2().abs() / lo.abs().max(hi.abs()).max(1.0) > 0.6,
                    };
                let ink = if dark { "#fff" } else { "#111" };
                let _ = write!(
                    s,
                    r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="{ink}">{}{}{}</text>"#,
                    x + CELL_W / 2.0,
                    y + 17.0,
                    short(v),
                    match (marked, noise) {
                        (true, true) => " c~",
                        (true, false) => " c",
                        (false, true) => "~",
                        _ => "",
                    },
                    if partial { crate::document::PARTIAL_MARK } else { "" }
                );
            }
            None => {
                let _ = write!(
                    s,
                    r##"<rect x="{x:.1}" y="{y:.1}" width="{CELL_W}" height="{CELL_H}" fill="#f4f4f4" stroke="#fff"/>"##
                );
            }
        }
    }

    /// Whether the map carries verdicts (a comparison's ratio map): its cells' colours are then
    /// verdicts.
    fn judged(&self) -> bool {
        !self.within_noise.is_empty() || !self.no_verdict.is_empty()
    }

    /// The legend lines under the map from `legend_y`: the scale's, then each mark's in use.
    fn legends(&self, s: &mut String, left: f64, legend_y: f64, no_values: bool) {
        let legend = match self.scale {
            Scale::Sequential if no_values => "no values".to_string(),
            Scale::Sequential => format!("{}: light low, dark high", self.unit),
            Scale::Diverging if self.judged() => {
                "B/A: blue faster, red slower; grey within noise or no verdict".to_string()
            }
            Scale::Diverging => "red: B slower than A, white: equal, blue: B faster (ratio B/A)".to_string(),
        };
        let _ = write!(s, r##"<text x="{left}" y="{:.1}" fill="#555">{}</text>"##, legend_y + 22.0, escape(&legend));
        if self.marked.iter().flatten().any(|m| *m) {
            let _ = write!(
                s,
                r##"<text x="{left}" y="{:.1}" fill="#e08000">orange outline, "c": faster than the limit (served by a cache)</text>"##,
                legend_y + 38.0
            );
        }
        let mut next_y = legend_y + if self.marked.iter().flatten().any(|m| *m) { 54.0 } else { 38.0 };
        if self.within_noise.iter().flatten().any(|m| *m) {
            let _ = write!(
                s,
                r##"<text x="{left}" y="{next_y:.1}" fill="#555">dashed outline, "~": within noise (Mann-Whitney, 5%)</text>"##,
            );
            next_y += 16.0;
        }
        if self.partial.iter().flatten().any(|m| *m) {
            let _ = write!(
                s,
                r##"<text x="{left}" y="{next_y:.1}" fill="#a00">{}: takes in samples of partial cells (clients or connections failed; --include-partial)</text>"##,
                crate::document::PARTIAL_MARK
            );
        }
    }
}

/// One line of a [`LineChart`].
pub struct Series {
    /// The line's name, in the legend.
    pub name: String,
    /// (x, y); on a log2 x axis only x > 0 is drawn.
    pub points: Vec<(f64, f64)>,
    /// Each point's tooltip, in `points`' order; where absent, "name: y".
    pub tips: Vec<String>,
    /// Whether the last point stands apart from the line, hollow: a figure over a shorter span
    /// than the others (a series' last interval, cut short by the cell's end), never a dip.
    pub last_apart: bool,
}

impl Series {
    /// A line through `points`, named `name` in the legend.
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series { name: name.into(), points, tips: Vec::new(), last_apart: false }
    }
}

/// How a [`LineChart`] lays out x.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XAxis {
    /// A log2 axis, ticked at the data's x values (sizes, queue depths, percentiles).
    Log2,
    /// A linear axis from 0, five even ticks (rates, seconds).
    Linear,
}

/// A chart of lines: one [`Series`] each, a colour each (at most [`MAX_SERIES`]).
pub struct LineChart<'a> {
    /// The chart's title, above it.
    pub title: &'a str,
    /// The label of the x axis.
    pub x_label: &'a str,
    /// The label of the y axis.
    pub y_label: &'a str,
    /// How to print an x value (a size, a percentile).
    pub x_text: &'a dyn Fn(f64) -> String,
    /// The lines, in legend order.
    pub series: Vec<Series>,
    /// Draw y on a log10 axis (latencies).
    pub log_y: bool,
    /// How x is laid out.
    pub x_axis: XAxis,
    /// The SVG's class after `chart` ("lines", "series", "curve"), which the pages' tests count.
    pub class: &'a str,
}

/// Longest legend name shown whole.
const LEGEND_CHARS: usize = 56;

/// Lines one chart can tell apart by colour: callers split longer lists.
pub const MAX_SERIES: usize = 8;

/// A line's colour names its system: no red or green, which mean a verdict in these reports.
const PALETTE: [&str; MAX_SERIES] =
    ["#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#e377c2", "#bcbd22", "#393b79"];

/// The end of a linear axis from 0 whose four even ticks are round figures (steps of 1, 1.5, 2,
/// 2.5, 3, 4, 5, 6, 7.5 or 8 times a power of ten) and which holds `most`.
pub(crate) fn round_up(most: f64) -> f64 {
    let power = 10f64.powf((most / 4.0).log10().floor());
    let step = [1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.5, 8.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|step| step * 4.0 >= most)
        .unwrap_or(10.0 * power);
    step * 4.0
}

/// Where a [`LineChart`]'s values land: its size, margins and the axes' ranges (in the axes'
/// own scale: log2 of x, log10 of y where the axis is a log one).
struct Frame {
    w: f64,
    h: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    x: (f64, f64),
    y: (f64, f64),
    log_x: bool,
    log_y: bool,
}

impl Frame {
    fn tx(&self, x: f64) -> f64 {
        if self.log_x {
            x.max(1e-12).log2()
        } else {
            x
        }
    }

    fn ty(&self, y: f64) -> f64 {
        if self.log_y {
            y.max(1e-9).log10()
        } else {
            y
        }
    }

    fn px(&self, x: f64) -> f64 {
        let (x0, x1) = self.x;
        let at = if x1 > x0 { (self.tx(x) - x0) / (x1 - x0) } else { 0.5 };
        self.left + at * (self.w - self.left - self.right)
    }

    fn py(&self, y: f64) -> f64 {
        let (y0, y1) = self.y;
        self.top + (1.0 - (self.ty(y) - y0) / (y1 - y0).max(1e-12)) * (self.h - self.top - self.bottom)
    }
}

impl LineChart<'_> {
    /// The chart as a standalone SVG document.
    pub fn render(&self) -> String {
        let pts: Vec<(f64, f64)> =
            self.series.iter().flat_map(|s| s.points.iter().copied()).filter(|p| self.drawable(p)).collect();
        let f = self.frame(&pts);
        let (w, h) = (f.w, f.h);
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart {}" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#,
            self.class
        );
        let _ = write!(s, r#"<text x="4" y="16" font-size="13" font-weight="bold">{}</text>"#, escape(self.title));
        let (bx, by) = (f.left, h - f.bottom);
        let _ = write!(
            s,
            r##"<line x1="{bx}" y1="{}" x2="{bx}" y2="{by}" stroke="#333"/><line x1="{bx}" y1="{by}" x2="{:.1}" y2="{by}" stroke="#333"/>"##,
            f.top,
            w - f.right
        );
        if pts.is_empty() {
            s.push_str("</svg>");
            return s;
        }
        self.ticks(&mut s, &f, &pts);
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            (f.left + w - f.right) / 2.0,
            h - 12.0,
            escape(self.x_label)
        );
        let _ = write!(
            s,
            r#"<text x="14" y="{:.1}" transform="rotate(-90 14 {:.1})" text-anchor="middle">{}</text>"#,
            f64::midpoint(f.top, by),
            f64::midpoint(f.top, by),
            escape(self.y_label)
        );
        for k in 0..self.series.len() {
            self.draw_series(&mut s, k, &f);
        }
        s.push_str("</svg>");
        s
    }

    /// The chart's size (the legend's names decide the right margin: long names are cut, the
    /// full name kept as a tooltip) and the axes' ranges over the drawable points `pts`.
    fn frame(&self, pts: &[(f64, f64)]) -> Frame {
        let longest = self.series.iter().map(|s| text_width(&clip(&s.name, LEGEND_CHARS))).fold(0.0, f64::max);
        let right = (longest + 34.0).max(150.0);
        let (w, h) = (490.0 + right, 320.0 + (14.0 * self.series.len() as f64 - 260.0).max(0.0));
        let mut f = Frame {
            w,
            h,
            left: 78.0,
            right,
            top: 30.0,
            bottom: 48.0,
            x: (0.0, 0.0),
            y: (0.0, 0.0),
            log_x: self.x_axis == XAxis::Log2,
            log_y: self.log_y,
        };
        let xs: Vec<f64> = pts.iter().map(|p| f.tx(p.0)).collect();
        let ys: Vec<f64> = pts.iter().map(|p| f.ty(p.1)).collect();
        let least = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
        let most = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        f.x = match self.x_axis {
            XAxis::Log2 => (least(&xs), most(&xs)),
            XAxis::Linear => (0.0, round_up(most(&xs).max(1e-9))),
        };
        let y0 = if self.log_y { least(&ys).floor() } else { 0.0 };
        let y1 = most(&ys);
        f.y = (y0, if self.log_y { y1.ceil().max(y0 + 1.0) } else { (y1 * 1.1).max(1e-9) });
        f
    }

    /// The axes' ticks: x at the data's values on a log2 axis, five even ones on a linear one;
    /// y five, or the decades on a log axis.
    fn ticks(&self, s: &mut String, f: &Frame, pts: &[(f64, f64)]) {
        let by = f.h - f.bottom;
        let xs: Vec<f64> = match self.x_axis {
            XAxis::Log2 => {
                let mut seen: Vec<f64> = pts.iter().map(|p| p.0).collect();
                seen.sort_by(f64::total_cmp);
                seen.dedup();
                seen
            }
            XAxis::Linear => (0..=4).map(|i| f.x.1 / 4.0 * f64::from(i)).collect(),
        };
        for (i, x) in xs.iter().enumerate() {
            // A linear axis's 0 starts at the corner, where the y axis's 0 ends: it reads from there.
            let anchor = if i == 0 && self.x_axis == XAxis::Linear { "start" } else { "middle" };
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="{anchor}">{}</text>"#,
                f.px(*x),
                by + 14.0,
                escape(&(self.x_text)(*x))
            );
        }
        let ticks: Vec<f64> = if self.log_y {
            (f.y.0 as i32..=f.y.1 as i32).map(|e| 10f64.powi(e)).collect()
        } else {
            (0..=4).map(|i| f.y.1 / 4.0 * f64::from(i)).collect()
        };
        for t in ticks {
            let y = f.py(t);
            let _ = write!(
                s,
                r##"<line x1="{:.1}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#333"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                f.left - 4.0,
                f.left,
                f.left - 6.0,
                y + 4.0,
                if self.log_y { decade(t) } else { short(t) }
            );
        }
    }

    /// Only points that can be drawn: x > 0 on a log axis (x >= 0 on a linear one), finite y
    /// (> 0 on a log y axis).
    fn drawable(&self, p: &(f64, f64)) -> bool {
        let x_ok = match self.x_axis {
            XAxis::Log2 => p.0 > 0.0,
            XAxis::Linear => p.0 >= 0.0,
        };
        x_ok && p.0.is_finite() && p.1.is_finite() && (!self.log_y || p.1 > 0.0)
    }

    /// Series `k`: its line and points (placed by `f`) and its line of the legend, right of the
    /// plot.
    fn draw_series(&self, s: &mut String, k: usize, f: &Frame) {
        let series = &self.series[k];
        let colour = PALETTE[k % PALETTE.len()];
        let tip = |i: usize, y: f64| series.tips.get(i).cloned().unwrap_or_else(|| format!("{}: {y}", series.name));
        let mut points: Vec<(f64, f64, String, bool)> = series
            .points
            .iter()
            .enumerate()
            .filter(|(_, p)| self.drawable(p))
            .map(|(i, p)| (p.0, p.1, tip(i, p.1), series.last_apart && i + 1 == series.points.len()))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let path: Vec<String> =
            points.iter().filter(|p| !p.3).map(|(x, y, ..)| format!("{:.1},{:.1}", f.px(*x), f.py(*y))).collect();
        // Past the palette, the colours come again dashed, then dotted.
        let dash = match k / PALETTE.len() {
            0 => "",
            1 => r#" stroke-dasharray="7 3""#,
            _ => r#" stroke-dasharray="2 2""#,
        };
        let _ = write!(
            s,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="2"{dash} points="{}"/>"#,
            path.join(" ")
        );
        for (x, y, tip, apart) in &points {
            let fill = if *apart { "white" } else { colour };
            let _ = write!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{fill}" stroke="{colour}" data-x="{x}" data-y="{y}"><title>{}</title></circle>"#,
                f.px(*x),
                f.py(*y),
                escape(tip),
            );
        }
        let ly = f.top + 14.0 * k as f64;
        let _ = write!(
            s,
            r#"<line x1="{0:.1}" y1="{1:.1}" x2="{2:.1}" y2="{1:.1}" stroke="{colour}" stroke-width="3"{dash}/>{3}"#,
            f.w - f.right + 6.0,
            ly + 5.0,
            f.w - f.right + 20.0,
            label(
                &series.name,
                LEGEND_CHARS,
                &format!(r#"class="legend" x="{:.1}" y="{:.1}""#, f.w - f.right + 24.0, ly + 9.0)
            )
        );
    }
}

/// A figure's verdict as a chart colours it: only a change beyond the noise has a colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tone {
    /// Faster than the baseline beyond the noise (the rank test's "faster").
    Faster,
    /// Slower than the baseline beyond the noise.
    Slower,
    /// Within noise, or no verdict (too few samples): grey, never a winner's colour.
    Unjudged,
    /// The side the others are judged against.
    Baseline,
}

/// A bar faster than the baseline beyond the noise.
pub const FASTER_BAR: &str = "#1a9850";
/// A bar slower than the baseline beyond the noise.
pub const SLOWER_BAR: &str = "#d73027";
/// A bar within noise of the baseline, or without a verdict.
pub const UNJUDGED_BAR: &str = "#a6a6a6";
/// The baseline's bar.
pub const BASELINE_BAR: &str = "#5b6b8c";

impl Tone {
    /// The tone of a verdict as `iomatrix_analysis::judge` words it.
    pub fn of_verdict(verdict: &str) -> Tone {
        match verdict {
            "faster" => Tone::Faster,
            "slower" => Tone::Slower,
            _ => Tone::Unjudged,
        }
    }

    /// The bar's fill.
    pub fn fill(self) -> &'static str {
        match self {
            Tone::Faster => FASTER_BAR,
            Tone::Slower => SLOWER_BAR,
            Tone::Unjudged => UNJUDGED_BAR,
            Tone::Baseline => BASELINE_BAR,
        }
    }
}

/// The colours of systems drawn side by side without a comparison (a bar per system, or per
/// cell of one system): no red and no green, which mean "slower" and "faster" in these reports.
pub const SYSTEM_PALETTE: [&str; 6] = ["#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#e377c2"];

/// One bar of a [`bar_chart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// Its label, left of it.
    pub name: String,
    /// Its figure (a median).
    pub value: f64,
    /// The lowest and the highest sample behind the figure, drawn as an error bar; None where
    /// there is one sample, or where the figure is no median of samples (a mean over cells).
    pub spread: Option<(f64, f64)>,
    /// Its fill: a [`Tone`]'s colour in a comparison, a system's colour otherwise.
    pub fill: &'static str,
    /// Words after the figure (the verdict, "slower (p=0.008)"); empty for none.
    pub words: String,
}

/// Whether a figure in `unit` is a time, where lower is faster (`ms`, `us`, `s`...).
pub fn is_time_unit(unit: &str) -> bool {
    matches!(unit, "ns" | "us" | "\u{b5}s" | "ms" | "s")
}

/// The unit a chart of KB/s figures (KiB per second) is shown in, by its largest figure, and
/// what each figure is divided by for it: KB/s below 1024 KB/s, MB/s below 1024 MB/s, else
/// GB/s. A chart's figures are then in the unit it names ("3.43 GB/s", never "3.59M KB/s").
pub fn kib_rate_unit(largest: f64) -> (f64, &'static str) {
    if largest >= 1024.0 * 1024.0 {
        (1024.0 * 1024.0, "GB/s")
    } else if largest >= 1024.0 {
        (1024.0, "MB/s")
    } else {
        (1.0, "KB/s")
    }
}

/// Bars, one per label, with the figure (and its words) printed, each bar's samples' spread as
/// an error bar, and `note` under them (what the colours and the error bars mean). The left
/// margin fits the labels (long ones are cut, the full text kept as a tooltip).
pub fn bar_chart(title: &str, unit: &str, bars: &[Bar], note: &str) -> String {
    const LABEL_CHARS: usize = 64;
    let row = 24.0;
    let longest = bars.iter().map(|b| text_width(&clip(&b.name, LABEL_CHARS))).fold(0.0, f64::max);
    let widest_words = bars.iter().map(|b| text_width(&b.words)).fold(0.0, f64::max);
    let left = (longest + 12.0).max(80.0);
    let w = left + 420.0 + widest_words;
    let h = 36.0 + row * bars.len() as f64 + if note.is_empty() { 10.0 } else { 26.0 };
    let top_of = |b: &Bar| b.spread.map_or(b.value, |(_, hi)| hi.max(b.value));
    let mut max = bars.iter().map(top_of).filter(|v| v.is_finite()).fold(0.0, f64::max).max(1e-12);
    // KB/s in the unit the figures need ([`kib_rate_unit`]); other units as they come.
    let (divisor, unit) = if unit == "KB/s" { kib_rate_unit(max) } else { (1.0, unit) };
    max /= divisor;
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart bars" width="{w:.0}" height="{h}" viewBox="0 0 {w:.0} {h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = write!(
        s,
        r#"<text x="4" y="16" font-size="13" font-weight="bold">{} ({})</text>"#,
        escape(title),
        escape(unit)
    );
    let length = |v: f64| (w - widest_words - left - 90.0) * (v / divisor).max(0.0) / max;
    for (i, bar) in bars.iter().enumerate() {
        let y = 28.0 + row * i as f64;
        let v = if bar.value.is_finite() { bar.value } else { 0.0 };
        s.push_str(&label(
            &bar.name,
            LABEL_CHARS,
            &format!(r#"x="{:.1}" y="{:.1}" text-anchor="end""#, left - 6.0, y + 15.0),
        ));
        // A figure far below the others still shows its bar (and so its colour).
        let len = if v > 0.0 { length(v).max(2.0) } else { 0.0 };
        let _ = write!(
            s,
            r#"<rect class="bar" x="{left:.1}" y="{y:.1}" width="{len:.1}" height="{:.1}" fill="{}"/>"#,
            row - 6.0,
            bar.fill
        );
        let mut end = len;
        if let Some((lo, hi)) = bar.spread.filter(|(lo, hi)| lo.is_finite() && hi.is_finite()) {
            let (x1, x2, mid) = (left + length(lo), left + length(hi), y + (row - 6.0) / 2.0);
            let _ = write!(
                s,
                r##"<path class="spread" d="M{x1:.1},{mid:.1}H{x2:.1}M{x1:.1},{:.1}V{:.1}M{x2:.1},{:.1}V{:.1}" stroke="#222" fill="none"><title>samples {} to {}</title></path>"##,
                mid - 5.0,
                mid + 5.0,
                mid - 5.0,
                mid + 5.0,
                short(lo / divisor),
                short(hi / divisor)
            );
            end = end.max(length(hi));
        }
        let words = if bar.words.is_empty() { String::new() } else { format!(" {}", bar.words) };
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}">{}{}</text>"#,
            left + end + 4.0,
            y + 15.0,
            short(v / divisor),
            escape(&words)
        );
    }
    if !note.is_empty() {
        let _ = write!(s, r##"<text x="4" y="{:.1}" fill="#555">{}</text>"##, h - 8.0, escape(note));
    }
    s.push_str("</svg>");
    s
}

/// A small well-formedness check for the SVG and HTML written here: every
/// element opened is closed in order (void HTML elements excepted), every
/// `&` starts an entity, quotes in tags pair up. Returns what is wrong.
#[cfg(test)]
pub(crate) fn well_formed(text: &str) -> Result<(), String> {
    const VOID: [&str; 4] = ["meta", "br", "hr", "img"];
    let mut stack: Vec<String> = Vec::new();
    let mut rest = text;
    let mut at = 0;
    while let Some(start) = rest.find('<') {
        let body = &rest[..start];
        for (i, _) in body.match_indices('&') {
            let entity = &body[i..];
            if !["&amp;", "&lt;", "&gt;", "&quot;", "&#"].iter().any(|e| entity.starts_with(e)) {
                return Err(format!("bare & at {}", at + i));
            }
        }
        let end = rest[start..].find('>').map(|e| start + e).ok_or(format!("unclosed tag at {}", at + start))?;
        let tag = &rest[start + 1..end];
        if tag.matches('"').count() % 2 != 0 {
            return Err(format!("odd quotes in <{tag}>"));
        }
        if tag.starts_with('!') {
            // <!DOCTYPE html>
        } else if let Some(name) = tag.strip_prefix('/') {
            match stack.pop() {
                Some(open) if open == name => {}
                other => return Err(format!("</{name}> closes {other:?}")),
            }
        } else if !tag.ends_with('/') {
            let name = tag.split_whitespace().next().unwrap_or_default().to_string();
            if !VOID.contains(&name.as_str()) {
                stack.push(name);
            }
        }
        at += end + 1;
        rest = &rest[end + 1..];
    }
    if stack.is_empty() {
        Ok(())
    } else {
        Err(format!("never closed: {stack:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bar in the first system colour, without spread or words.
    pub(super) fn plain(name: &str, value: f64) -> Bar {
        Bar { name: name.into(), value, spread: None, fill: SYSTEM_PALETTE[0], words: String::new() }
    }

    #[test]
    fn heatmaps_show_every_value_and_mark_cached_cells() {
        let h = Heatmap {
            title: "read <KB/s>",
            row_label: "file size",
            column_label: "record size",
            rows: vec!["64k".into(), "1m".into()],
            columns: vec!["4k".into(), "64k".into()],
            values: vec![vec![Some(100.0), Some(2_000_000.0)], vec![None, Some(50.0)]],
            marked: vec![vec![false, true], vec![false, false]],
            partial: Vec::new(),
            within_noise: Vec::new(),
            no_verdict: Vec::new(),
            scale: Scale::Sequential,
            unit: "KB/s",
        };
        let svg = h.render();
        well_formed(&svg).unwrap();
        assert!(svg.contains("read &lt;KB/s&gt;"));
        assert!(svg.contains(">2.00M c<") && svg.contains(">100<") && svg.contains(">50.00<"), "{svg}");
        // Four cells (one empty), then the colour scale: twelve steps and a frame.
        let legend = svg.find(r#"<g class="legend">"#).expect("a colour scale");
        assert_eq!(svg[..legend].matches("<rect").count(), 4);
        assert_eq!(svg[legend..].matches("<rect").count(), 13);
        assert!(svg[legend..].contains(">50.00<") && svg[legend..].contains(">2.00M KB/s<"), "scale ends: {svg}");
        assert!(svg.contains("served by a cache"));
        let ratio = Heatmap {
            scale: Scale::Diverging,
            unit: "ratio",
            values: vec![vec![Some(0.5), Some(2.0)], vec![Some(1.0), None]],
            marked: Vec::new(),
            partial: Vec::new(),
            within_noise: vec![vec![false, false], vec![true, false]],
            ..h
        };
        let svg = ratio.render();
        well_formed(&svg).unwrap();
        assert!(svg.contains(">1.00~<") && svg.contains("within noise"), "the within-noise cell marked: {svg}");
        assert_eq!(svg.matches("stroke-dasharray").count(), 1);
        assert!(svg.contains("#b2182b") && svg.contains("#2166ac"), "full red and blue beyond the noise: {svg}");
        assert!(
            svg.contains(&format!(r##"fill="{UNJUDGED_CELL}" stroke="#555""##)),
            "the cell within noise is grey, not white: {svg}"
        );
        assert!(svg.contains("grey within noise or no verdict"), "{svg}");
        // Too few samples for a verdict: grey too, however far the ratio is from 1.
        let unjudged = Heatmap { within_noise: Vec::new(), no_verdict: vec![vec![true, false]], ..ratio };
        let svg = unjudged.render();
        well_formed(&svg).unwrap();
        let first = svg.split("<rect ").nth(1).unwrap();
        assert!(first.contains(&format!("fill=\"{UNJUDGED_CELL}\"")), "the 0.50 without a verdict is grey: {svg}");
        assert!(svg.contains("#2166ac"), "the 2.00 beyond the noise stays blue: {svg}");
        let ratio =
            Heatmap { no_verdict: Vec::new(), within_noise: vec![vec![false, false], vec![true, false]], ..unjudged };
        // The ratio scale runs from half to twice, white in the middle.
        let legend = &svg[svg.find(r#"<g class="legend">"#).unwrap()..];
        assert!(legend.contains(">0.50<") && legend.contains(">2.00 ratio<"), "{legend}");
        // No values: no scale, no panic.
        let empty = Heatmap { values: vec![vec![None, None], vec![None, Some(f64::NAN)]], ..ratio };
        let svg = empty.render();
        well_formed(&svg).unwrap();
        assert!(!svg.contains("legend"));
    }

    #[test]
    fn a_linear_axis_ends_where_its_ticks_are_round() {
        for (most, end) in [(226_000.0, 240_000.0), (4.0, 4.0), (1000.0, 1000.0), (1001.0, 1200.0), (0.37, 0.4)] {
            assert!((round_up(most) - end).abs() < end * 1e-9, "{most}: {}", round_up(most));
        }
    }

    #[test]
    fn decades_print_plainly() {
        let printed: Vec<String> = (-3..=6).map(|e| decade(10f64.powi(e))).collect();
        assert_eq!(printed, ["0.001", "0.01", "0.1", "1", "10", "100", "1000", "10k", "100k", "1M"]);
    }

    #[test]
    fn line_and_bar_charts_are_well_formed() {
        let size = |x: f64| format!("{x}");
        let chart = LineChart {
            title: "t",
            x_label: "file size",
            y_label: "KB/s",
            x_text: &size,
            series: vec![Series::new("4k", vec![(64.0, 10.0), (1024.0, 30.0)])],
            log_y: false,
            x_axis: XAxis::Log2,
            class: "lines",
        };
        let svg = chart.render();
        well_formed(&svg).unwrap();
        assert_eq!(svg.matches("<circle").count(), 2);
        let bars = bar_chart("seeks", "seeks/s", &[plain("#1", 10.0), plain("#2 & co", 20.0)], "");
        well_formed(&bars).unwrap();
        assert!(bars.contains("#2 &amp; co"));
    }

    #[test]
    fn long_labels_widen_the_chart_or_are_cut_with_a_tooltip() {
        let name = "access 1m/64k qd=2 read=100% random=100% read".to_string();
        let narrow = bar_chart("x", "KB/s", &[plain("a", 1.0)], "");
        let wide = bar_chart("x", "KB/s", &[plain(&name, 1.0), plain("b", f64::NAN)], "");
        let width = |svg: &str| -> f64 {
            let at = svg.find("width=\"").unwrap() + 7;
            svg[at..at + svg[at..].find('"').unwrap()].parse().unwrap()
        };
        assert!(width(&wide) >= width(&narrow) + text_width(&name) - 80.0, "{wide}");
        assert!(wide.contains(&format!(">{}<", escape(&name))), "shown whole: {wide}");
        well_formed(&wide).unwrap();
        let huge = "x".repeat(200);
        let cut = bar_chart("x", "KB/s", &[plain(&huge, 1.0)], "");
        well_formed(&cut).unwrap();
        assert!(cut.contains(&format!("<title>{huge}</title>")) && cut.contains('\u{2026}'), "{cut}");
        let size = |x: f64| format!("{x}");
        let lines = LineChart {
            title: "latency",
            x_label: "percentile",
            y_label: "us",
            x_text: &size,
            series: vec![Series::new(name.clone(), vec![(1.0, 10.0), (2.0, 30.0)])],
            log_y: true,
            x_axis: XAxis::Log2,
            class: "lines",
        };
        let svg = lines.render();
        well_formed(&svg).unwrap();
        assert!(svg.contains(&format!(">{}<", escape(&name))), "legend whole: {svg}");
        assert!(width(&svg) >= 490.0 + text_width(&name));
    }
}

#[cfg(test)]
mod bar_colours {
    use super::tests::plain;
    use super::*;

    #[test]
    fn kb_per_second_is_shown_in_the_unit_its_figures_need() {
        assert_eq!(kib_rate_unit(1000.0), (1.0, "KB/s"));
        assert_eq!(kib_rate_unit(2048.0), (1024.0, "MB/s"));
        assert_eq!(kib_rate_unit(2.24 * 1024.0 * 1024.0), (1024.0 * 1024.0, "GB/s"));
        let bars = bar_chart("read", "KB/s", &[plain("A", 3.0 * 1024.0 * 1024.0)], "");
        assert!(bars.contains("read (GB/s)") && bars.contains(">3.00<"), "{bars}");
        let ops = bar_chart("seeks", "seeks/s", &[plain("A", 30000.0)], "");
        assert!(ops.contains("seeks (seeks/s)"), "{ops}");
    }

    #[test]
    fn a_bar_takes_the_colour_it_is_given_and_only_verdicts_are_green_or_red() {
        assert_eq!(Tone::of_verdict("faster").fill(), FASTER_BAR);
        assert_eq!(Tone::of_verdict("slower").fill(), SLOWER_BAR);
        for unjudged in ["within noise", "no verdict"] {
            assert_eq!(Tone::of_verdict(unjudged).fill(), UNJUDGED_BAR, "{unjudged}");
        }
        for colour in SYSTEM_PALETTE.iter().chain([&UNJUDGED_BAR, &BASELINE_BAR]) {
            assert!(![FASTER_BAR, SLOWER_BAR, "#2ca02c", "#d62728"].contains(colour), "{colour} reads as a verdict");
        }
        // The higher bar is not green by rank: each keeps its own fill.
        let bars = [
            Bar { fill: BASELINE_BAR, ..plain("A", 100.0) },
            Bar { fill: UNJUDGED_BAR, words: "within noise (p=0.400)".into(), ..plain("B", 300.0) },
        ];
        let svg = bar_chart("read", "KB/s", &bars, "grey: within noise");
        well_formed(&svg).unwrap();
        let fills: Vec<&str> = svg
            .split("<rect ")
            .skip(1)
            .map(|r| r.split("fill=\"").nth(1).unwrap().split('"').next().unwrap())
            .collect();
        assert_eq!(fills, [BASELINE_BAR, UNJUDGED_BAR], "{svg}");
        assert!(svg.contains(">300 within noise (p=0.400)<") && svg.contains(">grey: within noise<"), "{svg}");
    }

    #[test]
    fn error_bars_span_the_samples_and_fit_the_scale() {
        let bars = [
            Bar { spread: Some((80.0, 400.0)), ..plain("A", 100.0) },
            plain("B", 200.0),
            Bar { spread: Some((f64::NAN, 1.0)), ..plain("C", 1.0) },
        ];
        let svg = bar_chart("read", "ops/s", &bars, "");
        well_formed(&svg).unwrap();
        assert_eq!(svg.matches("class=\"spread\"").count(), 1, "one bar has a finite spread: {svg}");
        assert!(svg.contains("<title>samples 80.00 to 400</title>"), "{svg}");
        // The highest sample sets the scale: the error bar ends inside the plot, B's bar half its length.
        let width = |k: usize| -> f64 {
            let r = svg.split("<rect ").nth(k + 1).unwrap();
            r.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap()
        };
        assert!((width(1) / width(0) - 2.0).abs() < 0.05, "{svg}");
        let path = svg.split("class=\"spread\" d=\"M").nth(1).unwrap();
        let numbers: Vec<f64> = path
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|t| !t.is_empty())
            .map(|t| t.parse().unwrap())
            .collect();
        let (left, right) = (numbers[0], numbers[2]);
        assert!((right - left) / width(0) > 3.0, "80 to 400 around a bar of 100: {svg}");
    }
}
