//! bonnie++'s CSV lines: one `bonnie` cell per test with a figure, named as
//! iomatrix's Bonnie tests are (`putc`, `write`, `rewrite`, `getc`, `read`,
//! `seeks`, `seq-create`, ...), its metrics shaped like a native Bonnie result.
//!
//! Layouts, by the first column (`format_version`): `1.98` (bonnie++ 1.98 ..
//! 2.00: `chunk_size` followed by `seeks` and `seek_proc_count`) and `1.96` /
//! `1.97` (the same without those two). Other lines (bonnie++'s text table,
//! the `format_version,...` heading) are skipped. Consecutive lines with the
//! same parameters and seed are repeats of one run (`-x N`); any other line
//! starts a new run.
//!
//! `+++++` (with `+++` for %CPU) is bonnie++'s word for a test that ended too
//! fast to time: such a test becomes an [`Unmeasured`] entry, never a cell. An
//! empty figure is a test that did not run (`-f`, `-s 0`, `-n 0`). bonnie++
//! 2.00 leaves `chunk_size` empty whatever the chunk; [`Options::chunk_size`](iomatrix_import::Options::chunk_size)
//! supplies it, else bonnie++'s default 8k is taken, and the run's notes say so. The CSV has no O_DIRECT (`-D`), write-buffering (`-b`) or RAM
//! (`-r`) column: those stay unknown.
//!
//! Lines written by iomatrix's own bonnie++ front end (`iomatrix bonnie ...`,
//! version field `iomatrix-X.Y.Z`) are read the same way; iomatrix writes the
//! chunk whenever it is not 8k, so an empty chunk there is 8k, and a version
//! ending in `+per-char-bonnie` says the per-char columns are Bonnie's
//! buffered test rather than bonnie++'s one system call per byte.

use crate::{BonnieTest, PerChar, CSV_BONNIE_PER_CHAR, CSV_WRITER_PREFIX, DEFAULT_CHUNK};
use iomatrix_core::{ByteSize, MIB};
use iomatrix_import::{
    imported_row, line_source, unknown_conditions, BadLines, ImportError, ImportedCell, ImportedRun, Options,
    Unmeasured,
};
use iomatrix_store::CellRow;
use serde_json::{json, Value};

/// Column positions of one CSV layout (0-based).
struct Layout {
    putc: usize,
    num_files: usize,
    seq_create: usize,
    latency: usize,
    names: Vec<&'static str>,
}

const HEAD: [&str; 7] = ["format_version", "bonnie_version", "name", "concurrency", "seed", "file_size", "chunk_size"];
const BODY: [&str; 29] = [
    "putc",
    "putc_cpu",
    "put_block",
    "put_block_cpu",
    "rewrite",
    "rewrite_cpu",
    "getc",
    "getc_cpu",
    "get_block",
    "get_block_cpu",
    "seeks",
    "seeks_cpu",
    "num_files",
    "max_size",
    "min_size",
    "num_dirs",
    "file_chunk_size",
    "seq_create",
    "seq_create_cpu",
    "seq_stat",
    "seq_stat_cpu",
    "seq_del",
    "seq_del_cpu",
    "ran_create",
    "ran_create_cpu",
    "ran_stat",
    "ran_stat_cpu",
    "ran_del",
    "ran_del_cpu",
];
const LATENCIES: [&str; 12] = [
    "putc_latency",
    "put_block_latency",
    "rewrite_latency",
    "getc_latency",
    "get_block_latency",
    "seeks_latency",
    "seq_create_latency",
    "seq_stat_latency",
    "seq_del_latency",
    "ran_create_latency",
    "ran_stat_latency",
    "ran_del_latency",
];

impl Layout {
    fn for_version(v: &str) -> Option<Layout> {
        let seek_params = match v {
            "1.98" => true,
            "1.96" | "1.97" => false,
            _ => return None,
        };
        let mut names: Vec<&'static str> = HEAD.to_vec();
        if seek_params {
            names.extend(["seek_count", "seek_proc_count"]);
        }
        let putc = names.len();
        names.extend(BODY);
        let latency = names.len();
        names.extend(LATENCIES);
        Some(Layout { putc, num_files: putc + 12, seq_create: putc + 17, latency, names })
    }

    /// Columns every record of this layout has (latencies may be missing).
    fn required(&self) -> usize {
        self.latency
    }
}

fn version_like(s: &str) -> bool {
    !s.is_empty() && s.split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// A line that starts like a bonnie++ CSV record (for sniffing: a version
/// first and enough columns).
pub fn looks_like_record(line: &str) -> bool {
    let fields: Vec<&str> = line.trim().split(',').collect();
    fields.len() >= 20 && version_like(fields[0].trim())
}

/// One parsed CSV record.
struct Record {
    line: usize,
    /// Everything that makes records of one run alike.
    key: Vec<String>,
    format_version: String,
    version: String,
    name: String,
    concurrency: usize,
    seed: Option<u64>,
    size: Option<u64>,
    chunk: Option<u64>,
    seeks: Option<u64>,
    seekers: Option<u64>,
    files: u64,
    file_max: String,
    file_min: String,
    num_dirs: Option<u64>,
    file_chunk: Option<u64>,
    /// (test, figure, %CPU, max latency in ns)
    figures: Vec<(BonnieTest, Figure, Option<u64>)>,
}

enum Figure {
    Measured { per_sec: f64, cpu: f64 },
    TooFast,
}

pub fn parse(text: &str, options: &Options) -> Result<Vec<ImportedRun>, ImportError> {
    let mut records = Vec::new();
    let mut bad = BadLines::new(options);
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim().trim_end_matches('\r');
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() < 2 || !version_like(fields[0]) {
            // bonnie++'s text table, the heading line, blank lines; but a line of a record's
            // width is a record that cannot be read.
            if fields.len() >= 20 && fields[0] != "format_version" {
                bad.bad(
                    ImportError::in_field(
                        "column 1 (format_version)",
                        format!(
                            "'{}' is not a format version (1.96, 1.97 or 1.98): not a bonnie++ CSV record",
                            fields[0]
                        ),
                    )
                    .with_line(i + 1),
                )?;
            }
            continue;
        }
        match record(i + 1, &fields) {
            Ok(r) => records.push(r),
            Err(e) => bad.bad(e)?,
        }
    }
    if records.is_empty() {
        return Err(ImportError::new(
            "no bonnie++ CSV line found (a line such as 1.98,2.00a,host,1,...: bonnie++ prints it at the end of a run, \
             alone with -q)",
        ));
    }
    let mut runs = Vec::new();
    let mut start = 0;
    for i in 1..=records.len() {
        if i == records.len() || records[i].key != records[start].key {
            runs.push(run(&records[start..i], options, &bad.lines));
            start = i;
        }
    }
    Ok(runs)
}

fn record(line: usize, f: &[&str]) -> Result<Record, ImportError> {
    let layout = Layout::for_version(f[0]).ok_or_else(|| {
        ImportError::in_field(
            "column 1 (format_version)",
            format!("bonnie++ CSV format '{}' is not one iomatrix reads (1.96, 1.97 or 1.98)", f[0]),
        )
        .with_line(line)
    })?;
    if f.len() < layout.required() {
        return Err(ImportError::at_line(
            line,
            format!(
                "a bonnie++ {} CSV line has at least {} columns, this one {} (truncated?)",
                f[0],
                layout.required(),
                f.len()
            ),
        ));
    }
    let err = |col: usize, why: String| column_error(&layout, line, col, why);
    let int = |col: usize| -> Result<Option<u64>, ImportError> {
        match f[col] {
            "" => Ok(None),
            s => s.parse::<u64>().map(Some).map_err(|_| err(col, format!("'{s}' is not a whole number"))),
        }
    };
    let concurrency = int(3)?.filter(|c| *c > 0).ok_or_else(|| err(3, "missing: bonnie++ writes 1 or more".into()))?;
    let (size, mut chunk) = match f[5] {
        "" => (None, None),
        s => {
            let (size, chunk) = s.split_once(':').map_or((s, None), |(a, b)| (a, Some(b)));
            let size = ByteSize::parse_with_default_unit(size, MIB).map_err(|e| err(5, e.to_string()))?.bytes();
            let chunk = chunk.map(|c| ByteSize::parse_with_default_unit(c, 1).map_err(|e| err(5, e.to_string())));
            (Some(size), chunk.transpose()?.map(ByteSize::bytes))
        }
    };
    if !f[6].is_empty() {
        chunk = Some(ByteSize::parse_with_default_unit(f[6], 1).map_err(|e| err(6, e.to_string()))?.bytes());
    }
    let (seeks, seekers) = if layout.putc == 9 { (int(7)?, int(8)?) } else { (None, None) };
    let figures = figures_of(line, f, &layout)?;
    let key: Vec<String> =
        (0..layout.putc).chain(layout.num_files..layout.num_files + 5).map(|i| f[i].to_string()).collect();
    Ok(Record {
        line,
        key,
        format_version: f[0].to_string(),
        version: f[1].to_string(),
        name: f[2].to_string(),
        concurrency: concurrency as usize,
        seed: int(4)?,
        size,
        chunk,
        seeks,
        seekers,
        files: files(f[layout.num_files]).map_err(|why| err(layout.num_files, why))?,
        file_max: f[layout.num_files + 1].to_string(),
        file_min: f[layout.num_files + 2].to_string(),
        num_dirs: int(layout.num_files + 3)?,
        file_chunk: int(layout.num_files + 4)?,
        figures,
    })
}

/// The error of column `col` (0-based) of `line`.
fn column_error(layout: &Layout, line: usize, col: usize, why: String) -> ImportError {
    ImportError::in_field(format!("column {} ({})", col + 1, layout.names.get(col).unwrap_or(&"?")), why)
        .with_line(line)
}

/// The tests' figures of a CSV line: per test that ran, its rate (or +++++), %CPU and latency.
fn figures_of(line: usize, f: &[&str], layout: &Layout) -> Result<Vec<(BonnieTest, Figure, Option<u64>)>, ImportError> {
    let err = |col: usize, why: String| column_error(layout, line, col, why);
    let mut figures = Vec::new();
    let tests = BonnieTest::DATA
        .iter()
        .enumerate()
        .map(|(k, t)| (*t, layout.putc + 2 * k, k))
        .chain(BonnieTest::FILES.iter().enumerate().map(|(k, t)| (*t, layout.seq_create + 2 * k, k + 6)));
    for (test, col, lat_index) in tests {
        let (rate, cpu) = (f[col], f[col + 1]);
        let latency_col = layout.latency + lat_index;
        let latency = match f.get(latency_col).copied().unwrap_or("") {
            "" => None,
            s if s.bytes().all(|b| b == b'+') => None,
            s => Some(latency_ns(s).ok_or_else(|| err(latency_col, format!("'{s}' is not a latency like 250us")))?),
        };
        let figure = if rate.is_empty() {
            if !cpu.is_empty() {
                return Err(err(col + 1, format!("%CPU '{cpu}' for a test without a figure")));
            }
            continue; // the test did not run
        } else if rate.bytes().all(|b| b == b'+') {
            Figure::TooFast
        } else {
            let per_sec = rate
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| err(col, format!("'{rate}' is not a figure (a number, or +++++)")))?;
            let cpu = cpu
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| err(col + 1, format!("'{cpu}' is not a %CPU figure beside the measured {rate}")))?;
            Figure::Measured { per_sec, cpu }
        };
        figures.push((test, figure, latency));
    }
    Ok(figures)
}

/// bonnie++'s file count in units of 1024 (`16`), or iomatrix's exact
/// count for one bonnie++ cannot express (`100f`).
fn files(field: &str) -> Result<u64, String> {
    let (digits, unit) = match field.strip_suffix('f') {
        Some(exact) => (exact, 1),
        None => (field, 1024),
    };
    match digits {
        "" if unit == 1024 => Ok(0),
        d => d.parse::<u64>().map(|n| n.saturating_mul(unit)).map_err(|_| {
            format!("'{field}' is not a number of files (bonnie++'s count in units of 1024, or iomatrix's 100f)")
        }),
    }
}

/// `10890us`, `24ms`, `2s`, `800ns` in nanoseconds.
fn latency_ns(s: &str) -> Option<u64> {
    let digits = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let number: f64 = s[..digits].parse().ok()?;
    let scale = match &s[digits..] {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    Some((number * scale).round() as u64)
}

/// A Bonnie cell's metrics as an import knows them: the figure per second and its %CPU, with the
/// counts a native run stores listed as not in the source.
pub(crate) fn imported_metrics(test: BonnieTest, repeat: u32, per_sec: f64, cpu: f64) -> Value {
    json!({
        // As a native Bonnie result serialises its test (`putc-write`); the cell's test is its name.
        "test": serde_json::to_value(test).unwrap_or(Value::Null),
        "repeat": repeat,
        "bytes": 0,
        "ops": 0,
        "writes": 0,
        "wall_ns": 0,
        "user_ns": 0,
        "sys_ns": 0,
        "per_sec": per_sec,
        "unit": test.unit(),
        "cpu_percent": cpu,
        "not_in_source": ["bytes", "ops", "writes", "wall_ns", "user_ns", "sys_ns"],
    })
}

fn run(records: &[Record], options: &Options, bad_lines: &[iomatrix_import::BadLine]) -> ImportedRun {
    let first = &records[0];
    // iomatrix writes the chunk whenever it is not the default 8k; bonnie++ 2.00 never writes it,
    // and most runs keep its default 8k: so is the chunk taken, and said where it came from.
    let by_iomatrix = first.version.starts_with(CSV_WRITER_PREFIX);
    let chunk = first.chunk.or(options.chunk_size).or(first.size.is_some().then_some(DEFAULT_CHUNK.bytes()));
    let per_char =
        if by_iomatrix && first.version.ends_with(CSV_BONNIE_PER_CHAR) { PerChar::Bonnie } else { PerChar::BonniePlus };
    let (cells, unmeasured) = cells_of(records, chunk);
    let mut conditions = unknown_conditions(super::BONNIE.suite);
    conditions.insert("clients".into(), Value::from(first.concurrency));
    let per_char_ran = cells.iter().any(|c| c.test == "putc" || c.test == "getc")
        || unmeasured.iter().any(|u| u.test == "putc" || u.test == "getc");
    if per_char_ran {
        conditions.insert(
            "per_char".into(),
            Value::from(match (per_char, by_iomatrix) {
                (PerChar::Bonnie, _) => "bonnie: putc/getc through a stdio-like buffer (iomatrix's --per-char bonnie)",
                (PerChar::BonniePlus, true) => {
                    "bonnie++: one write(2)/read(2) system call per byte (iomatrix's --per-char bonnie++)"
                }
                (PerChar::BonniePlus, false) => "bonnie++'s own per-char test (2.00a: one write(2)/read(2) per byte)",
            }),
        );
    }
    conditions.insert("largest_file_bytes".into(), first.size.map(Value::from).unwrap_or(Value::Null));
    let unknown = vec![
        "backend".to_string(),
        "direct/cached (bonnie++'s -D is not in its CSV)".into(),
        "write buffering (bonnie++'s -b is not in its CSV)".into(),
        "RAM (bonnie++'s -r is not in its CSV), so file size vs RAM".into(),
        "file system and mount".into(),
    ];
    let notes = notes_of(first, options, chunk, by_iomatrix);
    let number = |s: &str| s.parse::<u64>().ok();
    ImportedRun {
        labels: Vec::new(),
        format: super::BONNIE,
        tool_version: (!first.version.is_empty()).then(|| first.version.clone()),
        host: (!first.name.is_empty()).then(|| first.name.clone()),
        measured_at: None,
        plan: json!({
            "tool": "bonnie++",
            "csv_format": first.format_version,
            "size": first.size,
            "chunk": chunk,
            "chunk_from": match (first.chunk, options.chunk_size) {
                (Some(_), _) => Some("the CSV"),
                (None, Some(_)) => Some("--bonnie-chunk"),
                (None, None) if by_iomatrix && chunk.is_some() => Some("iomatrix's CSV (empty: the default 8k)"),
                (None, None) if chunk.is_some() => Some("bonnie++'s default 8k (the CSV leaves it empty)"),
                (None, None) => None,
            },
            "per_char": per_char,
            "files": first.files,
            // bonnie++ leaves -n's sizes empty at its default, 0 (empty files), as a native plan's 0.
            "file_max": if first.file_max.is_empty() { Some(0) } else { number(&first.file_max) },
            "file_min": if first.file_min.is_empty() { Some(0) } else { number(&first.file_min) },
            // -f leaves the per-char columns empty (neither a figure nor +++++).
            "skip_per_char": first.size.map(|_| !per_char_ran),
            "file_max_text": first.file_max,
            "file_min_text": first.file_min,
            "num_dirs": first.num_dirs,
            "file_chunk_size": first.file_chunk,
            "seeks": first.seeks,
            "seekers": first.seekers,
            "seed": first.seed,
            "concurrency": first.concurrency,
            "repeats": records.len(),
            "lines": records.iter().map(|r| r.line).collect::<Vec<_>>(),
        }),
        environment: if first.name.is_empty() { json!({}) } else { json!({ "host": first.name }) },
        conditions,
        unknown,
        notes,
        cells,
        unmeasured,
        skipped: Vec::new(),
        bad_lines: bad_lines.to_vec(),
    }
}

/// The cells of a setup's lines (`records`, its repeats) and the tests too fast to time.
fn cells_of(records: &[Record], chunk: Option<u64>) -> (Vec<ImportedCell>, Vec<Unmeasured>) {
    let first = &records[0];
    let mut cells = Vec::new();
    let mut unmeasured = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let repeat = i as u32 + 1;
        for (test, figure, latency) in &r.figures {
            match figure {
                Figure::TooFast => unmeasured.push(Unmeasured {
                    test: test.name().to_string(),
                    repeat,
                    why: format!(
                        "bonnie++ printed +++++ (line {}): the test ended too fast for bonnie++ to time it",
                        r.line
                    ),
                }),
                Figure::Measured { per_sec, cpu } => {
                    let mut metrics = imported_metrics(*test, repeat, *per_sec, *cpu);
                    if let (Some(ns), Some(m)) = (latency, metrics.as_object_mut()) {
                        // bonnie++'s latency column: the longest single operation.
                        m.insert("max_latency_ns".into(), Value::from(*ns));
                    }
                    cells.push(ImportedCell {
                        line: Some(r.line),
                        source: line_source(r.line),
                        row: CellRow {
                            test: test.name().to_string(),
                            file_size: first.size,
                            record_size: chunk,
                            clients: first.concurrency,
                            kib_per_sec: if test.unit() == "KB/s" { *per_sec } else { 0.0 },
                            cpu_percent: Some(*cpu),
                            metrics,
                            ..imported_row()
                        },
                    });
                }
            }
        }
    }
    (cells, unmeasured)
}

/// What the run's notes say of its writer and of where its chunk size came from.
fn notes_of(first: &Record, options: &Options, chunk: Option<u64>, by_iomatrix: bool) -> Vec<String> {
    let mut notes = Vec::new();
    if by_iomatrix {
        notes.push(format!(
            "written by iomatrix's bonnie++ front end ({}), not by bonnie++ itself; its runs are in the database it \
             ran with, in full",
            first.version
        ));
    }
    match (first.chunk, options.chunk_size) {
        (Some(_), _) => {}
        (None, None) if by_iomatrix => {}
        (None, Some(c)) => {
            notes.push(format!("chunk size {} as given with --bonnie-chunk (the CSV leaves it empty)", ByteSize(c)));
        }
        (None, None) if chunk.is_some() => notes.push(format!(
            "chunk size {DEFAULT_CHUNK}: bonnie++'s default, taken because the CSV leaves it empty (bonnie++ 2.00 does whatever \
             -s SIZE:CHUNK gave); if the run used another, import again with --bonnie-chunk SIZE"
        )),
        (None, None) => {}
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bonnie++ 2.00a, `-s 16 -r 8 -n 1 -q`: putc and getc measured, the rest too fast.
    const REAL: &str = "1.98,2.00a,vm,1,1795365941,16M,,8192,5,3167,86,+++++,+++,+++++,+++,4312,78,+++++,+++,+++++,+++,1,,,,,+++++,+++,+++++,+++,+++++,+++,+++++,+++,+++++,+++,+++++,+++,10890us,4261us,24us,5478us,20us,5309us,72us,32us,183us,165us,21us,478us";

    #[test]
    fn measured_tests_are_cells_and_too_fast_ones_are_not() {
        let runs = parse(REAL, &Options::default()).unwrap();
        assert_eq!(runs.len(), 1);
        let run = &runs[0];
        assert_eq!(run.tool_version.as_deref(), Some("2.00a"));
        assert_eq!(run.host.as_deref(), Some("vm"));
        let tests: Vec<&str> = run.cells.iter().map(|c| c.test.as_str()).collect();
        assert_eq!(tests, ["putc", "getc"]);
        let putc = &run.cells[0];
        assert_eq!(putc.kib_per_sec, 3167.0);
        assert_eq!(putc.cpu_percent, Some(86.0));
        assert_eq!(putc.file_size, Some(16 << 20));
        assert_eq!(putc.record_size, Some(8192), "bonnie++'s default chunk: the CSV leaves it empty");
        assert_eq!(putc.metrics["per_sec"], 3167.0);
        assert_eq!(putc.metrics["unit"], "KB/s");
        assert_eq!(putc.metrics["max_latency_ns"], 10_890_000);
        assert_eq!(run.cells[1].metrics["max_latency_ns"], 5_478_000);
        // The metrics read back as a native Bonnie result.
        let r: crate::BonnieResult = serde_json::from_value(putc.metrics.clone()).unwrap();
        assert_eq!((r.test, r.repeat, r.per_sec), (BonnieTest::PutcWrite, 1, 3167.0));
        let too_fast: Vec<&str> = run.unmeasured.iter().map(|u| u.test.as_str()).collect();
        assert_eq!(
            too_fast,
            [
                "write",
                "rewrite",
                "read",
                "seeks",
                "seq-create",
                "seq-stat",
                "seq-delete",
                "random-create",
                "random-stat",
                "random-delete"
            ]
        );
        // bonnie++ 2.00 leaves the chunk empty: its default 8k is taken, and said to be.
        assert!(!run.unknown.iter().any(|u| u.starts_with("chunk size")), "{:?}", run.unknown);
        assert_eq!(run.cells[0].record_size, Some(8192));
        assert_eq!(run.plan["chunk"], 8192);
        assert_eq!(run.plan["chunk_from"], "bonnie++'s default 8k (the CSV leaves it empty)");
        assert!(run.notes.iter().any(|n| n.contains("bonnie++'s default") && n.contains("--bonnie-chunk")));
        assert_eq!(run.plan["files"], 1024);
        assert_eq!(run.plan["seeks"], 8192);
        assert_eq!(run.plan["seekers"], 5);
        assert_eq!(run.conditions["clients"], 1);
        assert!(run.conditions["direct"].is_null());
    }

    #[test]
    fn repeats_group_and_a_new_setup_starts_a_new_run() {
        let header = "format_version,bonnie_version,name,concurrency,seed,file_size,io_chunk_size,putc,putc_cpu";
        let second = REAL.replace("3167,86", "3000,80");
        let other = REAL.replace(",1795365941,", ",7,");
        let text = format!("Version 2.00a  ------Sequential Output------\n{header}\n{REAL}\n{second}\n{other}\n");
        let runs = parse(&text, &Options { chunk_size: Some(8192), ..Options::default() }).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].plan["repeats"], 2);
        assert_eq!(runs[0].cells.len(), 4);
        assert_eq!(runs[0].cells[2].metrics["repeat"], 2);
        assert_eq!(runs[0].cells[2].kib_per_sec, 3000.0);
        assert_eq!(runs[0].cells[0].record_size, Some(8192));
        assert!(runs[0].notes[0].contains("--bonnie-chunk"));
        assert_eq!(runs[1].plan["seed"], 7);
    }

    #[test]
    fn the_older_layout_and_file_tests() {
        // 1.97: no seek count and seekers; -f (no per-char tests); file tests measured.
        let line = "1.97,1.97,box,2,99,1G,,,,90000,20,40000,10,,,120000,15,350.5,3,16,,,,,1500,90,+++++,+++,2000,80,1400,88,30000,99,1800,85";
        let runs = parse(line, &Options::default()).unwrap();
        let run = &runs[0];
        assert_eq!(run.conditions["clients"], 2);
        let by = |t: &str| run.cells.iter().find(|c| c.test == t).unwrap();
        assert_eq!(by("write").kib_per_sec, 90000.0);
        assert_eq!(by("seeks").kib_per_sec, 0.0);
        assert_eq!(by("seeks").metrics["per_sec"], 350.5);
        assert_eq!(by("seeks").metrics["unit"], "seeks/s");
        assert_eq!(by("seq-create").metrics["unit"], "files/s");
        assert_eq!(by("random-delete").metrics["per_sec"], 1800.0);
        assert!(run.cells.iter().all(|c| c.test != "putc" && c.test != "getc"));
        assert_eq!(run.unmeasured.len(), 1);
        assert_eq!(run.unmeasured[0].test, "seq-stat");
        assert_eq!(run.cells[0].file_size, Some(1 << 30));
        assert_eq!(run.plan["files"], 16 * 1024);
    }

    #[test]
    fn lines_written_by_iomatrix() {
        // `iomatrix bonnie -d DIR -s 16 -r 8 -n 1 -u root -q` (debug build, ext4 on /var/tmp).
        let line = "1.98,iomatrix-0.1.0,vm,1,184828286,16M,,8192,3,1143,99,+++++,+++,+++++,+++,1734,98,+++++,+++,\
                    +++++,+++,1,,,,,+++++,+++,+++++,+++,+++++,+++,+++++,+++,+++++,+++,+++++,+++,,,,,,,,,,,,";
        let runs = parse(line, &Options::default()).unwrap();
        let run = &runs[0];
        assert_eq!(run.tool_version.as_deref(), Some("iomatrix-0.1.0"));
        // iomatrix writes the chunk whenever it is not 8k: empty is 8k, not unknown.
        assert_eq!(run.cells[0].record_size, Some(8192));
        assert!(!run.unknown.iter().any(|u| u.starts_with("chunk size")), "{:?}", run.unknown);
        assert!(run.notes.iter().any(|n| n.contains("iomatrix's bonnie++ front end")));
        assert_eq!(run.plan["per_char"], "bonnie++");
        assert!(run.conditions["per_char"].as_str().unwrap().contains("one write(2)/read(2) system call per byte"));
        assert_eq!((run.cells[0].kib_per_sec, run.cells[1].kib_per_sec), (1143.0, 1734.0));
        assert_eq!(run.plan["seekers"], 3);
        // Bonnie's per-char test, a chunk, and a file count bonnie++ cannot express.
        let other = line
            .replace("iomatrix-0.1.0", "iomatrix-0.1.0+per-char-bonnie")
            .replace("16M,,", "16M,4096,")
            .replace(",1,,,,,+++++", ",100f,,,,,+++++");
        let run = &parse(&other, &Options::default()).unwrap()[0];
        assert_eq!(run.plan["per_char"], "bonnie");
        assert_eq!(run.cells[0].record_size, Some(4096));
        assert_eq!(run.plan["files"], 100);
        let e = parse(&line.replace(",1,,,,,+++++", ",1x,,,,,+++++"), &Options::default()).unwrap_err();
        assert!(e.to_string().contains("column 22 (num_files)"), "{e}");
    }

    #[test]
    fn malformed_lines_name_line_and_column() {
        let e = parse(&format!("junk\n{}", REAL.replace("4312,78", "4312,x")), &Options::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2, column 17 (getc_cpu): 'x' is not a %CPU figure beside the measured 4312 (fix the line, or give \
             --skip-bad-lines to store the rest and record the lines skipped)"
        );
        let runs = parse(
            &format!("junk\n{}", REAL.replace("4312,78", "4312,x")),
            &Options { skip_bad_lines: true, ..Options::default() },
        );
        assert!(runs.unwrap_err().to_string().contains("no bonnie++ CSV line found"), "its only line skipped");
        let two = format!("{REAL}\n{}\n{}", REAL.replace("4312,78", "4312,x"), REAL.replace(",1795365941,", ",7,"));
        let runs = parse(&two, &Options { skip_bad_lines: true, ..Options::default() }).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].bad_lines.iter().map(|b| b.line).collect::<Vec<_>>(), [2]);
        assert!(runs[0].bad_lines[0].why.starts_with("column 17 (getc_cpu): 'x'"), "{:?}", runs[0].bad_lines);
        assert_eq!((runs[0].cells[0].line, runs[1].cells[0].line), (Some(1), Some(3)));
        // A line of a record's width that is none.
        let e = parse(&format!("{REAL}\n{}", REAL.replacen("1.98", "x.98", 1)), &Options::default()).unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        let e = parse(&REAL[..60], &Options::default()).unwrap_err();
        assert!(e.to_string().starts_with("line 1: a bonnie++ 1.98 CSV line has at least 38 columns"), "{e}");
        let e = parse(&REAL.replacen("1.98", "1.03", 1), &Options::default()).unwrap_err();
        assert!(e.to_string().contains("column 1 (format_version)"), "{e}");
        let e = parse(&REAL.replace("16M", "sixteen"), &Options::default()).unwrap_err();
        assert!(e.to_string().contains("column 6 (file_size)"), "{e}");
        let e = parse(&REAL.replace("10890us", "10890 parsecs"), &Options::default()).unwrap_err();
        assert!(e.to_string().contains("column 39 (putc_latency)"), "{e}");
        assert!(parse("hello\n", &Options::default()).unwrap_err().to_string().contains("no bonnie++ CSV line"));
        assert_eq!(latency_ns("2s"), Some(2_000_000_000));
        assert_eq!(latency_ns("1.5ms"), Some(1_500_000));
        assert_eq!(latency_ns("5"), None);
    }
}
