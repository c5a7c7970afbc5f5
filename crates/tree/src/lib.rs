//! What a real volume holds, by file size: the inventory behind `iomatrix scan`
//! and the file-size profile that loads draw from.
//!
//! - [`scan()`] walks a tree read-only (never following symlinks, staying on the
//!   root's file system unless [`ScanOptions::cross_mounts`], counting a hard-linked
//!   file once, counting what it cannot read and going on) and returns an [`Inventory`]:
//!   files, apparent and allocated bytes, a [`ClassTally`] per power-of-two size class,
//!   exact [`Share`]s of files and bytes at or below chosen sizes, [`Percentiles`] of
//!   file size, the largest files ([`LargeFile`]) and the entries it skipped ([`Problem`]).
//! - [`Profile`] is the small, saved form of the size classes ([`SizeClass`]):
//!   `run fileserver --profile` draws file sizes from it ([`Profile::draw`]) and reports
//!   weight per-file-size results by it ([`Profile::share_of_files_between`]). Loading
//!   checks every field and says what is wrong in a [`ProfileError`], which converts
//!   into `iomatrix_core::UsageError` (the user's mistake: exit code 2).
//!
//! Size classes: class 0 holds only 0-byte files; class k >= 1 holds sizes in
//! [2^(k-1), 2^k - 1] ([`class_of`], [`class_min`], [`class_max`]).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod classes;
mod profile;
mod scan;

pub use classes::{class_label, class_max, class_min, class_of, CLASSES};
pub use profile::{Profile, ProfileError, ProfileKind, SizeClass, PROFILE_SCHEMA};
pub use scan::{
    scan, ClassTally, Inventory, LargeFile, Percentiles, Problem, ScanError, ScanOptions, Share, Tally,
    DEFAULT_THRESHOLDS,
};
