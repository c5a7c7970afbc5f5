//! `bench/uring-depths-vs-fio.sh --pool`: the tables over several saved runs. The seven runs in
//! bench/runs are the ones bench/README.md and the README quote; these tests hold the pooling to
//! account on them (each run alone gives back its own table; seven give 49 pairs per case) and
//! attack it with what is not a saved run of the same experiment.

use crate::helpers::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const RUNS: &str = "bench/runs/uring-depths-2026-11-28";

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn saved_runs() -> Vec<PathBuf> {
    (1..=7).map(|i| repo().join(RUNS).join(format!("run{i}.log"))).collect()
}

/// The script's tables need bash and python3; without them the case is skipped, and says so.
fn tools_present() -> bool {
    for tool in ["bash", "python3"] {
        if !have(tool) {
            skip(format!("{tool} is needed to run bench/uring-depths-vs-fio.sh --pool"));
            return false;
        }
    }
    true
}

fn pool(args: &[&Path]) -> Output {
    Command::new("bash")
        .arg(repo().join("bench/uring-depths-vs-fio.sh"))
        .arg("--pool")
        .args(args)
        .output()
        .expect("bash runs")
}

/// The rows of the first IOPS table in `text`: "case" line to the "paired:" explanation.
fn iops_rows(text: &str) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.starts_with("case ") || !l.contains("iomatrix IOPS"))
        .skip(1)
        .take_while(|l| l.starts_with("rand"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn pooling_one_saved_run_prints_the_table_that_run_printed() {
    if !tools_present() {
        return;
    }
    for log in saved_runs() {
        let saved = std::fs::read_to_string(&log).expect("the saved run is in the repository");
        let own = iops_rows(&saved);
        assert_eq!(own.len(), 8, "{} has its table of 8 cases", log.display());
        let out = pool(&[&log]);
        assert_success(&out);
        let (stdout, stderr) = text(&out);
        assert_eq!(iops_rows(&stdout), own, "--pool {} gave another table:\n{stdout}", log.display());
        assert!(stderr.contains("56 pairs over 8 cases"), "{stderr}");
    }
}

#[test]
fn pooling_the_seven_saved_runs_counts_each_pair_once() {
    if !tools_present() {
        return;
    }
    let runs = saved_runs();
    let args: Vec<&Path> = runs.iter().map(PathBuf::as_path).collect();
    let out = pool(&args);
    assert_success(&out);
    let (stdout, stderr) = text(&out);
    let rows = iops_rows(&stdout);
    assert_eq!(rows.len(), 8, "{stdout}");
    for row in &rows {
        // case (2 words), 2 medians, paired, won: "n/49".
        let won = row.split(' ').nth(5).expect("a won column");
        assert!(won.ends_with("/49"), "7 pairs from each of 7 runs, not {won}: {row}");
    }
    assert_eq!(stderr.matches("56 pairs over 8 cases").count(), 7, "{stderr}");
    assert!(stdout.contains("pooled 7 logs"), "{stdout}");
    assert!(stdout.contains("CPU per request"), "the CPU table follows: {stdout}");
}

#[test]
fn pool_refuses_what_is_not_a_saved_run_of_the_same_experiment() {
    if !tools_present() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let runs = saved_runs();
    let first = runs[0].as_path();
    let saved = std::fs::read_to_string(first).unwrap();

    let sparse = dir.path().join("sparse-10g");
    std::fs::File::create(&sparse).unwrap().set_len(10 << 30).unwrap();
    let other_conditions = dir.path().join("five-seconds.log");
    std::fs::write(&other_conditions, saved.replace("4s per run", "5s per run")).unwrap();
    let copy = dir.path().join("copy.log");
    std::fs::write(&copy, &saved).unwrap();
    let no_runs = dir.path().join("no-runs.log");
    let conditions_only: String =
        saved.lines().filter(|l| !l.starts_with(|c: char| c.is_ascii_digit())).map(|l| format!("{l}\n")).collect();
    std::fs::write(&no_runs, conditions_only).unwrap();
    let readme = repo().join("README.md");

    let zero = Path::new("/dev/zero");
    let cases: [(&[&Path], &Path, &str); 6] = [
        (&[zero], zero, "not a saved run"),
        (&[sparse.as_path()], &sparse, "not a saved run"),
        (&[first, other_conditions.as_path()], &other_conditions, "other conditions"),
        (&[first, copy.as_path()], &copy, "count each pair twice"),
        (&[no_runs.as_path()], &no_runs, "no per-run line"),
        (&[readme.as_path()], &readme, "no conditions line"),
    ];
    for (args, named, why) in cases {
        let out = pool(args);
        let (stdout, stderr) = text(&out);
        assert!(!out.status.success(), "--pool {args:?} was accepted: {stdout}");
        assert!(stderr.contains(&named.display().to_string()) && stderr.contains(why), "--pool {args:?}: {stderr}");
        assert!(!stdout.contains("iomatrix/fio paired"), "--pool {args:?} printed a table: {stdout}");
    }

    // The run's options would be ignored beside --pool: refused, not dropped.
    let out = Command::new("bash")
        .arg(repo().join("bench/uring-depths-vs-fio.sh"))
        .args(["--duration", "5s", "--pool"])
        .arg(first)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out).1.contains("give it first"), "{}", text(&out).1);
}
