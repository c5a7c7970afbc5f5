//! What a walk reports, and the tallies behind it.

use iomatrix_core::figures::CachedAtStart;
pub use iomatrix_core::walk_errors::{ErrorExample, ErrorTally, MAX_EXAMPLES};
use iomatrix_extents::ExtentSummary;
use serde::{Deserialize, Serialize};

const MIB: f64 = 1048576.0;

/// The size class of a file of `bytes` ([`iomatrix_tree::class_of`]: 0 for an
/// empty file, else k with `2^(k-1) <= bytes <= 2^k - 1`), as stored with the run.
pub fn class_of(bytes: u64) -> u32 {
    iomatrix_tree::class_of(bytes) as u32
}

/// The byte range `[min, max]` of class `k`.
pub fn class_range(k: u32) -> (u64, u64) {
    (iomatrix_tree::class_min(k as usize), iomatrix_tree::class_max(k as usize))
}

/// Files of one size class.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SizeClass {
    /// The class: 0 for empty files, k for sizes in [2^(k-1), 2^k - 1].
    pub class: u32,
    /// Smallest size in the class, bytes.
    pub min: u64,
    /// Largest size in the class, bytes.
    pub max: u64,
    /// Files of the class read to the end.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Time spent on these files: open + read + close, summed.
    pub read_ns: u64,
    /// Their extents (files FIEMAP mapped only).
    pub extents: u64,
    /// Their bytes over their `read_ns`, in MiB/s.
    pub mib_per_sec: f64,
}

/// Entries that are not regular files: counted, never opened.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Symbolic links (never followed).
    pub symlinks: u64,
    /// Named pipes.
    pub fifos: u64,
    /// Sockets.
    pub sockets: u64,
    /// Block and character devices.
    pub devices: u64,
    /// Anything else that is not a regular file or folder.
    pub other: u64,
}

impl Skipped {
    /// Entries skipped, of every kind.
    pub fn total(&self) -> u64 {
        self.symlinks + self.fifos + self.sockets + self.devices + self.other
    }
}

/// Figures so far, for a live line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Live {
    /// Files read to the end so far.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Errors met so far.
    pub errors: u64,
    /// Time spent opening, reading and closing files so far (ns).
    pub read_ns: u64,
}

/// A finished (or interrupted) walk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BackupResult {
    /// Regular files read to the end, and their bytes.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// read(2) calls.
    pub reads: u64,
    /// Open + read + close of every file read, summed: the timed part.
    pub read_ns: u64,
    /// The walk's elapsed time from its start (the clients' common start),
    /// everything included (readdir, stat, FIEMAP).
    pub wall_ns: u64,
    /// The syncfs before a cold walk (not in `wall_ns`).
    pub sync_ns: u64,
    /// Dropping every file's cached pages after it, before the walk (not in `wall_ns`).
    #[serde(default)]
    pub evict_ns: u64,
    /// MiB (2^20 bytes) per minute and per second over `read_ns`; files per second likewise.
    pub mib_per_min: f64,
    /// MiB per second over `read_ns`.
    pub mib_per_sec: f64,
    /// Files per second over `read_ns`.
    pub files_per_sec: f64,
    /// Folders below the root.
    pub directories: u64,
    /// Folders on another file system (mount points), not entered.
    pub mount_points: u64,
    /// Further names of files already read (hard links), not read again.
    pub hard_links: u64,
    /// Entries that are not regular files: counted, never opened.
    pub skipped: Skipped,
    /// Classes with at least one file, smallest first.
    pub classes: Vec<SizeClass>,
    /// The read files' extents, from FIEMAP where the file system has it.
    pub extents: ExtentSummary,
    /// Errors met, by kind, with the first paths; the walk went on after each.
    pub errors: ErrorTally,
    /// Bytes read from files that then failed (not in `bytes`).
    pub failed_bytes: u64,
    /// Whether the walk was cold: synced and the files' cached pages dropped first.
    pub cold: bool,
    /// Files whose cached pages could not be dropped (cold walks).
    pub evict_failures: u64,
    /// What the page cache still held of the files after a cold walk's drop, before its reads
    /// (mincore): pages another process maps or has locked stay cached. None for a warm walk, a
    /// tree on a server, and walks stored before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_at_start: Option<CachedAtStart>,
    /// Files the kernel would not count cached pages of for this process (not their owner, no
    /// write permission): outside `cached_at_start`.
    #[serde(default)]
    pub cache_uncounted: u64,
    /// Files opened without O_NOATIME (not the caller's and no CAP_FOWNER):
    /// their access time may have changed.
    pub noatime_refused: u64,
    /// CPU of the walking thread over the walk, and as % of `wall_ns`.
    pub user_ns: u64,
    /// CPU time in the kernel (ns); see `user_ns`.
    pub sys_ns: u64,
    /// The CPU time over `wall_ns`, in % of one core.
    pub cpu_percent: f64,
    /// Ctrl-C ended the walk early: the figures cover the files finished before it.
    pub interrupted: bool,
    /// The server stopped answering (a tree on a server only): why, naming
    /// the server and the call; the walk ended there and the figures cover
    /// the files finished before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_lost: Option<String>,
}

impl BackupResult {
    /// The figures so far, for the live line.
    pub fn live(&self) -> Live {
        Live { files: self.files, bytes: self.bytes, errors: self.errors.total, read_ns: self.read_ns }
    }

    /// Counts one file read to the end.
    pub(crate) fn add_file(&mut self, bytes: u64, reads: u64, ns: u64, extents: Option<u64>) {
        self.files += 1;
        self.bytes += bytes;
        self.reads += reads;
        self.read_ns += ns;
        let k = class_of(bytes);
        let at = match self.classes.binary_search_by_key(&k, |c| c.class) {
            Ok(at) => at,
            Err(at) => {
                let (min, max) = class_range(k);
                self.classes.insert(at, SizeClass { class: k, min, max, ..SizeClass::default() });
                at
            }
        };
        let c = &mut self.classes[at];
        c.files += 1;
        c.bytes += bytes;
        c.read_ns += ns;
        c.extents += extents.unwrap_or(0);
    }

    /// Fills in the rates once the counts are final.
    pub(crate) fn derive(&mut self) {
        let per_sec = |amount: f64, ns: u64| if ns == 0 { 0.0 } else { amount * 1e9 / ns as f64 };
        self.mib_per_sec = per_sec(self.bytes as f64 / MIB, self.read_ns);
        self.mib_per_min = self.mib_per_sec * 60.0;
        self.files_per_sec = per_sec(self.files as f64, self.read_ns);
        for c in &mut self.classes {
            c.mib_per_sec = per_sec(c.bytes as f64 / MIB, c.read_ns);
        }
        self.cpu_percent = iomatrix_stats::cpu_percent(self.user_ns + self.sys_ns, self.wall_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io;
    use std::path::Path;

    #[test]
    fn size_classes_are_powers_of_two() {
        let cases = [(0, 0), (1, 1), (2, 2), (3, 2), (4, 3), (7, 3), (8, 4), (1 << 20, 21), ((1 << 21) - 1, 21)];
        for (bytes, class) in cases {
            assert_eq!(class_of(bytes), class, "{bytes}");
            let (min, max) = class_range(class);
            assert!(min <= bytes && bytes <= max, "{bytes} in {min}..={max}");
        }
        assert_eq!(class_range(21), (1 << 20, (2 << 20) - 1));
        assert_eq!(class_of(u64::MAX), 64);
        assert_eq!(class_range(64), (1 << 63, u64::MAX));
    }

    #[test]
    fn files_land_in_their_classes_and_rates_follow() {
        let mut r = BackupResult::default();
        r.add_file(1 << 20, 1, 500_000_000, Some(1));
        r.add_file(0, 0, 1_000, Some(0));
        r.add_file((1 << 20) + 5, 2, 500_000_000, Some(3));
        r.add_file(100, 1, 1_000, None);
        r.wall_ns = 2_000_000_000;
        r.user_ns = 100_000_000;
        r.sys_ns = 400_000_000;
        r.derive();
        assert_eq!((r.files, r.bytes, r.reads), (4, (2 << 20) + 105, 4));
        let classes: Vec<(u32, u64, u64)> = r.classes.iter().map(|c| (c.class, c.files, c.extents)).collect();
        assert_eq!(classes, [(0, 1, 0), (7, 1, 0), (21, 2, 4)]);
        assert_eq!(r.classes.iter().map(|c| c.bytes).sum::<u64>(), r.bytes);
        assert_eq!(r.classes.iter().map(|c| c.read_ns).sum::<u64>(), r.read_ns);
        // 2 MiB + 105 bytes over 1.000002 s.
        let expect = f64::from((2 << 20) + 105) / MIB / 1.000002;
        assert!((r.mib_per_sec - expect).abs() < 1e-9, "{}", r.mib_per_sec);
        assert!((r.mib_per_min - expect * 60.0).abs() < 1e-6);
        assert!((r.cpu_percent - 25.0).abs() < 1e-9);
        let c21 = &r.classes[2];
        assert!((c21.mib_per_sec - (2.0 + 5.0 / MIB)).abs() < 1e-9);
    }

    #[test]
    fn no_time_gives_zero_rates_not_infinity() {
        let mut r = BackupResult::default();
        r.derive();
        assert_eq!((r.mib_per_sec, r.mib_per_min, r.files_per_sec, r.cpu_percent), (0.0, 0.0, 0.0, 0.0));
    }

    #[test]
    fn errors_are_counted_by_stage_and_kind_with_a_few_examples() {
        let mut t = ErrorTally::default();
        let eacces = io::Error::from_raw_os_error(libc::EACCES);
        let eio = io::Error::from_raw_os_error(libc::EIO);
        for i in 0..30 {
            t.add("open", Path::new(&format!("/t/{i}")), &eacces);
        }
        t.add("read", Path::new("/t/bad"), &eio);
        t.add("walk", Path::new("/t/loop"), &io::Error::other("File system loop found"));
        assert_eq!(t.total, 32);
        assert_eq!(t.by_kind["open: Permission denied"], 30);
        assert_eq!(t.by_kind["read: Input/output error"], 1);
        assert_eq!(t.by_kind["walk: File system loop found"], 1);
        assert_eq!(t.examples.len(), MAX_EXAMPLES);
        assert_eq!(t.examples[0], ErrorExample { path: "/t/0".into(), error: "open: Permission denied".into() });
    }
}
