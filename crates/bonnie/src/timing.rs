//! How a test is timed and what it reports: every test waits at [`Ready`]
//! for the other clients right before its clock starts, and turns the
//! measurements of the threads that did it into one [`BonnieResult`] with
//! [`figures`].

use crate::{BonnieError, BonnieResult, BonnieTest};
use iomatrix_stats::{kib_per_sec, Measured};
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
    }
}

/// The slowest single operation of a test so far (bonnie++'s latency
/// column), timed as bonnie++ times it: one clock read before and one
/// after each operation.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slowest(pub(crate) u64);

impl Slowest {
    /// Counts the operation that began at `start` and ends now.
    pub(crate) fn since(&mut self, start: Instant) {
        self.0 = self.0.max(start.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64);
    }

    pub(crate) fn max(self, other: Slowest) -> Slowest {
        Slowest(self.0.max(other.0))
    }
}

impl BonnieResult {
    /// The result with its slowest operation.
    pub(crate) fn with_slowest(mut self, slowest: Slowest) -> BonnieResult {
        self.max_latency_ns = slowest.0;
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
