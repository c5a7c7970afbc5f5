//! Open-loop arrivals: when each request of a load offered at a rate is meant to start.
//!
//! An open-loop client does not wait for one request to finish before the next is due: each
//! request has an intended start, drawn here, and its latency counts from that instant, so a
//! target that falls behind shows its queue instead of hiding it (coordinated omission). The
//! stream is its own seeded generator, so the arrivals are the same from run to run whatever
//! else the client draws.

use crate::Generator;

/// An open-loop request issued more than this after its intended start is counted `late`.
pub const LATE_NS: u64 = 1_000_000;

/// How arrivals are spaced at a rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    /// Evenly: one every 1/rate seconds (fio's rate_process=linear).
    #[default]
    Uniform,
    /// A Poisson process: gaps drawn from an exponential of mean 1/rate (fio's
    /// rate_process=poisson, vdbench's default distribution=exponential).
    Poisson,
}

impl Arrival {
    /// The names `--arrivals` takes, for messages.
    pub const NAMES: &'static str = "uniform or poisson";

    /// The name runs store and `--arrivals` takes.
    pub fn name(self) -> &'static str {
        match self {
            Arrival::Uniform => "uniform",
            Arrival::Poisson => "poisson",
        }
    }

    /// What the spacing is, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Arrival::Uniform => "uniform (one every 1/rate seconds, as fio's rate_process=linear)",
            Arrival::Poisson => {
                "poisson (exponential gaps of mean 1/rate, as fio's rate_process=poisson and vdbench's default)"
            }
        }
    }
}

impl std::str::FromStr for Arrival {
    type Err = String;
    fn from_str(s: &str) -> Result<Arrival, String> {
        match s.trim() {
            "uniform" | "linear" => Ok(Arrival::Uniform),
            "poisson" | "exponential" => Ok(Arrival::Poisson),
            other => Err(format!("'{other}' is not a spacing of arrivals; give {}", Arrival::NAMES)),
        }
    }
}

/// A stream of intended starts, in nanoseconds since the stream's start: the first at 0.
#[derive(Debug, Clone)]
pub struct Arrivals {
    kind: Arrival,
    /// The mean gap, in ns.
    gap_ns: f64,
    /// The next arrival, in ns (fractional, so a uniform stream keeps its rate exactly).
    next_ns: f64,
    rng: Generator,
}

impl Arrivals {
    /// Arrivals of `kind` at `per_second` (above 0), drawn from `seed`.
    pub fn new(kind: Arrival, per_second: f64, seed: u64) -> Arrivals {
        Arrivals { kind, gap_ns: 1e9 / per_second.max(f64::MIN_POSITIVE), next_ns: 0.0, rng: Generator::seeded(seed) }
    }

    /// The next intended start, not taken.
    #[inline]
    pub fn peek(&self) -> u64 {
        self.next_ns as u64
    }

    /// Takes the next intended start and draws the one after it.
    #[inline]
    pub fn take(&mut self) -> u64 {
        let now = self.peek();
        self.next_ns += match self.kind {
            Arrival::Uniform => self.gap_ns,
            Arrival::Poisson => self.gap_ns * -self.rng.unit().ln(),
        };
        now
    }

    /// Takes and counts the arrivals due before `end_ns` (at most `cap`): at a cell's end, those
    /// never issued (its backlog).
    pub fn count_before(&mut self, end_ns: u64, cap: u64) -> u64 {
        let mut n = 0;
        while self.peek() < end_ns && n < cap {
            self.take();
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_arrivals_keep_their_rate_exactly() {
        let mut a = Arrivals::new(Arrival::Uniform, 3000.0, 1);
        let starts: Vec<u64> = (0..4).map(|_| a.take()).collect();
        assert_eq!(starts, [0, 333_333, 666_666, 1_000_000]);
        // 3,000 a second for a second: 3,000 arrivals from 0 up to (not at) 1 s.
        let mut a = Arrivals::new(Arrival::Uniform, 3000.0, 1);
        assert_eq!(a.count_before(1_000_000_000, u64::MAX), 3000);
    }

    #[test]
    fn poisson_arrivals_average_their_rate_and_repeat_from_their_seed() {
        let mut a = Arrivals::new(Arrival::Poisson, 1000.0, 7);
        let n = a.count_before(100_000_000_000, u64::MAX);
        // 100 s at 1,000/s: 100,000 arrivals, a standard deviation of about 316.
        assert!((98_500..=101_500).contains(&n), "{n}");
        let mut b = Arrivals::new(Arrival::Poisson, 1000.0, 7);
        let mut c = Arrivals::new(Arrival::Poisson, 1000.0, 7);
        assert_eq!((0..100).map(|_| b.take()).collect::<Vec<_>>(), (0..100).map(|_| c.take()).collect::<Vec<_>>());
        assert_eq!(a.count_before(0, 10), 0, "nothing is due before an instant already passed");
        assert_eq!("exponential".parse::<Arrival>(), Ok(Arrival::Poisson));
        assert!("bursty".parse::<Arrival>().unwrap_err().contains("uniform or poisson"));
    }
}
