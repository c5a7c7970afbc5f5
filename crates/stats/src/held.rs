//! Latencies of a short timed phase held raw, so the histogram's memory is written after the phase.
//!
//! Why: a [`Latency`] is some 33,000 counters (264 KB). Clearing it just before a phase of one
//! operation (the metadata suite's tree-remove of one folder: one rmdir of ~5 us) pushed the
//! kernel's side of that call out of the CPU's caches, and the call ran at twice its time right
//! after the same work without the clearing. A phase of at most [`HELD`] operations now records
//! into a 4 KB buffer; its histogram is cleared and filled once the phase's clock has stopped. A
//! longer phase clears the histogram before its barrier ([`HeldLatency::ready_for`]), where the
//! cost is spread over its many operations, and empties the buffer into it every [`HELD`] calls.

use crate::Latency;

/// How many raw latencies are held before they go into the histogram.
pub const HELD: usize = 512;

/// A phase's latencies: held raw, then a histogram.
pub struct HeldLatency {
    held: Box<[u64; HELD]>,
    len: usize,
    histogram: Latency,
    /// Whether the histogram was cleared for the phase running now (it holds only its latencies).
    phase_in_histogram: bool,
}

impl Default for HeldLatency {
    fn default() -> Self {
        Self::new()
    }
}

impl HeldLatency {
    /// Its buffer and histogram, both written once here so that no page of either is first
    /// touched inside a timed phase.
    pub fn new() -> HeldLatency {
        let mut histogram = Latency::new();
        histogram.reset();
        HeldLatency { held: Box::new([0; HELD]), len: 0, histogram, phase_in_histogram: false }
    }

    /// Before a phase's barrier, with the operations it plans: a phase longer than the buffer
    /// clears the histogram now, outside its clock; a shorter one leaves that for after. Whatever
    /// an unfinished earlier phase left is dropped.
    pub fn ready_for(&mut self, planned: u64) {
        self.len = 0;
        self.phase_in_histogram = false;
        if planned > HELD as u64 {
            self.start_histogram();
        }
    }

    /// Records one latency (ns).
    #[inline]
    pub fn record(&mut self, ns: u64) {
        if self.len == HELD {
            self.empty_buffer();
        }
        self.held[self.len] = ns;
        self.len += 1;
    }

    /// The phase's histogram, once its clock has stopped. The next phase starts with
    /// [`HeldLatency::ready_for`].
    pub fn finish(&mut self) -> &Latency {
        self.empty_buffer();
        self.phase_in_histogram = false;
        &self.histogram
    }

    #[cold]
    fn empty_buffer(&mut self) {
        self.start_histogram();
        for &ns in &self.held[..self.len] {
            self.histogram.record(ns);
        }
        self.len = 0;
    }

    /// Clears what an earlier phase left in the histogram, once per phase.
    fn start_histogram(&mut self) {
        if !self.phase_in_histogram {
            if self.histogram.count() > 0 {
                self.histogram.reset();
            }
            self.phase_in_histogram = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(held: &mut HeldLatency, planned: u64, values: impl Iterator<Item = u64>) -> (u64, u64, u64) {
        held.ready_for(planned);
        for ns in values {
            held.record(ns);
        }
        let h = held.finish();
        (h.count(), h.quantile_ns(0.0), h.quantile_ns(1.0))
    }

    #[test]
    fn a_short_phase_gets_only_its_own_latencies() {
        let mut held = HeldLatency::new();
        // 1,000 and 2,000 ns are exact at 3 digits; 3,000 reads back as its bucket's top, 3,001.
        assert_eq!(recorded(&mut held, 3, [1000, 2000, 3000].into_iter()), (3, 1000, 3001));
        // The next short phase: the first phase's three are gone.
        let (count, min, _) = recorded(&mut held, 1, [5000].into_iter());
        assert_eq!(count, 1);
        assert!((4995..=5005).contains(&min), "{min}");
    }

    #[test]
    fn a_long_phase_keeps_every_latency_across_the_buffer_s_emptyings() {
        let mut held = HeldLatency::new();
        recorded(&mut held, 1, [7].into_iter());
        let n = (HELD as u64) * 3 + 17;
        let (count, min, max) = recorded(&mut held, n, 1..=n);
        assert_eq!(count, n);
        assert_eq!(min, 1);
        assert!(max >= n - n / 1000, "{max}");
        // Planned short but ran long (a stonewalled phase reaching others' count): all kept.
        let (count, ..) = recorded(&mut held, 2, 1..=(HELD as u64 + 5));
        assert_eq!(count, HELD as u64 + 5);
    }

    #[test]
    fn an_unfinished_phase_leaves_nothing_to_the_next() {
        let mut held = HeldLatency::new();
        held.ready_for(HELD as u64 * 2);
        for ns in 1..=(HELD as u64 + 3) {
            held.record(ns);
        }
        // No finish: the phase failed. The next one sees only its own.
        assert_eq!(recorded(&mut held, 1, [9].into_iter()).0, 1);
        held.ready_for(1);
        for ns in 1..=(HELD as u64 + 3) {
            held.record(ns);
        }
        assert_eq!(recorded(&mut held, HELD as u64 * 2, [9, 9].into_iter()).0, 2);
    }
}
