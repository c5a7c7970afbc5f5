//! A cell's figures are types (issue 31): an access cell keeps its block size in its own field,
//! a stored run from before that field still shows the same, and the code outside a suite reads
//! no figure by a string key into its JSON (a check on the source, which keeps it so).
use crate::helpers::*;
use crate::source_files::rust_files;
use std::path::{Path, PathBuf};

fn access_run(sb: &Sandbox) -> i64 {
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
        "0",
        "--qd",
        "1",
        "--bytes",
        "256k",
        "--file-size",
        "1m",
    ]);
    assert_success(&out);
    sb.last_run()["run"]["id"].as_i64().expect("the run's id")
}

#[test]
fn an_access_cell_stores_its_block_size_in_its_own_field() {
    let sb = Sandbox::new();
    let id = access_run(&sb);
    let cells = cells(&sb.show_json(id));
    assert_eq!(cells.len(), 2);
    for (cell, bs) in cells.iter().zip([4096, 16384]) {
        assert_eq!(cell["metrics"]["block_size"], bs, "{cell}");
        assert_eq!(cell["record_size"], bs, "compare still keys the cell by its record size: {cell}");
    }
}

#[test]
fn an_access_run_stored_before_the_block_size_field_shows_the_same() {
    let sb = Sandbox::new();
    let id = access_run(&sb);
    let shown = |what: &str| {
        let out = sb.run(&["show", &id.to_string()]);
        assert_success(&out);
        let (stdout, _) = text(&out);
        assert!(stdout.contains("    4k ") && stdout.contains("   16k "), "{what}: {stdout}");
        stdout
    };
    let now = shown("as stored today");
    // The shape of today's main: no block_size in the cell's metrics.
    let db = rusqlite::Connection::open(sb.db()).unwrap();
    let changed = db
        .execute("UPDATE cells SET metrics_json = json_remove(metrics_json, '$.block_size') WHERE run_id = ?1", [id])
        .unwrap();
    assert_eq!(changed, 2);
    drop(db);
    assert!(cells(&sb.show_json(id)).iter().all(|c| c["metrics"].get("block_size").is_none()));
    assert_eq!(shown("in the older shape"), now);
}

/// The product code of `dir` (test modules and tests/ left out), file by file.
fn sources(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    let below = |path: &Path| path.strip_prefix(dir).map(Path::to_path_buf).unwrap_or_default();
    for path in rust_files(dir).into_iter().filter(|p| !below(p).components().any(|c| c.as_os_str() == "tests")) {
        let text = std::fs::read_to_string(&path).unwrap();
        let product = text.split("#[cfg(test)]").next().unwrap_or_default().to_string();
        out.push((path, product));
    }
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `metrics[..]`, `metrics.get(..)`, `metrics.get_mut(..)`, `metrics.pointer(..)`, and a local
/// bound to a cell's metrics (`let m = &cell.metrics;`).
fn string_key_reads(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        let read =
            ["metrics[", "metrics.get(", "metrics.get_mut(", "metrics.pointer("].iter().any(|p| code.contains(p));
        let bound = code.trim_start().starts_with("let ") && code.trim_end().ends_with(".metrics;");
        if read || bound {
            found.push(format!("{}: {}", n + 1, line.trim()));
        }
    }
    found
}

#[test]
fn shared_code_reads_no_figure_by_a_string_key() {
    let shared = ["src/commands", "crates/harness/src", "crates/analysis/src", "crates/report/src"];
    let mut files = Vec::new();
    for dir in shared {
        sources(&repo().join(dir), &mut files);
    }
    assert!(files.len() > 30, "the shared code was found: {} files", files.len());
    let reads: Vec<String> = files
        .iter()
        .flat_map(|(path, text)| {
            let path = path.strip_prefix(repo()).unwrap().display().to_string();
            string_key_reads(text).into_iter().map(move |r| format!("{path}:{r}"))
        })
        .collect();
    assert!(
        reads.is_empty(),
        "shared code reads a cell's figures through CellRow::figures() and the Figures trait, not by key:\n{}",
        reads.join("\n")
    );
}

#[test]
fn the_access_mix_is_declared_once() {
    let mut files = Vec::new();
    sources(&repo().join("src"), &mut files);
    sources(&repo().join("crates"), &mut files);
    let declared = repo().join("crates/core/src/figures.rs");
    let named: Vec<String> = files
        .iter()
        .filter(|(path, text)| *path != declared && text.contains("\"queue_depth\""))
        .map(|(path, _)| path.strip_prefix(repo()).unwrap().display().to_string())
        .collect();
    assert!(files.iter().any(|(path, text)| *path == declared && text.contains("\"queue_depth\"")));
    assert!(named.is_empty(), "\"queue_depth\" is IoMix's (crates/core/src/figures.rs), named elsewhere in {named:?}");
}

/// The fields `struct NAME` declares in `file` (relative to the repository).
fn struct_fields(file: &str, name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo().join(file)).unwrap();
    let start = text.find(&format!("pub struct {name} {{")).unwrap_or_else(|| panic!("{name} in {file}"));
    let body = &text[start..];
    let body = &body[..body.find("\n}").unwrap()];
    body.lines()
        .skip(1)
        .map(str::trim)
        .filter(|line| !line.starts_with("//") && !line.starts_with("#["))
        .filter_map(|line| line.trim_start_matches("pub ").split_once(':').map(|(field, _)| field.trim().to_string()))
        .collect()
}

#[test]
fn an_iozone_cells_figures_are_declared_once() {
    let result = struct_fields("crates/iozone/src/runner.rs", "CellResult");
    let own = struct_fields("crates/iozone/src/figures.rs", "IozoneCellFigures");
    let row = struct_fields("crates/store/src/lib.rs", "CellRow");
    assert!(own.len() >= 8 && row.len() >= 15, "the declarations were read: {own:?} {row:?}");
    let source = std::fs::read_to_string(repo().join("crates/iozone/src/runner.rs")).unwrap();
    assert!(
        source.contains("pub figures: IozoneCellFigures,"),
        "the runner's cell holds the figures its row stores, as the row stores them"
    );
    // The row's `clients` column counts the list the runner's cell keeps under that name.
    let twice: Vec<&String> =
        result.iter().filter(|f| own.contains(f) || (row.contains(f) && f.as_str() != "clients")).collect();
    assert!(
        twice.is_empty(),
        "CellResult declares again figures IozoneCellFigures or CellRow declare: {twice:?} (of {result:?})"
    );
}
