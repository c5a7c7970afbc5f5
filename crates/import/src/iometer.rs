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

use crate::{unknown_conditions, Format, ImportError, ImportedCell, ImportedRun};
use serde_json::{json, Value};
use std::collections::BTreeMap;

const RESULTS_COLUMNS: &str = "'Target Type,Target Name,Access Specification Name";

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

pub fn parse(text: &str) -> Result<ImportedRun, ImportError> {
    let lines: Vec<&str> = text.lines().map(|l| l.trim_end_matches('\r')).collect();
    let mut version = None;
    let mut started = None;
    let mut specs: BTreeMap<String, Vec<Part>> = BTreeMap::new();
    let mut cells = Vec::new();
    let mut others: BTreeMap<String, usize> = BTreeMap::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let next = lines.get(i + 1).copied().unwrap_or("");
        match line {
            "'Version" => version = Some(next.split(',').next().unwrap_or("").trim().to_string()),
            "'Time Stamp" if started.is_none() => started = Some(next.trim().to_string()),
            "'Access specification name,default assignment" => {
                let name = next.rsplit_once(',').map(|(n, _)| n).unwrap_or(next).trim().to_string();
                let mut parts = Vec::new();
                let mut j = i + 2;
                if lines.get(j).is_some_and(|l| l.starts_with("'size,")) {
                    j += 1;
                    while let Some(l) = lines.get(j).filter(|l| !l.starts_with('\'') && !l.trim().is_empty()) {
                        let f: Vec<&str> = l.split(',').map(str::trim).collect();
                        let num = |k: usize, what: &str| -> Result<u64, ImportError> {
                            f.get(k).and_then(|v| v.parse().ok()).ok_or_else(|| {
                                ImportError::at_line(j + 1, format!("access spec '{name}': {what} is not a number"))
                            })
                        };
                        parts.push(Part {
                            size: num(0, "size")?,
                            reads: num(2, "% reads")?,
                            random: num(3, "% random")?,
                        });
                        j += 1;
                    }
                }
                specs.insert(name, parts);
                i = j;
                continue;
            }
            _ if line.starts_with(RESULTS_COLUMNS) => {
                let columns: Vec<&str> = line.trim_start_matches('\'').split(',').map(str::trim).collect();
                let mut j = i + 1;
                while let Some(row) = lines.get(j).filter(|l| !l.starts_with('\'') && !l.trim().is_empty()) {
                    let fields: Vec<&str> = row.split(',').map(str::trim).collect();
                    let kind = fields.first().copied().unwrap_or("");
                    if kind == "ALL" {
                        cells.push(cell(j + 1, &columns, &fields, &specs)?);
                    } else {
                        *others.entry(kind.to_string()).or_default() += 1;
                    }
                    j += 1;
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if cells.is_empty() {
        return Err(ImportError::new(
            "no 'Results section with an ALL row found (Iometer writes 'Results, the column line \
             'Target Type,Target Name,Access Specification Name,..., then an ALL row per access spec)",
        ));
    }
    let mut conditions = unknown_conditions(Format::Iometer.suite());
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
        format: Format::Iometer,
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
        skipped: Vec::new(),
    })
}

/// One spec's `ALL` row as an access cell.
fn cell(
    line: usize,
    columns: &[&str],
    fields: &[&str],
    specs: &BTreeMap<String, Vec<Part>>,
) -> Result<ImportedCell, ImportError> {
    let text = |name: &str| columns.iter().position(|c| *c == name).and_then(|k| fields.get(k).copied());
    let number = |name: &str| -> Result<Option<f64>, ImportError> {
        match text(name).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(v) => v.parse::<f64>().ok().filter(|x| x.is_finite()).map(Some).ok_or_else(|| ImportError {
                line: Some(line),
                field: Some(format!("column '{name}'")),
                message: format!("'{v}' is not a number"),
            }),
        }
    };
    let first = |names: &[&str]| -> Result<Option<f64>, ImportError> {
        for n in names {
            if let Some(v) = number(n)? {
                return Ok(Some(v));
            }
        }
        Ok(None)
    };
    let spec = text("Access Specification Name").unwrap_or("").to_string();
    let mib_per_sec = match first(&["MBps (Binary)", "MiBps (Binary)", "MBps"])? {
        Some(v) => v,
        None => first(&["MBps (Decimal)"])?.map(|d| d * 1e6 / 1048576.0).ok_or_else(|| {
            ImportError::at_line(line, format!("access spec '{spec}': no MBps column (MBps, or MBps (Binary))"))
        })?,
    };
    let iops = number("IOps")?.ok_or_else(|| ImportError::at_line(line, format!("'{spec}': no IOps column")))?;
    let parts = specs.get(&spec).cloned().unwrap_or_default();
    let one = |f: fn(&Part) -> u64| -> Option<u64> {
        let v = parts.first().map(f)?;
        parts.iter().all(|p| f(p) == v).then_some(v)
    };
    let (record_size, read_percent, random_percent) =
        (if parts.len() == 1 { Some(parts[0].size) } else { None }, one(|p| p.reads), one(|p| p.random));
    // Iometer prints -1 where the workers' queue depths differ.
    let queue_depth = number("Queue Depth")?.filter(|q| *q >= 1.0).map(|q| q as u64);
    let count = |name: &str| -> Result<u64, ImportError> { Ok(number(name)?.unwrap_or(0.0).max(0.0) as u64) };
    let (bytes_read, bytes_written) = (count("Bytes Read")?, count("Bytes Written")?);
    let (read_ios, write_ios) = (count("Read I/Os")?, count("Write I/Os")?);
    let workers = count("# Workers")?.max(1) as usize;
    let cpu = number("% CPU Utilization")?;
    let ms = |name: &str| -> Result<Value, ImportError> { Ok(number(name)?.map(Value::from).unwrap_or(Value::Null)) };
    // As the access table reads a side's latency (mean and max only: Iometer keeps no percentiles).
    let side = |mean: &str, max: &str, count: u64| -> Result<Value, ImportError> {
        let ns = |v: Option<f64>| v.filter(|v| *v > 0.0).map(|v| Value::from(v * 1e6)).unwrap_or(Value::Null);
        Ok(if count == 0 {
            Value::Null
        } else {
            json!({"mean_ns": ns(number(mean)?), "max_ns": ns(number(max)?), "count": count})
        })
    };
    let read = side("Average Read Response Time", "Maximum Read Response Time", read_ios)?;
    let write = side("Average Write Response Time", "Maximum Write Response Time", write_ios)?;
    let metrics = json!({
        "read": read,
        "write": write,
        "read_percent": read_percent,
        "random_percent": random_percent,
        "queue_depth": queue_depth,
        "iops": iops,
        "mib_per_sec": mib_per_sec,
        "read_iops": number("Read IOps")?,
        "write_iops": number("Write IOps")?,
        "read_bytes": bytes_read,
        "write_bytes": bytes_written,
        "clients": workers,
        "iometer": {
            "access_spec": spec,
            "line": line,
            "managers": number("# Managers")?,
            "workers": number("# Workers")?,
            "disks": number("# Disks")?,
            "errors": number("Errors")?,
            "avg_response_ms": ms("Average Response Time")?,
            "avg_read_response_ms": ms("Average Read Response Time")?,
            "avg_write_response_ms": ms("Average Write Response Time")?,
            "max_response_ms": ms("Maximum Response Time")?,
            "max_read_response_ms": ms("Maximum Read Response Time")?,
            "max_write_response_ms": ms("Maximum Write Response Time")?,
        },
        "not_in_source": ["wall_ns", "user_ns", "sys_ns", "file_size"],
    });
    Ok(ImportedCell {
        test: "access".into(),
        file_size: None,
        record_size,
        backend: None,
        direct: None,
        clients: workers,
        bytes: bytes_read + bytes_written,
        ops: read_ios + write_ios,
        wall_ns: 0,
        user_ns: 0,
        sys_ns: 0,
        kib_per_sec: mib_per_sec * 1024.0,
        cpu_percent: cpu,
        metrics,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../tests/data/iometer-2006.07.27-results.csv");

    #[test]
    fn each_specs_all_row_is_a_cell_with_the_specs_block_size_and_mix() {
        assert!(looks_like_results(FIXTURE));
        let run = parse(FIXTURE).unwrap();
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
        assert_eq!(parse(&v11).unwrap().cells[0].metrics["mib_per_sec"], 4.56);
        let line = FIXTURE.lines().position(|l| l.starts_with("ALL,")).unwrap() + 1;
        let bad = FIXTURE.replacen("ALL,All,2K Streaming Read,1,1,1,", "ALL,All,2K Streaming Read,1,1,1,x", 1);
        let e = parse(&bad).unwrap_err().to_string();
        assert!(e.starts_with(&format!("line {line}, column 'IOps'")), "{e}");
        let e = parse("'Results\nnothing\n").unwrap_err().to_string();
        assert!(e.contains("no 'Results section with an ALL row"), "{e}");
    }
}
