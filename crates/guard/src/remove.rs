//! The one remover of trees: a working folder at the end of its run and in
//! `clean`, a replayed load file's deltree.
//!
//! It works relative to directory handles (openat, unlinkat): a folder is
//! opened with O_NOFOLLOW | O_DIRECTORY and what is below it is named
//! relative to that handle, so a symlink is removed as a name and never
//! followed, and a folder renamed or replaced by a symlink meanwhile is not
//! walked into. It never crosses a mount point: an entry whose mount id
//! (statx STATX_MNT_ID) differs from its tree's, or that is the root of a
//! mount (STATX_ATTR_MOUNT_ROOT), is left as it is with everything above
//! it. A bind mount of the same file system has the same device as the
//! tree, so the device alone would not tell it (kernels before 5.8, which
//! have no mount id, are judged by the device and the mount-root
//! attribute). Each entry it could not remove is named with the reason.

use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, Mode, OFlags, Statx, StatxAttributes, StatxFlags};
use rustix::io::Errno;
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Deepest folder nesting walked: each level holds a directory handle open.
pub const MAX_DEPTH: usize = 256;

/// Something a removal left in place, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Left {
    /// The file or folder left in place.
    pub path: PathBuf,
    /// Why it was left, for the message: the error or the rule that kept it.
    pub why: String,
}

/// What a removal did.
#[derive(Debug, Default)]
pub struct Removal {
    /// Entries removed (files, symlinks, folders).
    pub removed: u64,
    /// Entries left, each with its reason; the folders above them stay too.
    pub left: Vec<Left>,
}

impl Removal {
    /// Whether the whole tree went.
    pub fn complete(&self) -> bool {
        self.left.is_empty()
    }

    /// "A: why; B: why" (the first few, and how many more).
    pub fn describe_left(&self) -> String {
        let mut parts: Vec<String> =
            self.left.iter().take(5).map(|l| format!("{}: {}", l.path.display(), l.why)).collect();
        if self.left.len() > 5 {
            parts.push(format!("and {} more", self.left.len() - 5));
        }
        parts.join("; ")
    }

    fn leave(&mut self, path: PathBuf, why: impl Into<String>) {
        self.left.push(Left { path, why: why.into() });
    }
}

/// The mount a tree lies on.
#[derive(Debug, Clone, Copy)]
struct MountOf {
    /// None: the kernel gives no mount id (before Linux 5.8).
    id: Option<u64>,
    dev: (u32, u32),
}

impl MountOf {
    fn of(st: &Statx) -> MountOf {
        let id = StatxFlags::from_bits_retain(st.stx_mask).contains(StatxFlags::MNT_ID).then_some(st.stx_mnt_id);
        MountOf { id, dev: (st.stx_dev_major, st.stx_dev_minor) }
    }

    /// Why `st` is not on this mount, or None if it is.
    fn crossed_by(&self, st: &Statx) -> Option<String> {
        let there = MountOf::of(st);
        let root = st.stx_attributes_mask.contains(StatxAttributes::MOUNT_ROOT)
            && st.stx_attributes.contains(StatxAttributes::MOUNT_ROOT);
        match (self.id, there.id) {
            (Some(here), Some(other)) if here != other || root => Some(format!(
                "a mount point (another file system, or a bind mount; mount id {other}, the tree's {here}): not \
                 entered, left as it is"
            )),
            (Some(_), Some(_)) => None,
            _ if there.dev != self.dev || root => Some(format!(
                "a mount point (device {}:{}, the tree's {}:{}): not entered, left as it is",
                there.dev.0, there.dev.1, self.dev.0, self.dev.1
            )),
            _ => None,
        }
    }
}

const WANTED: StatxFlags = StatxFlags::TYPE.union(StatxFlags::MNT_ID);

fn stat_at(dir: impl AsFd, name: &OsStr) -> rustix::io::Result<Statx> {
    rustix::fs::statx(dir, name, AtFlags::SYMLINK_NOFOLLOW | AtFlags::NO_AUTOMOUNT, WANTED)
}

fn stat_fd(fd: impl AsFd) -> rustix::io::Result<Statx> {
    rustix::fs::statx(fd, "", AtFlags::EMPTY_PATH, WANTED)
}

fn is_dir(st: &Statx) -> bool {
    rustix::fs::FileType::from_raw_mode(st.stx_mode.into()) == rustix::fs::FileType::Directory
}

fn open_dir(at: impl AsFd, name: &OsStr) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(at, name, OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
}

/// Removes the folder `name` in `parent` and everything below it, never following a symlink
/// and never crossing into another mount. `last` (a file directly in the folder: a working
/// folder's marker) is removed after everything else, and only if everything else went, so a
/// folder only partly removed still carries it. Err only when the folder cannot be reached at
/// all (it is gone, or is not a folder); what could not be removed below it is in
/// [`Removal::left`].
pub fn remove_tree(parent: &Path, name: &OsStr, last: Option<&OsStr>) -> std::io::Result<Removal> {
    let root_path = parent.join(name);
    let mut removal = Removal::default();
    let parent_fd = rustix::fs::open(parent, OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?;
    let mount = MountOf::of(&stat_fd(&parent_fd)?);
    let st = stat_at(&parent_fd, name)?;
    if !is_dir(&st) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            format!("{} is not a folder (nor followed, if a symlink)", root_path.display()),
        ));
    }
    if let Some(why) = mount.crossed_by(&st) {
        removal.leave(root_path, why);
        return Ok(removal);
    }
    let root = open_dir(&parent_fd, name)?;
    // Looked at again through the handle: a mount placed there since is not entered.
    if let Some(why) = mount.crossed_by(&stat_fd(&root)?) {
        removal.leave(root_path, why);
        return Ok(removal);
    }
    if !empty(&root, mount, &root_path, last, 0, &mut removal) {
        return Ok(removal);
    }
    if let Some(last) = last {
        match rustix::fs::unlinkat(&root, last, AtFlags::empty()) {
            Ok(()) => removal.removed += 1,
            Err(Errno::NOENT) => {}
            Err(e) => {
                removal.leave(root_path.join(last), e.to_string());
                return Ok(removal);
            }
        }
    }
    drop(root);
    match rustix::fs::unlinkat(&parent_fd, name, AtFlags::REMOVEDIR) {
        Ok(()) => removal.removed += 1,
        Err(Errno::NOENT) => {}
        Err(e) => removal.leave(root_path, e.to_string()),
    }
    Ok(removal)
}

/// Removes everything in the folder `dir` (at `path`) but `spare`; true if all of it went.
fn empty(
    dir: &OwnedFd,
    mount: MountOf,
    path: &Path,
    spare: Option<&OsStr>,
    depth: usize,
    removal: &mut Removal,
) -> bool {
    let names = match list(dir) {
        Ok(names) => names,
        Err(e) => {
            removal.leave(path.to_path_buf(), format!("cannot list it: {e}"));
            return false;
        }
    };
    let mut all = true;
    for (name, kind) in names {
        let name = OsStr::from_bytes(name.as_bytes());
        if spare == Some(name) {
            continue;
        }
        let below = path.join(name);
        // What the listing names neither a folder nor unknown is unlinked without a stat, as rm
        // does (a stat per file was a third of the remover's system time on a million files):
        // unlink never crosses a mount, a file mounted over fails with EBUSY and is left, named.
        if kind != rustix::fs::FileType::Directory && kind != rustix::fs::FileType::Unknown {
            all &= unlink_entry(dir, name, below, removal);
            continue;
        }
        let st = match stat_at(dir, name) {
            Ok(st) => st,
            Err(Errno::NOENT) => continue,
            Err(e) => {
                removal.leave(below, e.to_string());
                all = false;
                continue;
            }
        };
        if let Some(why) = mount.crossed_by(&st) {
            removal.leave(below, why);
            all = false;
            continue;
        }
        if !is_dir(&st) {
            all &= unlink_entry(dir, name, below, removal);
            continue;
        }
        if depth + 1 >= MAX_DEPTH {
            removal.leave(below, format!("deeper than {MAX_DEPTH} nested folders: not entered"));
            all = false;
            continue;
        }
        let child = match open_dir(dir, name).and_then(|fd| stat_fd(&fd).map(|st| (fd, st))) {
            Ok((fd, st)) => match mount.crossed_by(&st) {
                None => fd,
                Some(why) => {
                    removal.leave(below, why);
                    all = false;
                    continue;
                }
            },
            Err(Errno::NOENT) => continue,
            Err(e) => {
                removal.leave(below, e.to_string());
                all = false;
                continue;
            }
        };
        if !empty(&child, mount, &below, None, depth + 1, removal) {
            all = false;
            continue;
        }
        drop(child);
        match rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR) {
            Ok(()) => removal.removed += 1,
            Err(Errno::NOENT) => {}
            Err(e) => {
                removal.leave(below, e.to_string());
                all = false;
            }
        }
    }
    all
}

/// Unlinks the file (or symlink, FIFO, ...) `name` in `dir`; false, with the reason kept, if it
/// stayed (a file mounted over: EBUSY).
fn unlink_entry(dir: &OwnedFd, name: &OsStr, below: PathBuf, removal: &mut Removal) -> bool {
    match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) => removal.removed += 1,
        Err(Errno::NOENT) => {}
        Err(Errno::BUSY) => {
            removal.leave(below, "a mount point (something is mounted over it): not removed");
            return false;
        }
        Err(e) => {
            removal.leave(below, e.to_string());
            return false;
        }
    }
    true
}

/// The names in a folder with the type the listing gives (`Unknown` where the file system
/// gives none), read whole first: entries are removed after.
fn list(dir: &OwnedFd) -> rustix::io::Result<Vec<(CString, rustix::fs::FileType)>> {
    let mut names = Vec::new();
    let mut entries = rustix::fs::Dir::read_from(dir)?;
    while let Some(entry) = entries.read() {
        let entry = entry?;
        let name = entry.file_name();
        if name != c"." && name != c".." {
            names.push((name.to_owned(), entry.file_type()));
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(root: &Path) {
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        std::fs::write(root.join("a/b/c/f"), b"x").unwrap();
        std::fs::write(root.join("a/g"), b"x").unwrap();
        std::fs::write(root.join(".marker"), b"m").unwrap();
    }

    #[test]
    fn a_tree_goes_whole_marker_last() {
        let dir = tempfile::tempdir().unwrap();
        tree(&dir.path().join("w"));
        let r = remove_tree(dir.path(), OsStr::new("w"), Some(OsStr::new(".marker"))).unwrap();
        assert!(r.complete(), "{r:?}");
        assert_eq!(r.removed, 7);
        assert!(!dir.path().join("w").exists());
    }

    #[test]
    fn a_symlink_is_removed_as_a_name_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("precious"), b"keep").unwrap();
        tree(&dir.path().join("w"));
        std::os::unix::fs::symlink(&outside, dir.path().join("w/a/link")).unwrap();
        let r = remove_tree(dir.path(), OsStr::new("w"), None).unwrap();
        assert!(r.complete(), "{r:?}");
        assert_eq!(std::fs::read(outside.join("precious")).unwrap(), b"keep");
        // The folder itself as a symlink: refused, not followed.
        std::os::unix::fs::symlink(&outside, dir.path().join("w2")).unwrap();
        assert!(remove_tree(dir.path(), OsStr::new("w2"), None).is_err());
        assert!(outside.join("precious").exists());
    }

    #[test]
    fn nothing_is_left_to_name_when_the_folder_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let e = remove_tree(dir.path(), OsStr::new("missing"), None).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn a_tree_deeper_than_the_bound_is_left_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        let mut deep = dir.path().join("w");
        for _ in 0..MAX_DEPTH + 2 {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        let r = remove_tree(dir.path(), OsStr::new("w"), None).unwrap();
        assert_eq!(r.left.len(), 1, "{r:?}");
        assert!(r.left[0].why.contains("deeper than 256 nested folders"), "{r:?}");
        assert!(dir.path().join("w").exists());
    }
}
