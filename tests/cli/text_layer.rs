//! One place writes text (issue 31): what `show` and `runs` print of a stored run, the parts
//! every suite shares, is written by the report crate's `text` layer through its one table
//! layout, and prints as it printed before the move, column for column.

use crate::helpers::*;
use crate::source_files::rust_files;
use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A format spec that aligns to a width (`{:>14}`, `{cell:<44}`, `{:>10.1}`): a column laid out by
/// hand instead of by `Table`. (A zero-padded number, `{:03}`, is no column.)
fn padded_specs(source: &str) -> Vec<String> {
    crate::human_numbers::hand_formats(source)
        .into_iter()
        .filter(|(_, spec)| spec.split_once(':').is_some_and(|(_, f)| f.starts_with(['<', '>', '^'])))
        .map(|(n, spec)| format!("{n}: {spec}"))
        .collect()
}

/// No table of the binary, the harness, the text layer or a suite's tables is laid out by hand: every
/// column goes through `iomatrix_report::table::Table`, the one table layout.
#[test]
fn every_table_is_laid_out_by_the_one_table_layout() {
    let mut files = rust_files(&repo().join("src"));
    files.extend(rust_files(&repo().join("crates/report/src/text")));
    files.extend(rust_files(&repo().join("crates/harness/src")));
    for entry in std::fs::read_dir(repo().join("crates")).expect("crates") {
        let crate_src = entry.expect("entry").path().join("src");
        let render = crate_src.join("render.rs");
        if render.exists() {
            files.push(render);
        }
        // A suite's command line, Suite impl and front end (moved from src/suites in issue 49).
        if crate_src.join("cli").is_dir() {
            files.extend(rust_files(&crate_src.join("cli")));
        }
    }
    assert!(files.len() > 60, "the binary, the text layer and the suites' tables were read: {}", files.len());
    let mut hand_laid = Vec::new();
    for path in &files {
        let source = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = path.strip_prefix(repo()).unwrap().display().to_string();
        hand_laid.extend(padded_specs(&source).into_iter().map(|l| format!("{name}:{l}")));
    }
    assert!(
        hand_laid.is_empty(),
        "columns laid out by hand, not through iomatrix_report::table::Table:\n{}",
        hand_laid.join("\n")
    );
}

#[test]
fn shows_shared_text_is_written_by_the_report_crates_text_layer_and_the_check_finds_a_hand_laid_column() {
    assert!(
        !repo().join("src/render").exists(),
        "src/render is gone: the binary chooses what to print and crates/report/src/text writes it"
    );
    assert_eq!(padded_specs(r#"let _ = writeln!(out, "{:<44} {:>8} {x:>7.1}% {{}} {:?}", a);"#).len(), 3);
}

#[test]
fn the_verification_table_keeps_its_columns_after_the_move() {
    let sb = Sandbox::new();
    let target = sb.target();
    let out = sb.run(&[
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--bs",
        "4k,16k",
        "--read",
        "100",
        "--random",
        "100",
        "--qd",
        "1",
        "--bytes",
        "256k",
        "--file-size",
        "1m",
        "--verify",
    ]);
    assert_success(&out);
    let run = sb.last_run();
    let id = run["run"]["id"].as_i64().expect("id").to_string();
    let (shown, _) = text(&sb.run(&["show", &id]));
    let mut lines = shown.lines().skip_while(|l| !l.starts_with("Verification (")).skip(1);
    let header = format!(
        "{:<44} {:>10} {:>10} {:>12} {:>8} {:>8} {:>10} {:>10}",
        "cell", "checked", "wrong data", "wrong offset", "stale", "torn", "unchecked", "verify ms"
    );
    assert_eq!(lines.next(), Some(header.as_str()), "{shown}");
    let tallies: Vec<serde_json::Value> =
        cells(&run).iter().map(|c| c["metrics"]["verify"].clone()).filter(|t| t.is_object()).collect();
    assert_eq!(tallies.len(), 2, "a tally per cell: {run}");
    for t in &tallies {
        let line = lines.next().expect("a row per verified cell");
        let name = line[..44].trim_end();
        assert!(name.contains(" 4k ") || name.contains(" 16k "), "the cell's name: {line}");
        let n = |k: &str| t[k].as_u64().unwrap_or_else(|| panic!("{k} in {t}"));
        let expected = format!(
            "{:<44} {:>10} {:>10} {:>12} {:>8} {:>8} {:>10} {:>10.1}",
            name,
            n("checked_blocks"),
            n("wrong_data"),
            n("wrong_offset"),
            n("stale"),
            n("torn"),
            n("unchecked_blocks"),
            n("verify_ns") as f64 / 1e6
        );
        assert_eq!(line, expected);
        assert!(n("checked_blocks") > 0, "the reads were checked: {t}");
    }
}

#[test]
fn runs_lists_each_run_in_the_columns_it_always_had() {
    let sb = Sandbox::new();
    let (empty, _) = text(&sb.run(&["runs"]));
    assert_eq!(empty, "no runs stored yet\n");
    let target = sb.target();
    for label in ["disk=ssd", "disk=spinning rust"] {
        assert_success(&sb.run(&[
            "run",
            "access",
            "--target",
            target.to_str().unwrap(),
            "--bs",
            "4k",
            "--bytes",
            "64k",
            "--file-size",
            "256k",
            "--label",
            label,
        ]));
    }
    let (listed, _) = text(&sb.run(&["runs"]));
    let runs = sb.runs_json();
    let runs = runs["runs"].as_array().expect("runs");
    let mut expected = format!(
        "{:>5}  {:<20}  {:<7}  {:<11}  {:>11}  {:<12}  labels\n",
        "run", "started (UTC)", "suite", "status", "cells", "host"
    );
    for r in runs {
        // Stored as [key, value] pairs.
        let labels: Vec<String> = r["labels"]
            .as_array()
            .expect("labels")
            .iter()
            .map(|pair| format!("{}={}", pair[0].as_str().unwrap(), pair[1].as_str().unwrap()))
            .collect();
        expected += &format!(
            "{:>5}  {:<20}  {:<7}  {:<11}  {:>11}  {:<12}  {}\n",
            r["id"].as_i64().unwrap(),
            r["started_at"].as_str().unwrap(),
            r["suite"].as_str().unwrap(),
            r["status"].as_str().unwrap(),
            format!("{}/{}", r["cells"], r["total_cells"]),
            r["host"].as_str().unwrap(),
            labels.join(" ")
        );
    }
    assert_eq!(listed, expected);
    assert!(listed.contains("disk=spinning rust"), "{listed}");
}
