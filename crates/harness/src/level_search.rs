//! The climb of fio 3.33's latency target search (io_u.c: `lat_target_success`,
//! `__lat_target_failed`) over whole levels 1..=top, apart from what a level is: a queue depth
//! (the access suite), an offered rate in steps (the personality and metadata suites). The
//! caller runs each level for a window, judges it, and says [`LevelSearch::met`] or
//! [`LevelSearch::failed`]; the search says which level comes next, or that it is over.
//!
//! fio's rule, in words: the search starts at level 1, between a low of 1 and a high of the top.
//! A level that met the target becomes the low, and the next level is twice this one while the
//! high is still the top (nothing failed yet), else halfway to the high; when that next level is
//! this one, the search has settled here. A level that failed becomes the high, the low steps
//! down one when it was this level, and the next level is halfway to the low. Three successes in
//! a row one below the high raise the high by one (fio's stable count; a search that settles
//! stops before it counts three, a search that keeps adjusting does not).
//!
//! Where iomatrix differs: fio keeps a failing level 1 and runs on; here a failing level 1 is
//! [`Next::Unmet`], so no caller reports a level that did not meet the target.
//!
//! The levels live with the caller (fio's `latency_qd` lives in the thread, too): the caller may
//! hold a level while its queue drains, or move it for its own reasons, and passes the level it
//! judged. What the caller owns besides: windows, draining, the bound on windows.

/// What comes after a judged level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Run this level next (a new window).
    Level(u32),
    /// The search settled: this level met the target and the rule goes no higher.
    Settled(u32),
    /// Level 1 failed: no level meets the target. The search's state is unchanged (a caller
    /// that keeps adjusting runs level 1 again).
    Unmet,
}

/// The search's state between windows: fio's low, high and stable count, and the top.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LevelSearch {
    /// The highest level tried (fio's iodepth): doubling stops here.
    top: u32,
    /// The highest level known to meet the target (1 before any did).
    low: u32,
    /// The lowest level known to fail (the top before any did, plus stable raises).
    high: u32,
    /// Successes in a row one below the high (fio's latency_stable_count).
    stable: u32,
}

impl LevelSearch {
    /// The level every search starts at.
    pub const FIRST: u32 = 1;

    /// A search over levels 1..=`top` (a top of 0 is taken as 1).
    pub fn new(top: u32) -> LevelSearch {
        let top = top.max(1);
        LevelSearch { top, low: 1, high: top, stable: 0 }
    }

    /// The highest level this search tries.
    pub fn top(&self) -> u32 {
        self.top
    }

    /// `level` met the target (fio's lat_target_success): climb by doubling until something
    /// failed, then halfway to the high; settled when the next level is this one.
    pub fn met(&mut self, level: u32) -> Next {
        self.low = level;
        if level + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        let next = if self.high == self.top { level.saturating_mul(2) } else { u32::midpoint(level, self.high) };
        let next = next.min(self.top);
        if next == level {
            Next::Settled(level)
        } else {
            Next::Level(next)
        }
    }

    /// `level` failed the target (fio's __lat_target_failed): step down halfway to the low; at
    /// level 1 the search is unmet.
    pub fn failed(&mut self, level: u32) -> Next {
        if level <= 1 {
            return Next::Unmet;
        }
        self.high = level;
        if level == self.low {
            self.low -= 1;
        }
        self.stable = 0;
        Next::Level(u32::midpoint(level, self.low))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search to its end with `meets(level)` judging each level; the levels judged and the end.
    fn climb(top: u32, meets: impl Fn(u32) -> bool) -> (Vec<u32>, Next) {
        let mut search = LevelSearch::new(top);
        let mut level = LevelSearch::FIRST;
        let mut judged = Vec::new();
        for _ in 0..64 {
            judged.push(level);
            let next = if meets(level) { search.met(level) } else { search.failed(level) };
            match next {
                Next::Level(l) => level = l,
                ended => return (judged, ended),
            }
        }
        panic!("no end after 64 levels: {judged:?}");
    }

    #[test]
    fn it_doubles_until_a_failure_then_bisects_to_the_highest_level_that_meets() {
        // fio's rule by hand at top 8, levels up to 2 meeting: 1, 2, 4 (fails: high 4, halfway to
        // the low 2: 3), 3 (fails: high 3, 2), 2 (meets; 2 + 1 is the high; halfway is 2: settled).
        assert_eq!(climb(8, |l| l <= 2), (vec![1, 2, 4, 3, 2], Next::Settled(2)));
        // The personality's 20 steps of 5%: meeting up to 13 (65%).
        assert_eq!(climb(20, |l| l <= 13), (vec![1, 2, 4, 8, 16, 12, 14, 13], Next::Settled(13)));
    }

    #[test]
    fn every_level_meeting_climbs_to_the_top_and_settles_there() {
        assert_eq!(climb(6, |_| true), (vec![1, 2, 4, 6], Next::Settled(6)));
        assert_eq!(climb(20, |_| true), (vec![1, 2, 4, 8, 16, 20], Next::Settled(20)));
        assert_eq!(climb(1, |_| true), (vec![1], Next::Settled(1)));
    }

    #[test]
    fn level_1_failing_is_unmet_and_leaves_the_state_as_it_was() {
        assert_eq!(climb(20, |_| false), (vec![1], Next::Unmet));
        let mut search = LevelSearch::new(20);
        let before = search;
        assert_eq!(search.failed(1), Next::Unmet);
        assert_eq!(search, before);
    }

    #[test]
    fn a_failure_at_the_low_steps_the_low_down_one() {
        // 1 and 2 meet (low 2), 4 fails (3), 3 fails (2), then 2 fails too (the device got slower):
        // the low was 2, so it becomes 1 and the next level is halfway to it.
        let mut search = LevelSearch::new(8);
        assert_eq!(search.met(1), Next::Level(2));
        assert_eq!(search.met(2), Next::Level(4));
        assert_eq!(search.failed(4), Next::Level(3));
        assert_eq!(search.failed(3), Next::Level(2));
        assert_eq!(search.failed(2), Next::Level(1));
        assert_eq!(search.met(1), Next::Settled(1), "1 + 1 is the high (2): halfway is 1 again");
    }

    #[test]
    fn three_successes_one_below_the_high_raise_it_for_a_search_that_keeps_adjusting() {
        let mut search = LevelSearch::new(8);
        search.met(1);
        search.met(2);
        search.failed(4);
        assert_eq!(search.failed(3), Next::Level(2));
        // A caller that keeps adjusting stays at a settled level and judges it again.
        assert_eq!(search.met(2), Next::Settled(2));
        assert_eq!(search.met(2), Next::Settled(2));
        // The third success in a row one below the high (3) raises the high to 4: halfway is 3.
        assert_eq!(search.met(2), Next::Level(3));
    }
}
