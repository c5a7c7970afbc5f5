//! Iometer's results file (the CSV its GUI and `iometer /r FILE` write; as
//! Iometer 2006.07.27 and 1.1.0 write it): an `'Access specifications`
//! section (each spec's name, then `'size,% of size,% reads,% random,...`
//! and one line per part of the spec), then per spec a `'Results` section:
//! the column line (`'Target Type,Target Name,Access Specification Name,...`)
//! and one row per target type: `ALL` (the whole test), `MANAGER`,
//! `PROCESSOR`, `WORKER`, `DISK`.
//!
//! Each spec's `ALL` row becomes one `access` cell: IOPS, MB/s, response
//! times (Iometer's milliseconds), CPU %, outstanding I/O (`Queue Depth`),
//! bytes and I/Os; the block size and read/random mix come from the spec's
//! definition. The per-manager, worker and disk rows are counted in the
//! notes, not stored: the `ALL` row is their sum. Columns are found by name,
//! so 2006.07.27's `MBps` and 1.1.0's `MBps (Binary)` / `MBps (Decimal)`
//! (and later `MiBps (Binary)`) both read. Iometer's MBps of 2006 and its
//! Binary column count 2^20 bytes; Decimal 10^6.

use iomatrix_core::figures::{IoMix, QUEUE_DEPTH, RANDOM_PERCENT, READ_PERCENT};
use iomatrix_import::{
    imported_row, line_source, unknown_conditions, BadLines, ImportError, ImportedCell, ImportedRun, Options,
};
use iomatrix_store::CellRow;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

const RESULTS_COLUMNS: &str = "'Target Type,Target Name,Access Specification Name";

/// The rows of a results section, by their first field: `ALL` is the spec's whole test, the others
/// its parts.
const ROW_KINDS: [&str; 5] = ["ALL", "MANAGER", "PROCESSOR", "WORKER", "DISK"];

/// Iometer's `% CPU Utilization` is the share of all the machine's CPUs: at most 100.
const MAX_CPU_UTILIZATION: f64 = 100.0;

/// Whether `text` is an Iometer results file.
pub fn looks_like_results(text: &str) -> bool {
    text.lines().any(|l| l.trim_end() == "'Results") && text.lines().any(|l| l.starts_with(RESULTS_COLUMNS))
}

/// One line of an access spec: size, % of size, % reads, % random.
#[derive(Debug, Clone, Copy)]
struct Part {
    size: u64,
    reads: u64,
    random: u64,
}

pub fn parse(text: &str, options: &Options) -> Result<ImportedRun, ImportError> {
    let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
    let mut read = Sections {
        lines: &lines,
        bad: BadLines::new(options),
        skipped: Vec::new(),
        specs: BTreeMap::new(),
        cells: Vec::new(),
        others: BTreeMap::new(),
    };
    let mut version = None;
    let mut started = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let next = lines.get(i + 1).copied().unwrap_or("");
        match line {
            "'Version" => version = Some(next.split(',').next().unwrap_or("").trim().to_string()),
            "'Time Stamp" if started.is_none() => started = Some(next.trim().to_string()),
            "'Access specification name,default assignment" => {
                i = read.access_spec(i)?;
                continue;
            }
            _ if line.starts_with(RESULTS_COLUMNS) => {
                i = read.results(i)?;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    read.run(version, started)
}

/// What the sections of a results file hold, read so far.
struct Sections<'a> {
    lines: &'a [&'a str],
    bad: BadLines,
    skipped: Vec<String>,
    /// Each access spec's parts, by its name.
    specs: BTreeMap<String, Vec<Part>>,
    cells: Vec<ImportedCell>,
    /// How many rows of each kind but `ALL` the results sections have.
    others: BTreeMap<String, usize>,
}

impl Sections<'_> {
    /// Reads the access spec whose name line follows line `i` (its header), and returns the line
    /// after its parts.
    fn access_spec(&mut self, i: usize) -> Result<usize, ImportError> {
        let lines = self.lines;
        let next = lines.get(i + 1).copied().unwrap_or("");
        let name = next.rsplit_once(',').map(|(n, _)| n).unwrap_or(next).trim().to_string();
        let mut parts = Vec::new();
        let mut j = i + 2;
        if lines.get(j).is_some_and(|l| l.starts_with("'size,")) {
            j += 1;
            while let Some(l) = lines.get(j).filter(|l| !l.starts_with('\'') && !l.trim().is_empty()) {
                match spec_part(l, j + 1, &name) {
                    Ok(part) => parts.push(part),
                    Err(e) => self.bad.bad(e)?,
                }
                j += 1;
            }
        }
        self.specs.insert(name, parts);
        Ok(j)
    }

    /// Reads the results section whose column line is line `i`: its `ALL` row as a cell, its
    /// other rows counted; returns the line after its rows.
    fn results(&mut self, i: usize) -> Result<usize, ImportError> {
        let lines = self.lines;
        let line = lines[i];
        let columns: Vec<&str> = line.trim_start_matches('\'').split(',').map(str::trim).collect();
        let spec_column = columns.iter().position(|c| *c == "Access Specification Name");
        let mut j = i + 1;
        // The section's ALL row (line), and the spec its other rows name.
        let (mut all, mut named): (Option<usize>, Option<String>) = (None, None);
        while let Some(row) = lines.get(j).filter(|l| !l.starts_with('\'') && !l.trim().is_empty()) {
            let fields: Vec<&str> = row.split(',').map(str::trim).collect();
            let kind = fields.first().copied().unwrap_or("");
            if named.is_none() {
                named = spec_column.and_then(|k| fields.get(k)).filter(|s| !s.is_empty()).map(|s| s.to_string());
            }
            if kind == "ALL" {
                if let Some(first) = all {
                    return Err(ImportError::at_line(
                        j + 1,
                        format!("a second ALL row in the 'Results section of line {} (the first: line {first})", i + 1),
                    ));
                }
                all = Some(j + 1);
                match cell(j + 1, &columns, &fields, &self.specs) {
                    Ok(c) => self.cells.push(c),
                    Err(e) => {
                        self.bad.bad(e)?;
                        self.skipped.push(format!(
                            "access spec '{}': its ALL row (line {}) could not be read",
                            named.as_deref().unwrap_or("?"),
                            j + 1
                        ));
                    }
                }
            } else if ROW_KINDS.contains(&kind) {
                *self.others.entry(kind.to_string()).or_default() += 1;
            } else {
                let shown: String = kind.chars().take(40).collect();
                self.bad.bad(ImportError::at_line(
                    j + 1,
                    format!(
                        "'{}' is not a row of Iometer's results (ALL, MANAGER, PROCESSOR, WORKER or DISK)",
                        iomatrix_core::text::printable(&shown)
                    ),
                ))?;
            }
            j += 1;
        }
        if all.is_none() {
            return Err(ImportError::at_line(
                i + 1,
                format!(
                    "the results of access spec '{}' (this 'Results section) have no ALL row: Iometer writes \
                     one per spec, the whole test's figures, and iomatrix stores a spec from it (its parts' rows \
                     are not summed in its place)",
                    iomatrix_core::text::printable(named.as_deref().unwrap_or("(unnamed)"))
                ),
            ));
        }
        Ok(j)
    }

    /// The imported run of the sections read, made by Iometer `version` at `started`.
    fn run(self, version: Option<String>, started: Option<String>) -> Result<ImportedRun, ImportError> {
        let Sections { bad, skipped, specs, cells, others, .. } = self;
        if cells.is_empty() {
            return Err(ImportError::new(
                "no 'Results section with an ALL row found (Iometer writes 'Results, the column line \
                 'Target Type,Target Name,Access Specification Name,..., then an ALL row per access spec)",
            ));
        }
        let mut conditions = unknown_conditions(super::IOMETER.suite);
        let workers: Vec<u64> = cells.iter().map(|c| c.clients as u64).collect();
        conditions.insert("clients".into(), workers.iter().max().copied().map(Value::from).unwrap_or(Value::Null));
        let mut notes = vec![format!(
            "one cell per access spec from its ALL row; not stored (the ALL row sums them): {}",
            if others.is_empty() {
                "no other rows".to_string()
            } else {
                others.iter().map(|(k, n)| format!("{n} {k} row(s)")).collect::<Vec<_>>().join(", ")
            }
        )];
        notes.push("response times are Iometer's averages and maxima (no percentiles in its results file)".into());
        Ok(ImportedRun {
            labels: Vec::new(),
            format: super::IOMETER,
            tool_version: version.filter(|v| !v.is_empty()),
            host: None,
            measured_at: started,
            plan: json!({
                "tool": "iometer",
                "access_specs": specs.iter().map(|(name, parts)| json!({
                    "name": name,
                    "parts": parts.iter().map(|p| json!({"size": p.size, "read_percent": p.reads, "random_percent": p.random})).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            }),
            environment: json!({}),
            conditions,
            unknown: vec![
                "machine (the ALL row names none; the MANAGER rows name Iometer's managers)".into(),
                "backend and O_DIRECT (Iometer's own I/O)".into(),
                "RAM, so file size vs RAM; file system and mount; the test file's size".into(),
            ],
            notes,
            cells,
            unmeasured: Vec::new(),
            skipped,
            bad_lines: bad.lines,
        })
    }
}

/// One part of access spec `name` (at `line`): its size, % reads and % random.
fn spec_part(l: &str, line: usize, name: &str) -> Result<Part, ImportError> {
    let f: Vec<&str> = l.split(',').map(str::trim).collect();
    let num = |k: usize, what: &str| -> Result<u64, ImportError> {
        f.get(k)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| ImportError::at_line(line, format!("access spec '{name}': {what} is not a number")))
    };
    let part = Part { size: num(0, "size")?, reads: num(2, "% reads")?, random: num(3, "% random")? };
    if part.reads > 100 || part.random > 100 {
        return Err(ImportError::at_line(
            line,
            format!("access spec '{name}': % reads and % random are shares from 0 to 100"),
        ));
    }
    Ok(part)
}

/// One row of a results section, its fields found by their column's name.
struct Row<'a> {
    line: usize,
    columns: &'a [&'a str],
    fields: &'a [&'a str],
}

impl Row<'_> {
    fn text(&self, name: &str) -> Option<&str> {
        self.columns.iter().position(|c| *c == name).and_then(|k| self.fields.get(k).copied())
    }

    fn number(&self, name: &str) -> Result<Option<f64>, ImportError> {
        match self.text(name).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(v) => v.parse::<f64>().ok().filter(|x| x.is_finite()).map(Some).ok_or_else(|| ImportError {
                line: Some(self.line),
                field: Some(format!("column '{name}'")),
                message: format!("'{v}' is not a number"),
            }),
        }
    }

    /// The first of `names` the row has a number in.
    fn first(&self, names: &[&str]) -> Result<Option<f64>, ImportError> {
        for n in names {
            if let Some(v) = self.number(n)? {
                return Ok(Some(v));
            }
        }
        Ok(None)
    }

    /// A count the row leaves empty is 0; a negative one is no count.
    fn count(&self, name: &str) -> Result<u64, ImportError> {
        match self.number(name)? {
            Some(v) if v < 0.0 => Err(ImportError {
                line: Some(self.line),
                field: Some(format!("column '{name}'")),
                message: format!("{v} is negative: not a count"),
            }),
            v => Ok(v.unwrap_or(0.0) as u64),
        }
    }

    fn ms(&self, name: &str) -> Result<Value, ImportError> {
        Ok(self.number(name)?.map(Value::from).unwrap_or(Value::Null))
    }

    /// As the access table reads a side's latency (mean and max only: Iometer keeps no percentiles).
    fn side(&self, mean: &str, max: &str, count: u64) -> Result<Value, ImportError> {
        let ns = |v: Option<f64>| v.filter(|v| *v > 0.0).map(|v| Value::from(v * 1e6)).unwrap_or(Value::Null);
        Ok(if count == 0 {
            Value::Null
        } else {
            json!({"mean_ns": ns(self.number(mean)?), "max_ns": ns(self.number(max)?), "count": count})
        })
    }
}

/// One spec's `ALL` row as an access cell.
fn cell(
    line: usize,
    columns: &[&str],
    fields: &[&str],
    specs: &BTreeMap<String, Vec<Part>>,
) -> Result<ImportedCell, ImportError> {
    let row = Row { line, columns, fields };
    let spec = row.text("Access Specification Name").unwrap_or("").to_string();
    let mib_per_sec = match row.first(&["MBps (Binary)", "MiBps (Binary)", "MBps"])? {
        Some(v) => v,
        None => row.first(&["MBps (Decimal)"])?.map(|d| d * 1e6 / 1048576.0).ok_or_else(|| {
            ImportError::at_line(line, format!("access spec '{spec}': no MBps column (MBps, or MBps (Binary))"))
        })?,
    };
    let iops = row.number("IOps")?.ok_or_else(|| ImportError::at_line(line, format!("'{spec}': no IOps column")))?;
    let parts = specs.get(&spec).cloned().unwrap_or_default();
    let one = |f: fn(&Part) -> u64| -> Option<u64> {
        let v = parts.first().map(f)?;
        parts.iter().all(|p| f(p) == v).then_some(v)
    };
    let (record_size, read_percent, random_percent) =
        (if parts.len() == 1 { Some(parts[0].size) } else { None }, one(|p| p.reads), one(|p| p.random));
    // Iometer prints -1 where the workers' queue depths differ.
    let queue_depth = row.number("Queue Depth")?.filter(|q| *q >= 1.0).map(|q| q as u64);
    let (bytes_read, bytes_written) = (row.count("Bytes Read")?, row.count("Bytes Written")?);
    let (read_ios, write_ios) = (row.count("Read I/Os")?, row.count("Write I/Os")?);
    let workers = row.count("# Workers")?.max(1) as usize;
    // An empty field is unknown (null), never 0.
    let cpu = row.number("% CPU Utilization")?;
    if let Some(c) = cpu.filter(|c| *c > MAX_CPU_UTILIZATION) {
        return Err(ImportError {
            line: Some(line),
            field: Some("column '% CPU Utilization'".into()),
            message: format!("{c} is above {MAX_CPU_UTILIZATION}: Iometer's CPU utilization is a share of the machine"),
        });
    }
    let read = row.side("Average Read Response Time", "Maximum Read Response Time", read_ios)?;
    let write = row.side("Average Write Response Time", "Maximum Write Response Time", write_ios)?;
    let (read_iops, write_iops) = (row.number("Read IOps")?, row.number("Write IOps")?);
    let mut metrics = json!({
        "read": read,
        "write": write,
        "iops": iops,
        "mib_per_sec": mib_per_sec,
        "read_iops": read_iops,
        "write_iops": write_iops,
        "read_bytes": bytes_read,
        "write_bytes": bytes_written,
        "clients": workers,
        "iometer": iometer_columns(&row, &spec)?,
        "not_in_source": if cpu.is_some() {
            json!(["wall_ns", "user_ns", "sys_ns", "file_size"])
        } else {
            json!(["wall_ns", "user_ns", "sys_ns", "file_size", "cpu"])
        },
    });
    if let Some(m) = metrics.as_object_mut() {
        m.extend(mix_parts(read_percent, random_percent, queue_depth));
    }
    Ok(ImportedCell {
        line: Some(line),
        source: line_source(line),
        row: CellRow {
            test: "access".into(),
            file_size: None,
            record_size,
            clients: workers,
            bytes: bytes_read + bytes_written,
            ops: read_ios + write_ios,
            kib_per_sec: mib_per_sec * 1024.0,
            cpu_percent: cpu,
            metrics,
            ..imported_row()
        },
    })
}

/// Iometer's own columns of an `ALL` row of access spec `spec`, kept as it wrote them.
fn iometer_columns(row: &Row, spec: &str) -> Result<Value, ImportError> {
    Ok(json!({
        "access_spec": spec,
        "line": row.line,
        "managers": row.number("# Managers")?,
        "workers": row.number("# Workers")?,
        "disks": row.number("# Disks")?,
        "errors": row.number("Errors")?,
        "avg_response_ms": row.ms("Average Response Time")?,
        "avg_read_response_ms": row.ms("Average Read Response Time")?,
        "avg_write_response_ms": row.ms("Average Write Response Time")?,
        "max_response_ms": row.ms("Maximum Response Time")?,
        "max_read_response_ms": row.ms("Maximum Read Response Time")?,
        "max_write_response_ms": row.ms("Maximum Write Response Time")?,
    }))
}

/// The access mix as iomatrix's access cells store it ([`IoMix`]), each part Iometer's row
/// leaves unknown (workers at different depths, a spec of parts that differ) stored as null.
fn mix_parts(read_percent: Option<u64>, random_percent: Option<u64>, queue_depth: Option<u64>) -> Map<String, Value> {
    let whole = IoMix {
        read_percent: read_percent.unwrap_or(0),
        random_percent: random_percent.unwrap_or(0),
        queue_depth: queue_depth.unwrap_or(0),
        load: None,
    };
    let Value::Object(mut parts) = json!(whole) else { return Map::new() };
    for (known, metric) in [(read_percent, READ_PERCENT), (random_percent, RANDOM_PERCENT), (queue_depth, QUEUE_DEPTH)]
    {
        if known.is_none() {
            parts.insert(metric.id.key().into(), Value::Null);
        }
    }
    parts
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_part_of_the_mix_the_row_leaves_unknown_is_stored_null() {
        let parts = mix_parts(Some(70), None, None);
        assert_eq!(Value::Object(parts), json!({"read_percent": 70, "random_percent": null, "queue_depth": null}));
        let whole = mix_parts(Some(0), Some(100), Some(8));
        assert_eq!(Value::Object(whole), json!({"read_percent": 0, "random_percent": 100, "queue_depth": 8}));
    }

    use super::*;

    const FIXTURE: &str = include_str!("../../../import/tests/data/iometer-2006.07.27-results.csv");

    #[test]
    fn each_specs_all_row_is_a_cell_with_the_specs_block_size_and_mix() {
        assert!(looks_like_results(FIXTURE));
        let run = parse(FIXTURE, &Options::default()).unwrap();
        assert_eq!(run.tool_version.as_deref(), Some("2006.07.27"));
        assert_eq!(run.measured_at.as_deref(), Some("2006-12-11 09:12:44:375"));
        assert_eq!(run.cells.len(), 3);
        let c = &run.cells[0];
        assert_eq!((c.test.as_str(), c.record_size), ("access", Some(2048)));
        assert_eq!(c.metrics["read_percent"], 100);
        assert_eq!(c.metrics["random_percent"], 0);
        assert_eq!(c.metrics["queue_depth"], 16);
        assert_eq!(c.metrics["mib_per_sec"], 4.56);
        assert!((c.kib_per_sec - 4.56 * 1024.0).abs() < 1e-9);
        assert_eq!(c.metrics["iometer"]["access_spec"], "2K Streaming Read");
        assert_eq!(c.cpu_percent, Some(23.4));
        let mean_ms = c.metrics["iometer"]["avg_read_response_ms"].as_f64().unwrap();
        assert!((c.metrics["read"]["mean_ns"].as_f64().unwrap() - mean_ms * 1e6).abs() < 1e-3);
        assert!(c.metrics["write"].is_null(), "no writes in a read spec");
        assert_eq!(run.cells[1].metrics["read_percent"], 0);
        assert_eq!(run.cells[2].record_size, Some(65536));
        assert!(run.notes[0].contains("3 DISK row(s)") && run.notes[0].contains("3 WORKER row(s)"), "{:?}", run.notes);
    }

    #[test]
    fn version_1_1_columns_and_bad_figures() {
        // 1.1.0 splits MBps into Binary and Decimal; the Binary one is read.
        let v11 = FIXTURE.replace(
            "IOps,Read IOps,Write IOps,MBps,Read MBps,Write MBps,",
            "IOps,Read IOps,Write IOps,MBps (Binary),Read MBps (Binary),Write MBps (Binary),",
        );
        assert_eq!(parse(&v11, &Options::default()).unwrap().cells[0].metrics["mib_per_sec"], 4.56);
        let line = FIXTURE.lines().position(|l| l.starts_with("ALL,")).unwrap() + 1;
        let bad = FIXTURE.replacen("ALL,All,2K Streaming Read,1,1,1,", "ALL,All,2K Streaming Read,1,1,1,x", 1);
        let e = parse(&bad, &Options::default()).unwrap_err().to_string();
        assert!(e.starts_with(&format!("line {line}, column 'IOps'")), "{e}");
        let e = parse("'Results\nnothing\n", &Options::default()).unwrap_err().to_string();
        assert!(e.contains("no 'Results section with an ALL row"), "{e}");
    }

    #[test]
    fn a_spec_without_its_all_row_is_an_error_naming_it() {
        let second = FIXTURE.lines().find(|l| l.starts_with("ALL,All,2K Streaming Write")).unwrap();
        let at = FIXTURE.find(second).unwrap();
        let end = at + FIXTURE[at..].find('\n').unwrap() + 1;
        let without = format!("{}{}", &FIXTURE[..at], &FIXTURE[end..]);
        let e = parse(&without, &Options::default()).unwrap_err();
        assert!(e.message.contains("access spec '2K Streaming Write'") && e.message.contains("no ALL row"), "{e}");
        // Skipping bad lines does not make a missing row a figure.
        assert!(parse(&without, &Options { skip_bad_lines: true, ..Options::default() }).is_err());
    }

    #[test]
    fn an_empty_cpu_field_is_unknown_and_bad_rows_name_their_line() {
        let all = FIXTURE.lines().find(|l| l.starts_with("ALL,All,2K Streaming Read")).unwrap();
        let columns = FIXTURE.lines().find(|l| l.starts_with(RESULTS_COLUMNS)).unwrap();
        let k = columns.split(',').position(|c| c == "% CPU Utilization").unwrap();
        let mut fields: Vec<&str> = all.split(',').collect();
        fields[k] = "";
        let run = parse(&FIXTURE.replacen(all, &fields.join(","), 1), &Options::default()).unwrap();
        assert_eq!(run.cells[0].cpu_percent, None);
        assert!(run.cells[0].metrics["not_in_source"].as_array().unwrap().iter().any(|v| v == "cpu"));
        assert!(run.cells[1].cpu_percent.is_some());
        fields[k] = "150";
        let e = parse(&FIXTURE.replacen(all, &fields.join(","), 1), &Options::default()).unwrap_err();
        assert!(
            e.to_string().contains("column '% CPU Utilization'") && e.message.contains("share of the machine"),
            "{e}"
        );
        let line = FIXTURE.lines().position(|l| l == all).unwrap() + 2;
        let junk = FIXTURE.replacen(all, &format!("{all}\nGARBAGE,x,y"), 1);
        let e = parse(&junk, &Options::default()).unwrap_err();
        assert_eq!(e.line, Some(line), "{e}");
        assert!(e.message.contains("'GARBAGE' is not a row"), "{e}");
        let run = parse(&junk, &Options { skip_bad_lines: true, ..Options::default() }).unwrap();
        assert_eq!(run.cells.len(), 3);
        assert_eq!(run.bad_lines.iter().map(|b| b.line).collect::<Vec<_>>(), [line]);
    }
}
