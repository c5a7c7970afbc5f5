//! FIEMAP extent summaries as text: the `extents` command and the backup
//! walk's tables print them alike.

use crate::table::{Column, Table};
use iomatrix_core::human;
use iomatrix_core::walk_errors::ErrorTally;
use iomatrix_extents::{ExtentSummary, NO_EXTENT_MAP};
use std::fmt::Write;

/// Extent figures, the histogram, and a plain sentence where there is no FIEMAP.
pub fn summary_text(fs_type: &str, s: &ExtentSummary) -> String {
    let mut out = String::new();
    if s.no_fiemap_at_all() && s.no_fiemap_errno == NO_EXTENT_MAP {
        let _ = writeln!(out, "{}: no extent counts for its {} files", s.no_fiemap_errno, s.files_without_fiemap);
        return out;
    }
    if s.no_fiemap_at_all() {
        let _ = writeln!(
            out,
            "no FIEMAP: {fs_type} does not map file extents ({}), so no extent counts for its {} files",
            s.no_fiemap_errno, s.files_without_fiemap
        );
        return out;
    }
    let _ = writeln!(
        out,
        "files mapped: {}, extents: {}, per file: mean {}, p99 {}, max {}",
        s.files,
        s.total_extents,
        human::fixed(s.mean, 2),
        s.p99,
        s.max
    );
    let _ = writeln!(
        out,
        "fragmented (more than 1 extent): {}, without extents (empty or unmapped): {}, unwritten extents: {}, inline: {}",
        s.fragmented_files, s.files_without_extents, s.unwritten_extents, s.inline_files
    );
    if s.files_without_fiemap > 0 {
        let _ =
            writeln!(out, "no FIEMAP ({}) for {} files: not counted above", s.no_fiemap_errno, s.files_without_fiemap);
    }
    if s.files_failed > 0 {
        let _ = writeln!(out, "FIEMAP failed for {} files: not counted above", s.files_failed);
    }
    if !s.histogram.is_empty() {
        let mut table = Table::new(vec![Column::right("extents", 12), Column::right("files", 10)]);
        for b in &s.histogram {
            table.row([b.label(), b.files.to_string()]);
        }
        out.push_str(&table.render());
    }
    out
}

/// The errors a walk met, by kind, with the first five paths; empty when it met none.
pub fn errors_text(errors: &ErrorTally) -> String {
    let mut out = String::new();
    if errors.total == 0 {
        return out;
    }
    let kinds: Vec<String> = errors.by_kind.iter().map(|(k, n)| format!("{k} x{n}")).collect();
    let _ = writeln!(out, "errors: {} ({})", errors.total, kinds.join(", "));
    for e in errors.examples.iter().take(5) {
        let _ = writeln!(out, "  {}: {}", e.path, e.error);
    }
    out
}
