use iomatrix_random::{scramble, Generator};

/// A seeded random permutation of `0..n` without a table: a four-round
/// Feistel network over the smallest even-bit domain `2^(2h) >= n`, with
/// cycle-walking to stay below `n`. The domain is under `4n`, so each step
/// costs a few hash rounds on average, nothing next to a system call. The
/// round keys are the seed's first draws; the round function is [`scramble`].
pub struct RandomPermutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
    i: u64,
}

impl RandomPermutation {
    /// A permutation of `0..n` fixed by `seed`.
    pub fn new(n: u64, seed: u64) -> Self {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut draws = Generator::seeded(seed);
        let keys = [(); 4].map(|_| draws.next_u64());
        RandomPermutation { n, half_bits, keys, i: 0 }
    }

    fn encrypt(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut left, mut right) = (x >> self.half_bits, x & mask);
        for key in self.keys {
            let f = scramble(right ^ key) & mask;
            (left, right) = (right, left ^ f);
        }
        (left << self.half_bits) | right
    }
}

impl Iterator for RandomPermutation {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        if self.i >= self.n {
            return None;
        }
        let mut x = self.i;
        self.i += 1;
        // The Feistel network permutes the whole domain; walking the cycle
        // from x until it lands below n keeps the map a bijection on 0..n.
        loop {
            x = self.encrypt(x);
            if x < self.n {
                return Some(x);
            }
        }
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.n - self.i) as usize;
        (left, Some(left))
    }
}
