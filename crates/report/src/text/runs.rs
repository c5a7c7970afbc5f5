//! `iomatrix runs`: the stored runs, one line each, and the same list as JSON.

use crate::table::{Column, Table};
use iomatrix_core::text::printable;
use iomatrix_store::{RunPage, RunSummary};
use serde_json::{json, Value};

/// Version of the runs document; see docs/json.md.
pub const RUNS_SCHEMA: &str = "iomatrix.runs/1";

/// The stored runs as the runs document (`runs --json`): the schema's version and the list.
pub fn runs_json(runs: &[RunSummary]) -> Value {
    json!({ "schema": RUNS_SCHEMA, "runs": runs })
}

/// One page of the runs a filter matched (`runs --page N`, `runs --suite ...`, `--json`): the
/// runs document with where the page stands: `total` matched, `page`, `per_page`, `pages`.
pub fn runs_page_json(page: &RunPage) -> Value {
    json!({
        "schema": RUNS_SCHEMA,
        "total": page.total,
        "page": page.page.number(),
        "per_page": page.page.per_page(),
        "pages": page.pages(),
        "runs": page.runs,
    })
}

/// The stored runs as `runs` prints them: one line each, or "no runs stored yet".
pub fn runs_text(runs: &[RunSummary]) -> String {
    if runs.is_empty() {
        return "no runs stored yet\n".to_string();
    }
    runs_table(runs)
}

/// One page of the runs a filter matched, as `runs --page N` (or any filter) prints it: where the
/// page stands ("runs 51-100 of 10000 (page 2 of 200)"), then its runs, newest first.
pub fn runs_page_text(page: &RunPage) -> String {
    let (number, pages) = (page.page.number(), page.pages());
    if page.total == 0 {
        return "no stored run matches\n".to_string();
    }
    if page.runs.is_empty() {
        return format!(
            "no runs on page {number}: {} runs matched, {pages} pages of {}; give --page {pages} or less\n",
            page.total,
            page.page.per_page()
        );
    }
    let header = format!("runs {}-{} of {} (page {number} of {pages})\n", page.first(), page.last(), page.total);
    header + &runs_table(&page.runs)
}

fn runs_table(runs: &[RunSummary]) -> String {
    let mut table = Table::new(vec![
        Column::right("run", 5),
        Column::left("started (UTC)", 20).gap("  "),
        // Fitted: a longer suite name ("personality"), state or host widens its whole column,
        // so every row stays aligned.
        Column::fit_left("suite").min(7).gap("  "),
        Column::fit_left("status").min(11).gap("  "),
        Column::fit_right("cells").min(11).gap("  "),
        Column::fit_left("host").min(12).gap("  "),
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

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_store::RunStatus;

    fn run(id: i64, suite: &str, status: RunStatus, host: &str) -> RunSummary {
        RunSummary {
            id,
            suite: suite.into(),
            status,
            started_at: "2026-12-06T10:00:00Z".into(),
            ended_at: None,
            host: host.into(),
            command_line: String::new(),
            labels: vec![("fs".into(), "ext4".into())],
            cells: 3,
            total_cells: 3,
            disturbed_cells: 0,
            error: None,
            iomatrix_version: "0".into(),
            pid: 1,
            pid_start: None,
        }
    }

    #[test]
    fn every_column_starts_at_the_same_place_on_every_line_whatever_its_longest_entry() {
        let text = runs_text(&[
            run(1, "iozone", RunStatus::Complete, "h"),
            run(2, "personality", RunStatus::Interrupted, "a-host-with-a-long-name"),
            run(3, "access", RunStatus::Complete, "h"),
        ]);
        let lines: Vec<&str> = text.lines().collect();
        // Each line's label column ("labels" in the header, "fs=ext4" in rows) starts at one place.
        let starts: Vec<usize> =
            lines.iter().map(|l| l.find("fs=ext4").or_else(|| l.find("labels")).unwrap()).collect();
        assert!(starts.windows(2).all(|w| w[0] == w[1]), "labels not aligned:\n{text}");
        let status: Vec<usize> = lines
            .iter()
            .map(|l| l.find("complete").or_else(|| l.find("interrupted")).or_else(|| l.find("status")).unwrap())
            .collect();
        assert!(status.windows(2).all(|w| w[0] == w[1]), "status not aligned:\n{text}");
    }
}
