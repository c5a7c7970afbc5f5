//! The verification table of a run made with `--verify`.

use iomatrix_core::Figures;

/// The cells' verification tallies as a table, and the first examples of
/// mismatches; empty for a run that did not verify.
pub fn report(run: &iomatrix_store::StoredRun) -> String {
    use std::fmt::Write;
    if run.conditions["verify"] != true {
        return String::new();
    }
    let mut out = String::from(
        "\nVerification (4k blocks read back and checked; unchecked: read while a write to them was in flight):\n",
    );
    let _ = writeln!(
        out,
        "{:<44} {:>10} {:>10} {:>12} {:>8} {:>8} {:>10} {:>10}",
        "cell", "checked", "wrong data", "wrong offset", "stale", "torn", "unchecked", "verify ms"
    );
    let mut examples = Vec::new();
    for c in &run.cell_results {
        let Some(t) = c.figures().verify else { continue };
        let cell = c.cell_name();
        let _ = writeln!(
            out,
            "{cell:<44} {:>10} {:>10} {:>12} {:>8} {:>8} {:>10} {:>10.1}",
            t.checked_blocks,
            t.wrong_data,
            t.wrong_offset,
            t.stale,
            t.torn,
            t.unchecked_blocks,
            t.verify_ns as f64 / 1e6
        );
        examples.extend(t.examples.iter().map(|e| (cell.clone(), e.clone())));
    }
    for (cell, e) in examples.iter().take(iomatrix_verify::MAX_EXAMPLES) {
        let found = if e.found.is_empty() { String::new() } else { format!(" (block holds {})", e.found) };
        let _ = writeln!(out, "{cell}: {} at offset {} of file {}{found}", e.kind.name(), e.offset, e.file);
    }
    out
}
