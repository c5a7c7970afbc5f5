//! fio's "IO depths", "submit" and "complete" distributions, counted by the request loop into
//! fixed arrays (a few adds per round, nothing allocated): how deep the queue was as requests
//! went in, how many requests each round of submissions carried, how many completions each reap
//! brought back. fio 3.33's buckets (its io_u.c) and shares (its stat.c's stat_calc_dist).

use serde::{Deserialize, Serialize};

/// fio's names of the depth buckets (`IO depths`, JSON `iodepth_level`): 1, 2-3, 4-7, 8-15,
/// 16-31, 32-63, 64 and more requests in flight.
pub const LEVEL_LABELS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
/// fio's names of the per-call buckets (`submit`, `complete`, JSON `iodepth_submit` and
/// `iodepth_complete`): 0, 1-4, 5-8, 9-16, 17-32, 33-64, more than 64 requests in one call.
pub const CALL_LABELS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];

/// One cell's (or one client's) three distributions, as counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueDepths {
    /// Requests by the depth in flight, themselves included, when their round went in (fio's
    /// io_u_map: each request of a commit counted at the depth after it).
    pub level: [u64; 7],
    /// Rounds of submissions by the requests each carried (fio's io_u_submit); a round that
    /// issued nothing is no submission.
    pub submit: [u64; 7],
    /// Reaps by the completions each brought back, none included (fio's io_u_complete).
    pub complete: [u64; 7],
}

impl QueueDepths {
    /// A round put `requests` in, leaving `in_flight` requests in flight.
    #[inline]
    pub fn submitted(&mut self, requests: u32, in_flight: u32) {
        if requests == 0 {
            return;
        }
        self.level[level_bucket(in_flight)] += u64::from(requests);
        self.submit[call_bucket(requests as usize)] += 1;
    }

    /// A reap brought back `completions`.
    #[inline]
    pub fn reaped(&mut self, completions: usize) {
        self.complete[call_bucket(completions)] += 1;
    }

    /// The clients' counts added.
    pub fn sum<'a>(each: impl Iterator<Item = &'a QueueDepths>) -> QueueDepths {
        let mut total = QueueDepths::default();
        for d in each {
            for (t, c) in
                [(&mut total.level, &d.level), (&mut total.submit, &d.submit), (&mut total.complete, &d.complete)]
            {
                t.iter_mut().zip(c).for_each(|(t, c)| *t += c);
            }
        }
        total
    }
}

/// fio's shares of one distribution: each bucket's percent of the counts, a bucket that holds
/// anything at least 0.1% (so it never prints as 0.0%); all 0 where nothing was counted.
pub fn shares(counts: &[u64; 7]) -> [f64; 7] {
    let total: u64 = counts.iter().sum();
    counts.map(|n| match (total, n) {
        (0, _) | (_, 0) => 0.0,
        _ => (n as f64 * 100.0 / total as f64).max(0.1),
    })
}

fn level_bucket(in_flight: u32) -> usize {
    match in_flight {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

fn call_bucket(requests: usize) -> usize {
    match requests {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_fios() {
        let mut d = QueueDepths::default();
        d.submitted(4, 4);
        d.submitted(1, 1);
        d.submitted(3, 64);
        d.submitted(0, 7);
        d.reaped(0);
        d.reaped(5);
        d.reaped(65);
        assert_eq!(d.level, [1, 0, 4, 0, 0, 0, 3]);
        assert_eq!(d.submit, [0, 3, 0, 0, 0, 0, 0]);
        assert_eq!(d.complete, [1, 0, 1, 0, 0, 0, 1]);
    }

    #[test]
    fn a_share_that_holds_anything_shows_at_least_a_tenth() {
        let s = shares(&[1, 0, 9_999, 0, 0, 0, 0]);
        assert_eq!(s[0], 0.1);
        assert!((s[2] - 99.99).abs() < 1e-9, "{s:?}");
        assert_eq!(s[1], 0.0);
        assert_eq!(shares(&[0; 7]), [0.0; 7]);
    }

    #[test]
    fn clients_add() {
        let mut a = QueueDepths::default();
        a.submitted(2, 2);
        let mut b = QueueDepths::default();
        b.submitted(2, 2);
        b.reaped(1);
        let total = QueueDepths::sum([a, b].iter());
        assert_eq!((total.level[1], total.submit[1], total.complete[1]), (4, 2, 1));
    }
}
