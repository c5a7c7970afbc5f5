//! The report workbook's swept parameters as native line charts: a "lines" sheet with a block
//! per swept parameter (its values down, a column per group) and a line chart beside each, a
//! line per group over the values in their order; a value a group lacks is a blank cell, which
//! the chart leaves as a gap, never a zero.

use crate::svg_line::swept_lines;
use crate::xlsx::{to_col as col, to_row as row, ScalarRow};
use iomatrix_analysis::CellKey;
use rust_xlsxwriter::{Chart, ChartMarker, ChartType, Format, Workbook, XlsxError};

/// Name of the worksheet of swept parameters' lines.
pub const LINES_SHEET: &str = "lines";

/// One line chart of the workbook: rows of the figures sheet that differ only in a swept
/// parameter, by its values in order.
#[derive(Debug, Clone, PartialEq)]
pub struct SweptRows {
    /// The chart's title: "access 1m/4k read=100% random=100% by queue depth".
    pub title: String,
    /// The x axis's label: "queue depth".
    pub x_label: String,
    /// Each value of the parameter as sweep names it ("16", "64k") and the index of its row in
    /// the report's scalar rows, in the values' order.
    pub levels: Vec<(String, usize)>,
}

/// The sweeps among the report's scalar rows: `keys` are the cells of the rows from `first_row`
/// on, in their order; each swept queue depth, record or file size among them is one line chart.
pub fn swept_rows(keys: &[&CellKey], first_row: usize) -> Vec<SweptRows> {
    swept_lines(keys.iter().copied())
        .into_iter()
        .map(|line| SweptRows {
            title: format!("{} by {}", line.rest.describe(), line.param.what),
            x_label: line.param.what.to_string(),
            levels: line
                .levels
                .iter()
                .filter_map(|(level, key)| {
                    let at = keys.iter().position(|k| *k == key)?;
                    Some((line.param.level_name(*level), first_row + at))
                })
                .collect(),
        })
        .collect()
}

/// Rows between the tops of two charts (a default chart is about 15 rows tall).
const CHART_ROWS: usize = 16;

/// Writes the lines sheet: per sweep, its title, a header (the parameter, then `groups`), a row
/// per value with each group's figure from `scalars`, and a line chart of it.
pub(crate) fn lines_sheet(
    workbook: &mut Workbook,
    groups: &[String],
    scalars: &[ScalarRow],
    sweeps: &[SweptRows],
) -> Result<(), XlsxError> {
    let bold = Format::new().set_bold();
    let sheet = workbook.add_worksheet();
    sheet.set_name(LINES_SHEET)?;
    let mut top = 0usize;
    for sweep in sweeps {
        let unit = sweep.levels.first().and_then(|(_, i)| scalars.get(*i)).map_or("", |s| s.unit.as_str());
        sheet.write_string_with_format(row(top)?, 0, format!("{} ({unit})", sweep.title), &bold)?;
        sheet.write_string_with_format(row(top + 1)?, 0, &sweep.x_label, &bold)?;
        for (j, g) in groups.iter().enumerate() {
            sheet.write_string_with_format(row(top + 1)?, col(j + 1)?, g, &bold)?;
        }
        for (k, (level, index)) in sweep.levels.iter().enumerate() {
            let r = row(top + 2 + k)?;
            sheet.write_string(r, 0, level)?;
            let values = scalars.get(*index).map_or(&[][..], |s| s.values.as_slice());
            for (j, v) in values.iter().enumerate() {
                if let Some(v) = v.filter(|v| v.is_finite()) {
                    sheet.write_number(r, col(j + 1)?, v)?;
                }
            }
        }
        let (first, last) = (row(top + 2)?, row(top + 1 + sweep.levels.len())?);
        let mut chart = Chart::new(ChartType::Line);
        chart.title().set_name(&sweep.title);
        chart.x_axis().set_name(&sweep.x_label);
        chart.y_axis().set_name(unit);
        for j in 0..groups.len() {
            let c = col(j + 1)?;
            chart
                .add_series()
                .set_name((LINES_SHEET, row(top + 1)?, c))
                .set_categories((LINES_SHEET, first, 0, last, 0))
                .set_values((LINES_SHEET, first, c, last, c))
                .set_marker(ChartMarker::new().set_automatic());
        }
        sheet.insert_chart(row(top)?, col(groups.len() + 2)?, &chart)?;
        top += (sweep.levels.len() + 3).max(CHART_ROWS);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xlsx::report_workbook;
    use iomatrix_core::IoMix;

    fn access(record: u64, qd: u64) -> CellKey {
        let mix = IoMix { read_percent: 100, random_percent: 0, queue_depth: qd, load: None };
        CellKey { test: "access".into(), file_size: Some(1 << 20), record_size: Some(record), variant: mix.name() }
    }

    #[test]
    fn a_swept_depth_is_one_sweep_of_its_rows_in_the_depths_order() {
        let mut keys = [access(4096, 16), access(4096, 1), access(4096, 32), access(4096, 4)];
        keys.sort();
        let refs: Vec<&CellKey> = keys.iter().collect();
        let sweeps = swept_rows(&refs, 2);
        assert_eq!(sweeps.len(), 1, "{sweeps:?}");
        let levels: Vec<(&str, usize)> = sweeps[0].levels.iter().map(|(l, r)| (l.as_str(), *r)).collect();
        assert_eq!(levels, [("1", 2), ("4", 3), ("16", 4), ("32", 5)], "rows after the first two, by depth");
        assert_eq!(sweeps[0].title, "access 1m/4k read=100% random=0% by queue depth");
        assert!(swept_rows(&refs[..1], 0).is_empty(), "one depth is no sweep");
    }

    #[test]
    fn the_swept_rows_are_one_line_chart_and_no_bars() {
        let keys: Vec<CellKey> = [1, 4, 16, 32].map(|qd| access(4096, qd)).to_vec();
        let scalars: Vec<ScalarRow> = keys
            .iter()
            .map(|k| ScalarRow { metric: k.describe(), unit: "KB/s".into(), values: vec![Some(1.0), None] })
            .collect();
        let sweeps = swept_rows(&keys.iter().collect::<Vec<_>>(), 0);
        let groups = ["a".to_string(), "b".to_string()];
        let book = report_workbook(&[], &groups, &scalars, &sweeps, &[], &[], &[]).unwrap();
        // A zip's entry names are stored as they are: one chart, the lines'.
        let named = |name: &[u8]| book.windows(name.len()).filter(|w| *w == name).count();
        assert!(named(b"xl/charts/chart1.xml") > 0 && named(b"xl/charts/chart2.xml") == 0, "one chart, no bars");
        let bars = report_workbook(&[], &groups, &scalars, &[], &[], &[], &[]).unwrap();
        assert!(bars.windows(20).any(|w| w == b"xl/charts/chart4.xml"), "without sweeps, a bar chart per row");
    }
}
