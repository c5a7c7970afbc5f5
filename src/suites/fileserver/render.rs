//! File-server runs as seed 003 tabulates them: per phase, the average
//! response time of each operation type (with p50, p99 and max beside it),
//! the average throughput a connection saw, the total throughput, the
//! completion time, and what failed.

use iomatrix_fileserver::Op;
use iomatrix_store::{CellRow, StoredRun};
use serde_json::Value;
use std::fmt::Write;

pub fn report(run: &StoredRun) -> String {
    let mut out = String::new();
    let plan = &run.plan;
    for c in &run.cell_results {
        let m = &c.metrics;
        let phase = m["phase"].as_str().unwrap_or(&c.test);
        let title = match phase {
            "write" => "Write test".to_string(),
            "read" => "Read test".to_string(),
            "mix" => {
                format!("Mixed test ({}% of visits read, the rest rewrite)", m["read_percent"].as_u64().unwrap_or(0))
            }
            other => format!("{other} test"),
        };
        // A phase some connections did not finish is marked where its figures are.
        let title = match c.state.is_complete() {
            true => title,
            false => format!("{title} [NOT COMPLETE: {}]", c.state.describe()),
        };
        let mut how = String::new();
        if let (Some(n), "write") = (plan["interleave"].as_u64(), phase) {
            how.push_str(&format!(", {n} files written at once"));
        }
        if let (Some(n), "write" | "mix") = (plan["fsync_every"].as_u64(), phase) {
            how.push_str(&format!(", fsync every {n} records"));
        }
        let from = match m["clients"].as_array().map_or(0, Vec::len) {
            n if n > 1 => format!(" from {n} clients"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "\n{title}: {} connections{from} x {} files, {} records{how}; {} files, {}{}",
            // A phase every client failed has no connection's figures: its plan's connections.
            if c.clients == 0 { c.state.of as usize } else { c.clients },
            plan["files_per_connection"].as_u64().unwrap_or(0),
            iomatrix_core::ByteSize(c.record_size.unwrap_or(0)),
            m["done"]["files"].as_u64().unwrap_or(0),
            iomatrix_core::human::bytes(c.bytes),
            if m["caches_dropped"] == true { "; page cache dropped before it" } else { "" }
        );
        let _ = writeln!(out, "{:<46} {:>10} {:>10} {:>10} {:>10} {:>10}", "", "ops", "avg", "p50", "p99", "max");
        for op in Op::ALL {
            let s = &m["ops"][op.name()];
            if s.is_null() {
                continue;
            }
            let label = format!("Avg {} response time (ms)", capitalised(op.name()));
            let _ = writeln!(
                out,
                "{label:<46} {:>10} {:>10} {:>10} {:>10} {:>10}",
                s["count"].as_u64().unwrap_or(0),
                ms(&s["mean_ns"]),
                ms(&s["p50_ns"]),
                ms(&s["p99_ns"]),
                ms(&s["max_ns"])
            );
        }
        let what = match phase {
            "write" => "Write",
            "read" => "Read",
            _ => "Read/rewrite",
        };
        let mut rows = vec![
            (
                format!("Avg {what} throughput per connection (KB/sec)"),
                format!("{:.2}", m["avg_connection_kib_per_sec"].as_f64().unwrap_or(0.0)),
            ),
            (format!("Total {} throughput (KB/sec)", what.to_lowercase()), format!("{:.2}", c.kib_per_sec)),
            ("Time taken for test completion (s)".into(), format!("{:.3}", c.wall_ns as f64 / 1e9)),
            ("CPU (% of one core)".into(), c.cpu_percent.map_or("-".into(), |p| format!("{p:.0}"))),
            ("Connections".into(), connections(m)),
            ("Errors (connections failed, by kind)".into(), errors(&m["errors"])),
            ("Lost samples (operations not done)".into(), lost(&m["lost"])),
        ];
        if run.conditions["remote"].is_object() && m["setup"].is_object() {
            // On a server: each connection's own session, connected before the first phase.
            let setup = &m["setup"];
            rows.push((
                "Sessions connected, untimed (ms avg, max)".into(),
                format!("{}, {}", ms(&setup["mean_ns"]), ms(&setup["max_ns"])),
            ));
        }
        for (label, value) in rows {
            let _ = writeln!(out, "{label:<46} {value}");
        }
        let failures: Vec<&str> = c
            .client_figures
            .as_array()
            .map(|a| a.iter().filter_map(|f| f["error"]["message"].as_str()).take(3).collect())
            .unwrap_or_default();
        for message in failures {
            let _ = writeln!(out, "  e.g. {message}");
        }
    }
    out + &clients_table(run)
}

/// The clients table every suite shows (more than one client, or a failed
/// one). A cell's `client_figures` are per connection (seed 003's
/// "clients"), so the table reads each client's figures from
/// `metrics.clients` and counts the clients there.
fn clients_table(run: &StoredRun) -> String {
    iomatrix_report::text::clients::table(&by_client(run), &CLIENT_COLUMNS)
}

/// The run with each cell's per-connection figures as its client figures.
pub fn by_client(run: &StoredRun) -> StoredRun {
    StoredRun {
        cell_results: run
            .cell_results
            .iter()
            .map(|c| {
                let figures = c.metrics["clients"].clone();
                CellRow {
                    clients: figures.as_array().map_or(0, Vec::len),
                    client_figures: figures,
                    metrics: c.metrics.clone(),
                    blobs: Vec::new(),
                    ..c.clone()
                }
            })
            .collect(),
        ..run.clone()
    }
}

pub const CLIENT_COLUMNS: iomatrix_report::text::clients::ClientColumns = iomatrix_report::text::clients::ClientColumns {
    unit: "KB/s",
    describe: |c| format!("{} phase", c.metrics["phase"].as_str().unwrap_or(&c.test)),
    aggregates: |c| {
        let m = &c.metrics;
        (
            m["kib_per_sec_sum_of_clients"].as_f64().unwrap_or(0.0),
            m["total_kib_per_sec"].as_f64().unwrap_or(c.kib_per_sec),
            None,
        )
    },
    client_rate: |f| f["total_kib_per_sec"].as_f64(),
    kib_per_unit: 1.0,
};

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// Milliseconds with enough digits to tell fast operations apart; `-` where there were none.
pub fn ms(v: &Value) -> String {
    let ms = v.as_f64().unwrap_or(0.0) / 1e6;
    if ms <= 0.0 {
        "-".into()
    } else if ms >= 100.0 {
        format!("{ms:.1}")
    } else if ms >= 1.0 {
        format!("{ms:.2}")
    } else if ms >= 0.01 {
        format!("{ms:.3}")
    } else {
        format!("{ms:.4}")
    }
}

fn connections(m: &Value) -> String {
    let n = |k: &str| m[k].as_u64().unwrap_or(0);
    let mut s = format!("{} ok, {} failed", n("connections_ok"), n("connections_failed"));
    if n("connections_skipped") > 0 {
        s.push_str(&format!(", {} out since an earlier phase", n("connections_skipped")));
    }
    s
}

fn errors(e: &Value) -> String {
    match e.as_object() {
        Some(map) if !map.is_empty() => {
            map.iter().map(|(k, v)| format!("{k} {}", v.as_u64().unwrap_or(0))).collect::<Vec<_>>().join(", ")
        }
        _ => "none".into(),
    }
}

fn lost(l: &Value) -> String {
    let ops = &l["ops"];
    let total: u64 = Op::ALL.iter().map(|op| ops[op.name()].as_u64().unwrap_or(0)).sum();
    if total == 0 && l["files"].as_u64().unwrap_or(0) == 0 {
        return "0".into();
    }
    let parts: Vec<String> = Op::ALL
        .iter()
        .filter_map(|op| ops[op.name()].as_u64().filter(|&n| n > 0).map(|n| format!("{op} {n}")))
        .collect();
    format!(
        "{total} ({}); {} files, {}",
        parts.join(", "),
        l["files"].as_u64().unwrap_or(0),
        iomatrix_core::human::bytes(l["bytes"].as_u64().unwrap_or(0))
    )
}
