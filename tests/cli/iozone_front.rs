//! `iomatrix iozone` takes IOzone's own command lines.
use crate::helpers::*;

const FIXTURE: &str = include_str!("../../crates/report/tests/data/iozone-3.471-auto-64k-1m-tmpfs.txt");

#[test]
fn seed_001_line_runs_and_writes_the_workbook() {
    let sb = Sandbox::new();
    let file = sb.target().join("iozone.tmp");
    // Seed 001's line, `+t` aside, with -f to keep the file in the sandbox.
    let out = sb.run(&[
        "iozone",
        "-Rab",
        "out.xlsx",
        "-s",
        "512m",
        "-r",
        "64k",
        "-e",
        "-c",
        "-i",
        "0",
        "-i",
        "2",
        "-f",
        file.to_str().unwrap(),
    ]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("Excel output is below:"));
    for title in ["\"Writer report\"", "\"Re-writer report\"", "\"Random read report\"", "\"Random write report\""] {
        assert!(stdout.contains(title), "missing {title}");
    }
    let xlsx = std::fs::read(sb.dir.path().join("out.xlsx")).expect("out.xlsx written in the working directory");
    assert_eq!(&xlsx[..2], b"PK");
    let run = sb.last_run();
    let cells = cells(&run);
    let tests: Vec<&str> = cells.iter().map(|c| c["test"].as_str().unwrap()).collect();
    assert_eq!(tests, ["write", "rewrite", "random-read", "random-write"]);
    for c in &cells {
        assert_eq!(c["file_size"], 512u64 << 20);
        assert_eq!(c["record_size"], 64u64 << 10);
        assert_eq!(c["bytes"], 512u64 << 20);
        assert!(c["kib_per_sec"].as_f64().unwrap() > 0.0);
    }
    let plan = &run["run"]["plan"];
    assert_eq!(plan["fsync"], true);
    assert_eq!(plan["close"], true);
    assert_eq!(plan["file_name"], "iozone.tmp");
    assert!(sb.leftovers().is_empty());
}

#[test]
fn fixture_line_gives_iozones_matrix_and_report_layout() {
    let sb = Sandbox::new();
    let file = sb.target().join("iozone.tmp");
    let out = sb.run(&[
        "iozone",
        "-a",
        "-n",
        "64k",
        "-g",
        "1m",
        "-i",
        "0",
        "-i",
        "1",
        "-i",
        "2",
        "-e",
        "-c",
        "-R",
        "-f",
        file.to_str().unwrap(),
    ]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    let ours = before_summary(&stdout).split("Excel output is below:\n").nth(1).expect("-R report");
    let theirs = FIXTURE.split("Excel output is below:\n").nth(1).unwrap();
    // Same blocks, same header, same rows (file sizes) with the same number of values.
    let shape = |s: &str| -> Vec<String> {
        s.lines()
            .map(|l| {
                if l.starts_with('"') && !l.contains("report") {
                    let mut words = l.split_whitespace();
                    format!("{} x{}", words.next().unwrap(), words.count())
                } else {
                    l.to_string()
                }
            })
            .collect()
    };
    assert_eq!(shape(ours), shape(theirs));
    assert_eq!(cells(&sb.last_run()).len(), 35 * 6);
    // Imported, the output gives back the run's cells (KB/s to the printed integers).
    let (_, imported) = crate::iozone_report::import_stdout(&sb, &stdout, 0.5);
    assert_eq!(imported.len(), 35 * 6);
}

#[test]
fn auto_mode_to_64m_follows_iozones_pairs() {
    let sb = Sandbox::new();
    let file = sb.target().join("iozone.tmp");
    // Seed 000's matrix, cut at 64m; -i 0 keeps it quick.
    let out = sb.run(&["iozone", "-a", "-n", "64k", "-g", "64m", "-i", "0", "-+n", "-f", file.to_str().unwrap()]);
    assert_success(&out);
    let cells = cells(&sb.last_run());
    // 64k..32m: records 4k..min(file,16m); 64m: records 64k..16m.
    let expected: usize = [5, 6, 7, 8, 9, 10, 11, 12, 13, 13, 9].iter().sum();
    assert_eq!(cells.len(), expected);
    assert!(cells.iter().all(|c| c["test"] == "write"));
    assert!(!cells.iter().any(|c| c["file_size"] == 64u64 << 20 && c["record_size"].as_u64().unwrap() < 64 << 10));
}

#[test]
fn threads_each_get_their_own_file() {
    let sb = Sandbox::new();
    let file = sb.target().join("f.tmp");
    let out =
        sb.run(&["iozone", "-t", "2", "-s", "256k", "-r", "16k", "-i", "0", "-i", "1", "-f", file.to_str().unwrap()]);
    assert_success(&out);
    for c in cells(&sb.last_run()) {
        assert_eq!(c["clients"], 2);
        assert_eq!(c["bytes"], 2 * (256u64 << 10));
    }
}

#[test]
fn help_and_unknown_flags() {
    let sb = Sandbox::new();
    let out = sb.run(&["iozone", "-h"]);
    assert_success(&out);
    assert!(text(&out).0.contains("-i N"));
    assert_usage_error(&sb.run(&["iozone", "-a", "-Q"]), "'-Q'");
    assert_usage_error(&sb.run(&["iozone", "-i", "11"]), "test 11");
    assert_usage_error(&sb.run(&["iozone", "-s", "64q"]), "64q");
}

#[test]
fn seed_001_plus_t_runs_and_labelled_runs_are_found_by_sweep() {
    let sb = Sandbox::new();
    let file = sb.target().join("iozone.tmp");
    let f = file.to_str().unwrap();
    // Seed 001's line as typed (+t without its dash), scaled to 1 MiB; then IOzone's -+t spelling.
    for (level, t) in [("1", "+t"), ("2", "-+t")] {
        let label = format!("cache={level}");
        let out = sb.run(&[
            "iozone", "-Rab", "out.xlsx", "-s", "1m", "-r", "64k", "-e", "-c", "-i", "0", "-i", "2", t, "-f", f,
            "--label", &label,
        ]);
        assert_success(&out);
        let (stdout, stderr) = text(&out);
        assert!(stderr.contains(&format!("{t}: IOzone's network performance test")), "{stderr}");
        assert!(stdout.contains("\"Writer report\""), "{stdout}");
    }
    let out = sb.run(&["sweep", "cache=1", "cache=2", "--by", "cache", "--json"]);
    assert_success(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["sweep"]["levels"], serde_json::json!(["1", "2"]));
    assert_eq!(doc["sweep"]["rows"].as_array().unwrap().len(), 4, "write, rewrite, random read and write");
    // --json alone on standard output, no -R report after it.
    let out = sb.run(&["iozone", "-R", "-s", "64k", "-i", "0", "-f", f, "--json"]);
    assert_success(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("--json prints JSON alone");
    assert_eq!(doc["run"]["suite"], "iozone");
}

/// The classic table's lines of an IOzone output: its two header lines and the rows under
/// them, up to the first blank line.
fn classic_lines(output: &str) -> Vec<&str> {
    let lines: Vec<&str> = output.lines().collect();
    let header = lines.iter().position(|l| l.trim_start().starts_with("kB  reclen")).expect("the classic table");
    let rows = lines[header + 1..].iter().take_while(|l| !l.trim().is_empty()).count();
    lines[header - 1..header + 1 + rows].to_vec()
}

/// Where each figure of a line ends: the column positions.
fn right_edges(line: &str) -> Vec<usize> {
    let mut edges = Vec::new();
    let bytes = line.as_bytes();
    for i in 0..bytes.len() {
        if bytes[i] != b' ' && bytes.get(i + 1).is_none_or(|b| *b == b' ') {
            edges.push(i + 1);
        }
    }
    edges
}

/// The front end's classic table beside a real IOzone 3.471's for the same command line: the
/// same header lines, the same (kB, reclen) rows in order, every figure ending in the column
/// IOzone's ends in, and each line as wide (IOzone keeps the blanks of tests that did not run).
fn assert_classic_table_as_iozones(flags: &[&str], iozone_output: &str) {
    let sb = Sandbox::new();
    let file = sb.target().join("iozone.tmp");
    let mut args = vec!["iozone"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["-f", file.to_str().unwrap()]);
    let out = sb.run(&args);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(!stdout.contains("Excel output is below:"), "no -R: no -R report");
    let ours = classic_lines(&stdout);
    let theirs = classic_lines(iozone_output);
    assert_eq!(ours[..2], theirs[..2], "the header lines, byte for byte");
    assert_eq!(ours.len(), theirs.len(), "a row per file and record size:\n{}", ours.join("\n"));
    for (mine, real) in ours[2..].iter().zip(&theirs[2..]) {
        let words = |l: &str| l.split_whitespace().take(2).map(str::to_string).collect::<Vec<_>>();
        assert_eq!(words(mine), words(real), "kB and reclen");
        assert_eq!(right_edges(mine), right_edges(real), "columns:\n{mine}\n{real}");
        assert_eq!(mine.len(), real.len(), "width with IOzone's blanks:\n{mine:?}\n{real:?}");
    }
    // The figures are the run's: the write column is the stored write cells' KB/s, rounded.
    let run = sb.last_run();
    for row in &ours[2..] {
        let words: Vec<u64> = row.split_whitespace().map(|w| w.parse().unwrap()).collect();
        let write = cells(&run)
            .into_iter()
            .find(|c| {
                c["test"] == "write"
                    && c["file_size"].as_u64() == Some(words[0] * 1024)
                    && c["record_size"].as_u64() == Some(words[1] * 1024)
            })
            .expect("the row's write cell");
        assert_eq!(words[2], write["kib_per_sec"].as_f64().unwrap().round() as u64, "{row}");
    }
}

#[test]
fn without_dash_r_the_classic_table_is_laid_out_as_iozones() {
    let real = include_str!("../../crates/report/tests/data/iozone-3.471-classic-s64m-r4k-r1m-tmpfs.txt");
    // IOzone ran 64m files; the layout does not depend on the size, which stays small here.
    let real = real.replace("           65536", "            4096");
    assert_classic_table_as_iozones(
        &["-s", "4m", "-r", "4k", "-r", "1m", "-e", "-c", "-i", "0", "-i", "1", "-i", "2"],
        &real,
    );
}

#[test]
fn auto_modes_classic_table_has_iozones_rows_and_blank_columns() {
    let real = include_str!("../../crates/report/tests/data/iozone-3.471-classic-auto-64k-1m-tmpfs.txt");
    assert_classic_table_as_iozones(&["-a", "-n", "64k", "-g", "1m", "-e", "-c", "-i", "0", "-i", "1"], real);
}

/// `python3 -c SCRIPT ARGS` with Debian's python3 (xlrd is Debian's python3-xlrd), its
/// standard output; None when it or xlrd is missing.
fn xlrd_cells(path: &std::path::Path) -> Option<Vec<(usize, usize, serde_json::Value)>> {
    const SCRIPT: &str = "import json, sys, xlrd\n\
        sheet = xlrd.open_workbook(sys.argv[1]).sheet_by_index(0)\n\
        print(json.dumps([[r, c, sheet.cell_value(r, c)] for r in range(sheet.nrows) for c in range(sheet.ncols) \
        if sheet.cell_type(r, c) != xlrd.XL_CELL_EMPTY]))\n";
    let python = std::path::Path::new("/usr/bin/python3");
    let has_xlrd = python.exists()
        && std::process::Command::new(python).args(["-c", "import xlrd"]).output().is_ok_and(|o| o.status.success());
    if !has_xlrd {
        return None;
    }
    let out = std::process::Command::new(python).args(["-c", SCRIPT]).arg(path).output().unwrap();
    assert!(out.status.success(), "xlrd refused the file: {}", String::from_utf8_lossy(&out.stderr));
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("WARNING"),
        "xlrd warned: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn dash_b_xls_is_a_real_xls_that_readers_open_with_the_runs_figures() {
    let sb = Sandbox::new();
    let file = sb.target().join("iozone.tmp");
    let book = sb.dir.path().join("out.xls");
    let out = sb.run(&[
        "iozone",
        "-R",
        "-b",
        book.to_str().unwrap(),
        "-s",
        "1m",
        "-r",
        "4k",
        "-r",
        "64k",
        "-i",
        "0",
        "-i",
        "2",
        "-f",
        file.to_str().unwrap(),
    ]);
    assert_success(&out);
    let bytes = std::fs::read(&book).unwrap();
    assert_eq!(&bytes[..8], [0x09, 0x00, 0x04, 0x00, 0x02, 0x00, 0x10, 0x00], "an Excel 2.1 BOF, not a zip");
    let run = sb.last_run();
    let figure = |test: &str, record_kib: u64| {
        cells(&run)
            .into_iter()
            .find(|c| c["test"] == test && c["record_size"].as_u64() == Some(record_kib * 1024))
            .unwrap()["kib_per_sec"]
            .as_f64()
            .unwrap()
    };
    if let Some(got) = xlrd_cells(&book) {
        let at = |r: usize, c: usize| got.iter().find(|x| x.0 == r && x.1 == c).map(|x| x.2.clone());
        assert_eq!(at(0, 0), Some("Writer report".into()));
        assert_eq!((at(1, 1), at(1, 2)), (Some(4.0.into()), Some(64.0.into())));
        assert_eq!(at(2, 0), Some(1024.0.into()), "the file size, KiB");
        assert_eq!(at(2, 1).and_then(|v| v.as_f64()), Some(figure("write", 4)));
        assert_eq!(at(2, 2).and_then(|v| v.as_f64()), Some(figure("write", 64)));
        let title = |t: &str| got.iter().find(|x| x.2 == t).map(|x| x.0).unwrap_or_else(|| panic!("{t}: {got:?}"));
        let random_write = title("Random write report");
        assert_eq!(at(random_write + 2, 2).and_then(|v| v.as_f64()), Some(figure("random-write", 64)));
    } else {
        skip("python3-xlrd is not installed (/usr/bin/python3 -c 'import xlrd'): the .xls is not read back by xlrd");
    }
    if have("libreoffice") {
        let csv_dir = sb.dir.path().join("csv");
        let home = sb.dir.path().join("lo-home");
        let convert = std::process::Command::new("libreoffice")
            .env("HOME", &home)
            .args(["--headless", "--convert-to", "csv", "--outdir"])
            .arg(&csv_dir)
            .arg(&book)
            .output()
            .unwrap();
        assert!(convert.status.success(), "{}", String::from_utf8_lossy(&convert.stderr));
        let csv = std::fs::read_to_string(csv_dir.join("out.csv")).expect("LibreOffice wrote the sheet as CSV");
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0].split(',').next(), Some("Writer report"), "{csv}");
        let row: Vec<&str> = lines[2].split(',').collect();
        assert_eq!(row[0], "1024", "{csv}");
        // LibreOffice writes a number as its General format shows it: to 10 significant digits or fewer.
        let shown: f64 = row[1].parse().unwrap();
        assert!((shown - figure("write", 4)).abs() <= figure("write", 4) * 1e-9, "{csv}");
    } else {
        skip("libreoffice is not installed (Debian's libreoffice-calc-nogui): the .xls is not opened by LibreOffice");
    }
    // -b out.xlsx stays an .xlsx workbook.
    let xlsx = sb.dir.path().join("out.xlsx");
    let out = sb.run(&[
        "iozone",
        "-b",
        xlsx.to_str().unwrap(),
        "-s",
        "1m",
        "-r",
        "64k",
        "-i",
        "0",
        "-f",
        file.to_str().unwrap(),
    ]);
    assert_success(&out);
    assert_eq!(&std::fs::read(&xlsx).unwrap()[..2], b"PK");
}

#[test]
fn dash_b_xls_never_replaces_the_database_a_folder_or_a_foreign_xls() {
    let sb = Sandbox::new();
    let file = sb.target().join("iozone.tmp");
    let f = file.to_str().unwrap();
    assert_success(&sb.run(&["iozone", "-s", "64k", "-r", "64k", "-i", "0", "-f", f]));
    let db = sb.db();
    let before = std::fs::read(&db).unwrap();
    assert_usage_error(&sb.run(&["iozone", "-b", db.to_str().unwrap(), "-s", "64k", "-i", "0", "-f", f]), "database");
    assert_eq!(std::fs::read(&db).unwrap(), before, "the results database is untouched");
    assert_usage_error(
        &sb.run(&["iozone", "-b", sb.target().to_str().unwrap(), "-s", "64k", "-i", "0", "-f", f]),
        "folder",
    );
    // Someone's own .xls (IOzone's, say) is replaced only with --force; iomatrix's own is replaced.
    let theirs = sb.dir.path().join("theirs.xls");
    std::fs::write(&theirs, [0x09, 0x00, 0x04, 0x00, 0x02, 0x00, 0x10, 0x00, 0x0a, 0x00, 0x00, 0x00]).unwrap();
    let t = theirs.to_str().unwrap();
    assert_usage_error(&sb.run(&["iozone", "-b", t, "-s", "64k", "-i", "0", "-f", f]), "--force");
    assert_eq!(std::fs::read(&theirs).unwrap().len(), 12);
    assert_success(&sb.run(&["iozone", "-b", t, "--force", "-s", "64k", "-i", "0", "-f", f]));
    assert_success(&sb.run(&["iozone", "-b", t, "-s", "64k", "-i", "0", "-f", f]));
}

#[test]
fn dash_f_in_a_missing_folder_names_dash_f() {
    let sb = Sandbox::new();
    let missing = sb.target().join("missing").join("iozone.tmp");
    let out = sb.run(&["iozone", "-s", "64k", "-i", "0", "-f", missing.to_str().unwrap()]);
    assert_usage_error(&out, "-f ");
    let (_, stderr) = text(&out);
    assert!(!stderr.contains("--target"), "the user typed -f, not --target: {stderr}");
}
