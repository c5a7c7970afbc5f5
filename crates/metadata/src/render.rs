//! A stored metadata run's tables: a row per phase of each iteration with both of mdtest's
//! rates, the latency percentiles and the failures; the stonewall when it fired.

use crate::result::PhaseResult;
use iomatrix_core::human;
use iomatrix_report::table::{Column, Table};
use iomatrix_store::StoredRun;

/// The phase table and the stonewall lines.
pub fn report(run: &StoredRun) -> String {
    let phases = crate::stored::phase_results(run);
    if phases.is_empty() {
        return String::new();
    }
    let mut table = Table::new(vec![
        Column::left("phase", 16),
        Column::right("items", 10),
        Column::right("ops/s (IO500)", 14),
        Column::right("ops/s (SUMMARY)", 15),
        Column::right("mean", 9),
        Column::right("p50", 9),
        Column::right("p99", 9),
        Column::right("p99.9", 9),
        Column::right("max", 9),
        Column::left("failures", 20),
    ]);
    let mut walls = String::new();
    for p in &phases {
        table.row(row(p));
        if let Some(w) = &p.stonewall {
            walls += &format!(
                "\nStonewall in {}: fired at {}; every client went on to {} items (the largest count any \
                 reached); {} ops/s at the stonewall",
                crate::merge::cell_name(p.phase, p.iteration),
                human::nanos(w.seconds * 1e9),
                w.count_reached,
                human::significant(w.rate_at_stonewall)
            );
        }
    }
    format!(
        "\nMetadata phases (ops/s (IO500): every client's items over the slowest client's time; ops/s (SUMMARY): \
         the fewest items of a client over that time, times the clients, as mdtest's SUMMARY table; latency per \
         operation, merged over the clients)\n{}{walls}\n",
        table.render()
    )
}

fn row(p: &PhaseResult) -> Vec<String> {
    let t = |s: f64| human::nanos(s * 1e9);
    let dash = || "-".to_string();
    let (mean, p50, p99, p999, max) = p.latency.map_or_else(
        || (dash(), dash(), dash(), dash(), dash()),
        |l| (t(l.mean), t(l.p50), t(l.p99), t(l.p999), t(l.max)),
    );
    let failures = if p.failures.is_empty() {
        "none".to_string()
    } else {
        p.failures.iter().map(|(k, n)| format!("{k} x{n}")).collect::<Vec<_>>().join(", ")
    };
    vec![
        crate::merge::cell_name(p.phase, p.iteration),
        p.items.to_string(),
        human::significant(p.rate_all_over_slowest),
        human::significant(p.rate_slowest_times_clients),
        mean,
        p50,
        p99,
        p999,
        max,
        failures,
    ]
}
