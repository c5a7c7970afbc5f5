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
    let file = &File::open(path)?;
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

    #[test]
    fn an_empty_file_has_nothing_cached() {
        let f = tempfile::NamedTempFile::new().unwrap();
        assert_eq!(residency(f.path()).unwrap(), CachedAtStart { cached_bytes: 0, file_bytes: 0 });
    }
}
