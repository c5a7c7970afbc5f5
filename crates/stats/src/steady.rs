//! Steady state: whether a cell's per-interval figures have settled, judged by one of two rules
//! over a rolling window of whole intervals. Pure: it takes the intervals' counts in order and
//! returns verdicts; the runner feeds it while a cell runs and stops the cell when it is attained.
//!
//! - fio 3.33's rules ([`Criterion::Fio`], its `steadystate=`, `ss_dur=`, `ss_ramp=`): each
//!   sample is one interval's rate as a whole number (requests or bytes per second, as fio's
//!   `1000 * delta / msec`); once the window holds `ss_dur` samples, every new sample is judged
//!   over the last `ss_dur`:
//!   - `iops` / `bw` (mean deviation): the largest |sample - mean| (the mean in floating point),
//!     as a percentage of the mean (`iops:10%`) or absolute (`iops:50`, `bw:10m`); attained when
//!     it is strictly below the limit;
//!   - `iops_slope` / `bw_slope`: the least-squares slope of the samples against 0, 1, ..., n-1
//!     (per sample, so per second at fio's 1 s), as a percentage of the mean (fio divides by
//!     the mean truncated to a whole number) or absolute; attained when its magnitude is
//!     strictly below the limit.
//! - SNIA PTS's rule ([`Criterion::Snia`]): the window is 5 rounds (each a fifth of it, a whole
//!   number of intervals), each round's figure its rate over the round; judged at the end of every
//!   round once 5 are in: the data excursion (max - min of the 5) at most 20% of their mean, and
//!   the excursion of the least-squares line across the window (|slope| x 4 rounds) at most 10% of
//!   their mean (SNIA SSS PTS 2.0.1, "Definitions": Steady State; how far that was checked is in
//!   docs/curves.md).
//!
//! Intervals that start before the ramp (`ss_ramp`) are not judged. Once attained the judge
//! takes no more samples: the window it was attained with is the verdict's.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// What a rule judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// Requests per second.
    Iops,
    /// Bytes per second.
    Bw,
}

/// fio's two measures of a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// The largest deviation of a sample from the window's mean (`iops`, `bw`).
    Deviation,
    /// The least-squares slope of the window (`iops_slope`, `bw_slope`).
    Slope,
}

/// A steady-state rule.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "rule", rename_all = "snake_case")]
pub enum Criterion {
    /// fio 3.33's `steadystate=FIGURE[_slope]:LIMIT[%]`.
    Fio {
        /// Requests or bytes per second.
        figure: Figure,
        /// Deviation from the mean, or slope.
        measure: Measure,
        /// The limit: a percentage of the window's mean where `percent`, else requests or bytes
        /// per second (a slope's: per sample).
        limit: f64,
        /// Whether the limit is a percentage of the window's mean.
        percent: bool,
    },
    /// SNIA PTS's: 5 rounds, range within 20% and the best-fit line's excursion within 10% of
    /// their mean.
    Snia {
        /// What the rounds track: requests (the IOPS test's) or bytes (the throughput test's) per second.
        figure: Figure,
    },
}

// A limit is finite (`Criterion::parse` refuses any other), so equality is an equivalence: a plan
// holding a rule compares as a whole.
impl Eq for Criterion {}
impl Eq for SteadyRule {}

/// SNIA PTS's rounds in a measurement window.
pub const SNIA_ROUNDS: usize = 5;
/// SNIA PTS's data excursion limit: max - min at most this share of the window's mean.
pub const SNIA_RANGE: f64 = 0.20;
/// SNIA PTS's slope excursion limit: the best-fit line's rise across the window at most this
/// share of the window's mean.
pub const SNIA_EXCURSION: f64 = 0.10;

impl Criterion {
    /// The words `--steady-state` takes, for messages.
    pub const NAMES: &'static str = "iops:LIMIT, iops_slope:LIMIT, bw:LIMIT, bw_slope:LIMIT (LIMIT a percentage \
                                     such as 10% or an absolute rate), snia or snia_bw";

    /// Reads `iops:10%`, `iops_slope:0.1%`, `bw:10%`, `bw_slope:2%`, the absolute forms as fio
    /// reads them (`iops:50` requests per second; `bw:10m` bytes per second, k m g t in powers
    /// of 1024 as fio's default kb_base), `snia` and `snia_bw`.
    pub fn parse(text: &str) -> Result<Criterion, String> {
        let t = text.trim();
        match t {
            "snia" | "snia_iops" => return Ok(Criterion::Snia { figure: Figure::Iops }),
            "snia_bw" => return Ok(Criterion::Snia { figure: Figure::Bw }),
            _ => {}
        }
        let Some((name, limit)) = t.split_once(':') else {
            return Err(format!("'{t}' is not a steady-state rule; give {}", Criterion::NAMES));
        };
        let (figure, measure) = match name.trim() {
            "iops" => (Figure::Iops, Measure::Deviation),
            "iops_slope" => (Figure::Iops, Measure::Slope),
            "bw" => (Figure::Bw, Measure::Deviation),
            "bw_slope" => (Figure::Bw, Measure::Slope),
            other => return Err(format!("'{other}' is not a steady-state criterion; give {}", Criterion::NAMES)),
        };
        let limit = limit.trim();
        let (value, percent) = match limit.strip_suffix('%') {
            Some(p) => (p.trim().parse::<f64>().map_err(|_| format!("'{limit}' is not a percentage, e.g. 10%"))?, true),
            None if figure == Figure::Bw => (bytes_per_second(limit)?, false),
            None => {
                (limit.parse::<f64>().map_err(|_| format!("'{limit}' is not a number of requests a second"))?, false)
            }
        };
        if !value.is_finite() || value <= 0.0 {
            return Err(format!("'{limit}': the limit must be above 0 (a steady state within 0 is never reached)"));
        }
        Ok(Criterion::Fio { figure, measure, limit: value, percent })
    }

    /// The figure the rule judges.
    pub fn figure(&self) -> Figure {
        match *self {
            Criterion::Fio { figure, .. } | Criterion::Snia { figure } => figure,
        }
    }
}

/// fio's absolute bandwidth limit: a whole number with an optional k, m, g or t (powers of 1024,
/// `kib` and `kb` alike, as fio reads sizes by default).
fn bytes_per_second(text: &str) -> Result<f64, String> {
    let t = text.trim().to_ascii_lowercase();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let number: u64 = t[..digits].parse().map_err(|_| format!("'{text}' is not a rate in bytes, e.g. 10m"))?;
    let shift = match t[digits..].trim_end_matches("ib").trim_end_matches('b') {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err(format!("'{text}': give bytes a second with k, m, g or t (powers of 1024), e.g. 10m")),
    };
    Ok(number as f64 * (1u64 << shift) as f64)
}

/// fio's words for the rule: `iops:10%`, `bw_slope:1048576`; `snia`, `snia_bw`.
impl std::fmt::Display for Criterion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Criterion::Fio { figure, measure, limit, percent } => write!(
                f,
                "{}{}:{limit}{}",
                figure.name(),
                if measure == Measure::Slope { "_slope" } else { "" },
                if percent { "%" } else { "" }
            ),
            Criterion::Snia { figure: Figure::Iops } => f.write_str("snia"),
            Criterion::Snia { figure: Figure::Bw } => f.write_str("snia_bw"),
        }
    }
}

impl Figure {
    /// fio's name: `iops` or `bw`.
    pub fn name(self) -> &'static str {
        match self {
            Figure::Iops => "iops",
            Figure::Bw => "bw",
        }
    }
}

/// A rule with its window and ramp, as a plan stores it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadyRule {
    /// What is judged and against what.
    pub criterion: Criterion,
    /// The rolling window judged (fio's ss_dur), in ns.
    pub window_ns: u64,
    /// How long after the timed part's start the first judged interval may begin (fio's
    /// ss_ramp), in ns.
    #[serde(default)]
    pub ramp_ns: u64,
}

impl SteadyRule {
    /// Samples in a window of intervals of `interval_ns`: one per interval for fio's rules,
    /// [`SNIA_ROUNDS`] rounds for SNIA's.
    pub fn samples(&self, interval_ns: u64) -> usize {
        match self.criterion {
            Criterion::Fio { .. } => (self.window_ns / interval_ns.max(1)) as usize,
            Criterion::Snia { .. } => SNIA_ROUNDS,
        }
    }

    /// Intervals in one sample: 1 for fio's rules, a round's for SNIA's.
    pub fn intervals_per_sample(&self, interval_ns: u64) -> usize {
        let intervals = (self.window_ns / interval_ns.max(1)) as usize;
        match self.criterion {
            Criterion::Fio { .. } => 1,
            Criterion::Snia { .. } => (intervals / SNIA_ROUNDS).max(1),
        }
    }

    /// Why the rule cannot be judged over intervals of `interval_ns` in a cell of `duration_ns`
    /// (None: a cell of bytes), with the fix; `window` and `ramp` name the flags in messages.
    pub fn check(&self, interval_ns: u64, duration_ns: Option<u64>, window: &str, ramp: &str) -> Result<(), String> {
        let interval = interval_ns.max(1);
        let shown = |ns: u64| match ns % 1_000_000_000 {
            0 => format!("{}s", ns / 1_000_000_000),
            _ => format!("{}ms", ns / 1_000_000),
        };
        if self.window_ns % interval != 0 {
            return Err(format!(
                "{window} {}: the window is judged in whole intervals of {}; give a multiple of it",
                shown(self.window_ns),
                shown(interval)
            ));
        }
        let intervals = self.window_ns / interval;
        if intervals < 2 {
            return Err(format!(
                "{window} {}: a window of fewer than 2 intervals ({}) has no spread to judge; give at least {}",
                shown(self.window_ns),
                shown(interval),
                shown(2 * interval)
            ));
        }
        if matches!(self.criterion, Criterion::Snia { .. }) && intervals % SNIA_ROUNDS as u64 != 0 {
            return Err(format!(
                "{window} {}: SNIA's window is {SNIA_ROUNDS} rounds of whole intervals ({}); give a multiple of {}",
                shown(self.window_ns),
                shown(interval),
                shown(SNIA_ROUNDS as u64 * interval)
            ));
        }
        match duration_ns {
            Some(d) if self.ramp_ns.saturating_add(self.window_ns) > d => Err(format!(
                "{window} {} after {ramp} {} is longer than the cell's duration {}: no window would ever be judged; \
                 give a shorter window or ramp, or a longer duration",
                shown(self.window_ns),
                shown(self.ramp_ns),
                shown(d)
            )),
            _ => Ok(()),
        }
    }
}

/// One sample: its rate of requests and of bytes per second, whole numbers as fio keeps them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// Requests per second.
    pub iops: u64,
    /// Bytes per second.
    pub bw: u64,
}

impl Sample {
    /// `ops` requests and `bytes` bytes over `ns`, per second, truncated to whole numbers.
    pub fn of(ops: u64, bytes: u64, ns: u64) -> Sample {
        let rate = |n: u64| (u128::from(n) * 1_000_000_000 / u128::from(ns.max(1))) as u64;
        Sample { iops: rate(ops), bw: rate(bytes) }
    }

    fn get(self, figure: Figure) -> u64 {
        match figure {
            Figure::Iops => self.iops,
            Figure::Bw => self.bw,
        }
    }
}

/// What a cell's rule found, as the cell stores it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyVerdict {
    /// The rule judged.
    pub rule: SteadyRule,
    /// The length of one sample in ns: the interval (fio's rules) or a round (SNIA's).
    pub sample_ns: u64,
    /// Samples in a whole window.
    pub window_samples: usize,
    /// Whether the rule was met.
    pub attained: bool,
    /// When: ns from the timed part's start to the end of the window it was met with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attained_at_ns: Option<u64>,
    /// Windows judged (none when the cell ended before one was whole).
    pub windows_judged: u64,
    /// The last window judged, oldest first (the one the rule was met with, if it was); the
    /// samples taken so far where no window was whole.
    pub window: Vec<Sample>,
    /// The judged figure's mean over that window.
    pub mean: f64,
    /// Its largest deviation from the mean (fio's max_deviation).
    pub max_deviation: f64,
    /// Its range, max - min (SNIA's data excursion).
    pub range: f64,
    /// The size of the least-squares slope, per sample (fio's slope; per round for SNIA's).
    pub slope: f64,
    /// Whether the slope falls. Stored apart from its size: the results database keeps no
    /// negative figure ([`SteadyVerdict::signed_slope`] puts them together).
    #[serde(default)]
    pub falling: bool,
    /// The size of fio's criterion: the value compared with the limit (percent of the mean where
    /// the limit is one; a slope's takes the slope's direction); None for SNIA's rule, whose two
    /// tests are `range` and `slope`, and where fio's is no number (a mean of 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criterion: Option<f64>,
}

impl SteadyVerdict {
    /// The slope with its direction, as fio reports it.
    pub fn signed_slope(&self) -> f64 {
        if self.falling {
            -self.slope
        } else {
            self.slope
        }
    }

    /// fio's criterion with its direction (a falling slope's is negative, as fio prints it).
    pub fn signed_criterion(&self) -> Option<f64> {
        let slope_rule = matches!(self.rule.criterion, Criterion::Fio { measure: Measure::Slope, .. });
        self.criterion.map(|c| if slope_rule && self.falling { -c } else { c })
    }

    /// SNIA's slope excursion: the best-fit line's rise across the window, |slope| x (samples - 1).
    pub fn excursion(&self) -> f64 {
        self.slope.abs() * (self.window_samples.saturating_sub(1)) as f64
    }

    /// A share of the window's mean in percent (0 for a zero mean).
    pub fn percent_of_mean(&self, x: f64) -> f64 {
        if self.mean > 0.0 {
            100.0 * x / self.mean
        } else {
            0.0
        }
    }
}

/// Judges a rule over intervals fed in order from the timed part's start.
#[derive(Debug, Clone)]
pub struct Judge {
    rule: SteadyRule,
    interval_ns: u64,
    per_sample: usize,
    /// Intervals fed so far, the ramp's included.
    fed: u64,
    /// A sample being gathered (SNIA's round): its intervals, requests and bytes.
    gathering: (usize, u64, u64),
    samples: VecDeque<Sample>,
    verdict: SteadyVerdict,
}

impl Judge {
    /// A judge of `rule` over intervals of `interval_ns`.
    pub fn new(rule: SteadyRule, interval_ns: u64) -> Judge {
        let interval_ns = interval_ns.max(1);
        let per_sample = rule.intervals_per_sample(interval_ns);
        let verdict = SteadyVerdict {
            rule,
            sample_ns: interval_ns * per_sample as u64,
            window_samples: rule.samples(interval_ns),
            attained: false,
            attained_at_ns: None,
            windows_judged: 0,
            window: Vec::new(),
            mean: 0.0,
            max_deviation: 0.0,
            range: 0.0,
            slope: 0.0,
            falling: false,
            criterion: None,
        };
        Judge { rule, interval_ns, per_sample, fed: 0, gathering: (0, 0, 0), samples: VecDeque::new(), verdict }
    }

    /// The next whole interval: its requests and bytes. True once the rule is met (from then
    /// on the judge takes no more).
    pub fn push(&mut self, ops: u64, bytes: u64) -> bool {
        if self.verdict.attained {
            return true;
        }
        let start_ns = self.fed * self.interval_ns;
        self.fed += 1;
        if start_ns < self.rule.ramp_ns {
            return false;
        }
        let g = &mut self.gathering;
        *g = (g.0 + 1, g.1 + ops, g.2 + bytes);
        if g.0 < self.per_sample {
            return false;
        }
        let (n, ops, bytes) = std::mem::take(g);
        self.samples.push_back(Sample::of(ops, bytes, n as u64 * self.interval_ns));
        if self.samples.len() > self.verdict.window_samples {
            self.samples.pop_front();
        }
        if self.samples.len() < self.verdict.window_samples {
            self.verdict.window = self.samples.iter().copied().collect();
            return false;
        }
        self.judge_window();
        if self.verdict.attained {
            self.verdict.attained_at_ns = Some(self.fed * self.interval_ns);
        }
        self.verdict.attained
    }

    /// Whether the rule was met.
    pub fn attained(&self) -> bool {
        self.verdict.attained
    }

    /// The verdict so far.
    pub fn verdict(&self) -> &SteadyVerdict {
        &self.verdict
    }

    /// Judges the whole window now held.
    fn judge_window(&mut self) {
        let figure = self.rule.criterion.figure();
        let ys: Vec<u64> = self.samples.iter().map(|s| s.get(figure)).collect();
        let fit = Fit::of(&ys);
        let v = &mut self.verdict;
        v.windows_judged += 1;
        v.window = self.samples.iter().copied().collect();
        (v.mean, v.max_deviation, v.range) = (fit.mean, fit.max_deviation, fit.range);
        (v.slope, v.falling) = (fit.slope.abs(), fit.slope < 0.0);
        // A criterion that is no number (fio's 0 / 0 over a mean of 0) meets no limit.
        let finite = |c: f64| c.is_finite().then_some(c.abs());
        match self.rule.criterion {
            Criterion::Fio { measure: Measure::Deviation, limit, percent, .. } => {
                let c = if percent { 100.0 * fit.max_deviation / fit.mean } else { fit.max_deviation };
                v.criterion = finite(c);
                v.attained = c < limit;
            }
            Criterion::Fio { measure: Measure::Slope, limit, percent, .. } => {
                // fio divides by the mean of whole numbers truncated to a whole number.
                let c = if percent { 100.0 * fit.slope / (fit.sum / ys.len() as u64) as f64 } else { fit.slope };
                v.criterion = finite(c);
                v.attained = c.abs() < limit;
            }
            Criterion::Snia { .. } => {
                let excursion = fit.slope.abs() * (ys.len() - 1) as f64;
                v.attained =
                    fit.mean > 0.0 && fit.range <= SNIA_RANGE * fit.mean && excursion <= SNIA_EXCURSION * fit.mean;
            }
        }
    }
}

/// A window's figures: its sum, mean, largest deviation, range and least-squares slope.
struct Fit {
    sum: u64,
    mean: f64,
    max_deviation: f64,
    range: f64,
    slope: f64,
}

impl Fit {
    fn of(ys: &[u64]) -> Fit {
        let n = ys.len() as f64;
        let sum: u64 = ys.iter().sum();
        let mean = sum as f64 / n;
        let max_deviation = ys.iter().map(|&y| (y as f64 - mean).abs()).fold(0.0, f64::max);
        let (lo, hi) = (ys.iter().min().copied().unwrap_or(0), ys.iter().max().copied().unwrap_or(0));
        // The slope against x = 0, 1, ..., n-1: (sum xy - sum x sum y / n) / (sum x^2 - (sum x)^2 / n).
        let sum_x = n * (n - 1.0) / 2.0;
        let sum_x_sq = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
        let sum_xy: f64 = ys.iter().enumerate().map(|(i, &y)| i as f64 * y as f64).sum();
        let slope = (sum_xy - sum_x * sum as f64 / n) / (sum_x_sq - sum_x * sum_x / n);
        Fit { sum, mean, max_deviation, range: (hi - lo) as f64, slope }
    }
}

/// The verdict of `rule` over a recorded series of whole intervals of `interval_ns`, given as
/// (requests, bytes) in order: the intervals fed until it was met, or all of them.
pub fn judge_series(rule: SteadyRule, interval_ns: u64, intervals: &[(u64, u64)]) -> SteadyVerdict {
    let mut judge = Judge::new(rule, interval_ns);
    for &(ops, bytes) in intervals {
        if judge.push(ops, bytes) {
            break;
        }
    }
    judge.verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: u64 = 1_000_000_000;

    fn rule(text: &str, window_s: u64, ramp_s: u64) -> SteadyRule {
        SteadyRule {
            criterion: Criterion::parse(text).unwrap(),
            window_ns: window_s * SECOND,
            ramp_ns: ramp_s * SECOND,
        }
    }

    /// Per-second request counts of 4 KiB requests.
    fn seconds(ops: &[u64]) -> Vec<(u64, u64)> {
        ops.iter().map(|&n| (n, n * 4096)).collect()
    }

    #[test]
    fn rules_read_as_fio_reads_them_and_bad_ones_say_what_to_give() {
        assert_eq!(
            Criterion::parse("iops:10%").unwrap(),
            Criterion::Fio { figure: Figure::Iops, measure: Measure::Deviation, limit: 10.0, percent: true }
        );
        assert_eq!(
            Criterion::parse("iops_slope:0.1%").unwrap(),
            Criterion::Fio { figure: Figure::Iops, measure: Measure::Slope, limit: 0.1, percent: true }
        );
        assert_eq!(
            Criterion::parse("bw:10m").unwrap(),
            Criterion::Fio { figure: Figure::Bw, measure: Measure::Deviation, limit: 10_485_760.0, percent: false }
        );
        assert_eq!(
            Criterion::parse("iops:50").unwrap(),
            Criterion::Fio { figure: Figure::Iops, measure: Measure::Deviation, limit: 50.0, percent: false }
        );
        assert_eq!(Criterion::parse("snia").unwrap(), Criterion::Snia { figure: Figure::Iops });
        assert_eq!(Criterion::parse("snia_bw").unwrap(), Criterion::Snia { figure: Figure::Bw });
        assert_eq!(Criterion::parse("bw_slope:2%").unwrap().to_string(), "bw_slope:2%");
        assert!(Criterion::parse("lat:10%").unwrap_err().contains("not a steady-state criterion"));
        assert!(Criterion::parse("iops").unwrap_err().contains("not a steady-state rule"));
        assert!(Criterion::parse("iops:0%").unwrap_err().contains("above 0"));
        assert!(Criterion::parse("iops:-5%").unwrap_err().contains("above 0"));
        assert!(Criterion::parse("bw:10x").unwrap_err().contains("k, m, g or t"));
    }

    #[test]
    fn a_window_is_whole_intervals_at_least_two_and_fits_the_cell() {
        let ms = 1_000_000;
        assert!(rule("iops:10%", 3, 0).check(SECOND, Some(10 * SECOND), "--w", "--r").is_ok());
        let e = rule("iops:10%", 1, 0).check(SECOND, Some(10 * SECOND), "--w", "--r").unwrap_err();
        assert!(e.contains("fewer than 2 intervals"), "{e}");
        let e = SteadyRule { window_ns: 2500 * ms, ..rule("iops:10%", 3, 0) }
            .check(SECOND, None, "--w", "--r")
            .unwrap_err();
        assert!(e.contains("multiple of it"), "{e}");
        let e = rule("iops:10%", 8, 3).check(SECOND, Some(10 * SECOND), "--w", "--r").unwrap_err();
        assert!(e.contains("longer than the cell's duration"), "{e}");
        let e = rule("snia", 6, 0).check(SECOND, Some(60 * SECOND), "--w", "--r").unwrap_err();
        assert!(e.contains("5 rounds"), "{e}");
        assert!(rule("snia", 10, 0).check(SECOND, Some(60 * SECOND), "--w", "--r").is_ok());
    }

    #[test]
    fn fio_mean_deviation_judges_every_window_once_full() {
        // iops:5% over 3 s. Hand computation:
        //  window [1800, 2000, 2000]: mean 1933.33, largest deviation |1800 - 1933.33| = 133.33,
        //    100 x 133.33 / 1933.33 = 6.897% >= 5%: not attained;
        //  window [2000, 2000, 1950]: mean 1983.33, largest deviation |1950 - 1983.33| = 33.33,
        //    100 x 33.33 / 1983.33 = 1.681% < 5%: attained at the end of second 4.
        let v = judge_series(rule("iops:5%", 3, 0), SECOND, &seconds(&[1800, 2000, 2000, 1950, 500]));
        assert!(v.attained);
        assert_eq!(v.attained_at_ns, Some(4 * SECOND));
        assert_eq!(v.windows_judged, 2);
        assert_eq!(v.window.iter().map(|s| s.iops).collect::<Vec<_>>(), [2000, 2000, 1950]);
        assert_eq!(v.window[2].bw, 1950 * 4096);
        assert!((v.mean - 1_983.333_333).abs() < 1e-3, "{}", v.mean);
        assert!((v.max_deviation - 33.333_333).abs() < 1e-3);
        assert!((v.criterion.unwrap() - 1.680_672).abs() < 1e-5, "{:?}", v.criterion);
    }

    #[test]
    fn fio_deviation_is_strictly_below_its_limit_and_absolute_limits_are_rates() {
        // iops:50 over 2 s: [1000, 1100]: mean 1050, deviation 50: 50 < 50 is false, never attained.
        let v = judge_series(rule("iops:50", 2, 0), SECOND, &seconds(&[1000, 1100, 1000]));
        assert!(!v.attained);
        assert_eq!(v.windows_judged, 2);
        assert_eq!(v.criterion, Some(50.0));
        // iops:51: the first window, 50 < 51, attained at 2 s.
        let v = judge_series(rule("iops:51", 2, 0), SECOND, &seconds(&[1000, 1100, 1000]));
        assert_eq!((v.attained, v.attained_at_ns), (true, Some(2 * SECOND)));
        // bw:300k over 2 s of [100, 200] requests of 4 KiB: bytes 409600 and 819200 a second, mean 614400,
        // deviation 204800 < 307200: attained.
        let v = judge_series(rule("bw:300k", 2, 0), SECOND, &seconds(&[100, 200]));
        assert!(v.attained);
        assert_eq!(v.criterion, Some(204_800.0));
    }

    #[test]
    fn fio_slope_is_a_least_squares_fit_over_the_truncated_mean() {
        // iops_slope:1% over 4 s of [100, 102, 104, 106]: x = 0..3, sum x = 6, sum x^2 = 14,
        //  sum y = 412, sum xy = 0 + 102 + 208 + 318 = 628; slope = (628 - 6 x 412 / 4) / (14 - 36 / 4)
        //  = (628 - 618) / 5 = 2 per second; mean truncated 412 / 4 = 103; 100 x 2 / 103 = 1.9417% >= 1%.
        let v = judge_series(rule("iops_slope:1%", 4, 0), SECOND, &seconds(&[100, 102, 104, 106]));
        assert!(!v.attained);
        assert!((v.slope - 2.0).abs() < 1e-12);
        assert!((v.criterion.unwrap() - 1.941_747_57).abs() < 1e-6);
        // Falling: [106, 104, 102, 100]: slope -2, criterion -1.9417%: its magnitude is judged, so
        // iops_slope:2% is met (1.9417 < 2). Stored as sizes and a direction (no negative figure).
        let v = judge_series(rule("iops_slope:2%", 4, 0), SECOND, &seconds(&[106, 104, 102, 100]));
        assert!(v.attained);
        assert_eq!((v.slope, v.falling, v.signed_slope()), (2.0, true, -2.0));
        assert!((v.criterion.unwrap() - 1.941_747_57).abs() < 1e-6);
        assert!((v.signed_criterion().unwrap() + 1.941_747_57).abs() < 1e-6);
        // fio truncates the mean: [1, 2] gives sum 3, mean 3 / 2 = 1 (not 1.5), slope 1: 100%;
        // iops_slope:70% is not met (with 1.5 it would be 66.7%).
        let v = judge_series(rule("iops_slope:70%", 2, 0), SECOND, &seconds(&[1, 2]));
        assert!(!v.attained);
        assert_eq!(v.criterion, Some(100.0));
    }

    #[test]
    fn the_ramp_skips_the_intervals_that_start_before_it() {
        // iops:5% over 2 s after a 2 s ramp: [0, 5000] are the ramp's; [2000, 2000] is judged,
        // deviation 0: attained at the end of second 4.
        let v = judge_series(rule("iops:5%", 2, 2), SECOND, &seconds(&[0, 5000, 2000, 2000]));
        assert_eq!((v.attained, v.attained_at_ns), (true, Some(4 * SECOND)));
        assert_eq!(v.window.iter().map(|s| s.iops).collect::<Vec<_>>(), [2000, 2000]);
    }

    #[test]
    fn a_cell_that_ends_before_its_window_is_whole_is_not_attained_and_keeps_what_it_saw() {
        let v = judge_series(rule("iops:50%", 5, 0), SECOND, &seconds(&[2000, 2000, 2000]));
        assert!(!v.attained);
        assert_eq!(v.windows_judged, 0);
        assert_eq!(v.window.len(), 3);
        assert_eq!(v.criterion, None);
    }

    #[test]
    fn a_window_of_nothing_is_never_steady() {
        // Mean 0: fio's 0 / 0 is not below any limit, and no number to store.
        let v = judge_series(rule("iops:10%", 2, 0), SECOND, &seconds(&[0, 0, 0]));
        assert!(!v.attained);
        assert_eq!((v.windows_judged, v.criterion), (2, None));
        let v = judge_series(rule("iops_slope:10%", 2, 0), SECOND, &seconds(&[0, 0, 0]));
        assert!(!v.attained);
        let v = judge_series(rule("snia", 5, 0), SECOND, &seconds(&[0; 6]));
        assert!(!v.attained);
    }

    #[test]
    fn snia_judges_five_rounds_on_range_and_excursion() {
        // snia over 10 s of 1 s intervals: rounds of 2 s, each its rate over its 2 s.
        // Rounds [1000, 900, 1100, 1000, 1000] (from pairs summing to 2000, 1800, 2200, 2000, 2000):
        //  mean 1000; range 1100 - 900 = 200 <= 20% x 1000 = 200: met (at most);
        //  sum xy = 0 + 900 + 2200 + 3000 + 4000 = 10100, sum x = 10, sum x^2 = 30, sum y = 5000:
        //  slope = (10100 - 10 x 5000 / 5) / (30 - 100 / 5) = 100 / 10 = 10 per round; excursion
        //  10 x 4 = 40 <= 100: met. Attained at the end of round 5, 10 s.
        let pairs = [1000, 1000, 900, 900, 1100, 1100, 1000, 1000, 1000, 1000];
        let v = judge_series(rule("snia", 10, 0), SECOND, &seconds(&pairs));
        assert!(v.attained);
        assert_eq!(v.attained_at_ns, Some(10 * SECOND));
        assert_eq!(v.sample_ns, 2 * SECOND);
        assert_eq!(v.window.iter().map(|s| s.iops).collect::<Vec<_>>(), [1000, 900, 1100, 1000, 1000]);
        assert_eq!(v.range, 200.0);
        assert!((v.slope - 10.0).abs() < 1e-9);
        assert!((v.excursion() - 40.0).abs() < 1e-9);
        assert_eq!(v.criterion, None);
    }

    #[test]
    fn snia_refuses_a_trend_within_its_range_and_a_range_without_a_trend() {
        // Rounds [900, 950, 1000, 1050, 1100] (1 s each, window 5 s): mean 1000, range 200 <= 200,
        //  slope 50 per round, excursion 200 > 10% x 1000 = 100: not steady.
        let v = judge_series(rule("snia", 5, 0), SECOND, &seconds(&[900, 950, 1000, 1050, 1100]));
        assert!(!v.attained);
        assert!((v.excursion() - 200.0).abs() < 1e-9);
        // [1000, 1300, 1000, 1000, 1000]: mean 1060, range 300 > 20% x 1060 = 212: not steady, whatever
        //  the slope; one round on, [1300, 1000, 1000, 1000, 1000]: the same; then [1000; 5]: mean 1000,
        //  range 0, slope 0: steady at the end of the 7th round (7 s), the third window judged.
        let v = judge_series(rule("snia", 5, 0), SECOND, &seconds(&[1000, 1300, 1000, 1000, 1000, 1000, 1000]));
        assert_eq!((v.attained, v.attained_at_ns, v.windows_judged), (true, Some(7 * SECOND), 3));
    }

    #[test]
    fn a_recorded_throttled_series_meets_fio_and_snia_as_computed_by_hand() {
        // Per-second reads of a 2,000 IOPS blkio throttle at depth 1 (the throttle's 100 ms slices:
        // 200 requests each), the first second short of a slice as the cell started mid-slice.
        let recorded = [1800, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000];
        // iops:5% over 3 s: [1800, 2000, 2000] is 6.897% off (above), [2000, 2000, 2000] is 0%: at 4 s.
        let v = judge_series(rule("iops:5%", 3, 0), SECOND, &seconds(&recorded));
        assert_eq!((v.attained, v.attained_at_ns), (true, Some(4 * SECOND)));
        // iops_slope:0.1% over 3 s: [1800, 2000, 2000]: sum xy = 2000 + 4000 = 6000, sum y = 5800,
        //  slope = (6000 - 3 x 5800 / 3) / (5 - 9 / 3) = 200 / 2 = 100; mean 5800 / 3 = 1933 (truncated);
        //  5.17% >= 0.1%; then [2000, 2000, 2000]: slope 0: at 4 s.
        let v = judge_series(rule("iops_slope:0.1%", 3, 0), SECOND, &seconds(&recorded));
        assert_eq!((v.attained, v.attained_at_ns), (true, Some(4 * SECOND)));
        // snia over 5 s: rounds [1800, 2000, 2000, 2000, 2000]: mean 1960, range 200 <= 392; slope:
        //  sum xy = 2000 x (1 + 2 + 3 + 4) = 20000, sum y = 9800: (20000 - 10 x 9800 / 5) / 10 = 40,
        //  excursion 160 <= 196: steady at the end of round 5 (5 s).
        let v = judge_series(rule("snia", 5, 0), SECOND, &seconds(&recorded));
        assert_eq!((v.attained, v.attained_at_ns), (true, Some(5 * SECOND)));
        assert!((v.excursion() - 160.0).abs() < 1e-9);
        // The same device throttled to 2,000 and 1,000 in turn, second by second: never steady
        // by either rule ([2000, 1000, 2000]: deviation 33.3%; rounds range 1000 > 20% of 1600).
        let alternating: Vec<u64> = (0..10).map(|k| if k % 2 == 0 { 2000 } else { 1000 }).collect();
        let v = judge_series(rule("iops:5%", 3, 0), SECOND, &seconds(&alternating));
        assert_eq!((v.attained, v.windows_judged), (false, 8));
        // The last window, [1000, 2000, 1000]: mean 1333.33, deviation 666.67: 50%.
        assert!((v.criterion.unwrap() - 50.0).abs() < 1e-9, "{:?}", v.criterion);
        assert!(!judge_series(rule("snia", 5, 0), SECOND, &seconds(&alternating)).attained);
    }

    #[test]
    fn a_rule_travels_in_a_plan_as_typed_json() {
        let r = rule("iops_slope:0.5%", 60, 10);
        let json = serde_json::to_value(r).unwrap();
        assert_eq!(json["criterion"]["rule"], "fio");
        assert_eq!(json["criterion"]["measure"], "slope");
        assert_eq!(serde_json::from_value::<SteadyRule>(json).unwrap(), r);
        let snia = serde_json::to_value(rule("snia", 50, 0)).unwrap();
        assert_eq!(snia["criterion"], serde_json::json!({"rule": "snia", "figure": "iops"}));
    }
}
