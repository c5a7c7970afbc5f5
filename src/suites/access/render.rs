//! Access-spec runs: one line per cell with IOPS, MiB/s, latency
//! percentiles for reads and writes, and CPU.

use iomatrix_report::document::{marked, MARKS_LEGEND};
use iomatrix_access::figures::{IOPS, MIB_PER_SEC};
use iomatrix_access::AccessCellFigures;
use iomatrix_core::{Figures, Metric};
use iomatrix_store::{CellRow, StoredRun};
use std::fmt::Write;

pub fn table(run: &StoredRun) -> String {
    let mut out = String::from("\n");
    let _ = writeln!(
        out,
        "{:>6} {:>5} {:>5} {:>4} {:>10} {:>9} | {:>9} {:>9} {:>9} {:>9} {:>9} | {:>9} {:>9} | {:>5}",
        "bs",
        "read",
        "rand",
        "qd",
        "IOPS",
        "MiB/s",
        "rd mean",
        "rd p50",
        "rd p99",
        "rd p99.9",
        "rd max",
        "wr p50",
        "wr p99",
        "CPU%"
    );
    for c in &run.cell_results {
        let f = figures(c);
        let lat = |ns: u64| latency(ns as f64);
        // A partial cell's figures are of the clients that finished (marked); a failed one has none.
        let figure = |metric: Metric| {
            let decimals = metric.precision;
            marked(c.state.kind, || format!("{:.decimals$}", f.value(metric.id).unwrap_or(0.0)))
        };
        let _ = writeln!(
            out,
            "{:>6} {:>4}% {:>4}% {:>4} {:>10} {:>9} | {:>9} {:>9} {:>9} {:>9} {:>9} | {:>9} {:>9} | {:>5}",
            iomatrix_core::ByteSize(f.block_size.unwrap_or(0)).to_string(),
            f.mix.read_percent,
            f.mix.random_percent,
            f.mix.queue_depth,
            figure(IOPS),
            figure(MIB_PER_SEC),
            latency(f.read.mean_ns),
            lat(f.read.p50_ns),
            lat(f.read.p99_ns),
            lat(f.read.p99_9_ns),
            lat(f.read.max_ns),
            lat(f.write.p50_ns),
            lat(f.write.p99_ns),
            c.cpu_percent.map_or("-".into(), |p| format!("{p:.0}"))
        );
    }
    if run.cell_results.iter().any(|c| !c.state.is_complete()) {
        let _ = writeln!(out, "{MARKS_LEGEND}");
    }
    out + &iomatrix_report::text::clients::table(run, &CLIENT_COLUMNS)
}

/// `830 ns`, `12.4 us`, `3.10 ms`, `1.25 s` (the one formatter, in core).
pub use iomatrix_core::human::nanos as human_ns;

/// An access cell's stored figures; a row that does not hold them shows zeros.
fn figures(c: &CellRow) -> AccessCellFigures {
    AccessCellFigures::read(&c.metrics, c.record_size)
        .unwrap_or_else(|| AccessCellFigures { block_size: c.record_size, ..Default::default() })
}

/// `830 ns`, `12.4 us`, `3.10 ms`, `1.25 s`; `-` where there were no requests.
pub fn latency(ns: f64) -> String {
    if ns <= 0.0 {
        "-".into()
    } else {
        human_ns(ns)
    }
}

pub const CLIENT_COLUMNS: iomatrix_report::text::clients::ClientColumns = iomatrix_report::text::clients::ClientColumns {
    unit: "MiB/s",
    describe: |c| figures(c).cell_name(),
    aggregates: |c| {
        let f = figures(c);
        (f.mib_per_sec_sum_of_clients, f.mib_per_sec, None)
    },
    client_rate: |f| f["mib_per_sec"].as_f64(),
    kib_per_unit: 1024.0,
};
