//! The seam a replay drives: [`ReplayFs`], paths relative to the replay's
//! folder (dbench's `-D`), `/` between parts. [`LocalFs`] is a folder on
//! this machine (rustix, std), [`RemoteReplayFs`] one session of
//! iomatrix's own NFS or SMB client.

use iomatrix_backend::{RemoteFs, RemoteKind};
use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;

/// NTCreateX's create disposition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// 0: replace the file if it exists, else create it.
    Supersede,
    /// 1: the file must exist.
    Open,
    /// 2: the file must not exist.
    Create,
    /// 3: open it, or create it when missing.
    OpenIf,
    /// 4: the file must exist and is emptied.
    Overwrite,
    /// 5: emptied if it exists, else created.
    OverwriteIf,
}

impl Disposition {
    /// The disposition of NTCreateX's number `n` (0 to 5; anything above reads as 5).
    pub fn of(n: u32) -> Disposition {
        match n {
            0 => Disposition::Supersede,
            1 => Disposition::Open,
            2 => Disposition::Create,
            3 => Disposition::OpenIf,
            4 => Disposition::Overwrite,
            _ => Disposition::OverwriteIf,
        }
    }
}

/// What NTCreateX asks for besides the disposition (its create options).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// FILE_DIRECTORY_FILE (0x1): a folder.
    Folder,
    /// FILE_NON_DIRECTORY_FILE (0x40): a file; a folder there fails (`IsADirectory`).
    File,
    /// Neither: whichever is there (a new one is a file).
    Either,
}

impl Want {
    /// What NTCreateX's create options ask for (bit 0x1 wins over 0x40).
    pub fn of(options: u32) -> Want {
        if options & 0x1 != 0 {
            Want::Folder
        } else if options & 0x40 != 0 {
            Want::File
        } else {
            Want::Either
        }
    }
}

/// File operations as a dbench load file names them. Handles are the
/// implementation's own numbers.
pub trait ReplayFs {
    /// Where the replay runs, for messages and the run's record.
    fn describe(&self) -> String;
    /// NTCreateX.
    fn open(&mut self, path: &str, how: Disposition, want: Want) -> io::Result<u64>;
    /// Closes handle `h`.
    fn close(&mut self, h: u64) -> io::Result<()>;
    /// Reads up to `buf.len()` bytes at `offset`; fewer at the file's end.
    fn read(&mut self, h: u64, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// Writes all of `buf` at `offset`.
    fn write(&mut self, h: u64, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Flush: the data durable (fsync, NFS COMMIT, SMB FLUSH).
    fn flush(&mut self, h: u64) -> io::Result<()>;
    /// QUERY_PATH_INFORMATION: what is at `path` (fails `NotFound` when nothing).
    fn stat(&mut self, path: &str) -> io::Result<()>;
    /// QUERY_FILE_INFORMATION on an open handle.
    fn fstat(&mut self, h: u64) -> io::Result<()>;
    /// SET_FILE_INFORMATION (dbench sets the times).
    fn touch(&mut self, h: u64) -> io::Result<()>;
    /// QUERY_FS_INFORMATION: the file system's size and free space.
    fn statfs(&mut self) -> io::Result<()>;
    /// The names in a folder (FIND_FIRST matches them against its pattern).
    fn list(&mut self, dir: &str) -> io::Result<Vec<String>>;
    /// Removes the file `path`.
    fn unlink(&mut self, path: &str) -> io::Result<()>;
    /// Makes the folder `path`.
    fn mkdir(&mut self, path: &str) -> io::Result<()>;
    /// Removes the empty folder `path`.
    fn rmdir(&mut self, path: &str) -> io::Result<()>;
    /// Renames `from` to `to`.
    fn rename(&mut self, from: &str, to: &str) -> io::Result<()>;
    /// Removes a folder and all below it; nothing there is no error.
    fn deltree(&mut self, path: &str) -> io::Result<()>;
    /// An exclusive byte-range lock that fails at once (`WouldBlock`) when held.
    fn lock(&mut self, h: u64, offset: u64, len: u64) -> io::Result<()>;
    /// Releases the lock on `len` bytes at `offset`.
    fn unlock(&mut self, h: u64, offset: u64, len: u64) -> io::Result<()>;
}

fn no_handle(h: u64) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("handle {h} is not open"))
}

/// A folder on this machine.
pub struct LocalFs {
    root: PathBuf,
    open: HashMap<u64, File>,
    next: u64,
}

impl LocalFs {
    /// The replay's folder; it must exist.
    pub fn new(root: impl Into<PathBuf>) -> io::Result<LocalFs> {
        let root = root.into();
        if !root.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{}: not a folder (make it first, or name another)", root.display()),
            ));
        }
        Ok(LocalFs { root, open: HashMap::new(), next: 1 })
    }

    fn at(&self, path: &str) -> PathBuf {
        self.root.join(path)
    }

    fn keep(&mut self, f: File) -> u64 {
        let id = self.next;
        self.next += 1;
        self.open.insert(id, f);
        id
    }

    fn file(&self, h: u64) -> io::Result<&File> {
        self.open.get(&h).ok_or_else(|| no_handle(h))
    }

    fn open_folder(&mut self, path: &str) -> io::Result<u64> {
        let f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_DIRECTORY).open(self.at(path))?;
        Ok(self.keep(f))
    }

    /// An open file description lock (F_OFD_SETLK): two opens conflict as
    /// two SMB opens do, even in one process (dbench's F_SETLKW never does).
    fn ofd_lock(&self, h: u64, offset: u64, len: u64, kind: libc::c_short) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let f = self.file(h)?;
        // SAFETY: a zeroed flock is a valid value (plain integers).
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = kind;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        fl.l_start = offset as libc::off_t;
        fl.l_len = len as libc::off_t;
        // SAFETY: `f` is an open descriptor we own for the call, `fl` a valid flock that outlives it.
        if unsafe { libc::fcntl(f.as_raw_fd(), libc::F_OFD_SETLK, &fl) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        Err(match e.raw_os_error() {
            Some(libc::EAGAIN | libc::EACCES) => io::Error::new(io::ErrorKind::WouldBlock, e),
            _ => e,
        })
    }
}

impl ReplayFs for LocalFs {
    fn describe(&self) -> String {
        self.root.display().to_string()
    }

    fn open(&mut self, path: &str, how: Disposition, want: Want) -> io::Result<u64> {
        let full = self.at(path);
        if want == Want::Folder {
            match how {
                Disposition::Create => std::fs::create_dir(&full)?,
                Disposition::OpenIf | Disposition::Supersede | Disposition::OverwriteIf => {
                    match std::fs::create_dir(&full) {
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                        r => r?,
                    }
                }
                Disposition::Open | Disposition::Overwrite => {}
            }
            return self.open_folder(path);
        }
        let mut o = std::fs::OpenOptions::new();
        o.read(true).write(true);
        match how {
            Disposition::Supersede | Disposition::OverwriteIf => o.create(true).truncate(true),
            Disposition::Open => &mut o,
            Disposition::Create => o.create_new(true),
            Disposition::OpenIf => o.create(true),
            Disposition::Overwrite => o.truncate(true),
        };
        match o.open(&full) {
            Ok(f) => Ok(self.keep(f)),
            // A folder opened without FILE_NON_DIRECTORY_FILE is opened as one, as on Windows (and dbench).
            Err(e) if e.kind() == io::ErrorKind::IsADirectory && want == Want::Either => self.open_folder(path),
            Err(e) => Err(e),
        }
    }

    fn close(&mut self, h: u64) -> io::Result<()> {
        self.open.remove(&h).map(drop).ok_or_else(|| no_handle(h))
    }

    fn read(&mut self, h: u64, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let f = self.file(h)?;
        let mut done = 0;
        while done < buf.len() {
            match f.read_at(&mut buf[done..], offset + done as u64)? {
                0 => break,
                n => done += n,
            }
        }
        Ok(done)
    }

    fn write(&mut self, h: u64, buf: &[u8], offset: u64) -> io::Result<()> {
        self.file(h)?.write_all_at(buf, offset)
    }

    fn flush(&mut self, h: u64) -> io::Result<()> {
        rustix::fs::fsync(self.file(h)?).map_err(io::Error::from)
    }

    fn stat(&mut self, path: &str) -> io::Result<()> {
        rustix::fs::stat(self.at(path)).map(drop).map_err(io::Error::from)
    }

    fn fstat(&mut self, h: u64) -> io::Result<()> {
        rustix::fs::fstat(self.file(h)?).map(drop).map_err(io::Error::from)
    }

    fn touch(&mut self, h: u64) -> io::Result<()> {
        let now = rustix::fs::Timespec { tv_sec: 0, tv_nsec: rustix::fs::UTIME_NOW };
        let times = rustix::fs::Timestamps { last_access: now, last_modification: now };
        rustix::fs::futimens(self.file(h)?, &times).map_err(io::Error::from)
    }

    fn statfs(&mut self) -> io::Result<()> {
        rustix::fs::statvfs(&self.root).map(drop).map_err(io::Error::from)
    }

    fn list(&mut self, dir: &str) -> io::Result<Vec<String>> {
        std::fs::read_dir(self.at(dir))?.map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned())).collect()
    }

    fn unlink(&mut self, path: &str) -> io::Result<()> {
        std::fs::remove_file(self.at(path))
    }

    fn mkdir(&mut self, path: &str) -> io::Result<()> {
        std::fs::create_dir(self.at(path))
    }

    fn rmdir(&mut self, path: &str) -> io::Result<()> {
        std::fs::remove_dir(self.at(path))
    }

    fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        std::fs::rename(self.at(from), self.at(to))
    }

    fn deltree(&mut self, path: &str) -> io::Result<()> {
        // The one remover: never follows a symlink, never crosses a mount point in the client's folder.
        let full = self.at(path);
        let (Some(parent), Some(name)) = (full.parent(), full.file_name()) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: not a folder's path", full.display()),
            ));
        };
        match iomatrix_guard::remove_tree(parent, name, None) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
            Ok(removal) if removal.complete() => Ok(()),
            Ok(removal) => Err(io::Error::new(io::ErrorKind::ResourceBusy, removal.describe_left())),
        }
    }

    fn lock(&mut self, h: u64, offset: u64, len: u64) -> io::Result<()> {
        self.ofd_lock(h, offset, len, libc::F_WRLCK as libc::c_short)
    }

    fn unlock(&mut self, h: u64, offset: u64, len: u64) -> io::Result<()> {
        self.ofd_lock(h, offset, len, libc::F_UNLCK as libc::c_short)
    }
}

/// An open of a [`RemoteReplayFs`]: a file (the session's handle) or a
/// folder (no handle: the protocol clients open folders only to list them).
struct RemoteOpen {
    file: Option<u64>,
    path: String,
}

/// One session of iomatrix's NFS or SMB client.
pub struct RemoteReplayFs<'a> {
    fs: &'a mut dyn RemoteFs,
    /// The replay's folder below the target's ("" for the target's own).
    root: String,
    open: HashMap<u64, RemoteOpen>,
    next: u64,
}

impl<'a> RemoteReplayFs<'a> {
    /// `root`: the replay's folder below the target's, `/` between parts ("" for the target's own).
    pub fn new(fs: &'a mut dyn RemoteFs, root: &str) -> RemoteReplayFs<'a> {
        RemoteReplayFs { fs, root: root.trim_matches('/').to_string(), open: HashMap::new(), next: 1 }
    }

    /// `path` below the replay's folder, as the session names it.
    fn at(&self, path: &str) -> String {
        match (self.root.is_empty(), path.is_empty()) {
            (true, _) => path.to_string(),
            (false, true) => self.root.clone(),
            (false, false) => format!("{}/{path}", self.root),
        }
    }

    fn keep(&mut self, file: Option<u64>, path: &str) -> u64 {
        let id = self.next;
        self.next += 1;
        self.open.insert(id, RemoteOpen { file, path: path.to_string() });
        id
    }

    fn file(&self, h: u64) -> io::Result<u64> {
        match self.open.get(&h) {
            Some(RemoteOpen { file: Some(f), .. }) => Ok(*f),
            Some(RemoteOpen { file: None, path }) => {
                Err(io::Error::new(io::ErrorKind::IsADirectory, format!("{path}: a folder, not a file")))
            }
            None => Err(no_handle(h)),
        }
    }

    fn folder(&mut self, path: &str, how: Disposition) -> io::Result<u64> {
        match how {
            Disposition::Create => self.fs.mkdir(path)?,
            Disposition::OpenIf | Disposition::Supersede | Disposition::OverwriteIf => match self.fs.mkdir(path) {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                r => r?,
            },
            Disposition::Open | Disposition::Overwrite => {
                if self.fs.stat(path)?.kind != RemoteKind::Folder {
                    return Err(io::Error::new(io::ErrorKind::NotADirectory, format!("{path}: not a folder")));
                }
            }
        }
        Ok(self.keep(None, path))
    }

    fn remove_tree(&mut self, path: &str, depth: usize) -> io::Result<()> {
        if depth > 64 {
            return Err(io::Error::other(format!("{path}: more than 64 folders deep")));
        }
        for e in self.fs.read_dir(path)? {
            let below = format!("{path}/{}", e.name);
            if e.kind == RemoteKind::Folder {
                self.remove_tree(&below, depth + 1)?;
            } else {
                self.fs.remove(&below)?;
            }
        }
        self.fs.rmdir(path)
    }
}

impl ReplayFs for RemoteReplayFs<'_> {
    fn describe(&self) -> String {
        self.fs.target()
    }

    fn open(&mut self, path: &str, how: Disposition, want: Want) -> io::Result<u64> {
        let path = &self.at(path);
        if want == Want::Folder {
            return self.folder(path, how);
        }
        let opened = match how {
            Disposition::Open => self.fs.open(path),
            Disposition::Create => self.fs.create_new(path),
            Disposition::Supersede | Disposition::OverwriteIf => self.fs.create(path),
            Disposition::OpenIf => match self.fs.open(path) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => self.fs.create_new(path),
                r => r,
            },
            Disposition::Overwrite => self.fs.stat(path).and_then(|_| self.fs.create(path)),
        };
        match opened {
            Ok(f) => Ok(self.keep(Some(f), path)),
            // SMB refuses a folder opened as a file: open it as a folder unless a file was asked for.
            Err(e) if e.kind() == io::ErrorKind::IsADirectory && want == Want::Either => self.folder(path, how),
            Err(e) => Err(e),
        }
    }

    fn close(&mut self, h: u64) -> io::Result<()> {
        match self.open.remove(&h) {
            Some(RemoteOpen { file: Some(f), .. }) => self.fs.close(f),
            Some(RemoteOpen { file: None, .. }) => Ok(()),
            None => Err(no_handle(h)),
        }
    }

    fn read(&mut self, h: u64, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let f = self.file(h)?;
        self.fs.read_at(f, buf, offset).map(|()| buf.len())
    }

    fn write(&mut self, h: u64, buf: &[u8], offset: u64) -> io::Result<()> {
        let f = self.file(h)?;
        self.fs.write_at(f, buf, offset)
    }

    fn flush(&mut self, h: u64) -> io::Result<()> {
        let f = self.file(h)?;
        self.fs.flush(f)
    }

    fn stat(&mut self, path: &str) -> io::Result<()> {
        let path = &self.at(path);
        self.fs.stat(path).map(drop)
    }

    /// The protocol clients have no query on an open handle: the path is
    /// looked up again (NFS LOOKUP+GETATTR, SMB CREATE+QUERY_INFO+CLOSE).
    fn fstat(&mut self, h: u64) -> io::Result<()> {
        let path = self.open.get(&h).ok_or_else(|| no_handle(h))?.path.clone();
        self.fs.stat(&path).map(drop)
    }

    fn touch(&mut self, h: u64) -> io::Result<()> {
        match self.open.get(&h) {
            Some(RemoteOpen { file: Some(f), .. }) => {
                let f = *f;
                self.fs.touch(f)
            }
            // A folder's times: looked up only (the clients hold no folder handle to set them on).
            Some(RemoteOpen { file: None, path }) => {
                let path = path.clone();
                self.fs.stat(&path).map(drop)
            }
            None => Err(no_handle(h)),
        }
    }

    fn statfs(&mut self) -> io::Result<()> {
        self.fs.free_bytes().map(drop)
    }

    fn list(&mut self, dir: &str) -> io::Result<Vec<String>> {
        let dir = &self.at(dir);
        Ok(self.fs.read_dir(dir)?.into_iter().map(|e| e.name).collect())
    }

    fn unlink(&mut self, path: &str) -> io::Result<()> {
        let path = &self.at(path);
        self.fs.remove(path)
    }

    fn mkdir(&mut self, path: &str) -> io::Result<()> {
        let path = &self.at(path);
        self.fs.mkdir(path)
    }

    fn rmdir(&mut self, path: &str) -> io::Result<()> {
        let path = &self.at(path);
        self.fs.rmdir(path)
    }

    fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        let (from, to) = (self.at(from), self.at(to));
        self.fs.rename(&from, &to)
    }

    fn deltree(&mut self, path: &str) -> io::Result<()> {
        let path = &self.at(path);
        match self.fs.stat(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e),
            Ok(_) => self.remove_tree(path, 0),
        }
    }

    fn lock(&mut self, h: u64, offset: u64, len: u64) -> io::Result<()> {
        let f = self.file(h)?;
        self.fs.lock(f, offset, len, true)
    }

    fn unlock(&mut self, h: u64, offset: u64, len: u64) -> io::Result<()> {
        let f = self.file(h)?;
        self.fs.unlock(f, offset, len)
    }
}

impl Drop for RemoteReplayFs<'_> {
    fn drop(&mut self) {
        for (_, o) in self.open.drain() {
            if let Some(f) = o.file {
                let _ = self.fs.close(f);
            }
        }
    }
}
