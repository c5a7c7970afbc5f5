use crate::open::open_file;
use crate::{FileIo, OpenHow};
use iomatrix_core::BackendKind;
use std::fs::File;
use std::io;
use std::os::fd::IntoRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// `pread(2)`/`pwrite(2)` at explicit offsets: no seeks at all.
pub struct PsyncFile {
    file: File,
}

impl FileIo for PsyncFile {
    const KIND: BackendKind = BackendKind::Psync;

    fn open(path: &Path, how: &OpenHow) -> io::Result<Self> {
        Ok(PsyncFile { file: open_file(path, how)? })
    }
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.file.write_all_at(buf, offset)
    }
    fn flush_to_storage(&mut self) -> io::Result<()> {
        self.file.sync_all()
    }
    fn close(self) -> io::Result<()> {
        close_checked(self.file)
    }
}

/// `close(2)` with its error reported: NFS and full disks report write
/// errors there, and `File`'s drop would swallow them.
pub(crate) fn close_checked(file: File) -> io::Result<()> {
    let fd = file.into_raw_fd();
    // SAFETY: we own fd (taken out of the File) and close it exactly once.
    let rc = unsafe { libc::close(fd) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
