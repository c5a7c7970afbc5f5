//! How the guarded writer (`iomatrix-guard`) tells a report iomatrix made,
//! which a new report of the same format may replace, from any other file,
//! which only `--force` replaces: each format carries a mark of its kind.
//!
//! - HTML: `<meta name="generator" content="iomatrix report">` in its head
//!   (reports made before the mark: their `<title>iomatrix report</title>`);
//! - markdown: its first line, `# iomatrix report`;
//! - CSV: its header line's first columns, `run,group,suite,test,`;
//! - JSON: its `"schema"`, `iomatrix.report/...`;
//! - XLSX: its document properties' keywords, `iomatrix workbook`
//!   (workbooks made before the mark: a worksheet named `conditions`, which
//!   every iomatrix workbook has). A workbook of `report` and one of IOzone's
//!   `-b` / `--xlsx` are the same kind.

use iomatrix_guard::output::head;
use iomatrix_guard::Kind;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};

/// A report format, as the guarded writer judges an existing file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportKind {
    /// An HTML page (`.html`).
    Html,
    /// A Markdown document (`.md`).
    Markdown,
    /// CSV, one row per stored cell of every run.
    Csv,
    /// The JSON report document.
    Json,
    /// An `.xlsx` workbook.
    Xlsx,
}

impl ReportKind {
    /// The format `iomatrix report -o FILE` writes for FILE's extension (lower case).
    pub fn of_extension(ext: &str) -> Option<ReportKind> {
        Some(match ext {
            "html" | "htm" => ReportKind::Html,
            "md" => ReportKind::Markdown,
            "csv" => ReportKind::Csv,
            "json" => ReportKind::Json,
            "xlsx" => ReportKind::Xlsx,
            _ => return None,
        })
    }
}

/// Largest JSON report read to find its schema, and largest workbook opened to read its
/// properties: far above any report's size.
const MAX_REPORT: u64 = 1 << 30;

impl Kind for ReportKind {
    fn describe(&self) -> String {
        match self {
            ReportKind::Html => "an iomatrix HTML report",
            ReportKind::Markdown => "an iomatrix markdown report",
            ReportKind::Csv => "an iomatrix CSV report",
            ReportKind::Json => "an iomatrix JSON report",
            ReportKind::Xlsx => "an iomatrix workbook",
        }
        .to_string()
    }

    fn recognises(&self, existing: &mut File) -> bool {
        match self {
            ReportKind::Html => {
                let start = String::from_utf8_lossy(&head(existing, 4096)).into_owned();
                let head_part = start.split("</head>").next().unwrap_or("");
                head_part.contains(&format!("<meta name=\"generator\" content=\"{}\"", crate::html::GENERATOR))
                    || head_part.contains("<title>iomatrix report</title>")
            }
            ReportKind::Markdown => first_line(existing).is_some_and(|l| l == crate::markdown::TITLE),
            ReportKind::Csv => first_line(existing).is_some_and(|l| l.starts_with(crate::csv::HEADER_START)),
            ReportKind::Json => {
                #[derive(serde::Deserialize)]
                struct Head {
                    schema: String,
                }
                let reader = BufReader::new(existing.take(MAX_REPORT));
                serde_json::from_reader::<_, Head>(reader)
                    .is_ok_and(|h| h.schema.split('/').next() == crate::json::SCHEMA.split('/').next())
            }
            ReportKind::Xlsx => is_iomatrix_workbook(existing),
        }
    }
}

/// The first line (at most 4 KiB of it), without its line end.
fn first_line(file: &mut File) -> Option<String> {
    let mut line = Vec::new();
    BufReader::new(file.take(4096)).read_until(b'\n', &mut line).ok()?;
    let text = String::from_utf8(line).ok()?;
    Some(text.trim_end_matches(['\n', '\r']).to_string())
}

/// Whether the file is an .xlsx workbook iomatrix made.
fn is_iomatrix_workbook(file: &mut File) -> bool {
    if file.metadata().map_or(true, |m| m.len() > MAX_REPORT) {
        return false;
    }
    let Ok(mut zip) = zip::ZipArchive::new(file) else { return false };
    let mut part = |name: &str| -> Option<String> {
        let entry = zip.by_name(name).ok()?;
        let mut text = String::new();
        entry.take(1 << 20).read_to_string(&mut text).ok()?;
        Some(text)
    };
    if part("docProps/core.xml")
        .is_some_and(|core| core.contains(&format!("<cp:keywords>{}</cp:keywords>", crate::xlsx::WORKBOOK_MARK)))
    {
        return true;
    }
    part("xl/workbook.xml").is_some_and(|book| book.contains(&format!("name=\"{}\"", crate::xlsx::CONDITIONS_SHEET)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::sample;
    use std::io::Write;

    fn judged(kind: ReportKind, bytes: &[u8]) -> bool {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(bytes).unwrap();
        std::io::Seek::rewind(&mut f).unwrap();
        kind.recognises(&mut f)
    }

    #[test]
    fn each_format_knows_its_own_reports_and_nothing_else() {
        let report = sample::report();
        let made: [(ReportKind, Vec<u8>); 4] = [
            (ReportKind::Html, crate::html::render(&report).into_bytes()),
            (ReportKind::Markdown, crate::markdown::render(&report).into_bytes()),
            (ReportKind::Csv, crate::csv::render(&report).into_bytes()),
            (ReportKind::Json, serde_json::to_vec_pretty(&crate::json::render(&report)).unwrap()),
        ];
        for (kind, bytes) in &made {
            assert!(judged(*kind, bytes), "{kind:?} does not know its own report");
            for (other, _) in made.iter().filter(|(o, _)| o != kind) {
                assert!(!judged(*other, bytes), "{other:?} takes a {kind:?} report for its own");
            }
            assert!(!judged(*kind, b"my notes\nabout the server\n"), "{kind:?}");
            assert!(!judged(*kind, b"SQLite format 3\0\x10\0"), "{kind:?}");
        }
        assert!(!judged(ReportKind::Json, br#"{"schema": "iomatrix.run/1"}"#));
        assert!(!judged(ReportKind::Xlsx, &made[0].1));
    }

    #[test]
    fn every_iomatrix_workbook_is_known_and_a_foreign_one_is_not() {
        let m = crate::Matrix { title: "write".into(), unit: "KB/s".into(), cells: Vec::new() };
        let books = [
            crate::xlsx_workbook(std::slice::from_ref(&m), &[4], &[], &[]).unwrap(),
            crate::xlsx::report_workbook(&[], &[], &[], &[], &[], &[], &[]).unwrap(),
        ];
        for book in &books {
            assert!(judged(ReportKind::Xlsx, book));
            assert!(!judged(ReportKind::Json, book));
        }
        let mut foreign = rust_xlsxwriter::Workbook::new();
        foreign.add_worksheet().set_name("budget").unwrap();
        assert!(!judged(ReportKind::Xlsx, &foreign.save_to_buffer().unwrap()));
    }
}
