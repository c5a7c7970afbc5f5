use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Alignment of buffers, offsets and lengths under O_DIRECT. 4096 satisfies
/// every logical block size in common use (512 and 4096).
pub const DIRECT_ALIGN: usize = 4096;

/// How a suite wants a file opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenHow {
    /// Create the file anew (truncating an old one); otherwise it must exist.
    pub create: bool,
    /// Whether the file will be written (read-only otherwise).
    pub write: bool,
    /// O_DIRECT: bypass the page cache.
    pub direct: bool,
    /// The file's size: mmap maps this much and sizes a new file to it.
    pub size: u64,
}

impl OpenHow {
    /// Create the file anew for writing, `size` bytes, with O_DIRECT when `direct`.
    pub fn create(size: u64, direct: bool) -> Self {
        OpenHow { create: true, write: true, direct, size }
    }
    /// Open an existing file of `size` bytes for reading only.
    pub fn read(size: u64, direct: bool) -> Self {
        OpenHow { create: false, write: false, direct, size }
    }
    /// Open an existing file of `size` bytes to write it again (rewrite, random write).
    pub fn update(size: u64, direct: bool) -> Self {
        OpenHow { create: false, write: true, direct, size }
    }
}

pub(crate) fn open_file(path: &Path, how: &OpenHow) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true);
    if how.write {
        o.write(true);
    }
    if how.create {
        o.create(true).truncate(true);
    }
    if how.direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.mode(0o600);
    o.open(path)
}

/// Creates `dir/name`, writes one aligned block through O_DIRECT and removes
/// the file again. An error means the file system refuses O_DIRECT (EINVAL on
/// open or write) or the folder is not writable; the caller tells which.
pub fn probe_direct(dir: &Path) -> io::Result<()> {
    let path = dir.join(".iomatrix-direct-probe");
    let result = (|| {
        let mut f = open_file(&path, &OpenHow::create(DIRECT_ALIGN as u64, true))?;
        let buf = crate::AlignedBuf::new(DIRECT_ALIGN);
        f.write_all(buf.as_slice())?;
        f.sync_all()
    })();
    let _ = std::fs::remove_file(&path);
    result
}
