//! IOzone's `-b NAME.xls`: the old binary Excel format IOzone itself writes (BIFF2, a
//! worksheet of Excel 2.1), which Excel, LibreOffice and xlrd open as .xls without a
//! warning, where .xlsx content under an .xls name is refused (openpyxl) or warned
//! about (Excel).
//!
//! A BIFF2 file is a run of records, each a little-endian `u16` record number, a `u16`
//! length and that many bytes: BOF (version 2, a worksheet), CODEPAGE (Windows Latin 1), then a LABEL or a NUMBER per
//! cell (row, column, three bytes of cell attributes left at zero, then an 8-bit string
//! with its length byte, or an IEEE double), then EOF. One worksheet per file, at most
//! [`MAX_ROWS`] rows and [`MAX_COLUMNS`] columns, strings of at most 255 bytes in one
//! 8-bit code page (anything outside Latin-1 is written as `?`).
//!
//! The sheet holds what the `-R` text holds ([`crate::iozone_excel`]): per test a title,
//! the header of record sizes and a row per file size (numbers; a cell not complete is
//! text with its mark, as in the text), or the throughput report's lines; then the legend
//! of marks, the cells that were not complete and the run's conditions, and last
//! [`WORKBOOK_MARK`], by which the guarded writer knows a workbook it may replace.

use crate::document::{marked, MARKS_LEGEND};
use crate::iozone_excel::{report_header, throughput_preamble, ThroughputReport, THROUGHPUT_TITLE};
use iomatrix_core::Matrix;
use iomatrix_store::CellStateKind;

/// Rows of an Excel 2.1 worksheet.
pub const MAX_ROWS: usize = 16384;
/// Columns of an Excel 2.1 worksheet.
pub const MAX_COLUMNS: usize = 256;

/// The text of the last cell of every .xls workbook iomatrix writes: the mark of its kind.
pub const WORKBOOK_MARK: &str = "written by iomatrix (iomatrix workbook)";

const BOF: u16 = 0x0009;
const EOF: u16 = 0x000A;
const NUMBER: u16 = 0x0003;
const LABEL: u16 = 0x0004;
const CODEPAGE: u16 = 0x0042;
/// CODEPAGE's Windows Latin 1 (1252): the 8-bit strings' code page, which readers would
/// otherwise guess.
const WINDOWS_LATIN1: u16 = 1252;
/// BOF's version field: BIFF2.
const BIFF2: u16 = 0x0002;
/// BOF's document type: a worksheet.
const WORKSHEET: u16 = 0x0010;

/// The first bytes of every BIFF2 worksheet iomatrix writes (its BOF record).
pub const SIGNATURE: [u8; 8] = [0x09, 0x00, 0x04, 0x00, 0x02, 0x00, 0x10, 0x00];

/// A report that does not fit one Excel 2.1 worksheet.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum XlsError {
    #[error(
        "the workbook needs {0} rows; an .xls worksheet (Excel 2.1, as IOzone writes) holds {MAX_ROWS}: \
         name the file .xlsx (-b out.xlsx)"
    )]
    /// The matrices need more rows than an .xls worksheet holds (the count needed).
    TooManyRows(usize),
    #[error(
        "the workbook needs {0} columns; an .xls worksheet (Excel 2.1, as IOzone writes) holds {MAX_COLUMNS}: \
         name the file .xlsx (-b out.xlsx)"
    )]
    /// The matrices need more columns than an .xls worksheet holds (the count needed).
    TooManyColumns(usize),
}

/// One worksheet being written, record by record.
struct Sheet {
    bytes: Vec<u8>,
}

impl Sheet {
    fn new() -> Sheet {
        let mut sheet = Sheet { bytes: Vec::new() };
        sheet.record(BOF, &[BIFF2.to_le_bytes(), WORKSHEET.to_le_bytes()].concat());
        sheet.record(CODEPAGE, &WINDOWS_LATIN1.to_le_bytes());
        sheet
    }

    fn record(&mut self, number: u16, body: &[u8]) {
        let length = u16::try_from(body.len()).expect("a BIFF2 record's body is at most 271 bytes");
        self.bytes.extend_from_slice(&number.to_le_bytes());
        self.bytes.extend_from_slice(&length.to_le_bytes());
        self.bytes.extend_from_slice(body);
    }

    /// Row and column, then the three attribute bytes (no format, no font, unlocked: zero).
    fn place(row: usize, column: usize) -> Result<Vec<u8>, XlsError> {
        if row >= MAX_ROWS {
            return Err(XlsError::TooManyRows(row + 1));
        }
        if column >= MAX_COLUMNS {
            return Err(XlsError::TooManyColumns(column + 1));
        }
        let mut body = Vec::with_capacity(16);
        body.extend_from_slice(&(row as u16).to_le_bytes());
        body.extend_from_slice(&(column as u16).to_le_bytes());
        body.extend_from_slice(&[0, 0, 0]);
        Ok(body)
    }

    fn number(&mut self, row: usize, column: usize, value: f64) -> Result<(), XlsError> {
        let mut body = Self::place(row, column)?;
        body.extend_from_slice(&value.to_le_bytes());
        self.record(NUMBER, &body);
        Ok(())
    }

    fn label(&mut self, row: usize, column: usize, text: &str) -> Result<(), XlsError> {
        let mut body = Self::place(row, column)?;
        // Latin 1 but for the C1 controls, where Windows 1252 has other characters.
        let latin1: Vec<u8> = text
            .chars()
            .map(|c| u8::try_from(u32::from(c)).ok().filter(|b| !(0x80..0xA0).contains(b)).unwrap_or(b'?'))
            .take(255)
            .collect();
        body.push(latin1.len() as u8);
        body.extend_from_slice(&latin1);
        self.record(LABEL, &body);
        Ok(())
    }

    /// A figure: a number when whole, else its marked text ([`marked`]), as the `-R` text has it.
    fn figure(&mut self, row: usize, column: usize, value: f64, state: CellStateKind) -> Result<(), XlsError> {
        match state {
            CellStateKind::Complete => self.number(row, column, value),
            _ => self.label(row, column, &marked(state, || format!("{value:.0}"))),
        }
    }

    /// The legend (when a figure is marked), the cells not complete, the conditions and the
    /// mark, from `row` on; then EOF.
    fn finish(
        mut self,
        mut row: usize,
        any_marked: bool,
        conditions: &[(String, String)],
        not_complete: &[String],
    ) -> Result<Vec<u8>, XlsError> {
        if any_marked {
            self.label(row, 0, MARKS_LEGEND)?;
            row += 2;
        }
        if !not_complete.is_empty() {
            self.label(row, 0, "cells where clients or connections failed")?;
            for line in not_complete {
                row += 1;
                self.label(row, 0, line)?;
            }
            row += 2;
        }
        if !conditions.is_empty() {
            self.label(row, 0, "conditions")?;
            for (key, value) in conditions {
                row += 1;
                self.label(row, 0, key)?;
                self.label(row, 1, value)?;
            }
            row += 2;
        }
        self.label(row, 0, WORKBOOK_MARK)?;
        self.record(EOF, &[]);
        Ok(self.bytes)
    }
}

/// The matrices as IOzone's `-b` .xls lays them out: per test, its title, the header of
/// record sizes ([`report_header`] of `records_kib`) and a row per file size, the file size
/// in the first column and each record size's figure under its header; a blank row between
/// tests.
pub fn xls_workbook(
    matrices: &[Matrix],
    records_kib: &[u64],
    conditions: &[(String, String)],
    not_complete: &[String],
) -> Result<Vec<u8>, XlsError> {
    let header = report_header(matrices, records_kib);
    let mut sheet = Sheet::new();
    let mut row = 0;
    for m in matrices {
        sheet.label(row, 0, &m.title)?;
        row += 1;
        for (k, r) in header.iter().enumerate() {
            sheet.number(row, k + 1, *r as f64)?;
        }
        row += 1;
        for f in m.file_sizes() {
            sheet.number(row, 0, f as f64)?;
            for (k, r) in header.iter().enumerate() {
                if let Some(c) = m.cell(f, *r) {
                    sheet.figure(row, k + 1, c.value, c.state)?;
                }
            }
            row += 1;
        }
        row += 1;
    }
    sheet.finish(row, matrices.iter().any(Matrix::any_not_complete), conditions, not_complete)
}

/// IOzone's `-t` reports in an .xls: per report, its preamble, title, record size and unit,
/// then a row per test, its name and its KB/s.
pub fn xls_throughput_workbook(
    reports: &[ThroughputReport],
    conditions: &[(String, String)],
    not_complete: &[String],
) -> Result<Vec<u8>, XlsError> {
    let mut sheet = Sheet::new();
    let mut row = 0;
    for r in reports {
        for line in throughput_preamble(r).lines() {
            sheet.label(row, 0, line.trim())?;
            row += 1;
        }
        sheet.label(row, 0, THROUGHPUT_TITLE)?;
        sheet.label(row + 1, 0, &format!("Record size = {} kBytes", r.record_kib))?;
        sheet.label(row + 2, 0, "Output is in kBytes/sec")?;
        row += 3;
        for (name, value, state) in &r.rows {
            sheet.label(row, 0, name)?;
            sheet.figure(row, 1, *value, *state)?;
            row += 1;
        }
        row += 1;
    }
    let any_marked = reports.iter().flat_map(|r| &r.rows).any(|(_, _, s)| *s != CellStateKind::Complete);
    sheet.finish(row, any_marked, conditions, not_complete)
}

/// The guarded writer's kind of an .xls worksheet iomatrix wrote: one it may replace.
pub struct XlsKind;

/// Largest .xls read to find its mark: an Excel 2.1 sheet of 16384 rows by 256 columns of
/// numbers (19 bytes each) is under 80 MiB.
const MAX_XLS: u64 = 96 << 20;

impl iomatrix_guard::Kind for XlsKind {
    fn describe(&self) -> String {
        "an iomatrix .xls worksheet".to_string()
    }

    fn recognises(&self, existing: &mut std::fs::File) -> bool {
        use std::io::Read;
        let mut bytes = Vec::new();
        existing.take(MAX_XLS).read_to_end(&mut bytes).is_ok() && is_iomatrix_xls(&bytes)
    }
}

/// Whether `bytes` (a file's start, or all of it) is an .xls worksheet iomatrix wrote: BIFF2's
/// BOF first and [`WORKBOOK_MARK`] in its last label before EOF.
pub fn is_iomatrix_xls(bytes: &[u8]) -> bool {
    if !bytes.starts_with(&SIGNATURE) {
        return false;
    }
    let mut at = 0;
    let mut last_label: Option<&[u8]> = None;
    while at + 4 <= bytes.len() {
        let number = u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        let length = u16::from_le_bytes([bytes[at + 2], bytes[at + 3]]) as usize;
        let Some(body) = bytes.get(at + 4..at + 4 + length) else { return false };
        match number {
            LABEL if body.len() >= 8 => last_label = body.get(8..8 + body[7] as usize),
            EOF => return last_label == Some(WORKBOOK_MARK.as_bytes()),
            _ => {}
        }
        at += 4 + length;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_core::MatrixCell;

    /// The records of a sheet: (record number, body).
    fn records(bytes: &[u8]) -> Vec<(u16, Vec<u8>)> {
        let mut out = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            let number = u16::from_le_bytes([bytes[at], bytes[at + 1]]);
            let length = u16::from_le_bytes([bytes[at + 2], bytes[at + 3]]) as usize;
            out.push((number, bytes[at + 4..at + 4 + length].to_vec()));
            at += 4 + length;
        }
        assert_eq!(at, bytes.len(), "the last record ends the file");
        out
    }

    /// The cells of a sheet as (row, column, text): numbers written with `{}`.
    fn cells(bytes: &[u8]) -> Vec<(u16, u16, String)> {
        records(bytes)
            .into_iter()
            .filter(|(number, _)| [NUMBER, LABEL].contains(number))
            .filter_map(|(number, body)| {
                let row = u16::from_le_bytes([body[0], body[1]]);
                let column = u16::from_le_bytes([body[2], body[3]]);
                match number {
                    NUMBER => Some((row, column, f64::from_le_bytes(body[7..15].try_into().unwrap()).to_string())),
                    LABEL => Some((row, column, String::from_utf8_lossy(&body[8..8 + body[7] as usize]).into_owned())),
                    _ => None,
                }
            })
            .collect()
    }

    fn matrix() -> Matrix {
        Matrix {
            title: "Writer report".into(),
            unit: "KB/s".into(),
            cells: vec![
                MatrixCell::new(64, 4, 524486.6),
                MatrixCell::new(64, 8, 1638743.0),
                MatrixCell::new(128, 8, 7.25),
            ],
        }
    }

    #[test]
    fn a_sheet_is_bof_cells_and_eof_in_biff2_records() {
        let bytes = xls_workbook(&[matrix()], &[4, 8], &[], &[]).unwrap();
        assert_eq!(bytes[..8], SIGNATURE);
        let all = records(&bytes);
        assert_eq!(all[0], (BOF, vec![2, 0, 0x10, 0]));
        assert_eq!(all[1], (CODEPAGE, 1252u16.to_le_bytes().to_vec()));
        assert_eq!(all.last().unwrap(), &(EOF, vec![]));
        for (number, body) in &all {
            match *number {
                NUMBER => assert_eq!(body.len(), 15, "row, column, 3 attribute bytes, a double"),
                LABEL => assert_eq!(body.len(), 8 + body[7] as usize, "row, column, attributes, length, text"),
                BOF | EOF | CODEPAGE => {}
                other => panic!("unexpected record {other:#x}"),
            }
        }
    }

    #[test]
    fn the_layout_is_iozones_title_header_and_a_row_per_file_size() {
        let bytes = xls_workbook(&[matrix()], &[4, 8], &[("cache".into(), "page cache in use".into())], &[]).unwrap();
        let got = cells(&bytes);
        let at = |row: u16, column: u16| got.iter().find(|c| c.0 == row && c.1 == column).map(|c| c.2.as_str());
        assert_eq!(at(0, 0), Some("Writer report"));
        assert_eq!((at(1, 1), at(1, 2)), (Some("4"), Some("8")));
        assert_eq!((at(2, 0), at(2, 1), at(2, 2)), (Some("64"), Some("524486.6"), Some("1638743")));
        assert_eq!((at(3, 0), at(3, 1), at(3, 2)), (Some("128"), None, Some("7.25")));
        assert_eq!((at(5, 0), at(6, 0), at(6, 1)), (Some("conditions"), Some("cache"), Some("page cache in use")));
        assert_eq!(got.last().unwrap().2, WORKBOOK_MARK);
    }

    #[test]
    fn a_cell_not_complete_is_its_marked_text_with_the_legend() {
        let mut m = matrix();
        m.cells[1].state = CellStateKind::Partial;
        m.cells[2].state = CellStateKind::Failed;
        let got = cells(&xls_workbook(&[m], &[], &[], &["64k/8k: client 1 failed".into()]).unwrap());
        let texts: Vec<&str> = got.iter().map(|c| c.2.as_str()).collect();
        assert!(texts.contains(&"1638743*") && texts.contains(&"failed"), "{texts:?}");
        assert!(texts.contains(&MARKS_LEGEND) && texts.contains(&"64k/8k: client 1 failed"), "{texts:?}");
    }

    #[test]
    fn text_outside_latin1_and_past_255_bytes_is_kept_to_what_biff2_holds() {
        let long = "é".repeat(300) + "→";
        let bytes = xls_workbook(&[], &[], &[("label".into(), long)], &[]).unwrap();
        let label = cells(&bytes).into_iter().find(|c| c.0 == 1 && c.1 == 1).unwrap();
        assert_eq!(label.2.chars().count(), 255);
        let bytes = xls_workbook(&[], &[], &[("arrow".into(), "a→b".into())], &[]).unwrap();
        assert!(cells(&bytes).iter().any(|c| c.2 == "a?b"));
    }

    #[test]
    fn a_report_past_the_sheets_rows_is_refused_with_the_way_out() {
        let lines: Vec<String> = (0..MAX_ROWS).map(|k| format!("cell {k}")).collect();
        let err = xls_workbook(&[], &[], &[], &lines).unwrap_err();
        assert!(matches!(err, XlsError::TooManyRows(_)));
        assert!(err.to_string().contains("-b out.xlsx"), "{err}");
        let wide = Matrix {
            title: "Writer report".into(),
            unit: "KB/s".into(),
            cells: (0..300).map(|k| MatrixCell::new(64, k + 1, 1.0)).collect(),
        };
        assert!(matches!(xls_workbook(&[wide], &[], &[], &[]), Err(XlsError::TooManyColumns(_))));
    }

    #[test]
    fn the_throughput_report_is_a_row_per_test() {
        let r = ThroughputReport {
            file_kib: 1024,
            record_kib: 4,
            clients: 2,
            rows: vec![("Initial write".into(), 246059.19, CellStateKind::Complete)],
        };
        let got = cells(&xls_throughput_workbook(&[r], &[], &[]).unwrap());
        assert!(got.iter().any(|c| c.2 == THROUGHPUT_TITLE));
        let name = got.iter().find(|c| c.2 == "Initial write").unwrap();
        let value = got.iter().find(|c| c.0 == name.0 && c.1 == 1).unwrap();
        assert_eq!(value.2, "246059.19");
    }

    #[test]
    fn only_a_sheet_iomatrix_wrote_is_known_as_its_own() {
        let ours = xls_workbook(&[matrix()], &[], &[], &[]).unwrap();
        assert!(is_iomatrix_xls(&ours));
        // IOzone's own -b file: the same records, without the mark.
        let mut theirs = Sheet::new();
        theirs.label(0, 0, "Writer report").unwrap();
        theirs.record(EOF, &[]);
        assert!(!is_iomatrix_xls(&theirs.bytes));
        assert!(!is_iomatrix_xls(&ours[..ours.len() - 4]), "cut before its EOF");
        assert!(!is_iomatrix_xls(b"PK\x03\x04"));
        assert!(!is_iomatrix_xls(b"SQLite format 3\0"));
    }
}
