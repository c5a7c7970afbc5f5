//! Personality runs as tables: per phase, each operation's count, rate,
//! bytes and latency percentiles (open loop: from the intended start), the
//! connections' fairness, and what failed or was lost; then the clients table.

use crate::OpKind;
use iomatrix_core::human;
use iomatrix_report::table::{Column, Table};
use iomatrix_report::text::connections;
use iomatrix_store::StoredRun;
use serde_json::Value;
use std::fmt::Write;

pub fn report(run: &StoredRun) -> String {
    let mut out = String::new();
    let c0 = &run.conditions;
    for c in &run.cell_results {
        let m = &c.metrics;
        let looped = match (m["loop"].as_str(), m["target_rate_per_connection"].as_f64()) {
            (Some("open"), Some(rate)) => {
                format!("open loop at {rate} ops/s per connection (latency from the intended start)")
            }
            (Some("replay"), _) => "a dbench load file replayed".to_string(),
            _ => "closed loop".to_string(),
        };
        let _ = writeln!(
            out,
            "\n{} phase of {}{}: {} connections, {}, {} records, backend {}{}; {} operations, {} in {} s",
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
            human::bytes(c.bytes),
            human::fixed(c.wall_ns as f64 / 1e9, 3)
        );
        // A load file's operations have long names (QUERY_PATH_INFORMATION): the column fits them.
        let mut table = Table::new(vec![
            Column::fit_left("operation").min(10),
            Column::right("count", 10),
            Column::right("ops/s", 10),
            Column::right("MiB", 10),
            Column::right("mean ms", 9),
            Column::right("p50", 9),
            Column::right("p99", 9),
            Column::right("p99.9", 9),
            Column::right("max", 9),
            Column::right("errors", 7),
            Column::right("late", 7),
        ]);
        if let Some(ops) = m["ops"].as_object() {
            // In the order a file is used (the personality's operations), then by name.
            let rank = |n: &str| OpKind::ALL.iter().position(|k| k.name() == n).unwrap_or(OpKind::ALL.len());
            let mut ops: Vec<(&String, &Value)> = ops.iter().collect();
            ops.sort_by_key(|(n, _)| (rank(n), n.to_string()));
            for (name, s) in ops {
                let errors: u64 = s["errors"].as_object().map_or(0, |e| e.values().filter_map(Value::as_u64).sum());
                table.row([
                    name.clone(),
                    s["count"].as_u64().unwrap_or(0).to_string(),
                    human::fixed(s["per_sec"].as_f64().unwrap_or(0.0), 1),
                    human::fixed(s["bytes"].as_u64().unwrap_or(0) as f64 / 1048576.0, 1),
                    ms(&s["mean_ns"]),
                    ms(&s["p50_ns"]),
                    ms(&s["p99_ns"]),
                    ms(&s["p99_9_ns"]),
                    ms(&s["max_ns"]),
                    errors.to_string(),
                    s["late"].as_u64().unwrap_or(0).to_string(),
                ]);
            }
        }
        out.push_str(&table.render());
        let f = &m["fairness"];
        let mut rows: Vec<(String, String)> = vec![
            ("Operations per second (all connections)".into(), human::fixed(m["per_sec"].as_f64().unwrap_or(0.0), 1)),
            ("Throughput (KB/s)".into(), human::fixed(c.kib_per_sec, 1)),
        ];
        if f.is_object() {
            let n = f["connections"].as_f64().unwrap_or(1.0).max(1.0);
            rows.push(("Fairness: Jain's index (1 = even)".into(), human::fixed(f["jain"].as_f64().unwrap_or(0.0), 3)));
            rows.push((
                "Fairness: slowest, fastest connection's share".into(),
                format!(
                    "{}%, {}% (even: {}%)",
                    human::fixed(f["min_share"].as_f64().unwrap_or(0.0) * 100.0, 2),
                    human::fixed(f["max_share"].as_f64().unwrap_or(0.0) * 100.0, 2),
                    human::fixed(100.0 / n, 2)
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
            rows.push((
                "Throughput as dbench counts it (MB/s)".into(),
                human::fixed(d["mb_per_s"].as_f64().unwrap_or(0.0), 2),
            ));
            rows.push((
                "Status mismatches (the load file's status not met)".into(),
                d["mismatches"].as_u64().unwrap_or(0).to_string(),
            ));
        }
        if m["lock_conflicts"].as_u64().unwrap_or(0) > 0 {
            rows.push(("Lock conflicts (range held elsewhere)".into(), m["lock_conflicts"].to_string()));
        }
        if m["idle_iterations"].as_u64().unwrap_or(0) > 0 {
            rows.push(("Iterations without a file to work on".into(), m["idle_iterations"].to_string()));
        }
        let mut figures = Table::new(vec![Column::left("", 48), Column::free("")]).without_header();
        for (label, value) in rows {
            figures.row([label, value]);
        }
        out.push_str(&figures.render());
        if let Some(examples) = m["dbench"]["examples"].as_array() {
            for e in examples.iter().filter_map(Value::as_str).take(5) {
                let _ = writeln!(out, "  mismatch: {e}");
            }
        }
        for e in
            c.client_figures.as_array().into_iter().flatten().filter_map(|f| f["error"]["message"].as_str()).take(3)
        {
            let _ = writeln!(out, "  e.g. {e}");
        }
    }
    out + &iomatrix_report::text::clients::table(
        &connections::connections_as_clients(run),
        &connections::CLIENT_COLUMNS,
    )
}

/// Milliseconds with enough digits to tell fast operations apart; `-` where there were none.
fn ms(ns: &Value) -> String {
    human::millis(ns.as_f64().unwrap_or(0.0))
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
