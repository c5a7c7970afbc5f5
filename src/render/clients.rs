//! Runs with more than one client: per cell, the aggregates side by side
//! (IOzone's two, and stonewalled where the suite has it), the slowest
//! client and the clients that failed; with MPI ranks on several hosts
//! (`environment.client_hosts`), the same per host, and the straggler host.

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
    out.push_str(&by_host(run, columns));
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

/// A host lies this far below the median host, over the run's cells, to be named the straggler.
const STRAGGLER_FACTOR: f64 = 2.0;

/// Per cell and host: the host's clients summed, its slowest and fastest
/// client; then a host whose sums sit far below the median host's (the
/// geometric mean of its ratios over the cells). Empty unless the clients
/// ran on two hosts or more.
fn by_host(run: &StoredRun, columns: &ClientColumns) -> String {
    let Some(ranks) = run.environment["client_hosts"].as_array() else { return String::new() };
    let host_of = |rank: u64| {
        ranks
            .iter()
            .find(|h| h["rank"].as_u64() == Some(rank))
            .map(|h| (h["host"].as_str().unwrap_or("?").to_string(), h["address"].as_str().unwrap_or("").to_string()))
    };
    let mut hosts: Vec<(String, String)> = Vec::new();
    for h in ranks.iter().filter_map(|h| host_of(h["rank"].as_u64()?)) {
        if !hosts.contains(&h) {
            hosts.push(h);
        }
    }
    if hosts.len() < 2 {
        return String::new();
    }
    let mut out = format!("\nHosts ({}): each host's clients summed, its slowest and fastest client\n", columns.unit);
    let _ = writeln!(
        out,
        "{:<32} {:<32} {:>7} {:>12} {:>12} {:>12}",
        "cell", "host", "clients", "sum", "slowest", "fastest"
    );
    // Per host, its ratio to the median host in each cell where both have figures.
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); hosts.len()];
    for c in &run.cell_results {
        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); hosts.len()];
        for f in c.client_figures.as_array().into_iter().flatten() {
            let (Some(rank), Some(rate)) = (f["rank"].as_u64(), (columns.client_rate)(f)) else { continue };
            if let Some(i) = host_of(rank).and_then(|h| hosts.iter().position(|k| *k == h)) {
                rates[i].push(rate);
            }
        }
        let sums: Vec<f64> = rates.iter().map(|r| r.iter().sum()).collect();
        for (i, (name, address)) in hosts.iter().enumerate() {
            let r = &rates[i];
            if r.is_empty() {
                let _ = writeln!(
                    out,
                    "{:<32} {:<32} {:>7} {:>12}",
                    (columns.describe)(c),
                    host_label(name, address),
                    0,
                    "-"
                );
                continue;
            }
            let (slow, fast) = r.iter().fold((f64::MAX, 0f64), |(s, f), x| (s.min(*x), f.max(*x)));
            let _ = writeln!(
                out,
                "{:<32} {:<32} {:>7} {:>12.0} {:>12.0} {:>12.0}",
                (columns.describe)(c),
                host_label(name, address),
                r.len(),
                sums[i],
                slow,
                fast
            );
        }
        let mut present: Vec<f64> = sums.iter().zip(&rates).filter(|(_, r)| !r.is_empty()).map(|(s, _)| *s).collect();
        if present.len() >= 2 {
            present.sort_by(f64::total_cmp);
            let mid = present.len() / 2;
            let median = if present.len() % 2 == 1 { present[mid] } else { (present[mid - 1] + present[mid]) / 2.0 };
            if median > 0.0 {
                for (i, r) in rates.iter().enumerate() {
                    if !r.is_empty() && sums[i] > 0.0 {
                        ratios[i].push(sums[i] / median);
                    }
                }
            }
        }
    }
    for (i, (name, address)) in hosts.iter().enumerate() {
        if ratios[i].is_empty() {
            continue;
        }
        let ratio = (ratios[i].iter().map(|r| r.ln()).sum::<f64>() / ratios[i].len() as f64).exp();
        // Only the slow side: a host far ahead of the median (the others slowed by a shared CPU) holds no one up.
        if ratio < 1.0 / STRAGGLER_FACTOR {
            let _ = writeln!(
                out,
                "straggler host: {} at {ratio:.3}x the median host (geometric mean over {} cell(s))",
                host_label(name, address),
                ratios[i].len()
            );
        }
    }
    out
}

fn host_label(name: &str, address: &str) -> String {
    if address.is_empty() {
        name.to_string()
    } else {
        format!("{name} ({address})")
    }
}
