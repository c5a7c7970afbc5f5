//! Personality runs as tables: per phase, each operation's count, rate,
//! bytes and latency percentiles (open loop: from the intended start), the
//! connections' fairness, and what failed or was lost; then the clients table.

use crate::figures::{StoredCellFigures, StoredConnection, StoredOpFigures};
use crate::OpKind;
use iomatrix_core::human;
use iomatrix_report::table::{Column, Table};
use iomatrix_report::text::connections;
use iomatrix_store::StoredRun;
use std::fmt::Write;

pub fn report(run: &StoredRun) -> String {
    let mut out = String::new();
    let c0 = &run.conditions;
    for c in &run.cell_results {
        let m = StoredCellFigures::read(&c.metrics);
        let looped = match (m.looped.as_deref(), m.target_rate_per_connection) {
            (Some("open"), Some(rate)) => {
                format!("open loop at {rate} ops/s per connection (latency from the intended start)")
            }
            (Some("replay"), _) => "a dbench load file replayed".to_string(),
            _ => "closed loop".to_string(),
        };
        let _ = writeln!(
            out,
            "\n{} phase of {}{}: {} connections, {}, {} records, backend {}{}; {} operations, {} in {} s",
            m.phase.as_deref().unwrap_or(&c.test),
            m.personality.as_deref().unwrap_or("?"),
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
        if let Some(ops) = &m.ops {
            // In the order a file is used (the personality's operations), then by name.
            let rank = |n: &str| OpKind::ALL.iter().position(|k| k.name() == n).unwrap_or(OpKind::ALL.len());
            let mut ops: Vec<(&String, &StoredOpFigures)> = ops.iter().collect();
            ops.sort_by_key(|(n, _)| (rank(n), n.to_string()));
            for (name, s) in ops {
                table.row([
                    name.clone(),
                    s.count.to_string(),
                    human::fixed(s.per_sec, 1),
                    human::fixed(s.bytes as f64 / 1048576.0, 1),
                    human::millis(s.mean_ns),
                    human::millis(s.p50_ns),
                    human::millis(s.p99_ns),
                    human::millis(s.p99_9_ns),
                    human::millis(s.max_ns),
                    s.errors().to_string(),
                    s.late.to_string(),
                ]);
            }
        }
        out.push_str(&table.render());
        let mut rows: Vec<(String, String)> = vec![
            ("Operations per second (all connections)".into(), human::fixed(m.per_sec, 1)),
            ("Throughput (KB/s)".into(), human::fixed(c.kib_per_sec, 1)),
        ];
        if let Some(f) = m.fairness {
            let n = (f.connections as f64).max(1.0);
            rows.push(("Fairness: Jain's index (1 = even)".into(), human::fixed(f.jain, 3)));
            rows.push((
                "Fairness: slowest, fastest connection's share".into(),
                format!(
                    "{}%, {}% (even: {}%)",
                    human::fixed(f.min_share * 100.0, 2),
                    human::fixed(f.max_share * 100.0, 2),
                    human::fixed(100.0 / n, 2)
                ),
            ));
        }
        rows.push(("Connections failed".into(), failed(&m)));
        rows.push(("Lost operations (failed connections)".into(), m.lost_ops.to_string()));
        if m.looped.as_deref() == Some("open") {
            rows.push(("Backlog (arrivals never issued)".into(), m.backlog.to_string()));
        }
        if let Some(d) = &m.dbench {
            rows.push(("Throughput as dbench counts it (MB/s)".into(), human::fixed(d.mb_per_s, 2)));
            rows.push(("Status mismatches (the load file's status not met)".into(), d.mismatches.to_string()));
        }
        if m.lock_conflicts > 0 {
            rows.push(("Lock conflicts (range held elsewhere)".into(), m.lock_conflicts.to_string()));
        }
        if m.idle_iterations > 0 {
            rows.push(("Iterations without a file to work on".into(), m.idle_iterations.to_string()));
        }
        let mut figures = Table::new(vec![Column::left("", 48), Column::free("")]).without_header();
        for (label, value) in rows {
            figures.row([label, value]);
        }
        out.push_str(&figures.render());
        for e in m.dbench.iter().flat_map(|d| &d.examples).take(5) {
            let _ = writeln!(out, "  mismatch: {e}");
        }
        for e in StoredConnection::read_all(&c.client_figures)
            .into_iter()
            .filter_map(|f| f.error.and_then(|e| e.message))
            .take(3)
        {
            let _ = writeln!(out, "  e.g. {e}");
        }
    }
    out + &iomatrix_report::text::clients::table(
        &connections::connections_as_clients(run),
        &connections::CLIENT_COLUMNS,
    )
}

/// "2 (ENOENT 1, ETIMEDOUT 1)": the connections that stopped, by what stopped them.
fn failed(m: &StoredCellFigures) -> String {
    let n = m.connections_failed;
    match &m.errors {
        Some(e) if n > 0 => {
            format!("{n} ({})", e.iter().map(|(k, v)| format!("{k} {}", v.0)).collect::<Vec<_>>().join(", "))
        }
        _ => n.to_string(),
    }
}
