//! Open loop for the item phases (`--rate`, a curve's points): each item of a client has an
//! intended start, drawn from its arrivals, and waits for it; its latency counts from that
//! intended start, not from its issue, so a file system that falls behind shows its queue in
//! the latency instead of slowing the arrivals down (coordinated omission). An item whose
//! predecessor ran past its arrival is issued at once, late, and still timed from its arrival.

use crate::result::OpenLoad;
use iomatrix_random::{Arrival, Arrivals, LATE_NS};
use std::time::{Duration, Instant};

/// Within this of an arrival the client spins rather than sleeps: a sleep wakes ~50-60 us late
/// here, which would be counted in every item's latency from its intended start (a tmpfs stat
/// takes ~1 us).
const SPIN_NS: u64 = 100_000;

/// The longest sleep between two looks at the clock: a stopped run waits at most this long.
const LONGEST_SLEEP: Duration = Duration::from_millis(50);

/// A client's arrivals over one phase, and what they counted.
#[derive(Debug, Clone)]
pub struct Pace {
    arrivals: Arrivals,
    load: OpenLoad,
    /// The last item's intended start, ns from the phase's start.
    last_due_ns: u64,
}

impl Pace {
    /// `items` arrivals of `arrival` at `per_sec`, drawn from `seed`; made before the phase's
    /// barrier (it draws every arrival once, to know the last).
    pub fn new(arrival: Arrival, per_sec: f64, seed: u64, items: u64) -> Pace {
        let mut arrivals = Arrivals::new(arrival, per_sec, seed);
        // The stream starts with an arrival at 0: taken, the first item arrives a gap after the
        // phase's start (uniform) or an exponential draw after it (Poisson, as a Poisson process
        // started at 0), and the last at about items/rate, so the phase takes items/rate seconds
        // and its rate is the one offered (not items over (items - 1) gaps).
        arrivals.take();
        let mut ahead = arrivals.clone();
        let last_due_ns = (0..items).map(|_| ahead.take()).last().unwrap_or(0);
        let load = OpenLoad { arrival, offered_per_sec: per_sec, late: 0, backlog: 0 };
        Pace { arrivals, load, last_due_ns }
    }

    /// Waits for the next item's arrival (ns from `origin`, the phase's start) and returns its
    /// intended start; counts the item late when it is issued more than 1 ms after it, and in the
    /// backlog when that is more than 1 ms after the last item's arrival.
    #[inline]
    pub fn wait(&mut self, origin: Instant) -> Instant {
        let due_ns = self.arrivals.take();
        let due = origin + Duration::from_nanos(due_ns);
        loop {
            let now = Instant::now();
            let Some(left) = due.checked_duration_since(now).filter(|d| !d.is_zero()) else {
                let behind = now.saturating_duration_since(due).as_nanos() as u64;
                if behind > LATE_NS {
                    self.load.late += 1;
                }
                let at = now.saturating_duration_since(origin).as_nanos() as u64;
                if at > self.last_due_ns.saturating_add(LATE_NS) {
                    self.load.backlog += 1;
                }
                return due;
            };
            let left_ns = left.as_nanos() as u64;
            if left_ns > SPIN_NS {
                std::thread::sleep(Duration::from_nanos(left_ns - SPIN_NS).min(LONGEST_SLEEP));
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// What was offered, and the late items and backlog counted.
    pub fn load(&self) -> OpenLoad {
        self.load
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_wait_for_their_arrivals_and_a_stall_counts_late_and_backlog() {
        // 10 items at 10,000/s: 1 ms of arrivals, the first 0.1 ms after the start.
        let mut pace = Pace::new(Arrival::Uniform, 10_000.0, 1, 10);
        assert_eq!(pace.last_due_ns, 1_000_000);
        let origin = Instant::now();
        let first = pace.wait(origin);
        assert_eq!(first - origin, Duration::from_micros(100));
        assert!(Instant::now() >= first, "an item is not issued before its arrival");
        // A stall of 5 ms: every item after it is late, and issued after the last arrival.
        std::thread::sleep(Duration::from_millis(5));
        for _ in 1..10 {
            pace.wait(origin);
        }
        let load = pace.load();
        assert_eq!((load.late, load.backlog), (9, 9), "{load:?}");
    }
}
