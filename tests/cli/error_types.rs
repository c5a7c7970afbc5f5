//! Errors typed at the seams (issue 31, "Errors"): the source itself is checked, since a string
//! error or an anyhow in a library crate works until someone needs to tell one failure from
//! another, and then only a grep finds where it came from.
//!
//! - No `Result<_, String>` in the harness, the store, or a suite's `Suite` impl (its `execute`'s
//!   `on_cell` callback is the seam every cell crosses).
//! - anyhow only in the binary and its layers kept as libraries: the harness (whose `Suite` trait
//!   returns it) and each suite's `cli` module (its flags, `Suite` impl and front end); no other
//!   library crate depends on it, and in a suite's crate nothing outside `cli` uses it.
//! - No hand-written `std::error::Error` impl in a library crate: each derives thiserror's.

use crate::source_files::{root, rust_files};
use std::path::{Path, PathBuf};

/// `file:line: text` for each line of `files` that `hit` picks.
fn lines_where(files: &[PathBuf], hit: impl Fn(&str) -> bool) -> Vec<String> {
    let mut hits = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if hit(line) {
                let shown = file.strip_prefix(root()).unwrap_or(file).display().to_string();
                hits.push(format!("{shown}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    hits
}

/// A `Result` whose error is a bare `String`: `Result<T, String>`, `Result<(), String>`.
fn string_result(line: &str) -> bool {
    line.match_indices("Result<").any(|(at, _)| {
        let rest = &line[at + "Result<".len()..];
        let mut depth = 0usize;
        for (i, c) in rest.char_indices() {
            match c {
                '<' | '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                '>' if depth == 0 => return false,
                '>' => depth -= 1,
                ',' if depth == 0 => return rest[i + 1..].trim_start().starts_with("String>"),
                _ => {}
            }
        }
        false
    })
}

#[test]
fn the_string_result_finder_finds_what_it_looks_for() {
    assert!(string_result("fn f() -> Result<(), String> {"));
    assert!(string_result("on_cell: &mut dyn FnMut(&Cell) -> Result<(), String>,"));
    assert!(string_result("fn g() -> Result<Vec<(u8, u16)>, String>"));
    assert!(!string_result("fn h() -> Result<(), StoreError>"));
    assert!(!string_result("fn i() -> Result<String, StoreError>"));
    assert!(!string_result("fn j() -> anyhow::Result<String>"));
}

#[test]
fn the_harness_the_store_and_the_suite_seam_return_no_string_errors() {
    let mut files = rust_files(&root().join("crates/harness/src"));
    files.extend(rust_files(&root().join("crates/store/src")));
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let suite = entry.unwrap().path().join("src/cli/suite.rs");
        if suite.is_file() {
            files.push(suite);
        }
    }
    assert!(files.len() > 20, "too few files found: {files:?}");
    let hits = lines_where(&files, string_result);
    assert!(hits.is_empty(), "string errors at the seams:\n{}", hits.join("\n"));
}

/// A crate that is one of the binary's own layers kept as a library: the harness, or a suite's
/// crate (one with `src/cli/suite.rs`, its `Suite` impl).
fn binary_layer(krate: &Path) -> bool {
    krate.ends_with("harness") || krate.join("src/cli/suite.rs").is_file()
}

/// Where anyhow may be used in `file`, a source of the crate `krate`: anywhere in the harness; in a
/// suite's crate only under `src/cli/`.
fn may_use_anyhow(krate: &Path, file: &Path) -> bool {
    krate.ends_with("harness") || (binary_layer(krate) && file.starts_with(krate.join("src/cli")))
}

#[test]
fn anyhow_is_a_dependency_of_the_binary_and_its_layers_only() {
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    crates.sort();
    assert!(crates.len() > 20, "too few crates found: {crates:?}");
    assert!(crates.iter().any(|c| c.ends_with("harness")), "the harness is a crate");
    let manifests: Vec<PathBuf> = crates.iter().filter(|c| !binary_layer(c)).map(|c| c.join("Cargo.toml")).collect();
    let hits = lines_where(&manifests, |line| line.trim_start().starts_with("anyhow"));
    assert!(hits.is_empty(), "library crates depending on anyhow:\n{}", hits.join("\n"));
    let mut sources = Vec::new();
    for krate in &crates {
        sources.extend(rust_files(&krate.join("src")).into_iter().filter(|f| !may_use_anyhow(krate, f)));
    }
    let uses = lines_where(&sources, |line| line.contains("anyhow::"));
    assert!(uses.is_empty(), "anyhow in library crates:\n{}", uses.join("\n"));
}

#[test]
fn library_crates_derive_their_errors_with_thiserror() {
    let sources = rust_files(&root().join("crates"));
    let hits = lines_where(&sources, |line| {
        let line = line.trim_start();
        line.starts_with("impl") && (line.contains("std::error::Error for") || line.contains(" Error for "))
    });
    assert!(hits.is_empty(), "hand-written Error impls (derive thiserror::Error instead):\n{}", hits.join("\n"));
}
