//! `iomatrix runs`: the stored runs, one line each, and the same list as JSON.

use crate::table::{Column, Table};
use iomatrix_core::text::printable;
use iomatrix_store::RunSummary;
use serde_json::{json, Value};

/// Version of the runs document; see docs/json.md.
pub const RUNS_SCHEMA: &str = "iomatrix.runs/1";

/// The stored runs as the runs document (`runs --json`): the schema's version and the list.
pub fn runs_json(runs: &[RunSummary]) -> Value {
    json!({ "schema": RUNS_SCHEMA, "runs": runs })
}

/// The stored runs as `runs` prints them: one line each, or "no runs stored yet".
pub fn runs_text(runs: &[RunSummary]) -> String {
    if runs.is_empty() {
        return "no runs stored yet\n".to_string();
    }
    let mut table = Table::new(vec![
        Column::right("run", 5),
        Column::left("started (UTC)", 20).gap("  "),
        Column::left("suite", 7).gap("  "),
        Column::left("status", 11).gap("  "),
        Column::right("cells", 11).gap("  "),
        Column::left("host", 12).gap("  "),
        Column::free("labels").gap("  "),
    ]);
    for r in runs {
        // Stored text is escaped: a label or host from an old database (or another tool) holding a
        // newline or an escape sequence prints as one row.
        let labels: Vec<String> = r.labels.iter().map(|(k, v)| format!("{}={}", printable(k), printable(v))).collect();
        table.row([
            r.id.to_string(),
            r.started_at.clone(),
            r.suite.clone(),
            r.status.as_str().to_string(),
            match r.disturbed_cells {
                0 => format!("{}/{}", r.cells, r.total_cells),
                n => format!("{}/{} ({n} disturbed)", r.cells, r.total_cells),
            },
            printable(&r.host).to_string(),
            labels.join(" "),
        ]);
    }
    table.render()
}
