//! How the database file is opened and kept honest while it is written:
//!
//! - [`access_of`]: whether iomatrix may write it at all. A database on a read-only mount, or one
//!   this user may not write, is opened for reading only ([`open_read_only`]), never refused
//!   outright and never taken for damaged.
//! - [`watch_identity`]: the file written is the file opened. A database removed or replaced while
//!   a run writes into it would take the run's cells with it, silently: every commit first checks
//!   that the path still names the file (device and inode) the connection opened, and refuses
//!   to commit otherwise.

use rusqlite::{Connection, OpenFlags};
use rustix::io::Errno;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Whether iomatrix may write the database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Access {
    ReadWrite,
    /// Why not, in words for the user ("it is on a read-only file system").
    ReadOnly(String),
}

/// The folder a database file lives in ("." for a bare name).
pub(crate) fn folder_of(path: &Path) -> &Path {
    path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// Whether the database at `path` may be written: the file, if it exists, and its folder, where
/// SQLite makes the `-wal` and `-shm` files beside it, as this process's effective user (root may
/// write a file without write permission, never on a read-only mount). A missing folder is not
/// decided here (opening says so).
pub(crate) fn access_of(path: &Path) -> Access {
    let writable =
        |p: &Path| rustix::fs::accessat(rustix::fs::CWD, p, rustix::fs::Access::WRITE_OK, rustix::fs::AtFlags::EACCESS);
    let why = |e: Errno, what: &str| {
        if e == Errno::ROFS {
            format!("{what} is on a read-only file system")
        } else if e == Errno::ACCESS || e == Errno::PERM {
            format!("this user may not write {what}")
        } else {
            format!("{what} cannot be written ({e})")
        }
    };
    if path.exists() {
        if let Err(e) = writable(path) {
            return Access::ReadOnly(why(e, "the file"));
        }
    }
    let folder = folder_of(path);
    match writable(folder) {
        Err(e) if e != Errno::NOENT => Access::ReadOnly(why(
            e,
            &format!("its folder {} (where SQLite keeps its -wal and -shm files)", folder.display()),
        )),
        _ => Access::ReadWrite,
    }
}

/// `file:` URI of `path` with the query `query`: `?`, `#` and `%` in the path escaped.
pub(crate) fn uri(path: &Path, query: &str) -> String {
    let mut uri = String::from("file:");
    for c in path.display().to_string().chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    format!("{uri}?{query}")
}

/// How a read-only database is read: the query of its `file:` URI. SQLite reads a WAL database
/// read-only only where its `-shm` file exists or can be made: on a read-only mount after the
/// last writer closed (and removed both side files), only as immutable. That is safe only while
/// no `-wal` file holds changes not yet in the file: with one there and no way to read it, the
/// file is refused rather than read without its newest cells.
pub(crate) fn read_only_query(path: &Path) -> Result<&'static str, WalUnreadable> {
    let probe = |query: &str| -> rusqlite::Result<()> {
        let conn = Connection::open_with_flags(
            uri(path, query),
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |_| Ok(()))
    };
    match probe("mode=ro") {
        Ok(()) => Ok("mode=ro"),
        // CANTOPEN on a read-only mount; READONLY_DIRECTORY in a folder this user may not write.
        Err(e)
            if matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
            ) =>
        {
            let wal = PathBuf::from(format!("{}-wal", path.display()));
            if wal.exists() {
                return Err(WalUnreadable { wal });
            }
            Ok("mode=ro&immutable=1")
        }
        // Damage, or no database at all: the caller's first read names it.
        Err(_) => Ok("mode=ro"),
    }
}

/// A connection that only reads the database at `path` (which must exist).
pub(crate) fn open_read_only(path: &Path) -> Result<Connection, ReadOnlyOpen> {
    let path = absolute(path);
    let query = read_only_query(&path).map_err(ReadOnlyOpen::Unreadable)?;
    Connection::open_with_flags(
        uri(&path, query),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(ReadOnlyOpen::Sqlite)
}

/// A read-only database whose `-wal` file holds changes SQLite cannot read where it may not
/// write: it is refused rather than read without its newest cells.
#[derive(Debug, thiserror::Error)]
#[error(
    "its -wal file {wal} holds changes not yet in it, which SQLite cannot read where it may not write (it needs \
     its -shm file beside them): copy the database and its -wal file to a writable folder and read the copy",
    wal = .wal.display()
)]
pub(crate) struct WalUnreadable {
    wal: PathBuf,
}

pub(crate) enum ReadOnlyOpen {
    /// Why it cannot be read where it is.
    Unreadable(WalUnreadable),
    Sqlite(rusqlite::Error),
}

/// `path` made absolute, so that a relative path is not read as a URI's authority.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Which file a path names: device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileIdentity {
    dev: u64,
    ino: u64,
}

impl FileIdentity {
    pub(crate) fn of(path: &Path) -> std::io::Result<FileIdentity> {
        let m = std::fs::metadata(path)?;
        Ok(FileIdentity { dev: m.dev(), ino: m.ino() })
    }
}

impl std::fmt::Display for FileIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (major, minor) = (rustix::fs::major(self.dev), rustix::fs::minor(self.dev));
        write!(f, "inode {} on device {major}:{minor}", self.ino)
    }
}

/// Makes every commit on `conn` first check that `path` still names the file opened
/// (`opened`); if not, the commit is rolled back and `moved` says what happened. Once moved,
/// every later commit is refused too.
pub(crate) fn watch_identity(
    conn: &mut Connection,
    path: &Path,
    opened: FileIdentity,
    moved: Arc<OnceLock<String>>,
) -> rusqlite::Result<()> {
    let path = path.to_path_buf();
    conn.commit_hook(Some(move || {
        if moved.get().is_some() {
            return true;
        }
        let now = match FileIdentity::of(&path) {
            Ok(now) if now == opened => return false,
            Ok(now) => format!("the path now names another file ({now}, not {opened})"),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                format!("nothing is at the path any more (it was {opened})")
            }
            Err(e) => format!("the path cannot be looked at any more ({e}; it was {opened})"),
        };
        let _ = moved.set(now);
        true
    }))
}
