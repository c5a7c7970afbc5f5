//! `iomatrix import` of real mdtest outputs (tests/fixtures/mdtest: mdtest 4.1.0+dev and 4.0.0,
//! one task and two MPI ranks, IO500's lines): each output a metadata run, each phase it ran a
//! cell holding its `PhaseResult` under "phase", every figure the one in the source as the same
//! parser reads it, and `show` prints the phases.

use crate::helpers::*;
use iomatrix_metadata::import::summary::parse_outputs;
use serde_json::Value;
use std::path::PathBuf;

fn fixtures() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mdtest");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    assert!(files.len() >= 16, "the fixtures: {files:?}");
    files
}

/// The ids in `imported run #N:` lines, in order.
fn imported_ids(out: &std::process::Output) -> Vec<i64> {
    assert_success(out);
    let (stdout, _) = text(out);
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("imported run #"))
        .map(|l| l.split(':').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn every_real_mdtest_output_imports_with_its_phases() {
    let sb = Sandbox::new();
    for file in fixtures() {
        let source = std::fs::read_to_string(&file).unwrap();
        let outputs = parse_outputs(&source).unwrap();
        let ids = imported_ids(&sb.run(&["import", file.to_str().unwrap()]));
        assert_eq!(ids.len(), outputs.len(), "{}", file.display());
        for (id, out) in ids.iter().zip(&outputs) {
            let run = sb.show_json(*id);
            assert_eq!(run["run"]["suite"], "metadata", "{}", file.display());
            assert_eq!(run["run"]["status"], "complete");
            let stored = cells(&run);
            let ran: Vec<_> = out.rate.as_ref().unwrap().rows.iter().filter(|r| r.ran()).collect();
            assert_eq!(stored.len(), ran.len(), "a cell per phase that ran: {}", file.display());
            for row in ran {
                let phase = row.phase.unwrap();
                let cell = stored
                    .iter()
                    .find(|c| c["test"] == phase.name())
                    .unwrap_or_else(|| panic!("{}: no cell {}", file.display(), phase.name()));
                let p: &Value = &cell["metrics"]["phase"];
                assert_eq!(p["rate_slowest_times_clients"].as_f64(), Some(row.mean()), "{}", row.name);
                assert_eq!(cell["metrics"]["mdtest"]["max"].as_f64(), Some(row.max()));
                assert_eq!(cell["metrics"]["mdtest"]["std_dev"].as_f64(), Some(row.std_dev()));
                assert_eq!(p["clients"].as_array().map(Vec::len), Some(0), "each task's own: not in the source");
                assert!(p["latency"].is_null(), "no latency in mdtest's output");
                assert_eq!(cell["clients"].as_u64(), out.tasks);
                assert_eq!(cell["metrics"]["per_sec"], p["rate_all_over_slowest"], "the figure compare judges");
            }
        }
    }
}

#[test]
fn show_prints_an_imported_mdtest_run_and_what_it_lacks() {
    let sb = Sandbox::new();
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mdtest/master-np2-io500-easy-write.txt");
    let ids = imported_ids(&sb.run(&["import", "--format", "mdtest", file.to_str().unwrap()]));
    let (shown, _) = text(&sb.run(&["show", &ids[0].to_string()]));
    assert!(shown.contains("imported: mdtest 4.1.0+dev"), "{shown}");
    assert!(shown.contains("clients: 2"), "{shown}");
    let create = shown.lines().find(|l| l.starts_with("file-create ")).unwrap_or_else(|| panic!("{shown}"));
    let words: Vec<&str> = create.split_whitespace().collect();
    assert_eq!(words[1], "92058", "2 tasks x 46,029, the stonewall's count: {create}");
    assert!(words[3].starts_with("81345.5"), "the SUMMARY rate as mdtest printed it: {create}");
    assert!(words[2].starts_with("81323.3"), "92,058 over -P's 1.132 s: {create}");
    assert!(shown.contains("not in the source: each task's own rate and time"), "{shown}");
    let run = sb.show_json(ids[0]);
    let create = cells(&run).into_iter().find(|c| c["test"] == "file-create").unwrap();
    assert_eq!(create["metrics"]["mdtest"]["stonewall"]["min"], 40364, "the stonewall line's counts");
}

#[test]
fn a_table_out_of_mdtests_columns_is_refused_by_its_line() {
    let sb = Sandbox::new();
    let source = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mdtest/master-n1000-u.txt"),
    )
    .unwrap();
    let moved = source.replace("   File stat                  290102.642", "   File stat                 290102.642 ");
    let file = sb.dir.path().join("moved.txt");
    std::fs::write(&file, moved).unwrap();
    let out = sb.run(&["import", "--format", "mdtest", file.to_str().unwrap()]);
    assert_usage_error(&out, "line 19: 'File stat': its Max column (bytes 26..40)");
    assert!(sb.runs_json()["runs"].as_array().unwrap().is_empty(), "nothing stored");
}

#[test]
fn two_imported_mdtest_runs_compare_phase_by_phase() {
    let sb = Sandbox::new();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mdtest");
    let mut ids = Vec::new();
    for name in ["v400-n1000-u.txt", "master-n1000-u.txt"] {
        ids.extend(imported_ids(&sb.run(&["import", dir.join(name).to_str().unwrap()])));
    }
    let out = sb.run(&["compare", &ids[0].to_string(), &ids[1].to_string()]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    // mdtest 4.1's file create, 45,081.623/s, against 4.0's: a row per phase, each with its change.
    let create = stdout.lines().find(|l| l.starts_with("file-create (ops/s)")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(create.contains("45081.62"), "{create}");
    for phase in ["dir-create", "dir-stat", "dir-rename", "dir-remove", "file-stat", "file-read", "file-remove"] {
        assert!(stdout.lines().any(|l| l.starts_with(&format!("{phase} (ops/s)"))), "{phase}: {stdout}");
    }
}
