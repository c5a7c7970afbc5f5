//! A file's state in the page cache: how much of it is cached ([`residency`]),
//! and dropping it from the cache ([`drop_cached`]), the two facts and the one
//! action that make a cell's starting state chosen and stated.

use iomatrix_core::figures::CachedAtStart;
use std::fs::File;
use std::io;
use std::path::Path;

/// Pages looked at per mapping: a 10 GiB file is looked at in 1 GiB windows,
/// so the answer vector stays at 256 KiB whatever the file's size.
const WINDOW: u64 = 1 << 30;

/// How much of the file at `path` is in the page cache now, by `mincore(2)`
/// over a mapping of it, window by window (opened read-only here: a mapping
/// needs a readable descriptor, and the caller's may be write-only). Nothing is read: mapping a file and
/// asking about its pages does not fault them in. The kernel answers for
/// file pages only to a process that could write the file (its owner, or
/// with write permission), which is every file iomatrix lays out.
pub fn residency(path: &Path) -> io::Result<CachedAtStart> {
    let file_bytes = std::fs::metadata(path)?.len();
    residency_within(path, file_bytes)
}

/// [`residency`] of the first `file_bytes` bytes of `path`: a block device's working set
/// (its metadata says 0 bytes).
pub fn residency_within(path: &Path, file_bytes: u64) -> io::Result<CachedAtStart> {
    residency_of(&File::open(path)?, file_bytes)
}

/// [`residency_within`] of a file already open for reading (a walk's own descriptor, opened
/// without following a symlink). Where the kernel does not answer for the file's pages
/// ([`residency_answered`] false) it reports every page cached: ask that first.
pub fn residency_of(file: &File, file_bytes: u64) -> io::Result<CachedAtStart> {
    let page = rustix::param::page_size() as u64;
    let mut cached_pages = 0u64;
    let mut at = 0u64;
    let mut answer = Vec::new();
    while at < file_bytes {
        let len = (file_bytes - at).min(WINDOW);
        let pages = len.div_ceil(page) as usize;
        answer.clear();
        answer.resize(pages, 0u8);
        // SAFETY: a fresh shared mapping without access rights (PROT_NONE) of
        // `len` bytes at page-aligned offset `at` (a multiple of WINDOW) of a
        // file we hold open; nothing ever reads or writes through it; it is
        // unmapped below before the next window, whatever mincore answers.
        unsafe {
            let map = rustix::mm::mmap(
                std::ptr::null_mut(),
                len as usize,
                rustix::mm::ProtFlags::empty(),
                rustix::mm::MapFlags::SHARED,
                file,
                at,
            )?;
            // SAFETY (mincore): `answer` holds one byte per page of the mapping.
            let rc = libc::mincore(map, len as usize, answer.as_mut_ptr());
            let err = io::Error::last_os_error();
            rustix::mm::munmap(map, len as usize)?;
            if rc != 0 {
                return Err(err);
            }
        }
        cached_pages += answer.iter().filter(|b| **b & 1 == 1).count() as u64;
        at += len;
    }
    // mincore counts whole pages: the last one may pass the end of the file.
    Ok(CachedAtStart { cached_bytes: (cached_pages * page).min(file_bytes), file_bytes })
}

/// Whether `mincore(2)` tells this process the truth about the pages of the file at `path`
/// (`meta`, its metadata): Linux answers for a file's pages only to its owner, to a process with
/// CAP_FOWNER (root, taken here as an effective uid of 0), or to one that may write it; to any
/// other it reports every page cached, which would read as a full cache.
pub fn residency_answered(path: &Path, meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let me = rustix::process::geteuid();
    me.is_root()
        || meta.uid() == me.as_raw()
        || rustix::fs::accessat(rustix::fs::CWD, path, rustix::fs::Access::WRITE_OK, rustix::fs::AtFlags::EACCESS)
            .is_ok()
}

/// Drops `file` from the page cache as fio does before a job: its dirty
/// pages written and made durable first (`fdatasync`, since the kernel drops
/// only clean pages), then `posix_fadvise(DONTNEED)` over the whole file.
/// Pages another process has mapped or is using may stay; [`residency`] says
/// what did.
pub fn drop_cached(file: &File) -> io::Result<()> {
    file.sync_data()?;
    rustix::fs::fadvise(file, 0, None, rustix::fs::Advice::DontNeed)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_written_file_is_cached_and_dropping_it_empties_the_cache_of_it() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let path = dir.path().join("f");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![7u8; 8 << 20]).unwrap();
        let written = residency(&path).unwrap();
        assert_eq!(written.file_bytes, 8 << 20);
        assert!(written.percent() > 99.0, "a file just written is cached: {written:?}");
        drop_cached(&f).unwrap();
        // /var/tmp is on a disk file system here (tmpfs would keep its pages whatever the advice).
        let dropped = residency(&path).unwrap();
        assert!(dropped.percent() < 1.0, "dropped: {dropped:?}");
    }

    /// A page another process keeps mapped stays cached after the drop, and the count says so:
    /// what a cold walk must report rather than claim the storage answered.
    #[test]
    fn pages_mapped_elsewhere_stay_cached_and_are_counted() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let path = dir.path().join("f");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![7u8; 4 << 20]).unwrap();
        f.sync_data().unwrap();
        let reader = File::open(&path).unwrap();
        // SAFETY: a shared read-only mapping of 4 MiB of a file we hold open; only read below,
        // and unmapped before the test ends.
        let map = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                4 << 20,
                rustix::mm::ProtFlags::READ,
                rustix::mm::MapFlags::SHARED,
                &reader,
                0,
            )
            .unwrap()
        };
        // SAFETY: every read is inside the mapping; touching each page faults it in and maps it.
        let touched: u64 =
            (0..(4 << 20)).step_by(4096).map(|at| u64::from(unsafe { *(map as *const u8).add(at) })).sum();
        assert_eq!(touched, 7 * 1024);
        drop_cached(&f).unwrap();
        assert!(residency_answered(&path, &std::fs::metadata(&path).unwrap()));
        let held = residency_of(&reader, 4 << 20).unwrap();
        // SAFETY: the mapping made above, not used after this.
        unsafe { rustix::mm::munmap(map, 4 << 20).unwrap() };
        assert!(held.percent() > 99.0, "mapped pages stay cached after the drop: {held:?}");
    }

    #[test]
    fn an_empty_file_has_nothing_cached() {
        let f = tempfile::NamedTempFile::new().unwrap();
        assert_eq!(residency(f.path()).unwrap(), CachedAtStart { cached_bytes: 0, file_bytes: 0 });
    }
}
