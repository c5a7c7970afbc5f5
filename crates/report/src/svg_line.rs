//! A swept parameter drawn as lines: a cell's figure over the parameter's values (queue depth,
//! record or block size, file size), one line per system, on a log2 x axis in the values'
//! order, in place of a categorical bar per value. Drawn by [`LineChart`].

use crate::svg::{kib_rate_unit, LineChart, Series, XAxis};
use iomatrix_analysis::{CellKey, CellStats, SweptParameter};
use std::collections::{BTreeMap, BTreeSet};

/// The parameters drawn as lines, in the order looked for: each a count or a size, so a log2
/// axis spaces them (1, 4, 16, 32; 4k, 64k, 1m). Read and random shares (0% to 100%) stay bars.
const DRAWN: [&str; 3] = ["qd", "record", "file"];

/// One system's cells: a line's name and the figures it is drawn from.
pub struct Side<'a> {
    /// The system's name, in the legend.
    pub name: &'a str,
    /// Its cells' figures.
    pub cells: &'a BTreeMap<CellKey, CellStats>,
}

/// One line chart's cells: the same but for one swept parameter, at two or more of its values.
pub struct SweptLine {
    /// The parameter swept.
    pub param: SweptParameter,
    /// What the cells share (their key without the parameter): the chart's subject.
    pub rest: CellKey,
    /// Each value of the parameter and its cell, in the values' order.
    pub levels: BTreeMap<u64, CellKey>,
}

impl SweptLine {
    /// "access 1m/4k read=100% random=100%: MB/s by queue depth".
    pub fn title(&self, unit: &str) -> String {
        format!("{}: {unit} by {}", self.rest.describe(), self.param.what)
    }

    /// The x axis's label: "queue depth (log scale)".
    pub fn x_label(&self) -> String {
        format!("{} (log scale)", self.param.what)
    }
}

/// The lines among `keys`: for each parameter drawn as lines (queue depth, then record size,
/// then file size), the cells that differ only in it at two or more values. A cell is on one
/// line at most, the first parameter's.
pub fn swept_lines<'a>(keys: impl IntoIterator<Item = &'a CellKey>) -> Vec<SweptLine> {
    let keys: BTreeSet<&CellKey> = keys.into_iter().collect();
    let mut on_a_line: BTreeSet<&CellKey> = BTreeSet::new();
    let mut found = Vec::new();
    for param in DRAWN.iter().filter_map(|by| SweptParameter::named(by)) {
        let mut lines: BTreeMap<CellKey, BTreeMap<u64, CellKey>> = BTreeMap::new();
        for key in keys.iter().filter(|k| !on_a_line.contains(**k)) {
            if let Some((level, rest)) = param.split(key) {
                lines.entry(rest).or_default().insert(level, (*key).clone());
            }
        }
        // A value of 0 (a queue depth an imported row lacks) has no place on a log axis: bars.
        for (rest, levels) in lines.into_iter().filter(|(_, l)| l.len() > 1 && !l.contains_key(&0)) {
            on_a_line.extend(levels.values().filter_map(|l| keys.get(l).copied()));
            found.push(SweptLine { param, rest, levels });
        }
    }
    found
}

/// The charts of every parameter swept over the sides' cells (a cell without its value of it at
/// two or more values is no sweep), and the cells they draw, which the caller leaves out of its
/// bars. Cells `skip` names (a matrix's, charted as one) are not drawn.
pub fn swept_charts(sides: &[Side], skip: impl Fn(&CellKey) -> bool) -> (Vec<String>, BTreeSet<CellKey>) {
    let keys = sides.iter().flat_map(|s| s.cells.keys()).filter(|k| !skip(k));
    let mut drawn = BTreeSet::new();
    let mut charts = Vec::new();
    for line in swept_lines(keys) {
        if let Some(svg) = chart(&line, sides) {
            charts.push(svg);
            drawn.extend(line.levels.into_values());
        }
    }
    (charts, drawn)
}

/// One chart: the figure of the line's cells over the parameter's values, a line per side. None
/// where the cells' units differ (no one y axis).
fn chart(line: &SweptLine, sides: &[Side]) -> Option<String> {
    let (param, levels) = (line.param, &line.levels);
    let stats = || sides.iter().flat_map(|s| levels.values().filter_map(|k| s.cells.get(k)));
    let unit = stats().next()?.unit;
    if stats().any(|s| s.unit != unit) {
        return None;
    }
    let largest = stats().map(|s| s.median).fold(0.0, f64::max);
    let (divisor, unit) = if unit == "KB/s" { kib_rate_unit(largest) } else { (1.0, unit) };
    let series = sides
        .iter()
        .map(|side| {
            let at = |key: &CellKey| side.cells.get(key).map(|s| s.median / divisor);
            let missing: Vec<String> =
                levels.iter().filter(|(_, k)| at(k).is_none()).map(|(l, _)| param.level_name(*l)).collect();
            // A value a side did not measure is no point (never a zero); the legend says which.
            let name = if missing.is_empty() {
                side.name.to_string()
            } else {
                format!("{} (none at {})", side.name, missing.join(", "))
            };
            Series::new(name, levels.iter().filter_map(|(l, k)| Some((*l as f64, at(k)?))).collect())
        })
        .collect();
    let level_name = |x: f64| param.level_name(x as u64);
    let (title, x_label) = (line.title(unit), line.x_label());
    let chart = LineChart {
        title: &title,
        x_label: &x_label,
        y_label: unit,
        x_text: &level_name,
        series,
        log_y: false,
        x_axis: XAxis::Log2,
        class: "lines",
    };
    Some(chart.render())
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_core::IoMix;

    fn access(qd: u64) -> CellKey {
        let mix = IoMix { read_percent: 100, random_percent: 0, queue_depth: qd, load: None };
        CellKey { test: "access".into(), file_size: Some(8 << 20), record_size: Some(4096), variant: mix.name() }
    }

    fn cells(figures: &[(u64, f64)]) -> BTreeMap<CellKey, CellStats> {
        figures.iter().map(|(qd, v)| (access(*qd), CellStats::of(vec![*v], "KB/s"))).collect()
    }

    #[test]
    fn a_queue_depth_sweep_is_one_chart_with_a_line_per_system_in_the_depths_order() {
        let ext4 = cells(&[(16, 4000.0), (1, 1000.0), (32, 4200.0), (4, 3000.0)]);
        let xfs = cells(&[(1, 1100.0), (4, 2900.0), (32, 4300.0)]);
        let sides = [Side { name: "ext4", cells: &ext4 }, Side { name: "xfs", cells: &xfs }];
        let (charts, drawn) = swept_charts(&sides, |_| false);
        assert_eq!(charts.len(), 1, "one chart: {charts:?}");
        let svg = &charts[0];
        assert!(svg.contains("class=\"chart lines\"") && svg.contains("by queue depth"), "{svg}");
        assert_eq!(svg.matches("<polyline").count(), 2, "a line per system: {svg}");
        // The x ticks come first in the document, left to right.
        let ticks: Vec<usize> = [1, 4, 16, 32].iter().filter_map(|d| svg.find(&format!(">{d}</text>"))).collect();
        assert_eq!(ticks.len(), 4, "a tick per depth: {svg}");
        assert!(ticks.windows(2).all(|w| w[0] < w[1]), "ticks 1, 4, 16, 32 in order: {svg}");
        assert!(svg.contains("xfs (none at 16)"), "a missing point is named, not drawn as zero: {svg}");
        assert_eq!(svg.matches("<circle").count(), 7, "4 + 3 points, none for xfs at 16");
        assert_eq!(drawn.len(), 4, "every depth drawn, so no bars for them");
    }

    #[test]
    fn one_value_is_no_sweep_and_skipped_cells_are_not_drawn() {
        let one = cells(&[(4, 3000.0)]);
        assert!(swept_charts(&[Side { name: "a", cells: &one }], |_| false).0.is_empty());
        let two = cells(&[(1, 1000.0), (4, 3000.0)]);
        assert!(swept_charts(&[Side { name: "a", cells: &two }], |_| true).0.is_empty());
        let unknown_depth = cells(&[(0, 1000.0), (4, 3000.0)]);
        let (charts, drawn) = swept_charts(&[Side { name: "a", cells: &unknown_depth }], |_| false);
        assert!(charts.is_empty() && drawn.is_empty(), "a depth of 0 (unknown) cannot sit on a log axis: bars");
    }
}
