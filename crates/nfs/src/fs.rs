//! [`NfsFs`]: an NFS session as the benchmark's remote file system.

use crate::{NfsError, NfsFile, NfsSession, NfsUrl};
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
    pub fn connect(url: &NfsUrl, timeout: Duration) -> Result<NfsFs, NfsError> {
        let mut session = NfsSession::connect(url, timeout)?;
        let root = session.root()?;
        Ok(NfsFs { session, root, dirs: Default::default(), open: Default::default(), next: 1 })
    }

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
    io::Error::other(e.0)
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

    fn open(&mut self, path: &str) -> io::Result<u64> {
        let (parent, name) = self.parent(path).map_err(io_err)?;
        let file = self.session.lookup(&parent, name).map_err(io_err)?;
        Ok(self.keep(file))
    }

    fn remove(&mut self, path: &str) -> io::Result<()> {
        let (parent, name) = self.parent(path).map_err(io_err)?;
        self.session.remove(&parent, name).map_err(io_err)
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
