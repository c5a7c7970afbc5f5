//! File-server runs as seed 003 tabulates them: per phase, the average
//! response time of each operation type (with p50, p99 and max beside it),
//! the average throughput a connection saw, the total throughput, the
//! completion time, and what failed.

use crate::Op;
use iomatrix_core::human;
use iomatrix_report::table::{Column, Table};
use iomatrix_report::text::connections;
use iomatrix_store::StoredRun;
use serde_json::Value;
use std::fmt::Write;

/// The width of the label column the phase's tables share.
const LABEL_WIDTH: usize = 46;

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
            human::bytes(c.bytes),
            if m["caches_dropped"] == true { "; page cache dropped before it" } else { "" }
        );
        let mut ops = Table::new(vec![
            Column::left("", LABEL_WIDTH),
            Column::right("ops", 10),
            Column::right("avg", 10),
            Column::right("p50", 10),
            Column::right("p99", 10),
            Column::right("max", 10),
        ]);
        for op in Op::ALL {
            let s = &m["ops"][op.name()];
            if s.is_null() {
                continue;
            }
            ops.row([
                format!("Avg {} response time (ms)", capitalised(op.name())),
                s["count"].as_u64().unwrap_or(0).to_string(),
                ms(&s["mean_ns"]),
                ms(&s["p50_ns"]),
                ms(&s["p99_ns"]),
                ms(&s["max_ns"]),
            ]);
        }
        out.push_str(&ops.render());
        let what = match phase {
            "write" => "Write",
            "read" => "Read",
            _ => "Read/rewrite",
        };
        let mut figures = Table::new(vec![Column::left("", LABEL_WIDTH), Column::free("")]).without_header();
        figures.row([
            format!("Avg {what} throughput per connection (KB/sec)"),
            human::fixed(m["avg_connection_kib_per_sec"].as_f64().unwrap_or(0.0), 2),
        ]);
        figures.row([format!("Total {} throughput (KB/sec)", what.to_lowercase()), human::fixed(c.kib_per_sec, 2)]);
        figures.row(["Time taken for test completion (s)".into(), human::fixed(c.wall_ns as f64 / 1e9, 3)]);
        figures.row(["CPU (% of one core)".into(), c.cpu_percent.map_or("-".into(), |p| human::fixed(p, 0))]);
        figures.row(["Connections".into(), connections(m)]);
        figures.row(["Errors (connections failed, by kind)".into(), errors(&m["errors"])]);
        figures.row(["Lost samples (operations not done)".into(), lost(&m["lost"])]);
        if run.conditions["remote"].is_object() && m["setup"].is_object() {
            // On a server: each connection's own session, connected before the first phase.
            let setup = &m["setup"];
            figures.row([
                "Sessions connected, untimed (ms avg, max)".into(),
                format!("{}, {}", ms(&setup["mean_ns"]), ms(&setup["max_ns"])),
            ]);
        }
        out.push_str(&figures.render());
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

/// The clients table every suite shows (more than one client, or a failed one), a row per
/// connection: a phase stores its connections' figures, as seed 003's "clients".
fn clients_table(run: &StoredRun) -> String {
    iomatrix_report::text::clients::table(&connections::connections_as_clients(run), &connections::CLIENT_COLUMNS)
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next().map(|f| f.to_uppercase().chain(c).collect()).unwrap_or_default()
}

/// Milliseconds with enough digits to tell fast operations apart; `-` where there were none.
fn ms(ns: &Value) -> String {
    human::millis(ns.as_f64().unwrap_or(0.0))
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
        human::bytes(l["bytes"].as_u64().unwrap_or(0))
    )
}
