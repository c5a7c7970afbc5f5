//! Figures of one measured piece of work, and how they are taken.
//!
//! - [`CpuTimes`]: user and system CPU of the calling thread, from
//!   `getrusage(RUSAGE_THREAD)`, so a progress thread never counts.
//! - [`Span`]: a started measurement (monotonic clock + thread CPU);
//!   [`Span::finish`] gives [`Measured`].
//! - [`Measured`]: start and end on the run's clock (nanoseconds since the
//!   run's epoch), CPU used; plain numbers, so they cross threads and,
//!   later, MPI ranks unchanged.
//!
//! Nothing here prints or does file I/O.

use std::time::{Duration, Instant};

/// CPU time of the calling thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CpuTimes {
    pub user_ns: u64,
    pub sys_ns: u64,
}

impl CpuTimes {
    pub fn of_this_thread() -> CpuTimes {
        // SAFETY: getrusage only writes into the struct we pass; all-zero is a valid rusage.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer to a rusage; RUSAGE_THREAD is supported on Linux >= 2.6.26.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
        if rc != 0 {
            return CpuTimes::default();
        }
        let ns = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000_000 + tv.tv_usec as u64 * 1_000;
        CpuTimes { user_ns: ns(ru.ru_utime), sys_ns: ns(ru.ru_stime) }
    }

    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            sys_ns: self.sys_ns.saturating_sub(earlier.sys_ns),
        }
    }
}

/// A measurement under way. Start it right before the first timed request.
pub struct Span {
    epoch: Instant,
    start: Instant,
    cpu: CpuTimes,
}

impl Span {
    /// `epoch` is the run's common zero, shared by all clients of a host.
    pub fn start(epoch: Instant) -> Span {
        let cpu = CpuTimes::of_this_thread();
        Span { epoch, start: Instant::now(), cpu }
    }

    pub fn finish(self) -> Measured {
        let end = Instant::now();
        let cpu = CpuTimes::of_this_thread().since(self.cpu);
        let since_epoch = |t: Instant| t.saturating_duration_since(self.epoch).as_nanos() as u64;
        Measured { start_ns: since_epoch(self.start), end_ns: since_epoch(end), cpu }
    }
}

/// A finished measurement on the run's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Measured {
    pub start_ns: u64,
    pub end_ns: u64,
    pub cpu: CpuTimes,
}

impl Measured {
    pub fn wall(&self) -> Duration {
        Duration::from_nanos(self.end_ns.saturating_sub(self.start_ns))
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
        // A busy loop is user time; allow for a coarse tick (getrusage is jiffy-based on some kernels).
        assert!(m.cpu.user_ns + m.cpu.sys_ns >= 10_000_000, "{:?}", m.cpu);
    }

    #[test]
    fn rate_is_finite() {
        assert_eq!(kib_per_sec(1024, Duration::ZERO), 0.0);
        assert_eq!(kib_per_sec(2048, Duration::from_secs(2)), 1.0);
    }
}
