//! Per-file counts of a tree, summarised.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The histogram bucket of a file with `extents` extents: 0 for none, then
/// 1 -> 1, 2 -> 2, 3-4 -> 3, 5-8 -> 4, ..., (2^(k-2), 2^(k-1)] -> k.
pub fn bucket_of(extents: u64) -> usize {
    match extents {
        0 => 0,
        1 => 1,
        n => (64 - (n - 1).leading_zeros()) as usize + 1,
    }
}

/// The extents range `[min, max]` of bucket `b`.
fn bucket_range(b: usize) -> (u64, u64) {
    match b {
        0 => (0, 0),
        1 => (1, 1),
        b => {
            let min = (1u64 << (b - 2).min(63)) + 1;
            (min, 1u64.checked_shl(b as u32 - 1).unwrap_or(u64::MAX))
        }
    }
}

/// One histogram bucket: files with `min..=max` extents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    /// Fewest extents a file in this bucket has.
    pub min: u64,
    /// Most extents a file in this bucket has.
    pub max: u64,
    /// How many files fall in it.
    pub files: u64,
}

impl Bucket {
    /// "0", "1", "2", "3-4", "5-8", ...
    pub fn label(&self) -> String {
        if self.min == self.max {
            self.min.to_string()
        } else {
            format!("{}-{}", self.min, self.max)
        }
    }
}

/// Extents of a tree's regular files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ExtentSummary {
    /// Files FIEMAP mapped (all figures below are over these).
    pub files: u64,
    /// Extents of all those files together, counted as filefrag counts.
    pub total_extents: u64,
    /// Extents per file: mean, 99th percentile (nearest rank), maximum.
    pub mean: f64,
    /// Extents per file at the 99th percentile (nearest rank).
    pub p99: u64,
    /// Most extents any one file has.
    pub max: u64,
    /// Files with more than one extent.
    pub fragmented_files: u64,
    /// Files with no extents (empty, or only holes or unwritten space not yet mapped).
    pub files_without_extents: u64,
    /// FIEMAP's own extents before merging, and how many of them were unwritten.
    pub fiemap_extents: u64,
    /// How many of FIEMAP's extents are unwritten (allocated, not yet written).
    pub unwritten_extents: u64,
    /// Files with an inline (stored with the metadata) extent.
    pub inline_files: u64,
    /// Buckets 0, 1, 2, 3-4, 5-8, ... up to the one holding `max`.
    pub histogram: Vec<Bucket>,
    /// Files on a file system without FIEMAP (not counted above).
    pub files_without_fiemap: u64,
    /// The errno that said so, e.g. "EOPNOTSUPP" (empty when none); for a
    /// tree read through a protocol client, the sentence saying there is no
    /// extent map at all.
    pub no_fiemap_errno: String,
    /// Files whose FIEMAP failed otherwise (not counted above).
    pub files_failed: u64,
}

impl ExtentSummary {
    /// FIEMAP answered for none of the files, and some had none.
    pub fn no_fiemap_at_all(&self) -> bool {
        self.files == 0 && self.files_without_fiemap > 0
    }
}

/// Collects per-file results.
#[derive(Debug, Clone, Default)]
pub struct ExtentTally {
    /// extents -> files with that many.
    counts: BTreeMap<u64, u64>,
    fiemap_extents: u64,
    unwritten_extents: u64,
    inline_files: u64,
    without_fiemap: u64,
    no_fiemap_errno: &'static str,
    failed: u64,
}

impl ExtentTally {
    /// An empty tally.
    pub fn new() -> ExtentTally {
        ExtentTally::default()
    }

    /// Adds one file FIEMAP mapped.
    pub fn add(&mut self, file: &crate::FileExtents) {
        *self.counts.entry(file.extents).or_default() += 1;
        self.fiemap_extents += file.fiemap_extents;
        self.unwritten_extents += file.unwritten_extents;
        if file.flags & crate::FIEMAP_EXTENT_DATA_INLINE != 0 {
            self.inline_files += 1;
        }
    }

    /// Adds one file's outcome: a count, no FIEMAP, or a failure.
    pub fn add_result(&mut self, result: &Result<crate::FileExtents, crate::FiemapError>) {
        match result {
            Ok(file) => self.add(file),
            Err(e) if e.is_not_supported() => {
                self.without_fiemap += 1;
                if self.no_fiemap_errno.is_empty() {
                    self.no_fiemap_errno = e.errno_name();
                }
            }
            Err(_) => self.failed += 1,
        }
    }

    /// The summary of every file added so far.
    pub fn summary(&self) -> ExtentSummary {
        let files: u64 = self.counts.values().sum();
        let total: u64 = self.counts.iter().map(|(extents, n)| extents * n).sum();
        let max = self.counts.keys().next_back().copied().unwrap_or(0);
        // Nearest rank: the smallest count that at least 99% of the files do not exceed.
        let rank = (files * 99).div_ceil(100).max(1);
        let mut seen = 0;
        let mut p99 = 0;
        for (&extents, &n) in &self.counts {
            seen += n;
            if seen >= rank {
                p99 = extents;
                break;
            }
        }
        let mut histogram: Vec<Bucket> = if files == 0 {
            Vec::new()
        } else {
            (0..=bucket_of(max))
                .map(|b| {
                    let (min, max) = bucket_range(b);
                    Bucket { min, max, files: 0 }
                })
                .collect()
        };
        for (&extents, &n) in &self.counts {
            histogram[bucket_of(extents)].files += n;
        }
        ExtentSummary {
            files,
            total_extents: total,
            mean: if files == 0 { 0.0 } else { total as f64 / files as f64 },
            p99,
            max,
            fragmented_files: self.counts.range(2..).map(|(_, n)| n).sum(),
            files_without_extents: self.counts.get(&0).copied().unwrap_or(0),
            fiemap_extents: self.fiemap_extents,
            unwritten_extents: self.unwritten_extents,
            inline_files: self.inline_files,
            histogram,
            files_without_fiemap: self.without_fiemap,
            no_fiemap_errno: self.no_fiemap_errno.to_string(),
            files_failed: self.failed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FiemapError, FileExtents};

    fn file(extents: u64) -> FileExtents {
        FileExtents { extents, fiemap_extents: extents, ..FileExtents::default() }
    }

    #[test]
    fn buckets_are_powers_of_two() {
        let cases = [(0, 0), (1, 1), (2, 2), (3, 3), (4, 3), (5, 4), (8, 4), (9, 5), (16, 5), (17, 6), (1024, 11)];
        for (extents, bucket) in cases {
            assert_eq!(bucket_of(extents), bucket, "{extents}");
            let (min, max) = bucket_range(bucket);
            assert!(min <= extents && extents <= max, "{extents} in {min}..={max}");
        }
        assert_eq!(bucket_of(u64::MAX), 65);
        assert_eq!(bucket_range(65), (1 << 63 | 1, u64::MAX));
        let labels: Vec<String> =
            (0..6).map(|b| Bucket { min: bucket_range(b).0, max: bucket_range(b).1, files: 0 }.label()).collect();
        assert_eq!(labels, ["0", "1", "2", "3-4", "5-8", "9-16"]);
    }

    #[test]
    fn summary_of_a_tree() {
        let mut t = ExtentTally::new();
        for n in [1, 1, 1, 2, 6, 0] {
            t.add(&file(n));
        }
        t.add_result(&Err(FiemapError::NotSupported(libc::EOPNOTSUPP)));
        t.add_result(&Err(FiemapError::Failed(std::io::Error::from_raw_os_error(libc::EIO))));
        let s = t.summary();
        assert_eq!((s.files, s.total_extents, s.max, s.fragmented_files, s.files_without_extents), (6, 11, 6, 2, 1));
        assert!((s.mean - 11.0 / 6.0).abs() < 1e-12);
        assert_eq!(s.p99, 6, "ceil(0.99 x 6) = 6th of 6");
        assert_eq!((s.files_without_fiemap, s.files_failed), (1, 1));
        assert_eq!(s.no_fiemap_errno, "EOPNOTSUPP");
        let hist: Vec<(String, u64)> = s.histogram.iter().map(|b| (b.label(), b.files)).collect();
        assert_eq!(hist, [("0".into(), 1), ("1".into(), 3), ("2".into(), 1), ("3-4".into(), 0), ("5-8".into(), 1)]);
        assert_eq!(s.histogram.iter().map(|b| b.files).sum::<u64>(), s.files);
    }

    #[test]
    fn p99_is_nearest_rank() {
        let mut t = ExtentTally::new();
        for _ in 0..99 {
            t.add(&file(1));
        }
        t.add(&file(50));
        assert_eq!(t.summary().p99, 1, "99 of 100 files have 1");
        t.add(&file(50));
        assert_eq!(t.summary().p99, 50, "ceil(0.99 x 101) = 100th file");
    }

    #[test]
    fn no_fiemap_at_all_is_plain() {
        let mut t = ExtentTally::new();
        assert!(!t.summary().no_fiemap_at_all());
        assert!(t.summary().histogram.is_empty());
        t.add_result(&Err(FiemapError::NotSupported(libc::ENOTTY)));
        let s = t.summary();
        assert!(s.no_fiemap_at_all());
        assert_eq!((s.files, s.p99, s.mean), (0, 0, 0.0));
        assert_eq!(s.no_fiemap_errno, "ENOTTY");
    }

    #[test]
    fn the_summary_round_trips_through_json() {
        let mut t = ExtentTally::new();
        t.add(&file(3));
        let s = t.summary();
        let back: ExtentSummary = serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
        assert_eq!(back, s);
    }
}
