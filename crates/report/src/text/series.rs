//! `iomatrix show RUN --series`: each cell's figures over time, a table per cell (interval
//! start, its own length, ops/s, MiB/s, reads, writes, mean and p99 latency), from the series
//! the cell stores ([`iomatrix_stats::Series`]). Every suite's timed cells store one; a cell
//! without one says why it may lack it (stored before, imported, or failed).

use crate::table::{Column, Table};
use iomatrix_core::human;
use iomatrix_core::text::printable;
use iomatrix_stats::series::MAX_INTERVALS;
use iomatrix_stats::Series;
use iomatrix_store::{CellRow, StoredRun};
use std::fmt::Write;

/// Every cell's series of `run`.
pub fn series_text(run: &StoredRun) -> String {
    let mut out = format!("run #{}  {}: figures over time\n", run.summary.id, printable(&run.summary.suite));
    let mix = run.suite_facts().size_mix;
    for cell in &run.cell_results {
        let key = iomatrix_analysis::CellKey::of(cell).named_by_mix(mix.as_deref());
        let name = format!("cell {} {}", cell.seq, key.describe());
        out.push('\n');
        out.push_str(&cell_text(&name, cell));
    }
    out
}

/// One cell's heading and table, or why it has none.
fn cell_text(name: &str, cell: &CellRow) -> String {
    let Some(series) = cell.series().filter(|s| !s.intervals.is_empty()) else {
        return format!("{name}: no series stored (stored before its suite recorded one, imported, or failed)\n");
    };
    let mut out = format!("{name}: {}\n", heading(&series));
    out.push_str(&table(&series));
    if let Some(last) = series.intervals.last().filter(|l| l.length_ns < series.interval_ns) {
        let _ = writeln!(
            out,
            "  the last interval ran {} of {}: its rates are over its own length",
            human::nanos(last.length_ns as f64),
            human::nanos(series.interval_ns as f64)
        );
    }
    out
}

/// "interval 1.00 s, 10 intervals, 2 clients", with the merges past the bound where there were.
fn heading(series: &Series) -> String {
    let mut said = format!(
        "interval {}, {} intervals, {} client(s), {} operations",
        human::nanos(series.interval_ns as f64),
        series.intervals.len(),
        series.clients,
        series.ops()
    );
    if series.merges > 0 {
        let _ = write!(
            said,
            " (asked {}; merged pairwise {} time(s) to stay within {MAX_INTERVALS} intervals)",
            human::nanos(series.asked_interval_ns as f64),
            series.merges
        );
    }
    said
}

fn table(series: &Series) -> String {
    let mut table = Table::new(vec![
        Column::right("start s", 9),
        Column::right("length s", 9),
        Column::right("ops/s", 10),
        Column::right("MiB/s", 9),
        Column::right("reads", 9),
        Column::right("writes", 9),
        Column::right("mean ms", 9),
        Column::right("p99 ms", 9),
    ])
    .indent("  ");
    for i in &series.intervals {
        table.row([
            human::fixed(i.start_ns as f64 / 1e9, 3),
            human::fixed(i.length_ns as f64 / 1e9, 3),
            human::fixed(i.ops_per_sec(), 0),
            human::fixed(i.mib_per_sec(), 1),
            i.reads.to_string(),
            i.writes.to_string(),
            human::millis(i.mean_ns),
            human::millis(i.p99_ns as f64),
        ]);
    }
    table.render()
}
