//! Is a change beyond the run-to-run noise? A two-sided Mann-Whitney rank
//! test of A's samples against B's at the 5% level, exact (the rank sums of
//! every split of the pooled samples, ties given their mean rank) up to 40
//! samples in all, the normal approximation with tie correction above; and
//! the one-sided test `--fail-if-slower`'s gate takes ([`worse_p`]), with the
//! smallest p samples can give and the change they can detect.
//!
//! A rank test rather than a bootstrap: with the 3 to 10 samples `--repeat`
//! gives, a bootstrap of medians draws from too few distinct values to hold
//! its level, while the rank test's level holds exactly for any distribution.

use serde::Serialize;
use std::collections::HashMap;

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

/// The one-sided p-value that B is worse than A (lower where higher is
/// better, higher for times): the share of same-setup pairs whose ranks lie
/// at least this far in that one direction. Exact up to 40 samples in all,
/// the normal approximation above; 1 where a side has no finite sample.
pub fn worse_p(a: &[f64], b: &[f64], higher_is_better: bool) -> f64 {
    let (a, b) = (finite(a), finite(b));
    if a.is_empty() || b.is_empty() {
        return 1.0;
    }
    let ranks = mid_ranks(&a, &b);
    let n = a.len();
    let doubled: Vec<usize> = ranks.iter().map(|r| (r * 2.0).round() as usize).collect();
    let observed = doubled[..n].iter().sum::<usize>() as f64;
    // B worse where higher is better: B's samples low, so A's rank sum high.
    let upper = higher_is_better;
    let p = if a.len() + b.len() <= EXACT_UP_TO {
        exact_tail(&doubled, n, observed, upper)
    } else {
        let expected = n as f64 * (a.len() + b.len() + 1) as f64 / 2.0;
        let towards = if upper { observed / 2.0 - expected } else { expected - observed / 2.0 };
        normal_tail(&ranks, n, b.len(), towards)
    };
    p.min(1.0)
}

/// Whether the one-sided p-value of n and m samples is exact ([`worse_p`]).
pub fn is_exact(n: usize, m: usize) -> bool {
    n + m <= EXACT_UP_TO
}

/// The smallest one-sided p-value n and m samples can give: the one extreme
/// split out of C(n+m, n).
pub fn min_worse_p(n: usize, m: usize) -> f64 {
    if n == 0 || m == 0 {
        return 1.0;
    }
    (1.0 / binomial(n + m, n)).min(1.0)
}

/// The power the detectable change is stated at.
pub const POWER: f64 = 0.8;

/// The smallest change, as a fraction of A's median, that a one-sided test at
/// `level` would find with 80% power given these samples: the normal
/// approximation (z of the level plus z of the power, times the pooled
/// standard deviation times sqrt(1/n + 1/m)), divided by sqrt(3/pi), the rank
/// test's efficiency against the t-test for normal samples. Infinite where a
/// side has fewer than two samples (no spread to go by) or A's median is not
/// positive.
pub fn detectable_change(a: &[f64], b: &[f64], level: f64) -> f64 {
    let (a, b) = (finite(a), finite(b));
    let centre = crate::median(&a);
    if a.len() < 2 || b.len() < 2 || centre <= 0.0 {
        return f64::INFINITY;
    }
    detectable_at(pooled_sd(&a, &b) / centre, a.len(), b.len(), level)
}

/// [`detectable_change`] for a relative pooled standard deviation `sd` and n and m samples.
pub fn detectable_at(sd: f64, n: usize, m: usize, level: f64) -> f64 {
    let efficiency = (3.0 / std::f64::consts::PI).sqrt();
    (upper_quantile(level) + upper_quantile(1.0 - POWER)) * sd * (1.0 / n as f64 + 1.0 / m as f64).sqrt() / efficiency
}

/// The pooled standard deviation of two samples about their own means, relative to A's median.
pub fn relative_pooled_sd(a: &[f64], b: &[f64]) -> f64 {
    let (a, b) = (finite(a), finite(b));
    let centre = crate::median(&a);
    if a.len() < 2 || b.len() < 2 || centre <= 0.0 {
        return f64::INFINITY;
    }
    pooled_sd(&a, &b) / centre
}

fn pooled_sd(a: &[f64], b: &[f64]) -> f64 {
    let squares = |v: &[f64]| {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>()
    };
    ((squares(a) + squares(b)) / (a.len() + b.len() - 2) as f64).sqrt()
}

/// z with P(Z > z) = `tail` for a standard normal Z (Acklam's rational
/// approximation, relative error below 1.2e-9).
pub fn upper_quantile(tail: f64) -> f64 {
    -lower_quantile(tail.clamp(1e-300, 1.0 - 1e-16))
}

fn lower_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969683028665376e1,
        2.209460984245205e2,
        -2.759285104469687e2,
        1.383_577_518_672_69e2,
        -3.066479806614716e1,
        2.506628277459239,
    ];
    const B: [f64; 5] =
        [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
    const C: [f64; 6] = [
        -7.784894002430293e-3,
        -3.223964580411365e-1,
        -2.400758277161838,
        -2.549732539343734,
        4.374664141464968,
        2.938163982698783,
    ];
    const D: [f64; 4] = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    }
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
    let ways = rank_sum_ways(doubled, n);
    let all: f64 = ways.iter().sum();
    // A small tolerance keeps the observed split itself in the tail.
    let extreme: f64 =
        ways.iter().enumerate().filter(|(s, _)| (*s as f64 - expected).abs() >= distance - 1e-9).map(|(_, w)| w).sum();
    extreme / all
}

/// The share of all n-subsets of the pooled (doubled) ranks whose sum is at
/// least (`upper`) or at most the observed sum.
fn exact_tail(doubled: &[usize], n: usize, observed: f64, upper: bool) -> f64 {
    let ways = rank_sum_ways(doubled, n);
    let all: f64 = ways.iter().sum();
    let tail: f64 = ways
        .iter()
        .enumerate()
        .filter(|(s, _)| if upper { *s as f64 >= observed - 1e-9 } else { *s as f64 <= observed + 1e-9 })
        .map(|(_, w)| w)
        .sum();
    tail / all
}

/// The sorted (doubled) ranks and n: what the rank sums' counts depend on.
type WaysKey = (Vec<usize>, usize);

/// `ways[s]`: the n-subsets of the (doubled) ranks summing to s. The counts
/// depend only on the ranks as a set (without ties, on n and m alone), so a
/// gate over many figures of one size works them out once: a small cache.
fn rank_sum_ways(doubled: &[usize], n: usize) -> std::rc::Rc<Vec<f64>> {
    thread_local! {
        static WAYS: std::cell::RefCell<HashMap<WaysKey, std::rc::Rc<Vec<f64>>>> =
            std::cell::RefCell::new(HashMap::new());
    }
    let mut key = doubled.to_vec();
    key.sort_unstable();
    let key = (key, n);
    if let Some(ways) = WAYS.with(|w| w.borrow().get(&key).cloned()) {
        return ways;
    }
    let ways = std::rc::Rc::new(count_rank_sums(doubled, n));
    WAYS.with(|w| {
        let mut w = w.borrow_mut();
        // Bounded: tie patterns are many, sizes few.
        if w.len() >= 256 {
            w.clear();
        }
        w.insert(key, ways.clone());
    });
    ways
}

fn count_rank_sums(doubled: &[usize], n: usize) -> Vec<f64> {
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
    ways.swap_remove(n)
}

/// Normal approximation of the rank sum, with tie and continuity correction.
fn normal_p(ranks: &[f64], n: usize, m: usize, distance: f64) -> f64 {
    2.0 * normal_tail(ranks, n, m, distance)
}

/// One tail of the normal approximation: the chance of the rank sum lying at
/// least `towards` above its expected value (tie and continuity corrected).
fn normal_tail(ranks: &[f64], n: usize, m: usize, towards: f64) -> f64 {
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
    // Continuity: half a rank towards the expected sum.
    let z = (towards - 0.5).max(0.0) / variance.sqrt();
    if towards < 0.0 {
        // The other direction: at least even odds.
        return standard_normal_cdf((towards + 0.5).min(0.0).abs() / variance.sqrt());
    }
    1.0 - standard_normal_cdf(z)
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
            if judge(&a, &slow, true).verdict == "slower" && worse_p(&a, &slow, true) <= ALPHA {
                found += 1;
            }
        }
        assert!(f64::from(within) >= 0.95 * f64::from(cells), "{within} of {cells} within noise");
        assert_eq!(found, 20, "the planted slowdown found in every trial");
    }

    #[test]
    fn the_one_sided_p_value_is_half_the_two_sided_in_its_direction() {
        let (low, high) = ([1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0]);
        // B below A where higher is better: worse, one extreme split of 252.
        assert!((worse_p(&high, &low, true) - 1.0 / 252.0).abs() < 1e-12);
        assert!((min_worse_p(5, 5) - 1.0 / 252.0).abs() < 1e-12);
        // The other direction: B better, so not worse at all.
        assert!((worse_p(&low, &high, true) - 1.0).abs() < 1e-12);
        // Times: B higher is worse.
        assert!((worse_p(&low, &high, false) - 1.0 / 252.0).abs() < 1e-12);
        // The normal approximation above 40 samples agrees with the exact tail near 5%.
        let a: Vec<f64> = (0..30).map(|i| f64::from(i) + 8.0).collect();
        let b: Vec<f64> = (0..30).map(f64::from).collect();
        let approx = worse_p(&a, &b, true);
        let (two_sided, b_higher) = rank_test(&a, &b);
        assert!(!b_higher);
        assert!((approx - two_sided / 2.0).abs() < 0.01, "normal {approx}, exact two-sided {two_sided}");
    }

    #[test]
    fn the_detectable_change_follows_the_normal_approximation() {
        // z(0.05) = 1.645, z(0.2) = 0.842.
        assert!((upper_quantile(0.05) - 1.644_854).abs() < 1e-5);
        assert!((upper_quantile(0.2) - 0.841_621).abs() < 1e-5);
        assert!((upper_quantile(0.05 / 8.0) - 2.497_705).abs() < 1e-5);
        // 5% standard deviation, 10 a side, level 0.05/8: (2.498 + 0.842) * 0.05 * sqrt(0.2) / sqrt(3/pi).
        let d = detectable_at(0.05, 10, 10, 0.05 / 8.0);
        assert!((d - 0.0764).abs() < 0.0005, "{d}");
        // One sample a side: no spread to go by.
        assert!(detectable_change(&[1.0], &[1.0, 2.0], 0.05).is_infinite());
    }
}
