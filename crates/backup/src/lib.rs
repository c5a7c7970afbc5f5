//! The backup walk: every regular file of a tree read start to end, in walk
//! order, with one fixed read size, as a backup agent (tar, a backup
//! client) reads it; and the extent counts of the same files.
//!
//! - [`BackupPlan`]: the tree's root, the read size, cold or warm.
//! - [`execute`]: walks the tree and reads every file; returns a
//!   [`BackupResult`]: files, bytes, time, MiB per minute, time and bytes per
//!   power-of-two size class ([`SizeClass`]), the tree's extents
//!   ([`iomatrix_extents::ExtentSummary`]), entries skipped and errors
//!   counted by kind ([`ErrorTally`]; the walk goes on after each).
//! - [`extents_of_tree`]: the same walk, FIEMAP only, no data read.
//! - [`execute_clients`]: the walk from many clients at once (threads or
//!   MPI ranks), client r in its own tree `ROOT/client-r` ([`client_root`]),
//!   all starting together; each cell merged as a [`BackupCell`]. The trees
//!   are local ([`Place::Local`]) or on a server reached by iomatrix's
//!   own NFS or SMB client ([`Place::Remote`]: one session per client,
//!   no cache to drop, no FIEMAP; see the `remote` module for what differs).
//!
//! The walk never writes to the tree: it follows no symlink, stays on the
//! root's file system (mount points below are counted, not entered), reads
//! a file with several names (hard links) once, as tar does, and opens
//! files with `O_NOATIME` where the kernel allows it (the owner or root;
//! otherwise it falls back and counts the files whose access time may have
//! changed). FIFOs, sockets and devices are counted and never opened.
//!
//! Cold (the default): before the walk, untimed (before the clients'
//! common start), the root's file system is synced (`syncfs`) and every
//! regular file's cached pages are dropped
//! (`posix_fadvise(POSIX_FADV_DONTNEED)`), so the storage, not the page
//! cache, serves the reads. What stays cached (pages another process maps or
//! has locked) is counted with mincore after the drop, before the reads, and
//! kept as the walk's `cached_at_start`, so a verdict never claims the storage
//! where the cache kept a part. Metadata (directories, inodes) stays cached; on
//! tmpfs and ramfs the page cache is the storage and nothing is dropped.
//! Warm: files are read as the cache finds them.
//!
//! Timing: per file, open + every read + close, and nothing else; the
//! walk's `stat` and FIEMAP happen before, outside it. The rates are the
//! bytes over the sum of those times; the walk's elapsed time from its
//! start, everything included, is reported beside them.
#![warn(missing_docs)]

pub mod cli;
mod clients;
pub mod figures;
pub mod import;
mod plan;
mod remote;
pub mod render;
mod result;
mod walk;

pub use clients::{client_root, execute_clients, missing_client_trees, BackupCell, ClientWalk, LiveClients};
pub use figures::BackupCellFigures;
pub use iomatrix_backend::Place;
pub use plan::{BackupPlan, MAX_READ_SIZE};
pub use remote::NO_EXTENT_MAP;
pub use result::{
    class_of, class_range, BackupResult, ErrorExample, ErrorTally, Live, SizeClass, Skipped, MAX_EXAMPLES,
};
pub use walk::{execute, extents_of_tree, read_whole, ExtentsWalk, Stage};

/// What ended a walk before it began (the root cannot be walked or synced).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BackupError(pub String);
