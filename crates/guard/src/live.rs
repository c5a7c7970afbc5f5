//! Whether a process that made something still runs, in ways that survive
//! PID namespaces: a pid alone is not proof (a run started under
//! `unshare --pid` is pid 1 in its own namespace, and some other process
//! is pid 1 here).
//!
//! - A lock (flock) the maker holds on a file for its whole life: the
//!   kernel drops it when the process ends, however it ends, and another
//!   process sees it held whatever its namespace. [`lock_exclusive`] takes
//!   it, [`probe`] looks at it.
//! - The boot ([`boot_id`]) and PID namespace ([`pid_namespace`]) the maker
//!   ran in: a pid is only compared within the same ones.

use rustix::fs::{FlockOperation, Mode, OFlags};
use rustix::io::Errno;
use std::fs::File;
use std::path::Path;

/// A lock on a file, as another process finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockState {
    /// A process holds it: the maker runs.
    Held,
    /// Nobody holds it.
    Free,
    /// It cannot be told (the file cannot be opened, or its file system has no locks); why.
    Unknown(String),
}

/// Takes an exclusive lock on `file` without waiting: Ok(true) taken (held until the file is
/// closed, by this process or when it ends), Ok(false) another holds it, Err the file system
/// has no locks.
pub fn lock_exclusive(file: &File) -> std::io::Result<bool> {
    match rustix::fs::flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Whether a process holds a lock on the file at `path` (a symlink is not followed). A shared
/// lock is taken and dropped at once: it conflicts only with a holder's exclusive one.
pub fn probe(path: &Path) -> LockState {
    let fd = match rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(e) => return LockState::Unknown(format!("cannot open it: {e}")),
    };
    match rustix::fs::flock(&fd, FlockOperation::NonBlockingLockShared) {
        Ok(()) => LockState::Free,
        Err(Errno::WOULDBLOCK) => LockState::Held,
        Err(e) => LockState::Unknown(format!("its file system gives no locks: {e}")),
    }
}

/// This boot's id (the kernel's random boot_id): processes of another boot are all gone.
pub fn boot_id() -> Option<String> {
    let text = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(text.trim().to_string()).filter(|t| !t.is_empty())
}

/// This process's PID namespace (the inode of /proc/self/ns/pid): pids are only comparable
/// within one.
pub fn pid_namespace() -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self/ns/pid").ok().map(|m| m.ino())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_is_seen_held_and_free_once_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("marker");
        let file = File::options().read(true).write(true).create_new(true).open(&path).unwrap();
        assert_eq!(probe(&path), LockState::Free);
        assert!(lock_exclusive(&file).unwrap());
        // Another open file description (as another process would have) sees it held.
        assert_eq!(probe(&path), LockState::Held);
        let other = File::options().read(true).write(true).open(&path).unwrap();
        assert!(!lock_exclusive(&other).unwrap());
        drop(file);
        assert_eq!(probe(&path), LockState::Free);
        assert!(matches!(probe(&dir.path().join("missing")), LockState::Unknown(_)));
    }

    #[test]
    fn the_boot_and_namespace_are_known_here() {
        assert_eq!(boot_id().unwrap().len(), 36);
        assert!(pid_namespace().unwrap() > 0);
    }
}
