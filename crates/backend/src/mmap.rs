use crate::open::open_file;
use crate::{FileIo, OpenHow};
use iomatrix_core::BackendKind;
use rustix::mm::{mmap, msync, munmap, MapFlags, MsyncFlags, ProtFlags};
use std::ffi::c_void;
use std::fs::File;
use std::io;
use std::path::Path;

/// The file mapped shared into memory: reads and writes are `memcpy`, flush is
/// `msync(MS_SYNC)`. A new file is first sized to [`OpenHow::size`].
///
/// The mapping is only as safe as the file underneath it: if another process
/// truncates the file while it is mapped, touching the lost pages raises
/// SIGBUS. iomatrix maps only files inside its own working folder.
pub struct MmapFile {
    /// Taken by `close`, so the file is closed with its error checked.
    file: Option<File>,
    map: *mut c_void,
    len: usize,
}

// SAFETY: the mapping is owned by this value and only touched through &mut self.
unsafe impl Send for MmapFile {}

impl FileIo for MmapFile {
    const KIND: BackendKind = BackendKind::Mmap;

    fn open(path: &Path, how: &OpenHow) -> io::Result<Self> {
        let file = open_file(path, how)?;
        if how.create {
            file.set_len(how.size)?;
        }
        let len = usize::try_from(file.metadata()?.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "file too large to map"))?;
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "cannot map an empty file"));
        }
        let prot = if how.write { ProtFlags::READ | ProtFlags::WRITE } else { ProtFlags::READ };
        // SAFETY: a fresh mapping (no address hint) of a file we just opened;
        // it stays valid until munmap in Drop, and all access is bounds-checked
        // against `len` below.
        let map = unsafe { mmap(std::ptr::null_mut(), len, prot, MapFlags::SHARED, &file, 0) }?;
        Ok(MmapFile { file: Some(file), map, len })
    }

    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let start = self.range(offset, buf.len())?;
        // SAFETY: range() checked start..start+buf.len() lies inside the mapping.
        let src = unsafe { std::slice::from_raw_parts((self.map as *const u8).add(start), buf.len()) };
        buf.copy_from_slice(src);
        Ok(())
    }

    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        let start = self.range(offset, buf.len())?;
        // SAFETY: as in read_at; the mapping is writable whenever the file was
        // opened for writing (a read-only mapping faults, so check first).
        let dst = unsafe { std::slice::from_raw_parts_mut(self.map.cast::<u8>().add(start), buf.len()) };
        dst.copy_from_slice(buf);
        Ok(())
    }

    fn flush_to_storage(&mut self) -> io::Result<()> {
        // SAFETY: map/len describe our live mapping.
        unsafe { msync(self.map, self.len, MsyncFlags::SYNC) }?;
        Ok(())
    }

    fn close(mut self) -> io::Result<()> {
        let map = std::mem::replace(&mut self.map, std::ptr::null_mut());
        // SAFETY: unmapping our own live mapping once; Drop sees null and skips.
        unsafe { munmap(map, self.len) }?;
        match self.file.take() {
            Some(file) => crate::psync::close_checked(file),
            None => Ok(()),
        }
    }
}

impl MmapFile {
    fn range(&self, offset: u64, len: usize) -> io::Result<usize> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        match start.checked_add(len) {
            Some(end) if end <= self.len => Ok(start),
            _ => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("request {offset}+{len} beyond the mapped {} bytes", self.len),
            )),
        }
    }
}

impl Drop for MmapFile {
    fn drop(&mut self) {
        if !self.map.is_null() {
            // SAFETY: our live mapping, unmapped once.
            let _ = unsafe { munmap(self.map, self.len) };
        }
    }
}
