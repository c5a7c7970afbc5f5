//! A stored metadata run's tables: a row per phase of each iteration with both of mdtest's
//! rates, the latency percentiles and the failures; the stonewall when it fired; open loop's
//! offered load, late items and backlog; a table per phase's curve (`--curve`).

use crate::plan::Phase;
use crate::result::PhaseResult;
use iomatrix_core::human;
use iomatrix_harness::curve::ShownPoint;
use iomatrix_report::table::{Column, Table};
use iomatrix_store::StoredRun;

/// The phase table and the stonewall lines.
pub fn report(run: &StoredRun) -> String {
    let phases = crate::stored::phase_results(run);
    if phases.is_empty() {
        return String::new();
    }
    let mut table = Table::new(vec![
        Column::left("phase", 20),
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
                crate::merge::named(p.phase, p.iteration, p.load),
                human::nanos(w.seconds * 1e9),
                w.count_reached,
                human::significant(w.rate_at_stonewall)
            );
        }
    }
    format!(
        "\nMetadata phases (ops/s (IO500): every client's items over the slowest client's time; ops/s (SUMMARY): \
         the fewest items of a client over that time, times the clients, as mdtest's SUMMARY table; latency per \
         operation, merged over the clients)\n{}{walls}\n{}{}{}",
        table.render(),
        open_loop(&phases),
        curves(&phases),
        latency_targets(&phases)
    )
}

/// Under `--latency-target`: a line per phase, what its search found (from the round measured
/// at the level found), after the levels it judged.
fn latency_targets(phases: &[PhaseResult]) -> String {
    let mut out = String::new();
    for p in phases {
        let Some(found) = p.latency_target.as_ref().and_then(|t| t.found.as_ref().map(|f| (t, f))) else { continue };
        let (round, found) = found;
        let judged: Vec<String> = phases
            .iter()
            .filter(|q| q.phase == p.phase && q.iteration > 0 && q.iteration < p.iteration)
            .filter_map(|q| q.latency_target.as_ref())
            .map(|t| format!("{}/20 {}", t.level, if t.met { "met" } else { "failed" }))
            .collect();
        let this = if round.met { "meets it" } else { "is past it" };
        out += &format!(
            "latency target, {}: {}: {} (this round's own figure {} {this}); levels judged: {}\n",
            p.phase.name(),
            round.target,
            found.said,
            human::nanos(round.at_percentile_ns as f64),
            judged.join(", ")
        );
    }
    if out.is_empty() {
        out
    } else {
        format!("\n{out}")
    }
}

/// The open-loop phases (`--rate`, a curve's points after its maximum): offered and achieved.
fn open_loop(phases: &[PhaseResult]) -> String {
    let open: Vec<&PhaseResult> = phases.iter().filter(|p| p.open.is_some() && p.curve.is_none()).collect();
    let Some(first) = open.first().and_then(|p| p.open) else { return String::new() };
    let mut table = Table::new(vec![
        Column::left("phase", 20),
        Column::right("offered/s", 10),
        Column::right("ops/s (IO500)", 14),
        Column::right("late", 8),
        Column::right("backlog", 8),
    ]);
    for p in open {
        let o = p.open.unwrap_or(first);
        table.row(vec![
            crate::merge::named(p.phase, p.iteration, p.load),
            human::significant(o.offered_per_sec),
            human::significant(p.rate_all_over_slowest),
            o.late.to_string(),
            o.backlog.to_string(),
        ]);
    }
    format!(
        "\nOpen loop (arrivals {}; latency from each item's intended start; late: issued more than 1 ms after it; \
         backlog: unissued 1 ms after the last arrival)\n{}",
        first.arrival.name(),
        table.render()
    )
}

/// A table per phase's curve (`--curve`): its points, the maximum first, and the curve's
/// figures from its last stored point.
fn curves(phases: &[PhaseResult]) -> String {
    let mut order: Vec<Phase> = phases.iter().filter(|p| p.curve.is_some()).map(|p| p.phase).collect();
    order.sort();
    order.dedup();
    let mut out = String::new();
    for phase in order {
        let points: Vec<&PhaseResult> = phases.iter().filter(|p| p.phase == phase && p.curve.is_some()).collect();
        out.push_str(&curve_table(phase, &points));
    }
    out
}

/// A phase's curve through the table every suite's `show` prints ([`iomatrix_harness::curve::text`]).
fn curve_table(phase: Phase, points: &[&PhaseResult]) -> String {
    let Some(last) = points.last().and_then(|p| p.curve.as_ref()) else { return String::new() };
    let heading = format!(
        "curve {}: maximum {} ops/s (closed loop, latency from issue; the points after it are open loop, latency \
         from each item's intended start)",
        phase.name(),
        human::fixed(last.max_iops, 0)
    );
    let shown: Vec<ShownPoint> = points
        .iter()
        .map(|p| ShownPoint {
            load: p.load,
            offered_per_sec: p.open.map(|o| o.offered_per_sec),
            achieved: human::fixed(p.rate_all_over_slowest, 0),
            cpu_percent: None,
            late: p.open.map(|o| o.late),
            backlog: p.open.map(|o| o.backlog),
            figures: p.curve.clone().unwrap_or_default(),
        })
        .collect();
    iomatrix_harness::curve::text(&heading, "ops/s", &shown)
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
    let name = match p.load {
        Some(_) => crate::merge::test_name(p),
        None => crate::merge::cell_name(p.phase, p.iteration),
    };
    vec![
        name,
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
