//! `--repeat`, `--tolerance`, `--max-repeats` as a validated [`Repeat`],
//! and the rule that picks the cells to measure again.

use crate::cli::RepeatArgs;
use iomatrix_core::UsageError;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Repeat {
    /// Samples of every cell.
    pub count: u32,
    /// Measure again while a sample lies further than this (%) from the median.
    pub tolerance_pct: Option<f64>,
    /// Samples of a cell at most.
    pub max: u32,
}

impl Repeat {
    pub fn once() -> Repeat {
        Repeat { count: 1, tolerance_pct: None, max: 1 }
    }

    pub fn from_args(args: &RepeatArgs) -> Result<Repeat, UsageError> {
        if args.repeat == 0 {
            return Err(UsageError::new("--repeat 0: measure each cell at least once (the default is 1)"));
        }
        let tolerance_pct = args
            .tolerance
            .as_deref()
            .map(|t| {
                t.trim()
                    .trim_end_matches('%')
                    .parse::<f64>()
                    .ok()
                    .filter(|p| *p > 0.0 && p.is_finite())
                    .ok_or_else(|| UsageError::new(format!("--tolerance {t}: give a percentage above 0, e.g. 20%")))
            })
            .transpose()?;
        let max = args.max_repeats.unwrap_or((2 * args.repeat).max(3));
        if tolerance_pct.is_none() && args.max_repeats.is_some() {
            return Err(UsageError::new("--max-repeats needs --tolerance: it bounds the re-measuring of noisy cells"));
        }
        if max < args.repeat {
            return Err(UsageError::new(format!(
                "--max-repeats {max} is below --repeat {}: a cell gets at least --repeat samples",
                args.repeat
            )));
        }
        Ok(Repeat { count: args.repeat, tolerance_pct, max })
    }

    /// Measuring noisy cells again needs the other MPI ranks to run more
    /// cells than the plan they were given: not done yet.
    pub fn refuse_tolerance_under_mpi(&self, ranks: &crate::ranks::Ranks) -> Result<(), UsageError> {
        if self.tolerance_pct.is_some() && ranks.mpi_size().is_some() {
            return Err(UsageError::new(
                "--tolerance under mpirun: measuring noisy cells again is not done across MPI ranks yet; use --repeat \
                 N (all samples stored, medians in reports)",
            ));
        }
        Ok(())
    }

    /// True when `samples` need another one: a sample further than the
    /// tolerance from their median, and room for more.
    pub fn noisy(&self, samples: &[f64]) -> bool {
        let Some(tolerance) = self.tolerance_pct else { return false };
        if samples.len() >= self.max as usize || samples.len() < 2 {
            return false;
        }
        let median = iomatrix_analysis::median(samples);
        median > 0.0 && samples.iter().any(|s| (s - median).abs() / median * 100.0 > tolerance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(repeat: u32, tolerance: Option<&str>, max: Option<u32>) -> RepeatArgs {
        RepeatArgs { repeat, tolerance: tolerance.map(String::from), max_repeats: max }
    }

    #[test]
    fn flags_are_checked() {
        assert_eq!(Repeat::from_args(&args(1, None, None)).unwrap().tolerance_pct, None);
        let r = Repeat::from_args(&args(3, Some("20%"), None)).unwrap();
        assert_eq!((r.count, r.tolerance_pct, r.max), (3, Some(20.0), 6));
        assert!(Repeat::from_args(&args(0, None, None)).is_err());
        assert!(Repeat::from_args(&args(3, Some("lots"), None)).is_err());
        assert!(Repeat::from_args(&args(3, Some("20"), Some(2))).is_err());
        assert!(Repeat::from_args(&args(3, None, Some(5))).is_err());
    }

    #[test]
    fn a_sample_beyond_the_tolerance_asks_for_another() {
        let r = Repeat { count: 3, tolerance_pct: Some(20.0), max: 5 };
        assert!(!r.noisy(&[100.0, 110.0, 90.0]), "within 20% of the median");
        assert!(r.noisy(&[100.0, 125.0, 95.0]), "125 is 25% above 100");
        assert!(!r.noisy(&[100.0, 200.0, 95.0, 300.0, 100.0]), "five samples: the limit");
        assert!(!Repeat { tolerance_pct: None, ..r }.noisy(&[1.0, 100.0]));
    }
}
