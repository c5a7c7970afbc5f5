//! Access-spec runs: one line per cell with IOPS, MiB/s, latency
//! percentiles for reads and writes, and CPU.

use iomatrix_report::document::{marked, MARKS_LEGEND};
use iomatrix_store::StoredRun;
use serde_json::Value;
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
        let m = &c.metrics;
        let lat = |side: &str, key: &str| latency(&m[side][key]);
        // A partial cell's figures are of the clients that finished (marked); a failed one has none.
        let figure = |key: &str, decimals: usize| {
            marked(c.state.kind, || format!("{:.decimals$}", m[key].as_f64().unwrap_or(0.0)))
        };
        let _ = writeln!(
            out,
            "{:>6} {:>4}% {:>4}% {:>4} {:>10} {:>9} | {:>9} {:>9} {:>9} {:>9} {:>9} | {:>9} {:>9} | {:>5}",
            iomatrix_core::ByteSize(c.record_size.unwrap_or(0)).to_string(),
            m["read_percent"].as_u64().unwrap_or(0),
            m["random_percent"].as_u64().unwrap_or(0),
            m["queue_depth"].as_u64().unwrap_or(0),
            figure("iops", 0),
            figure("mib_per_sec", 1),
            lat("read", "mean_ns"),
            lat("read", "p50_ns"),
            lat("read", "p99_ns"),
            lat("read", "p99_9_ns"),
            lat("read", "max_ns"),
            lat("write", "p50_ns"),
            lat("write", "p99_ns"),
            c.cpu_percent.map_or("-".into(), |p| format!("{p:.0}"))
        );
    }
    if run.cell_results.iter().any(|c| !c.state.is_complete()) {
        let _ = writeln!(out, "{MARKS_LEGEND}");
    }
    out + &crate::render::clients::table(run, &CLIENT_COLUMNS)
}

/// `830 ns`, `12.4 us`, `3.10 ms`, `1.25 s` (the one formatter, in core).
pub use iomatrix_core::human::nanos as human_ns;

/// `830 ns`, `12.4 us`, `3.10 ms`, `1.25 s`; `-` where there were no requests.
pub fn latency(v: &Value) -> String {
    let ns = v.as_f64().unwrap_or(0.0);
    if ns <= 0.0 {
        "-".into()
    } else {
        human_ns(ns)
    }
}

pub const CLIENT_COLUMNS: crate::render::clients::ClientColumns = crate::render::clients::ClientColumns {
    unit: "MiB/s",
    describe: |c| {
        let m = &c.metrics;
        format!(
            "{} read {}% random {}% qd {}",
            iomatrix_core::ByteSize(c.record_size.unwrap_or(0)),
            m["read_percent"],
            m["random_percent"],
            m["queue_depth"]
        )
    },
    aggregates: |c| {
        let m = &c.metrics;
        (m["mib_per_sec_sum_of_clients"].as_f64().unwrap_or(0.0), m["mib_per_sec"].as_f64().unwrap_or(0.0), None)
    },
    client_rate: |f| f["mib_per_sec"].as_f64(),
    kib_per_unit: 1024.0,
};
