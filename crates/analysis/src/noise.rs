//! Is a change beyond the run-to-run noise? A two-sided Mann-Whitney rank
//! test of A's samples against B's at the 5% level, exact (the rank sums of
//! every split of the pooled samples, ties given their mean rank) up to 40
//! samples in all, the normal approximation with tie correction above.
//!
//! A rank test rather than a bootstrap: with the 3 to 10 samples `--repeat`
//! gives, a bootstrap of medians draws from too few distinct values to hold
//! its level, while the rank test's level holds exactly for any distribution.

use serde::Serialize;

/// The test's level: a change is called faster or slower when a difference
/// at least as large would arise by chance in at most 5% of same-setup pairs.
pub const ALPHA: f64 = 0.05;

/// Up to this many samples in all, the p-value is exact.
const EXACT_UP_TO: usize = 40;

/// What the samples say about one change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judgement {
    /// "faster", "slower", "within noise", or "no verdict" (too few samples
    /// on a side for the test ever to reach its level).
    pub verdict: &'static str,
    /// The rank test's two-sided p-value; None where no verdict is possible.
    pub p_value: Option<f64>,
    /// How many samples A has.
    pub a_samples: usize,
    /// How many samples B has.
    pub b_samples: usize,
    /// With "no verdict": samples per side (`--repeat`) that would give one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeats_needed: Option<usize>,
}

impl Judgement {
    /// The verdict with the numbers behind it, for the text tables.
    pub fn describe(&self) -> String {
        match (self.verdict, self.p_value, self.repeats_needed) {
            ("no verdict", _, Some(_)) => format!("no verdict ({} vs {} samples)", self.a_samples, self.b_samples),
            (v, Some(p), _) => format!("{v} (p={p:.3})"),
            (v, _, _) => v.to_string(),
        }
    }
}

/// B against A. `higher_is_better`: rates (KB/s, ops/s); false for times.
pub fn judge(a: &[f64], b: &[f64], higher_is_better: bool) -> Judgement {
    let (a, b) = (finite(a), finite(b));
    let (n, m) = (a.len(), b.len());
    if min_p_value(n, m) > ALPHA {
        return Judgement {
            verdict: "no verdict",
            p_value: None,
            a_samples: n,
            b_samples: m,
            repeats_needed: Some(repeats_needed(n, m)),
        };
    }
    let (p, b_higher) = rank_test(&a, &b);
    let verdict = if p > ALPHA {
        "within noise"
    } else if b_higher == higher_is_better {
        "faster"
    } else {
        "slower"
    };
    Judgement { verdict, p_value: Some(p), a_samples: n, b_samples: m, repeats_needed: None }
}

/// Is B slower than A by more than `threshold` (0.05 for 5%) beyond noise?
/// The test is run against A moved by the threshold in B's disfavour (rates
/// times 0.95, times 1.05): B must be slower than that, at the test's level.
pub fn slower_beyond(a: &[f64], b: &[f64], higher_is_better: bool, threshold: f64) -> bool {
    let factor = if higher_is_better { 1.0 - threshold } else { 1.0 + threshold };
    let moved: Vec<f64> = a.iter().map(|v| v * factor).collect();
    judge(&moved, b, higher_is_better).verdict == "slower"
}

fn finite(v: &[f64]) -> Vec<f64> {
    v.iter().copied().filter(|x| x.is_finite()).collect()
}

/// The smallest two-sided p-value samples of n and m can give: both extreme
/// splits out of C(n+m, n).
fn min_p_value(n: usize, m: usize) -> f64 {
    if n == 0 || m == 0 {
        return 1.0;
    }
    (2.0 / binomial(n + m, n)).min(1.0)
}

/// Samples per side for a possible verdict: at least what each side has.
fn repeats_needed(n: usize, m: usize) -> usize {
    (1..=64).find(|k| min_p_value(n.max(*k), m.max(*k)) <= ALPHA).unwrap_or(64)
}

fn binomial(n: usize, k: usize) -> f64 {
    (0..k.min(n - k)).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// (two-sided p-value, whether B's ranks lie above A's).
fn rank_test(a: &[f64], b: &[f64]) -> (f64, bool) {
    let ranks = mid_ranks(a, b);
    let n = a.len();
    // Twice the ranks: mid-ranks of ties are then whole numbers.
    let doubled: Vec<usize> = ranks.iter().map(|r| (r * 2.0).round() as usize).collect();
    let observed: usize = doubled[..n].iter().sum();
    let total = a.len() + b.len();
    let expected = n as f64 * (total + 1) as f64; // twice n(N+1)/2
    let distance = (observed as f64 - expected).abs();
    let b_higher = (observed as f64) < expected;
    if distance == 0.0 {
        return (1.0, b_higher);
    }
    let p = if total <= EXACT_UP_TO {
        exact_p(&doubled, n, distance, expected)
    } else {
        normal_p(&ranks, n, b.len(), distance / 2.0)
    };
    (p.min(1.0), b_higher)
}

/// The share of all n-subsets of the pooled (doubled) ranks whose sum lies
/// at least `distance` from the expected sum.
fn exact_p(doubled: &[usize], n: usize, distance: f64, expected: f64) -> f64 {
    let max_sum: usize = doubled.iter().sum();
    // ways[k][s]: subsets of k of the ranks seen so far summing to s.
    let mut ways = vec![vec![0.0f64; max_sum + 1]; n + 1];
    ways[0][0] = 1.0;
    for &r in doubled {
        for k in (1..=n).rev() {
            for s in (r..=max_sum).rev() {
                let add = ways[k - 1][s - r];
                if add != 0.0 {
                    ways[k][s] += add;
                }
            }
        }
    }
    let all: f64 = ways[n].iter().sum();
    // A small tolerance keeps the observed split itself in the tail.
    let extreme: f64 = ways[n]
        .iter()
        .enumerate()
        .filter(|(s, _)| (*s as f64 - expected).abs() >= distance - 1e-9)
        .map(|(_, w)| w)
        .sum();
    extreme / all
}

/// Normal approximation of the rank sum, with tie and continuity correction.
fn normal_p(ranks: &[f64], n: usize, m: usize, distance: f64) -> f64 {
    let total = (n + m) as f64;
    let mut sorted = ranks.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut ties = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let j = sorted[i..].iter().take_while(|r| **r == sorted[i]).count();
        ties += (j * j * j - j) as f64;
        i += j;
    }
    let variance = n as f64 * m as f64 / 12.0 * ((total + 1.0) - ties / (total * (total - 1.0)));
    if variance <= 0.0 {
        return 1.0;
    }
    let z = (distance - 0.5).max(0.0) / variance.sqrt();
    2.0 * (1.0 - standard_normal_cdf(z))
}

fn standard_normal_cdf(z: f64) -> f64 {
    // Abramowitz and Stegun 7.1.26: error below 1.5e-7, ample for a 5% level.
    let t = 1.0 / (1.0 + 0.3275911 * z / std::f64::consts::SQRT_2);
    let poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    let erf = 1.0 - poly * (-(z * z) / 2.0).exp();
    0.5 * (1.0 + erf)
}

/// Ranks (1-based) of a's then b's samples in the pooled order; ties get
/// the mean of the ranks they span.
fn mid_ranks(a: &[f64], b: &[f64]) -> Vec<f64> {
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let mut order: Vec<usize> = (0..pooled.len()).collect();
    order.sort_by(|x, y| pooled[*x].total_cmp(&pooled[*y]));
    let mut ranks = vec![0.0; pooled.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        while j < order.len() && pooled[order[j]] == pooled[order[i]] {
            j += 1;
        }
        let mean = (i + 1 + j) as f64 / 2.0;
        for &k in &order[i..j] {
            ranks[k] = mean;
        }
        i = j;
    }
    ranks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trials' draws: seeded, so they repeat exactly.
    struct Rng(iomatrix_random::Generator);
    impl Rng {
        /// Normal with mean `mu` and standard deviation `sd` (Box-Muller).
        fn normal(&mut self, mu: f64, sd: f64) -> f64 {
            let (u, v) = (self.0.unit(), self.0.unit());
            mu + sd * (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        }
        fn samples(&mut self, k: usize, mu: f64, sd: f64) -> Vec<f64> {
            (0..k).map(|_| self.normal(mu, sd)).collect()
        }
    }

    #[test]
    fn exact_p_values_match_the_tables() {
        // 5 vs 5, complete separation: 2 of C(10,5) = 252 splits are as extreme.
        let p = rank_test(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).0;
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        // One swap (U = 1): splits with U <= 1 or U >= 24 are 4 of 252.
        let p = rank_test(&[1.0, 2.0, 3.0, 4.0, 6.0], &[5.0, 7.0, 8.0, 9.0, 10.0]).0;
        assert!((p - 4.0 / 252.0).abs() < 1e-12, "{p}");
        // Identical samples: nothing to tell apart.
        assert_eq!(rank_test(&[3.0; 4], &[3.0; 4]).0, 1.0);
        // The normal approximation agrees with the exact value near the 5% level.
        let a: Vec<f64> = (0..30).map(f64::from).collect();
        let b: Vec<f64> = (0..30).map(|i| f64::from(i) + 8.0).collect();
        let ranks = mid_ranks(&a, &b);
        let doubled: Vec<usize> = ranks.iter().map(|r| (r * 2.0).round() as usize).collect();
        let observed: usize = doubled[..30].iter().sum();
        let expected = 30.0 * 61.0;
        let d = (observed as f64 - expected).abs();
        let (exact, approx) = (exact_p(&doubled, 30, d, expected), normal_p(&ranks, 30, 30, d / 2.0));
        assert!((exact - approx).abs() < 0.01, "exact {exact}, normal {approx}");
    }

    #[test]
    fn one_sample_gives_no_verdict_and_says_how_many_would() {
        let j = judge(&[100.0], &[50.0, 51.0, 52.0], true);
        assert_eq!(j.verdict, "no verdict");
        // 3 vs 3: 2/20 = 10% at best; 4 vs 4: 2/70 < 5%.
        assert_eq!(j.repeats_needed, Some(4));
        assert_eq!(j.describe(), "no verdict (1 vs 3 samples)");
        assert_eq!(judge(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], true).verdict, "faster");
        assert_eq!(judge(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], false).verdict, "slower");
    }

    /// Same-setup sides are called within noise in at least 95% of cells, and a
    /// planted 20% slowdown is found, over 20 seeded trials of 50 cells each
    /// (5 repeats a side, 5% standard deviation, as page-cache runs here show).
    #[test]
    fn same_setups_are_within_noise_and_a_planted_slowdown_is_found() {
        let mut rng = Rng(iomatrix_random::Generator::seeded(21));
        let (mut within, mut cells, mut found) = (0, 0, 0);
        for _trial in 0..20 {
            for cell in 0..50 {
                let mu = 1000.0 * f64::from(cell + 1);
                let a = rng.samples(5, mu, mu * 0.05);
                let b = rng.samples(5, mu, mu * 0.05);
                cells += 1;
                if judge(&a, &b, true).verdict == "within noise" {
                    within += 1;
                }
            }
            let a = rng.samples(5, 1000.0, 50.0);
            let slow = rng.samples(5, 800.0, 40.0);
            if judge(&a, &slow, true).verdict == "slower" && slower_beyond(&a, &slow, true, 0.05) {
                found += 1;
            }
        }
        assert!(f64::from(within) >= 0.95 * f64::from(cells), "{within} of {cells} within noise");
        assert_eq!(found, 20, "the planted slowdown found in every trial");
    }

    #[test]
    fn the_threshold_moves_the_baseline() {
        // B 3% slower, clearly: slower, but not slower by more than 5%.
        let a = [100.0, 100.5, 101.0, 99.5, 100.2];
        let b: Vec<f64> = a.iter().map(|v| v * 0.97).collect();
        assert_eq!(judge(&a, &b, true).verdict, "slower");
        assert!(!slower_beyond(&a, &b, true, 0.05));
        assert!(slower_beyond(&a, &b, true, 0.01));
        // Times: higher is worse.
        let t: Vec<f64> = a.iter().map(|v| v * 1.10).collect();
        assert!(slower_beyond(&a, &t, false, 0.05));
        assert!(!slower_beyond(&t, &a, false, 0.05));
    }
}
