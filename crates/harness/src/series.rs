//! `--interval`: the length of the intervals of the figures over time a suite that records them
//! stores with each timed cell (`iomatrix_stats::Series`; `show RUN --series`). A suite that
//! records a series flattens [`SeriesArgs`] into its flags and keeps the interval in its plan.

use clap::Args;
use iomatrix_core::{parse_duration, UsageError};
use iomatrix_stats::series::DEFAULT_INTERVAL_NS;

/// The shortest interval: below it a per-interval rate is mostly the clock's and the
/// scheduler's noise, and the bound on intervals would merge them at once.
const SHORTEST_NS: u64 = 10_000_000;
/// The longest interval: an hour.
const LONGEST_NS: u64 = 3_600_000_000_000;

/// The flag of the figures over time.
#[derive(Args, Debug, Default)]
#[command(next_help_heading = "Figures over time")]
pub struct SeriesArgs {
    /// The interval of the figures over time each timed cell stores (per interval: operations,
    /// bytes, reads and writes, mean and p99 latency; `iomatrix show RUN --series`), from 10ms to
    /// 1h; past 3,600 intervals in a cell neighbours are merged pairwise, and the stored series
    /// says so [default: 1s]
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub interval: Option<String>,
}

impl SeriesArgs {
    /// The interval in ns: `--interval`, or 1 s.
    pub fn interval_ns(&self) -> Result<u64, UsageError> {
        let Some(text) = &self.interval else {
            return Ok(DEFAULT_INTERVAL_NS);
        };
        let d = parse_duration(text).map_err(|e| UsageError::new(format!("--interval {text}: {e}")))?;
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        if !(SHORTEST_NS..=LONGEST_NS).contains(&ns) {
            return Err(UsageError::new(format!("--interval {text}: give a time from 10ms to 1h")));
        }
        Ok(ns)
    }
}

/// 1 s, the interval of a plan stored without one.
pub fn default_interval_ns() -> u64 {
    DEFAULT_INTERVAL_NS
}

/// Whether `ns` is the default interval (a plan leaves it out then).
pub fn is_default_interval(ns: &u64) -> bool {
    *ns == DEFAULT_INTERVAL_NS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> Result<u64, UsageError> {
        SeriesArgs { interval: Some(text.into()) }.interval_ns()
    }

    #[test]
    fn an_interval_is_a_time_from_ten_milliseconds_to_an_hour() {
        assert_eq!(SeriesArgs::default().interval_ns().unwrap(), 1_000_000_000);
        assert_eq!(of("500ms").unwrap(), 500_000_000);
        assert_eq!(of("1h").unwrap(), 3_600_000_000_000);
        for bad in ["1ms", "2h", "0", "-1s", "soon"] {
            let e = of(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("--interval {bad}")), "{bad}: {e}");
        }
    }
}
