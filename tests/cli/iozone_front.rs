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
                if l.starts_with("\"") && !l.contains("report") {
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
