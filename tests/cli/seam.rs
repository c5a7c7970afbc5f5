//! A suite is known to the rest of iomatrix only through the seam: its crate, its folder under
//! `src/suites/`, its line in the suite table and the workspace's member glob. The shared code
//! (the subcommands, the stored runs' text, the harness, analysis, the reports) never names one:
//! what differs per suite is an item of its `Suite` impl, which the table hands on. These tests
//! read the source tree, so a branch on a suite's name in shared code fails here, not in a
//! user's `compare` of a suite added next year.

use crate::helpers::*;
use std::path::{Path, PathBuf};

/// Where the shared code lives: every folder and top-level file of the binary but `src/suites/`,
/// and the crates every suite's runs go through.
const SHARED: &[&str] = &["src", "crates/harness/src", "crates/analysis/src", "crates/report/src"];

/// Literals in shared code that spell a suite's name without meaning the suite, each with why.
const NOT_A_SUITE: &[(&str, &str, &str)] = &[(
    "crates/report/src/xlsx.rs",
    r#"pub const RESULTS_SHEET: &str = "iozone";"#,
    "the worksheet name of IOzone's own -b workbook, which the report's workbooks copy: a format's name",
)];

/// Shared files that still reach into one suite's folder or crate, each with why. The list may
/// only shrink: a new file here is a suite named outside its own folder.
const REACHES_INTO_A_SUITE: &[(&str, &str)] = &[
    (
        "src/commands/personalities.rs",
        "`iomatrix personalities` lists and checks the personality suite's files: that suite's own subcommand",
    ),
    (
        "src/commands/extents.rs",
        "`iomatrix extents` walks a tree with the backup walk's FIEMAP pass (iomatrix_backup::extents_of_tree)",
    ),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every suite: one folder each under `src/suites/`.
fn suites() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("src/suites"))
        .expect("src/suites")
        .map(|e| e.expect("src/suites entry"))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            // The suites' own folders may name their suite: that is where it belongs.
            if path != root().join("src/suites") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// The lines of `source` (its product code: up to its test module, without comments) that hold
/// a string literal spelling one of `suites`, as (line number, line).
fn suite_literals<'a>(source: &'a str, suites: &[String]) -> Vec<(usize, &'a str)> {
    source
        .lines()
        .enumerate()
        .take_while(|(_, line)| line.trim() != "#[cfg(test)]")
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .filter(|(_, line)| suites.iter().any(|s| line.contains(&format!("\"{s}\""))))
        .map(|(i, line)| (i + 1, line))
        .collect()
}

/// The lines of `source`'s product code that name one of `suites`' folders (`suites::NAME`) or
/// crates (`iomatrix_NAME`; dbench is the personality suite's second crate).
fn suite_paths<'a>(source: &'a str, suites: &[String]) -> Vec<(usize, &'a str)> {
    let crates: Vec<String> =
        suites.iter().map(String::as_str).chain(["dbench"]).map(|s| format!("iomatrix_{s}")).collect();
    let folders: Vec<String> = suites.iter().map(|s| format!("suites::{s}")).collect();
    let names = |line: &str, path: &str| {
        line.match_indices(path)
            .any(|(i, _)| !line[i + path.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
    };
    source
        .lines()
        .enumerate()
        .take_while(|(_, line)| line.trim() != "#[cfg(test)]")
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .filter(|(_, line)| crates.iter().chain(&folders).any(|p| names(line, p)))
        .map(|(i, line)| (i + 1, line))
        .collect()
}

#[test]
fn the_check_finds_a_branch_on_a_suite_name() {
    let suites = vec!["bonnie".to_string(), "iozone".to_string()];
    let planted = "fn f(suite: &str) -> bool {\n    // \"iozone\" in a comment is prose\n    suite == \"iozone\"\n}\n";
    assert_eq!(suite_literals(planted, &suites), [(3, "    suite == \"iozone\"")]);
    let in_tests = "fn f() {}\n#[cfg(test)]\nmod tests {\n    const S: &str = \"bonnie\";\n}\n";
    assert!(suite_literals(in_tests, &suites).is_empty(), "tests may name the suites they build runs of");
    let reaching = "use crate::suites::iozone::render;\nuse iomatrix_bonnie_extra::X;\nlet c = iomatrix_dbench::f();\n";
    assert_eq!(suite_paths(reaching, &suites).iter().map(|(n, _)| *n).collect::<Vec<_>>(), [1, 3]);
}

#[test]
fn shared_code_never_names_a_suite() {
    let suites = suites();
    assert!(suites.len() >= 6, "the suite folders: {suites:?}");
    let mut files = Vec::new();
    for dir in SHARED {
        rust_files(&root().join(dir), &mut files);
    }
    assert!(files.len() > 50, "the shared code was read: {} files", files.len());
    let mut found = Vec::new();
    let mut exempt_seen = vec![false; NOT_A_SUITE.len()];
    for file in &files {
        let relative = file.strip_prefix(root()).expect("under the root").to_string_lossy().into_owned();
        let source = std::fs::read_to_string(file).expect("source");
        for (n, line) in suite_literals(&source, &suites) {
            match NOT_A_SUITE.iter().position(|(f, l, _)| *f == relative && line.trim() == *l) {
                Some(i) => exempt_seen[i] = true,
                None => found.push(format!("{relative}:{n}: {}", line.trim())),
            }
        }
    }
    assert!(
        found.is_empty(),
        "shared code names a suite; make what differs an item of the `Suite` trait (crates/harness/src/suite.rs) that \
         the suite table (src/suites/mod.rs) hands on:\n{}",
        found.join("\n")
    );
    for ((file, line, why), seen) in NOT_A_SUITE.iter().zip(exempt_seen) {
        assert!(seen, "the exemption for {file} ({why}) no longer matches `{line}`: remove it");
    }
}

#[test]
fn shared_code_reaches_into_no_suite_but_the_listed_files() {
    let suites = suites();
    let mut files = Vec::new();
    for dir in SHARED {
        rust_files(&root().join(dir), &mut files);
    }
    let mut found = Vec::new();
    let mut reaching = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(root()).expect("under the root").to_string_lossy().into_owned();
        let source = std::fs::read_to_string(file).expect("source");
        let lines = suite_paths(&source, &suites);
        match REACHES_INTO_A_SUITE.iter().any(|(f, _)| *f == relative) {
            true => reaching.push(relative.clone()),
            false => found.extend(lines.iter().map(|(n, line)| format!("{relative}:{n}: {}", line.trim()))),
        }
        if lines.is_empty() && REACHES_INTO_A_SUITE.iter().any(|(f, _)| *f == relative) {
            panic!("{relative} no longer reaches into a suite: take it off REACHES_INTO_A_SUITE");
        }
    }
    assert!(
        found.is_empty(),
        "shared code uses a suite's folder or crate; move the helper below the suites (core, backend, or a \
         crate of its own) or make it an item of the suite:\n{}",
        found.join("\n")
    );
    assert_eq!(reaching.len(), REACHES_INTO_A_SUITE.len(), "every listed file exists: {reaching:?}");
}

/// A suite's folder names no other suite's folder or crate: what two suites share lives below
/// both (core, backend, the report crate's text layer), so a suite removed or changed breaks no
/// other suite's build or tables.
#[test]
fn a_suite_never_names_another_suite() {
    let suites = suites();
    let mut found = Vec::new();
    for suite in &suites {
        let mut files = Vec::new();
        rust_files(&root().join("src/suites").join(suite), &mut files);
        assert!(!files.is_empty(), "src/suites/{suite} has Rust files");
        let others: Vec<String> = suites.iter().filter(|s| *s != suite).cloned().collect();
        for file in &files {
            let relative = file.strip_prefix(root()).expect("under the root").to_string_lossy().into_owned();
            let source = std::fs::read_to_string(file).expect("source");
            let mut lines = suite_paths(&source, &others);
            if suite == "personality" {
                // dbench, which suite_paths counts among the suites' crates, is this suite's second crate.
                lines.retain(|(_, line)| !suite_paths(&line.replace("iomatrix_dbench", ""), &others).is_empty());
            }
            found.extend(lines.iter().map(|(n, line)| format!("{relative}:{n}: {}", line.trim())));
        }
    }
    assert!(
        found.is_empty(),
        "a suite names another suite; move what both use below them (core, backend, or the report crate's \
         text layer):\n{}",
        found.join("\n")
    );
}

/// Adding a suite is its crate, its folder, one table line and the workspace's member glob:
/// every folder has the others, its crate holds its tables (render.rs), and the table names no
/// folder that is missing.
#[test]
fn every_suite_is_its_crate_its_folder_and_one_table_line() {
    let table = std::fs::read_to_string(root().join("src/suites/mod.rs")).expect("suite table");
    let body = table.split("suite_table! {").nth(1).expect("the suite table's invocation");
    let body = &body[..body.find('}').expect("the table's end")];
    let mut lines: Vec<String> = body
        .split(',')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| l.split("::").next().unwrap_or_default().trim().to_string())
        .collect();
    lines.sort();
    assert_eq!(lines, suites(), "one table line per folder under src/suites/");
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    assert!(manifest.contains(r#"members = ["crates/*"]"#), "the workspace takes every crate as a member");
    for suite in suites() {
        assert!(root().join("crates").join(&suite).join("Cargo.toml").is_file(), "crates/{suite}");
        for file in ["mod.rs", "args.rs", "suite.rs"] {
            assert!(root().join("src/suites").join(&suite).join(file).is_file(), "src/suites/{suite}/{file}");
        }
        // A suite's tables read its stored rows in its crate: src/ only prints them.
        assert!(root().join("crates").join(&suite).join("src/render.rs").is_file(), "crates/{suite}/src/render.rs");
        assert!(!root().join("src/suites").join(&suite).join("render.rs").exists(), "src/suites/{suite}/render.rs");
    }
}

/// The front ends come from the suite table: `rerun --target` of a run of each moves the tool's
/// own flags (IOzone's -f file, bonnie++'s -d folder) to the new target, and the new run stores
/// the moved command line.
#[test]
fn rerun_of_a_front_end_run_moves_its_own_flags_to_the_new_target() {
    let sb = Sandbox::new();
    let other = sb.dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    let file = sb.target().join("f.tmp");
    assert_success(&sb.run(&["iozone", "-s", "64k", "-r", "4k", "-i", "0", "-f", file.to_str().unwrap()]));
    assert_success(&sb.run(&["bonnie", "-d", sb.target().to_str().unwrap(), "-s", "1", "-r", "0", "-n", "0", "-f"]));
    for (id, suite, moved) in
        [(1, "iozone", format!("-f {}/f.tmp", other.display())), (2, "bonnie", format!("-d {}", other.display()))]
    {
        let out = sb.run(&["rerun", &id.to_string(), "--target", other.to_str().unwrap()]);
        assert_success(&out);
        let run = sb.last_run();
        assert_eq!(run["run"]["suite"], suite, "{run}");
        let line = run["run"]["command_line"].as_str().unwrap();
        assert!(line.contains(&moved), "#{id} moved to {moved}: {line}");
        assert_eq!(run["run"]["labels"], serde_json::json!([["rerun-of", id.to_string()]]), "{run}");
    }
    assert!(sb.leftovers().is_empty() && leftovers(&other).is_empty(), "working folders removed");
}

/// The lines of `source` that read a record size or a queue depth off a plan or a cell
/// (`.record_size`, `.record_sizes`, `.queue_depth`, `.queue_depths`), as (line number, line).
fn size_or_depth_reads(source: &str) -> Vec<(usize, &str)> {
    source
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .filter(|(_, line)| {
            [".record_size", ".queue_depth"].iter().any(|field| {
                line.match_indices(field).any(|(at, _)| {
                    let rest = &line[at + field.len()..];
                    // The field itself, or its plural; not a longer name (`record_sizes_kib()`).
                    let word_ends = |s: &str| !s.starts_with(|c: char| c.is_alphanumeric() || c == '_');
                    word_ends(rest) || rest.strip_prefix('s').is_some_and(word_ends)
                })
            })
        })
        .map(|(n, line)| (n + 1, line))
        .collect()
}

/// `--records` (iozone) and `--qd` (access) are read in src/ only where their flags are parsed
/// (args.rs; a front end's own flags in front.rs): what the harness asks of them (the largest
/// record, the deepest queue, the requests on a server) and the row a cell stores come from the
/// suite's crate, so following either flag to the printed table leaves src/ once and comes back
/// only to print.
#[test]
fn src_reads_record_sizes_and_queue_depths_only_where_the_flags_are_parsed() {
    let planted = "let r = plan.record_sizes.iter().max();\nlet q = cell.queue_depth;\nrecord_size: Some(1),\n\
                   let k = plan.record_sizes_kib();";
    assert_eq!(size_or_depth_reads(planted).iter().map(|(n, _)| *n).collect::<Vec<_>>(), [1, 2]);
    let mut files = Vec::new();
    rust_files(&root().join("crates/harness/src"), &mut files);
    for suite in ["iozone", "access"] {
        rust_files(&root().join("src/suites").join(suite), &mut files);
    }
    assert!(
        files.iter().any(|f| f.ends_with("iozone/suite.rs")) && files.iter().any(|f| f.ends_with("access/suite.rs"))
    );
    let mut found = Vec::new();
    for file in files.iter().filter(|f| !f.ends_with("args.rs") && !f.ends_with("front.rs")) {
        let source = std::fs::read_to_string(file).expect("source");
        for (n, line) in size_or_depth_reads(&source) {
            found.push(format!("{}:{n}: {}", file.strip_prefix(root()).unwrap().display(), line.trim()));
        }
    }
    assert!(
        found.is_empty(),
        "src/ reads a record size or queue depth outside the flags' parsing; make it a method of the \
         suite's plan or cell in its crate:\n{}",
        found.join("\n")
    );
}
