//! Figures over time inside one cell: per-interval operations, bytes (reads and writes apart),
//! mean and p99 latency.
//!
//! - [`SeriesRecorder`]: one client's recorder, on its hot path. Recording a completion is a
//!   compare and a few adds into the interval under way (its counters and a small fixed
//!   log-linear histogram); no allocation. Only when an interval ends is it closed into the
//!   client's list (its histogram kept sparse: the buckets that counted).
//! - [`ClientSeries`]: what a client hands to rank 0 (it crosses MPI ranks by serde).
//! - [`Series`]: the clients merged interval by interval, as a cell stores it. Each interval has
//!   its own length: the last, cut by the cell's end, is shorter, and a rate over it is its count
//!   over ITS length, never over the nominal interval.
//!
//! The bound: a client keeps at most [`MAX_INTERVALS`] intervals. Past it, neighbouring
//! intervals are merged pairwise (counts added, histograms added) and the interval length
//! doubles; the stored series says how often (`merges`) and what was asked (`asked_interval_ns`).
//!
//! Intervals count from each client's own start of its timed loop; the clients are let go
//! together at the cell's barrier, so the same interval of two clients covers the same time
//! within the barrier's release spread.
//!
//! The p99 of an interval comes from the small per-interval histogram, not from the cell's HDR
//! histograms: 16 buckets per power of two, each value read as its bucket's midpoint, so a
//! percentile is within 1/32 (3.1%) of the true latency at that rank.

use serde::{Deserialize, Serialize};

/// The most intervals a client keeps (and so a cell stores); past it they are merged pairwise.
pub const MAX_INTERVALS: usize = 3_600;
/// The interval when none is asked: one second.
pub const DEFAULT_INTERVAL_NS: u64 = 1_000_000_000;

/// Sub-buckets per power of two, as a power of two.
const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;
/// Buckets for every u64: the first `SUB` values exactly, then `SUB` per power of two.
const BUCKETS: usize = ((64 - SUB_BITS as usize) + 1) * SUB as usize;

/// The histogram bucket of a latency in ns.
#[inline]
fn bucket_of(ns: u64) -> usize {
    if ns < SUB {
        return ns as usize;
    }
    let exp = ns.ilog2();
    let sub = (ns >> (exp - SUB_BITS)) & (SUB - 1);
    (u64::from(exp - SUB_BITS + 1) * SUB + sub) as usize
}

/// The latency a bucket stands for: its midpoint (its value where it holds one value).
fn value_of(bucket: usize) -> u64 {
    let b = bucket as u64;
    if b < SUB {
        return b;
    }
    let exp = (b / SUB) as u32 + SUB_BITS - 1;
    let sub = b % SUB;
    let low = (1u64 << exp) | (sub << (exp - SUB_BITS));
    let width = 1u64 << (exp - SUB_BITS);
    low.saturating_add(width / 2)
}

/// One interval of one client (or of clients merged): counts, the latencies' sum, and the
/// buckets of its histogram that counted, as (bucket, count) in bucket order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientInterval {
    /// Its length in ns: the series' interval, or less for the last.
    pub length_ns: u64,
    /// Reads completed in it.
    pub reads: u64,
    /// Writes completed in it.
    pub writes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// The sum of its operations' latencies, in ns.
    pub latency_sum_ns: f64,
    /// Its latency histogram's counted buckets, (bucket, count), in bucket order.
    pub buckets: Vec<(u16, u32)>,
}

impl ClientInterval {
    fn empty(length_ns: u64) -> ClientInterval {
        ClientInterval { length_ns, ..ClientInterval::default() }
    }

    /// Adds `other`'s counts and histogram; the length is the longer one's (two clients'
    /// same interval) unless `consecutive`, where the lengths add (two neighbours merged).
    fn absorb(&mut self, other: &ClientInterval, consecutive: bool) {
        self.length_ns =
            if consecutive { self.length_ns + other.length_ns } else { self.length_ns.max(other.length_ns) };
        self.reads += other.reads;
        self.writes += other.writes;
        self.read_bytes += other.read_bytes;
        self.write_bytes += other.write_bytes;
        self.latency_sum_ns += other.latency_sum_ns;
        self.buckets = merge_buckets(&self.buckets, &other.buckets);
    }

    /// The latency at quantile `q` (0..=1) from its histogram; 0 for no operations.
    fn quantile_ns(&self, q: f64) -> u64 {
        let total: u64 = self.buckets.iter().map(|&(_, n)| u64::from(n)).sum();
        if total == 0 {
            return 0;
        }
        let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for &(b, n) in &self.buckets {
            seen += u64::from(n);
            if seen >= rank {
                return value_of(b as usize);
            }
        }
        self.buckets.last().map_or(0, |&(b, _)| value_of(b as usize))
    }
}

/// Two sparse histograms added, in bucket order.
fn merge_buckets(a: &[(u16, u32)], b: &[(u16, u32)]) -> Vec<(u16, u32)> {
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(&(x, n)), Some(&(y, m))) if x == y => {
                out.push((x, n.saturating_add(m)));
                i += 1;
                j += 1;
            }
            (Some(&(x, n)), Some(&(y, _))) if x < y => {
                out.push((x, n));
                i += 1;
            }
            (Some(_) | None, Some(&(y, m))) => {
                out.push((y, m));
                j += 1;
            }
            (Some(&(x, n)), None) => {
                out.push((x, n));
                i += 1;
            }
            (None, None) => break,
        }
    }
    out
}

/// One client's series as it hands it over: the interval asked, the interval kept (asked x 2^k
/// after merges), and its intervals from its start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientSeries {
    /// The interval asked (`--interval`), in ns.
    pub asked_interval_ns: u64,
    /// The interval kept, in ns: asked x 2^merges.
    pub interval_ns: u64,
    /// Its intervals in order; the last may be shorter.
    pub intervals: Vec<ClientInterval>,
}

impl ClientSeries {
    /// Merges neighbours pairwise (0+1, 2+3, ...): half as many intervals, twice as long.
    fn halve(&mut self) {
        let merged = self
            .intervals
            .chunks(2)
            .map(|pair| {
                let mut first = pair[0].clone();
                if let Some(second) = pair.get(1) {
                    first.absorb(second, true);
                }
                first
            })
            .collect();
        self.intervals = merged;
        self.interval_ns *= 2;
    }

    /// Merges pairwise until the interval is `interval_ns` (a multiple of 2 of its own).
    fn coarsen_to(&mut self, interval_ns: u64) {
        while self.interval_ns < interval_ns && !self.intervals.is_empty() {
            self.halve();
        }
        self.interval_ns = self.interval_ns.max(interval_ns);
    }

    /// Several series (clients, or a client's connections) added interval by interval, histograms
    /// kept: each coarsened to the longest interval kept, counts and histograms added, an
    /// interval's length the longest part's. What a client that runs many connections hands on,
    /// to be merged again with the other clients' ([`Series::of`] then reads it).
    pub fn merge(parts: &[&ClientSeries]) -> ClientSeries {
        let asked = parts.iter().map(|c| c.asked_interval_ns).max().unwrap_or(DEFAULT_INTERVAL_NS);
        let interval_ns = parts.iter().map(|c| c.interval_ns).max().unwrap_or(asked);
        let mut merged: Vec<ClientInterval> = Vec::new();
        for part in parts {
            let mut c = (*part).clone();
            c.coarsen_to(interval_ns);
            if merged.len() < c.intervals.len() {
                merged.resize(c.intervals.len(), ClientInterval::default());
            }
            for (total, i) in merged.iter_mut().zip(&c.intervals) {
                total.absorb(i, false);
            }
        }
        ClientSeries { asked_interval_ns: asked, interval_ns, intervals: merged }
    }
}

/// A client's per-interval recorder. Times are ns since the client's start of its timed loop.
pub struct SeriesRecorder {
    series: ClientSeries,
    /// The end of the interval under way, in ns.
    current_end_ns: u64,
    current: ClientInterval,
    histogram: Box<[u64; BUCKETS]>,
}

impl SeriesRecorder {
    /// A recorder of intervals of `interval_ns` (at least 1).
    pub fn new(interval_ns: u64) -> SeriesRecorder {
        let interval_ns = interval_ns.max(1);
        SeriesRecorder {
            series: ClientSeries { asked_interval_ns: interval_ns, interval_ns, intervals: Vec::new() },
            current_end_ns: interval_ns,
            current: ClientInterval::empty(interval_ns),
            histogram: Box::new([0; BUCKETS]),
        }
    }

    /// One completion at `now_ns`, of `bytes`, after `latency_ns`: an add into the interval under
    /// way (closed first when `now_ns` is past its end).
    #[inline]
    pub fn record(&mut self, now_ns: u64, latency_ns: u64, bytes: u64, write: bool) {
        if now_ns >= self.current_end_ns {
            self.roll_to(now_ns);
        }
        let c = &mut self.current;
        if write {
            c.writes += 1;
            c.write_bytes += bytes;
        } else {
            c.reads += 1;
            c.read_bytes += bytes;
        }
        c.latency_sum_ns += latency_ns as f64;
        self.histogram[bucket_of(latency_ns)] += 1;
    }

    /// `ops` completions at `now_ns` timed together over `latency_ns` (a suite that times a batch
    /// of calls as one operation: bonnie's chunk of per-character calls), moving `bytes` in all:
    /// each counted with the batch's mean latency, so the interval's operations and latency sum
    /// are exact and its p99 is of the batches' means.
    pub fn record_many(&mut self, now_ns: u64, ops: u64, latency_ns: u64, bytes: u64, write: bool) {
        if ops == 0 {
            return;
        }
        if now_ns >= self.current_end_ns {
            self.roll_to(now_ns);
        }
        let c = &mut self.current;
        if write {
            c.writes += ops;
            c.write_bytes += bytes;
        } else {
            c.reads += ops;
            c.read_bytes += bytes;
        }
        c.latency_sum_ns += latency_ns as f64;
        self.histogram[bucket_of(latency_ns / ops)] += ops;
    }

    /// Bytes moved at `now_ns` by an operation counted as the other kind (bonnie's seek, a read
    /// that writes its chunk back): in the interval's bytes, with no operation of their own.
    pub fn add_bytes(&mut self, now_ns: u64, bytes: u64, write: bool) {
        if now_ns >= self.current_end_ns {
            self.roll_to(now_ns);
        }
        if write {
            self.current.write_bytes += bytes;
        } else {
            self.current.read_bytes += bytes;
        }
    }

    /// Closes intervals until the one under way holds `now_ns`: the one under way, then an
    /// empty one for each interval with no completion.
    #[cold]
    fn roll_to(&mut self, now_ns: u64) {
        while now_ns >= self.current_end_ns {
            self.close_current(self.series.interval_ns);
        }
    }

    /// Closes the interval under way with `length_ns`, keeping the bound.
    fn close_current(&mut self, length_ns: u64) {
        let mut closed = std::mem::replace(&mut self.current, ClientInterval::empty(self.series.interval_ns));
        closed.length_ns = length_ns;
        closed.buckets = self.take_buckets();
        self.series.intervals.push(closed);
        if self.series.intervals.len() >= MAX_INTERVALS {
            self.series.halve();
        }
        // Every kept interval is whole but the last: the next one ends at the kept count's end.
        let kept = self.series.intervals.len() as u64;
        self.current_end_ns = (kept + 1) * self.series.interval_ns;
        self.current.length_ns = self.series.interval_ns;
    }

    fn take_buckets(&mut self) -> Vec<(u16, u32)> {
        let mut out = Vec::new();
        for (b, n) in self.histogram.iter_mut().enumerate() {
            if *n > 0 {
                // A bucket past 4 Gi operations in one interval is held at that: only the
                // percentile reads the buckets, the counts above are exact.
                out.push((b as u16, u32::try_from(*n).unwrap_or(u32::MAX)));
                *n = 0;
            }
        }
        out
    }

    /// The memory a recorder of `intervals` intervals keeps, at most: its histogram, and each
    /// kept interval with the buckets of latencies over 8 powers of two (a spread of 256 x
    /// between the fastest and the slowest; a wider one keeps more).
    pub fn footprint(intervals: u64) -> u64 {
        let kept = intervals.min(MAX_INTERVALS as u64);
        let interval = std::mem::size_of::<ClientInterval>() as u64 + 8 * SUB * 8;
        (BUCKETS * 8) as u64 + kept * interval
    }

    /// The series at the end of the loop, `end_ns` after its start: the interval under way kept
    /// with its own length (the part of it that ran).
    pub fn finish(mut self, end_ns: u64) -> ClientSeries {
        if end_ns >= self.current_end_ns {
            self.roll_to(end_ns);
        }
        let start = self.current_end_ns - self.series.interval_ns;
        let length = end_ns.saturating_sub(start);
        if length > 0 || self.current.reads + self.current.writes > 0 {
            self.close_current(length.max(1));
        }
        self.series
    }
}

/// One interval of a cell, merged over its clients: what `show --series` prints and the report
/// draws.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Its start, ns from the cell's start.
    pub start_ns: u64,
    /// Its own length in ns (the last is cut by the cell's end: shorter).
    pub length_ns: u64,
    /// Reads completed in it, all clients.
    pub reads: u64,
    /// Writes completed in it, all clients.
    pub writes: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// The mean latency of its operations, in ns (0 for none).
    pub mean_ns: f64,
    /// The 99th percentile of its operations' latency, in ns (0 for none).
    pub p99_ns: u64,
}

impl Interval {
    /// Operations, reads and writes.
    pub fn ops(&self) -> u64 {
        self.reads + self.writes
    }

    /// Bytes, read and written.
    pub fn bytes(&self) -> u64 {
        self.read_bytes + self.write_bytes
    }

    /// Operations per second over its own length.
    pub fn ops_per_sec(&self) -> f64 {
        per_sec(self.ops() as f64, self.length_ns)
    }

    /// MiB per second over its own length.
    pub fn mib_per_sec(&self) -> f64 {
        per_sec(self.bytes() as f64 / (1024.0 * 1024.0), self.length_ns)
    }
}

fn per_sec(x: f64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        x * 1e9 / ns as f64
    }
}

/// A cell's series, merged over its clients, as the cell stores it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// The interval asked, in ns.
    pub asked_interval_ns: u64,
    /// The interval kept, in ns: asked x 2^merges (merged pairwise past [`MAX_INTERVALS`]).
    pub interval_ns: u64,
    /// How many times the intervals were merged pairwise to stay within the bound.
    pub merges: u32,
    /// The clients merged.
    pub clients: usize,
    /// The intervals in order; the last may be shorter.
    pub intervals: Vec<Interval>,
}

impl Series {
    /// The clients' series merged interval by interval ([`ClientSeries::merge`]).
    pub fn merge(clients: &[&ClientSeries]) -> Series {
        Series::of(&ClientSeries::merge(clients), clients.len())
    }

    /// A series already merged over `clients` clients ([`ClientSeries::merge`]), as stored.
    pub fn of(merged: &ClientSeries, clients: usize) -> Series {
        let (asked, interval_ns) = (merged.asked_interval_ns, merged.interval_ns);
        let intervals = merged
            .intervals
            .iter()
            .enumerate()
            .map(|(k, i)| {
                let ops = i.reads + i.writes;
                Interval {
                    start_ns: k as u64 * interval_ns,
                    length_ns: i.length_ns,
                    reads: i.reads,
                    writes: i.writes,
                    read_bytes: i.read_bytes,
                    write_bytes: i.write_bytes,
                    mean_ns: if ops == 0 { 0.0 } else { i.latency_sum_ns / ops as f64 },
                    p99_ns: i.quantile_ns(0.99),
                }
            })
            .collect();
        let merges = (interval_ns / asked.max(1)).max(1).ilog2();
        Series { asked_interval_ns: asked, interval_ns, merges, clients, intervals }
    }

    /// Operations over every interval.
    pub fn ops(&self) -> u64 {
        self.intervals.iter().map(Interval::ops).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_hold_their_values_within_a_thirty_second() {
        for v in [0u64, 1, 15, 16, 17, 100, 999, 12_345, 1_000_000, 987_654_321, u64::MAX / 3] {
            let back = value_of(bucket_of(v));
            let err = (back as f64 - v as f64).abs() / (v.max(1) as f64);
            assert!(err <= 1.0 / 32.0 + 1e-12, "{v} read back as {back}");
        }
        assert!(bucket_of(u64::MAX) < BUCKETS);
        let mut last = 0;
        for v in (0..100_000u64).step_by(7) {
            assert!(bucket_of(v) >= last, "buckets out of order at {v}");
            last = bucket_of(v);
        }
    }

    #[test]
    fn each_interval_counts_its_own_completions_and_the_last_keeps_its_length() {
        let mut r = SeriesRecorder::new(1_000);
        for t in [10, 500, 999] {
            r.record(t, 100, 4096, false);
        }
        r.record(1_000, 200, 4096, true);
        r.record(3_100, 300, 4096, false);
        let s = r.finish(3_250);
        let lengths: Vec<u64> = s.intervals.iter().map(|i| i.length_ns).collect();
        assert_eq!(lengths, vec![1_000, 1_000, 1_000, 250]);
        let ops: Vec<u64> = s.intervals.iter().map(|i| i.reads + i.writes).collect();
        assert_eq!(ops, vec![3, 1, 0, 1]);
        let merged = Series::merge(&[&s]);
        assert_eq!(merged.ops(), 5);
        // The last interval's rate is over its own 250 ns, not over 1,000.
        assert_eq!(merged.intervals[3].ops_per_sec(), 1e9 / 250.0);
        assert_eq!(merged.intervals[3].start_ns, 3_000);
    }

    #[test]
    fn a_batch_counts_every_call_with_its_mean_latency() {
        let mut r = SeriesRecorder::new(1_000);
        r.record_many(100, 8_192, 8_192 * 50, 8_192, true);
        r.record_many(200, 0, 999, 1, false);
        r.record(300, 50, 1, false);
        r.add_bytes(350, 4_096, true);
        let s = Series::merge(&[&r.finish(400)]);
        assert_eq!((s.intervals[0].writes, s.intervals[0].reads), (8_192, 1));
        assert_eq!(s.intervals[0].write_bytes, 8_192 + 4_096);
        assert!((s.intervals[0].mean_ns - 50.0).abs() < 1e-9, "{}", s.intervals[0].mean_ns);
        assert!((s.intervals[0].p99_ns as f64 - 50.0).abs() <= 50.0 / 32.0, "{}", s.intervals[0].p99_ns);
    }

    #[test]
    fn ten_thousand_intervals_are_merged_pairwise_within_the_bound_and_keep_every_operation() {
        let mut r = SeriesRecorder::new(1_000);
        for k in 0..10_000u64 {
            r.record(k * 1_000 + 1, 1_000 + k, 512, k % 2 == 0);
        }
        let s = r.finish(10_000 * 1_000 - 500);
        assert!(s.intervals.len() <= MAX_INTERVALS, "{} intervals", s.intervals.len());
        // 10,000 > 3,600 x 2: merged twice, each interval 4 x the asked one.
        assert_eq!(s.interval_ns, 4_000);
        let merged = Series::merge(&[&s]);
        assert_eq!(merged.merges, 2);
        assert_eq!(merged.asked_interval_ns, 1_000);
        assert_eq!(merged.ops(), 10_000);
        assert_eq!(merged.intervals.iter().map(|i| i.read_bytes + i.write_bytes).sum::<u64>(), 10_000 * 512);
        let total_length: u64 = merged.intervals.iter().map(|i| i.length_ns).sum();
        assert_eq!(total_length, 10_000 * 1_000 - 500);
        let last = merged.intervals.last().unwrap();
        assert_eq!(last.length_ns, 4_000 - 500, "the last keeps its own length");
        for (k, i) in merged.intervals.iter().enumerate() {
            assert_eq!(i.start_ns, k as u64 * 4_000);
        }
    }

    #[test]
    fn clients_are_merged_interval_by_interval_with_their_percentiles() {
        let mut a = SeriesRecorder::new(1_000);
        let mut b = SeriesRecorder::new(1_000);
        for k in 0..99 {
            a.record(k, 1_000, 1, false);
        }
        b.record(50, 1_000_000, 1, false);
        b.record(1_500, 10, 1, true);
        let (a, b) = (a.finish(1_000), b.finish(1_700));
        let s = Series::merge(&[&a, &b]);
        assert_eq!(s.clients, 2);
        assert_eq!(s.intervals.len(), 2);
        assert_eq!(s.intervals[0].reads, 100);
        // 100 operations: the 99th is the slowest of the fast ones; one slow in 100 is the 100th.
        assert!((s.intervals[0].p99_ns as f64 - 1_000.0).abs() <= 1_000.0 / 32.0, "{}", s.intervals[0].p99_ns);
        assert_eq!(s.intervals[1].writes, 1);
        assert_eq!(s.intervals[1].length_ns, 700);
        assert!((s.intervals[0].mean_ns - (99.0 * 1_000.0 + 1e6) / 100.0).abs() < 1e-6);
    }

    #[test]
    fn connections_merged_in_their_client_then_over_clients_give_the_flat_merge() {
        let part = |k: u64| {
            let mut r = SeriesRecorder::new(1_000);
            for t in 0..(50 * k) {
                r.record(t * 37, 100 + t * k, 8, t % 3 == 0);
            }
            r.finish(50 * k * 37 + k)
        };
        let (a, b, c) = (part(1), part(2), part(3));
        let flat = Series::merge(&[&a, &b, &c]);
        let client = ClientSeries::merge(&[&a, &b]);
        let nested = Series::of(&ClientSeries::merge(&[&client, &c]), 3);
        assert_eq!(nested, flat);
        assert_eq!(flat.ops(), 300);
    }

    #[test]
    fn a_client_merged_more_often_is_met_at_its_interval() {
        let mut a = ClientSeries {
            asked_interval_ns: 10,
            interval_ns: 10,
            intervals: vec![ClientInterval { length_ns: 10, reads: 1, ..Default::default() }; 8],
        };
        let b = ClientSeries {
            asked_interval_ns: 10,
            interval_ns: 40,
            intervals: vec![ClientInterval { length_ns: 40, writes: 2, ..Default::default() }; 2],
        };
        a.intervals[7].length_ns = 5;
        let s = Series::merge(&[&a, &b]);
        assert_eq!(s.interval_ns, 40);
        assert_eq!(s.merges, 2);
        assert_eq!(s.intervals.len(), 2);
        assert_eq!((s.intervals[0].reads, s.intervals[0].writes), (4, 2));
        assert_eq!(s.ops(), 12);
    }
}
