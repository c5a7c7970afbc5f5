//! iomatrix-report: results as tables, workbooks and reports.
//!
//! Two input types: [`Matrix`] (one test's results, file sizes down and
//! record sizes across, with [`MatrixCell`] entries) for the tables and
//! IOzone's layouts, and [`Report`] (groups of stored runs) for `iomatrix
//! report`. Every exporter returns bytes or a `String`; writing files is
//! left to the caller.
//!
//! - [`table`]: the one table layout every text table is written through (columns with a
//!   header, alignment, width and gap; rows of text made by `iomatrix_core::human`).
//! - [`text`]: the one layer that writes what `show`, `runs`, `compare`, `sweep` and `report`
//!   print (a stored run's shared text: header, conditions, clients, verification, noise).
//! - [`terminal`]: plain-ASCII tables, [`matrix_table`] for one matrix and
//!   [`iozone_classic_table`] for IOzone's classic per-line table.
//! - [`iozone_excel`]: IOzone 3.471's `-R` text: the matrix blocks after
//!   "Excel output is below:", [`excel_report`], with the header IOzone
//!   prints for the run's flags ([`report_header`]), and `-t` mode's
//!   throughput report, [`throughput_report`] (their parsers are the import
//!   crate's).
//! - [`xlsx`]: an `.xlsx` workbook of either, [`xlsx_workbook`] and
//!   [`throughput_workbook`], and the report's
//!   workbook, a sheet per test with native charts ([`xlsx::report_workbook`]).
//! - [`xls`]: the same as IOzone's own `-b NAME.xls`, an Excel 2.1 (BIFF2) worksheet written
//!   by hand, [`xls_workbook`] and [`xls_throughput_workbook`].
//! - [`document`]: what a report shows, [`Report`] over groups of stored
//!   runs ([`ReportGroup`]: medians, caching flags) and their comparisons;
//!   written by [`html`] (one self-contained page: inline CSS and SVG, no
//!   script), [`markdown`], [`csv`] (a row per stored cell) and [`json`]
//!   (schema "iomatrix.report/1"), each a `render(&Report)`.
//! - [`kind`]: how the guarded writer tells a report iomatrix made (which a
//!   new one may replace) from any other file: each format's mark.
//! - [`svg`]: the charts as inline SVG, drawn by hand: [`svg::Heatmap`]
//!   (sequential, or diverging around a ratio of 1, with a colour scale),
//!   [`svg::LineChart`] (log2 x axis of sizes, optional log y) and
//!   [`svg::bar_chart`] (each bar's colour given: a verdict's [`svg::Tone`] in a
//!   comparison, a system's colour otherwise; its samples' spread as an error bar);
//!   [`svg_series`]: a cell's figures over time (ops/s per interval) on a linear time axis.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod csv;
pub mod document;
pub mod html;
mod html_curve;
pub mod iozone_excel;
pub mod json;
pub mod kind;
pub mod markdown;
pub mod svg;
pub mod svg_curve;
pub mod svg_history;
pub mod svg_line;
pub mod svg_series;
pub mod table;
pub mod terminal;
pub mod text;
pub mod xls;
pub mod xlsx;
pub mod xlsx_curve;
pub mod xlsx_line;

pub use document::{Report, ReportGroup};
pub use iomatrix_core::{Matrix, MatrixCell};
pub use iozone_excel::{
    excel_report, report_header, throughput_preamble, throughput_report, ThroughputReport, IOZONE_RECORD_SIZES_KIB,
    THROUGHPUT_TITLE,
};
pub use svg_history::history_svg;
pub use table::{Column, Table};
pub use terminal::{iozone_classic_table, matrix_table};
pub use xls::{xls_throughput_workbook, xls_workbook, XlsError, XlsKind};
pub use xlsx::{report_book, throughput_workbook, xlsx_workbook, ReportBook};
pub use xlsx_curve::Timed;
