//! The verification table of a run made with `--verify`.

use crate::table::{Column, Table};
use iomatrix_core::{human, Figures};

/// The cells' verification tallies as a table, and the first examples of
/// mismatches; empty for a run that did not verify.
pub fn report(run: &iomatrix_store::StoredRun) -> String {
    use std::fmt::Write;
    if !run.conditions_facts().verify.is_true() {
        return String::new();
    }
    let mut out = String::from(
        "\nVerification (4k blocks read back and checked; unchecked: read while a write to them was in flight):\n",
    );
    let mut table = Table::new(vec![
        Column::left("cell", 44),
        Column::right("checked", 10),
        Column::right("wrong data", 10),
        Column::right("wrong offset", 12),
        Column::right("stale", 8),
        Column::right("torn", 8),
        Column::right("unchecked", 10),
        Column::right("verify ms", 10),
    ]);
    let mut examples = Vec::new();
    for c in &run.cell_results {
        let Some(t) = c.figures().verify else { continue };
        let cell = c.cell_name();
        table.row([
            cell.clone(),
            t.checked_blocks.to_string(),
            t.wrong_data.to_string(),
            t.wrong_offset.to_string(),
            t.stale.to_string(),
            t.torn.to_string(),
            t.unchecked_blocks.to_string(),
            human::fixed(t.verify_ns as f64 / 1e6, 1),
        ]);
        examples.extend(t.examples.iter().map(|e| (cell.clone(), e.clone())));
    }
    out.push_str(&table.render());
    for (cell, e) in examples.iter().take(iomatrix_verify::MAX_EXAMPLES) {
        let found = if e.found.is_empty() { String::new() } else { format!(" (block holds {})", e.found) };
        let _ = writeln!(out, "{cell}: {} at offset {} of file {}{found}", e.kind.name(), e.offset, e.file);
    }
    out
}
