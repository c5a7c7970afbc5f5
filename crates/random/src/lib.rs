//! The one pseudo-random generator every crate of iomatrix draws from, and the
//! name a run's conditions give it ([`GENERATOR`]).
//!
//! Offsets (access, IOzone's random tests), file sizes (file-server loads,
//! personalities, `scan` profiles), orders and coin flips, the payload of a
//! `--verify` block and the incompressible bytes of a record buffer are all
//! drawn here, from a seed the plan fixes, so a run repeats exactly on any
//! machine. The generator is xoshiro256++ from `rand_xoshiro` (the Rand
//! project's, whose values are portable and kept stable across its releases):
//! seedable from one `u64`, 256 bits of state (no short cycles for the long
//! runs of an offset stream) and about a nanosecond a draw. Draws that must be
//! found at a position without running a stream (file `i` of a connection, a
//! block's payload from its stamp, a permutation's round function) go through
//! [`scramble`], splitmix64's bijective mix, from the same crate.
//!
//! Whatever changes what a seed draws (another generator, another way to
//! split a seed into streams, another `below`) must change [`GENERATOR`]:
//! the tests below pin the first draws, so such a change cannot pass unnoticed.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod arrivals;
mod distribution;

pub use arrivals::{Arrival, Arrivals, LATE_NS};
pub use distribution::{Distribution, DistributionError, Places};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::{SplitMix64, Xoshiro256PlusPlus};

/// The generator's name as a run's conditions store it (`generator`). A run
/// whose conditions name another, or none (runs made before the name was
/// stored drew from generators of iomatrix's own), drew other offsets, sizes,
/// orders and data from the same seed.
pub const GENERATOR: &str = "xoshiro256++ (rand_xoshiro 0.8)";

/// A seeded stream of draws.
#[derive(Debug, Clone)]
pub struct Generator(Xoshiro256PlusPlus);

impl Generator {
    /// The stream of `seed`: the same seed draws the same values, on every
    /// machine. Seeds that differ in a single bit give unrelated streams
    /// (xoshiro's state is filled by splitmix64 from the seed).
    pub fn seeded(seed: u64) -> Generator {
        Generator(Xoshiro256PlusPlus::seed_from_u64(seed))
    }

    /// A uniformly random `u64`.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n`; 0 when `n` is 0. Multiply-shift (Lemire) without
    /// rejection: a value is at most `n / 2^64` more likely than another,
    /// nothing next to what an offset or a percentage can show.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in (0, 1], on a grid of 2^-53: never 0, so its logarithm is finite.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Fills `buf` with random bytes: no compressor or deduplicator finds structure in them.
    pub fn fill(&mut self, buf: &mut [u8]) {
        self.0.fill_bytes(buf);
    }

    /// Puts `items` in a uniformly random order (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// One word scrambled by splitmix64's mix (one step of `rand_xoshiro`'s
/// `SplitMix64` from state `x`): a bijection, so distinct words stay distinct,
/// and a one-bit change of `x` changes about half the bits of the result. For
/// seeds split per purpose and for draws found by position.
#[inline]
pub fn scramble(x: u64) -> u64 {
    SplitMix64::seed_from_u64(x).next_u64()
}

/// Draw `index` of stream `stream` of `seed`, found without the draws before
/// it: position `index` of a counter whose start the [`Generator`] of
/// (`seed`, `stream`) draws. So no file's size depends on another's, and each
/// connection (stream) draws its own.
pub fn draw_at(seed: u64, stream: u64, index: u64) -> u64 {
    let start = Generator::seeded(seed ^ scramble(stream)).next_u64();
    scramble(start.wrapping_add(index))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first draws of fixed seeds. If this fails, what a seed draws has
    /// changed: runs stored before draw other offsets, so [`GENERATOR`] must
    /// take a new name (and this test the new values).
    #[test]
    fn draws_are_pinned_to_the_generator_name() {
        assert_eq!(GENERATOR, "xoshiro256++ (rand_xoshiro 0.8)");
        let mut g = Generator::seeded(42);
        let first: Vec<u64> = (0..3).map(|_| g.next_u64()).collect();
        assert_eq!(first, PINNED_STREAM);
        assert_eq!(scramble(0), PINNED_SCRAMBLE_0);
        assert_eq!(draw_at(7, 3, 1000), PINNED_DRAW_AT);
        let mut g = Generator::seeded(42);
        assert_eq!((0..5).map(|_| g.below(100)).collect::<Vec<_>>(), PINNED_BELOW_100);
    }

    #[test]
    fn the_same_seed_draws_the_same_and_another_seed_other_values() {
        let run = |seed| {
            let mut g = Generator::seeded(seed);
            (0..1000).map(|_| g.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
        // Neighbouring seeds and streams are unrelated, not shifted copies.
        let (a, b) = (run(1), run(2));
        assert!(a.iter().zip(&b).all(|(x, y)| x != y));
        assert_eq!(draw_at(5, 1, 9), draw_at(5, 1, 9));
        assert_ne!(draw_at(5, 1, 9), draw_at(5, 2, 9));
        assert_ne!(draw_at(5, 1, 9), draw_at(6, 1, 9));
        assert_ne!(draw_at(5, 1, 9), draw_at(5, 1, 10));
    }

    #[test]
    fn below_is_uniform_and_in_range() {
        let mut g = Generator::seeded(3);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            let v = g.below(10);
            counts[v as usize] += 1;
        }
        // Each bucket expects 10 000; 5 standard deviations is about ±475.
        assert!(counts.iter().all(|&c| (9_500..=10_500).contains(&c)), "{counts:?}");
        assert_eq!(g.below(0), 0);
        assert_eq!(g.below(1), 0);
        let max = (0..10_000).map(|_| g.below(u64::MAX)).max().unwrap();
        assert!(max > u64::MAX / 2, "{max}");
    }

    #[test]
    fn unit_is_never_zero_and_averages_a_half() {
        let mut g = Generator::seeded(9);
        let draws: Vec<f64> = (0..100_000).map(|_| g.unit()).collect();
        assert!(draws.iter().all(|&u| u > 0.0 && u <= 1.0));
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((mean - 0.5).abs() < 0.005, "{mean}");
    }

    #[test]
    fn filled_bytes_do_not_compress_and_shuffles_keep_every_item() {
        let mut buf = vec![0u8; 1 << 16];
        Generator::seeded(11).fill(&mut buf);
        let mut seen = [0u32; 256];
        for &b in &buf {
            seen[b as usize] += 1;
        }
        // 65 536 bytes, 256 expected per value: every value present, none far off.
        assert!(seen.iter().all(|&c| (150..=370).contains(&c)), "{seen:?}");
        let mut odd = vec![0u8; 13];
        Generator::seeded(11).fill(&mut odd);
        assert_eq!(odd[..], buf[..13], "a short fill is the start of a long one");

        let mut items: Vec<u32> = (0..1000).collect();
        Generator::seeded(5).shuffle(&mut items);
        assert_ne!(items, (0..1000).collect::<Vec<_>>());
        let mut sorted = items.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn scramble_is_splitmix64() {
        // splitmix64's published reference: from state 1477776061723855037 the
        // first output is 1985237415132408290 (xoshiro.di.unimi.it/splitmix64.c).
        assert_eq!(scramble(1_477_776_061_723_855_037), 1_985_237_415_132_408_290);
    }

    // Computed by an independent implementation of xoshiro256++ (seeded by
    // splitmix64, as rand_xoshiro's seed_from_u64 does) and of draw_at.
    const PINNED_STREAM: [u64; 3] = [15_021_278_609_987_233_951, 5_881_210_131_331_364_753, 18_149_643_915_985_481_100];
    const PINNED_SCRAMBLE_0: u64 = 16_294_208_416_658_607_535;
    const PINNED_DRAW_AT: u64 = 10_658_995_097_726_698_555;
    const PINNED_BELOW_100: [u64; 5] = [81, 31, 98, 70, 79];
}
