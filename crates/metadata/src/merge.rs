//! A phase's clients merged at the leader into a [`PhaseResult`], by mdtest's two rules.

use crate::plan::Phase;
use crate::result::{ClientPhase, OpenLoad, PhaseLatency, PhaseResult, StonewallFired};
use crate::runner::ClientFigures;
use iomatrix_coord::{ClientFailure, Gathered, StartTimes};
use iomatrix_core::CurveLoad;
use iomatrix_stats::{Latency, Series};

/// One finished phase of one iteration, merged over the clients.
#[derive(Debug, Clone)]
pub struct MetadataCell {
    /// The cell's name ("file-create", "file-create #2").
    pub name: String,
    /// What the clients measured, merged.
    pub result: PhaseResult,
    /// Items the plan asked of every client (the failed clients' included).
    pub planned: u64,
    /// Clients that failed the phase (`--on-client-error continue`).
    pub failures: Vec<ClientFailure>,
    /// Every client's barrier times.
    pub starts: Vec<StartTimes>,
    /// Clients in the run.
    pub clients: usize,
    /// Its items over time, merged over the clients; None where no client recorded any.
    pub series: Option<Series>,
    /// Every item's latency, merged (a curve's bound judges it).
    pub latency: Latency,
    /// Every client left the phase out (the rest of a curve its bound ended): not stored.
    pub left_out: bool,
}

/// The cell's name: the phase's, with ` #i` (1-based) after the first iteration.
pub fn cell_name(phase: Phase, iteration: u32) -> String {
    match iteration {
        0 => phase.name().to_string(),
        i => format!("{} #{}", phase.name(), i + 1),
    }
}

/// A phase's name at a curve's point (`file-stat load=50%`), or [`cell_name`] outside a curve:
/// the points of a phase's curve are cells of their own, told apart by their load, as compare
/// pairs two curves' points.
pub fn named(phase: Phase, iteration: u32, load: Option<CurveLoad>) -> String {
    match load {
        Some(load) => format!("{} {}{load}", phase.name(), CurveLoad::KEY),
        None => cell_name(phase, iteration),
    }
}

/// The stored cell's name (its `test`) of a phase's result: the phase alone (every iteration a
/// sample of one cell, as mdtest's -i gives its statistics over iterations); at a curve's point,
/// with its load; under `--latency-target`, a search's round also with its round, so that only
/// the round measured at the level found is the phase at that load.
pub fn test_name(r: &PhaseResult) -> String {
    match &r.latency_target {
        Some(t) if t.found.is_none() && r.iteration > 0 => {
            format!("{} round={}", named(r.phase, 0, r.load), r.iteration)
        }
        _ => named(r.phase, 0, r.load),
    }
}

/// Merges `gathered` (phase `phase` of `iteration`, at a curve's `load`, `clients` clients,
/// `per_client` items planned for each) by mdtest's rules.
pub fn merge(
    (phase, iteration, load): (Phase, u32, Option<CurveLoad>),
    gathered: Gathered<ClientFigures>,
    clients: usize,
    per_client: u64,
) -> MetadataCell {
    let figures = &gathered.figures;
    let items: u64 = figures.iter().map(|f| f.items).sum();
    let slowest = figures.iter().map(|f| f.seconds).fold(0.0, f64::max);
    let rate = |n: f64| if slowest > 0.0 { n / slowest } else { 0.0 };
    let summary_rule = match phase {
        // mdtest's tree rows: the tree's folders over the phase's time (rank 0's own figure).
        Phase::TreeCreate | Phase::TreeRemove => {
            rate(figures.first().map_or(0, |f| if items > 0 { f.folders } else { 0 }) as f64)
        }
        // Every rank's time runs to the end barrier: the slowest rate is the fewest items over it.
        _ => rate(figures.iter().map(|f| f.items).min().unwrap_or(0) as f64) * figures.len() as f64,
    };
    let mut failures = std::collections::BTreeMap::new();
    let mut latency = Latency::new();
    for f in figures {
        for (errno, n) in &f.failures {
            *failures.entry(errno.clone()).or_default() += n;
        }
        if let Ok(l) = Latency::from_bytes(&f.latency) {
            latency.merge(&l);
        }
    }
    let planned = figures.iter().map(|f| f.planned).sum::<u64>() + gathered.failures.len() as u64 * per_client;
    let result = PhaseResult {
        phase,
        iteration,
        items,
        rate_all_over_slowest: rate(items as f64),
        rate_slowest_times_clients: summary_rule,
        clients: figures.iter().map(|f| ClientPhase { client: f.rank, items: f.items, seconds: f.seconds }).collect(),
        latency: (latency.count() > 0).then(|| latency_of(&latency)),
        failures,
        stonewall: stonewall(figures, per_client),
        found: figures.iter().filter_map(|f| f.found).reduce(|a, b| a + b),
        load,
        open: OpenLoad::sum(figures.iter().filter_map(|f| f.open.as_ref())),
        curve: None,
        latency_target: None,
    };
    MetadataCell {
        name: named(phase, iteration, load),
        left_out: !figures.is_empty() && figures.iter().all(|f| f.skipped),
        latency,
        result,
        planned,
        failures: gathered.failures,
        starts: gathered.starts,
        clients,
        series: figures
            .iter()
            .any(|f| !f.series.intervals.is_empty())
            .then(|| Series::merge(&figures.iter().map(|f| &f.series).collect::<Vec<_>>())),
    }
}

fn latency_of(l: &Latency) -> PhaseLatency {
    let s = l.summary();
    let secs = |ns: u64| ns as f64 / 1e9;
    PhaseLatency {
        mean: s.mean_ns / 1e9,
        p50: secs(s.p50_ns),
        p99: secs(s.p99_ns),
        p999: secs(s.p99_9_ns),
        max: secs(s.max_ns),
    }
}

/// The stonewall, when it fired: some client had not done all its items when it did
/// (mdtest's test: the mean of the counts reached is not the planned count).
fn stonewall(figures: &[ClientFigures], per_client: u64) -> Option<StonewallFired> {
    let walls: Vec<(u64, f64)> = figures.iter().filter_map(|f| f.stonewall).collect();
    if walls.is_empty() || walls.iter().all(|(n, _)| *n >= per_client) {
        return None;
    }
    let seconds = walls.iter().map(|(_, s)| *s).fold(0.0, f64::max);
    let at_wall: u64 = walls.iter().map(|(n, _)| n).sum();
    let count_reached = figures.iter().filter_map(|f| f.count_reached).max().unwrap_or(0);
    Some(StonewallFired {
        seconds,
        count_reached,
        rate_at_stonewall: if seconds > 0.0 { at_wall as f64 / seconds } else { 0.0 },
        count_min: walls.iter().map(|(n, _)| *n).min().unwrap_or(0),
        count_mean: at_wall as f64 / walls.len() as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(rank: usize, items: u64, seconds: f64) -> ClientFigures {
        let mut l = Latency::new();
        l.record(1000 * (rank as u64 + 1));
        ClientFigures {
            rank,
            items,
            planned: items,
            seconds,
            failures: [("ENOSPC".to_string(), rank as u64)].into_iter().collect(),
            latency: l.to_bytes(),
            stonewall: None,
            count_reached: None,
            folders: 1,
            found: None,
            series: Default::default(),
            open: None,
            skipped: false,
        }
    }

    #[test]
    fn both_rates_follow_mdtests_rules() {
        let g = Gathered { figures: vec![client(0, 100, 1.0), client(1, 50, 2.0)], failures: vec![], starts: vec![] };
        let cell = merge((Phase::FileStat, 1, None), g, 2, 100);
        assert_eq!(cell.name, "file-stat #2");
        let r = &cell.result;
        // IO500's: every item over the slowest time; SUMMARY's: the fewest items over it, x clients.
        assert_eq!(r.rate_all_over_slowest, 75.0);
        assert_eq!(r.rate_slowest_times_clients, 50.0);
        assert_eq!(r.failures["ENOSPC"], 1);
        let l = r.latency.unwrap();
        assert!(l.p50 <= l.p99 && l.p99 <= l.max && l.max > 0.0);
        assert!(r.stonewall.is_none());
    }

    #[test]
    fn a_stonewall_that_stopped_a_client_is_kept() {
        let mut a = client(0, 30, 1.0);
        a.stonewall = Some((30, 0.2));
        a.count_reached = Some(30);
        let mut b = client(1, 30, 1.1);
        b.stonewall = Some((12, 0.21));
        b.count_reached = Some(30);
        let g = Gathered { figures: vec![a, b], failures: vec![], starts: vec![] };
        let wall = merge((Phase::FileCreate, 0, None), g, 2, 1000).result.stonewall.unwrap();
        assert_eq!(wall.count_reached, 30);
        assert_eq!(wall.seconds, 0.21);
        assert!((wall.rate_at_stonewall - 42.0 / 0.21).abs() < 1e-9);
    }
}
