//! `filefrag`'s way of counting, as a pure function of the extents.

use crate::extent::{Extent, FIEMAP_EXTENT_UNWRITTEN};
use serde::{Deserialize, Serialize};

/// What FIEMAP said about one file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileExtents {
    /// Extents as `filefrag` counts them (physically contiguous ones merged).
    pub extents: u64,
    /// Extents as FIEMAP returned them, before merging.
    pub fiemap_extents: u64,
    /// Of those, unwritten (preallocated) ones.
    pub unwritten_extents: u64,
    /// Every `fe_flags` bit seen on any extent (see [`crate::flag_names`]).
    pub flags: u32,
}

/// Counts extents as e2fsprogs' `filefrag` (misc/filefrag.c,
/// `filefrag_fiemap`) does, extent by extent in logical order:
///
/// - `expected_dense` = previous physical + previous length (right after it);
/// - `expected` = previous physical + (this logical - previous logical)
///   (where the previous extent's mapping would put this one, across a hole);
/// - an extent at logical offset 0, or at either expected place, does not
///   start a new fragment; any other extent does;
/// - a file with at least one extent counts at least one.
///
/// The "previous" extent of the first one is all zeros. The arithmetic
/// wraps, as the C code's unsigned arithmetic does.
#[derive(Debug, Clone, Copy, Default)]
pub struct FilefragCounter {
    last: Extent,
    result: FileExtents,
}

impl FilefragCounter {
    /// A counter for one file, before its first extent.
    pub fn new() -> FilefragCounter {
        FilefragCounter::default()
    }

    /// Counts the file's next extent (in logical order): a new fragment unless it sits at one of
    /// the places the rules above expect.
    pub fn push(&mut self, e: &Extent) {
        let expected_dense = self.last.physical.wrapping_add(self.last.length);
        let expected = self.last.physical.wrapping_add(e.logical).wrapping_sub(self.last.logical);
        if e.logical != 0 && e.physical != expected && e.physical != expected_dense {
            self.result.extents += 1;
        } else if self.result.extents == 0 {
            self.result.extents = 1;
        }
        self.result.fiemap_extents += 1;
        if e.flags & FIEMAP_EXTENT_UNWRITTEN != 0 {
            self.result.unwritten_extents += 1;
        }
        self.result.flags |= e.flags;
        self.last = *e;
    }

    /// The file's counts, once every extent was pushed.
    pub fn finish(self) -> FileExtents {
        self.result
    }

    /// The count for a whole list of extents.
    pub fn count(extents: &[Extent]) -> FileExtents {
        let mut c = FilefragCounter::new();
        for e in extents {
            c.push(e);
        }
        c.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extent::{FIEMAP_EXTENT_DATA_INLINE, FIEMAP_EXTENT_LAST, FIEMAP_EXTENT_NOT_ALIGNED};

    const K: u64 = 1024;

    fn ext(logical: u64, physical: u64, length: u64) -> Extent {
        Extent { logical, physical, length, flags: 0 }
    }

    #[test]
    fn an_empty_file_has_no_extents() {
        assert_eq!(FilefragCounter::count(&[]).extents, 0);
    }

    #[test]
    fn one_extent_is_one() {
        let r = FilefragCounter::count(&[Extent { flags: FIEMAP_EXTENT_LAST, ..ext(0, 1 << 20, 64 * K) }]);
        assert_eq!((r.extents, r.fiemap_extents), (1, 1));
    }

    #[test]
    fn physically_adjacent_extents_merge() {
        // ext4 splits at 128 MiB (32768 blocks) even when the blocks follow on; filefrag merges.
        let r = FilefragCounter::count(&[ext(0, 100 * K, 64 * K), ext(64 * K, 164 * K, 64 * K)]);
        assert_eq!((r.extents, r.fiemap_extents), (1, 2));
    }

    #[test]
    fn a_jump_starts_a_new_extent() {
        let r = FilefragCounter::count(&[
            ext(0, 100 * K, 64 * K),
            ext(64 * K, 900 * K, 64 * K),
            ext(128 * K, 964 * K, 4 * K),
        ]);
        assert_eq!(r.extents, 2);
    }

    #[test]
    fn a_hole_that_keeps_the_mapping_does_not_count() {
        // Logical 0..64k at 100k, hole, then logical 128k at 228k: where the first mapping puts it.
        let r = FilefragCounter::count(&[ext(0, 100 * K, 64 * K), ext(128 * K, 228 * K, 64 * K)]);
        assert_eq!(r.extents, 1);
        // Right after the previous extent across a hole also continues it ("dense").
        let r = FilefragCounter::count(&[ext(0, 100 * K, 64 * K), ext(128 * K, 164 * K, 64 * K)]);
        assert_eq!(r.extents, 1);
        // Anywhere else it is a new one.
        let r = FilefragCounter::count(&[ext(0, 100 * K, 64 * K), ext(128 * K, 500 * K, 64 * K)]);
        assert_eq!(r.extents, 2);
    }

    #[test]
    fn a_file_starting_with_a_hole_counts_its_first_extent() {
        let r = FilefragCounter::count(&[ext(1 << 20, 7 << 20, 4 * K)]);
        assert_eq!(r.extents, 1);
        // An extent at physical 0 after a leading hole (inline, delalloc) still makes one.
        let r = FilefragCounter::count(&[ext(4 * K, 0, 4 * K)]);
        assert_eq!(r.extents, 1);
    }

    #[test]
    fn inline_data_is_one_extent() {
        let inline = Extent {
            flags: FIEMAP_EXTENT_DATA_INLINE | FIEMAP_EXTENT_NOT_ALIGNED | FIEMAP_EXTENT_LAST,
            ..ext(0, 0, 4 * K)
        };
        let r = FilefragCounter::count(&[inline]);
        assert_eq!(r.extents, 1);
        assert_ne!(r.flags & FIEMAP_EXTENT_DATA_INLINE, 0);
    }

    #[test]
    fn unwritten_extents_count_like_written_ones() {
        let u = |l, p, n| Extent { flags: FIEMAP_EXTENT_UNWRITTEN, ..ext(l, p, n) };
        let r =
            FilefragCounter::count(&[ext(0, 100 * K, 4 * K), u(4 * K, 104 * K, 60 * K), u(64 * K, 800 * K, 64 * K)]);
        assert_eq!((r.extents, r.unwritten_extents), (2, 2));
    }

    #[test]
    fn an_extent_back_at_logical_zero_never_counts() {
        // filefrag's rule looks only at fe_logical != 0 for the test; keep it even for odd input.
        let r = FilefragCounter::count(&[ext(0, 100 * K, 4 * K), ext(0, 900 * K, 4 * K)]);
        assert_eq!(r.extents, 1);
    }

    #[test]
    fn wrapping_arithmetic_does_not_panic() {
        let r = FilefragCounter::count(&[ext(0, u64::MAX - 1, 8), ext(u64::MAX, 3, 1)]);
        assert_eq!(r.fiemap_extents, 2);
    }
}
