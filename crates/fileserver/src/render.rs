//! File-server runs as seed 003 tabulates them: per phase, the average
//! response time of each operation type (with p50, p99 and max beside it),
//! the average throughput a connection saw, the total throughput, the
//! completion time, and what failed.

use crate::figures::{ConnectionRecord, FileserverCellFigures};
use crate::{Op, Planned};
use iomatrix_core::figures::or_default;
use iomatrix_core::human;
use iomatrix_report::table::{Column, Table};
use iomatrix_report::text::connections;
use iomatrix_store::StoredRun;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::fmt::Write;

/// The width of the label column the phase's tables share.
const LABEL_WIDTH: usize = 46;

/// A stored file-server run: per phase its rates, completion time, operation latencies,
/// failures and the connections table.
pub fn report(run: &StoredRun) -> String {
    let mut out = String::new();
    let plan = StoredPlan::read(run.records().plan);
    let on_server = RunConditions::read(run.records().conditions).remote.is_some();
    for c in &run.cell_results {
        let m = FileserverCellFigures::read(&c.metrics);
        let phase = m.phase.as_deref().unwrap_or(&c.test);
        let title = match phase {
            "write" => "Write test".to_string(),
            "read" => "Read test".to_string(),
            "mix" => {
                format!("Mixed test ({}% of visits read, the rest rewrite)", m.read_percent.unwrap_or(0))
            }
            other => format!("{other} test"),
        };
        // A phase some connections did not finish is marked where its figures are.
        let title = match c.state.heading_mark() {
            None => title,
            Some(mark) => format!("{title} [{mark}]"),
        };
        let mut how = String::new();
        if let (Some(n), "write") = (plan.interleave, phase) {
            how.push_str(&format!(", {n} files written at once"));
        }
        if let (Some(n), "write" | "mix") = (plan.fsync_every, phase) {
            how.push_str(&format!(", fsync every {n} records"));
        }
        let from = match m.clients.len() {
            n if n > 1 => format!(" from {n} clients"),
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "\n{title}: {} connections{from} x {} files, {} records{how}; {} files, {}{}",
            // A phase every client failed has no connection's figures: its plan's connections.
            if c.clients == 0 { c.state.of as usize } else { c.clients },
            plan.files_per_connection,
            iomatrix_core::ByteSize(c.record_size.unwrap_or(0)),
            m.done.files,
            human::bytes(c.bytes),
            if m.caches_dropped { "; page cache dropped before it" } else { "" }
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
            let Some(s) = m.ops.get(&op) else {
                continue;
            };
            ops.row([
                format!("Avg {} response time (ms)", capitalised(op.name())),
                s.count.to_string(),
                human::millis(s.mean_ns),
                ms(s.p50_ns),
                ms(s.p99_ns),
                ms(s.max_ns),
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
            human::fixed(m.avg_connection_kib_per_sec, 2),
        ]);
        figures.row([format!("Total {} throughput (KB/sec)", what.to_lowercase()), human::fixed(c.kib_per_sec, 2)]);
        figures.row(["Time taken for test completion (s)".into(), human::fixed(c.wall_ns as f64 / 1e9, 3)]);
        figures.row(["CPU (% of one core)".into(), c.cpu_percent.map_or("-".into(), |p| human::fixed(p, 0))]);
        figures.row(["Connections".into(), connections(&m)]);
        figures.row(["Errors (connections failed, by kind)".into(), errors(&m)]);
        figures.row(["Lost samples (operations not done)".into(), lost(&m.lost)]);
        if let (true, Some(setup)) = (on_server, m.setup) {
            // On a server: each connection's own session, connected before the first phase.
            figures.row([
                "Sessions connected, untimed (ms avg, max)".into(),
                format!("{}, {}", ms(setup.mean_ns), ms(setup.max_ns)),
            ]);
        }
        out.push_str(&figures.render());
        let connections = ConnectionRecord::read_all(&c.client_figures);
        let failures = connections.iter().filter_map(|f| f.error.as_ref()).map(|e| &e.message);
        for message in failures.filter(|message| !message.is_empty()).take(3) {
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

/// Milliseconds by the one rule of `human::significant`; `-` where there were none.
fn ms(ns: u64) -> String {
    human::millis(ns as f64)
}

fn connections(m: &FileserverCellFigures) -> String {
    let mut s = format!("{} ok, {} failed", m.connections_ok, m.connections_failed);
    if m.connections_skipped > 0 {
        s.push_str(&format!(", {} out since an earlier phase", m.connections_skipped));
    }
    s
}

fn errors(m: &FileserverCellFigures) -> String {
    if m.errors.is_empty() {
        "none".into()
    } else {
        m.errors.iter().map(|(kind, n)| format!("{kind} {n}")).collect::<Vec<_>>().join(", ")
    }
}

fn lost(l: &Planned) -> String {
    let total: u64 = Op::ALL.iter().map(|&op| l.ops.get(op)).sum();
    if total == 0 && l.files == 0 {
        return "0".into();
    }
    let parts: Vec<String> = Op::ALL
        .iter()
        .map(|&op| (op, l.ops.get(op)))
        .filter(|&(_, n)| n > 0)
        .map(|(op, n)| format!("{op} {n}"))
        .collect();
    format!("{total} ({}); {} files, {}", parts.join(", "), l.files, human::bytes(l.bytes))
}

/// What the tables read of a file-server run's stored plan; what an older plan lacks reads as
/// absent or 0.
#[derive(Deserialize, Default)]
#[serde(default)]
struct StoredPlan {
    #[serde(deserialize_with = "or_default")]
    interleave: Option<u64>,
    #[serde(deserialize_with = "or_default")]
    fsync_every: Option<u64>,
    #[serde(deserialize_with = "or_default")]
    files_per_connection: u64,
}

impl StoredPlan {
    fn read(plan: &Value) -> StoredPlan {
        StoredPlan::deserialize(plan).unwrap_or_default()
    }
}

/// What the tables read of a run's conditions: a run against a server names it under `remote`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct RunConditions {
    #[serde(deserialize_with = "or_default")]
    remote: Option<Map<String, Value>>,
}

impl RunConditions {
    fn read(conditions: &Value) -> RunConditions {
        RunConditions::deserialize(conditions).unwrap_or_default()
    }
}
