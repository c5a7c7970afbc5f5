//! How a test is timed and what it reports: every test waits at [`Ready`]
//! for the other clients right before its clock starts, and turns the
//! measurements of the threads that did it into one [`BonnieResult`] with
//! [`figures`].

use crate::{BonnieError, BonnieResult, BonnieTest};
use iomatrix_stats::{kib_per_sec, ClientSeries, Measured, SeriesRecorder};
use std::time::{Duration, Instant};

/// Called by a test after its untimed preparation, right before its clock
/// starts: waits for the other clients and returns the common start, the
/// zero of the test's clock.
pub(crate) type Ready<'r> = dyn FnMut() -> Result<Instant, BonnieError> + 'r;

/// A figure for one test from the measurements of the threads that did it.
pub(crate) fn figures(
    test: BonnieTest,
    repeat: u32,
    bytes: u64,
    ops: u64,
    writes: u64,
    measured: &[Measured],
) -> BonnieResult {
    let start = measured.iter().map(|m| m.start_ns).min().unwrap_or(0);
    let end = measured.iter().map(|m| m.end_ns).max().unwrap_or(0);
    let wall_ns = end.saturating_sub(start);
    // `end` is on the clock of the clients' common start: "parent sees" needs it.

    let user_ns: u64 = measured.iter().map(|m| m.cpu.user_ns).sum();
    let sys_ns: u64 = measured.iter().map(|m| m.cpu.sys_ns).sum();
    let secs = wall_ns as f64 / 1e9;
    let per_sec = match test {
        BonnieTest::RandomSeeks => rate(ops, secs),
        t if t.is_file_test() => rate(ops, secs),
        _ => kib_per_sec(bytes, Duration::from_nanos(wall_ns)),
    };
    let cpu_percent = iomatrix_stats::cpu_percent(user_ns + sys_ns, wall_ns);
    BonnieResult {
        test,
        repeat,
        bytes,
        ops,
        writes,
        wall_ns,
        user_ns,
        sys_ns,
        per_sec,
        unit: test.unit().to_string(),
        cpu_percent,
        end_ns: end,
        max_latency_ns: 0,
        series: ClientSeries::default(),
    }
}

/// How a test times its operations, as bonnie++ times them (one clock read before and one after
/// each): the slowest (bonnie++'s latency column) and every one over time, from the test's own
/// start (made with the test's clock: [`Timing::new`] right after its span starts).
pub(crate) struct Timing {
    slowest: u64,
    series: SeriesRecorder,
    origin: Instant,
}

impl Timing {
    /// A test's timing from now, in intervals of `interval_ns`.
    pub(crate) fn new(interval_ns: u64) -> Timing {
        Timing { slowest: 0, series: SeriesRecorder::new(interval_ns), origin: Instant::now() }
    }

    /// Counts `ops` operations timed as one (a chunk of per-character calls; else 1) that began
    /// at `start` and end now, moving `bytes`.
    #[inline]
    pub(crate) fn since(&mut self, start: Instant, ops: u64, bytes: u64, write: bool) {
        let end = Instant::now();
        let ns = end.saturating_duration_since(start).as_nanos() as u64;
        self.slowest = self.slowest.max(ns);
        let at = end.saturating_duration_since(self.origin).as_nanos() as u64;
        self.series.record_many(at, ops, ns, bytes, write);
    }

    /// A seek that began at `start` and ends now: one read of `chunk` bytes, and the chunk it
    /// wrote back where it did (bytes written, no operation of their own: bonnie++ counts seeks).
    pub(crate) fn seek_since(&mut self, start: Instant, chunk: u64, wrote_back: bool) {
        self.since(start, 1, chunk, false);
        if wrote_back {
            let at = self.origin.elapsed().as_nanos() as u64;
            self.series.add_bytes(at, chunk, true);
        }
    }

    /// The slowest operation and the series, which ends now.
    pub(crate) fn finish(self) -> Timed {
        let end = self.origin.elapsed().as_nanos() as u64;
        Timed { slowest: self.slowest, series: self.series.finish(end) }
    }
}

/// What a finished [`Timing`] gives a test's result.
pub(crate) struct Timed {
    slowest: u64,
    series: ClientSeries,
}

impl Timed {
    /// The timings of threads that did one test together (the seekers): the slowest of any, the
    /// series merged interval by interval.
    pub(crate) fn together(parts: &[Timed]) -> Timed {
        Timed {
            slowest: parts.iter().map(|t| t.slowest).max().unwrap_or(0),
            series: ClientSeries::merge(&parts.iter().map(|t| &t.series).collect::<Vec<_>>()),
        }
    }
}

impl BonnieResult {
    /// The result with its slowest operation and its operations over time.
    pub(crate) fn timed(mut self, timed: Timed) -> BonnieResult {
        self.max_latency_ns = timed.slowest;
        self.series = timed.series;
        self
    }
}

fn rate(ops: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        ops as f64 / secs
    } else {
        0.0
    }
}
