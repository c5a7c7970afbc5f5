//! IOzone's text output with its `-R` report: one `iozone` cell per (test,
//! file size, record size) of the report's matrices, KB/s as IOzone printed it.
//!
//! The matrices are read by [`parse_excel_report_with_min_record`].
//! A `-R` row lists its values without their record sizes; where the output
//! also holds IOzone's main table (`kB  reclen  write ...`), each file size's
//! record sizes are taken from it, so rows that start above the smallest
//! record (auto mode's large files, `-y`, `-r`) land in the right columns.
//! Without the main table, the smallest record size comes from the command
//! line's `-y`/`-r`, else IOzone's 4 KiB, and the run's notes say so.
//!
//! The banner (when present) gives IOzone's version, command line and start
//! time, and states `-e` (fsync timed), `-c` (close timed) and `-I`
//! (O_DIRECT) by the lines IOzone prints for them. IOzone prints no host,
//! RAM or file system, and its report no CPU figures.

use crate::iozone_excel::parse_excel_report_with_min_record;
use crate::{cache_words, unknown_conditions, Format, ImportError, ImportedCell, ImportedRun};
use iomatrix_core::ByteSize;
use iomatrix_iozone::IozoneTest;
use iomatrix_report::Matrix;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// IOzone's smallest record size (KiB) when nothing says otherwise.
const IOZONE_MIN_RECORD_KIB: u64 = 4;

/// Whether `text` holds a `"... report"` title followed by a header of
/// quoted record sizes, as IOzone's `-R` blocks begin.
pub fn has_report_block(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    lines.windows(2).any(|w| {
        let title = w[0].trim();
        let header: Vec<&str> = w[1].split_whitespace().collect();
        title.starts_with('"')
            && title.ends_with(" report\"")
            && !header.is_empty()
            && header.iter().all(|t| t.len() > 2 && t.starts_with('"') && t.ends_with('"'))
    })
}

/// What IOzone's banner says, line by line.
#[derive(Default)]
struct Banner {
    present: bool,
    version: Option<String>,
    command_line: Option<String>,
    began: Option<String>,
    build: Option<String>,
    fsync: bool,
    close: bool,
    direct: bool,
    ops_per_sec: bool,
}

fn banner(text: &str) -> Banner {
    let mut b = Banner::default();
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with("Iozone: Performance Test of File I/O") {
            b.present = true;
        } else if let Some(rest) = l.strip_prefix("Version $Revision:") {
            b.version = Some(rest.trim().trim_end_matches('$').trim().to_string());
        } else if let Some(rest) = l.strip_prefix("Command line used:") {
            b.present = true;
            b.command_line = Some(rest.trim().to_string());
        } else if let Some(rest) = l.strip_prefix("Run began:") {
            b.began = Some(rest.trim().to_string());
        } else if let Some(rest) = l.strip_prefix("Build:") {
            b.build = Some(rest.trim().to_string());
        } else if l == "Include fsync in write timing" {
            b.fsync = true;
        } else if l == "Include close in write timing" {
            b.close = true;
        } else if l.starts_with("O_DIRECT feature enabled") {
            b.direct = true;
        } else if l.starts_with("OPS Mode") || l.starts_with("Output is in operations per second") {
            b.ops_per_sec = true;
        }
    }
    b
}

/// IOzone's main table: for each file size (KiB), its record sizes in order.
fn main_table(text: &str) -> BTreeMap<u64, Vec<u64>> {
    let mut out: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let mut inside = false;
    for line in text.lines() {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if tokens.first() == Some(&"kB") && tokens.get(1) == Some(&"reclen") {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        let numbers: Option<Vec<u64>> = tokens.iter().map(|t| t.parse::<u64>().ok()).collect();
        match numbers {
            Some(n) if n.len() >= 2 => out.entry(n[0]).or_default().push(n[1]),
            _ => inside = false,
        }
    }
    out
}

/// The smallest record size (KiB) IOzone's command line asks for: `-y`, else
/// the smallest `-r`. IOzone reads bare numbers as KiB.
fn min_record_from_command_line(command_line: &str) -> Option<u64> {
    let tokens: Vec<&str> = command_line.split_whitespace().collect();
    let mut min_y = None;
    let mut records = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        for (flag, into_y) in [("-y", true), ("-r", false)] {
            let Some(rest) = t.strip_prefix(flag) else { continue };
            let value = if rest.is_empty() { tokens.get(i + 1).copied() } else { Some(rest) };
            let Some(kib) = value.and_then(|v| ByteSize::parse_with_default_unit(v, 1024).ok()).map(ByteSize::kib)
            else {
                continue;
            };
            if into_y {
                min_y = Some(kib);
            } else {
                records.push(kib);
            }
        }
    }
    min_y.or_else(|| records.into_iter().min())
}

pub fn parse(text: &str) -> Result<ImportedRun, ImportError> {
    let b = banner(text);
    if b.ops_per_sec {
        return Err(ImportError::new(
            "this IOzone output is in operations per second (-O), not KB/s: iomatrix imports KB/s reports only",
        ));
    }
    let table = main_table(text);
    let mut notes = Vec::new();
    let min_record = if let Some(min) = table.values().flatten().min() {
        notes.push("record sizes of each file size taken from IOzone's main table".to_string());
        *min
    } else if let Some(min) = b.command_line.as_deref().and_then(min_record_from_command_line) {
        notes.push(format!("record sizes from {min} KiB up, as IOzone's command line (-y/-r) says"));
        min
    } else {
        notes.push(format!(
            "record sizes assumed to start at IOzone's smallest, {IOZONE_MIN_RECORD_KIB} KiB: the file holds neither \
             IOzone's main table nor its command line"
        ));
        IOZONE_MIN_RECORD_KIB
    };
    let matrices = parse_excel_report_with_min_record(text, min_record)
        .map_err(|e| ImportError::at_line(e.line, format!("IOzone -R report: {}", e.message)))?;
    if matrices.is_empty() {
        return Err(ImportError::new(
            "no IOzone -R report in the file (blocks such as \"Writer report\" after \"Excel output is below:\"); \
             IOzone writes them when run with -R",
        ));
    }
    let mut cells = Vec::new();
    let mut skipped = Vec::new();
    let mut by_test: Vec<(IozoneTest, Matrix)> = Vec::new();
    for m in matrices {
        match IozoneTest::ALL.into_iter().find(|t| t.report_title() == m.title) {
            Some(test) if by_test.iter().any(|(t, _)| *t == test) => {
                return Err(ImportError::new(format!("IOzone -R report: \"{}\" appears twice", m.title)))
            }
            Some(test) => by_test.push((test, remap(m, &table)?)),
            None => skipped.push(format!("\"{}\": iomatrix has no IOzone test of that name", m.title)),
        }
    }
    by_test.sort_by_key(|(t, _)| *t);
    let direct = b.present.then_some(b.direct);
    for (test, m) in &by_test {
        let mut values = m.cells.clone();
        values.sort_by_key(|c| (c.file_kib, c.record_kib));
        for c in values {
            let bytes = |kib: u64| {
                kib.checked_mul(1024).ok_or_else(|| {
                    ImportError::new(format!("IOzone -R report: \"{}\": size {kib} kB is too large", m.title))
                })
            };
            cells.push(ImportedCell {
                test: test.name().to_string(),
                file_size: Some(bytes(c.file_kib)?),
                record_size: Some(bytes(c.record_kib)?),
                backend: None,
                direct,
                clients: 1,
                bytes: 0,
                ops: 0,
                wall_ns: 0,
                user_ns: 0,
                sys_ns: 0,
                kib_per_sec: c.value,
                cpu_percent: None,
                metrics: json!({ "not_in_source": ["bytes", "ops", "wall_ns", "cpu"] }),
            });
        }
    }
    if cells.is_empty() {
        return Err(ImportError::new(format!(
            "IOzone -R report without a test iomatrix knows: {}",
            skipped.join("; ")
        )));
    }
    let sizes = |f: fn(&ImportedCell) -> Option<u64>| {
        let mut v: Vec<u64> = cells.iter().filter_map(f).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let file_sizes = sizes(|c| c.file_size);
    let record_sizes = sizes(|c| c.record_size);
    let mut conditions = unknown_conditions(Format::Iozone.suite());
    conditions.insert("direct".into(), direct.map(Value::from).unwrap_or(Value::Null));
    conditions.insert("cache".into(), cache_words(direct));
    conditions.insert("clients".into(), Value::from(1));
    conditions.insert("largest_file_bytes".into(), file_sizes.last().copied().map(Value::from).unwrap_or(Value::Null));
    conditions.insert("fsync_timed".into(), b.present.then_some(b.fsync).map(Value::from).unwrap_or(Value::Null));
    conditions.insert("close_timed".into(), b.present.then_some(b.close).map(Value::from).unwrap_or(Value::Null));
    let mut unknown = vec!["backend (IOzone does not print its I/O method)".to_string()];
    if !b.present {
        unknown.push("direct/cached and fsync/close timing (the file has no IOzone banner)".into());
    }
    unknown.push("RAM, so file size vs RAM".into());
    unknown.push("machine, file system and mount (IOzone prints none)".into());
    let tests: Vec<&str> = by_test.iter().map(|(t, _)| t.name()).collect();
    let mut environment = serde_json::Map::new();
    if let Some(build) = &b.build {
        environment.insert("iozone_build".into(), Value::from(build.clone()));
    }
    Ok(ImportedRun {
        format: Format::Iozone,
        tool_version: b.version.clone(),
        host: None,
        measured_at: b.began.as_ref().map(|t| format!("{t} (the machine's local time)")),
        plan: json!({
            "tool": "iozone",
            "command_line": b.command_line,
            "file_sizes": file_sizes,
            "record_sizes": record_sizes,
            "tests": tests,
            "fsync": b.present.then_some(b.fsync),
            "close": b.present.then_some(b.close),
            "direct": direct,
        }),
        environment: Value::Object(environment),
        conditions,
        unknown,
        notes,
        cells,
        unmeasured: Vec::new(),
        skipped,
    })
}

/// Puts each row's values under the record sizes IOzone's main table lists
/// for that file size (in order); rows of file sizes the table lacks keep
/// the parser's columns.
fn remap(m: Matrix, table: &BTreeMap<u64, Vec<u64>>) -> Result<Matrix, ImportError> {
    if table.is_empty() {
        return Ok(m);
    }
    let mut out = Matrix::new(m.title.clone(), m.unit.clone());
    for file in m.file_sizes() {
        let row = m.row(file);
        match table.get(&file) {
            Some(records) if records.len() == row.len() => {
                for ((_, value), record) in row.into_iter().zip(records) {
                    out.cells.push(iomatrix_report::MatrixCell { file_kib: file, record_kib: *record, value });
                }
            }
            Some(records) => {
                return Err(ImportError::new(format!(
                    "IOzone -R report: \"{}\" has {} values for file size {file} kB, but IOzone's main table lists {} \
                     record sizes for it",
                    m.title,
                    row.len(),
                    records.len()
                )))
            }
            None => out.cells.extend(m.cells.iter().filter(|c| c.file_kib == file).copied()),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str =
        "        \"4\"  \"8\"  \"16\"  \"32\"  \"64\"  \"128\"  \"256\"  \"512\"  \"1024\"  \"2048\"  \"4096\"  \"8192\"  \"16384\"";

    fn report_only() -> String {
        format!(
            "Excel output is below:\n\n\"Writer report\"\n{HEADER}\n\"64\"   100  200 \n\"128\"   300  400  500 \n\n\
             \"Reader report\"\n{HEADER}\n\"64\"   1000  2000 \n\"128\"   3000  4000  5000 \n\n\
             \"Pwrite report\"\n{HEADER}\n\"64\"   7  8 \n"
        )
    }

    #[test]
    fn a_report_alone_assumes_4k_records_and_says_so() {
        let run = parse(&report_only()).unwrap();
        assert_eq!(run.cells.len(), 10);
        let c = &run.cells[4];
        assert_eq!(
            (c.test.as_str(), c.file_size, c.record_size, c.kib_per_sec),
            ("write", Some(128 << 10), Some(16 << 10), 500.0)
        );
        assert_eq!(run.cells[5].test, "read");
        assert!(run.notes[0].contains("assumed"), "{:?}", run.notes);
        assert_eq!(run.skipped, ["\"Pwrite report\": iomatrix has no IOzone test of that name"]);
        assert!(run.conditions["direct"].is_null());
        assert!(run.conditions["fsync_timed"].is_null());
        assert_eq!(run.conditions["clients"], 1);
        assert_eq!(c.cpu_percent, None);
    }

    #[test]
    fn the_command_line_gives_the_smallest_record() {
        let text = format!(
            "\tIozone: Performance Test of File I/O\n\t        Version $Revision: 3.471 $\n\tO_DIRECT feature enabled\n\
             \tInclude fsync in write timing\n\tCommand line used: iozone -a -y 64k -n 64k -g 128k -R -I -e\n{}",
            report_only()
        );
        let run = parse(&text).unwrap();
        assert_eq!(run.tool_version.as_deref(), Some("3.471"));
        assert_eq!(run.cells[0].record_size, Some(64 << 10));
        assert_eq!(run.cells[4].record_size, Some(256 << 10));
        assert_eq!(run.conditions["direct"], true);
        assert_eq!(run.conditions["fsync_timed"], true);
        assert_eq!(run.conditions["close_timed"], false);
        assert_eq!(min_record_from_command_line("iozone -r 64 -r 4m -s 1g"), Some(64));
        assert_eq!(min_record_from_command_line("iozone -r4k -y 16k"), Some(16));
        assert_eq!(min_record_from_command_line("iozone -a"), None);
    }

    #[test]
    fn the_main_table_places_rows_that_start_above_the_smallest_record() {
        let text = format!(
            "              kB  reclen    write  rewrite    read\n\
             \x20             64       4      100      1     1000\n\
             \x20             64       8      200      1     2000\n\
             \x20            128      16      300      1     3000\n\
             \x20            128      32      400      1     4000\n\
             \x20            128      64      500      1     5000\n\niozone test complete.\n{}",
            report_only()
        );
        let run = parse(&text).unwrap();
        let write: Vec<(Option<u64>, Option<u64>)> =
            run.cells.iter().filter(|c| c.test == "write").map(|c| (c.file_size, c.record_size)).collect();
        assert_eq!(
            write,
            [
                (Some(64 << 10), Some(4 << 10)),
                (Some(64 << 10), Some(8 << 10)),
                (Some(128 << 10), Some(16 << 10)),
                (Some(128 << 10), Some(32 << 10)),
                (Some(128 << 10), Some(64 << 10))
            ]
        );
        assert!(run.notes[0].contains("main table"));
        // A row whose length disagrees with the main table is an error, not a guess.
        let bad = text.replacen("\"64\"   100  200 ", "\"64\"   100  200  300 ", 1);
        assert!(parse(&bad).unwrap_err().to_string().contains("main table lists 2"));
    }

    #[test]
    fn malformed_or_missing_reports_are_errors() {
        let bad = report_only().replace("300  400  500", "300  x  500");
        let e = parse(&bad).unwrap_err();
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.message.contains("not a number"), "{e}");
        let e = parse("\tIozone: Performance Test of File I/O\n\tThroughput test with 2 processes\n").unwrap_err();
        assert!(e.message.contains("no IOzone -R report"), "{e}");
        let e = parse(&format!("\tOPS Mode. Output is in operations per second.\n{}", report_only())).unwrap_err();
        assert!(e.message.contains("operations per second"), "{e}");
    }

    #[test]
    fn report_blocks_are_recognised() {
        assert!(has_report_block(&report_only()));
        assert!(!has_report_block("\"hello report\"\nnot a header\n"));
    }
}
