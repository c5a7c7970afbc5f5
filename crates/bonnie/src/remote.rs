//! The client's files on a server through iomatrix's own protocol client
//! (NFSv3, SMB2/3): no mount, no client cache, every request goes to the
//! server. The client's session is shared by its data and file tests; each
//! seeker of the seek test connects a session of its own.
//!
//! What maps to what: read(2)/write(2) at the file position become READ and
//! WRITE at that offset (lseek moves only the client's position, as it
//! does locally); fsync under `-b` is NFS COMMIT / SMB FLUSH; the file
//! tests' create is the exclusive create (NFS GUARDED, SMB FILE_CREATE)
//! and close, stat is LOOKUP+GETATTR (SMB CREATE+QUERY_INFO+CLOSE), the
//! sequential tests list the folder (READDIRPLUS, QUERY_DIRECTORY). Folder
//! operations are synchronous on the server, so `-b`'s folder fsyncs have
//! nothing to do.

use crate::error::io_error;
use crate::place::{Access, DataFile, DataPlace, FilesPlace};
use crate::BonnieError;
use iomatrix_backend::RemoteFs;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::sync::{Arc, Mutex, MutexGuard};

/// The most a per-char test buffers before one request, as the local
/// stdio buffer is kept at or below 1 MiB.
pub const MAX_PER_CHAR_BUFFER: usize = 1024 * 1024;

/// The per-char tests' buffers on a server (putc's, getc's): the
/// negotiated request sizes (NFS wtpref/rtpref, else wtmax/rtmax; SMB
/// MaxWriteSize/MaxReadSize), at most [`MAX_PER_CHAR_BUFFER`], 64 KiB if
/// the client does not say. What stdio's st_blksize is to a local file.
pub fn per_char_buffers(described: &serde_json::Value) -> (usize, usize) {
    let size = |pref: &str, max: &str| {
        let bytes = described[pref].as_u64().filter(|b| *b > 0).or(described[max].as_u64()).unwrap_or(64 * 1024);
        (bytes as usize).clamp(512, MAX_PER_CHAR_BUFFER)
    };
    (size("write_pref_bytes", "write_max_bytes"), size("read_pref_bytes", "read_max_bytes"))
}

pub(crate) type Session = Arc<Mutex<Box<dyn RemoteFs>>>;
pub(crate) type Connect<'a> = &'a (dyn Fn() -> io::Result<Box<dyn RemoteFs>> + Sync);

pub(crate) fn session(fs: Box<dyn RemoteFs>) -> Session {
    Arc::new(Mutex::new(fs))
}

fn lock(session: &Session) -> MutexGuard<'_, Box<dyn RemoteFs>> {
    session.lock().unwrap_or_else(|p| p.into_inner())
}

/// The data file `path` on the server.
pub(crate) struct RemoteData<'a> {
    pub(crate) session: Session,
    pub(crate) connect: Connect<'a>,
    pub(crate) path: String,
    /// The server's target URL, for messages.
    pub(crate) target: String,
}

impl RemoteData<'_> {
    fn open_in(&self, session: Session, access: Access) -> io::Result<Box<dyn DataFile>> {
        let (handle, size, buffers) = {
            let mut fs = lock(&session);
            let handle = match access {
                Access::Create => match fs.create_new(&self.path) {
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                        fs.remove(&self.path)?;
                        fs.create_new(&self.path)?
                    }
                    other => other?,
                },
                Access::ReadWrite | Access::Read => fs.open(&self.path)?,
            };
            // Reads stop at the end of the file, as read(2) does: the client keeps its size.
            let size = if access == Access::Create { 0 } else { fs.stat(&self.path)?.size };
            (handle, size, per_char_buffers(&fs.describe()))
        };
        Ok(Box::new(RemoteCursor { session, handle, pos: 0, size, buffers }))
    }
}

impl DataPlace for RemoteData<'_> {
    fn location(&self) -> String {
        format!("{}/{}", self.target, self.path)
    }

    fn open(
        &self,
        what: &str,
        access: Access,
        direct: bool,
        own_session: bool,
    ) -> Result<Box<dyn DataFile>, BonnieError> {
        let here = self.location();
        if direct {
            return Err(BonnieError(format!(
                "{what} open of {here}: O_DIRECT has no meaning through iomatrix's own protocol client (there is \
                 no client cache); run without -D/--direct"
            )));
        }
        let session = if own_session {
            (self.connect)().map(session).map_err(|e| io_error(&format!("{what} session"), &here, None, &e))?
        } else {
            self.session.clone()
        };
        self.open_in(session, access).map_err(|e| io_error(&format!("{what} open"), &here, None, &e))
    }

    fn remove(&self) -> Result<(), BonnieError> {
        lock(&self.session).remove(&self.path).map_err(|e| BonnieError(format!("removing {}: {e}", self.location())))
    }
}

/// An open file on the server with a position, as a descriptor has.
struct RemoteCursor {
    session: Session,
    handle: u64,
    pos: u64,
    /// The file's size as this client knows it (from stat at open, grown by its writes).
    size: u64,
    /// (putc's, getc's) buffer.
    buffers: (usize, usize),
}

impl Read for RemoteCursor {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (buf.len() as u64).min(self.size.saturating_sub(self.pos)) as usize;
        if n == 0 {
            return Ok(0);
        }
        let piece = buf.get_mut(..n).unwrap_or(&mut []);
        lock(&self.session).read_at(self.handle, piece, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Write for RemoteCursor {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        lock(&self.session).write_at(self.handle, buf, self.pos)?;
        self.pos += buf.len() as u64;
        self.size = self.size.max(self.pos);
        Ok(buf.len())
    }

    /// Nothing is held back on this side: every write was a request.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for RemoteCursor {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            SeekFrom::End(d) => self.size.checked_add_signed(d),
        };
        self.pos = pos.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the file's start"))?;
        Ok(self.pos)
    }
}

impl DataFile for RemoteCursor {
    fn sync(&mut self) -> io::Result<()> {
        lock(&self.session).flush(self.handle)
    }

    fn close(self: Box<Self>) -> io::Result<()> {
        lock(&self.session).close(self.handle)
    }

    fn stdio_buffer(&self, writing: bool) -> usize {
        if writing {
            self.buffers.0
        } else {
            self.buffers.1
        }
    }
}

/// The file tests' folder `dir` on the server.
pub(crate) struct RemoteFiles {
    pub(crate) session: Session,
    pub(crate) dir: String,
    pub(crate) target: String,
}

impl RemoteFiles {
    fn path(&self, name: &str) -> String {
        format!("{}/{name}", self.dir)
    }

    fn err(&self, what: &str, name: Option<&str>, e: &io::Error) -> BonnieError {
        let here = match name {
            Some(name) => format!("{}/{}", self.target, self.path(name)),
            None => self.location(),
        };
        io_error(what, &here, None, e)
    }
}

impl FilesPlace for RemoteFiles {
    fn location(&self) -> String {
        format!("{}/{}", self.target, self.dir)
    }

    fn make(&mut self) -> Result<(), BonnieError> {
        lock(&self.session).mkdir(&self.dir).map_err(|e| self.err("making the folder", None, &e))
    }

    fn open(&mut self) -> Result<(), BonnieError> {
        Ok(())
    }

    fn create(&mut self, name: &str, size: u64, data: &[u8], sync: bool) -> Result<(), BonnieError> {
        let path = self.path(name);
        let mut fs = lock(&self.session);
        let file = fs.create_new(&path).map_err(|e| self.err("create", Some(name), &e))?;
        let mut at = 0;
        while at < size {
            let n = (size - at).min(data.len() as u64) as usize;
            fs.write_at(file, data.get(..n).unwrap_or(&[]), at)
                .map_err(|e| self.err("create write", Some(name), &e))?;
            at += n as u64;
        }
        if sync {
            fs.flush(file).map_err(|e| self.err("create flush", Some(name), &e))?;
        }
        fs.close(file).map_err(|e| self.err("create close", Some(name), &e))
    }

    fn stat(&mut self, name: &str, buf: &mut [u8]) -> Result<u64, BonnieError> {
        let path = self.path(name);
        let mut fs = lock(&self.session);
        let size = fs.stat(&path).map_err(|e| self.err("stat", Some(name), &e))?.size;
        if size > 0 {
            let file = fs.open(&path).map_err(|e| self.err("stat open", Some(name), &e))?;
            let mut at = 0;
            while at < size {
                let n = (size - at).min(buf.len() as u64) as usize;
                let piece = buf.get_mut(..n).unwrap_or(&mut []);
                fs.read_at(file, piece, at).map_err(|e| self.err("stat read", Some(name), &e))?;
                at += n as u64;
            }
            fs.close(file).map_err(|e| self.err("stat close", Some(name), &e))?;
        }
        Ok(size)
    }

    fn list(&mut self, what: &str) -> Result<Vec<String>, BonnieError> {
        let entries = lock(&self.session).read_dir(&self.dir).map_err(|e| self.err(what, None, &e))?;
        Ok(entries.into_iter().map(|e| e.name).filter(|n| !n.starts_with('.')).collect())
    }

    fn delete(&mut self, name: &str, _sync: bool) -> Result<(), BonnieError> {
        let path = self.path(name);
        lock(&self.session).remove(&path).map_err(|e| self.err("delete", Some(name), &e))
    }

    fn remove(&mut self) -> Result<(), BonnieError> {
        lock(&self.session).rmdir(&self.dir).map_err(|e| self.err("removing the folder", None, &e))
    }
}
