//! The seam between the runner and a file system: the few operations mdtest's phases call,
//! on local paths by system calls ([`LocalFs`]) or on a server through iomatrix's own NFS or
//! SMB client ([`RemoteMetaFs`]). A path is written once per item into a reused
//! [`ItemPath`]; no operation allocates.

use iomatrix_backend::RemoteFs;
use rustix::fs::{Mode, OFlags};
use std::ffi::CStr;
use std::io;

/// A path written into a reused buffer, kept with a trailing NUL for the system calls.
#[derive(Debug, Default)]
pub struct ItemPath {
    text: String,
    with_nul: Vec<u8>,
}

impl ItemPath {
    /// Room for paths of `n` bytes before the buffer grows.
    pub fn with_capacity(n: usize) -> ItemPath {
        ItemPath { text: String::with_capacity(n), with_nul: Vec::with_capacity(n + 1) }
    }

    /// Sets the path with `write`, which gets the cleared text buffer.
    pub fn set(&mut self, write: impl FnOnce(&mut String)) {
        write(&mut self.text);
        self.with_nul.clear();
        self.with_nul.extend_from_slice(self.text.as_bytes());
        self.with_nul.push(0);
    }

    /// The path as text.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The path for a system call; a path with a NUL inside is refused as invalid input.
    pub fn as_cstr(&self) -> io::Result<&CStr> {
        CStr::from_bytes_with_nul(&self.with_nul).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
    }
}

/// The operations of mdtest's phases, each one request.
pub trait MetaFs {
    /// mkdir (mode 0775, mdtest's DIRMODE).
    fn mkdir(&mut self, path: &ItemPath) -> io::Result<()>;
    /// rmdir of an empty folder.
    fn rmdir(&mut self, path: &ItemPath) -> io::Result<()>;
    /// stat.
    fn stat(&mut self, path: &ItemPath) -> io::Result<()>;
    /// rename, replacing `to`.
    fn rename(&mut self, from: &ItemPath, to: &ItemPath) -> io::Result<()>;
    /// The folder's entries, counted (without `.` and `..`).
    fn readdir(&mut self, path: &ItemPath) -> io::Result<u64>;
    /// create (O_CREAT|O_RDWR, 0664, as mdtest's POSIX backend), `data` written, fsync when
    /// asked, close.
    fn create(&mut self, path: &ItemPath, data: &[u8], fsync: bool) -> io::Result<()>;
    /// open read-only, `buf.len()` bytes read (fewer is an error, as mdtest counts it), close.
    fn read(&mut self, path: &ItemPath, buf: &mut [u8]) -> io::Result<()>;
    /// unlink.
    fn unlink(&mut self, path: &ItemPath) -> io::Result<()>;
    /// Makes the file system's writes durable (mdtest -Y): syncfs of the folder's file system.
    fn sync(&mut self, folder: &ItemPath) -> io::Result<()>;
}

/// Local paths, by system calls.
#[derive(Debug, Default)]
pub struct LocalFs;

const DIR_MODE: u32 = 0o775;
const FILE_MODE: u32 = 0o664;

impl MetaFs for LocalFs {
    fn mkdir(&mut self, path: &ItemPath) -> io::Result<()> {
        Ok(rustix::fs::mkdir(path.as_cstr()?, Mode::from_raw_mode(DIR_MODE))?)
    }

    fn rmdir(&mut self, path: &ItemPath) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(rustix::fs::CWD, path.as_cstr()?, rustix::fs::AtFlags::REMOVEDIR)?)
    }

    fn stat(&mut self, path: &ItemPath) -> io::Result<()> {
        rustix::fs::stat(path.as_cstr()?)?;
        Ok(())
    }

    fn rename(&mut self, from: &ItemPath, to: &ItemPath) -> io::Result<()> {
        Ok(rustix::fs::rename(from.as_cstr()?, to.as_cstr()?)?)
    }

    fn readdir(&mut self, path: &ItemPath) -> io::Result<u64> {
        let fd =
            rustix::fs::open(path.as_cstr()?, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
        let mut dir = rustix::fs::Dir::read_from(&fd)?;
        let mut n = 0;
        while let Some(entry) = dir.read() {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                n += 1;
            }
        }
        Ok(n)
    }

    fn create(&mut self, path: &ItemPath, data: &[u8], fsync: bool) -> io::Result<()> {
        let fd = rustix::fs::open(
            path.as_cstr()?,
            OFlags::CREATE | OFlags::RDWR | OFlags::CLOEXEC,
            Mode::from_raw_mode(FILE_MODE),
        )?;
        let mut rest = data;
        while !rest.is_empty() {
            let n = rustix::io::write(&fd, rest)?;
            if n == 0 {
                return Err(io::Error::from(io::ErrorKind::WriteZero));
            }
            rest = &rest[n..];
        }
        if fsync {
            rustix::fs::fsync(&fd)?;
        }
        close(fd)
    }

    fn read(&mut self, path: &ItemPath, buf: &mut [u8]) -> io::Result<()> {
        let fd = rustix::fs::open(path.as_cstr()?, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?;
        let mut done = 0;
        while done < buf.len() {
            let n = rustix::io::read(&fd, &mut buf[done..])?;
            if n == 0 {
                return Err(io::Error::from(io::ErrorKind::UnexpectedEof));
            }
            done += n;
        }
        close(fd)
    }

    fn unlink(&mut self, path: &ItemPath) -> io::Result<()> {
        Ok(rustix::fs::unlink(path.as_cstr()?)?)
    }

    fn sync(&mut self, folder: &ItemPath) -> io::Result<()> {
        let fd =
            rustix::fs::open(folder.as_cstr()?, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
        Ok(rustix::fs::syncfs(&fd)?)
    }
}

/// Closes `fd` and reports close's error (an NFS mount reports a failed write-back there).
fn close(fd: rustix::fd::OwnedFd) -> io::Result<()> {
    use rustix::fd::IntoRawFd;
    let raw = fd.into_raw_fd();
    // SAFETY: `raw` came from an OwnedFd given up just above: this is its only close.
    if unsafe { libc::close(raw) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Paths on a server (relative to the target's folder), through iomatrix's own protocol client:
/// one session per client.
pub struct RemoteMetaFs {
    fs: Box<dyn RemoteFs>,
}

impl RemoteMetaFs {
    /// Works through the session `fs`.
    pub fn new(fs: Box<dyn RemoteFs>) -> RemoteMetaFs {
        RemoteMetaFs { fs }
    }
}

impl MetaFs for RemoteMetaFs {
    fn mkdir(&mut self, path: &ItemPath) -> io::Result<()> {
        self.fs.mkdir(path.as_str())
    }

    fn rmdir(&mut self, path: &ItemPath) -> io::Result<()> {
        self.fs.rmdir(path.as_str())
    }

    fn stat(&mut self, path: &ItemPath) -> io::Result<()> {
        self.fs.stat(path.as_str()).map(|_| ())
    }

    fn rename(&mut self, from: &ItemPath, to: &ItemPath) -> io::Result<()> {
        self.fs.rename(from.as_str(), to.as_str())
    }

    fn readdir(&mut self, path: &ItemPath) -> io::Result<u64> {
        self.fs.read_dir(path.as_str()).map(|entries| entries.len() as u64)
    }

    fn create(&mut self, path: &ItemPath, data: &[u8], fsync: bool) -> io::Result<()> {
        let file = self.fs.create(path.as_str())?;
        let written = if data.is_empty() { Ok(()) } else { self.fs.write_at(file, data, 0) };
        let flushed = written.and_then(|()| if fsync { self.fs.flush(file) } else { Ok(()) });
        let closed = self.fs.close(file);
        flushed.and(closed)
    }

    fn read(&mut self, path: &ItemPath, buf: &mut [u8]) -> io::Result<()> {
        let file = self.fs.open_read(path.as_str())?;
        let read = if buf.is_empty() { Ok(()) } else { self.fs.read_at(file, buf, 0) };
        let closed = self.fs.close(file);
        read.and(closed)
    }

    fn unlink(&mut self, path: &ItemPath) -> io::Result<()> {
        self.fs.remove(path.as_str())
    }

    /// Nothing to sync: the protocol client keeps no cache; every write was sent.
    fn sync(&mut self, _folder: &ItemPath) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &std::path::Path) -> ItemPath {
        let mut out = ItemPath::default();
        out.set(|t| {
            t.clear();
            t.push_str(p.to_str().unwrap());
        });
        out
    }

    #[test]
    fn every_local_operation_does_what_mdtest_calls() {
        let tmp = tempfile::tempdir().unwrap();
        let mut fs = LocalFs;
        let dir = path(&tmp.path().join("d"));
        fs.mkdir(&dir).unwrap();
        let file = path(&tmp.path().join("d/f"));
        fs.create(&file, b"hello", true).unwrap();
        let mut buf = [0u8; 5];
        fs.read(&file, &mut buf).unwrap();
        assert_eq!(&buf, b"hello");
        let mut long = [0u8; 6];
        assert_eq!(fs.read(&file, &mut long).unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        fs.stat(&file).unwrap();
        assert_eq!(fs.readdir(&dir).unwrap(), 1);
        let moved = path(&tmp.path().join("d/g"));
        fs.rename(&file, &moved).unwrap();
        assert_eq!(fs.stat(&file).unwrap_err().raw_os_error(), Some(libc::ENOENT));
        fs.sync(&dir).unwrap();
        fs.unlink(&moved).unwrap();
        fs.rmdir(&dir).unwrap();
        assert!(!tmp.path().join("d").exists());
    }
}
