//! `--repeat`, `--tolerance`, `--max-repeats` as a validated [`Repeat`],
//! and the rule that picks the cells to measure again.

use clap::Args;
use iomatrix_core::UsageError;

/// The most samples of one cell a run takes (`--repeat`, `--max-repeats`):
/// every sample is a stored cell and a name in the plan, so a count past
/// any use (`--repeat 4000000000`) is refused, not allocated.
pub const MAX_REPEAT: u32 = 1000;

/// Noise: each cell measured several times, noisy cells measured again.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Noise")]
pub struct RepeatArgs {
    /// Measure each cell N times (all samples stored; reports show the median and spread).
    /// Every suite (`run bonnie` takes it as --repeats; the file-server load repeats its phases
    /// on fresh files); at most 1000
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub repeat: u32,

    /// Measure a cell again while a sample lies further than PCT from its median (seed 001:
    /// "results too far out of the bounds (+/- 20%) were re-run"), e.g. 20%. Every suite, also
    /// under mpirun; where cells depend on each other (Bonnie's tests share one file, the
    /// file-server load reads what it wrote) the whole set runs again
    #[arg(long, value_name = "PCT")]
    pub tolerance: Option<String>,

    /// With --tolerance: at most this many samples of a cell (1000 at most) [default: 2 x --repeat,
    /// at least 3]
    #[arg(long, value_name = "N")]
    pub max_repeats: Option<u32>,
}

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
        for (flag, n) in [("--repeat", Some(args.repeat)), ("--max-repeats", args.max_repeats)] {
            if let Some(n) = n.filter(|n| *n > MAX_REPEAT) {
                return Err(UsageError::new(format!(
                    "{flag} {n}: at most {MAX_REPEAT} samples of a cell (each is a stored cell); give a smaller count"
                )));
            }
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
        let max = args.max_repeats.unwrap_or(args.repeat.saturating_mul(2).clamp(3, MAX_REPEAT.max(args.repeat)));
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
        let e = Repeat::from_args(&args(4_000_000_000, None, None)).unwrap_err();
        assert!(e.0.contains("at most 1000"), "{e}");
        assert!(Repeat::from_args(&args(3, Some("20"), Some(u32::MAX))).unwrap_err().0.contains("--max-repeats"));
        assert_eq!(Repeat::from_args(&args(1000, Some("20"), None)).unwrap().max, 1000);
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
