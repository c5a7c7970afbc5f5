//! The workspace's Rust sources, for the tests that read the code itself (`seam`,
//! `short_functions`, `stored_run_typed`): one walk of the tree, so the three read the same files.

use std::path::{Path, PathBuf};

/// The workspace's root: the binary's crate, whose `src/` and `crates/` the tests read.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file below `dir`, sorted, so a failure lists its files in the same order each time.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    collect(dir, &mut files);
    files.sort();
    files
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

/// Every crate's folder under `crates/` (a folder with a `Cargo.toml`), sorted.
pub fn crate_dirs() -> Vec<PathBuf> {
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .expect("crates/")
        .map(|e| e.expect("crates/ entry").path())
        .filter(|c| c.join("Cargo.toml").is_file())
        .collect();
    crates.sort();
    crates
}

/// `file` as the tests name it: relative to the root.
pub fn relative(file: &Path) -> String {
    file.strip_prefix(root()).expect("under the root").to_string_lossy().into_owned()
}
