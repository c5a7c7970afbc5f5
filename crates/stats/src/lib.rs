//! Figures of one measured piece of work, and how they are taken.
//!
//! - [`CpuTimes`]: CPU of the calling thread only, so a progress thread never
//!   counts. The total comes from the thread CPU clock
//!   (`CLOCK_THREAD_CPUTIME_ID`, exact to the nanosecond); the split into
//!   user and system comes from `getrusage(RUSAGE_THREAD)`, which the kernel
//!   keeps in scheduler ticks and scales, so over a cell of a few
//!   milliseconds only the total is trustworthy, not the split.
//! - [`Span`]: a started measurement (monotonic clock + thread CPU);
//!   [`Span::finish`] gives [`Measured`].
//! - [`Measured`]: start and end on the run's clock (nanoseconds since the
//!   run's epoch), CPU used; plain numbers, so they cross threads and,
//!   later, MPI ranks unchanged.
//! - [`cpu_percent`]: the one definition of %CPU every suite, `show`, JSON,
//!   report and bonnie's front end use (docs/measuring.md).
//!
//! - [`Latency`]: an HDR histogram of request latencies, merged exactly and
//!   stored as a blob; [`LatencySummary`] its percentiles. [`HeldLatency`]: a phase's
//!   latencies held raw until its clock stops, so a short phase never writes the histogram's
//!   264 KB just before it runs ([`held`]).
//!
//! - [`Series`]: a cell's figures over time (per interval), recorded by each client's
//!   [`SeriesRecorder`] and merged over the clients ([`series`]).
//! - [`steady`]: whether a cell's per-interval figures have settled, by fio 3.33's steady-state
//!   rules or SNIA PTS's, judged over a rolling window as the intervals close.
//!
//! Nothing here prints or does file I/O.
#![warn(missing_docs)]

pub mod held;
mod latency;
pub mod series;
pub mod steady;

pub use held::{HeldLatency, HELD};
pub use latency::{HistogramError, Latency, LatencySummary, SIGNIFICANT_DIGITS};
pub use series::{ClientSeries, Interval, Series, SeriesRecorder};
use std::time::{Duration, Instant};

/// CPU time of the calling thread: `user_ns + sys_ns` is the exact total;
/// the split between them is as good as the kernel's tick sampling.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CpuTimes {
    /// CPU time in user mode (ns).
    pub user_ns: u64,
    /// CPU time in the kernel (ns).
    pub sys_ns: u64,
}

/// A raw reading; differences of two readings become [`CpuTimes`].
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuReading {
    total_ns: u64,
    user_ns: u64,
    sys_ns: u64,
}

impl CpuReading {
    /// The calling thread's CPU time so far (its clock, and getrusage's user/system split).
    pub fn now() -> CpuReading {
        let usage = rusage_of_this_thread();
        let total_ns = thread_clock_ns();
        CpuReading { total_ns, user_ns: usage.0, sys_ns: usage.1 }
    }

    /// CPU used since `earlier`: the clock's exact total, divided between
    /// user and system in the proportion getrusage saw (all system time when
    /// getrusage saw nothing, as I/O-bound work mostly is).
    pub fn since(self, earlier: CpuReading) -> CpuTimes {
        let total = self.total_ns.saturating_sub(earlier.total_ns);
        let user = self.user_ns.saturating_sub(earlier.user_ns);
        let sys = self.sys_ns.saturating_sub(earlier.sys_ns);
        let user_ns =
            if user + sys == 0 { 0 } else { (u128::from(total) * u128::from(user) / u128::from(user + sys)) as u64 };
        CpuTimes { user_ns, sys_ns: total - user_ns }
    }
}

fn thread_clock_ns() -> u64 {
    let clock = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    clock.tv_sec as u64 * 1_000_000_000 + clock.tv_nsec as u64
}

/// (user, sys) in nanoseconds, zero if getrusage fails.
fn rusage_of_this_thread() -> (u64, u64) {
    // SAFETY: getrusage only writes into the struct we pass; all-zero is a valid rusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer to a rusage; RUSAGE_THREAD is supported on Linux >= 2.6.26.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
    let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000;
    if rc == 0 {
        (ns(ru.ru_utime), ns(ru.ru_stime))
    } else {
        (0, 0)
    }
}

/// A measurement under way. Start it right before the first timed request.
pub struct Span {
    epoch: Instant,
    start: Instant,
    cpu: CpuReading,
}

impl Span {
    /// `epoch` is the run's common zero, shared by all clients of a host.
    pub fn start(epoch: Instant) -> Span {
        // Order matters for tiny cells: the slow getrusage call stays outside
        // both intervals, and the CPU interval lies inside the wall interval
        // (wall clock read first, thread clock last), so a thread's CPU can
        // never pass its wall time, and a cell's never every core's.
        let usage = rusage_of_this_thread();
        let start = Instant::now();
        let total_ns = thread_clock_ns();
        Span { epoch, start, cpu: CpuReading { total_ns, user_ns: usage.0, sys_ns: usage.1 } }
    }

    /// Ends the span: its start and end on the run's clock, and the thread's CPU time in between.
    pub fn finish(self) -> Measured {
        let total_ns = thread_clock_ns();
        let end = Instant::now();
        let usage = rusage_of_this_thread();
        let cpu = CpuReading { total_ns, user_ns: usage.0, sys_ns: usage.1 }.since(self.cpu);
        let since_epoch = |t: Instant| t.saturating_duration_since(self.epoch).as_nanos() as u64;
        Measured { start_ns: since_epoch(self.start), end_ns: since_epoch(end), cpu }
    }
}

/// A finished measurement on the run's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Measured {
    /// When it started (ns since the run's common epoch).
    pub start_ns: u64,
    /// When it ended (ns since the run's common epoch).
    pub end_ns: u64,
    /// The measuring thread's CPU time over the span.
    pub cpu: CpuTimes,
}

impl Measured {
    /// Wall time from start to end (zero if the clock read out of order).
    pub fn wall(&self) -> Duration {
        Duration::from_nanos(self.end_ns.saturating_sub(self.start_ns))
    }
}

/// %CPU, defined once: CPU seconds (user + system, of every thread that did
/// the work) over wall seconds, in percent of one core, as bonnie++, IOzone
/// and `time` state it (100 = one core busy for the whole time). For one
/// client: its threads' CPU over its own wall time. For a cell: every
/// client's CPU over the cell's wall time, from the clients' common start to
/// the last one's end; on one host it cannot pass 100 x the host's CPUs,
/// since every thread's CPU interval lies inside that time ([`Span`]). Zero
/// wall time gives 0, never infinity.
pub fn cpu_percent(cpu_ns: u64, wall_ns: u64) -> f64 {
    if wall_ns == 0 {
        0.0
    } else {
        cpu_ns as f64 * 100.0 / wall_ns as f64
    }
}

/// KiB per second, IOzone's unit. Zero time gives zero, never infinity.
pub fn kib_per_sec(bytes: u64, wall: Duration) -> f64 {
    let secs = wall.as_secs_f64();
    if secs > 0.0 {
        bytes as f64 / 1024.0 / secs
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_thread_accrues_cpu_and_wall() {
        let epoch = Instant::now();
        let span = Span::start(epoch);
        let mut x = 0u64;
        while epoch.elapsed() < Duration::from_millis(30) {
            x = x.wrapping_add(std::hint::black_box(1));
        }
        let m = span.finish();
        assert!(x > 0);
        assert!(m.wall() >= Duration::from_millis(29), "{:?}", m.wall());
        assert!(m.end_ns > m.start_ns);
        // The thread clock is exact: a 30 ms busy loop uses close to 30 ms of CPU
        // (less only if the machine took the core away).
        let cpu = m.cpu.user_ns + m.cpu.sys_ns;
        assert!(cpu >= 10_000_000 && cpu <= m.wall().as_nanos() as u64 + 1_000_000, "{:?}", m.cpu);
    }

    #[test]
    fn a_sleeping_thread_uses_almost_no_cpu() {
        let span = Span::start(Instant::now());
        std::thread::sleep(Duration::from_millis(20));
        let m = span.finish();
        assert!(m.cpu.user_ns + m.cpu.sys_ns < 5_000_000, "{:?}", m.cpu);
    }

    #[test]
    fn cpu_interval_lies_inside_the_wall_interval() {
        // A thread busy from its first clock read to its last: CPU never above wall, over many
        // tiny spans (where the order of the reads decides).
        let epoch = Instant::now();
        for _ in 0..2000 {
            let m = Span::start(epoch).finish();
            let cpu = m.cpu.user_ns + m.cpu.sys_ns;
            assert!(cpu <= m.end_ns - m.start_ns + 1_000, "cpu {cpu} ns over wall {} ns", m.end_ns - m.start_ns);
        }
    }

    #[test]
    fn cpu_percent_is_cpu_over_wall_of_one_core() {
        assert_eq!(cpu_percent(50, 100), 50.0);
        assert_eq!(cpu_percent(300, 100), 300.0);
        assert_eq!(cpu_percent(5, 0), 0.0);
    }

    #[test]
    fn rate_is_finite() {
        assert_eq!(kib_per_sec(1024, Duration::ZERO), 0.0);
        assert_eq!(kib_per_sec(2048, Duration::from_secs(2)), 1.0);
    }
}
