//! Samples that are not figures of the storage, flagged (never dropped): an **outlier** among a
//! cell's repeats, and a **descheduled** cell, whose threads got little CPU where its repeats
//! (or, with fewer than two repeats, the other cells of its test) kept a core busy.
//!
//! - Outlier: hyperfine's rule, the modified Z-score of Iglewicz and Hoaglin,
//!   `0.6745 * (x - median) / MAD` (MAD: the median of the absolute deviations from the
//!   median), flagged above [`OUTLIER_SCORE`] in either direction. Where MAD is 0 (more than half
//!   the samples equal the median), the score is undefined; the mean absolute deviation stands in
//!   for it, `(x - median) / (1.253314 * MeanAD)` (the same scale for normal samples), so a lone
//!   sample far from identical repeats is flagged and one a hair apart is not; where every sample
//!   is the same, none is. Three samples at least: with two, both lie at the same distance. And
//!   a sample within [`OUTLIER_FLOOR`] (5%) of the median is never one, however steady its
//!   repeats: a paced cell repeats to the request (MAD near 0), and a sample 0.5% below it is no
//!   result to doubt.
//! - Descheduled: a cell whose CPU % is below [`DESCHEDULED_SHARE`] of its reference's median
//!   CPU %, where that median is at least [`CPU_BOUND_PERCENT`] (the reference kept a thread
//!   busy: the work is CPU-bound, so a thread at a fraction of it was off its CPU), and whose
//!   figure is below the reference's median figure. The reference is the cell's repeats where
//!   it has two or more, else the other cells of the same test and file size (two samples at
//!   least: the other record sizes or mixes over the same file, which the page cache serves or
//!   not alike). An I/O-bound cell that sits at low CPU in every repeat has a reference below the
//!   floor: never flagged.

use serde::Serialize;

/// Flagged above this modified Z-score (hyperfine's and Iglewicz and Hoaglin's 3.5).
pub const OUTLIER_SCORE: f64 = 3.5;

/// A sample closer to the median than this share of it is never an outlier.
pub const OUTLIER_FLOOR: f64 = 0.05;

/// A cell below this share of its reference's median CPU % ...
pub const DESCHEDULED_SHARE: f64 = 0.25;

/// ... where that median is at least this CPU % (one thread busy half the cell or more).
pub const CPU_BOUND_PERCENT: f64 = 50.0;

/// The modified Z-score's constant: the 0.75 quantile of the standard normal.
const MAD_SCALE: f64 = 0.6745;

/// With MAD 0, the mean absolute deviation's scale to a normal's standard deviation: sqrt(pi/2).
const MEAN_AD_SCALE: f64 = 1.253_314;

/// Each sample's modified Z-score (the module's rule); all 0 for fewer than three samples or
/// samples that are all the same.
pub fn modified_z_scores(values: &[f64]) -> Vec<f64> {
    if values.len() < 3 {
        return vec![0.0; values.len()];
    }
    let median = crate::median(values);
    let deviations: Vec<f64> = values.iter().map(|v| (v - median).abs()).collect();
    let mad = crate::median(&deviations);
    if mad > 0.0 {
        return values.iter().map(|v| MAD_SCALE * (v - median) / mad).collect();
    }
    let mean_ad = deviations.iter().sum::<f64>() / deviations.len() as f64;
    if mean_ad > 0.0 {
        values.iter().map(|v| (v - median) / (MEAN_AD_SCALE * mean_ad)).collect()
    } else {
        vec![0.0; values.len()]
    }
}

/// The positions of the samples whose modified Z-score lies beyond [`OUTLIER_SCORE`] and that
/// lie at least [`OUTLIER_FLOOR`] from the median.
pub fn outliers(values: &[f64]) -> Vec<usize> {
    let scores = modified_z_scores(values);
    let median = crate::median(values);
    let far = |v: f64| (v - median).abs() >= OUTLIER_FLOOR * median.abs();
    (0..values.len()).filter(|i| scores[*i].abs() > OUTLIER_SCORE && far(values[*i])).collect()
}

/// Whether a cell at `cpu` % with `figure` was descheduled, against its reference's CPU % and
/// figures (the module's rule).
pub fn descheduled(cpu: f64, figure: f64, reference_cpu: &[f64], reference_figures: &[f64]) -> bool {
    descheduled_by(
        cpu,
        figure,
        reference_cpu.len(),
        || crate::median(reference_cpu),
        || crate::median(reference_figures),
    )
}

/// [`descheduled`] with the reference given by its number of CPU figures and its medians, each
/// worked out only where the rule needs it.
fn descheduled_by(
    cpu: f64,
    figure: f64,
    reference_cpus: usize,
    usual_cpu: impl FnOnce() -> f64,
    usual_figure: impl FnOnce() -> f64,
) -> bool {
    if reference_cpus < 2 || !cpu.is_finite() {
        return false;
    }
    let usual = usual_cpu();
    usual >= CPU_BOUND_PERCENT && cpu < DESCHEDULED_SHARE * usual && figure < usual_figure()
}

/// The median of a list with one of its values left out, for each value in turn, from one sort:
/// a cell's repeats without the cell itself. The same figure as [`crate::median`] of the list
/// without that value (non-finite values left out as it leaves them out), without copying and
/// sorting the list once per value: a side of 1,400 repeats is 1,400 medians of 1,399.
struct MedianWithout {
    sorted: Vec<f64>,
}

impl MedianWithout {
    fn new(values: impl Iterator<Item = f64>) -> MedianWithout {
        let mut sorted: Vec<f64> = values.filter(|x| x.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        MedianWithout { sorted }
    }

    /// The median of the values but one `left_out` (one of them).
    fn without(&self, left_out: f64) -> f64 {
        let s = &self.sorted;
        let k = s.partition_point(|x| x.total_cmp(&left_out).is_lt());
        if !left_out.is_finite() || k >= s.len() || s[k].total_cmp(&left_out).is_ne() {
            // Not among the sorted values (median() drops it): the median of them all.
            return crate::median(s);
        }
        let n = s.len() - 1;
        if n == 0 {
            return 0.0;
        }
        // The j-th of the values left, in order: the sorted list with position k taken out.
        let at = |j: usize| if j < k { s[j] } else { s[j + 1] };
        if n % 2 == 1 {
            at(n / 2)
        } else {
            f64::midpoint(at(n / 2 - 1), at(n / 2))
        }
    }
}

/// Why a sample is flagged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Flag {
    /// Far from its repeats: its modified Z-score.
    Outlier {
        /// The sample's modified Z-score (negative: below the median).
        score: f64,
    },
    /// Its threads were off their CPU.
    Descheduled {
        /// The cell's CPU %.
        cpu_percent: f64,
        /// The median CPU % of its reference.
        usual_cpu_percent: f64,
        /// Whether the reference was the cell's repeats (else the other cells of its test).
        against_repeats: bool,
    },
}

/// One stored cell flagged: which, its figure, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flagged {
    /// The cell as the tables name it ("read 64m/4k").
    pub cell: String,
    /// The run that stored it.
    pub run: i64,
    /// Its place in the run's order of cells.
    pub seq: usize,
    /// Its figure.
    pub value: f64,
    /// The figure's unit.
    pub unit: &'static str,
    /// Why.
    pub flag: Flag,
}

impl Flagged {
    /// The mark beside a flagged figure: `!` for an outlier, `?` for a descheduled cell.
    pub fn mark(&self) -> &'static str {
        match self.flag {
            Flag::Outlier { .. } => "!",
            Flag::Descheduled { .. } => "?",
        }
    }

    /// "cell 3 of run #12, 5120 KB/s: outlier (modified Z-score -9.1, beyond 3.5)".
    pub fn describe(&self) -> String {
        let value = iomatrix_core::human::significant(self.value);
        format!("cell {} of run #{}, {value} {}: {}", self.seq, self.run, self.unit, self.reason())
    }

    /// Why, in words: "outlier (modified Z-score -9.1, beyond 3.5)", "descheduled (at 7% CPU
    /// where its repeats ran at 90%: its threads were off their CPU)".
    pub fn reason(&self) -> String {
        match self.flag {
            Flag::Outlier { score } => format!("outlier (modified Z-score {score:.1}, beyond {OUTLIER_SCORE})"),
            Flag::Descheduled { cpu_percent, usual_cpu_percent, against_repeats } => format!(
                "descheduled (at {cpu_percent:.0}% CPU where {} ran at {usual_cpu_percent:.0}%: its threads were off \
                 their CPU)",
                if against_repeats { "its repeats" } else { "the other cells of its test and file size" }
            ),
        }
    }
}

/// One sample of a cell as a group gathers it: where it was stored, its figure and CPU %.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// The run that stored it.
    pub run: i64,
    /// Its place in the run's order of cells.
    pub seq: usize,
    /// Its figure.
    pub value: f64,
    /// Its CPU %, where stored.
    pub cpu_percent: Option<f64>,
}

/// One cell's samples, as [`flag`] takes them.
#[derive(Debug, Clone, PartialEq)]
pub struct CellSamples {
    /// The cell as the tables name it.
    pub name: String,
    /// Its peers' name (its test and file size): cells of one are each other's reference where a
    /// cell has too few repeats.
    pub peers: String,
    /// Its figure's unit.
    pub unit: &'static str,
    /// Its samples, in run order.
    pub samples: Vec<Sample>,
}

/// Every flagged sample of `cells`: outliers among each cell's samples, then descheduled ones,
/// in the cells' order.
pub fn flag(cells: &[CellSamples]) -> Vec<Flagged> {
    let mut out = Vec::new();
    for CellSamples { name, unit, samples, .. } in cells {
        let values: Vec<f64> = samples.iter().map(|s| s.value).collect();
        let scores = modified_z_scores(&values);
        for i in outliers(&values) {
            let s = samples[i];
            let flag = Flag::Outlier { score: scores[i] };
            out.push(Flagged { cell: name.clone(), run: s.run, seq: s.seq, value: s.value, unit, flag });
        }
    }
    for (index, CellSamples { name, peers, unit, samples }) in cells.iter().enumerate() {
        // Against its repeats (two or more besides the cell): each cell's reference is the
        // others, whose medians come from one sort of them all.
        let repeat_cpus = MedianWithout::new(samples.iter().filter_map(|s| s.cpu_percent));
        let repeat_figures = MedianWithout::new(samples.iter().map(|s| s.value));
        let cpus_given = samples.iter().filter(|s| s.cpu_percent.is_some()).count();
        for (i, s) in samples.iter().enumerate() {
            let Some(cpu) = s.cpu_percent else { continue };
            if samples.len() > 2 {
                let usual = || repeat_cpus.without(cpu);
                if descheduled_by(cpu, s.value, cpus_given - 1, usual, || repeat_figures.without(s.value)) {
                    let flag =
                        Flag::Descheduled { cpu_percent: cpu, usual_cpu_percent: usual(), against_repeats: true };
                    out.push(Flagged { cell: name.clone(), run: s.run, seq: s.seq, value: s.value, unit, flag });
                }
                continue;
            }
            let repeats: Vec<Sample> = samples.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, s)| *s).collect();
            let (reference, against_repeats) = if repeats.len() >= 2 {
                (repeats, true)
            } else {
                let same_test =
                    cells.iter().enumerate().filter(|(j, c)| *j != index && c.peers == *peers && c.unit == *unit);
                (same_test.flat_map(|(_, c)| c.samples.iter().copied()).collect(), false)
            };
            let cpus: Vec<f64> = reference.iter().filter_map(|r| r.cpu_percent).collect();
            let figures: Vec<f64> = reference.iter().map(|r| r.value).collect();
            if descheduled(cpu, s.value, &cpus, &figures) {
                let flag =
                    Flag::Descheduled { cpu_percent: cpu, usual_cpu_percent: crate::median(&cpus), against_repeats };
                out.push(Flagged { cell: name.clone(), run: s.run, seq: s.seq, value: s.value, unit, flag });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_without_one_value_is_the_median_of_the_others() {
        let lists: [&[f64]; 6] = [
            &[5.0, 1.0, 3.0, 3.0, 9.0, -2.0, 7.5],
            &[1.0, 2.0, 3.0, 4.0],
            &[2.0, 2.0, 2.0],
            &[f64::NAN, 4.0, 1.0, f64::INFINITY, 8.0],
            &[0.0, -0.0, 1.0],
            &[7.0, 1.0],
        ];
        for values in lists {
            let medians = MedianWithout::new(values.iter().copied());
            for i in 0..values.len() {
                let others: Vec<f64> = values.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, v)| *v).collect();
                let (got, want) = (medians.without(values[i]), crate::median(&others));
                assert_eq!(got.to_bits(), want.to_bits(), "{values:?} without #{i}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn a_sample_far_from_its_repeats_is_an_outlier_by_its_modified_z_score() {
        // Median 100, deviations 2, 1, 0, 1, 60: MAD 1; 0.6745 * -60 / 1 = -40.5.
        let values = [102.0, 99.0, 100.0, 101.0, 40.0];
        let scores = modified_z_scores(&values);
        assert!((scores[4] + 40.47).abs() < 1e-9, "{scores:?}");
        assert!((scores[0] - 1.349).abs() < 1e-9, "{scores:?}");
        assert_eq!(outliers(&values), [4]);
        // Spread evenly, none: 10% either side is noise, not an outlier.
        assert!(outliers(&[90.0, 95.0, 100.0, 105.0, 110.0]).is_empty());
        // Just inside and just beyond 3.5: median 10, MAD 1, 3.5 / 0.6745 = 5.19 from the median.
        assert!(outliers(&[9.0, 10.0, 11.0, 10.0, 15.1]).is_empty());
        assert_eq!(outliers(&[9.0, 10.0, 11.0, 10.0, 15.3]), [4]);
    }

    #[test]
    fn with_mad_zero_the_mean_absolute_deviation_stands_in_and_identical_samples_flag_none() {
        // Four equal and one far: MAD 0; MeanAD 19.8; 99 / (1.2533 * 19.8) = 3.99.
        assert_eq!(outliers(&[100.0, 100.0, 100.0, 100.0, 1.0]), [4]);
        // Two equal and one a hair apart: MeanAD 1/3; 1 / (1.2533 / 3) = 2.39: not flagged.
        assert!(outliers(&[100.0, 100.0, 101.0]).is_empty());
        assert!(outliers(&[7.0; 6]).is_empty());
        // Two samples can never be told apart by the rule.
        assert!(outliers(&[1.0, 1000.0]).is_empty());
        // A paced cell's repeats: 0.5% below a MAD of 1 scores -67, but is within 5% of the median.
        let paced = [19998.0, 19999.0, 19998.0, 19900.0, 19999.0, 19998.0, 19997.0];
        assert!(modified_z_scores(&paced)[3] < -60.0);
        assert!(outliers(&paced).is_empty());
        assert_eq!(outliers(&[19998.0, 19999.0, 19998.0, 5947.0, 19999.0, 19998.0, 19997.0]), [3]);
    }

    #[test]
    fn a_cell_at_cpu_7_percent_whose_repeats_ran_at_90_is_descheduled_and_an_io_bound_one_is_not() {
        // The finding: CPU 7% and the worst figure, its repeats at about 90%.
        assert!(descheduled(7.0, 52_000.0, &[88.0, 91.0, 90.0, 93.0], &[210_000.0, 205_000.0, 213_000.0, 200_000.0]));
        // An I/O-bound cell: 4% CPU, as every repeat; the reference is below the 50% floor.
        assert!(!descheduled(4.0, 900.0, &[5.0, 3.0, 4.0], &[1000.0, 1100.0, 1050.0]));
        // Low CPU but a figure at or above its repeats': no thread was kept from its work.
        assert!(!descheduled(7.0, 220_000.0, &[88.0, 91.0, 90.0], &[210_000.0, 205_000.0, 213_000.0]));
        // Half its repeats' CPU: slower, but not off its CPU.
        assert!(!descheduled(45.0, 100.0, &[88.0, 91.0, 90.0], &[200.0, 205.0, 213.0]));
        // One repeat is no reference.
        assert!(!descheduled(7.0, 1.0, &[90.0], &[200.0]));
    }

    #[test]
    fn flagged_samples_name_their_cell_run_and_why() {
        let sample = |seq: usize, value: f64, cpu: f64| Sample { run: 3, seq, value, cpu_percent: Some(cpu) };
        let repeats = vec![
            sample(0, 200.0, 90.0),
            sample(1, 210.0, 91.0),
            sample(2, 205.0, 89.0),
            sample(3, 60.0, 7.0),
            sample(4, 201.0, 92.0),
        ];
        // A cell repeated once, its reference the other cells of its test.
        let lone = vec![sample(5, 30.0, 6.0)];
        let cell =
            |name: &str, samples| CellSamples { name: name.into(), peers: "read 1m".into(), unit: "KB/s", samples };
        let cells = vec![cell("read 1m/4k", repeats), cell("read 2m/4k", lone)];
        let flagged = flag(&cells);
        let said: Vec<(usize, &str)> = flagged.iter().map(|f| (f.seq, f.mark())).collect();
        assert_eq!(said, [(3, "!"), (3, "?"), (5, "?")]);
        assert!(
            flagged[0].describe().starts_with("cell 3 of run #3, 60.00 KB/s: outlier (modified Z-score"),
            "{}",
            flagged[0].describe()
        );
        assert!(flagged[1].describe().contains("at 7% CPU where its repeats ran at 90%"), "{}", flagged[1].describe());
        assert!(
            flagged[2].describe().contains("where the other cells of its test and file size ran at"),
            "{}",
            flagged[2].describe()
        );
    }
}
