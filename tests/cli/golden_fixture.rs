//! Issue 49's guard: what every command prints is byte-identical before and after the
//! restructuring.
//!
//! - tests/fixtures/db-main-7a976992.sqlite is a database written by main at 7a976992, before
//!   the change (tests/fixtures/make-db.sh made it; tests/fixtures/README.md lists its runs).
//!   Every command of tests/golden/main-7a976992/commands reads a copy of it and prints what
//!   tests/golden/main-7a976992/expected/NAME holds (the check of golden.rs).
//! - The help of every command and subcommand (`--help` and `-h`) is
//!   tests/golden/main-7a976992/help/NAME, byte for byte.
//!
//! Written anew with `IOMATRIX_GOLDEN=write cargo test --test cli golden`, reviewed in `git diff`.

use crate::golden::{check_commands, first_difference, golden, writing};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn set() -> PathBuf {
    golden().join("main-7a976992")
}

#[test]
fn every_output_of_main_7a976992s_database_is_what_it_was() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/db-main-7a976992.sqlite");
    check_commands(&fixture, &set(), 150);
}

/// `iomatrix ARGS` with no database named and no terminal width: its exit code and output.
fn help_text(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_iomatrix"))
        .args(args)
        .env_remove("IOMATRIX_DB")
        // clap wraps the help at $COLUMNS when it is set; without it at its fixed width.
        .env_remove("COLUMNS")
        .stdin(Stdio::null())
        .output()
        .expect("run iomatrix");
    format!(
        "$ iomatrix {}\n# exit {:?}\n{}\n# stderr\n{}",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The subcommands a help text lists under "Commands:" (help itself left out).
fn subcommands(help: &str) -> Vec<String> {
    let Some(commands) = help.split("\nCommands:\n").nth(1) else { return Vec::new() };
    commands
        .lines()
        .take_while(|l| l.starts_with("  "))
        // A name starts at the third column; deeper lines continue the text before them.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// Every command path's `--help` and `-h`, found by walking "Commands:" from the top: file
/// name (the path joined by '-', "top" for iomatrix itself) to its text.
fn every_help() -> BTreeMap<String, String> {
    let mut helps = BTreeMap::new();
    let mut paths: Vec<Vec<String>> = vec![Vec::new()];
    while let Some(path) = paths.pop() {
        let name = if path.is_empty() { "top".to_string() } else { path.join("-") };
        for flag in ["--help", "-h"] {
            let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
            args.push(flag);
            let text = help_text(&args);
            if flag == "--help" {
                for sub in subcommands(&text) {
                    paths.push([path.clone(), vec![sub]].concat());
                }
            }
            helps.insert(format!("{name}{flag}"), text);
        }
        assert!(helps.len() < 400, "the walk of Commands: does not end: {:?}", helps.keys());
    }
    helps
}

#[test]
fn every_help_text_is_what_it_was_golden() {
    let dir = set().join("help");
    let helps = every_help();
    // The walk must have found the suites and the commands with subcommands of their own.
    for name in ["top--help", "run-iozone--help", "run-personality-h", "db-check--help", "study-show--help"] {
        assert!(helps.contains_key(name), "no help {name} among {:?}", helps.keys());
    }
    if writing() {
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in &helps {
            std::fs::write(dir.join(name), text).unwrap();
        }
        return;
    }
    let stored: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    let gone: Vec<&String> = stored.iter().filter(|s| !helps.contains_key(*s)).collect();
    let new: Vec<&String> = helps.keys().filter(|h| !stored.contains(h)).collect();
    assert!(gone.is_empty() && new.is_empty(), "help texts no longer there: {gone:?}; new: {new:?}");
    let differing: Vec<String> = helps
        .iter()
        .filter_map(|(name, got)| first_difference(name, &std::fs::read_to_string(dir.join(name)).unwrap(), got))
        .collect();
    assert!(
        differing.is_empty(),
        "{} of {} help texts differ:\n{}",
        differing.len(),
        helps.len(),
        differing.join("\n")
    );
}
