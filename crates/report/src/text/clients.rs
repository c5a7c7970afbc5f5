//! Runs with more than one client: per cell, the aggregates side by side
//! (IOzone's two, and stonewalled where the suite has it), the slowest
//! client and the clients that failed; with MPI ranks on several hosts
//! (`environment.client_hosts`), the same per host, and the straggler host.

use crate::document::{marked, HostFigures, HostRow, Straggler, MARKS_LEGEND};
use crate::table::{Column, Table};
use iomatrix_core::human;
use iomatrix_store::reader::client_rank;
use iomatrix_store::{CellRow, StoredRun};
use std::fmt::Write;

/// How a suite names its cells and where its per-client rate is.
pub struct ClientColumns {
    /// The unit of the clients' rates, e.g. "KB/s".
    pub unit: &'static str,
    /// A cell's name in the table, as its suite describes it.
    pub describe: fn(&CellRow) -> String,
    /// (sum of the clients' own rates, all work over the common wall, stonewalled if any)
    pub aggregates: fn(&CellRow) -> (f64, f64, Option<f64>),
    /// A client's rate from its stored figures.
    pub client_rate: fn(&serde_json::Value) -> Option<f64>,
    /// KB/s in one of `client_rate`'s units, where a cell's figure is KB/s
    /// (a host's cell, `RUN@HOST`, is its clients' rates summed).
    pub kib_per_unit: f64,
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
    let mut table = Table::new(vec![
        Column::left("cell", 32),
        Column::right("clients", 7),
        Column::right("sum", 12),
        Column::right("overall", 12),
        Column::right("stonewalled", 12),
        Column::left("slowest client", 22).gap("  "),
        Column::right("failed", 6),
    ]);
    for c in &run.cell_results {
        let (sum, overall, stonewalled) = (columns.aggregates)(c);
        let slowest = c
            .client_figures
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| Some((client_rank(f)?, (columns.client_rate)(f)?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(rank, rate)| format!("#{rank} at {}", human::fixed(rate, 0)))
            .unwrap_or_else(|| "-".into());
        // A partial cell's aggregates are of the clients that finished (marked); a failed one has none.
        let figure = |v: f64| marked(c.state.kind, || human::fixed(v, 0));
        table.row([
            (columns.describe)(c),
            c.clients.to_string(),
            figure(sum),
            figure(overall),
            stonewalled.map(figure).unwrap_or_else(|| "-".into()),
            slowest,
            failed(c).to_string(),
        ]);
    }
    out.push_str(&table.render());
    if run.cell_results.iter().any(|c| !c.state.is_complete()) {
        let _ = writeln!(out, "{MARKS_LEGEND}");
    }
    out.push_str(&by_host(run, columns));
    for c in &run.cell_results {
        for f in c.figures().failed_clients {
            let _ = writeln!(
                out,
                "{}: client {} failed: {}",
                (columns.describe)(c),
                f.rank,
                f.message.as_deref().unwrap_or("?")
            );
        }
    }
    out
}

fn failed(c: &CellRow) -> usize {
    c.figures().failed_clients.len()
}

/// A host lies this far below the median host, over the run's cells, to be named the straggler.
const STRAGGLER_FACTOR: f64 = 2.0;

/// The host figures as text: a row per cell and host, then the stragglers.
/// Empty unless the clients ran on two hosts or more.
fn by_host(run: &StoredRun, columns: &ClientColumns) -> String {
    let Some(figures) = host_figures(run, columns) else { return String::new() };
    let mut out = format!("\nHosts ({}): each host's clients summed, its slowest and fastest client\n", columns.unit);
    let mut table = Table::new(vec![
        Column::left("cell", 32),
        Column::left("host", 32),
        Column::right("clients", 7),
        Column::right("sum", 12),
        Column::right("slowest", 12),
        Column::right("fastest", 12),
    ]);
    let rate = |v: Option<f64>| v.map(|v| human::fixed(v, 0)).unwrap_or_else(|| "-".into());
    for r in &figures.rows {
        table.row([
            r.cell.clone(),
            r.host.clone(),
            r.clients.to_string(),
            rate(r.sum),
            rate(r.slowest),
            rate(r.fastest),
        ]);
    }
    out.push_str(&table.render());
    for s in &figures.stragglers {
        let _ = writeln!(out, "{}", s.sentence());
    }
    out
}

/// Per cell and host: the host's clients summed, its slowest and fastest
/// client; then a host whose sums sit far below the median host's (the
/// geometric mean of its ratios over the cells). None unless the clients
/// ran on two hosts or more. `show` and the report read the same figures.
pub fn host_figures(run: &StoredRun, columns: &ClientColumns) -> Option<HostFigures> {
    let ranks = run.environment_facts().client_hosts?;
    let host_of = |rank: u64| {
        ranks
            .iter()
            .find(|h| h.rank.whole() == Some(rank))
            .map(|h| (h.host.text().unwrap_or("?").to_string(), h.address.text().unwrap_or("").to_string()))
    };
    let mut hosts: Vec<(String, String)> = Vec::new();
    for h in ranks.iter().filter_map(|h| host_of(h.rank.whole()?)) {
        if !hosts.contains(&h) {
            hosts.push(h);
        }
    }
    if hosts.len() < 2 {
        return None;
    }
    let labels: Vec<String> = hosts.iter().map(|(name, address)| host_label(name, address)).collect();
    let mut rows = Vec::new();
    // Per host, its ratio to the median host in each cell where both have figures.
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); hosts.len()];
    for c in &run.cell_results {
        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); hosts.len()];
        for f in c.client_figures.as_array().into_iter().flatten() {
            let (Some(rank), Some(rate)) = (client_rank(f), (columns.client_rate)(f)) else { continue };
            if let Some(i) = host_of(rank).and_then(|h| hosts.iter().position(|k| *k == h)) {
                rates[i].push(rate);
            }
        }
        let sums: Vec<f64> = rates.iter().map(|r| r.iter().sum()).collect();
        for (i, label) in labels.iter().enumerate() {
            let r = &rates[i];
            let (slow, fast) = r.iter().fold((f64::MAX, 0f64), |(s, f), x| (s.min(*x), f.max(*x)));
            let present = !r.is_empty();
            rows.push(HostRow {
                cell: (columns.describe)(c),
                host: label.clone(),
                clients: r.len(),
                sum: present.then_some(sums[i]),
                slowest: present.then_some(slow),
                fastest: present.then_some(fast),
            });
        }
        let mut present: Vec<f64> = sums.iter().zip(&rates).filter(|(_, r)| !r.is_empty()).map(|(s, _)| *s).collect();
        if present.len() >= 2 {
            present.sort_by(f64::total_cmp);
            let mid = present.len() / 2;
            let median =
                if present.len() % 2 == 1 { present[mid] } else { f64::midpoint(present[mid - 1], present[mid]) };
            if median > 0.0 {
                for (i, r) in rates.iter().enumerate() {
                    if !r.is_empty() && sums[i] > 0.0 {
                        ratios[i].push(sums[i] / median);
                    }
                }
            }
        }
    }
    let mut stragglers = Vec::new();
    for (i, label) in labels.iter().enumerate() {
        if ratios[i].is_empty() {
            continue;
        }
        let ratio = (ratios[i].iter().map(|r| r.ln()).sum::<f64>() / ratios[i].len() as f64).exp();
        // Only the slow side: a host far ahead of the median (the others slowed by a shared CPU) holds no one up.
        if ratio < 1.0 / STRAGGLER_FACTOR {
            stragglers.push(Straggler { host: label.clone(), ratio, cells: ratios[i].len() });
        }
    }
    Some(HostFigures { run: run.summary.id, unit: columns.unit.to_string(), hosts: labels, rows, stragglers })
}

fn host_label(name: &str, address: &str) -> String {
    if address.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({address})")
    }
}

/// The run as host `host` (a name or an address in `environment.client_hosts`)
/// alone saw it, for comparing the hosts of one run (`compare 12@a 12@b`):
/// each cell keeps only that host's clients and its figure becomes their
/// own rates summed (the report's and `show`'s per-host "sum"). What cannot be
/// split by host (latency histograms, the overall and stonewalled rates,
/// extents) is left out rather than shown as the whole run's. `view` is the
/// run as [`ClientColumns`] reads it (the same cells, in the same order).
pub fn on_host(run: &StoredRun, view: &StoredRun, columns: &ClientColumns, host: &str) -> Result<StoredRun, String> {
    let Some(ranks) = run.environment_facts().client_hosts else {
        return Err(format!(
            "run #{} stored no client hosts (its clients were not MPI ranks); give the run without @HOST",
            run.summary.id
        ));
    };
    let on: Vec<u64> = ranks
        .iter()
        .filter(|h| h.host.text() == Some(host) || h.address.text() == Some(host))
        .filter_map(|h| h.rank.whole())
        .collect();
    if on.is_empty() {
        let mut known: Vec<String> =
            ranks.iter().map(|h| host_label(h.host.text().unwrap_or("?"), h.address.text().unwrap_or(""))).collect();
        known.dedup();
        return Err(format!(
            "run #{} has no client on host '{host}'; its hosts (name or address): {}",
            run.summary.id,
            known.join(", ")
        ));
    }
    let mine = |f: &serde_json::Value| client_rank(f).is_some_and(|r| on.contains(&r));
    let mut most = 0;
    let cells = run
        .cell_results
        .iter()
        .zip(&view.cell_results)
        .map(|(c, v)| {
            let rates: Vec<f64> = v
                .client_figures
                .as_array()
                .into_iter()
                .flatten()
                .filter(|f| mine(f))
                .filter_map(columns.client_rate)
                .collect();
            most = most.max(rates.len());
            let sum: f64 = rates.iter().sum();
            // Only what names the cell, and a bonnie cell's per-second figure, stay.
            let metrics = c.figures().naming(sum);
            let figures: Vec<serde_json::Value> =
                c.client_figures.as_array().into_iter().flatten().filter(|f| mine(f)).cloned().collect();
            CellRow {
                clients: rates.len(),
                kib_per_sec: if c.kib_per_sec > 0.0 { sum * columns.kib_per_unit } else { 0.0 },
                metrics,
                client_figures: figures.into(),
                blobs: Vec::new(),
                ..c.clone()
            }
        })
        .collect();
    let mut view = run.with_cells(cells).with_clients(most);
    view.summary.host = host.to_string();
    Ok(view)
}
