//! A stored run is typed end to end (issue 49): shared code (analysis, the reports, the store
//! above its one reader, the importers, the binary) reads a stored run through types, never by
//! a string key into its JSON. The one reader (`crates/store/src/reader.rs`) turns stored JSON
//! into those types; this test reads the sources and fails on a string-keyed read anywhere
//! else (`v["key"]`, `v.get("key")` outside `#[cfg(test)]`), listing each.
//!
//! What still reads by key is allowed by file, with its count and why. The list may only shrink:
//! a count above its allowance fails, and so does one below it (lower the number, so the read
//! that went cannot come back unseen).

use crate::source_files::{relative, root, rust_files};

/// Where shared code lives: a suite's own crate may read its own plan, so it is not scanned; the
/// harness is shared and scanned.
const SCANNED: &[&str] =
    &["crates/analysis/src", "crates/report/src", "crates/store/src", "crates/import/src", "crates/harness/src", "src"];
const NOT_SCANNED: &[&str] = &[];

/// The one reader of stored JSON, which may name its keys (it does through serde's field names).
const READER: &str = "crates/store/src/reader.rs";

/// Files that read JSON by a string key, with how many reads and why: none of them reads a
/// stored run (what a suite alone records is read by the suite's own types, in its crate:
/// `Suite::stored_facts`).
const ALLOWED: &[(&str, usize, &str)] = &[
    (
        "src/commands/extents.rs",
        3,
        "`iomatrix extents --per-file`: the walk's own per-file JSON, made in this command, not a stored run",
    ),
    (
        "crates/harness/src/job.rs",
        3,
        "a server described as the target is reached (`protocol`, `version`, `server`), before anything is stored: \
         not a stored run",
    ),
    ("crates/harness/src/server_facts.rs", 1, "the lab's published server facts file (`address`): not a stored run"),
];

/// The source without its `#[cfg(test)]` items (a test module to its closing brace, or a single
/// item to its `;`) and without `//` comments, line for line (removed lines are left empty, so
/// line numbers stay).
fn product_code(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut lines = source.lines();
    while let Some(line) = lines.next() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            out.push(String::new());
            let mut depth = 0i64;
            let mut opened = false;
            for item in lines.by_ref() {
                out.push(String::new());
                depth += item.matches('{').count() as i64 - item.matches('}').count() as i64;
                opened |= item.contains('{');
                if (opened && depth <= 0) || (!opened && item.trim_end().ends_with(';')) {
                    break;
                }
            }
            continue;
        }
        out.push(without_comment(line).to_string());
    }
    out
}

/// A line up to its `//` comment, where the `//` is outside a string.
fn without_comment(line: &str) -> &str {
    let mut in_string = false;
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '"' if previous != '\\' => in_string = !in_string,
            '/' if !in_string && previous == '/' => return &line[..i - 1],
            _ => {}
        }
        previous = if previous == '\\' && c == '\\' { ' ' } else { c };
    }
    line
}

fn is_key(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether what follows a match, over the lines after it, assigns to it (`v["key"] = ...`,
/// `v["a"]["b"] = ...`): a write, not a read.
fn is_assigned(rest: &str) -> bool {
    let mut rest = rest.trim_start();
    while rest.starts_with('[') {
        match rest.find(']') {
            Some(end) => rest = rest[end + 1..].trim_start(),
            None => return false,
        }
    }
    rest.starts_with('=') && !rest.starts_with("==") && !rest.starts_with("=>")
}

/// Each string-keyed read in the code: (line number, what it reads).
fn string_keyed_reads(code: &[String]) -> Vec<(usize, String)> {
    let joined = code.join("\n");
    let line_of = |at: usize| joined[..at].matches('\n').count() + 1;
    let mut found = Vec::new();
    for (at, _) in joined.match_indices("[\"") {
        let before = joined[..at].chars().next_back().unwrap_or(' ');
        let indexes = before.is_ascii_alphanumeric() || before == '_' || before == ')' || before == ']';
        let rest = &joined[at + 2..];
        let Some(end) = rest.find("\"]") else { continue };
        if indexes && is_key(&rest[..end]) && !is_assigned(&rest[end + 2..]) {
            found.push((line_of(at), format!("[\"{}\"]", &rest[..end])));
        }
    }
    for (at, _) in joined.match_indices(".pointer(\"") {
        let rest = &joined[at + 10..];
        if let Some(end) = rest.find("\")") {
            found.push((line_of(at), format!(".pointer(\"{}\")", &rest[..end])));
        }
    }
    for (at, _) in joined.match_indices(".get(\"") {
        let rest = &joined[at + 6..];
        let Some(end) = rest.find("\")") else { continue };
        if is_key(&rest[..end]) {
            found.push((line_of(at), format!(".get(\"{}\")", &rest[..end])));
        }
    }
    found.sort();
    found
}

#[test]
fn the_scanner_finds_string_keyed_reads_and_passes_over_writes_comments_and_tests() {
    let source = r#"
fn shown(run: &Value) -> String {
    let a = run.environment["cpu_count"].as_u64();
    let b = run.conditions.get("target");
    doc["beside"][&unit] = json!(1);
    all["files_vs_ram"] =
        verdict.into();
    let list = ["not", "an", "index"];
    let k = &["backup"]; // and a comment: v["in_a_comment"]
    let p = c.pointer("/imported/published");
    format!("{}", x["rank"])
}

#[cfg(test)]
mod tests {
    fn t() { assert_eq!(v["in_a_test"], 1); }
}
"#;
    let reads = string_keyed_reads(&product_code(source));
    assert_eq!(
        reads,
        [
            (3, r#"["cpu_count"]"#.to_string()),
            (4, r#".get("target")"#.to_string()),
            (10, r#".pointer("/imported/published")"#.to_string()),
            (11, r#"["rank"]"#.to_string())
        ]
    );
}

#[test]
fn shared_code_reads_a_stored_run_only_through_types() {
    let mut files: Vec<_> = SCANNED.iter().flat_map(|dir| rust_files(&root().join(dir))).collect();
    files.sort();
    files.dedup();
    let mut failures = Vec::new();
    let mut seen_allowed = Vec::new();
    for path in &files {
        let relative = relative(path);
        if relative == READER || NOT_SCANNED.iter().any(|n| relative.starts_with(&format!("{n}/"))) {
            continue;
        }
        let source = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{relative}: {e}"));
        let reads = string_keyed_reads(&product_code(&source));
        let allowed = ALLOWED.iter().find(|(file, _, _)| *file == relative);
        if let Some((file, _, _)) = allowed {
            seen_allowed.push(*file);
        }
        let allowance = allowed.map_or(0, |(_, n, _)| *n);
        if reads.len() == allowance {
            continue;
        }
        let listed: Vec<String> = reads.iter().map(|(line, what)| format!("    {relative}:{line}: {what}")).collect();
        failures.push(if reads.len() > allowance {
            format!(
                "{relative}: {} string-keyed read(s) of JSON, {allowance} allowed; read the stored run through \
                 iomatrix_store::reader's types (or CellRow::figures) instead:\n{}",
                reads.len(),
                listed.join("\n")
            )
        } else {
            format!(
                "{relative}: {} string-keyed read(s), {allowance} allowed: lower its number in ALLOWED to {} so \
                 the reads that went cannot come back",
                reads.len(),
                reads.len()
            )
        });
    }
    for (file, _, _) in ALLOWED {
        if !seen_allowed.contains(file) {
            failures.push(format!("{file}: in ALLOWED but not scanned (moved or gone?): remove or move its entry"));
        }
    }
    assert!(failures.is_empty(), "stored runs read by key outside the reader:\n{}", failures.join("\n"));
}

/// Where shared code may take a stored run's records as JSON (`StoredRun::records`), how many
/// times and why: each hands them on whole, and none reads them.
const RECORDS_ALLOWED: &[(&str, usize, &str)] = &[
    ("crates/report/src/json.rs", 2, "the JSON report exports each run's conditions and environment as stored, whole"),
    (
        "src/commands/compare.rs",
        1,
        "an imported run's stored plan is handed to its suite's importer (native_plan_fields), which reads it by \
         its own types",
    ),
];

/// The store's `StoredRun` keeps its JSON fields private to the store: anything outside it reads them
/// through the reader's types, or takes them whole through `records()`, which shared code does only
/// where RECORDS_ALLOWED says.
#[test]
fn a_stored_runs_json_stays_behind_the_reader() {
    let lib = std::fs::read_to_string(root().join("crates/store/src/lib.rs")).unwrap();
    let start = lib.find("pub struct StoredRun {").expect("crates/store/src/lib.rs declares StoredRun");
    let body = &lib[start..start + lib[start..].find("\n}").expect("StoredRun's closing brace")];
    for field in ["plan", "environment", "conditions", "lost", "origin"] {
        assert!(
            body.contains(&format!("    pub(crate) {field}: ")),
            "StoredRun's `{field}` must stay pub(crate): shared code reads it through iomatrix_store::reader"
        );
    }
    let mut failures = Vec::new();
    let mut files: Vec<_> = SCANNED.iter().flat_map(|dir| rust_files(&root().join(dir))).collect();
    files.sort();
    files.dedup();
    for path in &files {
        let relative = relative(path);
        if relative.starts_with("crates/store/src/") {
            continue;
        }
        let source = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{relative}: {e}"));
        let code = product_code(&source).join("\n");
        let taken = code.matches(".records()").count();
        let allowance = RECORDS_ALLOWED.iter().find(|(file, _, _)| *file == relative).map_or(0, |(_, n, _)| *n);
        if taken != allowance {
            failures.push(format!(
                "{relative}: takes a stored run's records as JSON {taken} time(s), {allowance} allowed: read them through \
                 iomatrix_store::reader's types (a suite's own through Suite::stored_facts)"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
