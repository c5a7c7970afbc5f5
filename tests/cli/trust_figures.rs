//! Issue 30, finding 6 and part of 11: no figure enters the database unless it is a number inside
//! its physical bounds (the store's gate, for runs and every importer); an importer fails on a
//! line it cannot read, naming file and line, unless `--skip-bad-lines`, which stores the rest and
//! says and stores what it skipped; an Iometer spec without its ALL row is an error, an empty
//! field unknown; labels once each and printable, escaped on output even from an old database;
//! CPU% of clients never above 100 x the cores.
//!
//! The importer cases write small files made from the real outputs the import tests keep
//! (crates/import/tests/data, crates/report/tests/data), each spoiled in one place.

use crate::helpers::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).expect("fixture")
}

/// IOzone 3.471's full output (`-a -n 64k -g 1m -i 0 -i 1 -i 2 -e -c -R`): 210 cells.
fn iozone_output() -> String {
    data("crates/report/tests/data/iozone-3.471-auto-64k-1m-tmpfs.txt")
}

/// Its `-R` report alone (no main table to place the rows by).
fn iozone_report() -> String {
    let all = iozone_output();
    all[all.find("Excel output is below:").unwrap()..].to_string()
}

fn write(sb: &Sandbox, name: &str, text: &str) -> PathBuf {
    let path = sb.dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn import(sb: &Sandbox, file: &Path, more: &[&str]) -> Output {
    let mut args = vec!["import", file.to_str().unwrap()];
    args.extend_from_slice(more);
    sb.run(&args)
}

fn stored_runs(sb: &Sandbox) -> usize {
    sb.runs_json()["runs"].as_array().unwrap().len()
}

/// Exit 2, one error line naming the file and each of `needles`, and nothing stored.
fn refused(sb: &Sandbox, out: &Output, file: &Path, needles: &[&str]) -> String {
    let name = file.file_name().unwrap().to_str().unwrap();
    assert_usage_error(out, name);
    let (_, stderr) = text(out);
    for n in needles {
        assert!(stderr.contains(n), "the error should say '{n}':\n{stderr}");
    }
    assert_eq!(stored_runs(sb), 0, "nothing stored:\n{stderr}");
    stderr
}

/// 1-based line of the first line of `text` that contains `needle` (after line `after`).
fn line_of(text: &str, needle: &str, after: usize) -> usize {
    text.lines().enumerate().skip(after).find(|(_, l)| l.contains(needle)).expect("needle in text").0 + 1
}

#[test]
fn an_iozone_report_with_a_damaged_line_stores_nothing_and_names_the_line() {
    let sb = Sandbox::new();
    // A line of garbage inside the Writer block: main stored 14 of its rows' cells, exit 0.
    let output = iozone_output();
    let row = "\"128\"   1561553  2098744";
    let damaged = output.replacen(row, &format!("#~ damaged ~#\n{row}"), 1);
    let file = write(&sb, "damaged.txt", &damaged);
    let line = line_of(&damaged, "#~ damaged ~#", 0);
    let stderr =
        refused(&sb, &import(&sb, &file, &[]), &file, &[&format!("line {line}"), "is not a row", "--skip-bad-lines"]);
    assert!(!stderr.contains("#~ damaged ~#\n"), "{stderr}");
}

#[test]
fn an_iozone_row_cut_short_is_refused_not_placed_by_guess() {
    let sb = Sandbox::new();
    // The report alone: a row that lost its last value was placed under the header's smallest
    // record sizes (main stored 34 of 35 cells of the Writer block, exit 0).
    let report = iozone_report();
    let row = "\"1024\"   1681132  1976691  2107643  2183727  2202766  2188177  1927891  1828574  2064088 ";
    assert!(report.contains(row));
    let cut =
        report.replacen(row, "\"1024\"   1681132  1976691  2107643  2183727  2202766  2188177  1927891  1828574 ", 1);
    let file = write(&sb, "cut.txt", &cut);
    let line = line_of(&cut, "\"1024\"   1681132", 0);
    refused(&sb, &import(&sb, &file, &[]), &file, &[&format!("line {line}"), "8 values, fewer than the record sizes"]);
    // Whole, it imports every cell.
    let whole = write(&sb, "whole.txt", &report);
    assert_success(&import(&sb, &whole, &[]));
    assert_eq!(cells(&sb.last_run()).len(), 210);
}

#[test]
fn skip_bad_lines_stores_the_rest_and_says_and_stores_each_line_skipped() {
    let sb = Sandbox::new();
    let output = iozone_output();
    let row = "\"128\"   1561553  2098744";
    let damaged = output.replacen(row, &format!("#~ damaged ~#\n{row}"), 1);
    // In the -R report's Writer block, not in IOzone's main table above it.
    let at = damaged.find("Excel output is below:").unwrap();
    let negative = format!("{}{}", &damaged[..at], damaged[at..].replacen("524487", "-956380", 1));
    let file = write(&sb, "damaged.txt", &negative);
    let garbage = line_of(&negative, "#~ damaged ~#", 0);
    let below_zero = line_of(&negative, "-956380", line_of(&negative, "Excel output", 0));
    let out = import(&sb, &file, &["--skip-bad-lines"]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("skipped 2 line(s) that could not be read (--skip-bad-lines)"), "{stdout}");
    assert!(
        stdout.contains(&format!("line {garbage}: ")) && stdout.contains(&format!("line {below_zero}: ")),
        "{stdout}"
    );
    let run = sb.last_run();
    // The negative figure's whole row (5 cells of the 64 kB file) is left out; the rest stored.
    assert_eq!(cells(&run).len(), 210 - 5);
    assert!(cells(&run).iter().all(|c| c["kib_per_sec"].as_f64().unwrap() >= 0.0));
    let imported = &run["run"]["conditions"]["imported"];
    assert_eq!(imported["skipped_lines"], 2);
    let lines: Vec<u64> =
        imported["bad_lines"].as_array().unwrap().iter().map(|b| b["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [below_zero as u64, garbage as u64]);
    assert!(imported["bad_lines"][0]["why"].as_str().unwrap().contains("not negative"), "{imported}");
    let (shown, _) = text(&sb.run(&["show", &run["run"]["id"].to_string()]));
    assert!(shown.contains("skipped lines: 2 (--skip-bad-lines): line "), "{shown}");
}

#[test]
fn impossible_figures_from_every_importer_are_refused_naming_file_line_figure_and_bound() {
    let report = iozone_report();
    let fio = data("crates/import/tests/data/fio-3.33-randrw-libaio.json");
    let iometer = data("crates/import/tests/data/iometer-2006.07.27-results.csv");
    let bonnie = data("crates/import/tests/data/bonnie-1.x-two-runs.txt");
    let bonnie_csv = "1.98,2.00a,vm,1,1795365941,16M,,8192,5,3167,86,+++++,+++,+++++,+++,4312,78,+++++,+++,+++++,+++,1,,,,,\
                      +++++,+++,+++++,+++,+++++,+++,+++++,+++,+++++,+++,+++++,+++,10890us,4261us,24us,5478us,20us,5309us,\
                      72us,32us,183us,165us,21us,478us\n";
    let all = "ALL,All,2K Streaming Read,1,1,1,2334.720000";
    let cases: Vec<(&str, String, Vec<String>)> = vec![
        (
            "negative.txt",
            report.replacen("524487", "-956380", 1),
            vec![
                format!("line {}", line_of(&report, "524487", 0)),
                "kib_per_sec = -956380".into(),
                "not negative".into(),
            ],
        ),
        (
            "huge.txt",
            report.replacen("524487", "1e23", 1),
            vec![format!("line {}", line_of(&report, "524487", 0)), "kib_per_sec = 1e23".into(), "1 EiB/s".into()],
        ),
        (
            "fio.json",
            fio.replacen("\"iops\" : 35608.391608", "\"iops\" : 1.7e308", 1),
            vec!["jobs[0]".into(), "metrics.iops = 1.7e308".into(), "at most 1e12 per second".into()],
        ),
        (
            "iometer-negative.csv",
            iometer.replacen(all, "ALL,All,2K Streaming Read,1,1,1,-2334.72", 1),
            vec![
                format!("line {}", line_of(&iometer, all, 0)),
                "metrics.iops = -2334.72".into(),
                "not negative".into(),
            ],
        ),
        (
            "iometer-huge.csv",
            iometer.replacen(all, "ALL,All,2K Streaming Read,1,1,1,1e300", 1),
            vec![format!("line {}", line_of(&iometer, all, 0)), "metrics.iops = 1e300".into(), "at most 1e12".into()],
        ),
        (
            "bonnie-kbs.txt",
            bonnie.replacen("61435", "99999999999999999999999", 1),
            vec!["line 11".into(), "kib_per_sec = 1e23".into(), "1 EiB/s".into()],
        ),
        (
            "bonnie-cpu.txt",
            bonnie.replacen("61435 18.3", "61435 9999.9", 1),
            vec!["line 11".into(), "9999.9".into(), "%CPU".into()],
        ),
        (
            "machine.csv",
            bonnie_csv.replacen(",vm,", &format!(",{},", "m".repeat(200_000)), 1),
            vec!["line 1".into(), "machine name".into(), "200000 characters".into(), "at most 255".into()],
        ),
    ];
    for (name, text, needles) in cases {
        let sb = Sandbox::new();
        let file = write(&sb, name, &text);
        let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
        let stderr = refused(&sb, &import(&sb, &file, &[]), &file, &needles);
        assert!(stderr.len() < 2000, "{name}: a short message, not the figure's text:\n{stderr}");
    }
}

#[test]
fn an_iometer_spec_without_its_all_row_is_an_error_naming_the_spec() {
    let sb = Sandbox::new();
    let iometer = data("crates/import/tests/data/iometer-2006.07.27-results.csv");
    let all = iometer.lines().find(|l| l.starts_with("ALL,All,2K Streaming Write")).unwrap();
    let at = iometer.find(all).unwrap();
    let end = at + iometer[at..].find('\n').unwrap() + 1;
    let file = write(&sb, "two-of-three.csv", &format!("{}{}", &iometer[..at], &iometer[end..]));
    refused(&sb, &import(&sb, &file, &[]), &file, &["access spec '2K Streaming Write'", "no ALL row"]);
    refused(&sb, &import(&sb, &file, &["--skip-bad-lines"]), &file, &["no ALL row"]);
}

#[test]
fn an_empty_iometer_cpu_field_is_stored_as_unknown_never_zero() {
    let sb = Sandbox::new();
    let iometer = data("crates/import/tests/data/iometer-2006.07.27-results.csv");
    let columns = iometer.lines().find(|l| l.starts_with("'Target Type,")).unwrap();
    let k = columns.split(',').position(|c| c == "% CPU Utilization").unwrap();
    let all = iometer.lines().find(|l| l.starts_with("ALL,All,2K Streaming Read")).unwrap();
    let mut fields: Vec<&str> = all.split(',').collect();
    assert_eq!(fields[k], "23.400000");
    fields[k] = "";
    let file = write(&sb, "no-cpu.csv", &iometer.replacen(all, &fields.join(","), 1));
    assert_success(&import(&sb, &file, &[]));
    let run = sb.last_run();
    let cells = cells(&run);
    assert!(cells[0]["cpu_percent"].is_null(), "unknown, not 0: {}", cells[0]);
    assert_eq!(cells[1]["cpu_percent"], 23.4);
    let (shown, _) = text(&sb.run(&["show", &run["run"]["id"].to_string()]));
    let first = shown.lines().find(|l| l.trim_start().starts_with("2k ")).expect("the 2k row");
    assert!(first.trim_end().ends_with('-'), "CPU% shown as unknown: {first}\n{shown}");
}

/// A tiny iozone run with `more` flags.
fn tiny_run(sb: &Sandbox, more: &[&str]) -> Output {
    let target = sb.target();
    let mut args = vec!["run", "iozone", "--target", target.to_str().unwrap(), "--files", "64k", "--records", "4k"];
    args.extend_from_slice(&["--tests", "write"]);
    args.extend_from_slice(more);
    sb.run(&args)
}

#[test]
fn a_label_key_given_twice_is_refused_wherever_labels_come_in() {
    let sb = Sandbox::new();
    assert_usage_error(&tiny_run(&sb, &["--label", "a=1", "--label", "a=2"]), "the key 'a' is given twice");
    let out = sb
        .cmd()
        .args(["run", "iozone", "--target"])
        .arg(sb.target())
        .args(["--files", "64k", "--records", "4k"])
        .env("IOMATRIX_LABELS", "a=1,a=2")
        .output()
        .unwrap();
    assert_usage_error(&out, "IOMATRIX_LABELS");
    let file = write(&sb, "report.txt", &iozone_report());
    assert_usage_error(&import(&sb, &file, &["--label", "fs=ext4", "--label", "fs=xfs"]), "given twice");
    assert_eq!(stored_runs(&sb), 0);
    // Once each, and a key of the variable the command line also gives: the command line's wins.
    let out = sb
        .cmd()
        .args(["run", "iozone", "--target"])
        .arg(sb.target())
        .args(["--files", "64k", "--records", "4k", "--tests", "write", "--label", "a=cli"])
        .env("IOMATRIX_LABELS", "a=env,b=2")
        .output()
        .unwrap();
    assert_success(&out);
    assert_eq!(sb.last_run()["run"]["labels"], serde_json::json!([["a", "cli"], ["b", "2"]]));
}

#[test]
fn labels_holding_control_characters_are_refused_wherever_labels_come_in() {
    let sb = Sandbox::new();
    let fake_row = "x\n    9  2026-01-01T00:00:00Z  iozone   complete   1/1  vm  fake=row";
    for bad in [format!("evil={fake_row}"), "red\u{1b}[31m=1".to_string(), "k=tab\there".to_string()] {
        assert_usage_error(&tiny_run(&sb, &["--label", &bad]), "a label holds printable text only");
        let out = sb
            .cmd()
            .args(["run", "iozone", "--target"])
            .arg(sb.target())
            .args(["--files", "64k", "--records", "4k"])
            .env("IOMATRIX_LABELS", &bad)
            .output()
            .unwrap();
        assert_usage_error(&out, "IOMATRIX_LABELS");
        let file = write(&sb, "report.txt", &iozone_report());
        assert_usage_error(&import(&sb, &file, &["--label", &bad]), "a label holds printable text only");
        let (_, stderr) = text(&import(&sb, &file, &["--label", &bad]));
        assert!(!stderr.contains('\u{1b}') && stderr.lines().count() == 1, "printed escaped: {stderr}");
    }
    // A study configuration's labels, before any step runs.
    std::fs::create_dir_all(sb.dir.path().join("a")).unwrap();
    let study = write(
        &sb,
        "evil.toml",
        &format!(
            "version = 1\nname = \"evil\"\n\n[[config]]\nname = \"a\"\ntarget = \"{}/a\"\nlabels = {{ disk = \"one\\nfake row\" }}\n\n\
             [[step]]\nname = \"m\"\nsuite = \"iozone\"\nargs = {{ files = \"64k\", records = \"4k\", tests = \"write\" }}\n",
            sb.dir.path().display()
        ),
    );
    assert_usage_error(&sb.run(&["study", "run", study.to_str().unwrap()]), "a label holds printable text only");
    assert_eq!(stored_runs(&sb), 0);
}

#[test]
fn runs_and_show_escape_control_characters_stored_by_an_old_database() {
    let sb = Sandbox::new();
    assert_success(&tiny_run(&sb, &["--label", "fs=ext4"]));
    {
        // What an older iomatrix let in: a label with a newline that draws a fake row, escape
        // sequences in a label and in the machine name.
        let db = rusqlite::Connection::open(sb.db()).unwrap();
        db.execute(
            "INSERT INTO labels (run_id, key, value) VALUES (1, 'evil', ?1)",
            ["x\n    9  2026-01-01T00:00:00Z  iozone   complete        1/1  vm            fake=row"],
        )
        .unwrap();
        db.execute("INSERT INTO labels (run_id, key, value) VALUES (1, 'red\u{1b}[31m', '\u{1b}]0;title\u{7}')", [])
            .unwrap();
        db.execute("UPDATE runs SET host = 'vm\u{1b}[2J', error = 'a\nb' WHERE id = 1", []).unwrap();
    }
    let out = sb.run(&["runs"]);
    assert_success(&out);
    let (listed, _) = text(&out);
    assert_eq!(listed.lines().count(), 2, "a header and one row:\n{listed}");
    assert!(!listed.contains('\u{1b}') && !listed.contains('\u{7}'), "{listed:?}");
    assert!(listed.contains("evil=x\\n    9") && listed.contains("red\\e[31m="), "{listed}");
    let out = sb.run(&["show", "1"]);
    assert_success(&out);
    let (shown, _) = text(&out);
    assert!(!shown.contains('\u{1b}') && !shown.contains('\u{7}'), "{shown:?}");
    let labels: Vec<&str> = shown.lines().filter(|l| l.starts_with("labels: ")).collect();
    assert_eq!(labels.len(), 1, "{shown}");
    assert!(labels[0].contains("fake=row"), "{shown}");
    assert!(!shown.lines().any(|l| l.trim_start().starts_with("9  2026")), "no fake row:\n{shown}");
    assert!(shown.contains("error: a\\nb"), "{shown}");
    // JSON keeps the stored text as it is (escaped by JSON itself).
    let run = sb.show_json(1);
    assert_eq!(run["run"]["host"], "vm\u{1b}[2J");
}

/// `iomatrix` pinned to CPU 0, so the run's environment records 1 CPU.
fn pinned(sb: &Sandbox, args: &[&str]) -> Output {
    Command::new("taskset")
        .args(["-c", "0", env!("CARGO_BIN_EXE_iomatrix")])
        .args(args)
        .env("IOMATRIX_DB", sb.db())
        .env(crate::helpers::BUSY_VAR, "off")
        .current_dir(sb.dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run taskset")
}

#[test]
fn clients_cpu_never_shows_more_than_100_percent_of_the_cores() {
    if !have("taskset") {
        return skip("taskset is not installed (Debian: util-linux)");
    }
    let sb = Sandbox::new();
    let target = sb.target();
    let target = target.to_str().unwrap();
    // Four clients on one CPU: they take turns, so each started its clock late; main measured each
    // from its own start and showed up to ~400% CPU.
    let out = pinned(
        &sb,
        &[
            "run",
            "iozone",
            "--target",
            target,
            "--clients",
            "4",
            "--files",
            "1m,4m",
            "--records",
            "4k,64k",
            "--tests",
            "write,rewrite,read,reread",
        ],
    );
    assert_success(&out);
    let out = pinned(
        &sb,
        &[
            "run",
            "fileserver",
            "--target",
            target,
            "--clients",
            "3",
            "--connections",
            "4",
            "--files-per-connection",
            "20",
            "--sizes",
            "4k,64k",
        ],
    );
    assert_success(&out);
    for run in sb.runs_json()["runs"].as_array().unwrap() {
        let run = sb.show_json(run["id"].as_i64().unwrap());
        let cpus = run["run"]["environment"]["cpu_count"].as_u64().unwrap();
        assert_eq!(cpus, 1, "taskset -c 0: one CPU");
        for c in cells(&run) {
            let cpu = c["cpu_percent"].as_f64().unwrap();
            assert!(
                cpu <= 100.0 * cpus as f64 * 1.001,
                "{} {}: {cpu}% CPU on {cpus} CPU",
                run["run"]["suite"],
                c["test"]
            );
        }
    }
    // The iozone run's CPU matrices as `show` prints them.
    let (shown, _) = text(&sb.run(&["show", "1"]));
    let mut in_cpu = false;
    for line in shown.lines() {
        if line.contains("CPU (%)") {
            in_cpu = true;
        } else if line.trim().is_empty() {
            in_cpu = false;
        } else if in_cpu && line.split_whitespace().next().is_some_and(|w| w.parse::<u64>().is_ok()) {
            // A row: the file size (kB), then a CPU figure per record size.
            let figures: Vec<f64> = line.split_whitespace().skip(1).map(|w| w.parse().unwrap()).collect();
            assert!(!figures.is_empty() && figures.iter().all(|v| *v <= 100.0), "{line}\n{shown}");
        }
    }
}
