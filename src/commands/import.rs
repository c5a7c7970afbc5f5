//! `iomatrix import FILE...`: results of fio, IOzone and bonnie++ stored as
//! runs of the matching suite, so `compare` and `show` treat them as any run.
//!
//! Every file is read and parsed (by `iomatrix-import`), and every figure
//! passed through the store's gate ([`iomatrix_store::gate`]), before the
//! database is opened: a malformed file, or one with a figure outside its
//! physical bounds, stores nothing and is named with its line (exit 2).
//! `--skip-bad-lines` stores what could be read instead, and says and stores
//! which lines were skipped. Each run is then written in one transaction
//! ([`Store::store_finished_run`]), complete or not at all.

use anyhow::Context;
use clap::Args;
use iomatrix_core::{ByteSize, UsageError};
use iomatrix_guard::Input;
use iomatrix_import::{BadLine, Format, ImportedRun, Importer, Importers, Options};
use iomatrix_store::{gate, CellRow, NewRun, Store};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What `iomatrix import`'s help says after its options: what each format's file becomes (from
/// the importers the command table registers), and how a file is read and checked.
fn after_help() -> String {
    format!(
        "Each file becomes a run of the matching suite, status complete, labelled {}. Conditions the file does \
         not give (backend, O_DIRECT or cached, RAM, file system) are stored as unknown, never guessed; bonnie++'s \
         +++++ (too fast to time) is listed as unmeasured, not stored as a figure. Every file is read, and every \
         figure checked against its physical bounds (docs/database.md), before anything is stored: a line that \
         cannot be read or a figure out of bounds stores nothing and is named with its file and line (exit 2), \
         unless --skip-bad-lines. Each run is stored in one transaction. An input larger than --max-input-size \
         (default 256m, far above any real fio, IOzone or bonnie++ output) is refused unread (a file) or at the \
         bound (standard input), and so is anything but a regular file or `-` (a device, a FIFO, a folder), binary \
         data (a NUL byte) and a line longer than 16m: exit 2.",
        crate::suites::importers().becomes_help()
    )
}

/// `iomatrix import FILE...`.
#[derive(Args, Debug)]
#[command(after_help = after_help())]
pub struct ImportArgs {
    /// Files to import (`-` reads standard input); a bonnie++ file with several setups gives one
    /// run per setup, its -x repeats staying together
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    // Its help lists the formats of the importers the command table registers.
    #[arg(long, value_name = "FORMAT", help = crate::suites::importers().format_help())]
    pub format: Option<String>,

    /// Label the runs, e.g. --label server=netware (repeatable, each key once; printable text only);
    /// imported=TOOL is added
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,

    /// bonnie++'s chunk size, which bonnie++ 2.00's CSV leaves empty: the bonnie cells carry it as
    /// their record size, as native bonnie runs do [default: the CSV's, else bonnie++'s 8k]
    #[arg(long, value_name = "SIZE")]
    pub bonnie_chunk: Option<String>,

    /// Machine-readable summary (schema "iomatrix.import/1", docs/json.md)
    #[arg(long)]
    pub json: bool,

    /// Store what can be read when a line cannot (IOzone, bonnie++, Bonnie, Iometer files): each
    /// line skipped is printed, and stored with the run (its conditions' `imported.bad_lines`);
    /// without it such a line stops the import, naming file and line
    #[arg(long)]
    pub skip_bad_lines: bool,

    /// Refuse an input larger than this, file or standard input: a guard against the wrong file
    /// (a disk image, /dev/zero, a pipe that never ends); no tool's results come near 256m
    #[arg(long, value_name = "SIZE", default_value = "256m")]
    pub max_input_size: String,
}

/// Version of `import --json`'s document; see docs/json.md.
pub const IMPORT_SCHEMA: &str = "iomatrix.import/1";

/// The label every imported run carries: `imported=fio|iozone|bonnie++|bonnie|iometer|published`.
pub const IMPORTED_LABEL: &str = "imported";

/// One file, read and parsed.
struct Parsed {
    source: String,
    format: Format,
    runs: Vec<ImportedRun>,
}

/// What the flags ask for, checked.
struct Flags<'i> {
    /// `--format`'s importer: none, each file's format is recognised from its content.
    format: Option<&'i dyn Importer>,
    labels: Vec<(String, String)>,
    options: Options,
    /// `--max-input-size` in bytes.
    bound: u64,
}

/// A run stored: its id, the file it was read from and what was read.
type Stored<'a> = (i64, &'a Parsed, &'a ImportedRun);

pub fn run(args: ImportArgs, db: &Path) -> anyhow::Result<ExitCode> {
    let importers = crate::suites::importers();
    let flags = flags(&args, &importers)?;
    let mut parsed = Vec::new();
    let mut stdin_used = false;
    for file in &args.files {
        let (bytes, source) = read_input(file, flags.bound, &mut stdin_used)?;
        parsed.push(parse_file(file, bytes, source, &flags, &importers, args.skip_bad_lines)?);
    }
    if flags.options.chunk_size.is_some() && !parsed.iter().any(|p| p.format.takes_chunk) {
        return Err(UsageError::new("--bonnie-chunk applies to bonnie++ files only, and none of these is one").into());
    }

    let store = Store::open_for_writing(db)?;
    let stored = store_runs(&store, &parsed, &flags.labels)?;
    if args.json {
        print_json(&store, &stored)?;
    } else {
        let mut out = String::new();
        for (id, p, run) in &stored {
            out += &summary(*id, p, run);
        }
        crate::out::print(&out)?;
        eprintln!("iomatrix: {} run(s) imported into {}", stored.len(), store.path().display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The flags, checked before any file is read; `--format` names one of `importers`.
fn flags<'i>(args: &ImportArgs, importers: &'i Importers) -> anyhow::Result<Flags<'i>> {
    let format = args
        .format
        .as_deref()
        .map(|f| importers.by_name(f).map_err(|e| UsageError::new(format!("--format {f}: {e}"))))
        .transpose()?;
    let labels = crate::harness::args::labels(&args.labels)?;
    if let Some((k, _)) = labels.iter().find(|(k, _)| iomatrix_study::STUDY_LABELS.contains(&k.as_str())) {
        return Err(UsageError::new(format!(
            "--label {k}=...: '{k}' is a label a study puts on the runs it starts; an imported run joins no study"
        ))
        .into());
    }
    if labels.iter().any(|(k, _)| k == IMPORTED_LABEL) {
        return Err(UsageError::new(format!(
            "--label {IMPORTED_LABEL}=...: the importer sets this label itself (to fio, iozone, bonnie++, bonnie, iometer or published)"
        ))
        .into());
    }
    let bonnie_chunk = args
        .bonnie_chunk
        .as_deref()
        .map(|c| {
            ByteSize::parse_with_default_unit(c, 1)
                .ok()
                .filter(|b| b.bytes() > 0)
                .map(ByteSize::bytes)
                .ok_or_else(|| UsageError::new(format!("--bonnie-chunk {c}: give a size such as 8k")))
        })
        .transpose()?;
    if bonnie_chunk.is_some() && format.is_some_and(|f| !f.format().takes_chunk) {
        return Err(UsageError::new("--bonnie-chunk applies to bonnie++ files only").into());
    }
    let options = Options { chunk_size: bonnie_chunk, skip_bad_lines: args.skip_bad_lines };
    let bound = ByteSize::parse_with_default_unit(&args.max_input_size, 1)
        .ok()
        .filter(|b| b.bytes() > 0)
        .map(ByteSize::bytes)
        .ok_or_else(|| {
            UsageError::new(format!("--max-input-size {}: give a size such as 256m", args.max_input_size))
        })?;
    Ok(Flags { format, labels, options, bound })
}

/// The bytes of `file` (`-`: standard input, once) and the name it is stored under.
fn read_input(file: &Path, bound: u64, stdin_used: &mut bool) -> anyhow::Result<(Vec<u8>, String)> {
    let input = Input { max_bytes: bound, ..Input::IMPORT };
    Ok(if file.as_os_str() == "-" {
        if std::mem::replace(stdin_used, true) {
            return Err(UsageError::new("`-` (standard input) given twice").into());
        }
        let bytes = iomatrix_guard::read_stream(std::io::stdin().lock(), "standard input (-)", &input, 0)
            .map_err(UsageError::from)?;
        (bytes, "(standard input)".to_string())
    } else {
        let bytes = iomatrix_guard::read(file, &input).map_err(UsageError::from)?;
        (bytes, std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf()).display().to_string())
    })
}

/// One file's text (`bytes`, stored as from `source`) parsed into runs, each through the gate:
/// read by `--format`'s importer, else by the one of `importers` that recognises it.
fn parse_file(
    file: &Path,
    bytes: Vec<u8>,
    source: String,
    flags: &Flags,
    importers: &Importers,
    skip_bad_lines: bool,
) -> anyhow::Result<Parsed> {
    let Flags { format, labels, options, .. } = flags;
    // Only invalid UTF-8 pays for a lossy copy (binary data, a NUL byte, was refused above).
    let text = String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    let name = file.display();
    if text.trim().is_empty() {
        return Err(UsageError::new(format!("{name}: the file is empty: nothing to import")).into());
    }
    let Some(importer) = format.or_else(|| importers.sniff(&text)) else {
        let formats = importers.formats();
        let known: Vec<String> = formats.iter().map(|f| format!("{} ({})", f.describe(), f.name())).collect();
        let names: Vec<&str> = formats.iter().map(|f| f.name()).collect();
        return Err(UsageError::new(format!(
            "{name}: not a format iomatrix can import; it reads {}; say which with --format {}",
            known.join(", "),
            names.join("|")
        ))
        .into());
    };
    let format = importer.format();
    let mut runs = iomatrix_import::parse(&text, importer, options)
        .map_err(|e| UsageError::new(format!("{name}: {}: {e}", format.describe())))?;
    for run in &mut runs {
        through_the_gate(run, &name.to_string(), skip_bad_lines)?;
        if let Some((key, _)) =
            run.labels.iter().find(|(k, _)| k == IMPORTED_LABEL || labels.iter().any(|(l, _)| l == k))
        {
            return Err(UsageError::new(format!(
                "{name}: the table's column label:{key} and --label {key}=... (or the importer's own \
                 {IMPORTED_LABEL}=) both label the run: each key once; drop one"
            ))
            .into());
        }
    }
    Ok(Parsed { source, format, runs })
}

/// Stores each run of each file, a transaction each, labelled `labels` and by its tool.
fn store_runs<'a>(store: &Store, parsed: &'a [Parsed], labels: &[(String, String)]) -> anyhow::Result<Vec<Stored<'a>>> {
    let command_line = command_line();
    let mut stored = Vec::new();
    for p in parsed {
        for run in &p.runs {
            let mut run_labels = labels.to_vec();
            run_labels.push((IMPORTED_LABEL.to_string(), p.format.tool().to_string()));
            run_labels.extend(run.labels.iter().cloned());
            let new_run = NewRun {
                suite: run.suite().to_string(),
                command_line: command_line.clone(),
                labels: run_labels,
                plan: run.plan.clone(),
                environment: run.environment.clone(),
                conditions: conditions(run, &p.source),
                total_cells: run.cells.len(),
            };
            let rows = rows(run);
            let id = store.store_finished_run(&new_run, run.host.as_deref().unwrap_or("unknown"), &rows).with_context(
                || {
                    format!(
                        "cannot store the run read from {}{}",
                        p.source,
                        if stored.is_empty() {
                            String::new()
                        } else {
                            format!(" ({} run(s) stored before it)", stored.len())
                        }
                    )
                },
            )?;
            stored.push((id, p, run));
        }
    }
    Ok(stored)
}

/// `import --json`: the runs stored, as schema [`IMPORT_SCHEMA`].
fn print_json(store: &Store, stored: &[Stored]) -> anyhow::Result<()> {
    let runs: Vec<Value> = stored
        .iter()
        .map(|(id, p, run)| {
            json!({
                "id": id,
                "file": p.source,
                "format": p.format,
                "tool": p.format.tool(),
                "tool_version": run.tool_version,
                "suite": run.suite(),
                "cells": run.cells.len(),
                "host": run.host,
                "measured_at": run.measured_at,
                "unmeasured": run.unmeasured,
                "skipped": run.skipped,
                "skipped_lines": run.bad_lines.len(),
                "bad_lines": run.bad_lines,
                "unknown": run.unknown,
                "notes": run.notes,
            })
        })
        .collect();
    let doc = json!({ "schema": IMPORT_SCHEMA, "db": store.path(), "runs": runs });
    crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))
}

/// The run's conditions as native runs store them, plus what the import knows
/// about itself under `imported`.
fn conditions(run: &ImportedRun, source: &str) -> Value {
    let mut c = run.conditions.clone();
    c.insert(
        "imported".into(),
        json!({
            "tool": run.format.tool(),
            "format": run.format.describe(),
            "version": run.tool_version,
            "source": source,
            "measured_at": run.measured_at,
            "unknown": run.unknown,
            "notes": run.notes,
            "unmeasured": run.unmeasured,
            "skipped": run.skipped,
            "skipped_lines": run.bad_lines.len(),
            "bad_lines": run.bad_lines,
        }),
    );
    if run.format.is_published() {
        // No environment and no samples: compare and show say so (`imported.published`).
        c["imported"]["published"] = true.into();
    }
    Value::Object(c)
}

/// The run's cells as rows, numbered in order.
fn rows(run: &ImportedRun) -> Vec<CellRow> {
    run.cells.iter().enumerate().map(|(seq, c)| row(seq, c)).collect()
}

/// Every cell of `run` through the store's gate before anything is stored, so a refused figure is
/// named with its file and line (exit 2). Skipping bad lines, a line with a refused figure is
/// skipped as one that cannot be read: its cells leave the run, the line is listed.
fn through_the_gate(run: &mut ImportedRun, file: &str, skip: bool) -> anyhow::Result<()> {
    let host = run.host.as_deref().unwrap_or("unknown");
    let lines: Vec<usize> = run.cells.iter().filter_map(|c| c.line).collect();
    let only_line = lines.first().filter(|l| lines.iter().all(|m| m == *l));
    let text_run = NewRun {
        suite: run.suite().to_string(),
        command_line: String::new(),
        labels: Vec::new(),
        plan: run.plan.clone(),
        environment: run.environment.clone(),
        conditions: Value::Object(run.conditions.clone()),
        total_cells: run.cells.len(),
    };
    if let Err(refused) = gate::check_run(&text_run, host) {
        let at = only_line.map(|l| format!("line {l}: ")).unwrap_or_default();
        return Err(UsageError::new(format!("{file}: {at}{refused}")).into());
    }
    let limits = gate::Limits::of_environment(&run.environment);
    loop {
        let refused = rows(run).iter().zip(&run.cells).find_map(|(row, cell)| {
            gate::check_cell(row, &limits).err().map(|refused| (cell.line, cell.source.clone(), refused))
        });
        let Some((line, source, refused)) = refused else { return Ok(()) };
        match line {
            Some(line) if skip => {
                run.cells.retain(|c| c.line != Some(line));
                run.bad_lines.push(BadLine { line, why: refused.to_string() });
                run.bad_lines.sort_by_key(|b| b.line);
                if run.cells.is_empty() {
                    return Err(UsageError::new(format!(
                        "{file}: no figure left to store: every line was skipped ({} line(s))",
                        run.bad_lines.len()
                    ))
                    .into());
                }
            }
            Some(_) => {
                return Err(UsageError::new(format!(
                    "{file}: {source}: {refused} (fix the line, or give --skip-bad-lines to store the rest)"
                ))
                .into())
            }
            None => return Err(UsageError::new(format!("{file}: {source}: {refused}")).into()),
        }
    }
}

/// The cell's row in its place in the run.
fn row(seq: usize, c: &iomatrix_import::ImportedCell) -> CellRow {
    CellRow {
        seq,
        // The tools imported record no failed clients: what they printed is taken as whole.
        state: iomatrix_store::CellState::complete(c.clients.max(1) as u64),
        ..c.row.clone()
    }
}

/// `imported run #N: ...` and, indented below it, what was unmeasured, skipped or unknown.
fn summary(id: i64, p: &Parsed, run: &ImportedRun) -> String {
    let version = run.tool_version.as_deref().map(|v| format!(" {v}")).unwrap_or_default();
    let host = run.host.as_deref().map(|h| format!(" on {h}")).unwrap_or_default();
    let what = if p.format.is_published() { "published table" } else { p.format.tool() };
    let mut out = format!(
        "imported run #{id}: {what}{version}{host} from {}, suite {}, {} cells\n",
        p.source,
        run.suite(),
        run.cells.len()
    );
    if !run.unmeasured.is_empty() {
        let tests: Vec<String> = run
            .unmeasured
            .iter()
            .map(|u| {
                if run.unmeasured.iter().any(|o| o.repeat > 1) {
                    format!("{} #{}", u.test, u.repeat)
                } else {
                    u.test.clone()
                }
            })
            .collect();
        out +=
            &format!("  unmeasured (bonnie++ printed +++++: too fast to time; no cell stored): {}\n", tests.join(", "));
    }
    for s in &run.skipped {
        out += &format!("  skipped: {s}\n");
    }
    if !run.bad_lines.is_empty() {
        out += &format!("  skipped {} line(s) that could not be read (--skip-bad-lines):\n", run.bad_lines.len());
        for b in &run.bad_lines {
            out += &format!("    line {}: {}\n", b.line, iomatrix_core::text::printable(&b.why));
        }
    }
    if !run.unknown.is_empty() {
        out += &format!("  not in the file (stored as unknown): {}\n", run.unknown.join("; "));
    }
    for n in &run.notes {
        out += &format!("  note: {n}\n");
    }
    out
}

fn command_line() -> String {
    std::env::args().map(|a| if a.contains(' ') { format!("'{a}'") } else { a }).collect::<Vec<_>>().join(" ")
}

/// Real output of each tool the importers read, kept beside the import crate's tests: fio
/// 3.33's JSON (a mixed random job on libaio), bonnie++ 2.00a's CSV with `-x 2`, IOzone
/// 3.471's full output with its -R report, and (written from their formats: no output of
/// theirs was at hand) Bonnie 1.x's table and Iometer's results CSV.
#[cfg(test)]
mod real_output {
    const FIO: &str = include_str!("../../crates/import/tests/data/fio-3.33-randrw-libaio.json");
    const BONNIE: &str = include_str!("../../crates/import/tests/data/bonnie-2.00a-x2.csv");
    const IOZONE: &str = include_str!("../../crates/report/tests/data/iozone-3.471-auto-64k-1m-tmpfs.txt");
    const BONNIE_TEXT: &str = include_str!("../../crates/import/tests/data/bonnie-1.x-two-runs.txt");
    const IOMETER: &str = include_str!("../../crates/import/tests/data/iometer-2006.07.27-results.csv");
    const IOZONE_TWO_RECORDS: &str = include_str!("../../crates/report/tests/data/iozone-3.471-s64m-r4k-r1m-tmpfs.txt");
    /// The end of a `-t` run's output with `-R`, laid out as IOzone 3.471 prints it.
    const IOZONE_THROUGHPUT: &str = "\tThroughput test with 2 processes\n\
        \tEach process writes a 1024 kByte file in 4 kByte records\n\n\
        \tChildren see throughput for  2 initial writers \t=  246059.19 kB/sec\n\n\n\n\
        \"Throughput report Y-axis is type of test X-axis is number of processes\"\n\
        \"Record size = 4 kBytes \"\n\"Output is in kBytes/sec\"\n\n\
        \"  Initial write \"  246059.19 \n\n\"        Rewrite \"   86058.34 \n\n\n\niozone test complete.\n";

    use iomatrix_import::{parse, ImportedRun, Importers, Options};

    fn read(importers: &Importers, text: &str, format: &str) -> Vec<ImportedRun> {
        let importer = importers.by_name(format).expect("a format");
        parse(text, importer, &Options::default()).expect("reads")
    }

    #[test]
    fn every_format_is_named_and_listed_in_its_place() {
        let importers = crate::suites::importers();
        let names: Vec<&str> = importers.formats().iter().map(|f| f.name).collect();
        assert_eq!(names, ["fio", "iozone", "bonnie", "bonnie-text", "iometer", "mdtest", "published"]);
        assert_eq!(importers.by_name("bonnie++").map(|i| i.format().name), Ok("bonnie"));
        assert_eq!(importers.by_name("FIO").map(|i| i.format().name), Ok("fio"));
        let unknown = importers.by_name("csv").map(|i| i.format()).unwrap_err().to_string();
        assert_eq!(
            unknown,
            "unknown format 'csv': choose fio, iozone, bonnie, bonnie-text, iometer, mdtest or published"
        );
        // The help is the importers' own words, each format in its place.
        let help = importers.format_help();
        assert!(
            help.starts_with(
                "fio, iozone, bonnie (bonnie++'s CSV), bonnie-text (the original Bonnie's table), iometer, mdtest \
                 (mdtest's output) or published ("
            ),
            "{help}"
        );
        let after = super::after_help();
        assert!(
            after.contains(
                "labelled imported=fio|iozone|bonnie++|bonnie|iometer|mdtest|published: fio jobs -> access cells"
            ),
            "{after}"
        );
        assert!(
            after.contains(
                "-> a run per set of labels and suite, marked published (no environment, no samples). Conditions"
            ),
            "{after}"
        );
    }

    #[test]
    fn real_files_are_recognised_and_read() {
        let importers = crate::suites::importers();
        for (text, format) in
            [(FIO, "fio"), (BONNIE, "bonnie"), (IOZONE, "iozone"), (BONNIE_TEXT, "bonnie-text"), (IOMETER, "iometer")]
        {
            let recognising: Vec<&str> =
                importers.all().filter(|i| i.recognises(text)).map(|i| i.format().name).collect();
            assert_eq!(recognising, [format], "exactly one importer recognises {format}'s output");
            assert_eq!(importers.sniff(text).map(|i| i.format().name), Some(format));
        }

        let fio = &read(&importers, FIO, "fio")[0];
        let c = &fio.cells[0];
        assert_eq!((c.record_size, c.file_size), (Some(8192), Some(8 << 20)));
        assert_eq!((c.metrics["read_percent"].as_u64(), c.metrics["queue_depth"].as_u64()), (Some(70), Some(8)));
        assert_eq!(c.metrics["iops"].as_f64(), Some(35608.391608 + 15224.775225));
        assert_eq!(c.kib_per_sec, (291703944.0 + 124721358.0) / 1024.0);
        assert_eq!(c.metrics["write"]["p99_99_ns"], 5865472);
        assert_eq!(c.backend, "libaio");

        let bonnie = read(&importers, BONNIE, "bonnie");
        assert_eq!(bonnie.len(), 1, "-x 2: one run with two repeats");
        assert_eq!(bonnie[0].plan["repeats"], 2);
        let putc: Vec<f64> = bonnie[0].cells.iter().filter(|c| c.test == "putc").map(|c| c.kib_per_sec).collect();
        assert_eq!(putc, [3598.0, 3596.0]);
        assert_eq!(bonnie[0].unmeasured.len(), 20);

        let iozone = &read(&importers, IOZONE, "iozone")[0];
        assert_eq!(iozone.cells.len(), 210);
        assert_eq!(iozone.tool_version.as_deref(), Some("3.471"));
        let throughput = &read(&importers, IOZONE_THROUGHPUT, "iozone")[0];
        assert_eq!(throughput.cells.len(), 2);
        assert_eq!(throughput.cells[1].kib_per_sec, 86058.34);
    }

    #[test]
    fn no_prefix_of_a_real_file_makes_a_parser_panic() {
        let importers = crate::suites::importers();
        for (text, format) in [
            (FIO, "fio"),
            (BONNIE, "bonnie"),
            (IOZONE, "iozone"),
            (IOZONE_TWO_RECORDS, "iozone"),
            (IOZONE_THROUGHPUT, "iozone"),
            (BONNIE_TEXT, "bonnie-text"),
            (IOMETER, "iometer"),
        ] {
            let own = importers.by_name(format).expect("a format");
            let mut cut = 0;
            while cut < text.len() {
                if text.is_char_boundary(cut) {
                    let part = &text[..cut];
                    let _ = importers.sniff(part);
                    for importer in importers.all() {
                        let _ = parse(part, importer, &Options::default());
                    }
                    // The same with a line mangled: digits turned into letters.
                    let mangled = part.replacen('1', "x", 1);
                    let _ = parse(&mangled, own, &Options::default());
                    let _ = parse(&mangled, own, &Options { skip_bad_lines: true, ..Options::default() });
                }
                cut += 1 + cut / 50;
            }
        }
    }
}
