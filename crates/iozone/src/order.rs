//! Which record of a file a pass touches next: pure functions, no I/O.
//!
//! - [`Order`]: the access orders of the IOzone tests (sequential, backward,
//!   strided, random, one hot record) and [`Order::iter`] over record indices.
//! - [`RandomPermutation`]: every record exactly once in a seeded random
//!   order, in O(1) memory, so a 64 GiB file at 4 KiB records needs no
//!   16-million-entry table built before the timer starts.
//! - [`mixed_is_write`]: the read/write choice of the mixed workload.
//!
//! Every order but [`Order::SameRecord`] visits each record exactly once, so a
//! pass moves exactly the file's size.

mod permutation;

use iomatrix_random::scramble;

pub use permutation::RandomPermutation;

/// An access order over the records `0..n` of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Records 0, 1, 2, ... to the end.
    Sequential,
    /// Records from the last to 0 (IOzone's backward read).
    Backward,
    /// Jump `stride` records ahead each time, wrapping around the file; when
    /// the walk returns to where it began, start again one record further.
    /// IOzone's stride read uses 17.
    Stride(u64),
    /// A random permutation of the records, fixed by the seed.
    Random {
        /// Fixes the permutation: the same seed walks the same order.
        seed: u64,
    },
    /// Record 0, `n` times: IOzone's record rewrite (a hot spot).
    SameRecord,
}

impl Order {
    /// The record indices of one pass over `n` records.
    pub fn iter(self, n: u64) -> Box<dyn Iterator<Item = u64> + Send> {
        match self {
            Order::Sequential => Box::new(0..n),
            Order::Backward => Box::new((0..n).rev()),
            Order::Stride(stride) => Box::new(StrideWalk::new(n, stride)),
            Order::Random { seed } => Box::new(RandomPermutation::new(n, seed)),
            Order::SameRecord => Box::new(std::iter::repeat_n(0, n as usize)),
        }
    }
}

/// The strided walk described at [`Order::Stride`].
struct StrideWalk {
    n: u64,
    stride: u64,
    cycle_start: u64,
    next: u64,
    left: u64,
}

impl StrideWalk {
    fn new(n: u64, stride: u64) -> Self {
        StrideWalk { n, stride: stride.max(1) % n.max(1), cycle_start: 0, next: 0, left: n }
    }
}

impl Iterator for StrideWalk {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let current = self.next;
        let mut following = (current + self.stride) % self.n;
        if following == self.cycle_start {
            // The walk closed a cycle (stride and n share a factor): shift by one.
            self.cycle_start += 1;
            following = self.cycle_start;
        }
        self.next = following;
        Some(current)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

/// Whether the mixed workload writes (rather than reads) its `i`-th request:
/// a fair, seeded coin per request, the same on every run with the same seed.
pub fn mixed_is_write(seed: u64, i: u64) -> bool {
    // Counter-based: request i's coin is found by its number, with no stream to run.
    scramble(scramble(seed).wrapping_add(i)) & 1 == 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_permutation(v: &[u64], n: u64) -> bool {
        let mut seen = vec![false; n as usize];
        v.len() as u64 == n && v.iter().all(|&i| i < n && !std::mem::replace(&mut seen[i as usize], true))
    }

    #[test]
    fn every_order_but_same_record_visits_each_record_once() {
        for n in 0..300u64 {
            for order in [
                Order::Sequential,
                Order::Backward,
                Order::Stride(17),
                Order::Stride(4),
                Order::Stride(1),
                Order::Random { seed: 1 },
                Order::Random { seed: 42 },
            ] {
                let v: Vec<u64> = order.iter(n).collect();
                assert!(is_permutation(&v, n), "{order:?} n={n}: {v:?}");
            }
            let same: Vec<u64> = Order::SameRecord.iter(n).collect();
            assert_eq!(same.len() as u64, n);
            assert!(same.iter().all(|&i| i == 0));
        }
    }

    #[test]
    fn stride_walk_jumps_by_the_stride() {
        let v: Vec<u64> = Order::Stride(17).iter(64).take(5).collect();
        assert_eq!(v, [0, 17, 34, 51, 4]);
        // 4 divides 8: the walk covers 0,4 then shifts to 1,5 ...
        let v: Vec<u64> = Order::Stride(4).iter(8).collect();
        assert_eq!(v, [0, 4, 1, 5, 2, 6, 3, 7]);
    }

    #[test]
    fn random_order_depends_on_the_seed_and_is_not_sequential() {
        let a: Vec<u64> = Order::Random { seed: 1 }.iter(1000).collect();
        let b: Vec<u64> = Order::Random { seed: 2 }.iter(1000).collect();
        let a2: Vec<u64> = Order::Random { seed: 1 }.iter(1000).collect();
        assert_eq!(a, a2);
        assert_ne!(a, b);
        let in_place = a.iter().enumerate().filter(|(i, &v)| *i as u64 == v).count();
        assert!(in_place < 20, "{in_place} of 1000 records left in place");
        let ascending_steps = a.windows(2).filter(|w| w[1] == w[0] + 1).count();
        assert!(ascending_steps < 20, "{ascending_steps} sequential steps");
    }

    #[test]
    fn mixed_coin_is_roughly_fair() {
        let writes = (0..10_000).filter(|&i| mixed_is_write(7, i)).count();
        assert!((4_500..5_500).contains(&writes), "{writes} writes of 10000");
    }
}
