//! [`NfsFs`]: an NFS session as the benchmark's remote file system.

use crate::{NfsError, NfsFile, NfsSession, NfsUrl};
use iomatrix_backend::{RemoteEntry, RemoteKind};
use nfs3_client::nfs3_types::nfs3;
use std::io;
use std::time::Duration;

/// The session as a [`iomatrix_backend::RemoteFs`]: paths relative to the
/// URL's folder, open files by number.
pub struct NfsFs {
    session: NfsSession,
    root: NfsFile,
    /// Folders looked up so far, by path.
    dirs: std::collections::HashMap<String, NfsFile>,
    open: std::collections::HashMap<u64, NfsFile>,
    next: u64,
}

impl NfsFs {
    /// Mounts the URL's export within `timeout` and looks up the URL's folder, the root
    /// of every path this file system is given.
    pub fn connect(url: &NfsUrl, timeout: Duration) -> Result<NfsFs, NfsError> {
        let mut session = NfsSession::connect(url, timeout)?;
        let root = session.root()?;
        Ok(NfsFs { session, root, dirs: Default::default(), open: Default::default(), next: 1 })
    }

    /// The session under this file system, for calls it does not wrap (the server's facts, SETATTR).
    pub fn session(&mut self) -> &mut NfsSession {
        &mut self.session
    }

    /// The folder holding `path` and the last part of it.
    fn parent<'p>(&mut self, path: &'p str) -> Result<(NfsFile, &'p str), NfsError> {
        let path = path.trim_matches('/');
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        Ok((self.dir(dir)?, name))
    }

    fn dir(&mut self, path: &str) -> Result<NfsFile, NfsError> {
        if path.is_empty() {
            return Ok(self.root.clone());
        }
        if let Some(d) = self.dirs.get(path) {
            return Ok(d.clone());
        }
        let (parent, name) = self.parent(path)?;
        let found = self.session.lookup(&parent, name)?;
        self.dirs.insert(path.to_string(), found.clone());
        Ok(found)
    }

    fn handle(&self, file: u64) -> io::Result<&NfsFile> {
        self.open.get(&file).ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no such open file"))
    }

    fn keep(&mut self, file: NfsFile) -> u64 {
        let id = self.next;
        self.next += 1;
        self.open.insert(id, file);
        id
    }
}

fn io_err(e: NfsError) -> io::Error {
    // The kind matters to callers that count errors by kind (a file that is not there, say).
    let kind = if e.0.contains("NFS3ERR_NOENT") {
        io::ErrorKind::NotFound
    } else if e.0.contains("NFS3ERR_EXIST") {
        io::ErrorKind::AlreadyExists
    } else if e.0.contains("NFS3ERR_ACCES") || e.0.contains("NFS3ERR_PERM") {
        io::ErrorKind::PermissionDenied
    } else if e.0.contains("NFS3ERR_NOTEMPTY") {
        io::ErrorKind::DirectoryNotEmpty
    } else if e.0.contains("NFS3ERR_ISDIR") {
        io::ErrorKind::IsADirectory
    } else if e.0.contains("NFS3ERR_NOTDIR") {
        io::ErrorKind::NotADirectory
    } else if e.0.contains("NFS3ERR_NOSPC") {
        io::ErrorKind::StorageFull
    } else if e.0.contains("no answer within") {
        io::ErrorKind::TimedOut
    } else {
        io::ErrorKind::Other
    };
    io::Error::new(kind, e.0)
}

/// NFSv3 itself has no byte-range locks: they are the separate NLM
/// protocol (rpc.statd, lockd), which this client does not speak.
fn no_locks(target: &str, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "{target}: {what}: NFSv3 has no byte-range locks (they are the separate NLM protocol, which \
             iomatrix's NFS client does not speak); lock through a mounted share (a folder target) instead"
        ),
    )
}

fn entry(name: String, kind: nfs3::ftype3, size: u64) -> RemoteEntry {
    let kind = match kind {
        nfs3::ftype3::NF3REG => RemoteKind::File,
        nfs3::ftype3::NF3DIR => RemoteKind::Folder,
        nfs3::ftype3::NF3LNK => RemoteKind::Symlink,
        _ => RemoteKind::Other,
    };
    RemoteEntry { name, size: if kind == RemoteKind::File { size } else { 0 }, kind }
}

impl iomatrix_backend::RemoteFs for NfsFs {
    fn target(&self) -> String {
        self.session.url().to_string()
    }

    fn describe(&self) -> serde_json::Value {
        let i = &self.session.info;
        serde_json::json!({
            "protocol": "NFS",
            "version": "3",
            "client": "iomatrix built-in (nfs3_client, no client cache)",
            "server": self.session.url().host,
            "export": self.session.url().export,
            "read_max_bytes": i.read_max,
            "read_pref_bytes": i.read_pref,
            "write_max_bytes": i.write_max,
            "write_pref_bytes": i.write_pref,
            "write_stability": "UNSTABLE writes, COMMIT on flush",
            "nfs_port": i.nfs_port,
            "mount_port": i.mount_port,
        })
    }

    fn free_bytes(&mut self) -> io::Result<Option<u64>> {
        let root = self.root.clone();
        self.session.available_bytes(&root).map(Some).map_err(io_err)
    }

    fn mkdir(&mut self, path: &str) -> io::Result<()> {
        let (parent, name) = self.parent(path).map_err(io_err)?;
        let made = self.session.mkdir(&parent, name).map_err(io_err)?;
        self.dirs.insert(path.trim_matches('/').to_string(), made);
        Ok(())
    }

    fn rmdir(&mut self, path: &str) -> io::Result<()> {
        let (parent, name) = self.parent(path).map_err(io_err)?;
        self.session.rmdir(&parent, name).map_err(io_err)?;
        self.dirs.remove(path.trim_matches('/'));
        Ok(())
    }

    fn create(&mut self, path: &str) -> io::Result<u64> {
        let (parent, name) = self.parent(path).map_err(io_err)?;
        let file = self.session.create(&parent, name).map_err(io_err)?;
        Ok(self.keep(file))
    }

    fn create_new(&mut self, path: &str) -> io::Result<u64> {
        let (parent, name) = self.parent(path).map_err(io_err)?;
        match self.session.create_new(&parent, name) {
            Ok(file) => Ok(self.keep(file)),
            Err((e, true)) => Err(io::Error::new(io::ErrorKind::AlreadyExists, e.0)),
            Err((e, false)) => Err(io_err(e)),
        }
    }

    fn stat(&mut self, path: &str) -> io::Result<RemoteEntry> {
        let trimmed = path.trim_matches('/');
        let file = if trimmed.is_empty() {
            self.root.clone()
        } else {
            let (parent, name) = self.parent(trimmed).map_err(io_err)?;
            self.session.lookup(&parent, name).map_err(io_err)?
        };
        let (kind, size) = self.session.getattr(&file).map_err(io_err)?;
        let name = trimmed.rsplit('/').next().unwrap_or("").to_string();
        Ok(entry(name, kind, size))
    }

    fn read_dir(&mut self, path: &str) -> io::Result<Vec<RemoteEntry>> {
        let dir = self.dir(path.trim_matches('/')).map_err(io_err)?;
        let listed = self.session.readdir(&dir).map_err(io_err)?;
        Ok(listed.into_iter().map(|(name, kind, size)| entry(name, kind, size)).collect())
    }

    fn open(&mut self, path: &str) -> io::Result<u64> {
        let (parent, name) = self.parent(path).map_err(io_err)?;
        let file = self.session.lookup(&parent, name).map_err(io_err)?;
        Ok(self.keep(file))
    }

    fn remove(&mut self, path: &str) -> io::Result<()> {
        let (parent, name) = self.parent(path).map_err(io_err)?;
        self.session.remove(&parent, name).map_err(io_err)
    }

    fn rename(&mut self, from: &str, to: &str) -> io::Result<()> {
        let (from_dir, from_name) = self.parent(from).map_err(io_err)?;
        let (to_dir, to_name) = self.parent(to).map_err(io_err)?;
        self.session.rename(&from_dir, from_name, &to_dir, to_name).map_err(io_err)?;
        // A folder renamed: its looked-up handle (and those below it) are filed under the old path.
        let old = from.trim_matches('/').to_string();
        self.dirs.retain(|path, _| path != &old && !path.starts_with(&format!("{old}/")));
        Ok(())
    }

    fn touch(&mut self, file: u64) -> io::Result<()> {
        let f = self.handle(file)?.clone();
        self.session.touch(&f).map_err(io_err)
    }

    fn lock(&mut self, _file: u64, offset: u64, len: u64, _exclusive: bool) -> io::Result<()> {
        Err(no_locks(&self.target(), &format!("lock {len} bytes at {offset}")))
    }

    fn unlock(&mut self, _file: u64, offset: u64, len: u64) -> io::Result<()> {
        Err(no_locks(&self.target(), &format!("unlock {len} bytes at {offset}")))
    }

    fn read_at(&mut self, file: u64, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let f = self.handle(file)?.clone();
        self.session.read_at(&f, buf, offset).map_err(io_err)
    }

    fn write_at(&mut self, file: u64, buf: &[u8], offset: u64) -> io::Result<()> {
        let f = self.handle(file)?.clone();
        self.session.write_at(&f, buf, offset).map_err(io_err)
    }

    fn flush(&mut self, file: u64) -> io::Result<()> {
        let f = self.handle(file)?.clone();
        self.session.commit(&f).map_err(io_err)
    }

    fn close(&mut self, file: u64) -> io::Result<()> {
        // NFSv3 has no open state: closing forgets the handle.
        self.open.remove(&file);
        Ok(())
    }
}
