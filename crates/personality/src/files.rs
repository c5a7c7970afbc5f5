//! The one seam between a connection's flows and where its files are:
//! [`LocalFiles`] (system calls through rustix) or [`RemoteFiles`] (a
//! [`RemoteFs`] session of the connection's own). Paths are relative to the
//! connection's folder, with `/` between parts.

use iomatrix_backend::RemoteFs;
use rustix::fs::{Mode, OFlags};
use std::io;
use std::os::fd::{AsRawFd, IntoRawFd, OwnedFd};
use std::path::PathBuf;

/// One connection's file operations.
pub trait Files: Send {
    /// An open file.
    type File: Send;
    /// Makes the folder `path` (untimed, while the filesets are made).
    fn mkdir(&mut self, path: &str) -> io::Result<()>;
    /// Creates the file exclusively and opens it for writing.
    fn create(&mut self, path: &str) -> io::Result<Self::File>;
    /// Opens an existing file for reading and writing.
    fn open(&mut self, path: &str) -> io::Result<Self::File>;
    /// Fills `buf` from `offset`; fewer bytes only where the file ends.
    fn read(&mut self, file: &mut Self::File, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// Writes all of `data` at `offset`.
    fn write(&mut self, file: &mut Self::File, data: &[u8], offset: u64) -> io::Result<()>;
    /// Makes the file's written data durable.
    fn fsync(&mut self, file: &mut Self::File) -> io::Result<()>;
    /// Closes the file, reporting errors a drop would hide.
    fn close(&mut self, file: Self::File) -> io::Result<()>;
    /// The file's size.
    fn stat(&mut self, path: &str) -> io::Result<u64>;
    /// The folder's entries, counted.
    fn list(&mut self, path: &str) -> io::Result<usize>;
    /// Renames `from` to `to`.
    fn rename(&mut self, from: &str, to: &str) -> io::Result<()>;
    /// Removes the file `path`.
    fn remove(&mut self, path: &str) -> io::Result<()>;
    /// An exclusive byte-range lock on bytes 0..len, without waiting.
    fn lock(&mut self, file: &mut Self::File, len: u64) -> io::Result<()>;
    /// Releases the lock on bytes 0..len.
    fn unlock(&mut self, file: &mut Self::File, len: u64) -> io::Result<()>;
}

/// A connection's folder on this machine.
pub struct LocalFiles {
    root: PathBuf,
}

impl LocalFiles {
    /// The connection's files below folder `root`.
    pub fn new(root: PathBuf) -> LocalFiles {
        LocalFiles { root }
    }
}

pub(crate) fn ofd_lock(fd: &OwnedFd, kind: libc::c_short, len: u64) -> io::Result<()> {
    // SAFETY: a zeroed flock is a valid value; every field we need is set below.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = 0;
    fl.l_len = len as libc::off_t;
    // SAFETY: the descriptor is open for the call; fcntl reads the flock we pass.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_OFD_SETLK, &fl) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl Files for LocalFiles {
    type File = OwnedFd;

    fn mkdir(&mut self, path: &str) -> io::Result<()> {
        match std::fs::create_dir(self.root.join(path)) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            r => r,
        }
    }

    fn create(&mut self, path: &str) -> io::Result<OwnedFd> {
        Ok(rustix::fs::open(
            self.root.join(path),
            OFlags::CREATE | OFlags::EXCL | OFlags::RDWR | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )?)
    }

    fn open(&mut self, path: &str) -> io::Result<OwnedFd> {
        Ok(rustix::fs::open(self.root.join(path), OFlags::RDWR | OFlags::CLOEXEC, Mode::empty())?)
    }

    fn read(&mut self, file: &mut OwnedFd, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        iomatrix_backend::pread_full(&*file, buf, offset)
    }

    fn write(&mut self, file: &mut OwnedFd, data: &[u8], offset: u64) -> io::Result<()> {
        iomatrix_backend::pwrite_all(&*file, data, offset)
    }

    fn fsync(&mut self, file: &mut OwnedFd) -> io::Result<()> {
        Ok(rustix::fs::fsync(&*file)?)
    }

    fn close(&mut self, file: OwnedFd) -> io::Result<()> {
        let raw = file.into_raw_fd();
        // SAFETY: `raw` came from an OwnedFd we owned; nothing else closes it.
        if unsafe { libc::close(raw) } == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    fn stat(&mut self, path: &str) -> io::Result<u64> {
        Ok(rustix::fs::stat(self.root.join(path))?.st_size as u64)
    }

    fn list(&mut self, path: &str) -> io::Result<usize> {
        let mut n = 0;
        for entry in std::fs::read_dir(self.root.join(path))? {
            entry?;
            n += 1;
        }
        Ok(n)
    }

    fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        std::fs::rename(self.root.join(from), self.root.join(to))
    }

    fn remove(&mut self, path: &str) -> io::Result<()> {
        std::fs::remove_file(self.root.join(path))
    }

    fn lock(&mut self, file: &mut OwnedFd, len: u64) -> io::Result<()> {
        ofd_lock(file, libc::F_WRLCK as libc::c_short, len)
    }

    fn unlock(&mut self, file: &mut OwnedFd, len: u64) -> io::Result<()> {
        ofd_lock(file, libc::F_UNLCK as libc::c_short, len)
    }
}

/// A connection's folder on a server, through its own session.
pub struct RemoteFiles {
    fs: Box<dyn RemoteFs>,
    root: String,
}

impl RemoteFiles {
    /// `root`: the connection's folder, relative to the target's.
    pub fn new(fs: Box<dyn RemoteFs>, root: String) -> RemoteFiles {
        RemoteFiles { fs, root }
    }

    fn path(&self, path: &str) -> String {
        match (self.root.is_empty(), path.is_empty()) {
            (true, _) => path.to_string(),
            (false, true) => self.root.clone(),
            (false, false) => format!("{}/{path}", self.root),
        }
    }
}

impl Files for RemoteFiles {
    /// The session's handle.
    type File = u64;

    fn mkdir(&mut self, path: &str) -> io::Result<()> {
        let p = self.path(path);
        match self.fs.mkdir(&p) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            r => r,
        }
    }

    fn create(&mut self, path: &str) -> io::Result<u64> {
        let p = self.path(path);
        self.fs.create_new(&p)
    }

    fn open(&mut self, path: &str) -> io::Result<u64> {
        let p = self.path(path);
        self.fs.open(&p)
    }

    fn read(&mut self, file: &mut u64, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        // The protocol clients fill the buffer or fail; the engine never reads past the size it wrote.
        self.fs.read_at(*file, buf, offset).map(|()| buf.len())
    }

    fn write(&mut self, file: &mut u64, data: &[u8], offset: u64) -> io::Result<()> {
        self.fs.write_at(*file, data, offset)
    }

    fn fsync(&mut self, file: &mut u64) -> io::Result<()> {
        self.fs.flush(*file)
    }

    fn close(&mut self, file: u64) -> io::Result<()> {
        self.fs.close(file)
    }

    fn stat(&mut self, path: &str) -> io::Result<u64> {
        let p = self.path(path);
        self.fs.stat(&p).map(|e| e.size)
    }

    fn list(&mut self, path: &str) -> io::Result<usize> {
        let p = self.path(path);
        self.fs.read_dir(&p).map(|v| v.len())
    }

    fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        let (f, t) = (self.path(from), self.path(to));
        self.fs.rename(&f, &t)
    }

    fn remove(&mut self, path: &str) -> io::Result<()> {
        let p = self.path(path);
        self.fs.remove(&p)
    }

    fn lock(&mut self, file: &mut u64, len: u64) -> io::Result<()> {
        self.fs.lock(*file, 0, len, true)
    }

    fn unlock(&mut self, file: &mut u64, len: u64) -> io::Result<()> {
        self.fs.unlock(*file, 0, len)
    }
}
