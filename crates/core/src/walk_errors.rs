//! The errors a walk over a tree met, counted by kind with the first few paths: the backup
//! walk and the `extents` command's FIEMAP pass keep them, and `show` and `extents` print them
//! (the report crate's text, which no suite crate's type may reach).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io;

/// One error, for the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorExample {
    /// The path the error was met at.
    pub path: String,
    /// The error, in full.
    pub error: String,
}

/// Examples kept with the counts.
pub const MAX_EXAMPLES: usize = 20;

/// Errors by kind ("open: Permission denied", "read: Input/output error"),
/// with the first few paths; the walk goes on after each.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorTally {
    /// Errors met, of every kind.
    pub total: u64,
    /// Errors by kind ("open: Permission denied").
    pub by_kind: BTreeMap<String, u64>,
    /// The first [`MAX_EXAMPLES`] errors, with their paths.
    pub examples: Vec<ErrorExample>,
}

impl ErrorTally {
    /// Counts `err`, met at `stage` ("open", "read") on `path`, under "STAGE: the error's kind".
    pub fn add(&mut self, stage: &str, path: &std::path::Path, err: &io::Error) {
        self.add_kind(format!("{stage}: {}", describe(err)), path);
    }

    /// Counts one error of `kind` at `path`; the example is the kind itself.
    pub fn add_kind(&mut self, kind: String, path: &std::path::Path) {
        let example = kind.clone();
        self.add_with_detail(kind, path, example);
    }

    /// Counts under `kind`; the example keeps the whole `detail` (a
    /// protocol client's message naming the server and the call).
    pub fn add_with_detail(&mut self, kind: String, path: &std::path::Path, detail: String) {
        self.total += 1;
        if self.examples.len() < MAX_EXAMPLES {
            self.examples.push(ErrorExample { path: path.display().to_string(), error: detail });
        }
        *self.by_kind.entry(kind).or_default() += 1;
    }
}

/// The OS's message for an errno without Rust's " (os error N)" suffix.
fn describe(err: &io::Error) -> String {
    match err.raw_os_error() {
        Some(code) => {
            let text = io::Error::from_raw_os_error(code).to_string();
            text.split(" (os error").next().unwrap_or(&text).to_string()
        }
        None => err.to_string(),
    }
}
