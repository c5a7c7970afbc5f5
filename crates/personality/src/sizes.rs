//! File sizes drawn from a [`SizeDist`], deterministic from the seed, the
//! connection, the fileset, the file and its generation (a file made again
//! after a delete draws anew); and the seeded generator the engine uses.

use crate::schema::SizeDist;
use iomatrix_random::{draw_at, Generator};
use std::sync::Arc;

/// The engine's draws: iomatrix's one generator, with the distributions that
/// sizes, picks and arrivals take.
#[derive(Debug, Clone)]
pub struct Rng(Generator);

impl Rng {
    /// A generator seeded with `seed`: the same seed draws the same.
    pub fn new(seed: u64) -> Rng {
        Rng(Generator::seeded(seed))
    }

    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }

    /// Uniform in (0, 1].
    pub fn unit(&mut self) -> f64 {
        self.0.unit()
    }

    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Exponential with mean 1: the gaps of Poisson arrivals.
    pub fn exp(&mut self) -> f64 {
        -self.unit().ln()
    }

    /// Gamma(shape, 1) by Marsaglia and Tsang.
    pub fn gamma(&mut self, shape: f64) -> f64 {
        if shape < 1.0 {
            return self.gamma(shape + 1.0) * self.unit().powf(1.0 / shape);
        }
        let d = shape - 1.0 / 3.0;
        let c = 1.0 / (9.0 * d).sqrt();
        for _ in 0..1000 {
            let x = self.normal();
            let v = (1.0 + c * x).powi(3);
            if v <= 0.0 {
                continue;
            }
            let u = self.unit();
            if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
                return d * v;
            }
        }
        shape
    }
}

/// A fileset's sizes, ready to draw (a `scan` profile loaded).
#[derive(Clone)]
pub struct Sizes {
    dist: SizeDist,
    profile: Option<Arc<iomatrix_tree::Profile>>,
    seed: u64,
}

impl Sizes {
    /// `seed`: the personality's, mixed with the fileset's index.
    pub fn new(dist: &SizeDist, seed: u64) -> std::io::Result<Sizes> {
        let profile = match dist {
            SizeDist::Scan { profile } => Some(Arc::new(iomatrix_tree::Profile::load(profile).map_err(|e| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{}: {}", profile.display(), e.0))
            })?)),
            _ => None,
        };
        Ok(Sizes { dist: dist.clone(), profile, seed })
    }

    /// The size of file `index` (generation `gen`) of connection `rank`; at least one byte.
    pub fn draw(&self, rank: usize, index: u64, gen: u32) -> u64 {
        let u = draw_at(self.seed, rank as u64, index ^ (u64::from(gen) << 40));
        let mut rng = Rng::new(u);
        let size = match &self.dist {
            SizeDist::Fixed { size } => *size,
            SizeDist::Uniform { min, max } => min + rng.below(max - min + 1),
            SizeDist::Lognormal { median, sigma, max } => {
                ((*median as f64) * (sigma * rng.normal()).exp()).round().min(*max as f64) as u64
            }
            SizeDist::Gamma { mean, shape, max } => {
                (rng.gamma(*shape) * *mean as f64 / shape).round().min(*max as f64) as u64
            }
            SizeDist::Cycle { sizes } => sizes[(index % sizes.len() as u64) as usize],
            SizeDist::Scan { .. } => self.profile.as_ref().map_or(1, |p| p.draw(u)),
        };
        size.max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mean(dist: SizeDist) -> f64 {
        let s = Sizes::new(&dist, 7).unwrap();
        (0..20000).map(|i| s.draw(0, i, 0) as f64).sum::<f64>() / 20000.0
    }

    #[test]
    fn draws_repeat_and_follow_their_distribution() {
        let s = Sizes::new(&SizeDist::Gamma { mean: 16384, shape: 1.5, max: u64::MAX >> 8 }, 7).unwrap();
        assert_eq!(s.draw(3, 10, 0), s.draw(3, 10, 0));
        assert_ne!(s.draw(3, 10, 0), s.draw(3, 10, 1));
        let m = mean(SizeDist::Gamma { mean: 16384, shape: 1.5, max: u64::MAX >> 8 });
        assert!((m - 16384.0).abs() < 16384.0 * 0.05, "{m}");
        let m = mean(SizeDist::Lognormal { median: 10000, sigma: 0.5, max: u64::MAX >> 8 });
        // mean of a log-normal: median * exp(sigma^2 / 2)
        assert!((m - 10000.0 * (0.125f64).exp()).abs() < 300.0, "{m}");
        let m = mean(SizeDist::Uniform { min: 1000, max: 3000 });
        assert!((m - 2000.0).abs() < 30.0, "{m}");
        let c = Sizes::new(&SizeDist::Cycle { sizes: vec![4096, 8192] }, 1).unwrap();
        assert_eq!((c.draw(0, 0, 0), c.draw(5, 1, 3), c.draw(0, 2, 0)), (4096, 8192, 4096));
    }
}
