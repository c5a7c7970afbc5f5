//! The walk: one pass over a tree, read-only, counting every entry once.

use crate::classes::{class_max, class_min, class_of, CLASSES};
use crate::profile::{Profile, SizeClass};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The sizes `--at` reports on unless told: 64 KiB, 1 MiB, 32 MiB.
pub const DEFAULT_THRESHOLDS: [u64; 3] = [64 << 10, 1 << 20, 32 << 20];

/// How many unreadable entries are listed by path (all are counted).
const PROBLEMS_LISTED: usize = 20;

/// How often the progress callback runs at most.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// What `iomatrix scan` looks at and reports (`--cross-mounts`, `--top`, the thresholds).
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Descend into folders on other file systems than the root's (default: no,
    /// like `find -xdev` and `du -x`).
    pub cross_mounts: bool,
    /// How many of the largest files to list.
    pub top: usize,
    /// Sizes to report the share of files and bytes at or below.
    pub thresholds: Vec<u64>,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions { cross_mounts: false, top: 10, thresholds: DEFAULT_THRESHOLDS.to_vec() }
    }
}

/// Why a scan could not start. Everything below the root that cannot be read is
/// counted in [`Tally::unreadable`] instead.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The root to scan does not exist.
    #[error("scan root {0} does not exist: give an existing folder to scan")]
    RootMissing(PathBuf),
    /// The root exists but cannot be read (its metadata or its listing), with the system's error.
    #[error("cannot read scan root {0}: {1}: give a folder this user may read")]
    RootUnreadable(PathBuf, std::io::Error),
}

/// Counts of entries; what the progress callback sees while the walk runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tally {
    /// Regular files, each hard-linked file once.
    pub files: u64,
    /// Their apparent sizes (st_size), summed.
    pub bytes: u64,
    /// Their allocated space (st_blocks x 512), summed.
    pub allocated_bytes: u64,
    /// Directories entered (the root included; unreadable ones too).
    pub dirs: u64,
    /// Symbolic links, counted and never followed.
    pub symlinks: u64,
    /// Fifos, sockets, device nodes.
    pub other: u64,
    /// Entries that could not be read (a folder's listing, or a file's metadata):
    /// counted, listed in `problems` (the first 20), and skipped.
    pub unreadable: u64,
    /// Further names of a hard-linked file already counted.
    pub hardlink_duplicates: u64,
    /// Folders on another file system, not entered (without `cross_mounts`).
    pub mounts_skipped: u64,
}

/// One power-of-two size class of the inventory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassTally {
    /// k: 0 for 0-byte files, else sizes in [2^(k-1), 2^k - 1].
    pub class: usize,
    /// The class's smallest size (bytes): 0, or 2^(k-1).
    pub min_bytes: u64,
    /// The class's largest size (bytes): 0, or 2^k - 1.
    pub max_bytes: u64,
    /// Regular files of a size in the class.
    pub files: u64,
    /// Their apparent sizes (st_size), summed.
    pub bytes: u64,
    /// Their allocated space (st_blocks x 512), summed.
    pub allocated_bytes: u64,
}

/// Files and bytes in files of at most `at_bytes` (exact).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Share {
    /// The threshold (bytes).
    pub at_bytes: u64,
    /// Files of at most `at_bytes`.
    pub files: u64,
    /// Bytes in those files.
    pub bytes: u64,
    /// `files` / all files (0 when there are none).
    pub share_of_files: f64,
    /// `bytes` / all bytes (0 when there are none).
    pub share_of_bytes: f64,
}

/// File size by count, exact (nearest rank: pN is the smallest size that N% of
/// the files do not exceed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// The smallest file (bytes).
    pub min_bytes: u64,
    /// The median file size (bytes).
    pub p50_bytes: u64,
    /// 90% of the files are this size or smaller (bytes).
    pub p90_bytes: u64,
    /// 99% of the files are this size or smaller (bytes).
    pub p99_bytes: u64,
    /// 99.9% of the files are this size or smaller (bytes).
    pub p99_9_bytes: u64,
    /// The largest file (bytes).
    pub max_bytes: u64,
    /// The mean file size (bytes).
    pub mean_bytes: f64,
    /// Half of all bytes are in files of this size or smaller (the byte-weighted median).
    pub byte_median_bytes: u64,
}

/// One of the largest files (`--top`), largest first when listed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LargeFile {
    /// Its apparent size (bytes).
    pub bytes: u64,
    /// Its path, as found under the root.
    pub path: String,
}

/// An entry the scan could not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// Its path, as found under the root.
    pub path: String,
    /// The system's error for it.
    pub error: String,
}

/// What a tree holds, by file size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Inventory {
    /// The root as given.
    pub root: String,
    /// The counts of every kind of entry.
    #[serde(flatten)]
    pub tally: Tally,
    /// Classes 0 up to the largest file's, empty ones included (none without files).
    pub classes: Vec<ClassTally>,
    /// One per threshold asked for, ascending.
    pub shares: Vec<Share>,
    /// None when there are no files.
    pub percentiles: Option<Percentiles>,
    /// The largest files, largest first.
    pub largest: Vec<LargeFile>,
    /// The first unreadable entries (all are counted in `unreadable`).
    pub problems: Vec<Problem>,
}

impl Inventory {
    /// The size classes as a profile (`created_at`: when the scan ran, RFC 3339 UTC).
    pub fn profile(&self, created_at: String) -> Profile {
        let classes = self
            .classes
            .iter()
            .map(|c| SizeClass { min_bytes: c.min_bytes, max_bytes: c.max_bytes, files: c.files, bytes: c.bytes })
            .collect();
        Profile { source: self.root.clone(), created_at, classes }
    }
}

/// Walks `root` and counts what it holds. `progress` is called at most every
/// 250 ms with the counts so far.
///
/// A root that is a file is an inventory of that one file (as `find` and `du`
/// treat it); a root that is a symlink is followed, nothing below it is.
pub fn scan(root: &Path, opts: &ScanOptions, progress: &mut dyn FnMut(&Tally)) -> Result<Inventory, ScanError> {
    let root_meta = match std::fs::metadata(root) {
        Ok(md) => md,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ScanError::RootMissing(root.to_path_buf())),
        Err(e) => return Err(ScanError::RootUnreadable(root.to_path_buf(), e)),
    };
    let root_dev = root_meta.dev();
    let mut walk = Walk::new(opts);
    let it = walkdir::WalkDir::new(root)
        .follow_links(false)
        .follow_root_links(true)
        .same_file_system(!opts.cross_mounts)
        .into_iter();
    let mut last_report = Instant::now();
    let mut entries: u64 = 0;
    for next in it {
        entries += 1;
        if entries % 1024 == 0 && last_report.elapsed() >= PROGRESS_EVERY {
            progress(&walk.tally);
            last_report = Instant::now();
        }
        let entry = match next {
            Ok(entry) => entry,
            Err(err) => {
                let io = io_text(&err);
                if err.path() == Some(root) {
                    let e = err.into_io_error().unwrap_or_else(|| std::io::Error::other(io));
                    return Err(ScanError::RootUnreadable(root.to_path_buf(), e));
                }
                walk.problem(err.path().unwrap_or(root), io);
                continue;
            }
        };
        // The root counts as what it leads to (walkdir reports a symlinked root as a symlink).
        let kind = if entry.depth() == 0 { root_meta.file_type() } else { entry.file_type() };
        if entry.depth() == 0 && kind.is_file() {
            walk.file(entry.path(), &root_meta);
        } else if kind.is_dir() {
            if entry.depth() > 0 && !opts.cross_mounts {
                // walkdir has not entered a folder on another file system; say so.
                match entry.metadata() {
                    Ok(md) if md.dev() != root_dev => {
                        walk.tally.mounts_skipped += 1;
                        continue;
                    }
                    Ok(_) => {}
                    Err(e) => {
                        // Gone since walkdir looked: nothing left to count in it.
                        walk.problem(entry.path(), io_text(&e));
                        continue;
                    }
                }
            }
            walk.tally.dirs += 1;
        } else if kind.is_symlink() {
            walk.tally.symlinks += 1;
        } else if kind.is_file() {
            match entry.metadata() {
                Ok(md) => walk.file(entry.path(), &md),
                Err(e) => walk.problem(entry.path(), io_text(&e)),
            }
        } else {
            walk.tally.other += 1;
        }
    }
    progress(&walk.tally);
    Ok(walk.finish(root, opts))
}

/// The OS's words for a walk error, without walkdir's "IO error for operation on PATH".
fn io_text(err: &walkdir::Error) -> String {
    err.io_error().map_or_else(|| err.to_string(), |e| e.to_string())
}

/// State of one walk.
struct Walk {
    tally: Tally,
    classes: [(u64, u64, u64); CLASSES],
    /// Every counted file's size, for exact percentiles and shares (8 bytes a file).
    sizes: Vec<u64>,
    /// (dev, ino) of files with more than one link, seen so far.
    linked: HashSet<(u64, u64)>,
    largest: BinaryHeap<Reverse<(u64, PathBuf)>>,
    top: usize,
    problems: Vec<Problem>,
}

impl Walk {
    fn new(opts: &ScanOptions) -> Walk {
        Walk {
            tally: Tally::default(),
            classes: [(0, 0, 0); CLASSES],
            sizes: Vec::new(),
            linked: HashSet::new(),
            // Grows with what it holds: --top may be any number.
            largest: BinaryHeap::new(),
            top: opts.top,
            problems: Vec::new(),
        }
    }

    fn problem(&mut self, path: &Path, error: String) {
        self.tally.unreadable += 1;
        if self.problems.len() < PROBLEMS_LISTED {
            self.problems.push(Problem { path: path.to_string_lossy().into_owned(), error });
        }
    }

    fn file(&mut self, path: &Path, md: &std::fs::Metadata) {
        if md.nlink() > 1 && !self.linked.insert((md.dev(), md.ino())) {
            self.tally.hardlink_duplicates += 1;
            return;
        }
        self.add_file(path, md.len(), md.blocks().saturating_mul(512));
    }

    fn add_file(&mut self, path: &Path, size: u64, allocated: u64) {
        let t = &mut self.tally;
        t.files += 1;
        t.bytes = t.bytes.saturating_add(size);
        t.allocated_bytes = t.allocated_bytes.saturating_add(allocated);
        let c = &mut self.classes[class_of(size)];
        c.0 += 1;
        c.1 = c.1.saturating_add(size);
        c.2 = c.2.saturating_add(allocated);
        self.sizes.push(size);
        if self.top > 0 {
            let smallest_kept = self.largest.peek().map(|Reverse((s, _))| *s);
            if self.largest.len() < self.top || smallest_kept.is_some_and(|s| size > s) {
                self.largest.push(Reverse((size, path.to_path_buf())));
                if self.largest.len() > self.top {
                    self.largest.pop();
                }
            }
        }
    }

    fn finish(mut self, root: &Path, opts: &ScanOptions) -> Inventory {
        let top_class = self.classes.iter().rposition(|c| c.0 > 0).map_or(0, |k| k + 1);
        let classes = (0..top_class)
            .map(|k| {
                let (files, bytes, allocated_bytes) = self.classes[k];
                ClassTally { class: k, min_bytes: class_min(k), max_bytes: class_max(k), files, bytes, allocated_bytes }
            })
            .collect();
        self.sizes.sort_unstable();
        let (shares, percentiles) = summarise(&self.sizes, &opts.thresholds);
        let mut largest: Vec<LargeFile> = self
            .largest
            .into_iter()
            .map(|Reverse((bytes, path))| LargeFile { bytes, path: path.to_string_lossy().into_owned() })
            .collect();
        largest.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.path.cmp(&b.path)));
        Inventory {
            root: root.to_string_lossy().into_owned(),
            tally: self.tally,
            classes,
            shares,
            percentiles,
            largest,
            problems: self.problems,
        }
    }
}

/// Shares at the thresholds and percentiles from the sorted sizes of all files.
fn summarise(sorted: &[u64], thresholds: &[u64]) -> (Vec<Share>, Option<Percentiles>) {
    let n = sorted.len() as u64;
    let total: u128 = sorted.iter().map(|&s| u128::from(s)).sum();
    let ratio = |part: u128, whole: u128| if whole == 0 { 0.0 } else { part as f64 / whole as f64 };
    let mut at: Vec<u64> = thresholds.to_vec();
    at.sort_unstable();
    at.dedup();
    // One pass: bytes in the files at or below each threshold.
    let mut shares = Vec::with_capacity(at.len());
    let (mut i, mut below) = (0usize, 0u128);
    for t in at {
        while i < sorted.len() && sorted[i] <= t {
            below += u128::from(sorted[i]);
            i += 1;
        }
        shares.push(Share {
            at_bytes: t,
            files: i as u64,
            bytes: u64::try_from(below).unwrap_or(u64::MAX),
            share_of_files: ratio(i as u128, u128::from(n)),
            share_of_bytes: ratio(below, total),
        });
    }
    if sorted.is_empty() {
        return (shares, None);
    }
    let rank = |per_mille: u64| {
        let r = (n * per_mille).div_ceil(1000).max(1);
        sorted[(r - 1) as usize]
    };
    let mut byte_median = 0;
    let mut seen = 0u128;
    for &s in sorted {
        seen += u128::from(s);
        if seen * 2 >= total {
            byte_median = s;
            break;
        }
    }
    let percentiles = Percentiles {
        min_bytes: sorted[0],
        p50_bytes: rank(500),
        p90_bytes: rank(900),
        p99_bytes: rank(990),
        p99_9_bytes: rank(999),
        max_bytes: sorted[sorted.len() - 1],
        mean_bytes: total as f64 / n as f64,
        byte_median_bytes: byte_median,
    };
    (shares, Some(percentiles))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk_of(sizes: &[u64], opts: &ScanOptions) -> Inventory {
        let mut w = Walk::new(opts);
        for (i, &s) in sizes.iter().enumerate() {
            w.add_file(Path::new(&format!("/t/f{i}")), s, s.div_ceil(4096) * 4096);
        }
        w.finish(Path::new("/t"), opts)
    }

    #[test]
    fn classes_count_files_and_bytes() {
        let inv = walk_of(&[0, 0, 1, 2, 3, 4, 1023, 1024, 1 << 20], &ScanOptions::default());
        let by_class: Vec<(usize, u64, u64)> =
            inv.classes.iter().filter(|c| c.files > 0).map(|c| (c.class, c.files, c.bytes)).collect();
        assert_eq!(
            by_class,
            [(0, 2, 0), (1, 1, 1), (2, 2, 5), (3, 1, 4), (10, 1, 1023), (11, 1, 1024), (21, 1, 1 << 20)]
        );
        assert_eq!(inv.classes.len(), 22, "classes 0..=21, empty ones included");
        assert_eq!(
            inv.classes[5],
            ClassTally { class: 5, min_bytes: 16, max_bytes: 31, files: 0, bytes: 0, allocated_bytes: 0 }
        );
        assert_eq!(inv.tally.files, 9);
        assert_eq!(inv.tally.bytes, 1 + 2 + 3 + 4 + 1023 + 1024 + (1 << 20));
        assert_eq!(inv.tally.allocated_bytes, inv.classes.iter().map(|c| c.allocated_bytes).sum::<u64>());
    }

    #[test]
    fn shares_are_exact_at_and_below_thresholds() {
        let opts = ScanOptions { thresholds: vec![1 << 20, 64 << 10, 100], ..ScanOptions::default() };
        let inv = walk_of(&[10, 100, 101, 64 << 10, (64 << 10) + 1, 1 << 20, 2 << 20], &opts);
        let got: Vec<(u64, u64, u64)> = inv.shares.iter().map(|s| (s.at_bytes, s.files, s.bytes)).collect();
        assert_eq!(
            got,
            [
                (100, 2, 110),
                (64 << 10, 4, 110 + 101 + (64 << 10)),
                (1 << 20, 6, 110 + 101 + (128 << 10) + 1 + (1 << 20))
            ]
        );
        assert!((inv.shares[0].share_of_files - 2.0 / 7.0).abs() < 1e-12);
        let total = inv.tally.bytes as f64;
        assert!((inv.shares[2].share_of_bytes - inv.shares[2].bytes as f64 / total).abs() < 1e-12);
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        // 1..=1000: pN is N% of the way.
        let sizes: Vec<u64> = (1..=1000).rev().collect();
        let p = walk_of(&sizes, &ScanOptions::default()).percentiles.unwrap();
        assert_eq!(
            (p.min_bytes, p.p50_bytes, p.p90_bytes, p.p99_bytes, p.p99_9_bytes, p.max_bytes),
            (1, 500, 900, 990, 999, 1000)
        );
        assert!((p.mean_bytes - 500.5).abs() < 1e-9);
        // Half of 500500 bytes is 250250: 1+..+706 = 249571 falls short, 1+..+707 = 250278 does not.
        assert_eq!(p.byte_median_bytes, 707);
        // One file: every percentile is that file.
        let p = walk_of(&[42], &ScanOptions::default()).percentiles.unwrap();
        assert_eq!((p.p50_bytes, p.p99_9_bytes, p.byte_median_bytes), (42, 42, 42));
        // 999 small files and one huge: p99.9 is still small, the byte median huge.
        let mut sizes = vec![10u64; 999];
        sizes.push(1 << 30);
        let p = walk_of(&sizes, &ScanOptions::default()).percentiles.unwrap();
        assert_eq!((p.p99_bytes, p.p99_9_bytes, p.max_bytes, p.byte_median_bytes), (10, 10, 1 << 30, 1 << 30));
        assert!(walk_of(&[], &ScanOptions::default()).percentiles.is_none());
    }

    #[test]
    fn largest_files_largest_first() {
        let opts = ScanOptions { top: 3, ..ScanOptions::default() };
        let inv = walk_of(&[5, 50, 1, 500, 7, 5000, 0], &opts);
        let got: Vec<u64> = inv.largest.iter().map(|l| l.bytes).collect();
        assert_eq!(got, [5000, 500, 50]);
        assert_eq!(inv.largest[0].path, "/t/f5");
        assert!(walk_of(&[1, 2], &ScanOptions { top: 0, ..ScanOptions::default() }).largest.is_empty());
    }

    #[test]
    fn problems_are_counted_all_and_listed_in_part() {
        let mut w = Walk::new(&ScanOptions::default());
        for i in 0..25 {
            w.problem(Path::new(&format!("/t/locked{i}")), "Permission denied (os error 13)".into());
        }
        let inv = w.finish(Path::new("/t"), &ScanOptions::default());
        assert_eq!(inv.tally.unreadable, 25);
        assert_eq!(inv.problems.len(), PROBLEMS_LISTED);
        assert_eq!(inv.problems[0].path, "/t/locked0");
    }

    #[test]
    fn profile_from_inventory_loads_back() {
        let inv = walk_of(&[0, 3, 4000, 4096, 1 << 20], &ScanOptions::default());
        let profile = inv.profile("2026-11-22T04:11:03Z".into());
        assert_eq!(profile.total_files(), 5);
        assert_eq!(profile.classes.len(), inv.classes.len());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.json");
        std::fs::write(&path, profile.to_json().unwrap()).unwrap();
        assert_eq!(Profile::load(&path).unwrap(), profile);
    }

    #[test]
    fn scans_a_real_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("empty"), b"").unwrap();
        std::fs::write(root.join("a/one"), vec![1u8; 1000]).unwrap();
        std::fs::write(root.join("a/b/two"), vec![1u8; 70_000]).unwrap();
        std::fs::hard_link(root.join("a/b/two"), root.join("a/two-again")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("link-to-dir")).unwrap();
        std::os::unix::fs::symlink("/", root.join("link-out")).unwrap();
        let mut calls = 0;
        let inv = scan(root, &ScanOptions::default(), &mut |_| calls += 1).unwrap();
        assert!(calls >= 1, "the final counts are reported");
        let t = &inv.tally;
        assert_eq!((t.files, t.bytes, t.dirs, t.symlinks, t.hardlink_duplicates), (3, 71_000, 3, 2, 1));
        assert_eq!((t.other, t.unreadable, t.mounts_skipped), (0, 0, 0));
        assert_eq!(inv.largest[0].bytes, 70_000);
        assert_eq!(inv.shares[0].files, 2, "0 and 1000 bytes are at or below 64k");

        // A file as root: that one file.
        let one = scan(&root.join("a/one"), &ScanOptions::default(), &mut |_| {}).unwrap();
        assert_eq!((one.tally.files, one.tally.bytes, one.tally.dirs), (1, 1000, 0));
        // A symlink as root is followed; nothing below it is.
        let via = scan(&root.join("link-to-dir"), &ScanOptions::default(), &mut |_| {}).unwrap();
        assert_eq!((via.tally.files, via.tally.dirs, via.tally.hardlink_duplicates), (2, 2, 1));

        let err = scan(&root.join("nope"), &ScanOptions::default(), &mut |_| {}).unwrap_err();
        assert!(matches!(err, ScanError::RootMissing(_)));
        assert!(err.to_string().contains("nope") && err.to_string().contains("does not exist"), "{err}");
    }
}
