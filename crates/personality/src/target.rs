//! The latency target of a personality (`--latency-target`): the highest offered rate whose
//! operations meet a latency at a percentile, searched as fio 3.33 searches its deepest queue
//! (the climb is [`iomatrix_harness::level_search`]), then measured for the phase's duration.
//!
//! A phase with a target runs as cells the leader steers: first the maximum, closed loop for one
//! window; then up to [`SEARCH_WINDOWS`] windows, window k open loop at level L's rate (L/20 of
//! each client's own maximum: steps of 5%, level 20 the maximum), each judged over all clients'
//! operations with fio's window rule (the share of operations whose latency, from each one's
//! intended start, is within the target reaches the percentile; at 100%, one over fails it); then
//! the phase itself at the rate found, for its duration. Only that last cell is stored, with every
//! window judged; the search's cells are counted as planned and not run, never as lost. Where
//! level 1 fails, no rate meets the target: that is stored and said, and the phase is measured at
//! level 1 to show how far off it is (never a rate that did not meet it).

use iomatrix_harness::level_search::{LevelSearch, Next};
use serde::{Deserialize, Serialize};

/// Levels of the search: level L offers L/20 of the maximum.
pub const LEVELS: u32 = 20;

/// The most windows a search takes: a doubling climb to 20 and a bisection back take at most 9.
pub const SEARCH_WINDOWS: usize = 10;

/// A latency target, as the plan holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RateTarget {
    /// An operation meets the target when its latency (from its intended start) is at most this (ns).
    pub target_ns: u64,
    /// The share of a window's operations that must meet it, in hundredths of a percent (9900: 99%).
    pub percentile_hundredths: u32,
    /// How long each level runs before it is judged (ns), and the maximum's cell.
    pub window_ns: u64,
}

impl RateTarget {
    /// "p99", "p99.9", "p100".
    pub fn percentile_name(&self) -> String {
        let p = f64::from(self.percentile_hundredths) / 100.0;
        if p.fract() == 0.0 {
            format!("p{p:.0}")
        } else {
            format!("p{}", format!("{p:.2}").trim_end_matches('0'))
        }
    }

    /// Whether a window of `ops` operations, `over` of them over the target, meets it.
    pub fn met(&self, ops: u64, over: u64) -> bool {
        if ops == 0 || (over > 0 && self.percentile_hundredths >= 10_000) {
            return false;
        }
        (ops - over) as f64 * 10_000.0 >= f64::from(self.percentile_hundredths) * ops as f64
    }

    /// "p99 of each operation's latency (from its intended start) <= 5.00 ms over 1.00 s windows".
    pub fn describe(&self) -> String {
        format!(
            "{} of each operation's latency (from its intended start) <= {} over {} windows",
            self.percentile_name(),
            human(self.target_ns as f64),
            human(self.window_ns as f64)
        )
    }
}

fn human(ns: f64) -> String {
    iomatrix_core::human::nanos(ns)
}

/// One window of a search, over every client's operations.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// The level it ran at (L/20 of the maximum).
    pub level: u32,
    /// Operations a second offered, all clients.
    pub offered_per_sec: f64,
    /// Operations a second achieved.
    pub achieved_per_sec: f64,
    /// Operations completed.
    pub ops: u64,
    /// Of them, those over the target.
    pub over_target: u64,
    /// The window's latency at the target's percentile (ns).
    pub at_percentile_ns: u64,
    /// Whether it met the target.
    pub met: bool,
}

/// What a search found, stored with the phase's measured cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetOutcome {
    /// What was asked.
    pub target: RateTarget,
    /// The maximum, closed loop, all clients' operations a second.
    pub max_per_sec: f64,
    /// The highest level found to meet the target; None: not even level 1 did.
    pub level: Option<u32>,
    /// Its rate, all clients (`level`/20 of the maximum).
    pub rate_per_sec: Option<f64>,
    /// The level the phase was measured at (level 1 where none met the target).
    pub measured_level: u32,
    /// Whether the search settled by fio's rule (false: it ran out of windows).
    pub settled: bool,
    /// Every window judged, in order.
    pub windows: Vec<Window>,
}

impl TargetOutcome {
    /// "9000 ops/s: level 9 of 20 (45% of the maximum 20000 ops/s; levels judged: 1, 2, ...)" or
    /// "no rate meets p99 <= 1.00 ms; level 1's (5% of the maximum, 1000 ops/s) p99 is 1.80 ms ...".
    pub fn describe(&self) -> String {
        let judged = self.windows.iter().map(|w| w.level.to_string()).collect::<Vec<_>>().join(", ");
        let max = self.max_per_sec;
        match (self.level, self.rate_per_sec) {
            (Some(level), Some(rate)) => format!(
                "{rate:.0} ops/s: level {level} of {LEVELS} ({}% of the maximum {max:.0} ops/s; levels judged: \
                 {judged}{})",
                level * 100 / LEVELS,
                if self.settled { "" } else { ", not settled" }
            ),
            _ => {
                let p = self.target.percentile_name();
                let one = self.windows.iter().rev().find(|w| w.level == 1);
                let at_one = one.map_or(0, |w| w.at_percentile_ns);
                format!(
                    "no rate meets {p} <= {}; level 1's ({:.0} ops/s, {}% of the maximum {max:.0} ops/s) {p} is {} \
                     (measured at level 1; levels judged: {judged})",
                    human(self.target.target_ns as f64),
                    max / f64::from(LEVELS),
                    100 / LEVELS,
                    human(at_one as f64)
                )
            }
        }
    }
}

/// A search at the leader, window by window.
#[derive(Debug, Clone)]
pub struct Search {
    target: RateTarget,
    climb: LevelSearch,
    max_per_sec: f64,
    /// The level the next window (or the measured cell, once ended) runs at.
    pub level: u32,
    windows: Vec<Window>,
    /// Settled at a level, or None at level 1 (unmet); unset while searching.
    ended: Option<Option<u32>>,
    /// Whether it ended by fio's rule (not out of windows).
    settled: bool,
}

impl Search {
    /// A search after the maximum measured `max_per_sec` (all clients).
    pub fn new(target: RateTarget, max_per_sec: f64) -> Search {
        let climb = LevelSearch::new(LEVELS);
        Search {
            target,
            climb,
            max_per_sec,
            level: LevelSearch::FIRST,
            windows: Vec::new(),
            ended: None,
            settled: false,
        }
    }

    /// Whether the search is over (the rest of its windows are left out).
    pub fn ended(&self) -> bool {
        self.ended.is_some()
    }

    /// A window at the current level: `ops` operations, `over` of them over the target,
    /// `at_percentile_ns` the percentile's latency, `achieved` and `offered` all clients' rates.
    pub fn judge(&mut self, ops: u64, over: u64, at_percentile_ns: u64, (achieved, offered): (f64, f64)) {
        let met = self.target.met(ops, over);
        let level = self.level;
        self.windows.push(Window {
            level,
            offered_per_sec: offered,
            achieved_per_sec: achieved,
            ops,
            over_target: over,
            at_percentile_ns,
            met,
        });
        match if met { self.climb.met(level) } else { self.climb.failed(level) } {
            Next::Level(next) => self.level = next,
            Next::Settled(found) => (self.ended, self.settled) = (Some(Some(found)), true),
            Next::Unmet => (self.ended, self.settled) = (Some(None), true),
        }
        if self.ended.is_none() && self.windows.len() >= SEARCH_WINDOWS {
            // Out of windows: the highest level that met the target, if any did.
            self.ended = Some(self.windows.iter().filter(|w| w.met).map(|w| w.level).max());
        }
        if let Some(found) = self.ended {
            self.level = found.unwrap_or(1);
        }
    }

    /// What the search found, for the measured cell.
    pub fn outcome(&self) -> TargetOutcome {
        let level = self.ended.flatten();
        TargetOutcome {
            target: self.target,
            max_per_sec: self.max_per_sec,
            level,
            rate_per_sec: level.map(|l| self.max_per_sec * f64::from(l) / f64::from(LEVELS)),
            measured_level: self.level,
            settled: self.settled,
            windows: self.windows.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn target() -> RateTarget {
        RateTarget { target_ns: MS, percentile_hundredths: 9900, window_ns: 1000 * MS }
    }

    /// A device whose p99 passes 1 ms above 65% of its maximum: the search finds 65%, and 70% failed.
    #[test]
    fn the_search_finds_the_highest_level_within_the_target_and_the_level_above_failed() {
        let mut search = Search::new(target(), 20_000.0);
        while !search.ended() {
            let level = search.level;
            let rate = 1000.0 * f64::from(level);
            let over = if level <= 13 { 0 } else { 50 };
            search.judge(1000, over, if over > 0 { 5 * MS } else { MS / 2 }, (rate, rate));
        }
        let outcome = search.outcome();
        let judged: Vec<u32> = outcome.windows.iter().map(|w| w.level).collect();
        assert_eq!(judged, [1, 2, 4, 8, 16, 12, 14, 13]);
        assert_eq!((outcome.level, outcome.rate_per_sec, outcome.measured_level), (Some(13), Some(13_000.0), 13));
        assert!(outcome.windows.iter().any(|w| w.level == 14 && !w.met));
        assert_eq!(
            outcome.describe(),
            "13000 ops/s: level 13 of 20 (65% of the maximum 20000 ops/s; levels judged: 1, 2, 4, 8, 16, 12, 14, 13)"
        );
    }

    #[test]
    fn level_1_failing_is_no_rate_and_says_level_1s_figure() {
        let mut search = Search::new(target(), 20_000.0);
        search.judge(1000, 100, 2 * MS, (1000.0, 1000.0));
        assert!(search.ended());
        let outcome = search.outcome();
        assert_eq!((outcome.level, outcome.rate_per_sec, outcome.measured_level), (None, None, 1));
        assert_eq!(
            outcome.describe(),
            "no rate meets p99 <= 1.00 ms; level 1's (1000 ops/s, 5% of the maximum 20000 ops/s) p99 is 2.00 ms \
             (measured at level 1; levels judged: 1)"
        );
    }

    #[test]
    fn the_window_rule_is_fios() {
        let t = target();
        assert!(t.met(100, 1) && !t.met(100, 2) && !t.met(0, 0), "99 of 100 within meets p99");
        let all = RateTarget { percentile_hundredths: 10_000, ..t };
        assert!(all.met(1000, 0) && !all.met(1000, 1), "at p100 one over fails");
    }
}
