use crate::open::open_file;
use crate::{FileIo, OpenHow};
use iomatrix_core::BackendKind;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Buffered library I/O in user space, the way C's stdio works: writes
/// collect in a buffer, reads are served from one, a seek or a change of
/// direction flushes. The buffer is [`StdioFile::BUFFER`] bytes, as glibc's
/// (one file system block, 4 KiB on most).
pub struct StdioFile {
    stream: Stream,
    pos: u64,
}

enum Stream {
    Reading(BufReader<File>),
    Writing(BufWriter<File>),
    /// Only between a failed direction change and drop.
    Broken,
}

impl StdioFile {
    /// The user-space buffer's size (bytes): glibc's for a file on most file systems (one block).
    pub const BUFFER: usize = 4096;

    fn reader(&mut self) -> io::Result<&mut BufReader<File>> {
        if let Stream::Writing(_) = self.stream {
            let Stream::Writing(w) = std::mem::replace(&mut self.stream, Stream::Broken) else { unreachable!() };
            let file = w.into_inner().map_err(|e| e.into_error())?;
            self.stream = Stream::Reading(BufReader::with_capacity(Self::BUFFER, file));
        }
        match &mut self.stream {
            Stream::Reading(r) => Ok(r),
            _ => Err(io::Error::other("stdio stream lost after a failed flush")),
        }
    }

    fn writer(&mut self) -> io::Result<&mut BufWriter<File>> {
        if let Stream::Reading(_) = self.stream {
            let Stream::Reading(r) = std::mem::replace(&mut self.stream, Stream::Broken) else { unreachable!() };
            // Data read ahead is dropped; put the kernel's position where the caller is.
            let mut file = r.into_inner();
            file.seek(SeekFrom::Start(self.pos))?;
            self.stream = Stream::Writing(BufWriter::with_capacity(Self::BUFFER, file));
        }
        match &mut self.stream {
            Stream::Writing(w) => Ok(w),
            _ => Err(io::Error::other("stdio stream lost after a failed flush")),
        }
    }
}

impl FileIo for StdioFile {
    const KIND: BackendKind = BackendKind::Stdio;

    fn open(path: &Path, how: &OpenHow) -> io::Result<Self> {
        let file = open_file(path, how)?;
        let stream = if how.write {
            Stream::Writing(BufWriter::with_capacity(Self::BUFFER, file))
        } else {
            Stream::Reading(BufReader::with_capacity(Self::BUFFER, file))
        };
        Ok(StdioFile { stream, pos: 0 })
    }

    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let pos = self.pos;
        let r = self.reader()?;
        if pos != offset {
            r.seek(SeekFrom::Start(offset))?;
        }
        let result = r.read_exact(buf);
        // After a failure the position is unknown: force a seek next time.
        self.pos = if result.is_ok() { offset + buf.len() as u64 } else { u64::MAX };
        result
    }

    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        let pos = self.pos;
        let w = self.writer()?;
        if pos != offset {
            w.seek(SeekFrom::Start(offset))?;
        }
        let result = w.write_all(buf);
        self.pos = if result.is_ok() { offset + buf.len() as u64 } else { u64::MAX };
        result
    }

    fn flush_to_storage(&mut self) -> io::Result<()> {
        match &mut self.stream {
            Stream::Writing(w) => {
                w.flush()?;
                w.get_ref().sync_all()
            }
            Stream::Reading(r) => r.get_ref().sync_all(),
            Stream::Broken => Err(io::Error::other("stdio stream lost after a failed flush")),
        }
    }

    fn close(self) -> io::Result<()> {
        let file = match self.stream {
            Stream::Writing(w) => w.into_inner().map_err(|e| e.into_error())?,
            Stream::Reading(r) => r.into_inner(),
            Stream::Broken => return Err(io::Error::other("stdio stream lost after a failed flush")),
        };
        crate::psync::close_checked(file)
    }
}
