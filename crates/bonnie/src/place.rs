//! Where a client's files are, as two narrow seams the tests work through:
//! [`DataPlace`] for the one big data file (putc .. seeks) and
//! [`FilesPlace`] for the file tests' folder. A local folder
//! ([`crate::local`]) or a folder on a server reached by iomatrix's own
//! NFS/SMB client ([`crate::remote`]) stand behind them.

use crate::BonnieError;
use std::io::{self, Read, Seek, Write};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Access {
    /// Remove any old file, then create a new one exclusively, as bonnie++ does.
    Create,
    ReadWrite,
    Read,
}

/// An open data file: read, write and seek as with a descriptor.
pub(crate) trait DataFile: Read + Write + Seek + Send {
    /// fsync(2) locally; NFS COMMIT or SMB FLUSH on a server.
    fn sync(&mut self) -> io::Result<()>;
    /// Closes, reporting what the close says (on NFS mounts write errors can surface only here).
    fn close(self: Box<Self>) -> io::Result<()>;
    /// The buffer C's stdio would give this file for per-char writes (`writing`) or reads.
    fn stdio_buffer(&self, writing: bool) -> usize;
}

/// The client's data file.
pub(crate) trait DataPlace: Sync {
    /// Where the file is, for messages.
    fn location(&self) -> String;
    /// `own_session`: a seeker's open, which on a server gets a session of
    /// its own (as each bonnie++ seeker has its own descriptor).
    fn open(
        &self,
        what: &str,
        access: Access,
        direct: bool,
        own_session: bool,
    ) -> Result<Box<dyn DataFile>, BonnieError>;
    fn remove(&self) -> Result<(), BonnieError>;
}

/// The file tests' folder. Names are relative to it.
pub(crate) trait FilesPlace: Send {
    fn location(&self) -> String;
    /// Makes the folder (before a create test's clock starts).
    fn make(&mut self) -> Result<(), BonnieError>;
    /// Gets the folder ready for a test (untimed): locally, opens a descriptor of it.
    fn open(&mut self) -> Result<(), BonnieError>;
    /// Creates `name` (creat, or the protocol's exclusive create), writes
    /// `size` bytes from `data` in pieces of its length, syncs under `-b`, closes.
    fn create(&mut self, name: &str, size: u64, data: &[u8], sync: bool) -> Result<(), BonnieError>;
    /// stat of `name`, and its data read in pieces of `buf`'s length when it has any. Returns its size.
    fn stat(&mut self, name: &str, buf: &mut [u8]) -> Result<u64, BonnieError>;
    /// The folder's names in the file system's (the server's) order, without dot files.
    fn list(&mut self, what: &str) -> Result<Vec<String>, BonnieError>;
    fn delete(&mut self, name: &str, sync: bool) -> Result<(), BonnieError>;
    /// Removes the (empty) folder, inside the delete tests' timing.
    fn remove(&mut self) -> Result<(), BonnieError>;
}
