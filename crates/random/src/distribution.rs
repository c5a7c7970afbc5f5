//! Skewed random offsets, as fio's `random_distribution` draws them: which of
//! `n` aligned places a request goes to when some parts of a file are hotter
//! than others.
//!
//! Each model follows fio's own code (lib/zipf.c and lib/gauss.c, fio 3.x),
//! so `zipf:1.2` here puts the same share of requests on the hottest blocks as
//! fio's `random_distribution=zipf:1.2`:
//!
//! - `zipf:THETA`: Gray et al.'s quick Zipf generator ("Quickly generating
//!   billion-record synthetic databases", 1994), fio's `zipf_next`; the
//!   normalising sum runs over at most 10 million places, as fio's does.
//! - `pareto:H`: rank `(n - 1) * u^(ln h / ln(1 - h))`, fio's `pareto_next`.
//! - `normal:SIGMA`: fio's `gauss_next`: the mean of 12 uniform draws over the
//!   places (a bell whose standard deviation is about 8% of the file), moved
//!   by a uniform deviation of up to ±SIGMA/2 % of the file.
//! - `random`: uniform, as without a distribution.
//!
//! As in fio, a skewed model draws a rank (0 the hottest) that is then
//! scattered over the file, so the hot blocks are not all at its start. fio
//! scatters by multiplying by an odd constant modulo the place count, which is
//! a permutation when the count is a power of two (and merges some ranks
//! otherwise); here the scatter is always a permutation of the places (a
//! seeded bijection on the next power of two, walked until it lands inside),
//! so each rank keeps a place of its own and the shares are the model's. fio's
//! centre option (`zipf:1.2:0.25`) and its `zoned` and `zoned_abs` models are
//! not implemented: [`Distribution::parse`] refuses them by name.

use crate::{scramble, Generator};

/// The longest normalising sum of a Zipf distribution, fio's `ZIPF_MAX_GEN`:
/// beyond it the remaining terms change the shares by less than they cost.
const ZIPF_MAX_GEN: u64 = 10_000_000;

/// fio's `GAUSS_ITERS`: the uniform draws averaged into one normal draw.
const GAUSS_ITERS: u64 = 12;

/// A random distribution of offsets, as fio's `random_distribution` names it.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Distribution {
    /// Every place alike.
    #[default]
    Uniform,
    /// Zipf with exponent theta (> 0, not 1): the k-th hottest place is hit
    /// in proportion to 1/k^theta.
    Zipf(f64),
    /// Pareto with fio's power h (0 < h < 1): `pareto:0.9` is fio's 90/10 rule.
    Pareto(f64),
    /// fio's normal: the deviation SIGMA (0 <= SIGMA < 100) in percent of the file.
    Normal(f64),
}

/// What is wrong with a distribution's text, and how to write it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DistributionError(String);

impl PartialEq for Distribution {
    fn eq(&self, other: &Distribution) -> bool {
        match (self, other) {
            (Distribution::Uniform, Distribution::Uniform) => true,
            (Distribution::Zipf(a), Distribution::Zipf(b))
            | (Distribution::Pareto(a), Distribution::Pareto(b))
            | (Distribution::Normal(a), Distribution::Normal(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        }
    }
}

// Parameters are finite (parse refuses NaN), so equality is reflexive.
impl Eq for Distribution {}

impl Distribution {
    /// Whether offsets are drawn uniformly (fio's `random`), the default: no skew parameter.
    pub fn is_uniform(&self) -> bool {
        matches!(self, Distribution::Uniform)
    }

    /// fio's spelling: `random`, `zipf:1.2`, `pareto:0.9`, `normal:5`.
    pub fn parse(text: &str) -> Result<Distribution, DistributionError> {
        let text = text.trim();
        let (name, value) = match text.split_once(':') {
            Some((name, value)) => (name.trim().to_ascii_lowercase(), Some(value.trim())),
            None => (text.to_ascii_lowercase(), None),
        };
        let fail = |why: String| Err(DistributionError(why));
        let parameter = |what: &str| -> Result<f64, DistributionError> {
            let Some(value) = value.filter(|v| !v.is_empty()) else {
                return Err(DistributionError(format!(
                    "{name} needs its {what}: write {name}:VALUE, e.g. {}",
                    example(&name)
                )));
            };
            if value.contains(':') {
                return Err(DistributionError(format!(
                    "{name}:{value}: fio's centre (a second value) is not supported; give {name}:VALUE alone"
                )));
            }
            value.parse::<f64>().ok().filter(|v| v.is_finite()).ok_or_else(|| {
                DistributionError(format!("{name}:{value}: '{value}' is not a number; write e.g. {}", example(&name)))
            })
        };
        match name.as_str() {
            "random" | "uniform" if value.is_none() => Ok(Distribution::Uniform),
            "random" | "uniform" => fail(format!("{text}: the uniform distribution takes no value; write random")),
            "zipf" => {
                let theta = parameter("theta")?;
                if theta <= 0.0 || theta == 1.0 {
                    return fail(format!(
                        "zipf:{theta}: theta must be above 0 and not 1 (fio's generator divides by 1 - theta); \
                         e.g. zipf:1.2 for a strong skew, zipf:0.8 for a mild one"
                    ));
                }
                Ok(Distribution::Zipf(theta))
            }
            "pareto" => {
                let h = parameter("power h")?;
                if h <= 0.0 || h >= 1.0 {
                    return fail(format!(
                        "pareto:{h}: h must lie between 0 and 1 (exclusive), as in fio; e.g. pareto:0.9"
                    ));
                }
                Ok(Distribution::Pareto(h))
            }
            "normal" | "gauss" => {
                let sigma = parameter("deviation in percent of the file")?;
                if !(0.0..100.0).contains(&sigma) {
                    return fail(format!(
                        "normal:{sigma}: the deviation is a percentage of the file from 0 to below 100, as in fio; \
                         e.g. normal:5"
                    ));
                }
                Ok(Distribution::Normal(sigma))
            }
            "zoned" | "zoned_abs" => fail(format!(
                "{name}: fio's zoned distributions are not supported; use zipf:THETA, pareto:H, normal:SIGMA or random"
            )),
            _ => fail(format!(
                "'{text}' is not a distribution; use zipf:THETA, pareto:H, normal:SIGMA or random (fio's names)"
            )),
        }
    }

    /// A sampler of places `0..n` for this distribution, its hash salted by `seed`.
    pub fn over(self, n: u64, seed: u64) -> Places {
        let n = n.max(1);
        let model = match self {
            Distribution::Uniform => Model::Uniform,
            Distribution::Zipf(theta) => {
                let zetan: f64 = (1..=n.min(ZIPF_MAX_GEN)).map(|i| (1.0 / i as f64).powf(theta)).sum();
                let zeta2 = 1.0 + 0.5f64.powf(theta);
                Model::Zipf {
                    alpha: 1.0 / (1.0 - theta),
                    eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
                    zetan,
                    second: 1.0 + 0.5f64.powf(theta),
                }
            }
            Distribution::Pareto(h) => Model::Pareto { power: h.ln() / (1.0 - h).ln() },
            Distribution::Normal(sigma) => {
                let stddev = if sigma == 0.0 { 0 } else { ((n as f64 * sigma) / 100.0).ceil() as u64 };
                Model::Normal { stddev: stddev.min(n / 2) }
            }
        };
        let mask = n.checked_next_power_of_two().map_or(u64::MAX, |p| p - 1);
        Places { model, n, mask, salt: scramble(seed ^ 0x6469_7374) }
    }
}

fn example(name: &str) -> &'static str {
    match name {
        "zipf" => "zipf:1.2",
        "pareto" => "pareto:0.9",
        _ => "normal:5",
    }
}

impl std::fmt::Display for Distribution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Distribution::Uniform => write!(f, "random"),
            Distribution::Zipf(v) => write!(f, "zipf:{v}"),
            Distribution::Pareto(v) => write!(f, "pareto:{v}"),
            Distribution::Normal(v) => write!(f, "normal:{v}"),
        }
    }
}

impl std::str::FromStr for Distribution {
    type Err = DistributionError;
    fn from_str(s: &str) -> Result<Distribution, DistributionError> {
        Distribution::parse(s)
    }
}

impl TryFrom<String> for Distribution {
    type Error = DistributionError;
    fn try_from(s: String) -> Result<Distribution, DistributionError> {
        Distribution::parse(&s)
    }
}

impl From<Distribution> for String {
    fn from(d: Distribution) -> String {
        d.to_string()
    }
}

/// Draws places `0..n` by a [`Distribution`] ([`Distribution::over`]).
#[derive(Debug, Clone)]
pub struct Places {
    model: Model,
    n: u64,
    /// The next power of two at or above `n`, less one: the scatter's domain.
    mask: u64,
    salt: u64,
}

#[derive(Debug, Clone)]
enum Model {
    Uniform,
    Zipf { alpha: f64, eta: f64, zetan: f64, second: f64 },
    Pareto { power: f64 },
    Normal { stddev: u64 },
}

impl Places {
    /// The next place, in `0..n`.
    #[inline]
    pub fn next(&self, g: &mut Generator) -> u64 {
        let n = self.n;
        let rank = match self.model {
            // The same draw as without a distribution: a uniform run's offsets do not change.
            Model::Uniform => return g.below(n),
            Model::Zipf { alpha, eta, zetan, second } => {
                let u = g.unit();
                let z = u * zetan;
                let value = if z < 1.0 {
                    1
                } else if z < second {
                    2
                } else {
                    1 + (n as f64 * (eta * u - eta + 1.0).powf(alpha)) as u64
                };
                value - 1
            }
            Model::Pareto { power } => ((n - 1) as f64 * g.unit().powf(power)) as u64,
            Model::Normal { stddev } => {
                // Summed wide: twelve places of a file past 2^60 blocks would overflow a u64.
                let sum: u128 = (0..GAUSS_ITERS).map(|_| u128::from(g.below(n.saturating_add(1)))).sum();
                let mean = sum.div_ceil(u128::from(GAUSS_ITERS)) as u64;
                if stddev == 0 {
                    mean
                } else {
                    // fio's gauss_dev: uniform in [-stddev/2, stddev/2), halved until the place stays inside.
                    let mut dev = (stddev as f64 * (1.0 - g.unit())) as i64 - (stddev / 2) as i64;
                    while mean.checked_add_signed(dev).is_none_or(|p| p >= n) {
                        dev /= 2;
                        if dev == 0 {
                            break;
                        }
                    }
                    mean.saturating_add_signed(dev)
                }
            }
        };
        self.scatter(rank.min(n - 1))
    }

    /// Rank to place: a bijection of `0..=mask` (odd multiplications, xor-shifts and a seeded
    /// addition, each invertible modulo a power of two), applied again while it lands at or
    /// above `n` (cycle walking: at most a few times, since `n` is more than half the domain).
    /// So distinct ranks get distinct places.
    #[inline]
    fn scatter(&self, rank: u64) -> u64 {
        let (mask, bits) = (self.mask, 64 - self.mask.leading_zeros());
        let shift = (bits / 2).max(1);
        let mut x = rank;
        loop {
            x = x.wrapping_add(self.salt) & mask;
            x = x.wrapping_mul(0x9e37_ffff_fffc_0001) & mask;
            x ^= x >> shift;
            x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9) & mask;
            x ^= x >> shift;
            if x < self.n {
                return x;
            }
        }
    }

    /// How many places this draws from.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Never: a draw has at least one place (clippy pairs `len` with `is_empty`).
    pub fn is_empty(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(d: Distribution, n: u64, draws: usize) -> Vec<u64> {
        let places = d.over(n, 7);
        let mut g = Generator::seeded(1);
        let mut counts = vec![0u64; n as usize];
        for _ in 0..draws {
            counts[places.next(&mut g) as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        counts
    }

    /// The share of all draws that went to the hottest `fraction` of places.
    fn hottest_share(sorted: &[u64], fraction: f64) -> f64 {
        let k = ((sorted.len() as f64 * fraction).ceil() as usize).max(1);
        sorted[..k].iter().sum::<u64>() as f64 / sorted.iter().sum::<u64>() as f64
    }

    #[test]
    fn fio_spellings_parse_and_print_back() {
        for text in ["random", "zipf:1.2", "zipf:0.8", "pareto:0.9", "normal:5", "normal:0"] {
            assert_eq!(Distribution::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(Distribution::parse("ZIPF:1.2").unwrap(), Distribution::Zipf(1.2));
        assert_eq!(Distribution::parse("uniform").unwrap(), Distribution::Uniform);
    }

    #[test]
    fn bad_parameters_are_refused_with_the_rule() {
        let err = |t: &str| Distribution::parse(t).unwrap_err().to_string();
        assert!(err("zipf:0").contains("above 0 and not 1"), "{}", err("zipf:0"));
        assert!(err("zipf:-1").contains("above 0 and not 1"));
        assert!(err("zipf:1").contains("not 1"));
        assert!(err("zipf").contains("needs its theta"));
        assert!(err("zipf:abc").contains("not a number"));
        assert!(err("zipf:nan").contains("not a number"));
        assert!(err("pareto:1.5").contains("between 0 and 1"));
        assert!(err("pareto:0").contains("between 0 and 1"));
        assert!(err("normal:100").contains("below 100"));
        assert!(err("normal:-3").contains("below 100"));
        assert!(err("zoned:60/10:30/20:8/30:2/40").contains("zoned distributions are not supported"));
        assert!(err("zoned_abs:1/10g").contains("not supported"));
        assert!(err("zipf:1.2:0.25").contains("centre"));
        assert!(err("random:3").contains("takes no value"));
        assert!(err("poisson:3").contains("not a distribution"));
    }

    #[test]
    fn uniform_draws_what_below_draws() {
        let places = Distribution::Uniform.over(1000, 3);
        let (mut a, mut b) = (Generator::seeded(9), Generator::seeded(9));
        for _ in 0..100 {
            assert_eq!(places.next(&mut a), b.below(1000));
        }
    }

    #[test]
    fn every_draw_lands_inside_even_for_one_place() {
        for d in
            [Distribution::Zipf(1.2), Distribution::Pareto(0.9), Distribution::Normal(50.0), Distribution::Normal(0.0)]
        {
            for n in [1, 2, 3, 1000] {
                let places = d.over(n, 5);
                let mut g = Generator::seeded(4);
                assert!((0..10_000).all(|_| places.next(&mut g) < n), "{d} over {n}");
            }
        }
    }

    /// Parameters at the edges of what parse accepts draw inside the file too (no NaN turned into a
    /// place, no overflow), on small and on huge place counts.
    #[test]
    fn extreme_parameters_still_land_inside() {
        let extremes = [
            "zipf:1e308",
            "zipf:1e-300",
            "zipf:0.999999",
            "zipf:1.000001",
            "pareto:1e-300",
            "pareto:0.9999999",
            "normal:99.9999",
            "normal:0.000001",
        ];
        for text in extremes {
            let d = Distribution::parse(text).unwrap();
            for n in [1, 2, 4096, 1 << 40, u64::MAX / 4096] {
                let places = d.over(n, 3);
                let mut g = Generator::seeded(8);
                assert!((0..2000).all(|_| places.next(&mut g) < n), "{text} over {n}");
            }
        }
    }

    /// Zipf's shares have a closed form: the k hottest of n places take H(k, theta) / H(n, theta).
    /// The hash may merge a few ranks into one place, which only raises the hottest shares a little.
    #[test]
    fn zipf_puts_the_share_its_formula_says_on_the_hottest_places() {
        let n = 10_000u64;
        let theta = 1.2;
        let harmonic = |k: u64| (1..=k).map(|i| (i as f64).powf(-theta)).sum::<f64>();
        let counts = hits(Distribution::Zipf(theta), n, 400_000);
        for fraction in [0.01, 0.1] {
            let expected = harmonic((n as f64 * fraction) as u64) / harmonic(n);
            let got = hottest_share(&counts, fraction);
            assert!((got - expected).abs() < 0.02, "hottest {fraction}: {got} against {expected}");
        }
    }

    /// fio's pareto:0.9 is its 90/10 rule: ranks are (n - 1) * u^p with p = ln 0.9 / ln 0.1, so the top
    /// tenth of ranks takes 1 - 0.9^(1/p) = 90% of the draws. pareto:0.5 has p = 1: uniform.
    #[test]
    fn pareto_skews_as_its_power_says() {
        let counts = hits(Distribution::Pareto(0.9), 10_000, 400_000);
        let share = hottest_share(&counts, 0.1);
        assert!(share > 0.89 && share < 0.92, "{share}");
        let even = hottest_share(&hits(Distribution::Pareto(0.5), 10_000, 400_000), 0.1);
        let uniform = hottest_share(&hits(Distribution::Uniform, 10_000, 400_000), 0.1);
        assert!((even - uniform).abs() < 0.01, "pareto:0.5 is uniform: {even} against {uniform}");
    }

    #[test]
    fn normal_is_a_bell_and_a_wider_sigma_spreads_it() {
        let narrow = hottest_share(&hits(Distribution::Normal(0.0), 10_000, 400_000), 0.1);
        let wide = hottest_share(&hits(Distribution::Normal(60.0), 10_000, 400_000), 0.1);
        let uniform = hottest_share(&hits(Distribution::Uniform, 10_000, 400_000), 0.1);
        // Irwin-Hall of 12: the middle 10% of the range holds about 30% of the draws.
        assert!(narrow > 0.25, "{narrow}");
        assert!(wide < narrow && wide > uniform, "{narrow} > {wide} > {uniform}");
    }

    #[test]
    fn the_scatter_gives_every_rank_a_place_of_its_own() {
        for n in [1u64, 2, 3, 7, 1000, 4096, 5000] {
            let places = Distribution::Zipf(1.2).over(n, 11);
            let mut seen: Vec<u64> = (0..n).map(|r| places.scatter(r)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>(), "a permutation of {n} places");
        }
    }

    #[test]
    fn the_same_seed_draws_the_same_places() {
        let draw = |seed| {
            let places = Distribution::Zipf(1.1).over(5000, seed);
            let mut g = Generator::seeded(2);
            (0..100).map(|_| places.next(&mut g)).collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2), "another seed scatters the hot places elsewhere");
    }
}
