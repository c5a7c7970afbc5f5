use crate::open::open_file;
use crate::{FileIo, OpenHow};
use iomatrix_core::BackendKind;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// `read(2)`/`write(2)` on the file position; `lseek(2)` only when the next
/// request is not where the last one ended, as IOzone's default mode does.
pub struct SyncFile {
    file: File,
    pos: u64,
}

impl FileIo for SyncFile {
    const KIND: BackendKind = BackendKind::Sync;

    fn open(path: &Path, how: &OpenHow) -> io::Result<Self> {
        Ok(SyncFile { file: open_file(path, how)?, pos: 0 })
    }
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        if self.pos != offset {
            self.file.seek(SeekFrom::Start(offset))?;
        }
        // Keep the tracked position honest even when the read fails half-way.
        self.pos = u64::MAX;
        self.file.read_exact(buf)?;
        self.pos = offset + buf.len() as u64;
        Ok(())
    }
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        if self.pos != offset {
            self.file.seek(SeekFrom::Start(offset))?;
        }
        self.pos = u64::MAX;
        self.file.write_all(buf)?;
        self.pos = offset + buf.len() as u64;
        Ok(())
    }
    fn flush_to_storage(&mut self) -> io::Result<()> {
        self.file.sync_all()
    }
    fn close(self) -> io::Result<()> {
        crate::psync::close_checked(self.file)
    }
}
