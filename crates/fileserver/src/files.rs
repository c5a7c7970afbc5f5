//! The one seam between a connection's loop and where its files are: a
//! local folder (system calls) or a folder on a server reached by
//! iomatrix's own protocol client (a [`RemoteFs`] session of the
//! connection's own). The loop, the counting and the timing are the same
//! for both; only these calls differ.

use iomatrix_backend::{Connect, RemoteFs};
use rustix::fs::{Mode, OFlags};
use std::fmt;
use std::io;
use std::os::fd::{IntoRawFd, OwnedFd};
use std::path::PathBuf;

/// How a file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenFor {
    /// Reading the whole file.
    Read,
    /// Appending after the create: the file exists and is empty.
    Write,
    /// Emptied first (`O_TRUNC`; SMB overwrite, NFS SETATTR size 0).
    Rewrite,
}

/// One connection's file operations in its own folder. Calls on a file
/// come in order: record after record from offset 0, so a local file's
/// own position is always `offset`.
pub trait ConnectionFiles {
    /// An open file.
    type File;
    /// A file's full name, made before the timed call.
    type Name: fmt::Display;
    /// The name of the connection's file number `index`.
    fn name(&self, index: u64) -> Self::Name;
    /// Makes the connection's own folder (untimed setup).
    fn make_folder(&mut self) -> io::Result<()>;
    /// Creates the file exclusively (it must not exist) and closes it:
    /// seed 003's create, Java's `createNewFile`.
    fn create_new(&mut self, name: &Self::Name) -> io::Result<()>;
    /// Opens the file as `how` says (timed: the open operation).
    fn open(&mut self, name: &Self::Name, how: OpenFor) -> io::Result<Self::File>;
    /// Writes all of `data` at `offset`.
    fn write(&mut self, file: &mut Self::File, data: &[u8], offset: u64) -> io::Result<()>;
    /// Fills `buf` from `offset`; fewer bytes (or 0) only where the file ends.
    fn read(&mut self, file: &mut Self::File, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// Whether the file ends at `size` (after it was read that far).
    fn ends_at(&mut self, file: &mut Self::File, size: u64) -> io::Result<bool>;
    /// Makes the written data durable (fsync; NFS COMMIT, SMB FLUSH).
    fn fsync(&mut self, file: &mut Self::File) -> io::Result<()>;
    /// Closes the file (timed: the close operation).
    fn close(&mut self, file: Self::File) -> io::Result<()>;
    /// Removes the file (untimed cleanup).
    fn remove(&mut self, name: &Self::Name) -> io::Result<()>;
}

/// A file's path in a local folder.
pub struct LocalName(PathBuf);

impl fmt::Display for LocalName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.display().fmt(f)
    }
}

/// A connection's folder on this machine's file system: open(2), write(2),
/// read(2), fsync(2), close(2).
pub struct LocalFiles {
    dir: PathBuf,
}

impl LocalFiles {
    /// The connection's files in folder `dir` (made by `make_folder`).
    pub fn new(dir: PathBuf) -> LocalFiles {
        LocalFiles { dir }
    }
}

impl ConnectionFiles for LocalFiles {
    type File = OwnedFd;
    type Name = LocalName;

    fn name(&self, index: u64) -> LocalName {
        LocalName(self.dir.join(format!("f{index:06}")))
    }

    fn make_folder(&mut self) -> io::Result<()> {
        std::fs::create_dir(&self.dir)
    }

    fn create_new(&mut self, name: &LocalName) -> io::Result<()> {
        let fd = rustix::fs::open(
            &name.0,
            OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )?;
        close(fd)
    }

    fn open(&mut self, name: &LocalName, how: OpenFor) -> io::Result<OwnedFd> {
        let flags = match how {
            OpenFor::Read => OFlags::RDONLY,
            OpenFor::Write => OFlags::WRONLY,
            OpenFor::Rewrite => OFlags::WRONLY | OFlags::TRUNC,
        };
        Ok(rustix::fs::open(&name.0, flags | OFlags::CLOEXEC, Mode::empty())?)
    }

    fn write(&mut self, file: &mut OwnedFd, mut data: &[u8], _offset: u64) -> io::Result<()> {
        // write(2) at the file's position, which is `offset`; continued where the kernel took less.
        while !data.is_empty() {
            match rustix::io::write(&*file, data) {
                Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "write(2) took no bytes")),
                Ok(n) => data = &data[n..],
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    fn read(&mut self, file: &mut OwnedFd, buf: &mut [u8], _offset: u64) -> io::Result<usize> {
        let mut got = 0;
        while got < buf.len() {
            match rustix::io::read(&*file, &mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(got)
    }

    fn ends_at(&mut self, file: &mut OwnedFd, _size: u64) -> io::Result<bool> {
        // One more read(2): 0 bytes at the end of the file.
        let mut byte = [0u8; 1];
        Ok(self.read(file, &mut byte, 0)? == 0)
    }

    fn fsync(&mut self, file: &mut OwnedFd) -> io::Result<()> {
        Ok(rustix::fs::fsync(&*file)?)
    }

    fn close(&mut self, file: OwnedFd) -> io::Result<()> {
        close(file)
    }

    fn remove(&mut self, name: &LocalName) -> io::Result<()> {
        std::fs::remove_file(&name.0)
    }
}

/// Closes a descriptor and reports what close(2) says (dropping an OwnedFd would not).
fn close(fd: OwnedFd) -> io::Result<()> {
    let raw = fd.into_raw_fd();
    // SAFETY: `raw` came from an OwnedFd we owned; nothing else closes it.
    if unsafe { libc::close(raw) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A connection's folder on a server, through its own session. Files left
/// open when the connection stops are closed when the session ends.
pub struct RemoteFiles {
    fs: Box<dyn RemoteFs>,
    /// The connection's folder, relative to the target's.
    dir: String,
}

impl RemoteFiles {
    /// The connection's files in folder `dir` on the server, through its own session `fs`.
    pub fn new(fs: Box<dyn RemoteFs>, dir: String) -> RemoteFiles {
        RemoteFiles { fs, dir }
    }
}

impl ConnectionFiles for RemoteFiles {
    /// The session's handle.
    type File = u64;
    type Name = String;

    fn name(&self, index: u64) -> String {
        format!("{}/f{index:06}", self.dir)
    }

    fn make_folder(&mut self) -> io::Result<()> {
        self.fs.mkdir(&self.dir)
    }

    fn create_new(&mut self, name: &String) -> io::Result<()> {
        // One exclusive CREATE (NFS GUARDED, SMB FILE_CREATE), then CLOSE (SMB; nothing to send on NFSv3).
        let file = self.fs.create_new(name)?;
        self.fs.close(file)
    }

    fn open(&mut self, name: &String, how: OpenFor) -> io::Result<u64> {
        match how {
            OpenFor::Read | OpenFor::Write => self.fs.open(name),
            OpenFor::Rewrite => self.fs.create(name),
        }
    }

    fn write(&mut self, file: &mut u64, data: &[u8], offset: u64) -> io::Result<()> {
        self.fs.write_at(*file, data, offset)
    }

    fn read(&mut self, file: &mut u64, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        // The protocol clients fill the buffer or fail (a file that ends first is an error).
        self.fs.read_at(*file, buf, offset).map(|()| buf.len())
    }

    fn ends_at(&mut self, _file: &mut u64, _size: u64) -> io::Result<bool> {
        // Not asked: finding out would take one more request per file, which
        // the local load does not make either (its extra read(2) costs
        // microseconds, a request a round trip). A short file fails its reads.
        Ok(true)
    }

    fn fsync(&mut self, file: &mut u64) -> io::Result<()> {
        self.fs.flush(*file)
    }

    fn close(&mut self, file: u64) -> io::Result<()> {
        self.fs.close(file)
    }

    fn remove(&mut self, name: &String) -> io::Result<()> {
        self.fs.remove(name)
    }
}

/// Makes a client's folder on the server with a session of its own, before
/// any connection starts: a client that cannot fails as a whole.
pub fn make_remote_folder(connect: &Connect<'_>, folder: &str) -> io::Result<()> {
    let mut fs = connect()?;
    fs.mkdir(folder).map_err(|e| io::Error::new(e.kind(), format!("making {folder}: {e}")))
}
