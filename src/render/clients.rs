//! Runs with more than one client: per cell, the aggregates side by side
//! (IOzone's two, and stonewalled where the suite has it), the slowest
//! client and the clients that failed.

use iomatrix_store::{CellRow, StoredRun};
use std::fmt::Write;

/// How a suite names its cells and where its per-client rate is.
pub struct ClientColumns {
    pub unit: &'static str,
    pub describe: fn(&CellRow) -> String,
    /// (sum of the clients' own rates, all work over the common wall, stonewalled if any)
    pub aggregates: fn(&CellRow) -> (f64, f64, Option<f64>),
    /// A client's rate from its stored figures.
    pub client_rate: fn(&serde_json::Value) -> Option<f64>,
}

/// Empty when every cell had a single client.
pub fn table(run: &StoredRun, columns: &ClientColumns) -> String {
    if run.cell_results.iter().all(|c| c.clients < 2 && failed(c) == 0) {
        return String::new();
    }
    let mut out = format!(
        "\nClients ({}): sum = the clients' own rates added (IOzone's \"children see\"), overall = all work over \
         the time from the common start to the last finish (\"parent sees\"), stonewalled = work done when the \
         first client finished, over that time\n",
        columns.unit
    );
    let _ = writeln!(
        out,
        "{:<32} {:>7} {:>12} {:>12} {:>12}  {:<22} {:>6}",
        "cell", "clients", "sum", "overall", "stonewalled", "slowest client", "failed"
    );
    for c in &run.cell_results {
        let (sum, overall, stonewalled) = (columns.aggregates)(c);
        let slowest = c
            .client_figures
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| Some((f["rank"].as_u64()?, (columns.client_rate)(f)?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(rank, rate)| format!("#{rank} at {rate:.0}"))
            .unwrap_or_else(|| "-".into());
        let _ = writeln!(
            out,
            "{:<32} {:>7} {:>12.0} {:>12.0} {:>12}  {:<22} {:>6}",
            (columns.describe)(c),
            c.clients,
            sum,
            overall,
            stonewalled.map(|s| format!("{s:.0}")).unwrap_or_else(|| "-".into()),
            slowest,
            failed(c)
        );
    }
    for c in &run.cell_results {
        for f in c.metrics["failed_clients"].as_array().into_iter().flatten() {
            let _ = writeln!(
                out,
                "{}: client {} failed: {}",
                (columns.describe)(c),
                f["rank"],
                f["message"].as_str().unwrap_or("?")
            );
        }
    }
    out
}

fn failed(c: &CellRow) -> usize {
    c.metrics["failed_clients"].as_array().map_or(0, Vec::len)
}
