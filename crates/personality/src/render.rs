//! Personality runs as tables: per phase, each operation's count, rate,
//! bytes and latency percentiles (open loop: from the intended start), the
//! connections' fairness, and what failed or was lost; then the clients table.

use crate::figures::{StoredCellFigures, StoredConnection, StoredOpFigures};
use crate::OpKind;
use iomatrix_core::human;
use iomatrix_report::table::{Column, Table};
use iomatrix_report::text::connections;
use iomatrix_store::{CellRow, StoredRun};
use std::fmt::Write;

/// A stored personality (or dbench replay) run: per cell its rates, operations with their
/// latencies, fairness, failures and the connections table.
pub fn report(run: &StoredRun) -> String {
    let mut out = String::new();
    let c0 = &run.records().conditions;
    for c in &run.cell_results {
        let m = StoredCellFigures::read(&c.metrics);
        let looped = match (m.looped.as_deref(), m.target_rate_per_connection) {
            (Some("open"), Some(_)) if m.load.is_some() || m.latency_target.is_some() => format!(
                "open loop at {} ops/s offered, all connections ({}; latency from the intended start)",
                human::fixed(m.offered_per_sec.unwrap_or(0.0), 0),
                if m.load.is_some() { "a curve's point" } else { "the rate its latency target's search found" }
            ),
            (Some("open"), Some(rate)) => {
                format!("open loop at {rate} ops/s per connection (latency from the intended start)")
            }
            (Some("replay"), _) => "a dbench load file replayed".to_string(),
            _ => "closed loop".to_string(),
        };
        let _ = writeln!(
            out,
            "\n{} phase of {}{}: {} connections, {}, {} records, backend {}{}; {} operations, {} in {} s",
            // A curve's point is its phase at a load: its name says both.
            if m.load.is_some() { &c.test } else { m.phase.as_deref().unwrap_or(&c.test) },
            m.personality.as_deref().unwrap_or("?"),
            c.state.heading_mark().map(|mark| format!(" [{mark}]")).unwrap_or_default(),
            c.clients,
            looped,
            iomatrix_core::ByteSize(c.record_size.unwrap_or(0)),
            c.backend,
            if c0["remote"].is_object() { " (server)" } else { "" },
            c.ops,
            human::bytes(c.bytes),
            human::fixed(c.wall_ns as f64 / 1e9, 3)
        );
        if let Some(found) = &m.latency_target {
            let _ = writeln!(out, "latency target: {}: {}", found.target.describe(), found.describe());
        }
        out.push_str(&ops_table(&m));
        let rows = figure_rows(c, &m);
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
    out.push_str(&curves(run));
    out + &iomatrix_report::text::clients::table(
        &connections::connections_as_clients(run),
        &connections::CLIENT_COLUMNS,
    )
}

/// In the order a file is used (the personality's operations), then by name.
fn op_rank(n: &str) -> usize {
    OpKind::ALL.iter().position(|k| k.name() == n).unwrap_or(OpKind::ALL.len())
}

/// A phase's operations: count, rate, MiB, latency, errors and late starts of each.
fn ops_table(m: &StoredCellFigures) -> String {
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
        let mut ops: Vec<(&String, &StoredOpFigures)> = ops.iter().collect();
        ops.sort_by_key(|(n, _)| (op_rank(n), (*n).clone()));
        for (name, s) in ops {
            table.row([
                name.clone(),
                s.count.to_string(),
                human::significant(s.per_sec),
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
    table.render()
}

/// A phase's figures beside its operations' table, as (label, value) rows.
fn figure_rows(c: &CellRow, m: &StoredCellFigures) -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = vec![
        ("Operations per second (all connections)".into(), human::fixed(m.per_sec, 1)),
        ("Throughput (KB/s)".into(), human::fixed(c.kib_per_sec, 1)),
    ];
    if let (Some(n), Some(rate)) = (m.flowops, m.flowops_per_sec) {
        // filebench's IO Summary counts one op per flowop executed (a whole-file read is one).
        rows.push(("Flow steps, as filebench counts ops".into(), n.to_string()));
        rows.push(("Flow steps per second (filebench's ops/s)".into(), human::fixed(rate, 1)));
        let mut ops: Vec<(&String, &StoredOpFigures)> = m.ops.iter().flatten().collect();
        ops.sort_by_key(|(n, _)| (op_rank(n), (*n).clone()));
        for (name, s) in ops {
            let (Some(steps), Some(mean)) = (s.flowops, s.flowop_mean_ns) else { continue };
            if steps != s.count {
                rows.push((
                    format!("{name}: flow steps (requests), mean ms per step"),
                    format!("{steps} ({}), {}", s.count, human::millis(mean)),
                ));
            }
        }
    }
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
    rows.push(("Connections failed".into(), failed(m)));
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
    rows
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

/// Each phase's throughput-latency curve (`--curve`) as a table of its points, with its figures
/// under it: the maximum within the bound and SPEC SFS 2014's overall response time.
fn curves(run: &StoredRun) -> String {
    let points: Vec<(&CellRow, StoredCellFigures)> = run
        .cell_results
        .iter()
        .map(|c| (c, StoredCellFigures::read(&c.metrics)))
        .filter(|(_, f)| f.curve.is_some())
        .collect();
    let mut out = String::new();
    // A curve starts at its maximum.
    for curve in points.chunk_by(|_, (_, next)| next.load != Some(iomatrix_core::CurveLoad::Max)) {
        out.push_str(&curve_table(curve));
    }
    out
}

/// One phase's curve: its points (its maximum first) and its figures, from its last stored point,
/// through the table every suite's curves share.
fn curve_table(points: &[(&CellRow, StoredCellFigures)]) -> String {
    let Some((_, first)) = points.first() else { return String::new() };
    let Some(last) = points.last().and_then(|(_, f)| f.curve.clone()) else { return String::new() };
    let shown: Vec<iomatrix_harness::curve::ShownPoint> = points
        .iter()
        .map(|(c, f)| {
            let open = f.offered_per_sec.is_some();
            let late: u64 = f.ops.iter().flatten().map(|(_, o)| o.late).sum();
            iomatrix_harness::curve::ShownPoint {
                load: f.load,
                offered_per_sec: f.offered_per_sec,
                achieved: iomatrix_report::document::marked(c.state.kind, || human::fixed(f.per_sec, 0)),
                cpu_percent: c.cpu_percent,
                late: open.then_some(late),
                backlog: open.then_some(f.backlog),
                figures: f.curve.clone().unwrap_or_default(),
            }
        })
        .collect();
    let heading = format!(
        "curve of the {} phase: maximum {} ops/s (closed loop, latency from issue; the points after it are open \
         loop, Poisson arrivals, latency from each operation's intended start; every timed operation counts)",
        first.phase.as_deref().unwrap_or("?"),
        human::fixed(last.max_iops, 0)
    );
    iomatrix_harness::curve::text(&heading, "ops/s", &shown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_store::{CellRow, RunStatus, RunSummary};
    use serde_json::json;

    /// Every branch of the phase text: an open loop with a backlog, lock conflicts, idle
    /// iterations and failed connections (with their errors), and a dbench replay with its
    /// mismatches; the expected text is what the string-keyed reader printed for the same run, its
    /// figures since written by the one digits rule (`human::significant`: 0.0250, 1.60).
    fn every_branch() -> StoredRun {
        let open = CellRow {
            record_size: Some(8192),
            clients: 2,
            bytes: 3 << 20,
            ops: 7,
            wall_ns: 2_500_000_000,
            kib_per_sec: 1228.8,
            metrics: json!({
                "phase": "run", "personality": "oltp", "loop": "open", "target_rate_per_connection": 50.0,
                "ops": {
                    "zz_custom": {"count": 1, "bytes": 0, "per_sec": 0.4, "errors": {}, "late": 0, "mean_ns": 0},
                    "read": {"count": 4, "bytes": 2097152, "per_sec": 1.6, "errors": {"EIO": 1, "ENOENT": 2},
                             "late": 3, "mean_ns": 1500000.5, "p50_ns": 1000000, "p99_ns": 3000000,
                             "p99_9_ns": 3000000, "max_ns": 4000000},
                    "create": {"count": 2, "bytes": 1048576, "per_sec": 0.8, "errors": {}, "late": 0,
                               "mean_ns": 25000, "p50_ns": 20000, "p99_ns": 40000, "p99_9_ns": 40000, "max_ns": 41000}
                },
                "per_sec": 2.8, "fairness": {"connections": 2, "min_share": 0.25, "max_share": 0.75, "jain": 0.8},
                "lost_ops": 5, "backlog": 9, "idle_iterations": 4, "lock_conflicts": 6,
                "connections_failed": 2, "errors": {"EIO": 1, "ENOSPC": 1},
            }),
            client_figures: json!([
                {"rank": 0, "error": {"message": "ENOSPC writing oltp/f1"}},
                {"rank": 1},
                {"rank": 2, "error": {"message": "EIO reading oltp/f2"}}
            ]),
            ..CellRow::blank("run", "psync")
        };
        let replay = CellRow {
            seq: 1,
            record_size: Some(65536),
            ops: 3,
            wall_ns: 1_000_000_000,
            metrics: json!({
                "phase": "replay", "personality": "dbench client.txt", "loop": "replay",
                "ops": {"QUERY_PATH_INFORMATION": {"count": 3, "per_sec": 3.0, "mean_ns": 70000}},
                "per_sec": 3.0, "lost_ops": 0, "connections_failed": 0,
                "dbench": {"mb_per_s": 0.5, "mismatches": 7,
                           "examples": ["line 1 Close expected NT_STATUS_OK got ENOENT", 3, "a", "b", "c", "d", "e"]},
            }),
            ..CellRow::blank("replay", "psync")
        };
        StoredRun::new(
            RunSummary {
                id: 1,
                suite: "personality".into(),
                status: RunStatus::Complete,
                started_at: String::new(),
                ended_at: None,
                host: "h".into(),
                command_line: String::new(),
                labels: Vec::new(),
                cells: 2,
                total_cells: 2,
                disturbed_cells: 0,
                error: None,
                iomatrix_version: String::new(),
                pid: 0,
                pid_start: None,
            },
            json!({}),
            json!({}),
            json!({"remote": {"host": "s"}}),
            vec![open, replay],
        )
    }

    #[test]
    fn every_branch_of_the_phase_text_reads_through_the_typed_figures() {
        let shown = report(&every_branch());
        assert_eq!(shown, EXPECTED, "{shown}");
    }

    const EXPECTED: &str = r"
run phase of oltp: 2 connections, open loop at 50 ops/s per connection (latency from the intended start), 8k records, backend psync (server); 7 operations, 3.0 MiB in 2.500 s
operation       count      ops/s        MiB   mean ms       p50       p99     p99.9       max  errors    late
create              2      0.800        1.0    0.0250    0.0200    0.0400    0.0400    0.0410       0       0
read                4       1.60        2.0      1.50      1.00      3.00      3.00      4.00       3       3
zz_custom           1      0.400        0.0         -         -         -         -         -       0       0
Operations per second (all connections)          2.8
Throughput (KB/s)                                1228.8
Fairness: Jain's index (1 = even)                0.800
Fairness: slowest, fastest connection's share    25.00%, 75.00% (even: 50.00%)
Connections failed                               2 (EIO 1, ENOSPC 1)
Lost operations (failed connections)             5
Backlog (arrivals never issued)                  9
Lock conflicts (range held elsewhere)            6
Iterations without a file to work on             4
  e.g. ENOSPC writing oltp/f1
  e.g. EIO reading oltp/f2

replay phase of dbench client.txt: 1 connections, a dbench load file replayed, 64k records, backend psync (server); 3 operations, 0 B in 1.000 s
operation                   count      ops/s        MiB   mean ms       p50       p99     p99.9       max  errors    late
QUERY_PATH_INFORMATION          3       3.00        0.0    0.0700         -         -         -         -       0       0
Operations per second (all connections)          3.0
Throughput (KB/s)                                0.0
Connections failed                               0
Lost operations (failed connections)             0
Throughput as dbench counts it (MB/s)            0.50
Status mismatches (the load file's status not met) 7
  mismatch: line 1 Close expected NT_STATUS_OK got ENOENT
  mismatch: a
  mismatch: b
  mismatch: c
  mismatch: d
";
}
