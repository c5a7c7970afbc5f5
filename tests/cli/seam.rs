//! A suite is known to the rest of iomatrix only through the seam: its crate (`crates/NAME`, its
//! flags, `Suite` impl and front end in its `cli` module), its line in the command table
//! (`src/suites.rs`) and the workspace's member glob. The shared code (the binary's other
//! commands, the harness, and every other crate: store, analysis, report, import, ...) never names
//! one: what differs per suite is an item of its `Suite` impl, which the table hands on. These
//! tests read the source tree, so a branch on a suite's name in shared code fails here, not in a
//! user's `compare` of a suite added next year.

use crate::helpers::*;
use crate::source_files::{crate_dirs, relative, root, rust_files};
use std::path::PathBuf;

/// The command table: the one file of the binary that names every suite.
const TABLE: &str = "src/suites.rs";

/// Literals in shared code that spell a suite's name without meaning the suite, each with why.
const NOT_A_SUITE: &[(&str, &str, &str)] = &[(
    "crates/report/src/xlsx.rs",
    r#"pub const RESULTS_SHEET: &str = "iozone";"#,
    "the worksheet name of IOzone's own -b workbook, which the report's workbooks copy: a format's name",
)];

/// Shared files that still reach into one suite's crate, each with why. The list may only
/// shrink: a new file here is a suite named outside its own crate.
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

/// Every suite, as the command table names it: a line `Type: iomatrix_NAME` (`+ front`) each.
fn suites() -> Vec<String> {
    let table = std::fs::read_to_string(root().join(TABLE)).expect("the command table");
    let body = table.split("suite_table! {").nth(1).expect("the suite table's invocation");
    let body = &body[..body.find('}').expect("the table's end")];
    let mut names: Vec<String> = body
        .split(',')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let krate = l.split(':').nth(1).and_then(|k| k.split('+').next()).unwrap_or_default().trim();
            krate.strip_prefix("iomatrix_").unwrap_or_else(|| panic!("a table line names no suite crate: {l}")).into()
        })
        .collect();
    names.sort();
    names
}

/// The shared code: every source of the binary but the command table, and every crate's `src/`
/// but the suites' own crates.
fn shared_files(suites: &[String]) -> Vec<PathBuf> {
    let mut files = rust_files(&root().join("src"));
    files.retain(|f| *f != root().join(TABLE));
    for krate in crate_dirs() {
        let name = krate.file_name().expect("name").to_string_lossy().into_owned();
        if !suites.contains(&name) {
            files.extend(rust_files(&krate.join("src")));
        }
    }
    files
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

/// The lines of `source`'s product code that name one of `suites`' crates (`iomatrix_NAME`).
fn suite_paths<'a>(source: &'a str, suites: &[String]) -> Vec<(usize, &'a str)> {
    let crates: Vec<String> = suites.iter().map(|s| format!("iomatrix_{s}")).collect();
    let names = |line: &str, path: &str| {
        line.match_indices(path)
            .any(|(i, _)| !line[i + path.len()..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
    };
    source
        .lines()
        .enumerate()
        .take_while(|(_, line)| line.trim() != "#[cfg(test)]")
        .filter(|(_, line)| !line.trim_start().starts_with("//"))
        .filter(|(_, line)| crates.iter().any(|p| names(line, p)))
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
    let reaching = "use iomatrix_iozone::render;\nuse iomatrix_bonnie_extra::X;\nlet c = iomatrix_bonnie::f();\n";
    assert_eq!(suite_paths(reaching, &suites).iter().map(|(n, _)| *n).collect::<Vec<_>>(), [1, 3]);
}

/// No suite's name, as a literal or as its crate, in the shared code: the binary but the command
/// table, the harness, and every crate that is not a suite's, import included (each suite's
/// importers live in its own crate, registered by its line of the command table).
#[test]
fn shared_code_never_names_a_suite() {
    let suites = suites();
    assert!(suites.len() >= 6, "the suites of the command table: {suites:?}");
    let files = shared_files(&suites);
    assert!(files.len() > 150, "the shared code was read: {} files", files.len());
    for dir in ["src/commands", "crates/harness/src", "crates/import/src", "crates/store/src", "crates/report/src"] {
        assert!(files.iter().any(|f| f.starts_with(root().join(dir))), "{dir} is scanned");
    }
    let mut found = Vec::new();
    let mut exempt_seen = vec![false; NOT_A_SUITE.len()];
    let mut reaching = Vec::new();
    for file in &files {
        let relative = relative(file);
        let source = std::fs::read_to_string(file).expect("source");
        let exempt = |line: &str| NOT_A_SUITE.iter().position(|(f, l, _)| *f == relative && line.trim() == *l);
        let mut lines = Vec::new();
        for (n, line) in suite_literals(&source, &suites) {
            match exempt(line) {
                Some(i) => exempt_seen[i] = true,
                None => lines.push((n, line)),
            }
        }
        let paths = suite_paths(&source, &suites);
        if REACHES_INTO_A_SUITE.iter().any(|(f, _)| *f == relative) {
            assert!(!paths.is_empty(), "{relative} no longer reaches into a suite: take it off REACHES_INTO_A_SUITE");
            reaching.push(relative.clone());
        } else {
            lines.extend(paths);
        }
        lines.sort_unstable();
        lines.dedup();
        found.extend(lines.iter().map(|(n, line)| format!("{relative}:{n}: {}", line.trim())));
    }
    assert!(
        found.is_empty(),
        "shared code names a suite; make what differs an item of the `Suite` trait (crates/harness/src/suite.rs) \
         that the command table ({TABLE}) hands on, or move the helper below the suites (core, backend, or a crate \
         of its own):\n{}",
        found.join("\n")
    );
    for ((file, line, why), seen) in NOT_A_SUITE.iter().zip(exempt_seen) {
        assert!(seen, "the exemption for {file} ({why}) no longer matches `{line}`: remove it");
    }
    assert_eq!(reaching.len(), REACHES_INTO_A_SUITE.len(), "every listed file exists: {reaching:?}");
}

/// A suite's crate names no other suite's crate: what two suites share lives below both (core,
/// backend, the report crate's text layer), so a suite removed or changed breaks no other suite's
/// build or tables.
#[test]
fn a_suite_never_names_another_suite() {
    let suites = suites();
    let mut found = Vec::new();
    for suite in &suites {
        let files = rust_files(&root().join("crates").join(suite).join("src"));
        assert!(!files.is_empty(), "crates/{suite}/src has Rust files");
        let others: Vec<String> = suites.iter().filter(|s| *s != suite).cloned().collect();
        for file in &files {
            let source = std::fs::read_to_string(file).expect("source");
            let lines = suite_paths(&source, &others);
            found.extend(lines.iter().map(|(n, line)| format!("{}:{n}: {}", relative(file), line.trim())));
        }
    }
    assert!(
        found.is_empty(),
        "a suite names another suite; move what both use below them (core, backend, or the report crate's \
         text layer):\n{}",
        found.join("\n")
    );
}

/// Adding a suite is its crate (its `cli` module: flags, `Suite` impl; its tables in render.rs;
/// its `import` module: its importers and what a published table may give of it), one line of the
/// command table and the workspace's Cargo.toml: every suite crate has those, the table names each
/// such crate once, and neither the harness nor the import crate depends on any of them.
#[test]
fn every_suite_is_its_crate_and_one_table_line() {
    let suites = suites();
    let mut with_cli: Vec<String> = crate_dirs()
        .into_iter()
        .filter(|c| c.join("src/cli/suite.rs").is_file())
        .map(|c| c.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    with_cli.sort();
    assert_eq!(with_cli, suites, "one table line per crate with a Suite impl (src/cli/suite.rs)");
    assert!(!root().join("src/suites").exists(), "src/suites/ is gone: a suite lives in its crate");
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    assert!(manifest.contains(r#"members = ["crates/*"]"#), "the workspace takes every crate as a member");
    let harness = std::fs::read_to_string(root().join("crates/harness/Cargo.toml")).expect("the harness's manifest");
    let import = std::fs::read_to_string(root().join("crates/import/Cargo.toml")).expect("the import crate's manifest");
    for suite in &suites {
        let krate = root().join("crates").join(suite);
        for file in ["Cargo.toml", "src/render.rs", "src/cli/mod.rs", "src/cli/args.rs", "src/cli/suite.rs"] {
            assert!(krate.join(file).is_file(), "crates/{suite}/{file}");
        }
        let dependency = format!("iomatrix-{suite}");
        assert!(
            manifest.contains(&format!("{dependency} = {{ path = \"crates/{suite}\" }}")),
            "{dependency} in [workspace.dependencies]"
        );
        assert!(
            manifest.contains(&format!("{dependency}.workspace = true")),
            "{dependency} in the binary's [dependencies]"
        );
        assert!(!harness.contains(&dependency), "the harness depends on no suite: {dependency}");
        assert!(!import.contains(&dependency), "the import crate depends on no suite: {dependency}");
        assert!(
            krate.join("src/import.rs").is_file() || krate.join("src/import/mod.rs").is_file(),
            "crates/{suite}/src/import.rs (or import/mod.rs): its importers, registered by its table line"
        );
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

/// `--records` (iozone) and `--qd` (access) are read only in their suites' crates: the command
/// table and the harness never read a record size or a queue depth (what the harness asks of them, the
/// largest record, the deepest queue, the requests on a server, is the suite's `demand`), so
/// following either flag to the printed table leaves the binary once, into the suite's crate.
#[test]
fn only_the_suites_crates_read_record_sizes_and_queue_depths() {
    let planted = "let r = plan.record_sizes.iter().max();\nlet q = cell.queue_depth;\nrecord_size: Some(1),\n\
                   let k = plan.record_sizes_kib();";
    assert_eq!(size_or_depth_reads(planted).iter().map(|(n, _)| *n).collect::<Vec<_>>(), [1, 2]);
    // The route of a flag outside its suite's crate: the command table and the harness (the
    // binary's other commands read stored cells' keys, whatever suite made them, not the flags).
    let mut files = vec![root().join(TABLE)];
    files.extend(rust_files(&root().join("crates/harness/src")));
    assert!(
        files.iter().any(|f| f.ends_with("harness/src/run.rs")) && files.iter().any(|f| f.ends_with("src/suites.rs"))
    );
    let mut found = Vec::new();
    for file in &files {
        let source = std::fs::read_to_string(file).expect("source");
        for (n, line) in size_or_depth_reads(&source) {
            found.push(format!("{}:{n}: {}", relative(file), line.trim()));
        }
    }
    assert!(
        found.is_empty(),
        "the command table or the harness reads a record size or queue depth; make it a method of the suite's plan or \
         cell in its crate, or an item of its `Suite` impl:\n{}",
        found.join("\n")
    );
}
