//! A published table (a write-up's figures, a spreadsheet of past results) typed into a CSV of
//! one figure per line, read into runs marked published: no environment, no samples, each
//! figure one value as printed. The layout (docs/import.md):
//!
//! ```text
//! # lines starting with '#' are comments: say where the figures come from
//! label:dba,suite,test,file_size,record_size,operation,metric,unit,value
//! without,fileserver,write,4k 8k 16k 32k 64k 128k 256k 512k 1m 2m,4k,open,response time,ms,36.69
//! without,fileserver,write,4k 8k 16k 32k 64k 128k 256k 512k 1m 2m,4k,,completion time,min,140
//! ```
//!
//! The first line that is not a comment names the columns, in any order: `suite`, `test`,
//! `metric`, `unit` and `value` are required; `file_size`, `record_size` and `operation` may
//! be left out or empty; every `label:KEY` column labels the runs. Each distinct set of label
//! values and suite is one run; within it, a cell is its test, file size and record size, as
//! the suite's native cells are keyed, so `compare`, `sweep` and `report` pair published cells
//! with native ones. A file size of several sizes (space-separated) is a size mix, as
//! `run fileserver --sizes` gives, and names the cell as the native run's mix does.

use crate::{
    imported_row, unknown_conditions, BadLines, Format, ImportError, ImportedCell, ImportedRun, Importer, Options,
};
use iomatrix_core::ByteSize;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// A published table: any suite's figures.
pub(crate) const FORMAT: Format = Format {
    name: "published",
    aliases: &[],
    tool: "published",
    suite: "published",
    describe: "a published table (iomatrix's CSV layout: suite, test, metric, unit, value)",
    json_name: "published",
    place: u8::MAX,
    takes_chunk: false,
    listed: "published (a published table typed into iomatrix's CSV layout, docs/import.md)",
    becomes: "a published table (a write-up's or a spreadsheet's figures typed into the CSV layout of docs/import.md: \
              label:KEY columns, suite, test, file_size, record_size, operation, metric, unit, value) -> a run per set \
              of labels and suite, marked published (no environment, no samples)",
};

/// What a published table may give of one suite's cells: declared by the suite (its crate's
/// `import::PUBLISHED`), handed over by the command table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublishedSuite {
    /// The suite's name, as the table's `suite` column gives it.
    pub name: &'static str,
    /// The metrics its cells have beyond those of every suite (throughput, cpu).
    pub metrics: &'static [PublishedMetric],
    /// A walk of a tree (a backup): its throughput is also kept in MiB/min, and its completion
    /// time is the walk's elapsed time.
    pub walk: bool,
}

/// The published table's importer: the suites it may give figures of, the walks last (as its
/// messages list them).
pub(crate) struct Published {
    suites: Vec<PublishedSuite>,
}

impl Published {
    pub(crate) fn new(mut suites: Vec<PublishedSuite>) -> Published {
        suites.sort_by_key(|s| s.walk);
        Published { suites }
    }
}

impl Importer for Published {
    fn format(&self) -> Format {
        FORMAT
    }

    fn recognises(&self, text: &str) -> bool {
        looks_like_table(text)
    }

    fn read(&self, text: &str, options: &Options) -> Result<Vec<ImportedRun>, ImportError> {
        parse(text, &self.suites, options)
    }
}

/// The columns every line has.
const REQUIRED: [&str; 5] = ["suite", "test", "metric", "unit", "value"];
const OPTIONAL: [&str; 3] = ["file_size", "record_size", "operation"];
const LABEL_PREFIX: &str = "label:";

/// Whether `text` is a published table: its first line that is not a comment names the
/// required columns.
fn looks_like_table(text: &str) -> bool {
    let Some(header) = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#')) else {
        return false;
    };
    let Ok(names) = fields(header) else { return false };
    REQUIRED.iter().all(|r| names.iter().any(|n| n.trim().eq_ignore_ascii_case(r)))
}

/// What a metric of a published table is, and where its value goes in a native cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublishedMetric {
    /// The cell's rate of bytes (KB/s); a backup walk's MiB/min too.
    Throughput,
    /// The mean of the connections' own rates (the file-server load, a personality).
    ThroughputPerConnection,
    /// An operation's mean response time.
    ResponseTime,
    /// The phase's time from start to the last connection's end; a backup walk's elapsed time.
    CompletionTime,
    /// A backup walk's files read.
    Files,
    /// A backup walk's files' extents.
    Extents,
    /// CPU in % of one core.
    Cpu,
}

type Metric = PublishedMetric;

/// Every metric: its name in the `metric` column, whether every suite has it (else only those
/// whose [`PublishedSuite::metrics`] name it).
const METRICS: [(&str, Metric, bool); 7] = [
    ("throughput", Metric::Throughput, true),
    ("throughput per connection", Metric::ThroughputPerConnection, false),
    ("response time", Metric::ResponseTime, false),
    ("completion time", Metric::CompletionTime, false),
    ("files", Metric::Files, false),
    ("extents", Metric::Extents, false),
    ("cpu", Metric::Cpu, true),
];

const KIB: f64 = 1024.0;

/// A unit and what one of it is in the metric's stored unit (KiB/s, ns, count, %).
fn unit_factor(metric: Metric, unit: &str) -> Option<f64> {
    let u = unit.trim();
    match metric {
        Metric::Throughput | Metric::ThroughputPerConnection => {
            // K, M and G are powers of 1024, as iomatrix's tables (and IOzone's, bonnie++'s) print KB/s.
            let (size, per) = u.split_once('/')?;
            let bytes = match size.to_ascii_lowercase().as_str() {
                "b" | "bytes" => 1.0,
                "kb" | "kib" | "k" => KIB,
                "mb" | "mib" | "m" => KIB * KIB,
                "gb" | "gib" | "g" => KIB * KIB * KIB,
                _ => return None,
            };
            let seconds = match per.to_ascii_lowercase().as_str() {
                "s" | "sec" => 1.0,
                "min" => 60.0,
                "h" => 3600.0,
                _ => return None,
            };
            Some(bytes / KIB / seconds)
        }
        Metric::ResponseTime | Metric::CompletionTime => match u.to_ascii_lowercase().as_str() {
            "ns" => Some(1.0),
            "us" | "µs" => Some(1e3),
            "ms" => Some(1e6),
            "s" | "sec" => Some(1e9),
            "min" | "mins" => Some(60e9),
            "h" => Some(3600e9),
            _ => None,
        },
        Metric::Files => (u == "files").then_some(1.0),
        Metric::Extents => (u == "extents").then_some(1.0),
        Metric::Cpu => (u == "%").then_some(1.0),
    }
}

/// The units a metric takes, for messages.
fn units_of(metric: Metric) -> &'static str {
    match metric {
        Metric::Throughput | Metric::ThroughputPerConnection => {
            "a size per time: B, KB (KiB), MB (MiB) or GB (GiB) per s, min or h, e.g. KB/s, MB/min"
        }
        Metric::ResponseTime | Metric::CompletionTime => "ns, us, ms, s, min or h",
        Metric::Files => "files",
        Metric::Extents => "extents",
        Metric::Cpu => "%",
    }
}

/// The largest whole number a double holds with every whole number below it: 2^53 - 1. A
/// count of 2^53 + 1 reads as 2^53, another figure than the table's.
const LARGEST_EXACT: u64 = (1 << 53) - 1;

/// The largest figure a line may give in its stored unit: a count or a time in ns must be exact
/// as a double (at most 2^53 - 1), a rate the store's bound of 1 EiB/s, CPU 100% of 1024 cores.
fn bound(metric: Metric) -> f64 {
    match metric {
        Metric::Throughput | Metric::ThroughputPerConnection => (1u64 << 50) as f64,
        Metric::Cpu => 102_400.0,
        _ => LARGEST_EXACT as f64,
    }
}

/// A count as the table wrote it, where it is written in digits alone: compared as a whole
/// number, before a double rounds 2^53 + 1 down to 2^53 and lets it pass.
fn count_past_exact(typed: &str) -> bool {
    !typed.is_empty()
        && typed.bytes().all(|b| b.is_ascii_digit())
        && typed.parse::<u128>().map_or(true, |n| n > u128::from(LARGEST_EXACT))
}

/// A published cell's figures, as the suite's own cells store them (the keys compare reads
/// through `CellFigures`), and what the table did not give.
#[derive(Debug, Default, Serialize)]
struct Figures {
    phase: String,
    published: bool,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    ops: BTreeMap<String, OpMean>,
    #[serde(skip_serializing_if = "Option::is_none")]
    completion_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    avg_connection_kib_per_sec: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    files: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mib_per_min: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    wall_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extents: Option<Extents>,
    not_in_source: Vec<&'static str>,
}

#[derive(Debug, Serialize)]
struct OpMean {
    mean_ns: f64,
}

#[derive(Debug, Default, Serialize)]
struct Extents {
    files: u64,
    total_extents: u64,
}

/// One line of the table, read.
struct Line {
    n: usize,
    labels: Vec<(String, String)>,
    /// Its suite's name, as the suite declares it.
    suite: &'static str,
    /// Its suite is a walk ([`PublishedSuite::walk`]).
    walk: bool,
    test: String,
    file_sizes: Vec<u64>,
    record_size: Option<u64>,
    operation: String,
    metric: Metric,
    metric_name: String,
    unit: String,
    /// As typed, and in the stored unit.
    typed: String,
    value: f64,
}

/// A cell under construction: its rows as typed, and its figures.
#[derive(Default)]
struct Cell {
    first_line: usize,
    kib_per_sec: Option<f64>,
    cpu: Option<f64>,
    figures: Figures,
    /// (metric, operation) given, and on which line.
    given: BTreeMap<(String, String), usize>,
    /// Its lines as typed.
    typed: Vec<Value>,
}

/// Where a published run's conditions keep its table as typed.
pub const TYPED_KEY: &str = "published_table";

/// Reads a published table of figures of `suites`.
fn parse(text: &str, suites: &[PublishedSuite], options: &Options) -> Result<Vec<ImportedRun>, ImportError> {
    let mut bad = BadLines::new(options);
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let (header_n, header) = lines
        .by_ref()
        .find(|(_, l)| !l.trim().is_empty() && !l.trim().starts_with('#'))
        .ok_or_else(|| ImportError::new("no column line: only comments"))?;
    let columns = header_columns(header_n, header)?;
    let mut read = Vec::new();
    for (n, line) in lines {
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        match read_line(n, line, &columns, suites) {
            Ok(l) => read.push(l),
            Err(e) => bad.bad(e)?,
        }
    }
    if read.is_empty() {
        return Err(ImportError::at_line(header_n, "the column line is followed by no figure"));
    }
    // Runs by their labels and suite, in the order first seen; cells by test and sizes.
    let mut runs: Vec<PendingRun> = Vec::new();
    for l in read {
        let key = (l.labels.clone(), l.suite);
        let i = match runs.iter().position(|r| r.key == key) {
            Some(i) => i,
            None => {
                runs.push(PendingRun { key, mix: l.file_sizes.clone(), mix_line: l.n, cells: BTreeMap::new() });
                runs.len() - 1
            }
        };
        let r = &mut runs[i];
        if let Err(e) = add(l, &r.mix, r.mix_line, &mut r.cells) {
            bad.bad(e)?;
        }
    }
    Ok(runs.into_iter().map(|r| run(&r.key.0, r.key.1, &r.mix, r.cells, &bad.lines)).collect())
}

/// A cell's place in its run: test, file size, record size, as native cells are keyed.
type CellPlace = (String, Option<u64>, Option<u64>);

/// A run being read: its labels and suite, its size mix (and the line that set it), its cells.
struct PendingRun {
    key: (Vec<(String, String)>, &'static str),
    mix: Vec<u64>,
    mix_line: usize,
    cells: BTreeMap<CellPlace, Cell>,
}

/// The column line: each name's place; a required one missing or an unknown one is an error.
fn header_columns(n: usize, header: &str) -> Result<BTreeMap<String, usize>, ImportError> {
    let names = fields(header).map_err(|e| ImportError::at_line(n, e))?;
    let mut columns = BTreeMap::new();
    for (i, name) in names.iter().enumerate() {
        let name = name.trim();
        let known = REQUIRED.contains(&name.to_ascii_lowercase().as_str())
            || OPTIONAL.contains(&name.to_ascii_lowercase().as_str());
        let key = if let Some(label) = name.strip_prefix(LABEL_PREFIX) {
            if label.is_empty() || !label.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
                return Err(ImportError::at_line(
                    n,
                    format!("column {}: '{name}' names no label: give label:KEY, KEY of letters, digits, _ - .", i + 1),
                ));
            }
            name.to_string()
        } else if known {
            name.to_ascii_lowercase()
        } else {
            return Err(ImportError::at_line(
                n,
                format!(
                    "column {}: '{name}' is not a column of a published table: the columns are {}, optionally {}, \
                     and label:KEY for each label (docs/import.md)",
                    i + 1,
                    REQUIRED.join(", "),
                    OPTIONAL.join(", ")
                ),
            ));
        };
        if columns.insert(key, i).is_some() {
            return Err(ImportError::at_line(n, format!("column {}: '{name}' is named twice", i + 1)));
        }
    }
    let missing: Vec<&str> = REQUIRED.iter().copied().filter(|r| !columns.contains_key(*r)).collect();
    if !missing.is_empty() {
        return Err(ImportError::at_line(
            n,
            format!(
                "the column line lacks {}: a published table's first line (after comments) names the columns {}, \
                 optionally {} and label:KEY (docs/import.md)",
                missing.join(", "),
                REQUIRED.join(", "),
                OPTIONAL.join(", ")
            ),
        ));
    }
    Ok(columns)
}

fn read_line(
    n: usize,
    line: &str,
    columns: &BTreeMap<String, usize>,
    suites: &[PublishedSuite],
) -> Result<Line, ImportError> {
    let f = fields(line).map_err(|e| ImportError::at_line(n, e))?;
    if f.len() != columns.len() {
        return Err(ImportError::at_line(
            n,
            format!("{} fields where the column line names {}: every line gives every column", f.len(), columns.len()),
        ));
    }
    let get = |name: &str| columns.get(name).map(|i| f[*i].trim()).unwrap_or("");
    let printable = |what: &str, v: &str| -> Result<String, ImportError> {
        if v.chars().any(char::is_control) || v.len() > 200 {
            return Err(ImportError::at_line(
                n,
                format!("{what} '{}': printable text up to 200 bytes", v.escape_debug()),
            ));
        }
        Ok(v.to_string())
    };
    let labels = columns
        .iter()
        .filter_map(|(name, i)| name.strip_prefix(LABEL_PREFIX).map(|key| (key.to_string(), f[*i].trim())))
        .map(|(k, v)| printable(&format!("label {k}"), v).map(|v| (k, v)))
        .collect::<Result<Vec<_>, _>>()?;
    let suite = get("suite").to_ascii_lowercase();
    let Some(published) = suites.iter().find(|s| s.name == suite) else {
        let names: Vec<&str> = suites.iter().map(|s| s.name).collect();
        return Err(ImportError::at_line(n, format!("suite '{suite}': give one of {}", names.join(", "))));
    };
    let test = printable("test", get("test"))?;
    if test.is_empty() {
        return Err(ImportError::at_line(n, "the test is empty: name the cell's test or phase (write, read, backup)"));
    }
    let (file_sizes, record_size) = sizes_of(n, get("file_size"), get("record_size"))?;
    let metric_name = get("metric").to_ascii_lowercase();
    let Some((_, metric, every_suite)) = METRICS.iter().find(|(name, ..)| *name == metric_name) else {
        let known: Vec<&str> = METRICS.iter().map(|(name, ..)| *name).collect();
        return Err(ImportError::at_line(
            n,
            format!("metric '{}' is not one a published table can give: {}", get("metric"), known.join(", ")),
        ));
    };
    if !every_suite && !published.metrics.contains(metric) {
        let having: Vec<&str> = suites.iter().filter(|s| s.metrics.contains(metric)).map(|s| s.name).collect();
        return Err(ImportError::at_line(
            n,
            format!("metric '{metric_name}' is not a figure of the {suite} suite (it is one of {})", having.join(", ")),
        ));
    }
    let operation = printable("operation", &get("operation").to_ascii_lowercase())?;
    match (*metric == Metric::ResponseTime, operation.is_empty()) {
        (true, true) => {
            return Err(ImportError::at_line(
                n,
                "a response time names its operation (open, close, create, write, read)",
            ))
        }
        (false, false) => {
            return Err(ImportError::at_line(
                n,
                format!("operation '{operation}' given for metric '{metric_name}': only a response time has one"),
            ))
        }
        _ => {}
    }
    let unit = get("unit").to_string();
    let factor = unit_factor(*metric, &unit).ok_or_else(|| {
        ImportError::at_line(n, format!("unit '{unit}' is not a unit of {metric_name}: give {}", units_of(*metric)))
    })?;
    let typed = get("value").to_string();
    let stored = value_of(n, (*metric, &metric_name), &unit, factor, &typed)?;
    Ok(Line {
        n,
        labels,
        suite: published.name,
        walk: published.walk,
        test,
        file_sizes,
        record_size,
        operation,
        metric: *metric,
        metric_name,
        unit,
        typed,
        value: stored,
    })
}

/// Line `n`'s file sizes (a size, or a mix of them) and record size, which fits in the largest.
fn sizes_of(n: usize, file_size: &str, record_size: &str) -> Result<(Vec<u64>, Option<u64>), ImportError> {
    let size = |what: &str, v: &str| -> Result<u64, ImportError> {
        v.parse::<ByteSize>()
            .ok()
            .map(ByteSize::bytes)
            .filter(|b| *b > 0)
            .ok_or_else(|| ImportError::at_line(n, format!("{what} '{v}' is not a size (4k, 64k, 2m)")))
    };
    let file_sizes = file_size.split_whitespace().map(|s| size("file size", s)).collect::<Result<Vec<u64>, _>>()?;
    let record_size = Some(record_size).filter(|s| !s.is_empty()).map(|s| size("record size", s)).transpose()?;
    if let (Some(record), Some(file)) = (record_size, file_sizes.iter().max()) {
        if record > *file {
            return Err(ImportError::at_line(
                n,
                format!(
                    "record size {} is larger than the file size {}: a record is read or written within its \
                     file; give a record size up to the file's",
                    ByteSize(record),
                    ByteSize(*file)
                ),
            ));
        }
    }
    Ok((file_sizes, record_size))
}

/// Line `n`'s value (`typed`, in `unit`) of `metric` in iomatrix's unit (times `factor`): a
/// finite number, not negative, whole for a count, within what a machine measures.
fn value_of(
    n: usize,
    (metric, metric_name): (Metric, &str),
    unit: &str,
    factor: f64,
    typed: &str,
) -> Result<f64, ImportError> {
    let value: f64 = typed.parse().map_err(|_| {
        ImportError::at_line(
            n,
            format!("value '{typed}' is not a number (digits and a decimal point, no thousands separators)"),
        )
    })?;
    if !value.is_finite() {
        return Err(ImportError::at_line(n, format!("value '{typed}' is not a finite number")));
    }
    if value < 0.0 {
        return Err(ImportError::at_line(n, format!("value '{typed}' is negative: no {metric_name} is")));
    }
    if matches!(metric, Metric::Files | Metric::Extents) && value.fract() != 0.0 {
        return Err(ImportError::at_line(n, format!("value '{typed}': a count of {unit} is a whole number")));
    }
    let stored = value * factor;
    let whole_count = matches!(metric, Metric::Files | Metric::Extents);
    if stored > bound(metric) || (whole_count && count_past_exact(typed)) {
        return Err(ImportError::at_line(
            n,
            format!(
                "value '{typed} {unit}' is past any {metric_name} a machine measures (at most {:e} in iomatrix's unit)",
                bound(metric)
            ),
        ));
    }
    Ok(stored)
}

/// Puts a line's figure into its cell; the same figure twice, or a size mix unlike the run's, is
/// an error.
fn add(l: Line, mix: &[u64], mix_line: usize, cells: &mut BTreeMap<CellPlace, Cell>) -> Result<(), ImportError> {
    if l.file_sizes.len() > 1 && l.file_sizes != mix {
        return Err(ImportError::at_line(
            l.n,
            format!(
                "its size mix differs from line {mix_line}'s: a run has one size mix (one set of labels, one suite)"
            ),
        ));
    }
    let file_size = l.file_sizes.iter().max().copied();
    let cell = cells
        .entry((l.test.clone(), file_size, l.record_size))
        .or_insert_with(|| Cell { first_line: l.n, ..Cell::default() });
    if let Some(first) = cell.given.insert((l.metric_name.clone(), l.operation.clone()), l.n) {
        let what =
            if l.operation.is_empty() { l.metric_name.clone() } else { format!("{} {}", l.operation, l.metric_name) };
        return Err(ImportError::at_line(l.n, format!("{what} of this cell is given twice (also on line {first})")));
    }
    let mut name = l.test.clone();
    if !l.file_sizes.is_empty() {
        let sizes: Vec<String> = l.file_sizes.iter().map(|b| ByteSize(*b).to_string()).collect();
        name += &format!(" {}", sizes.join(" "));
    }
    if let Some(r) = l.record_size {
        name += &format!(" /{}", ByteSize(r));
    }
    cell.typed.push(json!({"line": l.n, "cell": name, "operation": l.operation, "metric": l.metric_name,
        "value": l.typed, "unit": l.unit}));
    let f = &mut cell.figures;
    f.phase.clone_from(&l.test);
    f.published = true;
    let whole = |v: f64| v.round() as u64;
    match l.metric {
        Metric::Throughput => {
            cell.kib_per_sec = Some(l.value);
            if l.walk {
                f.mib_per_min = Some(l.value * 60.0 / KIB);
            }
        }
        Metric::ThroughputPerConnection => f.avg_connection_kib_per_sec = Some(l.value),
        Metric::ResponseTime => {
            f.ops.insert(l.operation.clone(), OpMean { mean_ns: l.value });
        }
        Metric::CompletionTime if l.walk => f.wall_ns = Some(whole(l.value)),
        Metric::CompletionTime => f.completion_ns = Some(whole(l.value)),
        Metric::Files => {
            f.files = Some(whole(l.value));
            f.extents.get_or_insert_with(Extents::default).files = whole(l.value);
        }
        Metric::Extents => f.extents.get_or_insert_with(Extents::default).total_extents = whole(l.value),
        Metric::Cpu => cell.cpu = Some(l.value),
    }
    Ok(())
}

fn run(
    labels: &[(String, String)],
    suite: &'static str,
    mix: &[u64],
    cells: BTreeMap<CellPlace, Cell>,
    bad_lines: &[crate::BadLine],
) -> ImportedRun {
    let mut conditions: Map<String, Value> = unknown_conditions(suite);
    // The table as typed, for `show`: line, cell, operation, metric, value and unit.
    let typed: Vec<Value> = cells.values().flat_map(|c| c.typed.iter().cloned()).collect();
    conditions.insert(TYPED_KEY.into(), Value::Array(typed));
    let mut cells: Vec<(usize, ImportedCell)> = cells
        .into_iter()
        .map(|((test, file_size, record_size), mut c)| {
            if c.cpu.is_none() {
                c.figures.not_in_source.push("cpu");
            }
            c.figures.not_in_source.extend(["bytes", "ops", "wall_ns", "samples"]);
            let row = iomatrix_store::CellRow {
                test,
                file_size,
                record_size,
                kib_per_sec: c.kib_per_sec.unwrap_or(0.0),
                cpu_percent: c.cpu,
                metrics: serde_json::to_value(&c.figures).unwrap_or(Value::Null),
                ..imported_row()
            };
            (c.first_line, ImportedCell { line: Some(c.first_line), source: crate::line_source(c.first_line), row })
        })
        .collect();
    cells.sort_by_key(|(line, _)| *line);
    ImportedRun {
        // The run's suite is the table's: `ImportedRun::suite` reads it from here.
        format: Format { suite, ..FORMAT },
        tool_version: None,
        host: None,
        measured_at: None,
        plan: if mix.len() > 1 { json!({"sizes": {"list": mix}}) } else { json!({}) },
        environment: json!({}),
        conditions,
        unknown: vec![
            "the machine, its environment and the target (a published table has none)".into(),
            "samples: each figure is one value as printed, so compare gives it no verdict".into(),
        ],
        notes: Vec::new(),
        cells: cells.into_iter().map(|(_, c)| c).collect(),
        unmeasured: Vec::new(),
        skipped: Vec::new(),
        bad_lines: bad_lines.to_vec(),
        labels: labels.to_vec(),
    }
}

/// A CSV line's fields (RFC 4180: a field in double quotes may hold commas, `""` is a quote);
/// a quote left open is an error, since a field never spans lines here.
fn fields(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut chars = line.trim_end_matches('\r').chars().peekable();
    let mut quoted = false;
    let mut at_start = true;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (false, '"') if at_start && field.trim().is_empty() => {
                quoted = true;
                field.clear();
            }
            (true, '"') if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (false, ',') => {
                out.push(std::mem::take(&mut field));
                at_start = true;
                continue;
            }
            _ => field.push(c),
        }
        at_start = false;
    }
    if quoted {
        return Err("a quoted field is not closed on its line".into());
    }
    out.push(field);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "label:dba,suite,test,file_size,record_size,operation,metric,unit,value\n";

    /// The suites as their crates declare them, in the command table's order.
    fn suites() -> Vec<PublishedSuite> {
        use PublishedMetric::{CompletionTime, Extents, Files, ResponseTime, ThroughputPerConnection};
        let plain = |name| PublishedSuite { name, metrics: &[], walk: false };
        let load = |name| PublishedSuite {
            name,
            metrics: &[ThroughputPerConnection, ResponseTime, CompletionTime],
            walk: false,
        };
        let backup = PublishedSuite { name: "backup", metrics: &[CompletionTime, Files, Extents], walk: true };
        Published::new(vec![
            plain("iozone"),
            plain("access"),
            plain("bonnie"),
            backup,
            load("fileserver"),
            load("personality"),
        ])
        .suites
    }

    fn parse_text(body: &str) -> Result<Vec<ImportedRun>, ImportError> {
        parse(&format!("# typed in\n{HEADER}{body}"), &suites(), &Options::default())
    }

    #[test]
    fn each_set_of_labels_and_suite_is_a_run_and_figures_land_where_native_cells_keep_them() {
        let runs = parse_text(
            "without,fileserver,write,4k 8k 2m,4k,open,response time,ms,36.69\n\
             without,fileserver,write,4k 8k 2m,4k,,completion time,min,140\n\
             without,fileserver,write,4k 8k 2m,4k,,throughput per connection,KB/s,53.07\n\
             with,fileserver,write,4k 8k 2m,4k,open,response time,ms,8.86\n\
             without,backup,backup,1m,,,throughput,MB/min,272.45\n\
             without,backup,backup,1m,,,files,files,29451\n\
             without,backup,backup,1m,,,extents,extents,7482988\n",
        )
        .unwrap();
        assert_eq!(runs.len(), 3);
        let w = &runs[0];
        assert_eq!(w.suite(), "fileserver");
        assert_eq!(w.plan["sizes"]["list"], json!([4096, 8192, 2 << 20]));
        assert_eq!(w.labels, [("dba".to_string(), "without".to_string())]);
        assert_eq!(w.cells.len(), 1);
        let m = &w.cells[0].metrics;
        assert_eq!(m["ops"]["open"]["mean_ns"], 36.69e6);
        assert_eq!(m["completion_ns"], 140u64 * 60 * 1_000_000_000);
        assert_eq!(m["avg_connection_kib_per_sec"], 53.07);
        assert_eq!(w.cells[0].file_size, Some(2 << 20));
        let b = &runs[2];
        assert_eq!(b.suite(), "backup");
        let f = b.cells[0].figures();
        assert_eq!(f.files, Some(29451));
        assert_eq!(f.extents.and_then(|e| e.total_extents), Some(7482988));
        assert!((f.mib_per_min.unwrap() - 272.45).abs() < 1e-9);
        assert!((b.cells[0].kib_per_sec - 272.45 * 1024.0 / 60.0).abs() < 1e-9);
    }

    #[test]
    fn bad_lines_are_named_with_their_line_and_what_to_give() {
        let err = |body: &str| parse_text(body).unwrap_err().to_string();
        let e = err("a,fileserver,write,,4k,open,response time,furlongs,3\n");
        assert!(e.starts_with("line 3: unit 'furlongs' is not a unit of response time: give ns, us"), "{e}");
        let e = err("a,fileserver,write,,4k,,speed,KB/s,3\n");
        assert!(e.contains("line 3: metric 'speed' is not one a published table can give: throughput,"), "{e}");
        assert!(err("a,fileserver,write,,4k,,throughput,KB/s,-3\n").contains("line 3: value '-3' is negative"));
        assert!(err("a,fileserver,write,,4k,,throughput,KB/s,inf\n").contains("not a finite number"));
        assert!(err("a,fileserver,write,,4k,,throughput,KB/s,NaN\n").contains("not a finite number"));
        assert!(err("a,fileserver,write,,4k,,throughput,KB/s,1e300\n").contains("past any throughput"));
        assert!(err("a,backup,backup,,,,files,files,2.5\n").contains("a count of files is a whole number"));
        // 2^53 + 1 reads as 2^53 in a double: refused, as is 2^53; 2^53 - 1 is exact.
        for past in ["9007199254740993", "9007199254740992", "99999999999999999999999999999999999999999"] {
            let e = err(&format!("a,backup,backup,,,,files,files,{past}\n"));
            assert!(e.starts_with(&format!("line 3: value '{past} files' is past any files")), "{e}");
        }
        let e = err("a,backup,backup,,,,extents,extents,9007199254740993\n");
        assert!(e.contains("past any extents"), "{e}");
        assert!(parse_text("a,backup,backup,,,,files,files,9007199254740991\n").is_ok(), "2^53 - 1 is exact");
        let e = err("a,iozone,write,1m,1t,,throughput,KB/s,1\n");
        assert!(e.starts_with("line 3: record size 1t is larger than the file size 1m"), "{e}");
        assert!(parse_text("a,iozone,write,1m,1m,,throughput,KB/s,1\n").is_ok(), "a record of the whole file");
        assert!(err("a,fileserver,write,,4k,,throughput,KB/s,\"29,451\"\n").contains("no thousands separators"));
        assert!(
            err("a,fileserver,write,,4k,,throughput,KB/s\n").contains("line 3: 8 fields where the column line names 9")
        );
        assert!(err("a,fileserver,write,,4k,open,throughput,KB/s,1\n").contains("only a response time has one"));
        assert!(err("a,fileserver,write,,4k,,response time,ms,1\n").contains("names its operation"));
        assert!(err("a,nosuch,write,,4k,,throughput,KB/s,1\n")
            .contains("suite 'nosuch': give one of iozone, access, bonnie, fileserver, personality, backup"));
        assert!(err("a,iozone,write,,4k,,files,files,1\n")
            .contains("not a figure of the iozone suite (it is one of backup)"));
        assert!(
            err("a,iozone,write,,4k,,completion time,s,1\n").contains("(it is one of fileserver, personality, backup)")
        );
        let twice = err("a,fileserver,write,,4k,,throughput,KB/s,1\na,fileserver,write,,4k,,throughput,KB/s,2\n");
        assert!(twice.contains("line 4: throughput of this cell is given twice (also on line 3)"), "{twice}");
        let missing = parse("suite,test,metric,value\n", &suites(), &Options::default()).unwrap_err().to_string();
        assert!(missing.starts_with("line 1: the column line lacks unit"), "{missing}");
        let unknown =
            parse("suite,test,metric,unit,value,colour\n", &suites(), &Options::default()).unwrap_err().to_string();
        assert!(unknown.contains("column 6: 'colour' is not a column"), "{unknown}");
    }

    #[test]
    fn quoted_fields_hold_commas_and_quotes() {
        assert_eq!(fields(r#"a,"b, c","say ""hi""""#).unwrap(), ["a", "b, c", r#"say "hi""#]);
        assert!(fields(r#"a,"open"#).is_err());
        assert!(looks_like_table("# x\nsuite,test,metric,unit,value\n"));
        assert!(!looks_like_table("1.98,2.00a,vm\n"));
        assert_eq!(
            TYPED_KEY,
            iomatrix_report::text::imported::PUBLISHED_TABLE,
            "show reads the table where it is kept"
        );
    }
}
