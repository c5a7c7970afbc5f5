//! A queued request's latency in fio's two parts: submission (`slat`: from the request's issue
//! to the return of the call that hands it over) and completion (`clat`: from that return to
//! the completion seen). Their sum is the request's latency (`lat`), the histogram every access
//! cell keeps. Only queued files (io_uring, a protocol client's queue) have two parts: a
//! synchronous call issues and completes a request in one, as fio's psync does (fio prints no
//! slat for it either).
//!
//! fio prints slat's minimum, maximum, mean and deviation only, so slat is kept as running
//! [`Moments`] (no histogram); clat, whose percentiles fio prints, is a histogram per direction.

use iomatrix_stats::Latency;
use serde::{Deserialize, Serialize};

/// Count, extremes, sum and sum of squares of some latencies (ns): what fio's slat line and
/// `slat_ns` print (min, max, mean, stdev, N), merged exactly over clients.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Moments {
    /// How many were recorded.
    pub count: u64,
    /// The smallest (ns); 0 when none.
    pub min_ns: u64,
    /// The largest (ns).
    pub max_ns: u64,
    /// Their sum (ns).
    pub sum_ns: f64,
    /// The sum of their squares (ns²).
    pub sum_sq_ns: f64,
}

impl Moments {
    /// Records one latency.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.min_ns = if self.count == 0 { ns } else { self.min_ns.min(ns) };
        self.max_ns = self.max_ns.max(ns);
        self.count += 1;
        let x = ns as f64;
        self.sum_ns += x;
        self.sum_sq_ns += x * x;
    }

    /// Adds another's latencies.
    pub fn merge(&mut self, other: &Moments) {
        if other.count == 0 {
            return;
        }
        self.min_ns = if self.count == 0 { other.min_ns } else { self.min_ns.min(other.min_ns) };
        self.max_ns = self.max_ns.max(other.max_ns);
        self.count += other.count;
        self.sum_ns += other.sum_ns;
        self.sum_sq_ns += other.sum_sq_ns;
    }

    /// The mean (ns); 0 when none.
    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns / self.count as f64
        }
    }

    /// The sample standard deviation (ns), as fio's stdev (n - 1); 0 under two values.
    pub fn stddev_ns(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        let n = self.count as f64;
        ((self.sum_sq_ns - self.sum_ns * self.sum_ns / n) / (n - 1.0)).max(0.0).sqrt()
    }
}

/// One client's (or a cell's merged) submission and completion latencies, reads and writes
/// apart.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SubmitSplit {
    /// Reads' submission latencies.
    pub slat_reads: Moments,
    /// Writes' submission latencies.
    pub slat_writes: Moments,
    /// Reads' completion latencies.
    pub clat_reads: Latency,
    /// Writes' completion latencies.
    pub clat_writes: Latency,
}

impl SubmitSplit {
    /// Records one queued request: issued at `issued`, handed over at `submitted`, its
    /// completion seen at `completed` (the latency clock's nanoseconds).
    #[inline]
    pub fn record(&mut self, write: bool, issued: u64, submitted: u64, completed: u64) {
        let slat = submitted.saturating_sub(issued);
        let clat = completed.saturating_sub(submitted);
        if write {
            self.slat_writes.record(slat);
            self.clat_writes.record(clat);
        } else {
            self.slat_reads.record(slat);
            self.clat_reads.record(clat);
        }
    }

    /// Adds another client's.
    pub fn merge(&mut self, other: &SubmitSplit) {
        self.slat_reads.merge(&other.slat_reads);
        self.slat_writes.merge(&other.slat_writes);
        self.clat_reads.merge(&other.clat_reads);
        self.clat_writes.merge(&other.clat_writes);
    }

    /// The clients' splits merged; None when none of them had one.
    pub fn merged<'a>(splits: impl Iterator<Item = &'a SubmitSplit>) -> Option<SubmitSplit> {
        splits.fold(None, |total: Option<SubmitSplit>, s| {
            let mut total = total.unwrap_or_default();
            total.merge(s);
            Some(total)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_give_fios_mean_and_sample_deviation_and_merge_exactly() {
        let mut a = Moments::default();
        for ns in [2, 4, 4, 4] {
            a.record(ns);
        }
        let mut b = Moments::default();
        for ns in [5, 5, 7, 9] {
            b.record(ns);
        }
        a.merge(&b);
        assert_eq!((a.count, a.min_ns, a.max_ns), (8, 2, 9));
        assert_eq!(a.mean_ns(), 5.0);
        // Sum of squared deviations 32 over n - 1 = 7.
        assert!((a.stddev_ns() - (32.0f64 / 7.0).sqrt()).abs() < 1e-9, "{}", a.stddev_ns());
        let mut empty = Moments::default();
        empty.merge(&Moments::default());
        assert_eq!((empty.count, empty.mean_ns(), empty.stddev_ns()), (0, 0.0, 0.0));
    }

    #[test]
    fn a_request_splits_into_submission_and_completion_that_add_up_to_its_latency() {
        let mut split = SubmitSplit::default();
        split.record(false, 1_000, 1_300, 11_300);
        split.record(true, 2_000, 2_050, 2_550);
        assert_eq!(split.slat_reads.max_ns, 300);
        // The histogram holds 3 significant digits.
        let clat = split.clat_reads.quantile_ns(1.0);
        assert!(clat.abs_diff(10_000) <= 10, "clat {clat} ns; slat 300 + clat 10000 is the request's 10300");
        assert_eq!((split.slat_writes.max_ns, split.clat_writes.count()), (50, 1));
        let merged = SubmitSplit::merged([split.clone(), split].iter()).unwrap();
        assert_eq!((merged.slat_reads.count, merged.clat_writes.count()), (2, 2));
        assert!(SubmitSplit::merged(std::iter::empty()).is_none());
    }
}
