//! The clients table of a run whose clients each hold many connections: every phase stores its
//! connections' own figures (`clients` in the cell's figures), so the table reads one row per
//! connection, not per client process. Two suites store their phases in this shape; this view is
//! theirs to share, below both.

use iomatrix_core::figures::or_default;
use iomatrix_store::{CellRow, StoredRun};
use serde::Deserialize;
use serde_json::Value;

/// The unit of a connection's rate and of a phase's aggregates.
pub const UNIT: &str = "KB/s";

/// KB/s in one [`UNIT`].
pub const KIB_PER_UNIT: f64 = 1.0;

/// What the clients table reads of a phase's stored figures. A field the cell lacks, or holds in
/// another type, reads as absent, as the string-keyed reads before it did.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PhaseFigures {
    #[serde(deserialize_with = "or_default")]
    phase: Option<String>,
    #[serde(deserialize_with = "or_default")]
    kib_per_sec_sum_of_clients: f64,
    #[serde(deserialize_with = "or_default")]
    total_kib_per_sec: Option<f64>,
    /// Each connection's own figures.
    clients: Value,
}

impl PhaseFigures {
    fn of(cell: &CellRow) -> PhaseFigures {
        PhaseFigures::deserialize(&cell.metrics).unwrap_or_default()
    }
}

/// One connection's rate, as it stored it.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ConnectionRate {
    #[serde(deserialize_with = "or_default")]
    total_kib_per_sec: Option<f64>,
}

/// The run with each phase's per-connection figures as its client figures, and its count of
/// connections as its count of clients.
pub fn connections_as_clients(run: &StoredRun) -> StoredRun {
    let cells = run
        .cell_results
        .iter()
        .map(|c| {
            let connections = PhaseFigures::of(c).clients;
            CellRow {
                clients: connections.as_array().map_or(0, Vec::len),
                client_figures: connections,
                metrics: c.metrics.clone(),
                blobs: Vec::new(),
                ..c.clone()
            }
        })
        .collect();
    run.with_cells(cells)
}

/// A phase's name in the clients table: `write phase`.
pub fn describe(cell: &CellRow) -> String {
    format!("{} phase", PhaseFigures::of(cell).phase.as_deref().unwrap_or(&cell.test))
}

/// (the connections' own rates summed, all work over the common wall, no stonewalled figure)
pub fn aggregates(cell: &CellRow) -> (f64, f64, Option<f64>) {
    let f = PhaseFigures::of(cell);
    (f.kib_per_sec_sum_of_clients, f.total_kib_per_sec.unwrap_or(cell.kib_per_sec), None)
}

/// One connection's rate from its stored figures.
pub fn client_rate(connection: &Value) -> Option<f64> {
    ConnectionRate::deserialize(connection).ok()?.total_kib_per_sec
}

/// The clients table of a load of connections: each connection a client, its rate in KB/s.
pub const CLIENT_COLUMNS: crate::text::clients::ClientColumns =
    crate::text::clients::ClientColumns { unit: UNIT, describe, aggregates, client_rate, kib_per_unit: KIB_PER_UNIT };

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::sample::run;
    use serde_json::json;

    fn phase(metrics: Value) -> CellRow {
        CellRow { kib_per_sec: 7.0, metrics, ..CellRow::blank("write", "psync") }
    }

    #[test]
    fn a_phase_reads_its_connections_as_its_clients() {
        let cell = phase(json!({
            "phase": "mix",
            "kib_per_sec_sum_of_clients": 30.0,
            "total_kib_per_sec": 25,
            "clients": [{"rank": 0, "total_kib_per_sec": 10.0}, {"rank": 1, "total_kib_per_sec": 20}],
        }));
        let by_connection = connections_as_clients(&run(1, "phases", &[], vec![cell]));
        let c = &by_connection.cell_results[0];
        assert_eq!(c.clients, 2);
        assert_eq!(client_rate(&c.client_figures[1]), Some(20.0));
        assert_eq!(describe(c), "mix phase");
        assert_eq!(aggregates(c), (30.0, 25.0, None));
    }

    #[test]
    fn a_phase_without_these_figures_reads_as_absent_not_as_an_error() {
        let c = phase(json!({"phase": 3, "total_kib_per_sec": "fast", "clients": null}));
        assert_eq!(describe(&c), "write phase");
        assert_eq!(aggregates(&c), (0.0, 7.0, None));
        assert_eq!(client_rate(&json!({"total_kib_per_sec": null})), None);
        assert_eq!(client_rate(&json!("not a connection")), None);
        let stored = run(1, "phases", &[], vec![phase(Value::Null)]);
        assert_eq!(connections_as_clients(&stored).cell_results[0].clients, 0);
    }
}
