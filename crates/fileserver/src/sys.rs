//! What the run asks of the system around it: a page-cache drop between phases (enough file
//! descriptors is the backend's `raise_fd_limit`, which other suites' connections need too).

use std::io;

/// Where the kernel takes page-cache drops.
pub const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";

/// `sync`, then drop the page cache, dentries and inodes (`echo 3 >
/// /proc/sys/vm/drop_caches`), so the next reads come from the storage. Root only.
pub fn drop_caches() -> io::Result<()> {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    std::fs::write(DROP_CACHES, "3")
}

/// Whether [`drop_caches`] can work here: the file opens for writing (root,
/// and /proc/sys not read-only). Nothing is dropped.
pub fn can_drop_caches() -> io::Result<()> {
    std::fs::OpenOptions::new().write(true).open(DROP_CACHES).map(drop)
}
