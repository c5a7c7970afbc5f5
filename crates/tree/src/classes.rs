//! Power-of-two size classes: class 0 is the 0-byte files; class k >= 1 holds
//! sizes in [2^(k-1), 2^k - 1], so class 64 ends at u64::MAX.

/// Number of classes (0 to 64).
pub const CLASSES: usize = 65;

/// The class a size falls in.
pub fn class_of(size: u64) -> usize {
    (u64::BITS - size.leading_zeros()) as usize
}

/// Smallest size of class `k` (`k` < [`CLASSES`]).
pub fn class_min(k: usize) -> u64 {
    if k == 0 {
        0
    } else {
        1u64 << (k - 1)
    }
}

/// Largest size of class `k` (`k` < [`CLASSES`]).
pub fn class_max(k: usize) -> u64 {
    match k {
        0 => 0,
        64.. => u64::MAX,
        _ => (1u64 << k) - 1,
    }
}

/// The class's range as people read it: (from, below), both powers of two in the
/// shortest binary unit: class 0 is ("0", "1"), class 11 is ("1k", "2k"), i.e.
/// 1024..=2047 bytes.
pub fn class_label(k: usize) -> (String, String) {
    let below = if k >= 64 { "16e".to_string() } else { short(1u64 << k) };
    (short(class_min(k)), below)
}

/// Powers of two in the shortest binary unit: 512, 1k, 64m, 2g.
fn short(v: u64) -> String {
    for (shift, suffix) in [(60, "e"), (50, "p"), (40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        if v >= 1 << shift && v % (1 << shift) == 0 {
            return format!("{}{suffix}", v >> shift);
        }
    }
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_boundaries() {
        assert_eq!(class_of(0), 0);
        assert_eq!(class_of(1), 1);
        assert_eq!(class_of(2), 2);
        assert_eq!(class_of(3), 2);
        assert_eq!(class_of(4), 3);
        assert_eq!(class_of(1023), 10);
        assert_eq!(class_of(1024), 11);
        assert_eq!(class_of(u64::MAX), 64);
        for k in 0..CLASSES {
            assert_eq!(class_of(class_min(k)), k, "min of {k}");
            assert_eq!(class_of(class_max(k)), k, "max of {k}");
            if k > 0 {
                assert_eq!(class_min(k), class_max(k - 1) + 1);
            }
        }
    }

    #[test]
    fn labels() {
        let l = |k| {
            let (a, b) = class_label(k);
            format!("{a} {b}")
        };
        assert_eq!(l(0), "0 1");
        assert_eq!(l(1), "1 2");
        assert_eq!(l(2), "2 4");
        assert_eq!(l(11), "1k 2k");
        assert_eq!(l(21), "1m 2m");
        assert_eq!(l(64), "8e 16e");
    }
}
