//! iomatrix-import: results of other tools read into neutral runs, so that
//! years of old results can sit in the results database beside new ones.
//! Pure parsing: nothing here opens the database (`iomatrix import` stores
//! what [`parse`] returns).
//!
//! - [`Format`]: fio's JSON output (`--output-format=json`), IOzone's `-R`
//!   report ("Excel output"), bonnie++'s CSV line (format 1.96 to 1.98, as
//!   bonnie++ 1.96 .. 2.00 print it at the end of a run or alone with `-q`).
//!   The original Bonnie's text table (Tim Bray's Bonnie 1.x); Iometer's
//!   results CSV (2006.07.27, 1.1.0) as an `access` run. [`sniff`]
//!   tells them apart by content.
//! - [`parse`]: one file's text into [`ImportedRun`]s (a bonnie++ file may
//!   hold several runs; fio and IOzone files hold one). Each run carries
//!   [`ImportedCell`]s shaped like the cells of the matching iomatrix suite:
//!   fio jobs become `access` cells, IOzone's matrices `iozone` cells,
//!   bonnie++'s tests `bonnie` cells.
//! - What the file does not say stays unknown: [`ImportedRun::unknown`]
//!   names those conditions (backend, O_DIRECT or cached, RAM, file system),
//!   and their values in [`ImportedRun::conditions`] are null. Figures the
//!   tool printed as unmeasured (bonnie++'s `+++++`: too fast to time) become
//!   [`Unmeasured`] entries, never cells with a made-up figure.
//! - [`ImportError`]: malformed input, with the line and field where known.
//!   A line a parser cannot read is an error naming it, never skipped in
//!   silence; with [`Options::skip_bad_lines`] the line formats (IOzone,
//!   bonnie++, Bonnie, Iometer) skip it instead and list it in
//!   [`ImportedRun::bad_lines`]. Each cell names where it came from
//!   ([`ImportedCell::line`], [`ImportedCell::source`]), so a figure the
//!   database refuses is named by its line too.
//! - [`iozone_excel`]: the parsers of IOzone's `-R` report: its matrix
//!   blocks ([`iozone_excel::parse_excel_report`] into
//!   [`iomatrix_core::Matrix`]es, each row's values under the record sizes
//!   its block's header gives, [`iozone_excel::row_records`]) and `-t`
//!   mode's throughput reports ([`iozone_excel::parse_throughput_reports`]),
//!   or an [`iozone_excel::ParseError`] with the line.
#![forbid(unsafe_code)]

mod bonnie;
mod bonnie_text;
mod fio;
mod iometer;
mod iozone;
pub mod iozone_excel;
mod published;

pub use fio::stored_native_fields;
pub use published::TYPED_KEY as PUBLISHED_TABLE_KEY;

use iomatrix_store::CellRow;
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;
use std::str::FromStr;

/// What [`parse`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// fio's `--output-format=json` document.
    Fio,
    /// IOzone's text output with its `-R` report (or the report alone).
    Iozone,
    /// bonnie++'s CSV line(s).
    Bonnie,
    /// The original Bonnie's text table (Tim Bray's Bonnie 1.x).
    BonnieText,
    /// Iometer's results file (2006.07.27, 1.1.0).
    Iometer,
    /// A published table typed into iomatrix's CSV layout (docs/import.md): any suite's figures.
    Published,
}

impl Format {
    pub const ALL: [Format; 6] =
        [Format::Fio, Format::Iozone, Format::Bonnie, Format::BonnieText, Format::Iometer, Format::Published];

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Fio => "fio",
            Format::Iozone => "iozone",
            Format::Bonnie => "bonnie",
            Format::BonnieText => "bonnie-text",
            Format::Iometer => "iometer",
            Format::Published => "published",
        }
    }

    /// The tool, as its users call it (also the `imported=` label).
    pub fn tool(self) -> &'static str {
        match self {
            Format::Fio => "fio",
            Format::Iozone => "iozone",
            Format::Bonnie => "bonnie++",
            Format::BonnieText => "bonnie",
            Format::Iometer => "iometer",
            Format::Published => "published",
        }
    }

    /// The iomatrix suite whose cells the import makes; a published table's runs each name
    /// theirs ([`ImportedRun::suite`]).
    pub fn suite(self) -> &'static str {
        match self {
            Format::Fio | Format::Iometer => "access",
            Format::Iozone => "iozone",
            Format::Bonnie | Format::BonnieText => "bonnie",
            Format::Published => "published",
        }
    }

    /// What the input is, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Format::Fio => "fio's JSON output (--output-format=json)",
            Format::Iozone => "IOzone's -R report (\"Excel output is below:\")",
            Format::Bonnie => "bonnie++'s CSV line (format 1.96, 1.97 or 1.98)",
            Format::BonnieText => "the original Bonnie's text table (Tim Bray's Bonnie 1.x)",
            Format::Iometer => "Iometer's results file (2006.07.27 or 1.1.0 CSV)",
            Format::Published => "a published table (iomatrix's CSV layout: suite, test, metric, unit, value)",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `--format` naming no format iomatrix reads (the text as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format '{0}': choose fio, iozone, bonnie, bonnie-text, iometer or published")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Format, UnknownFormat> {
        match s.trim().to_ascii_lowercase().as_str() {
            "fio" => Ok(Format::Fio),
            "iozone" => Ok(Format::Iozone),
            "bonnie" | "bonnie++" => Ok(Format::Bonnie),
            "bonnie-text" => Ok(Format::BonnieText),
            "iometer" => Ok(Format::Iometer),
            "published" => Ok(Format::Published),
            _ => Err(UnknownFormat(s.to_string())),
        }
    }
}

/// What the user states about the input that the file itself does not say.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// bonnie++'s chunk size in bytes: bonnie++ 2.00's CSV leaves that field
    /// empty. The cells carry it as their record size; not given, bonnie++'s default 8k
    /// (named in the run's notes and its plan's `chunk_from`).
    pub bonnie_chunk: Option<u64>,
    /// Skip a line that cannot be read (and store what could be), listing it in
    /// [`ImportedRun::bad_lines`], instead of failing on it. fio's JSON has no lines to skip.
    pub skip_bad_lines: bool,
}

/// A line skipped under [`Options::skip_bad_lines`]: where, and why it could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BadLine {
    pub line: usize,
    pub why: String,
}

/// Lines a parser could not read: an error at the first, or (skipping) the list.
#[derive(Debug, Default)]
pub(crate) struct BadLines {
    skip: bool,
    pub(crate) lines: Vec<BadLine>,
}

impl BadLines {
    pub(crate) fn new(options: &Options) -> BadLines {
        BadLines { skip: options.skip_bad_lines, lines: Vec::new() }
    }

    /// The line `e` names could not be read: Ok (skipped, listed) when skipping, else the error.
    pub(crate) fn bad(&mut self, e: ImportError) -> Result<(), ImportError> {
        match e.line {
            Some(line) if self.skip => {
                if !self.lines.iter().any(|b| b.line == line) {
                    let why = match &e.field {
                        Some(field) => format!("{field}: {}", e.message),
                        None => e.message,
                    };
                    self.lines.push(BadLine { line, why });
                }
                Ok(())
            }
            _ => Err(with_skip_hint(e)),
        }
    }
}

/// An unreadable line's error, with the way past it.
fn with_skip_hint(mut e: ImportError) -> ImportError {
    if e.line.is_some() && !e.message.contains("--skip-bad-lines") {
        e.message.push_str(" (fix the line, or give --skip-bad-lines to store the rest and record the lines skipped)");
    }
    e
}

/// One run read from a file: what the database will hold, before it does.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportedRun {
    pub format: Format,
    /// As the file gives it: `fio-3.33`, `3.471`, `2.00a`.
    pub tool_version: Option<String>,
    /// The machine the figures were measured on, where the file names it
    /// (fio's client/server `hostname`, bonnie++'s machine name).
    pub host: Option<String>,
    /// When the figures were measured, as far as the file says: RFC 3339 UTC
    /// where it gives a Unix time (fio), else its own text (IOzone's
    /// "Run began", in the machine's local time).
    pub measured_at: Option<String>,
    /// The tool's own parameters as the file states them (not an iomatrix plan).
    pub plan: Value,
    /// Only what the file says about the machine; no key for what it does not.
    pub environment: Value,
    /// The conditions every suite records (`backend`, `direct`, `cache`,
    /// `clients`, `largest_file_bytes`, `ram_bytes`, `files_vs_ram`, `target`,
    /// `fs_type`, `mount_source`, and the suite's own), null where unknown.
    pub conditions: Map<String, Value>,
    /// The conditions the file does not give, in words.
    pub unknown: Vec<String>,
    /// How something was read that a reader should know (e.g. record sizes
    /// taken from IOzone's main table).
    pub notes: Vec<String>,
    pub cells: Vec<ImportedCell>,
    /// Figures the tool itself did not measure (bonnie++'s `+++++`).
    pub unmeasured: Vec<Unmeasured>,
    /// Parts of the file not imported, and why (a fio job that failed, an
    /// IOzone report iomatrix has no test for).
    pub skipped: Vec<String>,
    /// Lines that could not be read, skipped under [`Options::skip_bad_lines`].
    pub bad_lines: Vec<BadLine>,
    /// Labels the file gives the run (a published table's `label:KEY` columns).
    pub labels: Vec<(String, String)>,
}

impl ImportedRun {
    /// The suite whose cells the run holds: the format's, or a published table's own.
    pub fn suite(&self) -> &str {
        match self.format {
            Format::Published => self.conditions.get("suite").and_then(Value::as_str).unwrap_or("published"),
            f => f.suite(),
        }
    }
}

/// One cell, the row a native cell of the run's suite stores ([`CellRow`], declared once), with
/// where in the file it came from. Numbers the file does not give are 0 (`bytes`, `ops`,
/// `wall_ns`, CPU times), and say so in `metrics.not_in_source` where a suite's readers might
/// look for them; `cpu_percent` is None where the file has no CPU figure (IOzone's report, an
/// empty Iometer field), `backend` [`UNKNOWN_BACKEND`] where the file names no I/O method (only
/// fio's ioengine does), `direct` false where it does not say (the run's conditions say
/// unknown), `kib_per_sec` 0 for figures in other units (seeks/s, files/s: `metrics.per_sec`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportedCell {
    /// The line its figure was read from (1-based), where the format has lines.
    pub line: Option<usize>,
    /// Where in the file it came from, for messages: `line 12`, `jobs[0] (job 'randrw')`.
    pub source: String,
    /// The cell as it is stored; its place in the run (`seq`) and its state are set when it is.
    #[serde(flatten)]
    pub row: CellRow,
}

/// An imported cell's backend where the file names none.
pub const UNKNOWN_BACKEND: &str = "unknown";

/// An imported cell is its row: `cell.metrics`, `cell.kib_per_sec`, ...
impl std::ops::Deref for ImportedCell {
    type Target = CellRow;
    fn deref(&self) -> &CellRow {
        &self.row
    }
}

/// What a row holds that no imported file gives: its place in the run and state (set when
/// stored), its clients' own figures, measured times and counts (0), its backend (unknown),
/// latency histograms.
pub(crate) fn imported_row() -> CellRow {
    CellRow::blank("", UNKNOWN_BACKEND)
}

/// A figure the tool printed as unmeasured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unmeasured {
    pub test: String,
    pub repeat: u32,
    /// What the tool printed and what it means.
    pub why: String,
}

/// Malformed input: where and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{message}", place(.line, .field))]
pub struct ImportError {
    /// 1-based line in the file.
    pub line: Option<usize>,
    /// The field: a CSV column (`field 12 (put_block)`) or a JSON path (`jobs[0].read.iops`).
    pub field: Option<String>,
    pub message: String,
}

impl ImportError {
    pub fn new(message: impl Into<String>) -> ImportError {
        ImportError { line: None, field: None, message: message.into() }
    }
    pub fn at_line(line: usize, message: impl Into<String>) -> ImportError {
        ImportError { line: Some(line), field: None, message: message.into() }
    }
    pub fn in_field(field: impl Into<String>, message: impl Into<String>) -> ImportError {
        ImportError { line: None, field: Some(field.into()), message: message.into() }
    }
    fn with_line(mut self, line: usize) -> ImportError {
        self.line = Some(line);
        self
    }
}

/// "line 3, " , "line 3: ", "bw: ", "": where an [`ImportError`] is, before its message.
fn place(line: &Option<usize>, field: &Option<String>) -> String {
    match (line, field) {
        (Some(l), Some(field)) => format!("line {l}, {field}: "),
        (Some(l), None) => format!("line {l}: "),
        (None, Some(field)) => format!("{field}: "),
        (None, None) => String::new(),
    }
}

/// Which format `text` is, by its content: a JSON document with `"fio
/// version"`; IOzone's banner or a `"... report"` block of its `-R` output;
/// a line that starts like a bonnie++ CSV record (`1.98,2.00a,host,...`).
/// None when it is none of these.
pub fn sniff(text: &str) -> Option<Format> {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    if trimmed.is_empty() {
        return None;
    }
    if text.contains("\"fio version\"") && text.lines().any(|l| l.trim_start().starts_with('{')) {
        return Some(Format::Fio);
    }
    if text.contains("Excel output is below")
        || text.contains("Iozone: Performance Test of File I/O")
        || iozone::has_report_block(text)
    {
        return Some(Format::Iozone);
    }
    if published::looks_like_table(text) {
        return Some(Format::Published);
    }
    if iometer::looks_like_results(text) {
        return Some(Format::Iometer);
    }
    if bonnie_text::looks_like_report(text) {
        return Some(Format::BonnieText);
    }
    if text.lines().any(bonnie::looks_like_record) {
        return Some(Format::Bonnie);
    }
    None
}

/// Reads `text` as `format`.
pub fn parse(text: &str, format: Format, options: &Options) -> Result<Vec<ImportedRun>, ImportError> {
    let text = text.trim_start_matches('\u{feff}');
    if text.trim().is_empty() {
        return Err(ImportError::new("the file is empty"));
    }
    match format {
        Format::Fio => fio::parse(text).map(|r| vec![r]),
        Format::Iozone => iozone::parse(text, options).map(|r| vec![r]),
        Format::Bonnie => bonnie::parse(text, options),
        Format::BonnieText => bonnie_text::parse(text, options),
        Format::Iometer => iometer::parse(text, options).map(|r| vec![r]),
        Format::Published => published::parse(text, options),
    }
}

/// `line 12`, as cells name their source.
fn line_source(line: usize) -> String {
    format!("line {line}")
}

/// The conditions every suite records, all unknown; parsers fill in what
/// their file says.
fn unknown_conditions(suite: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("suite".into(), Value::from(suite));
    for key in [
        "backend",
        "direct",
        "cache",
        "clients",
        "largest_file_bytes",
        "ram_bytes",
        "files_vs_ram",
        "target",
        "fs_type",
        "mount_source",
    ] {
        m.insert(key.into(), Value::Null);
    }
    m
}

/// The `cache` condition as native runs word it, from a known O_DIRECT flag.
fn cache_words(direct: Option<bool>) -> Value {
    match direct {
        Some(true) => Value::from("bypassed (O_DIRECT)"),
        Some(false) => Value::from("page cache in use"),
        None => Value::Null,
    }
}

/// Seconds since the Unix epoch as RFC 3339 UTC (`2026-11-22T22:48:02Z`).
fn rfc3339_utc(secs: i64) -> String {
    iomatrix_core::format_utc(secs.saturating_mul(1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_name_and_content() {
        assert_eq!("bonnie++".parse::<Format>(), Ok(Format::Bonnie));
        assert_eq!("FIO".parse::<Format>(), Ok(Format::Fio));
        assert!("csv"
            .parse::<Format>()
            .unwrap_err()
            .to_string()
            .contains("fio, iozone, bonnie, bonnie-text, iometer or published"));
        assert_eq!(sniff("{\n  \"fio version\" : \"fio-3.33\",\n \"jobs\": []\n}\n"), Some(Format::Fio));
        assert_eq!(sniff("note: x\n{\n  \"fio version\" : \"fio-3.33\"}"), Some(Format::Fio));
        assert_eq!(sniff("\nExcel output is below:\n\n\"Writer report\"\n"), Some(Format::Iozone));
        assert_eq!(sniff("\"Reader report\"\n        \"4\"  \"8\"\n\"64\"   1  2 \n"), Some(Format::Iozone));
        let csv = "1.98,2.00a,vm,1,1795365941,16M,,8192,5,3167,86,+++++,+++,+++++,+++,4312,78,+++++,+++,+++++,+++,1,,,,,+++++,+++,+++++,+++,+++++,+++,+++++,+++,+++++,+++,+++++,+++\n";
        assert_eq!(sniff(csv), Some(Format::Bonnie));
        assert_eq!(sniff(""), None);
        assert_eq!(sniff("hello, world\n"), None);
        assert_eq!(sniff("{\"a\": 1}"), None);
    }

    #[test]
    fn empty_input_is_an_error_for_every_format() {
        for f in Format::ALL {
            let e = parse("  \n", f, &Options::default()).unwrap_err();
            assert_eq!(e.to_string(), "the file is empty");
        }
    }

    #[test]
    fn unix_times_in_utc() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(1_795_387_682), "2026-11-22T22:48:02Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn errors_say_where() {
        assert_eq!(ImportError::at_line(3, "bad").to_string(), "line 3: bad");
        assert_eq!(
            ImportError::in_field("field 12 (put_block)", "bad").with_line(2).to_string(),
            "line 2, field 12 (put_block): bad"
        );
        assert_eq!(ImportError::in_field("jobs[0].read", "missing").to_string(), "jobs[0].read: missing");
    }
}
