//! What the harness does alike for every suite: `--repeat`, `--tolerance`
//! and `--max-repeats` (noisy cells measured again), `--label`, `--json`
//! and the flags' errors, each run on every suite with a small plan.

use crate::helpers::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Small plans of every suite that writes, against `target`.
fn writing_suites(target: &Path) -> Vec<(&'static str, Vec<String>)> {
    let t = target.to_str().unwrap().to_string();
    let args = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        (
            "iozone",
            args(&["run", "iozone", "--target", &t, "--files", "64k", "--records", "64k", "--tests", "write,read"]),
        ),
        ("access", args(&["run", "access", "--target", &t, "--bs", "4k", "--file-size", "1m", "--bytes", "1m"])),
        (
            "bonnie",
            args(&["run", "bonnie", "--target", &t, "--size", "1m", "--allow-cache", "--fast", "--file-count", "16"]),
        ),
        (
            "fileserver",
            args(&[
                "run",
                "fileserver",
                "--target",
                &t,
                "--connections",
                "2",
                "--files-per-connection",
                "4",
                "--sizes",
                "4k,16k",
            ]),
        ),
        (
            "personality",
            args(&["run", "personality", "netware-2008", "--target", &t, "--connections", "2", "--files", "4"]),
        ),
    ]
}

/// A tree for the backup walk: a few small files.
fn small_tree(dir: &Path) -> String {
    let tree = dir.join("tree");
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    for (i, size) in [4096usize, 65536, 1 << 20].iter().enumerate() {
        std::fs::write(tree.join(format!("f{i}")), vec![i as u8; *size]).unwrap();
        std::fs::write(tree.join("sub").join(format!("g{i}")), vec![7u8; *size / 2]).unwrap();
    }
    tree.to_str().unwrap().to_string()
}

fn with(base: &[String], more: &[&str]) -> Vec<String> {
    base.iter().cloned().chain(more.iter().map(|s| s.to_string())).collect()
}

fn run(sb: &Sandbox, args: &[String]) -> std::process::Output {
    sb.run(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Samples per cell, by what tells cells apart for the noise rule.
fn samples_per_cell(run: &Value) -> BTreeMap<String, usize> {
    let mut per_cell = BTreeMap::new();
    for c in cells(run) {
        let m = &c["metrics"];
        let key = format!(
            "{} {} {} {} {}",
            c["test"].as_str().unwrap(),
            c["file_size"],
            c["record_size"],
            m["read_percent"],
            m["queue_depth"]
        );
        *per_cell.entry(key).or_default() += 1;
    }
    per_cell
}

#[test]
fn every_suite_measures_noisy_cells_again_up_to_max_repeats() {
    let sb = Sandbox::new();
    let tree = small_tree(sb.dir.path());
    let mut suites = writing_suites(&sb.target());
    suites.push(("backup", vec!["run".into(), "backup".into(), "--target".into(), tree, "--warm".into()]));
    for (suite, base) in suites {
        // A tolerance no two samples meet: every cell is measured again, up to --max-repeats.
        let out = run(&sb, &with(&base, &["--repeat", "2", "--tolerance", "0.000001%", "--max-repeats", "3"]));
        assert_success(&out);
        assert!(text(&out).1.contains("measuring them again"), "{suite}: {}", text(&out).1);
        let stored = sb.last_run();
        assert_eq!(stored["run"]["suite"], suite);
        assert_eq!(stored["run"]["status"], "complete", "{suite}");
        let per_cell = samples_per_cell(&stored);
        assert!(!per_cell.is_empty(), "{suite}");
        assert!(per_cell.values().all(|n| *n == 3), "{suite}: every cell has --max-repeats samples: {per_cell:?}");
        let planned = stored["run"]["total_cells"].as_u64().unwrap() as usize;
        assert_eq!(planned, cells(&stored).len(), "{suite}: the planned cells grew with the re-measures");
        let seqs: Vec<u64> = cells(&stored).iter().map(|c| c["seq"].as_u64().unwrap()).collect();
        assert_eq!(seqs, (0..planned as u64).collect::<Vec<_>>(), "{suite}: cells numbered across passes");
        let (stdout, _) = text(&sb.run(&["show", &stored["run"]["id"].to_string()]));
        assert!(stdout.contains("Noise: 3 to 3 samples per repeated cell"), "{suite}: {stdout}");
        // A tolerance every sample meets: nothing is measured again.
        let out = run(&sb, &with(&base, &["--repeat", "2", "--tolerance", "1000000%"]));
        assert_success(&out);
        assert!(!text(&out).1.contains("measuring them again"), "{suite}: {}", text(&out).1);
        assert!(samples_per_cell(&sb.last_run()).values().all(|n| *n == 2), "{suite}");
    }
}

#[test]
fn the_shared_flags_mean_the_same_in_every_suite() {
    let sb = Sandbox::new();
    let tree = small_tree(sb.dir.path());
    let mut suites = writing_suites(&sb.target());
    suites.push(("backup", vec!["run".into(), "backup".into(), "--target".into(), tree, "--warm".into()]));
    for (suite, base) in &suites {
        let refused = |more: &[&str], needle: &str| assert_usage_error(&run(&sb, &with(base, more)), needle);
        refused(&["--repeat", "0"], "--repeat 0");
        refused(&["--tolerance", "much"], "--tolerance much");
        refused(&["--max-repeats", "5"], "--max-repeats needs --tolerance");
        refused(&["--tolerance", "5%", "--repeat", "3", "--max-repeats", "2"], "--max-repeats 2 is below --repeat 3");
        refused(&["--label", "novalue"], "--label 'novalue'");
        refused(&["--clients", "0"], "--clients 0");
        refused(&["--on-client-error", "shrug"], "--on-client-error");
        refused(&["--before", " "], "--before is empty");
        // Labels and --json alike: the stored run printed as JSON, labelled.
        let out = run(&sb, &with(base, &["--label", "setup=a", "--json"]));
        assert_success(&out);
        let printed: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{suite}: {e}"));
        assert_eq!(printed["schema"], "iomatrix.run/1");
        assert_eq!(printed["run"]["suite"], *suite);
        assert_eq!(printed["run"]["labels"], serde_json::json!([["setup", "a"]]), "{suite}: {printed}");
    }
}
