//! Personality runs as tables: per phase, each operation's count, rate,
//! bytes and latency percentiles (open loop: from the intended start), the
//! connections' fairness, and what failed or was lost; then the clients table.

use crate::suites::fileserver::render::{by_client, ms, CLIENT_COLUMNS};
use iomatrix_personality::OpKind;
use iomatrix_store::StoredRun;
use serde_json::Value;
use std::fmt::Write;

pub fn report(run: &StoredRun) -> String {
    let mut out = String::new();
    let c0 = &run.conditions;
    for c in &run.cell_results {
        let m = &c.metrics;
        let looped = match (m["loop"].as_str(), m["target_rate_per_connection"].as_f64()) {
            (Some("open"), Some(rate)) => format!("open loop at {rate} ops/s per connection (latency from the intended start)"),
            (Some("replay"), _) => "a dbench load file replayed".to_string(),
            _ => "closed loop".to_string(),
        };
        let _ = writeln!(
            out,
            "\n{} phase of {}{}: {} connections, {}, {} records, backend {}{}; {} operations, {} in {:.3} s",
            m["phase"].as_str().unwrap_or(&c.test),
            m["personality"].as_str().unwrap_or("?"),
            match c.state.is_complete() {
                true => String::new(),
                false => format!(" [NOT COMPLETE: {}]", c.state.describe()),
            },
            c.clients,
            looped,
            iomatrix_core::ByteSize(c.record_size.unwrap_or(0)),
            c.backend,
            if c0["remote"].is_object() { " (server)" } else { "" },
            c.ops,
            iomatrix_core::human::bytes(c.bytes),
            c.wall_ns as f64 / 1e9
        );
        // A load file's operations have long names (QUERY_PATH_INFORMATION).
        let w = m["ops"].as_object().into_iter().flat_map(|o| o.keys()).map(String::len).max().unwrap_or(0).max(10);
        let _ = writeln!(
            out,
            "{:<w$} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>7}",
            "operation", "count", "ops/s", "MiB", "mean ms", "p50", "p99", "p99.9", "max", "errors", "late"
        );
        if let Some(ops) = m["ops"].as_object() {
            // In the order a file is used (the personality's operations), then by name.
            let rank = |n: &str| OpKind::ALL.iter().position(|k| k.name() == n).unwrap_or(OpKind::ALL.len());
            let mut ops: Vec<(&String, &Value)> = ops.iter().collect();
            ops.sort_by_key(|(n, _)| (rank(n), n.to_string()));
            for (name, s) in ops {
                let errors: u64 = s["errors"].as_object().map_or(0, |e| e.values().filter_map(Value::as_u64).sum());
                let _ = writeln!(
                    out,
                    "{:<w$} {:>10} {:>10.1} {:>10.1} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>7}",
                    name,
                    s["count"].as_u64().unwrap_or(0),
                    s["per_sec"].as_f64().unwrap_or(0.0),
                    s["bytes"].as_u64().unwrap_or(0) as f64 / 1048576.0,
                    ms(&s["mean_ns"]),
                    ms(&s["p50_ns"]),
                    ms(&s["p99_ns"]),
                    ms(&s["p99_9_ns"]),
                    ms(&s["max_ns"]),
                    errors,
                    s["late"].as_u64().unwrap_or(0)
                );
            }
        }
        let f = &m["fairness"];
        let mut rows: Vec<(String, String)> = vec![
            ("Operations per second (all connections)".into(), format!("{:.1}", m["per_sec"].as_f64().unwrap_or(0.0))),
            ("Throughput (KB/s)".into(), format!("{:.1}", c.kib_per_sec)),
        ];
        if f.is_object() {
            let n = f["connections"].as_f64().unwrap_or(1.0).max(1.0);
            rows.push((
                "Fairness: Jain's index (1 = even)".into(),
                format!("{:.3}", f["jain"].as_f64().unwrap_or(0.0)),
            ));
            rows.push((
                "Fairness: slowest, fastest connection's share".into(),
                format!(
                    "{:.2}%, {:.2}% (even: {:.2}%)",
                    f["min_share"].as_f64().unwrap_or(0.0) * 100.0,
                    f["max_share"].as_f64().unwrap_or(0.0) * 100.0,
                    100.0 / n
                ),
            ));
        }
        rows.push(("Connections failed".into(), failed(m)));
        rows.push(("Lost operations (failed connections)".into(), m["lost_ops"].as_u64().unwrap_or(0).to_string()));
        if m["loop"] == "open" {
            rows.push(("Backlog (arrivals never issued)".into(), m["backlog"].as_u64().unwrap_or(0).to_string()));
        }
        if m["dbench"].is_object() {
            let d = &m["dbench"];
            rows.push(("Throughput as dbench counts it (MB/s)".into(), format!("{:.2}", d["mb_per_s"].as_f64().unwrap_or(0.0))));
            rows.push((
                "Status mismatches (the load file's status not met)".into(),
                d["mismatches"].as_u64().unwrap_or(0).to_string(),
            ));
        }
        if m["lock_conflicts"].as_u64().unwrap_or(0) > 0 {
            rows.push((
                "Lock conflicts (range held elsewhere)".into(),
                m["lock_conflicts"].to_string(),
            ));
        }
        if m["idle_iterations"].as_u64().unwrap_or(0) > 0 {
            rows.push(("Iterations without a file to work on".into(), m["idle_iterations"].to_string()));
        }
        for (label, value) in rows {
            let _ = writeln!(out, "{label:<48} {value}");
        }
        if let Some(examples) = m["dbench"]["examples"].as_array() {
            for e in examples.iter().filter_map(Value::as_str).take(5) {
                let _ = writeln!(out, "  mismatch: {e}");
            }
        }
        for e in c
            .client_figures
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["error"]["message"].as_str())
            .take(3)
        {
            let _ = writeln!(out, "  e.g. {e}");
        }
    }
    out + &iomatrix_report::text::clients::table(&by_client(run), &CLIENT_COLUMNS)
}

fn failed(m: &Value) -> String {
    let n = m["connections_failed"].as_u64().unwrap_or(0);
    match m["errors"].as_object() {
        Some(e) if n > 0 => format!(
            "{n} ({})",
            e.iter().map(|(k, v)| format!("{k} {}", v.as_u64().unwrap_or(0))).collect::<Vec<_>>().join(", ")
        ),
        _ => n.to_string(),
    }
}
