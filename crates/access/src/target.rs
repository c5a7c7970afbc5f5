//! The latency target (`--latency-target`, fio's `latency_target`): the deepest queue whose
//! requests meet a latency at a percentile, searched as fio 3.33 searches it (io_u.c), then
//! measured for the cell's duration at the depth found.
//!
//! fio's rule, in words: a client starts at depth 1, between a low of 1 and a high of the cell's
//! depth. Each window (`latency_window`) it counts its completed requests and those whose total
//! latency (issue to completion, fio's `lat`: submission included) is over the target. At the
//! window's end, if the share within the target reaches the percentile, the depth met it: the low
//! becomes this depth, and the next depth is twice this one while the high is still the cell's
//! depth (nothing failed yet), else halfway to the high; when that next depth is this one, the
//! search is over. If the share falls short, the high becomes this depth, the low steps down one
//! when it was this depth, the next depth is halfway to the low, and the requests in flight
//! complete (unjudged) before the next window starts. With the percentile at 100, one request
//! over the target fails the window at once. Three successes in a row one below the high raise
//! the high by one (fio's stable count).
//!
//! The climb itself (low, high, stable count) is [`iomatrix_harness::level_search`], shared with
//! the suites that search a rate; this module keeps what is a queue's: windows of requests, the
//! drain after a failure, the bound on windows.
//!
//! Where iomatrix differs, and why: fio keeps a failing depth 1 and runs on, reporting depth 1;
//! here a failing depth 1 ends the search with no depth found (a stated result, never a depth
//! that did not meet the target), and the cell is measured at depth 1 to show how far off it is.
//! fio ends the job one window after the search settles; here the cell is then measured for its
//! whole duration at the depth found (`latency_run` keeps searching through the cell instead, as
//! fio's does). A search is bounded: [`MAX_WINDOWS`] windows, after which it stops where it is
//! and says it did not settle.

use iomatrix_harness::level_search::{LevelSearch, Next};
use iomatrix_stats::Latency;
use serde::{Deserialize, Serialize};

/// The most windows a search takes before it stops unsettled: a doubling climb to the deepest
/// queue the kernel takes and a bisection back need some 30.
pub const MAX_WINDOWS: u32 = 64;

/// The resolution of the clock requests are timed with ([`crate::latency_clock`] counts
/// nanoseconds): a window shorter than this holds no request's time.
pub const CLOCK_RESOLUTION_NS: u64 = 1;

/// A cell's latency target, as the plan holds it (every value resolved).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencyTarget {
    /// A request meets the target when its total latency (issue to completion) is at most this (ns).
    pub target_ns: u64,
    /// The share of a window's requests that must meet it, in hundredths of a percent (9900: 99%;
    /// fio's latency_percentile, default 100%).
    pub percentile_hundredths: u32,
    /// How long each depth runs before it is judged (ns; fio's latency_window).
    pub window_ns: u64,
    /// Keep adjusting the depth for the whole cell (fio's latency_run) instead of measuring the
    /// cell at the depth found.
    #[serde(default)]
    pub keep_adjusting: bool,
}

impl LatencyTarget {
    /// The percentile as a number (99.0).
    pub fn percentile(&self) -> f64 {
        f64::from(self.percentile_hundredths) / 100.0
    }

    /// "p99", "p99.9", "p100": the percentile as the messages name it.
    pub fn percentile_name(&self) -> String {
        let p = self.percentile();
        if p.fract() == 0.0 {
            format!("p{p:.0}")
        } else {
            let two_decimals = format!("{p:.2}");
            format!("p{}", two_decimals.trim_end_matches('0'))
        }
    }

    /// "p99 of each request's total latency <= 1.00 ms over 1.00 s windows".
    pub fn describe(&self) -> String {
        format!(
            "{} of each request's total latency (issue to completion, submission included: fio's lat) <= {} over {} \
             windows",
            self.percentile_name(),
            human(self.target_ns),
            human(self.window_ns)
        )
    }
}

/// Which latency the search judged: always the total, as fio's (its `lat`, issue to completion).
pub const JUDGED: &str = "lat: each request's total latency, issue to completion (submission included), as fio judges";

/// Which of a request's latencies a search judges, stored with what it found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Judged {
    /// Issue to completion, submission included: fio's `lat`, which fio's latency_target judges.
    #[default]
    Total,
}

/// One window of a search: the depth it ran at and how its requests did.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SearchStep {
    /// Requests allowed in flight.
    pub depth: u32,
    /// Requests completed in the window.
    pub requests: u64,
    /// Of them, those over the target.
    pub over_target: u64,
    /// The window's latency at the target's percentile (ns).
    pub at_percentile_ns: u64,
    /// Whether the window met the target.
    pub met: bool,
}

/// What one client's search found, stored with its cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetOutcome {
    /// What was asked.
    pub target: LatencyTarget,
    /// Which latency was judged.
    #[serde(default)]
    pub judged: Judged,
    /// The deepest queue found to meet the target; None: not even depth 1 did.
    pub depth: Option<u32>,
    /// The depth the cell's figures were measured at (with `keep_adjusting`: the depth at its end).
    pub measured_depth: u32,
    /// Whether the search settled by fio's rule (false: it ran out of windows, or `keep_adjusting`).
    pub settled: bool,
    /// Every window judged, in order.
    pub steps: Vec<SearchStep>,
}

impl TargetOutcome {
    /// "depth 2 (searched 1, 2, 4, 3, 2)" or "no depth meets p99 <= 1.00 ms; depth 1's p99 is 1.80 ms".
    pub fn describe(&self) -> String {
        let searched = self.steps.iter().map(|s| s.depth.to_string()).collect::<Vec<_>>().join(", ");
        match self.depth {
            Some(depth) => {
                let settled = match (self.target.keep_adjusting, self.settled) {
                    (true, _) => ", kept adjusting through the cell: the depth at its end",
                    (false, true) => "",
                    (false, false) => ", not settled",
                };
                // An imported fio run gives the depth only (fio's JSON lists no window), and fio
                // reports depth 1 also where depth 1 missed the target.
                if self.steps.is_empty() {
                    let one =
                        if depth == 1 { "; fio reports depth 1 also where depth 1 missed the target" } else { "" };
                    return format!("depth {depth} (the depths judged are not recorded: fio's JSON gives the depth it ran at{one}{settled})");
                }
                format!("depth {depth} (depths judged: {searched}{settled})")
            }
            None if self.steps.is_empty() => format!(
                "no depth found: the search judged no window (no request completed within its bound of {MAX_WINDOWS} \
                 windows); measured at depth 1"
            ),
            None => {
                let p = self.target.percentile_name();
                let at_one = self.steps.iter().rev().find(|s| s.depth == 1).map_or(0, |s| s.at_percentile_ns);
                format!(
                    "no depth meets {p} <= {}; depth 1's {p} is {} (measured at depth 1; depths judged: {searched})",
                    human(self.target.target_ns),
                    human(at_one)
                )
            }
        }
    }
}

fn human(ns: u64) -> String {
    iomatrix_core::human::nanos(ns as f64)
}

/// How many requests a cell's loop keeps in flight.
pub(crate) enum Queue {
    /// As many as the cell's depth (every slot).
    Full,
    /// At most this many (the depth a search found).
    Fixed(u32),
    /// As the search says, window by window.
    Searching(Box<DepthSearch>),
}

impl Queue {
    /// Whether one more request may go with `in_flight` in flight.
    #[inline]
    pub(crate) fn has_room(&self, in_flight: u32) -> bool {
        match self {
            Queue::Full => true,
            Queue::Fixed(depth) => in_flight < *depth,
            Queue::Searching(search) => search.has_room(in_flight),
        }
    }

    /// A request completed in `latency_ns`, at `now_ns`, leaving `in_flight`.
    #[inline]
    pub(crate) fn completed(&mut self, latency_ns: u64, now_ns: u64, in_flight: u32) {
        if let Queue::Searching(search) = self {
            search.completed(latency_ns, now_ns, in_flight);
        }
    }

    /// Whether a search is over (no more requests: the loop drains).
    pub(crate) fn finished(&self) -> bool {
        matches!(self, Queue::Searching(search) if search.finished.is_some())
    }

    /// A search's outcome so far (None without a search).
    pub(crate) fn outcome(&self) -> Option<TargetOutcome> {
        match self {
            Queue::Searching(search) => Some(search.outcome()),
            Queue::Full | Queue::Fixed(_) => None,
        }
    }
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// Settled at this depth by fio's rule.
    Settled(u32),
    /// Depth 1 failed the target.
    Unmet,
    /// Out of windows.
    OutOfWindows,
}

/// One client's search for the deepest queue that meets a [`LatencyTarget`] (fio's rule: the
/// module's doc). Fed every completion; it says how many requests may be in flight.
pub(crate) struct DepthSearch {
    target: LatencyTarget,
    depth: u32,
    /// fio's climb over depths up to the cell's (fio's iodepth): low, high, stable count.
    levels: LevelSearch,
    window_start_ns: u64,
    requests: u64,
    over_target: u64,
    window: Latency,
    /// After a failure: the requests in flight complete, unjudged, before the next window.
    draining: bool,
    steps: Vec<SearchStep>,
    finished: Option<Ended>,
}

impl DepthSearch {
    /// A search up to `deepest` requests in flight, its first window starting at 0 ns.
    pub(crate) fn new(target: LatencyTarget, deepest: u32) -> DepthSearch {
        DepthSearch {
            target,
            depth: LevelSearch::FIRST,
            levels: LevelSearch::new(deepest),
            window_start_ns: 0,
            requests: 0,
            over_target: 0,
            window: Latency::new(),
            draining: false,
            steps: Vec::new(),
            finished: None,
        }
    }

    #[inline]
    fn has_room(&self, in_flight: u32) -> bool {
        self.finished.is_none() && !self.draining && in_flight < self.depth
    }

    fn completed(&mut self, latency_ns: u64, now_ns: u64, in_flight: u32) {
        if self.finished.is_some() {
            return;
        }
        if self.draining {
            if in_flight == 0 {
                self.new_window(now_ns);
            }
            return;
        }
        self.requests += 1;
        self.window.record(latency_ns);
        let over = latency_ns > self.target.target_ns;
        if over {
            self.over_target += 1;
        }
        // At 100%, one request over the target fails the window at once (fio's lat_target_failed).
        let failed_at_once = over && self.target.percentile_hundredths >= 10_000;
        if failed_at_once {
            self.judged(false, now_ns, in_flight);
        } else if now_ns.saturating_sub(self.window_start_ns) >= self.target.window_ns {
            let within = (self.requests - self.over_target) as f64 * 100.0 / self.requests as f64;
            self.judged(within >= self.target.percentile(), now_ns, in_flight);
        }
    }

    /// The window just judged `met` (or not): its step kept, the next depth chosen.
    fn judged(&mut self, met: bool, now_ns: u64, in_flight: u32) {
        self.steps.push(SearchStep {
            depth: self.depth,
            requests: self.requests,
            over_target: self.over_target,
            at_percentile_ns: self.window.quantile_ns(self.target.percentile() / 100.0),
            met,
        });
        if met {
            self.met(now_ns);
        } else {
            self.failed(now_ns, in_flight);
        }
        if self.finished.is_none() && !self.target.keep_adjusting && self.steps.len() >= MAX_WINDOWS as usize {
            self.finished = Some(Ended::OutOfWindows);
        }
    }

    /// fio's lat_target_success: climb (doubling until something failed, then halfway to the high).
    fn met(&mut self, now_ns: u64) {
        match self.levels.met(self.depth) {
            Next::Level(next) => self.depth = next,
            Next::Settled(_) | Next::Unmet if self.target.keep_adjusting => {}
            Next::Settled(depth) => self.finished = Some(Ended::Settled(depth)),
            Next::Unmet => self.finished = Some(Ended::Unmet),
        }
        self.new_window(now_ns);
    }

    /// fio's __lat_target_failed: step down halfway to the low, and let the queue drain.
    fn failed(&mut self, now_ns: u64, in_flight: u32) {
        match self.levels.failed(self.depth) {
            Next::Level(next) => self.depth = next,
            Next::Unmet | Next::Settled(_) if self.target.keep_adjusting => return self.new_window(now_ns),
            Next::Unmet | Next::Settled(_) => {
                self.finished = Some(Ended::Unmet);
                return;
            }
        }
        if in_flight == 0 {
            self.new_window(now_ns);
        } else {
            self.draining = true;
        }
    }

    fn new_window(&mut self, now_ns: u64) {
        self.draining = false;
        self.window_start_ns = now_ns;
        self.requests = 0;
        self.over_target = 0;
        self.window.reset();
    }

    /// What the search found: with `keep_adjusting`, where it stands.
    pub(crate) fn outcome(&self) -> TargetOutcome {
        let last_met = self.steps.iter().rev().find(|s| s.met).map(|s| s.depth);
        let (depth, settled) = match self.finished {
            Some(Ended::Settled(depth)) => (Some(depth), true),
            Some(Ended::Unmet) => (None, true),
            // Out of windows, the cell's end under keep_adjusting, or a stop: the depth now if its
            // last window met the target, else the last depth that did.
            Some(Ended::OutOfWindows) | None => {
                let now_met = self.steps.last().is_some_and(|s| s.met && s.depth == self.depth);
                (if now_met { Some(self.depth) } else { last_met }, false)
            }
        };
        let measured_depth = if self.target.keep_adjusting { self.depth } else { depth.unwrap_or(1) };
        let steps = self.steps.clone();
        TargetOutcome { target: self.target, judged: Judged::Total, depth, measured_depth, settled, steps }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn target(percentile: u32) -> LatencyTarget {
        LatencyTarget {
            target_ns: MS,
            percentile_hundredths: percentile * 100,
            window_ns: 100 * MS,
            keep_adjusting: false,
        }
    }

    /// Runs `search` window by window: each window's requests take `latency_at(depth)` but one in
    /// a hundred takes `slow_at(depth)`; returns the depths judged.
    fn drive(search: &mut DepthSearch, latency_at: impl Fn(u32) -> (u64, u64)) -> Vec<u32> {
        let mut now = 0;
        for _ in 0..200 {
            if search.finished.is_some() {
                break;
            }
            let depth = search.depth;
            let (usual, slow) = latency_at(depth);
            for i in 0..100u64 {
                now += MS;
                let latency = if i == 50 { slow } else { usual };
                // The last request of a window leaves nothing in flight: no drain to wait for.
                search.completed(latency, now, if i == 99 { 0 } else { depth - 1 });
            }
        }
        search.steps.iter().map(|s| s.depth).collect()
    }

    /// The throttled device of issue 52: a p99 under 1 ms at depths 1 and 2, 99 ms from depth 3 on.
    fn slices(depth: u32) -> (u64, u64) {
        match depth {
            1 | 2 => (20_000, 570_000),
            _ => (20_000, 99 * MS),
        }
    }

    #[test]
    fn a_p99_target_climbs_by_doubling_then_bisects_to_the_deepest_depth_that_meets_it() {
        // Hand-run of fio's rule at iodepth 8: 1 met (low 1, double: 2), 2 met (low 2, double: 4),
        // 4 failed (high 4, halfway to low: 3), 3 failed (high 3, 2), 2 met (low 2; 2 + 1 is the high:
        // stable 1; halfway to the high: (2 + 3) / 2 = 2, the same: settled at 2).
        let mut search = DepthSearch::new(target(99), 8);
        // Depths 1 and 2 meet p99 (their one slow request is within 1 ms); from 3 every request waits.
        assert_eq!(drive(&mut search, |d| if d <= 2 { slices(d) } else { (99 * MS, 99 * MS) }), [1, 2, 4, 3, 2]);
        let outcome = search.outcome();
        assert_eq!((outcome.depth, outcome.measured_depth, outcome.settled), (Some(2), 2, true));
        assert_eq!(outcome.describe(), "depth 2 (depths judged: 1, 2, 4, 3, 2)");
    }

    #[test]
    fn at_p100_one_slow_request_fails_its_window_at_once() {
        // Depth 2's one slow request (0.57 ms) is within 1 ms; depth 4's (99 ms) fails at once,
        // at the window's 51st request, not at its end.
        let mut search = DepthSearch::new(target(100), 8);
        assert_eq!(drive(&mut search, slices), [1, 2, 4, 3, 2]);
        let failed = search.steps[2];
        assert_eq!((failed.depth, failed.requests, failed.met), (4, 51, false));
        assert_eq!(search.outcome().depth, Some(2));
    }

    #[test]
    fn a_target_depth_1_misses_ends_with_no_depth_and_depth_1s_figure() {
        let mut search = DepthSearch::new(target(99), 8);
        assert_eq!(drive(&mut search, |_| (1_800_000, 1_800_000)), [1]);
        let outcome = search.outcome();
        assert_eq!((outcome.depth, outcome.measured_depth), (None, 1));
        assert_eq!(
            outcome.describe(),
            "no depth meets p99 <= 1.00 ms; depth 1's p99 is 1.80 ms (measured at depth 1; depths judged: 1)"
        );
    }

    #[test]
    fn a_target_every_depth_meets_climbs_to_the_cells_depth_and_stays() {
        let mut search = DepthSearch::new(target(99), 6);
        // 1, 2, 4, then 8 clamped to 6; at 6 twice 6 clamps to 6 again: settled.
        assert_eq!(drive(&mut search, |_| (20_000, 20_000)), [1, 2, 4, 6]);
        assert_eq!(search.outcome().depth, Some(6));
    }

    #[test]
    fn a_failure_drains_the_queue_before_the_next_window_counts() {
        let mut search = DepthSearch::new(target(100), 8);
        search.depth = 4;
        search.completed(5 * MS, MS, 3);
        assert_eq!((search.depth, search.draining), (2, true));
        assert!(!search.has_room(0), "nothing new goes while the queue drains");
        // Completions while draining are not judged, however slow.
        search.completed(50 * MS, 2 * MS, 1);
        search.completed(50 * MS, 3 * MS, 0);
        assert!(!search.draining && search.has_room(1) && !search.has_room(2));
        assert_eq!((search.requests, search.window_start_ns, search.steps.len()), (0, 3 * MS, 1));
    }

    #[test]
    fn keep_adjusting_never_settles_and_reports_where_it_stands() {
        let mut search = DepthSearch::new(LatencyTarget { keep_adjusting: true, ..target(99) }, 8);
        let mut now = 0;
        for _ in 0..20 {
            for _ in 0..100 {
                now += MS;
                search.completed(20_000, now, 0);
            }
        }
        let outcome = search.outcome();
        assert!(search.finished.is_none());
        assert_eq!((outcome.depth, outcome.measured_depth, outcome.settled), (Some(8), 8, false));
        assert!(outcome.describe().ends_with("kept adjusting through the cell: the depth at its end)"));
    }

    #[test]
    fn percentiles_are_named_as_messages_name_them() {
        assert_eq!(target(99).percentile_name(), "p99");
        let p999 = LatencyTarget { percentile_hundredths: 9990, ..target(99) };
        assert_eq!(p999.percentile_name(), "p99.9");
        assert_eq!(target(100).percentile_name(), "p100");
    }
}
