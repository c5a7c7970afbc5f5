//! `--latency-target` of the metadata suite: per item phase, the highest rate whose items meet a
//! latency target at a percentile, searched as fio's latency_target searches its depth
//! ([`iomatrix_harness::level_search::LevelSearch`]) over 20 levels: level k offers k/20 of the
//! phase's maximum (closed loop, measured first). Each level is a round of every phase over fresh
//! names (a phase's items are its window: every item of the round is judged), open loop, each
//! item timed from its arrival. Once every phase's search has ended, a last round measures each
//! phase at the level it found, stored with what the search found.

use crate::merge::MetadataCell;
use crate::plan::MetadataPlan;
use iomatrix_harness::level_search::{LevelSearch, Next};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU32, Ordering};

/// The levels: level k offers k/[`LEVELS`] of the maximum.
pub const LEVELS: u32 = 20;

/// The most search rounds: fio's climb over 20 levels (doubling to 16, 20, then halving back)
/// settles within about 10; a search still moving after these is stopped unsettled.
pub const MAX_SEARCH_ROUNDS: u32 = 14;

/// `--latency-target` and `--latency-percentile`, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetaTarget {
    /// An item meets the target when its latency (from its arrival) is at most this, in ns.
    pub target_ns: u64,
    /// The share of a round's items that must meet it, in hundredths of a percent (fio's
    /// latency_percentile; 10000, all of them, by default as fio's).
    pub percentile_hundredths: u32,
    /// How the search's arrivals are spaced.
    pub arrival: iomatrix_random::Arrival,
}

impl MetaTarget {
    /// "p99 of each item's latency from its arrival <= 1.00 ms".
    pub fn describe(&self) -> String {
        let h = self.percentile_hundredths;
        let p = if h % 100 == 0 { (h / 100).to_string() } else { format!("{}", f64::from(h) / 100.0) };
        format!(
            "p{p} of each item's latency from its arrival <= {}",
            iomatrix_core::human::nanos(self.target_ns as f64)
        )
    }
}

/// What a phase's search measured at one round, stored with the phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetRound {
    /// What was asked, in words.
    pub target: String,
    /// The level this round offered (k of 20 of the maximum; 0 for the maximum itself).
    pub level: u32,
    /// The round's latency at the target's percentile, in ns.
    pub at_percentile_ns: u64,
    /// Whether the round met the target.
    pub met: bool,
    /// On the round that measures the level found: the highest level that met the target
    /// (None: not even 1/20 of the maximum did), and how the search ended, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<Found>,
}

/// How a phase's search ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Found {
    /// The highest level that met the target; None where level 1 failed.
    pub level: Option<u32>,
    /// The rate this round achieved at it (all clients' items a second).
    pub rate: f64,
    /// In words: "settled at 14/20 of the maximum (70%): 19,600 items/s", or why not.
    pub said: String,
}

/// One phase's search, at the leader.
#[derive(Debug, Clone, Copy)]
enum State {
    /// Running this level next.
    Searching { search: LevelSearch, level: u32, best: Option<u32> },
    /// Ended: the level it found (None: unmet) and how, now measured at it.
    Ended { level: Option<u32>, settled: bool },
}

/// The searches of a run, at the leader; each phase's next level goes to the clients through
/// `levels` (shared memory: refused under MPI), indexed by the phase's place in the plan.
pub struct Searches {
    target: Option<MetaTarget>,
    states: Vec<State>,
}

impl Searches {
    /// The searches of `plan` (none without `--latency-target`).
    pub fn new(plan: &MetadataPlan) -> Searches {
        Searches::of(plan.latency_target, plan.phases.len())
    }

    /// A search for `target` of each of `phases` phases.
    fn of(target: Option<MetaTarget>, phases: usize) -> Searches {
        let first = State::Searching { search: LevelSearch::new(LEVELS), level: LevelSearch::FIRST, best: None };
        Searches { target, states: vec![first; phases] }
    }

    /// The level phase `index` of the plan runs next, as the clients read it.
    pub fn first_levels(phases: usize) -> Vec<AtomicU32> {
        (0..phases).map(|_| AtomicU32::new(LevelSearch::FIRST)).collect()
    }

    /// Phase `index`'s cell of round `round` just merged: judged, its level's record stored with
    /// it, the phase's next level set in `levels`; once every search has ended, the next round is
    /// the last (`last_round`).
    pub fn see(&mut self, index: usize, cell: &mut MetadataCell, levels: &[AtomicU32], last_round: &AtomicU32) {
        let Some(target) = self.target else { return };
        let round = cell.result.iteration;
        let quantile = f64::from(target.percentile_hundredths) / 10_000.0;
        let at = if cell.latency.count() == 0 { u64::MAX } else { cell.latency.quantile_ns(quantile) };
        let met = at <= target.target_ns;
        let level = if round == 0 { 0 } else { levels[index].load(Ordering::SeqCst) };
        let mut record = TargetRound { target: target.describe(), level, at_percentile_ns: at, met, found: None };
        let rate = cell.result.rate_all_over_slowest;
        match self.states[index] {
            _ if round == 0 => {}
            State::Searching { mut search, level, best } => {
                let best = if met { Some(level) } else { best };
                let next = if met { search.met(level) } else { search.failed(level) };
                self.states[index] = match next {
                    Next::Level(l) if round < MAX_SEARCH_ROUNDS => State::Searching { search, level: l, best },
                    Next::Level(_) => State::Ended { level: best, settled: false },
                    Next::Settled(l) => State::Ended { level: Some(l), settled: true },
                    Next::Unmet => State::Ended { level: None, settled: true },
                };
                let next_level = match self.states[index] {
                    State::Searching { level, .. } => level,
                    State::Ended { level, .. } => level.unwrap_or(LevelSearch::FIRST),
                };
                levels[index].store(next_level, Ordering::SeqCst);
            }
            State::Ended { level: found, settled } if round == last_round.load(Ordering::SeqCst) => {
                record.found = Some(Found { level: found, rate, said: said(found, settled, rate) });
            }
            State::Ended { .. } => {}
        }
        cell.result.latency_target = Some(record);
        if round > 0 && self.states.iter().all(|s| matches!(s, State::Ended { .. })) {
            last_round.fetch_min(round + 1, Ordering::SeqCst);
        }
    }
}

/// How a search ended, in words.
fn said(level: Option<u32>, settled: bool, rate: f64) -> String {
    let rate = iomatrix_core::human::significant(rate);
    match (level, settled) {
        (Some(k), true) => format!("settled at {k}/{LEVELS} of the maximum ({}%): {rate} items/s", k * 100 / LEVELS),
        (Some(k), false) => format!(
            "not settled after {MAX_SEARCH_ROUNDS} rounds; the highest level that met it is {k}/{LEVELS} of the \
             maximum ({}%): {rate} items/s",
            k * 100 / LEVELS
        ),
        (None, _) => format!(
            "no level meets it, not even 1/{LEVELS} of the maximum; measured there: {rate} items/s (not a rate \
             within the target)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Phase;
    use crate::result::PhaseResult;
    use iomatrix_stats::Latency;

    /// Phase `phase`'s cell of `round`: 100 items of `ns` each, at `rate`.
    fn cell(phase: Phase, round: u32, ns: u64, rate: f64) -> MetadataCell {
        let mut latency = Latency::new();
        (0..100).for_each(|_| latency.record(ns));
        let result = PhaseResult {
            phase,
            iteration: round,
            items: 100,
            rate_all_over_slowest: rate,
            rate_slowest_times_clients: rate,
            clients: Vec::new(),
            latency: None,
            failures: Default::default(),
            stonewall: None,
            found: None,
            load: None,
            open: None,
            curve: None,
            latency_target: None,
        };
        MetadataCell {
            name: String::new(),
            result,
            planned: 100,
            failures: Vec::new(),
            starts: Vec::new(),
            clients: 1,
            series: None,
            latency,
            left_out: false,
        }
    }

    #[test]
    fn each_phase_climbs_on_its_own_and_the_round_after_the_last_search_measures_what_each_found() {
        let target = MetaTarget {
            target_ns: 1_000_000,
            percentile_hundredths: 9900,
            arrival: iomatrix_random::Arrival::Uniform,
        };
        assert_eq!(target.describe(), "p99 of each item's latency from its arrival <= 1.00 ms");
        let mut searches = Searches::of(Some(target), 2);
        let (levels, last) = (Searches::first_levels(2), AtomicU32::new(u32::MAX));
        let mut see = |index: usize, round: u32, ns: u64| {
            let phase = [Phase::FileCreate, Phase::FileStat][index];
            let mut c = cell(phase, round, ns, 1000.0 * f64::from(round + 1));
            let level = levels[index].load(Ordering::SeqCst);
            searches.see(index, &mut c, &levels, &last);
            (level, c.result.latency_target.unwrap())
        };
        let (met, failed) = (500_000, 2_000_000);
        // The maximum: judged, not a level.
        assert_eq!(see(0, 0, failed).1.level, 0);
        see(1, 0, failed);
        // file-create: level 1 meets, 2 fails, back to 1, which meets: settled at 1.
        // file-stat: level 1 fails: unmet at once, and run at level 1 while file-create searches.
        assert_eq!(see(0, 1, met).0, 1);
        assert_eq!(see(1, 1, failed).0, 1);
        assert_eq!(last.load(Ordering::SeqCst), u32::MAX, "file-create still searches");
        assert_eq!(see(0, 2, failed).0, 2);
        assert_eq!(see(1, 2, failed).0, 1);
        assert_eq!(see(0, 3, met).0, 1);
        assert_eq!(see(1, 3, failed).0, 1);
        assert_eq!(last.load(Ordering::SeqCst), 4, "every search ended: round 4 is the last");
        let (level, create) = see(0, 4, met);
        let found = create.found.unwrap();
        assert_eq!((level, found.level, found.rate), (1, Some(1), 5000.0));
        assert!(found.said.starts_with("settled at 1/20 of the maximum (5%): 5000"), "{}", found.said);
        let stat = see(1, 4, failed).1.found.unwrap();
        assert_eq!(stat.level, None);
        assert!(stat.said.starts_with("no level meets it, not even 1/20 of the maximum"), "{}", stat.said);
    }
}
