//! Extent counts of files, through the kernel's FIEMAP ioctl, counted the
//! way e2fsprogs' `filefrag` counts them.
//!
//! - [`Extent`]: one extent as FIEMAP reports it, its `fe_flags` bits
//!   (`FIEMAP_EXTENT_*`) and their `filefrag -v` names ([`flag_names`]).
//! - [`Fiemap`]: one reusable request buffer; [`Fiemap::map`] hands every
//!   extent of an open file to a callback (batches of [`BATCH`] extents
//!   until the kernel marks the last), [`Fiemap::count`] counts them.
//!   `FIEMAP_FLAG_SYNC` (write dirty data out first, `filefrag -s`) is
//!   optional and off by default, as in `filefrag`.
//! - [`FilefragCounter`]: `filefrag`'s rule, as a pure function of the
//!   extents: an extent starts a new fragment unless it continues the
//!   previous one physically (either right after it, or where the previous
//!   extent's mapping would put it across a hole), and a file with any
//!   extent counts at least one. So unwritten (preallocated) extents count
//!   like written ones, an inline or tail-packed extent counts as one, and an
//!   empty file counts none.
//! - [`FiemapError`]: [`FiemapError::NotSupported`] when the file system has
//!   no FIEMAP at all (tmpfs, many FUSE mounts: `EOPNOTSUPP`, `ENOTTY`,
//!   `EINVAL`, `ENOSYS`), distinct from [`FiemapError::Failed`] (anything
//!   else: I/O errors, a file that vanished).
//! - [`ExtentTally`] collects per-file counts; [`ExtentSummary`] is what a
//!   tree reports: files, total extents, per-file mean, p99 and max, a
//!   histogram in power-of-two buckets (0, 1, 2, 3-4, 5-8, ...), and files
//!   without FIEMAP or whose FIEMAP failed, counted apart.
//!
//! `filefrag` falls back to FIBMAP (root only, one ioctl per block) where
//! FIEMAP is missing; this crate does not: such files are counted as
//! without FIEMAP.
#![warn(missing_docs)]

mod count;
mod extent;
mod fiemap;
mod summary;

/// Why a tree on a server has no extent counts, as stored and shown (the backup walk over
/// `nfs://` or `smb://` stores it as the summary's `no_fiemap_errno`).
pub const NO_EXTENT_MAP: &str = "no FIEMAP over nfs:// or smb:// (the protocol has no extent map)";

pub use count::{FileExtents, FilefragCounter};
pub use extent::{
    flag_names, Extent, FIEMAP_EXTENT_DATA_INLINE, FIEMAP_EXTENT_DATA_TAIL, FIEMAP_EXTENT_DELALLOC,
    FIEMAP_EXTENT_ENCODED, FIEMAP_EXTENT_LAST, FIEMAP_EXTENT_MERGED, FIEMAP_EXTENT_NOT_ALIGNED, FIEMAP_EXTENT_SHARED,
    FIEMAP_EXTENT_UNKNOWN, FIEMAP_EXTENT_UNWRITTEN,
};
pub use fiemap::{count_path, Fiemap, FiemapError, BATCH, FIEMAP_FLAG_SYNC, FS_IOC_FIEMAP};
pub use summary::{bucket_of, Bucket, ExtentSummary, ExtentTally};
