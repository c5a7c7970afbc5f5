//! An `.xlsx` workbook with the `-R` report's blocks and the run conditions.

use rust_xlsxwriter::{Chart, ChartType, ColNum, DocProperties, Format, RowNum, Workbook, Worksheet, XlsxError};

use crate::document::{VerdictRow, FAILED_MARK, MARKS_LEGEND, PARTIAL_MARK, PARTIAL_MARK_ASCII};
use crate::iozone_excel::{report_header, throughput_preamble, ThroughputReport, THROUGHPUT_TITLE};
use crate::xlsx_curve::{Timed, CURVES_SHEET, SERIES_SHEET};
use crate::xlsx_line::{lines_sheet, SweptRows, LINES_SHEET};
use iomatrix_core::Matrix;
use iomatrix_store::CellStateKind;

/// Name of the worksheet holding the result blocks.
pub const RESULTS_SHEET: &str = "iozone";
/// Name of the worksheet holding the run conditions.
pub const CONDITIONS_SHEET: &str = "conditions";
/// Name of the report's worksheet of cells left out of its medians or taken in partial.
pub const NOT_COMPLETE_SHEET: &str = "not complete";

/// The keywords of every workbook iomatrix makes (its document properties): how a later
/// write tells a previous iomatrix workbook, which it may replace, from any other
/// ([`crate::kind::ReportKind`]).
pub const WORKBOOK_MARK: &str = "iomatrix workbook";

/// A new workbook, its document properties naming iomatrix as its author.
fn marked_workbook() -> Workbook {
    let mut workbook = Workbook::new();
    workbook.set_properties(&DocProperties::new().set_author("iomatrix").set_keywords(WORKBOOK_MARK));
    workbook
}

/// Rows between the tops of two stacked charts (a default chart is about 15
/// rows tall).
const CHART_ROW_STEP: RowNum = 16;

/// Builds a workbook and returns its bytes (a ZIP archive).
///
/// Worksheet "iozone" holds one block per matrix, like IOzone's `-R` report
/// (and like IOzone's own `-b` workbook): the title cell, a header row with
/// the record sizes (KiB, as numbers, from column B on), then one row per
/// file size (KiB, as a number, in column A). The header is
/// [`report_header`]`(sheet_blocks, records_kib)`, the one the text report
/// prints, in every block; each value sits under its own record size (IOzone
/// shifts the rows of auto mode's large files, whose small records it skips,
/// to the first column; a sheet read by its header needs them in place). A
/// blank row separates blocks. To the right of the blocks sits one line chart
/// per matrix (record size on the x axis, one series per file size).
/// Non-finite values are left blank. A partial cell's value stays a number, shown with `*`
/// after it (its number format), a failed cell is the text `failed`, and the legend follows
/// the blocks.
///
/// Worksheet "conditions" lists `conditions` as key/value rows under a
/// "condition"/"value" header (backend, direct, clients, file size vs RAM,
/// target, host...). Worksheet "not complete", where `not_complete` has lines, lists the
/// cells where clients or connections failed, with their counts.
pub fn xlsx_workbook(
    sheet_blocks: &[Matrix],
    records_kib: &[u64],
    conditions: &[(String, String)],
    not_complete: &[String],
) -> Result<Vec<u8>, XlsxError> {
    let mut workbook = marked_workbook();
    let bold = Format::new().set_bold();

    let results = workbook.add_worksheet();
    results.set_name(RESULTS_SHEET)?;
    let header = report_header(sheet_blocks, records_kib);
    let chart_col = to_col(header.len() + 2)?;
    let mut row: RowNum = 0;
    for (i, m) in sheet_blocks.iter().enumerate() {
        let at = (to_row(i)? * CHART_ROW_STEP, chart_col);
        row = write_block(results, RESULTS_SHEET, row, at, m, &header, (&bold, PARTIAL_MARK_ASCII))?;
    }
    if sheet_blocks.iter().any(Matrix::any_not_complete) {
        results.write_string(row, 0, MARKS_LEGEND)?;
    }
    not_complete_sheet(&mut workbook, not_complete, &bold)?;
    conditions_sheet(&mut workbook, conditions, &bold)?;
    workbook.save_to_buffer()
}

/// The "figures" sheet: a row per figure outside the matrices, a column per group, and a bar chart
/// per figure (rows on a line, `sweeps`, have theirs on the "lines" sheet).
fn figures_sheet(
    workbook: &mut Workbook,
    groups: &[String],
    scalars: &[ScalarRow],
    sweeps: &[SweptRows],
    bold: &Format,
) -> Result<(), XlsxError> {
    let sheet = workbook.add_worksheet();
    sheet.set_name("figures")?;
    sheet.write_string_with_format(0, 0, "figure", bold)?;
    sheet.write_string_with_format(0, 1, "unit", bold)?;
    for (j, g) in groups.iter().enumerate() {
        sheet.write_string_with_format(0, to_col(j + 2)?, g, bold)?;
    }
    for (i, s) in scalars.iter().enumerate() {
        let r = to_row(i + 1)?;
        sheet.write_string(r, 0, &s.metric)?;
        sheet.write_string(r, 1, &s.unit)?;
        for (j, v) in s.values.iter().enumerate() {
            if let Some(v) = v.filter(|v| v.is_finite()) {
                sheet.write_number(r, to_col(j + 2)?, v)?;
            }
        }
    }
    // One chart per figure, every group a bar in it: figures of different units never share
    // an axis, and N systems stand side by side.
    let (first, last) = (to_col(2)?, to_col(groups.len() + 1)?);
    let on_a_line = |i: usize| sweeps.iter().any(|w| w.levels.iter().any(|(_, row)| *row == i));
    // Charts stacked from the top, one after another (rows on a line have theirs elsewhere).
    for (n, (i, s)) in scalars.iter().enumerate().filter(|(i, _)| !on_a_line(*i)).enumerate() {
        let r = to_row(i + 1)?;
        let mut chart = Chart::new(ChartType::Bar);
        chart.title().set_name(&format!("{} ({})", s.metric, s.unit));
        chart.legend().set_hidden();
        chart
            .add_series()
            .set_name(s.metric.as_str())
            .set_categories(("figures", 0, first, 0, last))
            .set_values(("figures", r, first, r, last));
        sheet.insert_chart(to_row(n)? * CHART_ROW_STEP, to_col(groups.len() + 3)?, &chart)?;
    }
    Ok(())
}

/// The "not complete" sheet where cells were left out or taken in partial, and the "conditions"
/// sheet of every run.
fn not_complete_and_conditions(
    workbook: &mut Workbook,
    not_complete: &[(String, Vec<String>)],
    conditions: &[(String, Vec<(String, String)>)],
    bold: &Format,
) -> Result<(), XlsxError> {
    if not_complete.iter().any(|(_, lines)| !lines.is_empty()) {
        let sheet = workbook.add_worksheet();
        sheet.set_name(NOT_COMPLETE_SHEET)?;
        sheet.write_string_with_format(0, 0, "group", bold)?;
        sheet.write_string_with_format(0, 1, "cells where clients or connections failed", bold)?;
        let mut r: RowNum = 1;
        for (group, lines) in not_complete {
            for line in lines {
                sheet.write_string(r, 0, group)?;
                sheet.write_string(r, 1, line)?;
                r += 1;
            }
        }
    }
    let sheet = workbook.add_worksheet();
    sheet.set_name(CONDITIONS_SHEET)?;
    let mut r: RowNum = 0;
    for (run, pairs) in conditions {
        sheet.write_string_with_format(r, 0, run, bold)?;
        r += 1;
        for (key, value) in pairs {
            sheet.write_string(r, 0, key)?;
            sheet.write_string(r, 1, value)?;
            r += 1;
        }
        r += 1;
    }
    Ok(())
}

/// Worksheet "not complete" of IOzone's workbooks: a line per cell where clients or
/// connections failed; none when every cell is whole.
fn not_complete_sheet(workbook: &mut Workbook, lines: &[String], bold: &Format) -> Result<(), XlsxError> {
    if lines.is_empty() {
        return Ok(());
    }
    let sheet = workbook.add_worksheet();
    sheet.set_name(NOT_COMPLETE_SHEET)?;
    sheet.write_string_with_format(0, 0, "cells where clients or connections failed", bold)?;
    for (k, line) in lines.iter().enumerate() {
        sheet.write_string(to_row(k + 1)?, 0, line)?;
    }
    Ok(())
}

/// A cell's value as a workbook holds it: a number (with `mark` after it, by its number
/// format, where the cell is partial), or the text `failed`.
fn write_value(
    sheet: &mut Worksheet,
    (row, col): (RowNum, ColNum),
    value: f64,
    state: CellStateKind,
    mark: &str,
) -> Result<(), XlsxError> {
    match state {
        CellStateKind::Failed => {
            sheet.write_string(row, col, FAILED_MARK)?;
        }
        _ if !value.is_finite() => {}
        CellStateKind::Partial | CellStateKind::Disturbed => {
            let mark = if state == CellStateKind::Disturbed { crate::document::DISTURBED_MARK_ASCII } else { mark };
            sheet.write_number_with_format(
                row,
                col,
                value,
                &Format::new().set_num_format(format!("General\"{mark}\"")),
            )?;
        }
        CellStateKind::Complete => {
            sheet.write_number(row, col, value)?;
        }
    }
    Ok(())
}

/// The workbook of IOzone's `-t` mode, as [`crate::throughput_report`]
/// prints it: worksheet "iozone" holds one block per report (the preamble's
/// two lines, the title, the record size and the unit, each in column A, then
/// a row per test: its name in column A, its KB/s in column B) with a bar
/// chart beside it; worksheet "conditions" as in [`xlsx_workbook`].
pub fn throughput_workbook(
    reports: &[ThroughputReport],
    conditions: &[(String, String)],
    not_complete: &[String],
) -> Result<Vec<u8>, XlsxError> {
    let mut workbook = marked_workbook();
    let bold = Format::new().set_bold();
    let sheet = workbook.add_worksheet();
    sheet.set_name(RESULTS_SHEET)?;
    let mut row: RowNum = 0;
    for r in reports {
        for line in throughput_preamble(r).lines() {
            sheet.write_string(row, 0, line.trim())?;
            row += 1;
        }
        sheet.write_string_with_format(row, 0, THROUGHPUT_TITLE, &bold)?;
        sheet.write_string(row + 1, 0, format!("Record size = {} kBytes", r.record_kib))?;
        sheet.write_string(row + 2, 0, "Output is in kBytes/sec")?;
        let first = row + 3;
        for (k, (name, v, state)) in r.rows.iter().enumerate() {
            let at = first + to_row(k)?;
            sheet.write_string_with_format(at, 0, name, &bold)?;
            write_value(sheet, (at, 1), *v, *state, PARTIAL_MARK_ASCII)?;
        }
        if !r.rows.is_empty() {
            let last = first + to_row(r.rows.len() - 1)?;
            let mut chart = Chart::new(ChartType::Bar);
            chart.title().set_name(&format!(
                "{} clients, {} kB file, {} kB records (kB/s)",
                r.clients, r.file_kib, r.record_kib
            ));
            chart.add_series().set_name("KB/s").set_categories((RESULTS_SHEET, first, 0, last, 0)).set_values((
                RESULTS_SHEET,
                first,
                1,
                last,
                1,
            ));
            sheet.insert_chart(row, 3, &chart)?;
        }
        // The block, one blank row, and room for the chart beside it.
        row = (first + to_row(r.rows.len())? + 1).max(row + CHART_ROW_STEP);
    }
    if reports.iter().flat_map(|r| &r.rows).any(|(_, _, state)| *state != CellStateKind::Complete) {
        sheet.write_string(row, 0, MARKS_LEGEND)?;
    }
    not_complete_sheet(&mut workbook, not_complete, &bold)?;
    conditions_sheet(&mut workbook, conditions, &bold)?;
    workbook.save_to_buffer()
}

/// Worksheet "conditions": `conditions` as key/value rows under a
/// "condition"/"value" header.
fn conditions_sheet(workbook: &mut Workbook, conditions: &[(String, String)], bold: &Format) -> Result<(), XlsxError> {
    let sheet = workbook.add_worksheet();
    sheet.set_name(CONDITIONS_SHEET)?;
    sheet.write_string_with_format(0, 0, "condition", bold)?;
    sheet.write_string_with_format(0, 1, "value", bold)?;
    for (k, (key, value)) in conditions.iter().enumerate() {
        let r = to_row(k + 1)?;
        sheet.write_string(r, 0, key)?;
        sheet.write_string(r, 1, value)?;
    }
    Ok(())
}

/// Writes `m` as a block at `row` of `sheet` (named `sheet_name`): the title,
/// `header` (record sizes) as a row, a row per file size with each value
/// under its record size (a partial one marked with `partial_mark`, a failed one `failed`); and
/// a line chart of it (a series per file size) at (`chart_row`, `chart_col`). Returns the row
/// after the block and one blank row.
fn write_block(
    sheet: &mut Worksheet,
    sheet_name: &str,
    row: RowNum,
    (chart_row, chart_col): (RowNum, ColNum),
    m: &Matrix,
    header: &[u64],
    (bold, partial_mark): (&Format, &str),
) -> Result<RowNum, XlsxError> {
    let files = m.file_sizes();
    sheet.write_string_with_format(row, 0, &m.title, bold)?;
    let header_row = row + 1;
    for (j, r) in header.iter().enumerate() {
        sheet.write_number_with_format(header_row, to_col(j + 1)?, *r as f64, bold)?;
    }
    let first_data_row = header_row + 1;
    for (k, f) in files.iter().enumerate() {
        let r_idx = first_data_row + to_row(k)?;
        sheet.write_number_with_format(r_idx, 0, *f as f64, bold)?;
        for (j, r) in header.iter().enumerate() {
            if let Some(c) = m.cell(*f, *r) {
                write_value(sheet, (r_idx, to_col(j + 1)?), c.value, c.state, partial_mark)?;
            }
        }
    }
    if !header.is_empty() && !files.is_empty() {
        let last_col = to_col(header.len())?;
        let mut chart = Chart::new(ChartType::Line);
        chart.title().set_name(&format!("{} ({})", m.title, m.unit));
        chart.x_axis().set_name("record size (kB)");
        chart.y_axis().set_name(&m.unit);
        for (k, f) in files.iter().enumerate() {
            let data_row = first_data_row + to_row(k)?;
            chart
                .add_series()
                .set_name(&format!("{f} kB"))
                .set_categories((sheet_name, header_row, 1, header_row, last_col))
                .set_values((sheet_name, data_row, 1, data_row, last_col));
        }
        sheet.insert_chart(chart_row, chart_col, &chart)?;
    }
    // Title, header, rows, then one blank row.
    Ok(first_data_row + to_row(files.len())? + 1)
}

/// A sheet name Excel takes for `test`: no `[]:*?/\`, no quote at either
/// end, at most 31 characters, not empty, and not one of `used` (ignoring
/// case; a number is added). The name is added to `used`.
fn sheet_name(test: &str, used: &mut Vec<String>) -> String {
    let clean: String = test.chars().filter(|c| !"[]:*?/\\".contains(*c)).collect();
    let clean = clean.trim_matches('\'').trim();
    let base: String = if clean.is_empty() { "test".into() } else { clean.chars().take(31).collect() };
    let taken = |n: &str, used: &[String]| used.iter().any(|u| u.eq_ignore_ascii_case(n));
    let mut name = base.clone();
    let mut k = 2;
    while taken(&name, used) {
        let suffix = format!(" ({k})");
        name = base.chars().take(31 - suffix.len()).collect::<String>() + &suffix;
        k += 1;
    }
    used.push(name.clone());
    name
}

pub(crate) fn to_row(n: usize) -> Result<RowNum, XlsxError> {
    RowNum::try_from(n).map_err(|_| XlsxError::RowColumnLimitError)
}

pub(crate) fn to_col(n: usize) -> Result<ColNum, XlsxError> {
    ColNum::try_from(n).map_err(|_| XlsxError::RowColumnLimitError)
}

/// One figure of a scalar suite across the report's groups.
pub struct ScalarRow {
    /// The figure's name.
    pub metric: String,
    /// The figure's unit.
    pub unit: String,
    /// One value per group, in the groups' order (None where a group lacks it).
    pub values: Vec<Option<f64>>,
}

/// Name of the report's worksheet of every compared figure with its verdict.
pub const VERDICTS_SHEET: &str = "verdicts";

/// The report's workbook: a sheet per matrix test, each with one block per
/// group (as [`xlsx_workbook`] lays them out) and a native line chart beside
/// each block; a "figures" sheet for scalar suites (a row per figure, a
/// column per group) with a bar chart per figure, every group in it; a "verdicts" sheet where
/// groups were compared (a row per compared figure: the comparison, the figure, A, B, the change,
/// the verdict and its p-value); a "not complete" sheet where cells
/// were left out of the medians or taken in partial (`not_complete`: per
/// group, its sentences); a "conditions" sheet per run. `tests` holds (test
/// name, one matrix per group); sheet names are shortened to Excel's 31
/// characters. The rows `sweeps` name (a swept queue depth or size) get no bars: a "lines"
/// sheet charts each sweep as lines, a line per group ([`crate::xlsx_line`]).
pub fn report_workbook(
    tests: &[(String, Vec<Matrix>)],
    groups: &[String],
    scalars: &[ScalarRow],
    sweeps: &[SweptRows],
    verdicts: &[VerdictRow],
    not_complete: &[(String, Vec<String>)],
    conditions: &[(String, Vec<(String, String)>)],
) -> Result<Vec<u8>, XlsxError> {
    let parts = ReportBook { tests, groups, scalars, sweeps, verdicts, not_complete, conditions };
    report_book(&parts, &Timed::default())
}

/// The parts of the report's workbook that [`report_workbook`] takes, as one.
pub struct ReportBook<'a> {
    /// (test name, one matrix per group).
    pub tests: &'a [(String, Vec<Matrix>)],
    /// The groups' names.
    pub groups: &'a [String],
    /// The figures sheet's rows.
    pub scalars: &'a [ScalarRow],
    /// The sweeps among `scalars`, charted as lines.
    pub sweeps: &'a [SweptRows],
    /// Every compared figure with its verdict.
    pub verdicts: &'a [VerdictRow],
    /// Per group, its sentences of what is not complete.
    pub not_complete: &'a [(String, Vec<String>)],
    /// Per run, its conditions.
    pub conditions: &'a [(String, Vec<(String, String)>)],
}

/// [`report_workbook`] with the report's curves and figures over time ([`Timed`]): a "curves"
/// sheet with a scatter chart per curve, every system on it, and an "over time" sheet with a
/// chart per cell that has figures over time ([`crate::xlsx_curve`]).
pub fn report_book(parts: &ReportBook, timed: &Timed) -> Result<Vec<u8>, XlsxError> {
    let ReportBook { tests, groups, scalars, sweeps, verdicts, not_complete, conditions } = *parts;
    let mut workbook = marked_workbook();
    let bold = Format::new().set_bold();
    // "figures", "lines", "verdicts", "not complete" and "conditions" come later; Excel compares
    // sheet names without case.
    let mut used: Vec<String> = vec![
        "figures".into(),
        LINES_SHEET.into(),
        CURVES_SHEET.into(),
        SERIES_SHEET.into(),
        VERDICTS_SHEET.into(),
        NOT_COMPLETE_SHEET.into(),
        CONDITIONS_SHEET.into(),
    ];
    for (test, matrices) in tests {
        let name = sheet_name(test, &mut used);
        let sheet = workbook.add_worksheet();
        sheet.set_name(&name)?;
        let widest = matrices.iter().map(|m| m.record_sizes().len()).max().unwrap_or(0);
        let chart_col = to_col(widest + 2)?;
        let mut row: RowNum = 0;
        for (i, m) in matrices.iter().enumerate() {
            // Blocks no closer than the charts beside them, so each chart sits by its block.
            let chart_row = row.max(to_row(i)? * CHART_ROW_STEP);
            let at = (chart_row, chart_col);
            row = write_block(sheet, &name, chart_row, at, m, &m.record_sizes(), (&bold, PARTIAL_MARK))?;
        }
    }
    if !scalars.is_empty() {
        figures_sheet(&mut workbook, groups, scalars, sweeps, &bold)?;
    }
    if !sweeps.is_empty() {
        lines_sheet(&mut workbook, groups, scalars, sweeps)?;
    }
    crate::xlsx_curve::curves_sheet(&mut workbook, &timed.curves)?;
    crate::xlsx_curve::series_sheet(&mut workbook, timed)?;
    verdicts_sheet(&mut workbook, verdicts, &bold)?;
    not_complete_and_conditions(&mut workbook, not_complete, conditions, &bold)?;
    workbook.save_to_buffer()
}

/// Worksheet "verdicts": a row per compared figure under a header; none where nothing was compared.
fn verdicts_sheet(workbook: &mut Workbook, rows: &[VerdictRow], bold: &Format) -> Result<(), XlsxError> {
    if rows.is_empty() {
        return Ok(());
    }
    let sheet = workbook.add_worksheet();
    sheet.set_name(VERDICTS_SHEET)?;
    let header = ["comparison", "figure", "unit", "A", "B", "change %", "verdict", "p-value"];
    for (j, title) in header.iter().enumerate() {
        sheet.write_string_with_format(0, to_col(j)?, *title, bold)?;
    }
    for (i, v) in rows.iter().enumerate() {
        let r = to_row(i + 1)?;
        sheet.write_string(r, 0, &v.comparison)?;
        sheet.write_string(r, 1, &v.figure)?;
        sheet.write_string(r, 2, &v.unit)?;
        for (col, value) in [(3, v.a), (4, v.b), (5, v.change_pct), (7, v.p_value)] {
            if let Some(value) = value.filter(|x| x.is_finite()) {
                sheet.write_number(r, col, value)?;
            }
        }
        sheet.write_string(r, 6, &v.words)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sheet_names_are_ones_excel_takes() {
        let mut used = vec!["figures".to_string(), NOT_COMPLETE_SHEET.to_string(), CONDITIONS_SHEET.to_string()];
        used.push(VERDICTS_SHEET.to_string());
        assert_eq!(sheet_name("write", &mut used), "write");
        assert_eq!(sheet_name("Write", &mut used), "Write (2)");
        assert_eq!(sheet_name("figures", &mut used), "figures (2)");
        assert_eq!(sheet_name("[*?]", &mut used), "test");
        assert_eq!(sheet_name("'a/b'", &mut used), "ab");
        let long = "x".repeat(40);
        assert_eq!(sheet_name(&long, &mut used), "x".repeat(31));
        assert_eq!(sheet_name(&long, &mut used), format!("{} (2)", "x".repeat(27)));
        // A workbook with such tests builds.
        let m = |t: &str| Matrix { title: t.into(), unit: "KB/s".into(), cells: Vec::new() };
        let tests: Vec<(String, Vec<Matrix>)> =
            ["read", "READ", "conditions", ""].iter().map(|t| (t.to_string(), vec![m(t)])).collect();
        let scalars = [ScalarRow { metric: "seeks".into(), unit: "seeks/s".into(), values: vec![Some(1.0)] }];
        let not_complete = [("a".to_string(), vec!["left out of the medians: seeks in run #2".to_string()])];
        assert!(report_workbook(&tests, &["a".into()], &scalars, &[], &[], &not_complete, &[]).is_ok());
    }
}
