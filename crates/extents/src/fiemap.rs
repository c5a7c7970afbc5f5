//! The FS_IOC_FIEMAP ioctl (linux/fiemap.h, Documentation/filesystems/fiemap.rst).

use crate::count::{FileExtents, FilefragCounter};
use crate::extent::{Extent, FIEMAP_EXTENT_LAST};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Write the file's dirty data out before mapping it (`filefrag -s`).
pub const FIEMAP_FLAG_SYNC: u32 = 0x0000_0001;

/// Extents asked for per ioctl: the number that fits `filefrag`'s 16 KiB buffer.
pub const BATCH: usize = 292;

/// `struct fiemap` without its trailing array.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct FiemapHeader {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
}

/// `struct fiemap_extent`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct FiemapExtent {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

/// `struct fiemap` with room for [`BATCH`] extents, laid out as the kernel reads it.
#[repr(C)]
struct FiemapRequest {
    header: FiemapHeader,
    extents: [FiemapExtent; BATCH],
}

const _: () = assert!(std::mem::size_of::<FiemapHeader>() == 32);
const _: () = assert!(std::mem::size_of::<FiemapExtent>() == 56);
const _: () = assert!(std::mem::size_of::<FiemapRequest>() == 32 + 56 * BATCH);

/// `_IOWR('f', 11, struct fiemap)`: direction read|write, the header's size, type 'f', number 11.
pub const FS_IOC_FIEMAP: u32 =
    (3 << 30) | ((std::mem::size_of::<FiemapHeader>() as u32) << 16) | ((b'f' as u32) << 8) | 0x0B;
const _: () = assert!(FS_IOC_FIEMAP == 0xC020_660B);

/// Why a file could not be mapped.
#[derive(Debug, thiserror::Error)]
pub enum FiemapError {
    /// The file system has no FIEMAP (the raw errno: EOPNOTSUPP, ENOTTY, EINVAL or ENOSYS).
    #[error("the file system has no FIEMAP ({})", self.errno_name())]
    NotSupported(i32),
    /// FIEMAP exists but failed, or the file could not be opened.
    #[error("FIEMAP failed: {0}")]
    Failed(io::Error),
}

impl FiemapError {
    fn from_errno(errno: i32) -> FiemapError {
        match errno {
            libc::EOPNOTSUPP | libc::ENOTTY | libc::EINVAL | libc::ENOSYS => FiemapError::NotSupported(errno),
            _ => FiemapError::Failed(io::Error::from_raw_os_error(errno)),
        }
    }

    /// Whether the file system does not offer FIEMAP (a fact to report), not a failure.
    pub fn is_not_supported(&self) -> bool {
        matches!(self, FiemapError::NotSupported(_))
    }

    /// The errno's symbolic name for [`FiemapError::NotSupported`].
    pub fn errno_name(&self) -> &'static str {
        match self {
            FiemapError::NotSupported(libc::EOPNOTSUPP) => "EOPNOTSUPP",
            FiemapError::NotSupported(libc::ENOTTY) => "ENOTTY",
            FiemapError::NotSupported(libc::EINVAL) => "EINVAL",
            FiemapError::NotSupported(libc::ENOSYS) => "ENOSYS",
            _ => "",
        }
    }
}

/// A reusable FIEMAP request (16 KiB, on the heap).
pub struct Fiemap {
    req: Box<FiemapRequest>,
    sync: bool,
}

impl Default for Fiemap {
    fn default() -> Self {
        Fiemap::new()
    }
}

impl Fiemap {
    /// A request without FIEMAP_FLAG_SYNC: extents as the file system holds them now.
    pub fn new() -> Fiemap {
        Fiemap {
            req: Box::new(FiemapRequest { header: FiemapHeader::default(), extents: [FiemapExtent::default(); BATCH] }),
            sync: false,
        }
    }

    /// Ask the kernel to write the file's dirty data out before mapping (FIEMAP_FLAG_SYNC).
    #[must_use]
    pub fn with_sync(mut self, sync: bool) -> Fiemap {
        self.sync = sync;
        self
    }

    /// Hands every extent of the open file `fd` to `each`, in logical order,
    /// asking for [`BATCH`] at a time from where the last batch ended, until
    /// the kernel marks an extent LAST or returns none.
    pub fn map(&mut self, fd: BorrowedFd<'_>, each: &mut dyn FnMut(&Extent)) -> Result<(), FiemapError> {
        let mut start = 0u64;
        loop {
            self.req.header = FiemapHeader {
                fm_start: start,
                fm_length: u64::MAX,
                fm_flags: if self.sync { FIEMAP_FLAG_SYNC } else { 0 },
                fm_mapped_extents: 0,
                fm_extent_count: BATCH as u32,
                fm_reserved: 0,
            };
            let ptr: *mut FiemapRequest = &mut *self.req;
            // SAFETY: `fd` is an open descriptor borrowed for this call.
            // `ptr` points to a live, exclusively borrowed `FiemapRequest`,
            // `#[repr(C)]` with the layout of `struct fiemap` followed by
            // `fm_extent_count` (= BATCH) `struct fiemap_extent` (sizes checked
            // at compile time above). The kernel reads the header and writes
            // at most `fm_extent_count` extents into that array, and nothing
            // keeps the pointer after the call.
            let rc = unsafe { libc::ioctl(fd.as_raw_fd(), FS_IOC_FIEMAP.into(), ptr) };
            if rc < 0 {
                let err = io::Error::last_os_error();
                if err.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(FiemapError::from_errno(err.raw_os_error().unwrap_or(libc::EIO)));
            }
            let mapped = (self.req.header.fm_mapped_extents as usize).min(BATCH);
            if mapped == 0 {
                return Ok(());
            }
            let mut last = false;
            for raw in &self.req.extents[..mapped] {
                let e = Extent {
                    logical: raw.fe_logical,
                    physical: raw.fe_physical,
                    length: raw.fe_length,
                    flags: raw.fe_flags,
                };
                each(&e);
                last |= e.flags & FIEMAP_EXTENT_LAST != 0;
            }
            if last {
                return Ok(());
            }
            let end = &self.req.extents[mapped - 1];
            let next = end.fe_logical.saturating_add(end.fe_length);
            // A file system that does not move on would loop for ever.
            if next <= start {
                return Ok(());
            }
            start = next;
        }
    }

    /// The extents of the open file `fd`, counted as `filefrag` counts them.
    pub fn count(&mut self, fd: BorrowedFd<'_>) -> Result<FileExtents, FiemapError> {
        let mut counter = FilefragCounter::new();
        self.map(fd, &mut |e| counter.push(e))?;
        Ok(counter.finish())
    }
}

/// Opens `path` (read-only, no symlink followed, without changing its
/// access time where allowed) and counts its extents. Only regular files:
/// anything else is [`FiemapError::Failed`] with `InvalidInput`.
pub fn count_path(fiemap: &mut Fiemap, path: &Path) -> Result<FileExtents, FiemapError> {
    let file = open_for_map(path).map_err(FiemapError::Failed)?;
    let kind = file.metadata().map_err(FiemapError::Failed)?.file_type();
    if !kind.is_file() || kind.is_fifo() {
        return Err(FiemapError::Failed(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file")));
    }
    use std::os::fd::AsFd;
    fiemap.count(file.as_fd())
}

fn open_for_map(path: &Path) -> io::Result<File> {
    // O_NONBLOCK: a FIFO put in the file's place between the caller's stat and this open must not hang.
    let base = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    match std::fs::OpenOptions::new().read(true).custom_flags(base | libc::O_NOATIME).open(path) {
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => {
            std::fs::OpenOptions::new().read(true).custom_flags(base).open(path)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_request_matches_the_kernels_layout() {
        assert_eq!(std::mem::offset_of!(FiemapHeader, fm_extent_count), 24);
        assert_eq!(std::mem::offset_of!(FiemapExtent, fe_flags), 40);
        assert_eq!(std::mem::offset_of!(FiemapRequest, extents), 32);
        assert!(std::mem::size_of::<FiemapRequest>() <= 16384, "filefrag's buffer size");
    }

    #[test]
    fn not_supported_is_told_apart_from_failures() {
        for errno in [libc::EOPNOTSUPP, libc::ENOTTY, libc::EINVAL, libc::ENOSYS] {
            assert!(FiemapError::from_errno(errno).is_not_supported(), "{errno}");
        }
        for errno in [libc::EIO, libc::EBADR, libc::ENOMEM] {
            assert!(!FiemapError::from_errno(errno).is_not_supported(), "{errno}");
        }
        assert!(FiemapError::from_errno(libc::EOPNOTSUPP).to_string().contains("no FIEMAP"));
    }

    /// Wherever the temporary folder is: a file system with FIEMAP gives a
    /// count, one without says so; either way, no other error.
    #[test]
    fn a_written_file_maps_or_says_there_is_no_fiemap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![7u8; 256 * 1024]).unwrap();
        f.sync_all().unwrap();
        let mut fm = Fiemap::new();
        match count_path(&mut fm, &path) {
            Ok(r) => assert!(r.extents >= 1 && r.fiemap_extents >= r.extents, "{r:?}"),
            Err(e) => assert!(e.is_not_supported(), "{e}"),
        }
        let empty = dir.path().join("empty");
        File::create(&empty).unwrap();
        match count_path(&mut fm.with_sync(true), &empty) {
            Ok(r) => assert_eq!(r.extents, 0),
            Err(e) => assert!(e.is_not_supported(), "{e}"),
        }
    }

    #[test]
    fn only_regular_files_are_mapped() {
        let dir = tempfile::tempdir().unwrap();
        let err = count_path(&mut Fiemap::new(), dir.path()).unwrap_err();
        assert!(matches!(err, FiemapError::Failed(ref e) if e.kind() == io::ErrorKind::InvalidInput), "{err}");
        let missing = count_path(&mut Fiemap::new(), &dir.path().join("missing")).unwrap_err();
        assert!(matches!(missing, FiemapError::Failed(ref e) if e.kind() == io::ErrorKind::NotFound));
    }
}
