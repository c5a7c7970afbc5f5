//! IOzone's text output with its `-R` report: one `iozone` cell per (test,
//! file size, record size) of the report, KB/s as IOzone printed it.
//!
//! The report is read by [`super::excel`]: its matrix blocks, or with
//! `-t` its throughput reports. A matrix row lists its values without their
//! record sizes; where the output also holds IOzone's main table (`kB
//! reclen write ...`), each file size's record sizes are taken from it, else
//! from the block's header ([`super::excel::row_records`]: the
//! header's sizes up to the file size, from 64 KiB up for auto mode's files
//! above 32 MiB, the smallest ones for any other shorter row), and the run's
//! notes say which.
//!
//! The banner (when present) gives IOzone's version, command line and start
//! time, and states `-e` (fsync timed), `-c` (close timed) and `-I`
//! (O_DIRECT) by the lines IOzone prints for them. IOzone prints no host,
//! RAM or file system, and its report no CPU figures.

use super::excel::{
    parse_excel_blocks_with, parse_throughput_reports_with, row_records, ExcelBlock, ParseError, Placement,
    ThroughputBlock,
};
use crate::IozoneTest;
use iomatrix_import::{
    cache_words, imported_row, line_source, unknown_conditions, BadLines, ImportError, ImportedCell, ImportedRun,
    Options,
};
use iomatrix_store::CellRow;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Whether `text` holds a `"... report"` title followed by a header of
/// quoted record sizes, as IOzone's `-R` blocks begin, or the title of a
/// `-t` throughput report.
pub(super) fn has_report_block(text: &str) -> bool {
    if text.lines().any(super::excel::is_throughput_title) {
        return true;
    }
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

fn report_error(e: ParseError) -> ImportError {
    ImportError::at_line(e.line, format!("IOzone -R report: {}", e.message))
}

/// File sizes (KiB) as "64, 128 kB".
fn kb_list(files: &[u64]) -> String {
    files.iter().map(u64::to_string).collect::<Vec<_>>().join(", ") + " kB"
}

pub(super) fn parse(text: &str, options: &Options) -> Result<ImportedRun, ImportError> {
    let b = banner(text);
    if b.ops_per_sec {
        return Err(ImportError::new(
            "this IOzone output is in operations per second (-O), not KB/s: iomatrix imports KB/s reports only",
        ));
    }
    let table = main_table(text);
    let mut bad = BadLines::new(options);
    let mut skip = |e: ParseError| {
        let line = e.line;
        bad.bad(ImportError::at_line(line, e.message)).map_err(|e| ParseError { line, message: e.message })
    };
    let blocks = parse_excel_blocks_with(text, &mut skip).map_err(report_error)?;
    let throughput = parse_throughput_reports_with(text, &mut skip).map_err(report_error)?;
    if blocks.is_empty() && throughput.is_empty() {
        return Err(ImportError::new(
            "no IOzone -R report in the file (blocks such as \"Writer report\" after \"Excel output is below:\", \
             or with -t a \"Throughput report\"); IOzone writes them when run with -R",
        ));
    }
    let direct = b.present.then_some(b.direct);
    let mut skipped = Vec::new();
    let mut values = Values::new();
    let placing = place_blocks(&blocks, &table, &mut bad, &mut values, &mut skipped)?;
    add_throughput(&throughput, &mut values, &mut skipped)?;
    let notes = placing.notes(&throughput);
    let cells = cells_of(&values, direct)?;
    if cells.is_empty() {
        return Err(ImportError::new(format!(
            "IOzone -R report without a test iomatrix knows: {}",
            skipped.join("; ")
        )));
    }
    Ok(run_of(&b, &values, cells, Parsed { direct, notes, skipped, bad_lines: bad.lines }))
}

/// (test, file KiB, record KiB) -> (KB/s, clients, line)
type Values = BTreeMap<(IozoneTest, u64, u64), (f64, usize, usize)>;

/// Where the record sizes of the blocks' rows came from, for the run's notes.
#[derive(Default)]
struct Placing {
    from_table: bool,
    from_header: bool,
    placed: BTreeMap<Placement, Vec<u64>>,
}

/// The matrix blocks' values into `values`, each row's record sizes from IOzone's main table
/// or the block's header; a row that fits neither is a bad line.
fn place_blocks(
    blocks: &[ExcelBlock],
    table: &BTreeMap<u64, Vec<u64>>,
    bad: &mut BadLines,
    values: &mut Values,
    skipped: &mut Vec<String>,
) -> Result<Placing, ImportError> {
    let Placing { mut from_table, mut from_header, mut placed } = Placing::default();
    let mut seen_titles: Vec<&str> = Vec::new();
    for block in blocks {
        let Some(test) = IozoneTest::ALL.into_iter().find(|t| t.report_title() == block.title) else {
            skipped.push(format!("\"{}\": iomatrix has no IOzone test of that name", block.title));
            continue;
        };
        if seen_titles.contains(&block.title.as_str()) {
            return Err(ImportError::new(format!("IOzone -R report: \"{}\" appears twice", block.title)));
        }
        seen_titles.push(&block.title);
        for row in &block.rows {
            // A row of one value among rows of several is cut short, not IOzone's one-record run.
            let several = block.rows.iter().any(|r| r.values.len() > 1);
            let records = match table.get(&row.file_kib) {
                Some(records) if records.len() == row.values.len() => {
                    from_table = true;
                    records.clone()
                }
                Some(records) => {
                    bad.bad(ImportError::at_line(
                        row.line,
                        format!(
                            "IOzone -R report: \"{}\" has {} values for file size {} kB, but IOzone's main table \
                             lists {} record sizes for it",
                            block.title,
                            row.values.len(),
                            row.file_kib,
                            records.len()
                        ),
                    ))?;
                    continue;
                }
                None => match row_records(&block.header, row.file_kib, row.values.len()) {
                    Ok((_, Placement::Smallest)) if several => {
                        bad.bad(ImportError::at_line(
                            row.line,
                            format!(
                                "IOzone -R report: \"{}\", file size {}: one value where the block's other rows \
                                 have several: a row cut short?",
                                block.title, row.file_kib
                            ),
                        ))?;
                        continue;
                    }
                    Ok((records, how)) => {
                        from_header = true;
                        placed.entry(how).or_default().push(row.file_kib);
                        records
                    }
                    Err(e) => {
                        bad.bad(ImportError::at_line(
                            row.line,
                            format!("IOzone -R report: \"{}\", file size {}: {e}", block.title, row.file_kib),
                        ))?;
                        continue;
                    }
                },
            };
            for (record_kib, &value) in records.into_iter().zip(&row.values) {
                values.insert((test, row.file_kib, record_kib), (value, 1, row.line));
            }
        }
    }
    Ok(Placing { from_table, from_header, placed })
}

/// The `-t` throughput reports' values into `values`; a figure given twice is an error.
fn add_throughput(
    throughput: &[ThroughputBlock],
    values: &mut Values,
    skipped: &mut Vec<String>,
) -> Result<(), ImportError> {
    for report in throughput {
        for (name, value, line) in &report.rows {
            let Some(test) = IozoneTest::ALL.into_iter().find(|t| t.throughput_name() == name) else {
                let why = format!("\"{name}\" (throughput report): iomatrix has no IOzone test of that name");
                if !skipped.contains(&why) {
                    skipped.push(why);
                }
                continue;
            };
            let key = (test, report.file_kib, report.record_kib);
            if values.insert(key, (*value, report.clients, *line)).is_some() {
                return Err(ImportError::at_line(
                    *line,
                    format!(
                        "IOzone -R report: {test} at file size {} kB, record size {} kB appears twice",
                        report.file_kib, report.record_kib
                    ),
                ));
            }
        }
    }
    Ok(())
}

impl Placing {
    /// What the run's notes say of where its record sizes and clients came from.
    fn notes(self, throughput: &[ThroughputBlock]) -> Vec<String> {
        let Placing { from_table, from_header, mut placed } = self;
        let mut notes = Vec::new();
        if from_table {
            notes.push("record sizes of each file size taken from IOzone's main table".to_string());
        }
        if from_header {
            notes
                .push("record sizes taken from each block's header (IOzone's record sizes for the run's flags)".into());
        }
        for (how, files) in &mut placed {
            files.sort_unstable();
            files.dedup();
            match how {
                Placement::Whole => {}
                Placement::LargeFile => notes.push(format!(
                    "file size {}: values from 64 KiB up (IOzone's auto mode skips smaller records for files above \
                     32 MiB)",
                    kb_list(files)
                )),
                Placement::Smallest => notes.push(format!(
                    "file size {}: one value, taken as the header's smallest record size, where IOzone prints it \
                     (without -a or -r IOzone's header is 4 to 16384, and 4 KiB runs)",
                    kb_list(files)
                )),
            }
        }
        if let Some(clients) = throughput.iter().map(|r| r.clients).max() {
            notes.push(format!(
                "IOzone's -t throughput report: {clients} client(s) at once; KB/s is IOzone's \"children see\" figure, \
                 the sum of the clients' own rates"
            ));
        }
        notes
    }
}

/// One cell per placed value: KB/s as IOzone printed it, nothing else measured.
fn cells_of(values: &Values, direct: Option<bool>) -> Result<Vec<ImportedCell>, ImportError> {
    let mut cells = Vec::new();
    for ((test, file_kib, record_kib), (value, clients, line)) in values {
        let bytes = |kib: u64| {
            kib.checked_mul(1024)
                .ok_or_else(|| ImportError::new(format!("IOzone -R report: {test}: size {kib} kB is too large")))
        };
        cells.push(ImportedCell {
            line: Some(*line),
            source: line_source(*line),
            row: CellRow {
                test: test.name().to_string(),
                file_size: Some(bytes(*file_kib)?),
                record_size: Some(bytes(*record_kib)?),
                direct: direct.unwrap_or(false),
                clients: *clients,
                kib_per_sec: *value,
                cpu_percent: None,
                metrics: json!({ "not_in_source": ["bytes", "ops", "wall_ns", "cpu"] }),
                ..imported_row()
            },
        });
    }
    Ok(cells)
}

/// What the run's conditions and notes take beside its cells.
struct Parsed {
    direct: Option<bool>,
    notes: Vec<String>,
    skipped: Vec<String>,
    bad_lines: Vec<iomatrix_import::BadLine>,
}

/// The run: its plan and conditions from the banner and the cells, what is unknown of it.
fn run_of(b: &Banner, values: &Values, cells: Vec<ImportedCell>, parsed: Parsed) -> ImportedRun {
    let Parsed { direct, notes, skipped, bad_lines } = parsed;
    let sizes = |f: fn(&ImportedCell) -> Option<u64>| {
        let mut v: Vec<u64> = cells.iter().filter_map(f).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let file_sizes = sizes(|c| c.file_size);
    let record_sizes = sizes(|c| c.record_size);
    let mut conditions = unknown_conditions(super::IOZONE.suite);
    conditions.insert("direct".into(), direct.map(Value::from).unwrap_or(Value::Null));
    conditions.insert("cache".into(), cache_words(direct));
    let clients = cells.iter().map(|c| c.clients).max().unwrap_or(1);
    conditions.insert("clients".into(), Value::from(clients));
    conditions.insert("largest_file_bytes".into(), file_sizes.last().copied().map(Value::from).unwrap_or(Value::Null));
    conditions.insert("fsync_timed".into(), b.present.then_some(b.fsync).map(Value::from).unwrap_or(Value::Null));
    conditions.insert("close_timed".into(), b.present.then_some(b.close).map(Value::from).unwrap_or(Value::Null));
    let mut unknown = vec!["backend (IOzone does not print its I/O method)".to_string()];
    if !b.present {
        unknown.push("direct/cached and fsync/close timing (the file has no IOzone banner)".into());
    }
    unknown.push("RAM, so file size vs RAM".into());
    unknown.push("machine, file system and mount (IOzone prints none)".into());
    let mut tests: Vec<IozoneTest> = values.keys().map(|(t, _, _)| *t).collect();
    tests.dedup();
    let tests: Vec<&str> = tests.iter().map(|t| t.name()).collect();
    let mut environment = serde_json::Map::new();
    if let Some(build) = &b.build {
        environment.insert("iozone_build".into(), Value::from(build.clone()));
    }
    ImportedRun {
        labels: Vec::new(),
        format: super::IOZONE,
        tool_version: b.version.clone(),
        host: None,
        measured_at: b.began.as_ref().map(|t| format!("{t} (the machine's local time)")),
        plan: json!({
            "tool": "iozone",
            "command_line": b.command_line,
            "file_sizes": file_sizes,
            "record_sizes": record_sizes,
            "tests": tests,
            "clients": clients,
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
        bad_lines,
    }
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

    fn parse_with(text: &str) -> Result<ImportedRun, ImportError> {
        parse(text, &Options::default())
    }

    #[test]
    fn a_report_alone_places_rows_by_its_header_and_says_so() {
        // Without -a or -r: IOzone's whole header, one value (4 KiB) per file size.
        let one = format!(
            "Excel output is below:\n\n\"Writer report\"\n{HEADER}\n\"64\"   100 \n\"128\"   300 \n\n\
             \"Reader report\"\n{HEADER}\n\"64\"   1000 \n\"128\"   3000 \n\n\
             \"Pwrite report\"\n{HEADER}\n\"64\"   7 \n"
        );
        let run = parse(&one, &Options::default()).unwrap();
        assert_eq!(run.cells.len(), 4);
        let c = &run.cells[1];
        assert_eq!(
            (c.test.as_str(), c.file_size, c.record_size, c.kib_per_sec),
            ("write", Some(128 << 10), Some(4 << 10), 300.0)
        );
        assert_eq!((c.line, c.source.as_str()), (Some(6), "line 6"));
        assert_eq!(run.cells[2].test, "read");
        assert!(run.notes[0].contains("each block's header"), "{:?}", run.notes);
        assert!(run.notes[1].starts_with("file size 64, 128 kB: one value"), "{:?}", run.notes);
        assert_eq!(run.skipped, ["\"Pwrite report\": iomatrix has no IOzone test of that name"]);
        assert!(run.conditions["direct"].is_null());
        assert!(run.conditions["fsync_timed"].is_null());
        assert_eq!(run.conditions["clients"], 1);
        assert_eq!(c.cpu_percent, None);
    }

    #[test]
    fn a_row_cut_short_or_a_damaged_line_is_an_error_naming_its_line_or_skipped_and_listed() {
        // Several values, fewer than the header's sizes up to the file: no placing them is right.
        let e = parse(&report_only(), &Options::default()).unwrap_err();
        assert_eq!(e.line, Some(5), "{e}");
        assert!(
            e.message.contains("2 values, fewer than the record sizes") && e.message.contains("--skip-bad-lines"),
            "{e}"
        );
        // A whole -a block (header 4 .. 64) with its last row cut by one value.
        let whole = "\"Writer report\"\n        \"4\"  \"8\"  \"16\"  \"32\"  \"64\"\n\"16\"   1  2  3 \n\"32\"   4  5  6  7 \n\
                     \"64\"   8  9  10  11  12 \n";
        assert_eq!(parse(whole, &Options::default()).unwrap().cells.len(), 12);
        let cut = whole.replace("11  12 ", "11 ");
        let e = parse(&cut, &Options::default()).unwrap_err();
        assert_eq!(e.line, Some(5), "{e}");
        // ... cut to one value among rows of several.
        let cut1 = whole.replace("8  9  10  11  12 ", "8 ");
        let e = parse(&cut1, &Options::default()).unwrap_err();
        assert!(e.message.contains("one value where the block's other rows have several"), "{e}");
        // A damaged line inside a block, rows after it.
        let garbage = whole.replace("\"32\"   4", "#!garbage\n\"32\"   4");
        let e = parse(&garbage, &Options::default()).unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.message.contains("'#!garbage' is not a row"), "{e}");
        // A row outside any block.
        let orphan = format!("{whole}\n\"128\"   1  2  3  4  5 \n");
        assert_eq!(parse(&orphan, &Options::default()).unwrap_err().line, Some(7));
        // Skipping: the rest stored, each skipped line listed with its reason.
        let skip = Options { skip_bad_lines: true, ..Options::default() };
        let run = parse(&garbage, &skip).unwrap();
        assert_eq!(run.cells.len(), 12);
        assert_eq!(run.bad_lines.len(), 1);
        assert_eq!(run.bad_lines[0].line, 4);
        let run = parse(&cut, &skip).unwrap();
        assert_eq!((run.cells.len(), run.bad_lines[0].line), (7, 5));
        assert!(run.bad_lines[0].why.contains("4 values, fewer"), "{:?}", run.bad_lines);
    }

    #[test]
    fn the_header_gives_the_record_sizes_whatever_the_flags() {
        // IOzone's header for `-a -y 64k`: 64 .. 16384.
        let header = "        \"64\"  \"128\"  \"256\"  \"512\"  \"1024\"  \"2048\"  \"4096\"  \"8192\"  \"16384\"";
        let text = format!(
            "\tIozone: Performance Test of File I/O\n\t        Version $Revision: 3.471 $\n\tO_DIRECT feature enabled\n\
             \tInclude fsync in write timing\n\tCommand line used: iozone -a -y 64k -n 64k -g 128k -R -I -e\n\
             Excel output is below:\n\n\"Writer report\"\n{header}\n\"64\"   100 \n\"128\"   300  400 \n"
        );
        let run = parse(&text, &Options::default()).unwrap();
        assert_eq!(run.tool_version.as_deref(), Some("3.471"));
        let placed: Vec<(Option<u64>, Option<u64>, f64)> =
            run.cells.iter().map(|c| (c.file_size, c.record_size, c.kib_per_sec)).collect();
        assert_eq!(
            placed,
            [
                (Some(64 << 10), Some(64 << 10), 100.0),
                (Some(128 << 10), Some(64 << 10), 300.0),
                (Some(128 << 10), Some(128 << 10), 400.0)
            ]
        );
        assert_eq!(run.notes.len(), 1, "every row whole: {:?}", run.notes);
        assert_eq!(run.conditions["direct"], true);
        assert_eq!(run.conditions["fsync_timed"], true);
        assert_eq!(run.conditions["close_timed"], false);
        // -r 4k -r 1m (the fixture's header) and auto mode's large files.
        let text = "\"Reader report\"\n        \"4\"  \"1024\"\n\"65536\"   1  2 \n\n\
                    \"Writer report\"\n        \"4\"  \"8\"  \"16\"  \"32\"  \"64\"  \"128\"\n\"65536\"   3  4 \n";
        let run = parse(text, &Options::default()).unwrap();
        let placed: Vec<(&str, Option<u64>)> = run.cells.iter().map(|c| (c.test.as_str(), c.record_size)).collect();
        assert_eq!(
            placed,
            [("write", Some(64 << 10)), ("write", Some(128 << 10)), ("read", Some(4 << 10)), ("read", Some(1 << 20))]
        );
        assert!(run.notes[1].contains("from 64 KiB up"), "{:?}", run.notes);
        // A row longer than the header's sizes up to its file is an error, not a guess.
        let e = parse("\"Writer report\"\n        \"4\"  \"1024\"\n\"64\"   1  2 \n", &Options::default()).unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.message.contains("more values (2)"), "{e}");
    }

    #[test]
    fn a_throughput_report_becomes_cells_of_its_clients() {
        let text = "\tThroughput test with 2 processes\n\tEach process writes a 256 kByte file in 16 kByte records\n\n\
                    \tChildren see throughput for  2 initial writers \t=  1.00 kB/sec\n\n\n\n\
                    \"Throughput report Y-axis is type of test X-axis is number of processes\"\n\
                    \"Record size = 16 kBytes \"\n\"Output is in kBytes/sec\"\n\n\
                    \"  Initial write \"  246059.19 \n\n\"        Re-read \" 2055142.27 \n\n\
                    \"         Pwrite \"  243020.93 \n\n\n\niozone test complete.\n";
        assert!(has_report_block(text));
        let run = parse(text, &Options::default()).unwrap();
        let cell = |c: &ImportedCell| (c.test.clone(), c.file_size, c.record_size, c.clients, c.kib_per_sec);
        let (file, record) = (Some(256 << 10), Some(16 << 10));
        assert_eq!(
            run.cells.iter().map(cell).collect::<Vec<_>>(),
            [("write".to_string(), file, record, 2, 246059.19), ("reread".to_string(), file, record, 2, 2055142.27)]
        );
        assert_eq!(run.conditions["clients"], 2);
        assert_eq!(run.skipped, ["\"Pwrite\" (throughput report): iomatrix has no IOzone test of that name"]);
        assert!(run.notes.iter().any(|n| n.contains("children see")), "{:?}", run.notes);
        // Without the lines above it, the file size is unknown: an error.
        let alone = &text[text.find("\"Throughput").unwrap()..];
        assert!(parse(alone, &Options::default())
            .unwrap_err()
            .message
            .contains("without its process count and file size"));
        // Several process counts (-l/-u), another unit, a record size that disagrees.
        let e = parse_with(&text.replace("246059.19 ", "1.00  2.00 ")).unwrap_err();
        assert!(e.message.contains("2 figures, one per process count"), "{e}");
        let e = parse_with(&text.replace("Output is in kBytes/sec", "Output is in ops/sec")).unwrap_err();
        assert!(e.message.contains("ops/sec, not kBytes/sec"), "{e}");
        let e = parse_with(&text.replace("Record size = 16", "Record size = 64")).unwrap_err();
        assert!(e.message.contains("(64 kB) is not the one above it (16 kB)"), "{e}");
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
        let run = parse(&text, &Options::default()).unwrap();
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
        assert!(parse(&bad, &Options::default()).unwrap_err().to_string().contains("main table lists 2"));
    }

    #[test]
    fn malformed_or_missing_reports_are_errors() {
        let bad = report_only().replace("300  400  500", "300  x  500");
        let e = parse(&bad, &Options::default()).unwrap_err();
        assert_eq!(e.line, Some(6), "{e}");
        assert!(e.message.contains("not a number"), "{e}");
        let e =
            parse("\tIozone: Performance Test of File I/O\n\tThroughput test with 2 processes\n", &Options::default())
                .unwrap_err();
        assert!(e.message.contains("no IOzone -R report"), "{e}");
        let e =
            parse(&format!("\tOPS Mode. Output is in operations per second.\n{}", report_only()), &Options::default())
                .unwrap_err();
        assert!(e.message.contains("operations per second"), "{e}");
    }

    #[test]
    fn report_blocks_are_recognised() {
        assert!(has_report_block(&report_only()));
        assert!(!has_report_block("\"hello report\"\nnot a header\n"));
    }
}
