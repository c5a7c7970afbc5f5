//! Charts as self-contained SVG: heatmaps (sequential and diverging), line
//! charts over a log2 axis of sizes, bar charts. Hand-written: no script, no
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
    pub title: &'a str,
    pub row_label: &'a str,
    pub column_label: &'a str,
    pub rows: Vec<String>,
    pub columns: Vec<String>,
    /// `values[row][column]`
    pub values: Vec<Vec<Option<f64>>>,
    /// Cells to outline (e.g. served by a cache), same shape as `values`.
    pub marked: Vec<Vec<bool>>,
    pub scale: Scale,
    pub unit: &'a str,
}

const CELL_W: f64 = 74.0;
const CELL_H: f64 = 26.0;

fn blend(a: (f64, f64, f64), b: (f64, f64, f64), t: f64) -> String {
    let t = t.clamp(0.0, 1.0);
    let c = |x: f64, y: f64| (x + (y - x) * t).round() as u8;
    format!("#{:02x}{:02x}{:02x}", c(a.0, b.0), c(a.1, b.1), c(a.2, b.2))
}

const WHITE: (f64, f64, f64) = (255.0, 255.0, 255.0);
const BLUE: (f64, f64, f64) = (33.0, 102.0, 172.0);
const RED: (f64, f64, f64) = (178.0, 24.0, 43.0);

/// Compact numbers for cells: 1234567 -> 1.23M, 0.873 -> 0.87.
pub fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
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

    pub fn render(&self) -> String {
        let left = 70.0;
        let top = 48.0;
        // Wide enough for the legend lines under small matrices.
        let width = (left + CELL_W * self.columns.len() as f64 + 20.0).max(470.0);
        let height = top + CELL_H * self.rows.len() as f64 + 50.0;
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
                let v = self.values.get(i).and_then(|row| row.get(j)).copied().flatten();
                let marked = self.marked.get(i).and_then(|row| row.get(j)).copied().unwrap_or(false);
                match v.filter(|v| v.is_finite()) {
                    Some(v) => {
                        let fill = self.colour(v, lo, hi);
                        let stroke =
                            if marked { r##" stroke="#e08000" stroke-width="3""## } else { r##" stroke="#fff""## };
                        let _ = write!(
                            s,
                            r#"<rect x="{x:.1}" y="{y:.1}" width="{CELL_W}" height="{CELL_H}" fill="{fill}"{stroke}><title>{}, {}: {} {}</title></rect>"#,
                            escape(r),
                            escape(&self.columns[j]),
                            v,
                            escape(self.unit)
                        );
                        let dark = match self.scale {
                            Scale::Sequential => hi > lo && (v - lo) / (hi - lo) > 0.6,
                            Scale::Diverging => v.max(1e-12).log2().abs() / lo.abs().max(hi.abs()).max(1.0) > 0.6,
                        };
                        let ink = if dark { "#fff" } else { "#111" };
                        let _ = write!(
                            s,
                            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="{ink}">{}{}</text>"#,
                            x + CELL_W / 2.0,
                            y + 17.0,
                            short(v),
                            if marked { " c" } else { "" }
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
        }
        let legend_y = top + CELL_H * self.rows.len() as f64 + 22.0;
        let legend = match self.scale {
            Scale::Sequential if finite.is_empty() => "no values".to_string(),
            Scale::Sequential => format!("white {} .. blue {} {}", short(lo), short(hi), self.unit),
            Scale::Diverging => "red: B slower than A, white: equal, blue: B faster (ratio B/A)".to_string(),
        };
        let _ = write!(s, r##"<text x="{left}" y="{legend_y:.1}" fill="#555">{}</text>"##, escape(&legend));
        if self.marked.iter().flatten().any(|m| *m) {
            let _ = write!(
                s,
                r##"<text x="{left}" y="{:.1}" fill="#e08000">orange outline, "c": faster than the limit (served by a cache)</text>"##,
                legend_y + 16.0
            );
        }
        s.push_str("</svg>");
        s
    }
}

/// One line of a [`LineChart`].
pub struct Series {
    pub name: String,
    /// (x, y), x > 0 (drawn on a log2 axis).
    pub points: Vec<(f64, f64)>,
}

pub struct LineChart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    /// How to print an x value (a size, a percentile).
    pub x_text: &'a dyn Fn(f64) -> String,
    pub series: Vec<Series>,
    /// Draw y on a log10 axis (latencies).
    pub log_y: bool,
}

const PALETTE: [&str; 8] = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

impl LineChart<'_> {
    pub fn render(&self) -> String {
        let (w, h) = (640.0, 320.0);
        let (left, right, top, bottom) = (78.0, 150.0, 30.0, 48.0);
        let pts: Vec<(f64, f64)> = self.series.iter().flat_map(|s| s.points.iter().copied()).collect();
        let ty = |y: f64| if self.log_y { y.max(1e-9).log10() } else { y };
        let xs: Vec<f64> = pts.iter().map(|p| p.0.max(1e-12).log2()).collect();
        let ys: Vec<f64> = pts.iter().map(|p| ty(p.1)).collect();
        let (x0, x1) =
            (xs.iter().copied().fold(f64::INFINITY, f64::min), xs.iter().copied().fold(f64::NEG_INFINITY, f64::max));
        let y0 = if self.log_y { ys.iter().copied().fold(f64::INFINITY, f64::min).floor() } else { 0.0 };
        let y1 = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let y1 = if self.log_y { y1.ceil().max(y0 + 1.0) } else { (y1 * 1.1).max(1e-9) };
        let px = |x: f64| {
            let lx = x.max(1e-12).log2();
            left + if x1 > x0 { (lx - x0) / (x1 - x0) } else { 0.5 } * (w - left - right)
        };
        let py = |y: f64| top + (1.0 - (ty(y) - y0) / (y1 - y0).max(1e-12)) * (h - top - bottom);
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart lines" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
        );
        let _ = write!(s, r#"<text x="4" y="16" font-size="13" font-weight="bold">{}</text>"#, escape(self.title));
        let (bx, by) = (left, h - bottom);
        let _ = write!(
            s,
            r##"<line x1="{bx}" y1="{top}" x2="{bx}" y2="{by}" stroke="#333"/><line x1="{bx}" y1="{by}" x2="{:.1}" y2="{by}" stroke="#333"/>"##,
            w - right
        );
        if pts.is_empty() {
            s.push_str("</svg>");
            return s;
        }
        // x ticks at the data's x values.
        let mut seen: Vec<f64> = pts.iter().map(|p| p.0).collect();
        seen.sort_by(f64::total_cmp);
        seen.dedup();
        for x in &seen {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                px(*x),
                by + 14.0,
                escape(&(self.x_text)(*x))
            );
        }
        // y ticks: five, or the decades on a log axis.
        let ticks: Vec<f64> = if self.log_y {
            (y0 as i32..=y1 as i32).map(|e| 10f64.powi(e)).collect()
        } else {
            (0..=4).map(|i| y1 / 4.0 * i as f64).collect()
        };
        for t in ticks {
            let y = py(t);
            let _ = write!(
                s,
                r##"<line x1="{:.1}" y1="{y:.1}" x2="{bx}" y2="{y:.1}" stroke="#333"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                bx - 4.0,
                bx - 6.0,
                y + 4.0,
                short(t)
            );
        }
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            (left + w - right) / 2.0,
            h - 12.0,
            escape(self.x_label)
        );
        let _ = write!(
            s,
            r#"<text x="14" y="{:.1}" transform="rotate(-90 14 {:.1})" text-anchor="middle">{}</text>"#,
            (top + by) / 2.0,
            (top + by) / 2.0,
            escape(self.y_label)
        );
        for (k, series) in self.series.iter().enumerate() {
            let colour = PALETTE[k % PALETTE.len()];
            let mut points = series.points.clone();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let path: Vec<String> = points.iter().map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y))).collect();
            let _ =
                write!(s, r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#, path.join(" "));
            for (x, y) in &points {
                let _ = write!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"><title>{}: {}</title></circle>"#,
                    px(*x),
                    py(*y),
                    escape(&series.name),
                    y
                );
            }
            let ly = top + 14.0 * k as f64;
            let _ = write!(
                s,
                r#"<rect x="{:.1}" y="{:.1}" width="10" height="10" fill="{colour}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
                w - right + 10.0,
                ly,
                w - right + 24.0,
                ly + 9.0,
                escape(&series.name)
            );
        }
        s.push_str("</svg>");
        s
    }
}

/// Bars, one per label, with the value printed.
pub fn bar_chart(title: &str, unit: &str, bars: &[(String, f64)]) -> String {
    let row = 24.0;
    let (left, w) = (220.0, 640.0);
    let h = 36.0 + row * bars.len() as f64 + 10.0;
    let max = bars.iter().map(|b| b.1).fold(0.0, f64::max).max(1e-12);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart bars" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = write!(
        s,
        r#"<text x="4" y="16" font-size="13" font-weight="bold">{} ({})</text>"#,
        escape(title),
        escape(unit)
    );
    for (i, (label, v)) in bars.iter().enumerate() {
        let y = 28.0 + row * i as f64;
        let len = (w - left - 90.0) * v / max;
        let colour = PALETTE[i % PALETTE.len()];
        let _ =
            write!(s, r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#, left - 6.0, y + 15.0, escape(label));
        let _ =
            write!(s, r#"<rect x="{left}" y="{y:.1}" width="{len:.1}" height="{:.1}" fill="{colour}"/>"#, row - 6.0);
        let _ = write!(s, r#"<text x="{:.1}" y="{:.1}">{}</text>"#, left + len + 4.0, y + 15.0, short(*v));
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tag opened is closed (a small well-formedness check).
    fn balanced(svg: &str) -> bool {
        let mut stack: Vec<String> = Vec::new();
        let mut rest = svg;
        while let Some(start) = rest.find('<') {
            let end = rest[start..].find('>').map(|e| start + e).unwrap();
            let tag = &rest[start + 1..end];
            if let Some(name) = tag.strip_prefix('/') {
                if stack.pop().as_deref() != Some(name) {
                    return false;
                }
            } else if !tag.ends_with('/') {
                stack.push(tag.split_whitespace().next().unwrap().to_string());
            }
            rest = &rest[end + 1..];
        }
        stack.is_empty()
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
            scale: Scale::Sequential,
            unit: "KB/s",
        };
        let svg = h.render();
        assert!(balanced(&svg), "{svg}");
        assert!(svg.contains("read &lt;KB/s&gt;"));
        assert!(svg.contains(">2.00M c<") && svg.contains(">100<") && svg.contains(">50.00<"), "{svg}");
        assert_eq!(svg.matches("<rect").count(), 4);
        assert!(svg.contains("served by a cache"));
        let ratio =
            Heatmap { scale: Scale::Diverging, values: vec![vec![Some(0.5), Some(2.0)], vec![Some(1.0), None]], ..h };
        let svg = ratio.render();
        assert!(balanced(&svg));
        assert!(
            svg.contains("#b2182b") && svg.contains("#2166ac") && svg.contains("#ffffff"),
            "full red, blue, white: {svg}"
        );
    }

    #[test]
    fn line_and_bar_charts_are_well_formed() {
        let size = |x: f64| format!("{x}");
        let chart = LineChart {
            title: "t",
            x_label: "file size",
            y_label: "KB/s",
            x_text: &size,
            series: vec![Series { name: "4k".into(), points: vec![(64.0, 10.0), (1024.0, 30.0)] }],
            log_y: false,
        };
        let svg = chart.render();
        assert!(balanced(&svg), "{svg}");
        assert_eq!(svg.matches("<circle").count(), 2);
        let bars = bar_chart("seeks", "seeks/s", &[("#1".into(), 10.0), ("#2 & co".into(), 20.0)]);
        assert!(balanced(&bars) && bars.contains("#2 &amp; co"));
    }
}
