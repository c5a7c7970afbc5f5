//! The report workbook's curves and figures over time as native charts (issue 52): a "curves"
//! sheet with a table per curve (each system's points: load, achieved ops/s, mean and p99 latency,
//! and under them each system's curve figures) and a scatter-with-lines chart of the mean latency
//! over the achieved rate beside it, a series per system on one chart; and an "over time" sheet
//! with each cell's ops/s interval by interval and a scatter-with-lines chart of it.

use crate::document::Report;
use crate::svg_curve::{curve_lines, CurveLine};
use crate::xlsx::{to_col as col, to_row as row};
use rust_xlsxwriter::{Chart, ChartMarker, ChartType, Format, Workbook, XlsxError};

/// Name of the worksheet of curves.
pub const CURVES_SHEET: &str = "curves";
/// Name of the worksheet of figures over time.
pub const SERIES_SHEET: &str = "over time";
/// Cells charted over time at most: past it the sheet says how many more `show --series` gives.
pub const MAX_SERIES_CELLS: usize = 40;

/// One cell's figures over time: its name and (seconds at the middle of each interval, the
/// interval's ops/s over its own length).
#[derive(Debug, Clone, PartialEq)]
pub struct CellSeries {
    /// "#3 cell 2 access 8m/4k qd=8 read=100% random=100%".
    pub cell: String,
    /// Each interval's middle (s) and its ops/s.
    pub points: Vec<(f64, f64)>,
}

/// What the workbook charts over load and over time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timed {
    /// Each curve (its name) with a line per system that ran it.
    pub curves: Vec<(String, Vec<CurveLine>)>,
    /// Each cell's figures over time, in the groups' and runs' order (at most
    /// [`MAX_SERIES_CELLS`]).
    pub series: Vec<CellSeries>,
    /// Cells with figures over time past [`MAX_SERIES_CELLS`], not charted.
    pub more_series: usize,
}

impl Timed {
    /// The report's curves and its cells' figures over time.
    pub fn of(report: &Report) -> Timed {
        let sides: Vec<_> = report.groups.iter().map(|g| (g.name.as_str(), &g.summary.curves)).collect();
        let curves = curve_lines(&sides).into_iter().map(|(key, lines)| (key.describe(), lines)).collect();
        let mut series = Vec::new();
        let mut more_series = 0;
        for run in report.groups.iter().flat_map(|g| &g.runs) {
            // A run's cells by the one ordering rule (queue depth 1 < 4 < 16), as every listing.
            let mut cells: Vec<_> = run.cell_results.iter().map(|c| (iomatrix_analysis::CellKey::of(c), c)).collect();
            cells.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.seq.cmp(&b.1.seq)));
            for (key, cell) in cells {
                let Some(s) = cell.series() else { continue };
                if series.len() >= MAX_SERIES_CELLS {
                    more_series += 1;
                    continue;
                }
                let name = key.describe();
                let cell_name = format!("#{} cell {} {name}", run.summary.id, cell.seq);
                series.push(CellSeries { cell: cell_name, points: crate::svg_series::points(&s) });
            }
        }
        Timed { curves, series, more_series }
    }
}

/// Rows between the tops of two blocks at least (a default chart is about 15 rows tall).
const CHART_ROWS: usize = 16;

/// Writes the curves sheet; none without curves.
pub(crate) fn curves_sheet(workbook: &mut Workbook, curves: &[(String, Vec<CurveLine>)]) -> Result<(), XlsxError> {
    if curves.is_empty() {
        return Ok(());
    }
    let bold = Format::new().set_bold();
    let sheet = workbook.add_worksheet();
    sheet.set_name(CURVES_SHEET)?;
    let mut top = 0usize;
    for (curve, lines) in curves {
        sheet.write_string_with_format(row(top)?, 0, curve, &bold)?;
        let header = ["system", "load", "achieved ops/s", "mean latency (ms)", "p99 latency (ms)", "past the bound"];
        for (j, h) in header.iter().enumerate() {
            sheet.write_string_with_format(row(top + 1)?, col(j)?, *h, &bold)?;
        }
        let mut r = top + 2;
        let mut drawn = 0;
        let mut chart = Chart::new(ChartType::ScatterStraightWithMarkers);
        chart.title().set_name(&format!("{curve}: mean latency by achieved ops/s"));
        chart.x_axis().set_name("achieved ops/s");
        chart.y_axis().set_name("mean latency (ms)");
        for l in lines {
            let first = r;
            for p in &l.points {
                sheet.write_string(row(r)?, 0, &l.system)?;
                sheet.write_string(row(r)?, 1, p.load.to_string())?;
                sheet.write_number(row(r)?, 2, p.achieved_per_sec)?;
                for (c, v) in [(3, p.mean_ns), (4, p.p99_ns)] {
                    if let Some(ms) = v.map(|ns| ns / 1e6).filter(|v| v.is_finite()) {
                        sheet.write_number(row(r)?, c, ms)?;
                    }
                }
                sheet.write_string(row(r)?, 5, if p.past_bound { "yes" } else { "no" })?;
                r += 1;
            }
            if r > first {
                let (a, b) = (row(first)?, row(r - 1)?);
                chart
                    .add_series()
                    .set_name((CURVES_SHEET, a, 0))
                    .set_categories((CURVES_SHEET, a, 2, b, 2))
                    .set_values((CURVES_SHEET, a, 3, b, 3))
                    .set_marker(ChartMarker::new().set_automatic());
                drawn += 1;
            }
        }
        r = curve_figures(sheet, lines, r + 1, &bold)?;
        // A curve whose points are all left out (partial, failed, disturbed) is said, not drawn:
        // a chart of no series is no chart (and Excel's format refuses one).
        if drawn > 0 {
            sheet.insert_chart(row(top)?, 7, &chart)?;
        } else {
            sheet.write_string(row(top)?, 7, "no point of this curve is whole (all left out): no chart")?;
        }
        top = (r + 1).max(top + CHART_ROWS + 2);
    }
    Ok(())
}

/// Under a curve's points, each system's curve figures from `r` on; returns the row after them.
fn curve_figures(
    sheet: &mut rust_xlsxwriter::Worksheet,
    lines: &[CurveLine],
    mut r: usize,
    bold: &Format,
) -> Result<usize, XlsxError> {
    let header = ["system", "bound", "max within the bound (ops/s)", "overall response time (ms)"];
    for (j, h) in header.iter().enumerate() {
        sheet.write_string_with_format(row(r)?, col(j)?, *h, bold)?;
    }
    for l in lines {
        r += 1;
        sheet.write_string(row(r)?, 0, &l.system)?;
        sheet.write_string(row(r)?, 1, l.bound.as_deref().unwrap_or("none"))?;
        match l.max_within_bound {
            Some(v) => sheet.write_number(row(r)?, 2, v)?,
            None => sheet.write_string(row(r)?, 2, "none")?,
        };
        if let Some(ms) = l.overall_response_time_ns.map(|ns| ns / 1e6) {
            sheet.write_number(row(r)?, 3, ms)?;
        }
    }
    Ok(r + 1)
}

/// Writes the over-time sheet; none without figures over time.
pub(crate) fn series_sheet(workbook: &mut Workbook, timed: &Timed) -> Result<(), XlsxError> {
    if timed.series.is_empty() {
        return Ok(());
    }
    let bold = Format::new().set_bold();
    let sheet = workbook.add_worksheet();
    sheet.set_name(SERIES_SHEET)?;
    let mut top = 0usize;
    if timed.more_series > 0 {
        let more = format!("{} more cell(s) over time not charted: see iomatrix show RUN --series", timed.more_series);
        sheet.write_string_with_format(0, 0, more, &bold)?;
        top = 2;
    }
    for s in &timed.series {
        sheet.write_string_with_format(row(top)?, 0, &s.cell, &bold)?;
        sheet.write_string_with_format(row(top + 1)?, 0, "seconds", &bold)?;
        sheet.write_string_with_format(row(top + 1)?, 1, "ops/s", &bold)?;
        for (k, (x, y)) in s.points.iter().enumerate() {
            sheet.write_number(row(top + 2 + k)?, 0, *x)?;
            sheet.write_number(row(top + 2 + k)?, 1, *y)?;
        }
        if !s.points.is_empty() {
            let (a, b) = (row(top + 2)?, row(top + 1 + s.points.len())?);
            let mut chart = Chart::new(ChartType::ScatterStraightWithMarkers);
            chart.title().set_name(&format!("{}: ops/s over time", s.cell));
            chart.x_axis().set_name("seconds from the cell's start");
            chart.y_axis().set_name("ops/s");
            chart
                .add_series()
                .set_name((SERIES_SHEET, row(top + 1)?, 1))
                .set_categories((SERIES_SHEET, a, 0, b, 0))
                .set_values((SERIES_SHEET, a, 1, b, 1));
            chart.legend().set_hidden();
            sheet.insert_chart(row(top)?, 3, &chart)?;
        }
        top += (s.points.len() + 3).max(CHART_ROWS + 2);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A curve every point of which was left out (a busy machine disturbed them) has lines with no
    /// point: the workbook says so in place of a chart, where it used to fail to be written at all
    /// ("Chart must contain at least one series").
    #[test]
    fn a_curve_with_no_whole_point_is_said_not_charted() {
        let line = |system: &str| CurveLine {
            system: system.into(),
            points: Vec::new(),
            bound: Some("p99 <= 5.00 ms".into()),
            max_within_bound: None,
            overall_response_time_ns: None,
        };
        let mut workbook = Workbook::new();
        let curves = vec![("access 4m/4k qd=1".to_string(), vec![line("A"), line("B")])];
        curves_sheet(&mut workbook, &curves).expect("the sheet is written");
        let bytes = workbook.save_to_buffer().expect("the workbook is written");
        assert!(!bytes.is_empty());
    }
}
