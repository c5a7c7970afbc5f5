//! Files on a server reached by iomatrix's own protocol client (NFS, SMB),
//! not through a mount: [`RemoteFs`] is the seam a suite sees, one session
//! per client; [`RemoteFile`] is an open file of it, driven like any other
//! backend through [`RecordIo`].

use crate::{QueuedFile, RecordIo};
use std::io;

/// What a path on the server is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteKind {
    /// A regular file.
    File,
    /// A folder.
    Folder,
    /// A symbolic link (never followed).
    Symlink,
    /// A device, socket or pipe: nothing a benchmark reads.
    Other,
}

/// The most entries of one folder's listing a protocol client holds (NFS READDIRPLUS, SMB
/// QUERY_DIRECTORY): the listing is held in memory, and a server whose listing never ends would
/// grow it without end. 4 Mi names, a few hundred MiB at most.
pub const MAX_LISTED: usize = 1 << 22;

/// The refusal of a listing that passed [`MAX_LISTED`]; `what` names it (the server and the call).
pub fn listing_too_long(what: &str) -> String {
    format!(
        "{what}: the server listed more than {MAX_LISTED} entries in one folder; refused (iomatrix holds a \
         folder's listing in memory, and stops one that does not end)"
    )
}

/// One name in a folder on the server, with what the listing said of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteEntry {
    /// Its name in the folder (no path).
    pub name: String,
    /// What it is.
    pub kind: RemoteKind,
    /// Bytes, for a file (0 otherwise).
    pub size: u64,
}

/// A protocol client's view of a server's folder tree, paths relative to
/// the target's folder with `/` between parts.
pub trait RemoteFs: Send {
    /// The target, e.g. `nfs://10.0.0.2:111/export/bench`.
    fn target(&self) -> String;
    /// What was negotiated, for the run's environment record (protocol,
    /// version or dialect, transfer sizes...).
    fn describe(&self) -> serde_json::Value;
    /// Bytes this client may still write on the server (NFS FSSTAT's
    /// `abytes`, SMB's caller-available units), for the free-space check;
    /// None where the protocol client cannot tell.
    fn free_bytes(&mut self) -> io::Result<Option<u64>> {
        Ok(None)
    }
    /// Makes the folder `path`.
    fn mkdir(&mut self, path: &str) -> io::Result<()>;
    /// Removes the empty folder `path`.
    fn rmdir(&mut self, path: &str) -> io::Result<()>;
    /// Creates the file, or empties it when it exists.
    fn create(&mut self, path: &str) -> io::Result<u64>;
    /// Creates the file and fails (`AlreadyExists`) when it exists: the
    /// protocol's exclusive create (NFS GUARDED, SMB FILE_CREATE), one call.
    fn create_new(&mut self, path: &str) -> io::Result<u64>;
    /// What `path` is, from the server (NFS LOOKUP+GETATTR, SMB CREATE+QUERY_INFO+CLOSE);
    /// the entry's name is the last part of `path`.
    fn stat(&mut self, path: &str) -> io::Result<RemoteEntry>;
    /// The folder's entries, without `.` and `..`, in the server's order
    /// (NFS READDIRPLUS, SMB QUERY_DIRECTORY).
    fn read_dir(&mut self, path: &str) -> io::Result<Vec<RemoteEntry>>;
    /// Opens an existing file; the answer is a handle for the calls below.
    fn open(&mut self, path: &str) -> io::Result<u64>;
    /// Opens an existing file for reading only (a walk that must not need,
    /// or take, write access); by default as [`RemoteFs::open`].
    fn open_read(&mut self, path: &str) -> io::Result<u64> {
        self.open(path)
    }
    /// Removes the file `path`.
    fn remove(&mut self, path: &str) -> io::Result<()>;
    /// Fills `buf` from `offset` of the open file `file`, or fails (short is `UnexpectedEof`).
    fn read_at(&mut self, file: u64, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Writes all of `buf` at `offset` of the open file `file`.
    fn write_at(&mut self, file: u64, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Makes written data durable on the server (NFS COMMIT, SMB flush).
    fn flush(&mut self, file: u64) -> io::Result<()>;
    /// Closes the open file `file`; its handle is not used again.
    fn close(&mut self, file: u64) -> io::Result<()>;
    /// Renames `from` to `to` (both paths relative to the target's folder),
    /// replacing `to` where the protocol does (NFS RENAME; SMB SET_INFO
    /// FileRenameInformation). `Unsupported` where this client cannot.
    fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        Err(unsupported(&self.target(), &format!("rename {from} to {to}")))
    }
    /// Takes a byte-range lock on an open file, without waiting: a range
    /// another holder has fails (`WouldBlock`). `Unsupported` where the
    /// protocol has no locks (NFSv3 leaves them to the separate NLM protocol).
    fn lock(&mut self, _file: u64, offset: u64, len: u64, _exclusive: bool) -> io::Result<()> {
        Err(unsupported(&self.target(), &format!("lock {len} bytes at {offset}")))
    }
    /// Releases a range [`lock`](Self::lock) took.
    fn unlock(&mut self, _file: u64, offset: u64, len: u64) -> io::Result<()> {
        Err(unsupported(&self.target(), &format!("unlock {len} bytes at {offset}")))
    }
    /// Sets an open file's modification (and access) time to now, as a
    /// client's SET_FILE_INFORMATION does (NFS SETATTR to the server's
    /// time; SMB SET_INFO FileBasicInformation). `Unsupported` where this client cannot.
    fn touch(&mut self, _file: u64) -> io::Result<()> {
        Err(unsupported(&self.target(), "setting a file's times"))
    }
    /// Whether one session carries many requests at once (SMB: one per
    /// credit), so that [`open_queued`](Self::open_queued) works. Clients
    /// with one request in flight per connection (nfs3_client) answer false:
    /// see [`crate::OneAtATime`] and [`crate::SessionPool`] for them.
    fn queues(&self) -> bool {
        false
    }
    /// Opens an existing file for queued I/O with up to `depth` requests in
    /// flight at once on this one session, each slot with a buffer of
    /// `buffer_len` bytes. `Unsupported` where [`queues`](Self::queues) is false.
    fn open_queued(&mut self, path: &str, _depth: usize, _buffer_len: usize) -> io::Result<Box<dyn QueuedFile + '_>> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("{}: {path}: this client carries one request at a time per connection", self.target()),
        ))
    }
}

fn unsupported(target: &str, what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::Unsupported, format!("{target}: {what}: this protocol client cannot"))
}

/// One open file of a [`RemoteFs`].
pub struct RemoteFile<'a> {
    fs: &'a mut dyn RemoteFs,
    handle: u64,
}

impl<'a> RemoteFile<'a> {
    /// Creates the file, or empties it when it exists ([`RemoteFs::create`]).
    pub fn create(fs: &'a mut dyn RemoteFs, path: &str) -> io::Result<RemoteFile<'a>> {
        let handle = fs.create(path)?;
        Ok(RemoteFile { fs, handle })
    }

    /// Creates the file, failing (`AlreadyExists`) when it exists ([`RemoteFs::create_new`]).
    pub fn create_new(fs: &'a mut dyn RemoteFs, path: &str) -> io::Result<RemoteFile<'a>> {
        let handle = fs.create_new(path)?;
        Ok(RemoteFile { fs, handle })
    }

    /// Opens an existing file ([`RemoteFs::open`]).
    pub fn open(fs: &'a mut dyn RemoteFs, path: &str) -> io::Result<RemoteFile<'a>> {
        let handle = fs.open(path)?;
        Ok(RemoteFile { fs, handle })
    }

    /// Makes written data durable on the server ([`RemoteFs::flush`]).
    pub fn flush(&mut self) -> io::Result<()> {
        self.fs.flush(self.handle)
    }

    /// Closes the file on the server ([`RemoteFs::close`]).
    pub fn close(self) -> io::Result<()> {
        self.fs.close(self.handle)
    }
}

impl RecordIo for RemoteFile<'_> {
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.fs.read_at(self.handle, buf, offset)
    }

    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.fs.write_at(self.handle, buf, offset)
    }
}
