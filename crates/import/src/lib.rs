//! iomatrix-import: results of other tools read into neutral runs, so that
//! years of old results can sit in the results database beside new ones.
//! Pure parsing: nothing here opens the database (`iomatrix import` stores
//! what [`parse`] returns).
//!
//! This crate holds what every importer shares; the importers themselves live
//! in the crates of the suites whose runs they make (each suite's
//! `import::IMPORTERS`), and the command table hands them to [`Importers`].
//!
//! - [`Importer`]: the seam. An importer names its [`Format`], says whether a
//!   text is in it ([`Importer::recognises`]) and reads it into
//!   [`ImportedRun`]s ([`Importer::read`]). [`Importers`] asks each in turn
//!   ([`Importers::sniff`]) and finds one by `--format` name.
//! - A published table (a write-up's figures typed into iomatrix's CSV
//!   layout, docs/import.md) is read here for any suite: each suite says what
//!   such a table may give of its cells ([`PublishedSuite`]).
//! - Each run carries [`ImportedCell`]s shaped like the cells of the matching
//!   iomatrix suite. What the file does not say stays unknown:
//!   [`ImportedRun::unknown`] names those conditions (backend, O_DIRECT or
//!   cached, RAM, file system), and their values in
//!   [`ImportedRun::conditions`] are null. Figures the tool printed as
//!   unmeasured (bonnie++'s `+++++`: too fast to time) become [`Unmeasured`]
//!   entries, never cells with a made-up figure.
//! - [`ImportError`]: malformed input, with the line and field where known.
//!   A line a parser cannot read is an error naming it, never skipped in
//!   silence; with [`Options::skip_bad_lines`] the line formats skip it
//!   instead and list it in [`ImportedRun::bad_lines`] (through
//!   [`BadLines`]). Each cell names where it came from
//!   ([`ImportedCell::line`], [`ImportedCell::source`]), so a figure the
//!   database refuses is named by its line too.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod published;

pub use published::{PublishedMetric, PublishedSuite, TYPED_KEY as PUBLISHED_TABLE_KEY};

use iomatrix_store::CellRow;
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;

/// A format of other tools' results that an [`Importer`] reads: its names and the suite whose
/// runs it makes. Declared by the importer, in the crate of that suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    /// The name `--format` takes (`fio`, `bonnie-text`).
    pub name: &'static str,
    /// Other names `--format` takes for it (`bonnie++`).
    pub aliases: &'static [&'static str],
    /// The tool, as its users call it (also the `imported=` label).
    pub tool: &'static str,
    /// The iomatrix suite whose cells the import makes (a published table's run: the suite its
    /// table gives, [`ImportedRun::suite`]).
    pub suite: &'static str,
    /// What the input is, for messages.
    pub describe: &'static str,
    /// The format as `import --json` writes it (its `format` field).
    pub json_name: &'static str,
    /// Where the format stands in the lists messages give (the order iomatrix learnt them; a
    /// published table last) and in the order [`Importers::sniff`] asks the suites' importers
    /// (after a published table's column line). Each suite's importer recognises its own
    /// output only (checked on real output), so the order decides only contrived texts.
    pub place: u8,
    /// Whether its files may leave out a chunk size that `--bonnie-chunk` gives.
    pub takes_chunk: bool,
    /// How `--format`'s help lists it: its name, and what its files are where the name does not
    /// say ("bonnie (bonnie++'s CSV)").
    pub listed: &'static str,
    /// What its file becomes, for `iomatrix import`'s help ("fio jobs -> access cells (...)").
    pub becomes: &'static str,
}

impl Format {
    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        self.name
    }

    /// The tool, as its users call it (also the `imported=` label).
    pub fn tool(self) -> &'static str {
        self.tool
    }

    /// The iomatrix suite whose cells the import makes.
    pub fn suite(self) -> &'static str {
        self.suite
    }

    /// What the input is, for messages.
    pub fn describe(self) -> &'static str {
        self.describe
    }

    /// Whether this is a published table (any suite's figures, typed in; no environment).
    pub fn is_published(self) -> bool {
        self.name == published::FORMAT.name
    }

    /// Whether `--format NAME` means this format.
    fn is_named(self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.json_name)
    }
}

/// A reader of one format of other tools' results, registered by the suite whose runs it makes
/// (its crate's `import::IMPORTERS`, which the command table hands to [`Importers::new`]).
pub trait Importer: Sync {
    /// The format it reads.
    fn format(&self) -> Format;

    /// Whether `text` (a whole file, byte order mark removed) is in its format, by content.
    fn recognises(&self, text: &str) -> bool;

    /// Reads `text` (not empty) into runs.
    fn read(&self, text: &str, options: &Options) -> Result<Vec<ImportedRun>, ImportError>;

    /// The native plan fields of a run it stored before its import gave them, worked from the
    /// stored plan and cells; None where there is nothing to add (the default).
    fn native_plan_fields(&self, _plan: &Value, _cells: &[CellRow]) -> Option<Map<String, Value>> {
        None
    }
}

/// "a, b or c".
fn either(items: &[&str]) -> String {
    match items.split_last() {
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Every importer this build has: the suites' (from the command table) and the published
/// table, which reads any suite's figures.
pub struct Importers {
    /// By [`Format::place`].
    list: Vec<&'static dyn Importer>,
    published: published::Published,
}

impl Importers {
    /// The suites' importers and what a published table may give of each suite, both as the
    /// command table lists them.
    pub fn new(suites: Vec<&'static dyn Importer>, published: Vec<PublishedSuite>) -> Importers {
        let mut list = suites;
        list.sort_by_key(|i| i.format().place);
        Importers { list, published: published::Published::new(published) }
    }

    /// Every importer, the published table's last.
    pub fn all(&self) -> impl Iterator<Item = &dyn Importer> {
        self.list.iter().copied().chain(std::iter::once(&self.published as &dyn Importer))
    }

    /// Every format, in [`Format::place`] order.
    pub fn formats(&self) -> Vec<Format> {
        self.all().map(Importer::format).collect()
    }

    /// `--format`'s help: each format as [`Format::listed`], "a, b or c", and the default.
    pub fn format_help(&self) -> String {
        let listed: Vec<&str> = self.formats().iter().map(|f| f.listed).collect();
        format!("{} [default: recognised from each file's content]", either(&listed))
    }

    /// What each format's file becomes ([`Format::becomes`]), and the `imported=` labels, for
    /// `iomatrix import`'s help: "labelled imported=fio|...: fio jobs -> ..., ...".
    pub fn becomes_help(&self) -> String {
        let formats = self.formats();
        let tools: Vec<&str> = formats.iter().map(|f| f.tool).collect();
        let becomes: Vec<&str> = formats.iter().map(|f| f.becomes).collect();
        format!("imported={}: {}", tools.join("|"), becomes.join(", "))
    }

    /// The importer `--format NAME` names (any case; surrounding blanks ignored).
    pub fn by_name(&self, name: &str) -> Result<&dyn Importer, UnknownFormat> {
        let wanted = name.trim().to_ascii_lowercase();
        self.all()
            .find(|i| i.format().is_named(&wanted))
            .ok_or_else(|| UnknownFormat { given: name.to_string(), choices: self.choices() })
    }

    /// "fio, iozone, ... or published": the names `--format` takes.
    fn choices(&self) -> String {
        let names: Vec<&str> = self.formats().iter().map(|f| f.name).collect();
        either(&names)
    }

    /// Which importer reads `text`, by its content: a published table's strict column line
    /// first, then each suite's importer in [`Format::place`] order. None when none does.
    pub fn sniff(&self, text: &str) -> Option<&dyn Importer> {
        let text = text.trim_start_matches('\u{feff}');
        if text.trim().is_empty() {
            return None;
        }
        if self.published.recognises(text) {
            return Some(&self.published);
        }
        self.list.iter().copied().find(|i| i.recognises(text))
    }

    /// The native plan fields of a stored run imported before its import gave them, from the
    /// importer that made it ([`Importer::native_plan_fields`]).
    pub fn native_plan_fields(&self, plan: &Value, cells: &[CellRow]) -> Option<Map<String, Value>> {
        self.all().find_map(|i| i.native_plan_fields(plan, cells))
    }
}

/// Reads `text` with `importer`: an empty file is an error for every format.
pub fn parse(text: &str, importer: &dyn Importer, options: &Options) -> Result<Vec<ImportedRun>, ImportError> {
    let text = text.trim_start_matches('\u{feff}');
    if text.trim().is_empty() {
        return Err(ImportError::new("the file is empty"));
    }
    importer.read(text, options)
}

/// `--format` naming no format iomatrix reads (the text as given, and the names it takes).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format '{given}': choose {choices}")]
pub struct UnknownFormat {
    /// The name as given.
    pub given: String,
    /// The names `--format` takes, for the message.
    choices: String,
}

/// What the user states about the input that the file itself does not say.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The chunk size in bytes (`--bonnie-chunk`), for a format whose files may leave it out
    /// ([`Format::takes_chunk`]: bonnie++ 2.00's CSV leaves that field empty). The cells carry
    /// it as their record size; not given, the tool's default (named in the run's notes).
    pub chunk_size: Option<u64>,
    /// Skip a line that cannot be read (and store what could be), listing it in
    /// [`ImportedRun::bad_lines`], instead of failing on it. fio's JSON has no lines to skip.
    pub skip_bad_lines: bool,
}

/// A line skipped under [`Options::skip_bad_lines`]: where, and why it could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BadLine {
    /// The line (1-based).
    pub line: usize,
    /// Why it could not be read.
    pub why: String,
}

/// Lines a parser could not read: an error at the first, or (skipping) the list.
#[derive(Debug, Default)]
pub struct BadLines {
    skip: bool,
    /// The lines skipped so far.
    pub lines: Vec<BadLine>,
}

impl BadLines {
    /// None yet; skipping as `options` say.
    pub fn new(options: &Options) -> BadLines {
        BadLines { skip: options.skip_bad_lines, lines: Vec::new() }
    }

    /// The line `e` names could not be read: Ok (skipped, listed) when skipping, else the error.
    pub fn bad(&mut self, e: ImportError) -> Result<(), ImportError> {
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
    /// The format it was read from.
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
    /// The figures, one cell each.
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
    /// The suite whose cells the run holds: its format's (a published table's: the suite that
    /// table gives).
    pub fn suite(&self) -> &str {
        self.format.suite
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
pub fn imported_row() -> CellRow {
    CellRow::blank("", UNKNOWN_BACKEND)
}

/// A figure the tool printed as unmeasured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unmeasured {
    /// The test, as the suite's cells name it.
    pub test: String,
    /// Which repeat (1-based).
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
    /// What is wrong, and where known what to do.
    pub message: String,
}

impl ImportError {
    /// An error of the whole input.
    pub fn new(message: impl Into<String>) -> ImportError {
        ImportError { line: None, field: None, message: message.into() }
    }
    /// An error at line `line` (1-based).
    pub fn at_line(line: usize, message: impl Into<String>) -> ImportError {
        ImportError { line: Some(line), field: None, message: message.into() }
    }
    /// An error in a field (a CSV column, a JSON path).
    pub fn in_field(field: impl Into<String>, message: impl Into<String>) -> ImportError {
        ImportError { line: None, field: Some(field.into()), message: message.into() }
    }
    /// The same error, at line `line`.
    #[must_use]
    pub fn with_line(mut self, line: usize) -> ImportError {
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

/// `line 12`, as cells name their source.
pub fn line_source(line: usize) -> String {
    format!("line {line}")
}

/// The conditions every suite records, all unknown; parsers fill in what
/// their file says.
pub fn unknown_conditions(suite: &str) -> Map<String, Value> {
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
pub fn cache_words(direct: Option<bool>) -> Value {
    match direct {
        Some(true) => Value::from("bypassed (O_DIRECT)"),
        Some(false) => Value::from("page cache in use"),
        None => Value::Null,
    }
}

/// Seconds since the Unix epoch as RFC 3339 UTC (`2026-11-22T22:48:02Z`).
pub fn rfc3339_utc(secs: i64) -> String {
    iomatrix_core::format_utc(secs.saturating_mul(1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A format read by an importer that recognises texts starting with its name.
    struct Fake(Format);

    impl Importer for Fake {
        fn format(&self) -> Format {
            self.0
        }
        fn recognises(&self, text: &str) -> bool {
            text.starts_with(self.0.name)
        }
        fn read(&self, _: &str, _: &Options) -> Result<Vec<ImportedRun>, ImportError> {
            Err(ImportError::new(self.0.name))
        }
    }

    const fn fake(name: &'static str, aliases: &'static [&'static str], place: u8) -> Format {
        Format {
            name,
            aliases,
            tool: name,
            suite: "a",
            describe: name,
            json_name: name,
            place,
            takes_chunk: false,
            listed: name,
            becomes: name,
        }
    }

    static LATER: Fake = Fake(fake("later", &[], 2));
    static EARLIER: Fake = Fake(fake("earlier", &["first"], 1));

    fn importers() -> Importers {
        Importers::new(vec![&LATER, &EARLIER], Vec::new())
    }

    #[test]
    fn formats_by_name_in_their_place() {
        let all = importers();
        let names: Vec<&str> = all.formats().iter().map(|f| f.name).collect();
        assert_eq!(names, ["earlier", "later", "published"]);
        assert_eq!(all.by_name(" FIRST ").map(|i| i.format().name), Ok("earlier"));
        assert_eq!(all.by_name("later").map(|i| i.format().name), Ok("later"));
        let unknown = all.by_name("csv").map(|i| i.format()).unwrap_err();
        assert_eq!(unknown.to_string(), "unknown format 'csv': choose earlier, later or published");
        assert!(all.by_name("published").is_ok_and(|i| i.format().is_published()));
    }

    #[test]
    fn formats_by_content() {
        let all = importers();
        assert_eq!(all.sniff("\u{feff}later text").map(|i| i.format().name), Some("later"));
        assert_eq!(all.sniff("earlier text").map(|i| i.format().name), Some("earlier"));
        let table = "# a write-up\nlabel:x,suite,test,metric,unit,value\n";
        assert!(all.sniff(table).is_some_and(|i| i.format().is_published()));
        assert!(all.sniff("").is_none());
        assert!(all.sniff("hello, world\n").is_none());
    }

    #[test]
    fn empty_input_is_an_error_for_every_format() {
        let all = importers();
        for importer in all.all() {
            let e = parse("  \n", importer, &Options::default()).unwrap_err();
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
