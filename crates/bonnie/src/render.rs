//! Bonnie runs as bonnie++ prints them, rebuilt from the stored cells; with
//! many clients, bonnie++'s figures are the sums of the clients' own rates,
//! and the clients table follows.

use crate::{
    BonnieCellFigures, BonniePlan, BonnieResult, BonnieTest, CsvSource, NotWhole, PerChar, DEFAULT_CHUNK, MIN_TIME_NS,
};
use iomatrix_core::{ByteSize, Figures};
use iomatrix_report::table::{Column, Table};
use iomatrix_store::{CellStateKind, StoredRun};
use serde::Deserialize;
use serde_json::Value;

/// A stored Bonnie run as bonnie++ prints its results (or, imported from bonnie++'s CSV, as
/// bonnie++ printed them), with the clients table when there were several.
pub fn report(run: &StoredRun) -> String {
    if let Some(imported) = imported_report(run) {
        return imported;
    }
    let Ok(plan) = serde_json::from_value::<BonniePlan>(run.records().plan.clone()) else {
        return "\n(the stored plan is not a Bonnie plan this iomatrix can read)\n".into();
    };
    let results: Vec<BonnieResult> =
        run.cell_results.iter().filter_map(|c| serde_json::from_value(c.metrics.clone()).ok()).collect();
    // A test whose clients failed, some (its figure of those that finished) or all (no figure).
    let not_whole = |repeat: u32, test: BonnieTest| {
        let cell = run
            .cell_results
            .iter()
            .find(|c| c.test == test.name() && figures(c).is_some_and(|f| f.result.repeat == repeat))?;
        match cell.state.kind {
            CellStateKind::Complete => None,
            CellStateKind::Partial => Some(NotWhole::Partial),
            CellStateKind::Failed => Some(NotWhole::Failed),
            CellStateKind::Disturbed => Some(NotWhole::Disturbed),
        }
    };
    let mut out = format!("\n{}", crate::report_marked(machine_name(run), &plan, &results, &not_whole));
    if run.cell_results.iter().any(|c| !c.state.is_complete()) {
        out.push_str(iomatrix_report::document::MARKS_LEGEND);
        out.push('\n');
    }
    if run.cell_results.iter().any(|c| c.clients > 1) {
        out.push_str("(with many clients each figure above is the sum of the clients' own rates)\n");
    }
    out + &cached_at_start(run) + &iomatrix_report::text::clients::table(run, &CLIENT_COLUMNS)
}

/// How much of the data file the page cache held as each data test began, a line per test and
/// repeat. Nothing for runs that did not record it (a server's files, runs stored before it).
fn cached_at_start(run: &StoredRun) -> String {
    let mut table = Table::new(vec![
        Column::fit_left("test"),
        Column::fit_right("repeat"),
        Column::free("cached at start").gap("  "),
    ])
    .trimmed();
    for c in &run.cell_results {
        let Some(f) = figures(c) else { continue };
        let Some(held) = f.cached_at_start else { continue };
        let said = held.describe_at_start();
        table.row([f.result.test.name().to_string(), f.result.repeat.to_string(), said]);
    }
    if table.is_empty() {
        return String::new();
    }
    format!(
        "\nCached at start (the page cache's share of the data file as each test began, by mincore; all clients' \
         files; the file tests make their own)\n{}",
        table.render()
    )
}

/// The Machine column: `-m NAME` (kept as the label machine=NAME), else the run's host, as bonnie++.
fn machine_name(run: &StoredRun) -> &str {
    run.summary.labels.iter().find(|(k, _)| k == "machine").map(|(_, v)| v.as_str()).unwrap_or(&run.summary.host)
}

/// bonnie++'s CSV line(s) of a stored run: its merged figures, named
/// `machine` (`-m`) or by the run's host. Empty for a run that is not a
/// Bonnie plan this iomatrix reads.
pub fn csv(run: &StoredRun, machine: Option<&str>) -> String {
    let Ok(plan) = serde_json::from_value::<BonniePlan>(run.records().plan.clone()) else {
        return String::new();
    };
    let results: Vec<BonnieResult> =
        run.cell_results.iter().filter_map(|c| serde_json::from_value(c.metrics.clone()).ok()).collect();
    let version = crate::csv_version(&plan);
    let clients = run.records().conditions["clients"].as_u64().unwrap_or(1).max(1) as usize;
    let source = CsvSource { version: &version, name: machine.unwrap_or(machine_name(run)), concurrency: clients };
    crate::csv_lines(&source, &plan, &results)
}

/// How the shared clients table shows a Bonnie cell: its name, unit and each client's rate.
pub const CLIENT_COLUMNS: iomatrix_report::text::clients::ClientColumns =
    iomatrix_report::text::clients::ClientColumns {
        unit: "each test's unit: KB/s, seeks/s or files/s",
        describe: |c| figures(c).map_or_else(|| format!("{} (?)", c.test), |f| f.cell_name()),
        aggregates: |c| figures(c).map_or((0.0, 0.0, None), |f| (f.per_sec_sum_of_clients, f.per_sec_overall, None)),
        client_rate: |f| f["per_sec"].as_f64(),
        kib_per_unit: 1.0,
    };

/// A stored Bonnie cell's figures; None for a row that does not hold them.
fn figures(c: &iomatrix_store::CellRow) -> Option<BonnieCellFigures> {
    BonnieCellFigures::deserialize(&c.metrics).ok()
}

/// bonnie++'s table for a run imported from its CSV: measured figures as
/// bonnie++ printed them, `+++++ +++` where it printed that, blank where a
/// test did not run.
fn imported_report(run: &StoredRun) -> Option<String> {
    // What bonnie's own importer keeps in the conditions' import block (its `unmeasured` tests).
    let imp = run.records().conditions.get("imported").and_then(Value::as_object)?;
    let p = &run.records().plan;
    let num = |key: &str| p[key].as_u64();
    let mut plan = BonniePlan::new(ByteSize(num("size").unwrap_or(0)));
    plan.chunk = num("chunk").map(ByteSize).unwrap_or(DEFAULT_CHUNK);
    plan.files = num("files").unwrap_or(0);
    plan.file_max = ByteSize(num("file_max").unwrap_or(0));
    plan.file_min = ByteSize(num("file_min").unwrap_or(0));
    plan.repeats = num("repeats").unwrap_or(1).max(1) as u32;
    // bonnie++'s own per-char test, unless iomatrix's CSV said Bonnie's (imports before the field: bonnie++'s).
    plan.per_char = serde_json::from_value(p["per_char"].clone()).unwrap_or(PerChar::BonniePlus);
    // The table prints a measured figure only for a test that took at least
    // bonnie++'s minimum time, and +++++ below it: the CSV has no times, so
    // these are set for the display only (the stored cells keep 0).
    let mut results: Vec<BonnieResult> = run
        .cell_results
        .iter()
        .filter_map(|c| serde_json::from_value::<BonnieResult>(c.metrics.clone()).ok())
        .map(|mut r| {
            r.wall_ns = MIN_TIME_NS;
            r
        })
        .collect();
    for u in imp.get("unmeasured").and_then(Value::as_array).into_iter().flatten() {
        let (Some(test), Some(repeat)) = (u["test"].as_str(), u["repeat"].as_u64()) else { continue };
        let Ok(test) = test.parse::<BonnieTest>() else { continue };
        results.push(BonnieResult {
            test,
            repeat: repeat as u32,
            bytes: 0,
            ops: 0,
            writes: 0,
            wall_ns: 1,
            user_ns: 0,
            sys_ns: 0,
            per_sec: 0.0,
            unit: test.unit().to_string(),
            cpu_percent: 0.0,
            end_ns: 0,
            max_latency_ns: 0,
            series: Default::default(),
        });
    }
    let machine = run.records().environment["host"].as_str().unwrap_or("unknown");
    let mut out = format!("\n{}", crate::report_for(machine, &plan, &results));
    if p["chunk"].is_null() && plan.size.bytes() > 0 {
        out.push_str("(chunk size not in the source: the Size column cannot show it)\n");
    }
    if run.cell_results.iter().any(|c| c.clients > 1) {
        out.push_str("(bonnie++ -c: each figure above is its sum over the concurrent copies)\n");
    }
    Some(out)
}
