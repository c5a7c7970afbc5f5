//! iomatrix-report: turns IOzone-style result matrices into reports.
//!
//! The input type is [`Matrix`] (one test's results, file sizes down and
//! record sizes across, with [`MatrixCell`] entries). Every exporter returns
//! bytes or a `String`; writing files is left to the caller.
//!
//! - [`terminal`]: plain-ASCII tables, [`matrix_table`] for one matrix and
//!   [`iozone_main_table`] for IOzone's own main layout.
//! - [`iozone_excel`]: IOzone 3.471's `-R` "Excel output" text,
//!   [`excel_report`], and its parser [`parse_excel_report`] /
//!   [`parse_excel_report_with_min_record`], which report a [`ParseError`].
//! - [`xlsx`]: an `.xlsx` workbook, [`xlsx_workbook`], and the report's
//!   workbook, a sheet per test with native charts ([`xlsx::report_workbook`]).
//! - [`document`]: a [`Report`] over groups of stored runs ([`ReportGroup`])
//!   as one self-contained HTML page, Markdown, CSV or JSON.
//! - [`svg`]: the charts: heatmaps, line and bar charts, as inline SVG.

pub mod document;
pub mod iozone_excel;
pub mod matrix;
pub mod svg;
pub mod terminal;
pub mod xlsx;

pub use document::{Report, ReportGroup};
pub use iozone_excel::{
    excel_report, parse_excel_report, parse_excel_report_with_min_record, ParseError, IOZONE_RECORD_SIZES_KIB,
};
pub use matrix::{Matrix, MatrixCell};
pub use terminal::{iozone_main_table, matrix_table};
pub use xlsx::xlsx_workbook;
