//! The one writer of files iomatrix writes at a user's word: reports
//! (`report -o`), workbooks (`--xlsx`, IOzone's `-b`), `db backup`'s copy,
//! size profiles (`scan --save-profile`), study logs.
//!
//! [`Output::check`] looks at the path before anything is made (a run checks
//! its `--xlsx` before its first cell, not after the last):
//!
//! - it is never the results database, its `-wal`, `-shm` or `-journal`: not
//!   by name, and not under another name that reaches the same file (a
//!   symlink, a hard link, a bind mount: the same device and inode);
//! - an existing file is replaced only when it is of the same kind and made
//!   by iomatrix ([`Kind::recognises`]: a report's schema, generator or first
//!   line), or empty, or with `--force`; a folder, device, FIFO or socket
//!   never;
//! - a symlink is followed to the file it names (which is then judged); one
//!   that leads nowhere is refused.
//!
//! [`Checked::write`] then writes a temporary file beside it (same folder,
//! so the rename cannot cross file systems), syncs it, looks at the path
//! once more (it must still be what was judged), and renames the temporary
//! file into place (without replacing anything when nothing was there). A
//! failure, a full disk included, removes the temporary file and leaves the
//! old file as it was.

use iomatrix_core::UsageError;
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a file was not written at the user's word.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The path is not fit to write (the results database, a folder, a file of another kind
    /// without `--force`), or it changed while iomatrix wrote: the user's to fix (a usage
    /// error, exit 2).
    #[error(transparent)]
    Refused(#[from] UsageError),
    /// The write itself failed (a full disk, an I/O error): the message says that the old file
    /// is left as it was, or that nothing was written.
    #[error("{0}")]
    Failed(String),
}

impl OutputError {
    /// The usage error this is, if the user can fix it (exit 2).
    pub fn usage(&self) -> Option<&UsageError> {
        match self {
            OutputError::Refused(e) => Some(e),
            OutputError::Failed(_) => None,
        }
    }
}

/// A kind of file iomatrix writes, and how to tell one it made.
pub trait Kind {
    /// What such a file is, after "not ": "an iomatrix HTML report".
    fn describe(&self) -> String;
    /// Whether `existing` (open for reading, at its start) is a file of this kind made by
    /// iomatrix, which may be replaced. Reads only what it needs.
    fn recognises(&self, existing: &mut File) -> bool;
}

/// A kind no existing file is of: an existing file is replaced only with `--force`
/// (`db backup`'s copy: an existing database is never "a previous report").
pub struct Never(pub &'static str);

impl Kind for Never {
    fn describe(&self) -> String {
        self.0.to_string()
    }
    fn recognises(&self, _: &mut File) -> bool {
        false
    }
}

/// Up to `n` bytes from the start of `file`, for [`Kind::recognises`].
pub fn head(file: &mut File, n: usize) -> Vec<u8> {
    let mut buf = Vec::with_capacity(n.min(1 << 20));
    let _ = file.take(n as u64).read_to_end(&mut buf);
    buf
}

/// A file to write at the user's word.
pub struct Output<'a> {
    /// As the user gave it.
    pub path: &'a Path,
    /// How the user named it, for messages: "-o", "--xlsx", "-b", "db backup".
    pub flag: &'a str,
    /// What the file is, and how to tell an existing one iomatrix made and may replace.
    pub kind: &'a dyn Kind,
    /// `--force`: replace an existing regular file of another kind.
    pub force: bool,
    /// The results database (which need not exist yet): never written over.
    pub database: Option<&'a Path>,
}

/// The device and inode of a file.
type Identity = (u64, u64);

/// A path judged fit to write, and what was there when it was judged.
#[derive(Debug)]
pub struct Checked {
    /// "-o out.json", for messages.
    shown: String,
    /// The file's own path: its folder resolved, a symlink followed.
    path: PathBuf,
    dir: OwnedFd,
    name: OsString,
    /// What was there when judged (nothing, or this file).
    existing: Option<Identity>,
    /// Its permission bits, kept by the new file.
    mode: Option<u32>,
    /// It holds something not of the kind, and `--force` lets it go.
    foreign: bool,
    database: Option<Protected>,
}

impl Output<'_> {
    /// Judges the path: Err(UsageError) naming the problem and the fix, or what to write to.
    pub fn check(&self) -> Result<Checked, OutputError> {
        let shown = format!("{} {}", self.flag, self.path.display());
        let refuse = |why: String| -> OutputError { UsageError::new(format!("{shown}: {why}")).into() };
        if self.path.as_os_str().is_empty() || self.path.as_os_str().as_bytes().ends_with(b"/") {
            return Err(refuse("names a folder, not a file: give a file name".into()));
        }
        let (folder, name) = resolve(self.path).map_err(refuse)?;
        let dir = rustix::fs::open(&folder, OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
            .map_err(|e| refuse(format!("cannot open its folder {}: {e}", folder.display())))?;
        let path = folder.join(&name);
        let database = self.database.map(Protected::of);
        if let Some(db) = &database {
            if let Some(what) = db.named(&path) {
                return Err(refuse(format!("that is {what}: iomatrix never writes over it; give another file name")));
            }
        }
        let existing = match rustix::fs::statat(&dir, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Err(Errno::NOENT) => None,
            Err(e) => return Err(refuse(format!("cannot look at it: {e}"))),
            Ok(st) => Some(st),
        };
        let mut checked = Checked {
            shown: shown.clone(),
            path: path.clone(),
            dir,
            name,
            existing: None,
            mode: None,
            foreign: false,
            database,
        };
        let Some(st) = existing else { return Ok(checked) };
        let identity = (st.st_dev, st.st_ino);
        if let Some(db) = &checked.database {
            if let Some(what) = db.same_file(identity) {
                return Err(refuse(format!(
                    "that is {what} under another name (a hard link, a symlink or a bind mount): iomatrix never \
                     writes over it; give another file name"
                )));
            }
        }
        let file_type = rustix::fs::FileType::from_raw_mode(st.st_mode);
        if file_type != rustix::fs::FileType::RegularFile {
            let what = match file_type {
                rustix::fs::FileType::Directory => "a folder",
                rustix::fs::FileType::Fifo => "a FIFO (named pipe)",
                rustix::fs::FileType::CharacterDevice | rustix::fs::FileType::BlockDevice => "a device",
                rustix::fs::FileType::Socket => "a socket",
                _ => "not a regular file",
            };
            return Err(refuse(format!("{} is {what}: give the name of a file to write", path.display())));
        }
        checked.existing = Some(identity);
        checked.mode = Some(st.st_mode & 0o7777);
        if st.st_size == 0 {
            return Ok(checked);
        }
        let fd = rustix::fs::openat(
            &checked.dir,
            checked.name.as_os_str(),
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| refuse(format!("exists and cannot be read to tell what it is ({e}); add --force to replace it")));
        let fd = match fd {
            Ok(fd) => fd,
            Err(_) if self.force => {
                checked.foreign = true;
                return Ok(checked);
            }
            Err(e) => return Err(e),
        };
        let mut file = File::from(fd);
        if !self.kind.recognises(&mut file) {
            if self.force {
                checked.foreign = true;
                return Ok(checked);
            }
            return Err(refuse(format!(
                "{} exists and is not {} ({} bytes that would be lost): give another file name, or add --force to \
                 replace it",
                path.display(),
                self.kind.describe(),
                st.st_size
            )));
        }
        Ok(checked)
    }
}

impl Checked {
    /// The file's own path (its folder resolved, a symlink followed).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a file was there when judged (and will be replaced).
    pub fn replaces(&self) -> bool {
        self.existing.is_some()
    }

    /// Opens the file for appending in place (a log, which grows: no temporary file), made if
    /// missing; one of another kind that `--force` let go is emptied first. The caller writes
    /// the kind's mark first when the file is empty.
    pub fn append(&self) -> Result<File, OutputError> {
        let mut flags = OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        if self.foreign {
            flags |= OFlags::TRUNC;
        }
        let fd = rustix::fs::openat(&self.dir, self.name.as_os_str(), flags, Mode::from_raw_mode(0o666))
            .map_err(|e| self.failed(e.into()))?;
        let st = rustix::fs::fstat(&fd).map_err(|e| self.failed(e.into()))?;
        let opened = (st.st_dev, st.st_ino);
        let protected = self.database.as_ref().and_then(|db| db.same_file(opened));
        if self.existing.is_some_and(|judged| judged != opened) || protected.is_some() {
            return Err(UsageError::new(format!(
                "{}: {} changed after it was looked at (another program wrote there): not written; run it again",
                self.shown,
                self.path.display()
            ))
            .into());
        }
        Ok(File::from(fd))
    }

    /// Writes `bytes` to a temporary file beside the path, syncs it and renames it into place.
    pub fn write(&self, bytes: &[u8]) -> Result<(), OutputError> {
        let (temp, fd) = self.create_temp()?;
        let mut file = File::from(fd);
        let written = file.write_all(bytes).and_then(|()| file.sync_all());
        drop(file);
        if let Err(e) = written {
            let _ = rustix::fs::unlinkat(&self.dir, temp.as_os_str(), AtFlags::empty());
            return Err(self.failed(e));
        }
        self.place(&temp)
    }

    /// A fresh name in the path's folder for another writer to make the file under (`db
    /// backup`'s copy), then given to [`Checked::place_file`]. Nothing exists by that name yet.
    pub fn temp_path(&self) -> PathBuf {
        self.path.with_file_name(self.temp_name())
    }

    /// Puts a finished file made at [`Checked::temp_path`] into place (the path is looked at
    /// again first); the temporary file is removed if it cannot be.
    pub fn place_file(&self, temp: &Path) -> Result<(), OutputError> {
        let name = temp.file_name().unwrap_or_default().to_os_string();
        let synced = rustix::fs::openat(
            &self.dir,
            name.as_os_str(),
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .and_then(|fd| rustix::fs::fsync(&fd));
        if let Err(e) = synced {
            let _ = rustix::fs::unlinkat(&self.dir, name.as_os_str(), AtFlags::empty());
            return Err(self.failed(e.into()));
        }
        self.place(&name)
    }

    fn temp_name(&self) -> OsString {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mut temp = OsString::from(".");
        temp.push(&self.name);
        temp.push(format!(".iomatrix-{}-{}.tmp", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed)));
        temp
    }

    fn create_temp(&self) -> Result<(OsString, OwnedFd), OutputError> {
        let temp = self.temp_name();
        let fd = rustix::fs::openat(
            &self.dir,
            temp.as_os_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )
        .map_err(|e| match e {
            Errno::NOSPC | Errno::DQUOT => self.failed(e.into()),
            _ => UsageError::new(format!(
                "{}: cannot write in {}: {e}; give a folder you can write to",
                self.shown,
                self.path.parent().unwrap_or(Path::new(".")).display()
            ))
            .into(),
        })?;
        if let Some(mode) = self.mode {
            // The replaced file's permissions stay (a report kept private stays private).
            let _ = rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode));
        }
        Ok((temp, fd))
    }

    /// Renames the temporary file `temp` over the path, if the path is still what was judged.
    fn place(&self, temp: &OsStr) -> Result<(), OutputError> {
        let discard = || {
            let _ = rustix::fs::unlinkat(&self.dir, temp, AtFlags::empty());
        };
        let now = match rustix::fs::statat(&self.dir, self.name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Some((st.st_dev, st.st_ino)),
            Err(Errno::NOENT) => None,
            Err(e) => {
                discard();
                return Err(self.failed(e.into()));
            }
        };
        let protected = now.and_then(|id| self.database.as_ref().and_then(|db| db.same_file(id)));
        if now != self.existing || protected.is_some() {
            discard();
            return Err(UsageError::new(format!(
                "{}: {} changed while iomatrix made the new file (another program wrote there): nothing replaced; \
                 run it again",
                self.shown,
                self.path.display()
            ))
            .into());
        }
        let renamed = match self.existing {
            Some(_) => rustix::fs::renameat(&self.dir, temp, &self.dir, self.name.as_os_str()),
            // Nothing was there: nothing may be replaced, should a file appear meanwhile.
            None => match rustix::fs::renameat_with(
                &self.dir,
                temp,
                &self.dir,
                self.name.as_os_str(),
                RenameFlags::NOREPLACE,
            ) {
                Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
                    rustix::fs::linkat(&self.dir, temp, &self.dir, self.name.as_os_str(), AtFlags::empty())
                        .and_then(|()| rustix::fs::unlinkat(&self.dir, temp, AtFlags::empty()))
                }
                other => other,
            },
        };
        if let Err(e) = renamed {
            discard();
            if e == Errno::EXIST {
                return Err(UsageError::new(format!(
                    "{}: {} appeared while iomatrix made the new file: nothing replaced; run it again",
                    self.shown,
                    self.path.display()
                ))
                .into());
            }
            return Err(self.failed(e.into()));
        }
        // The rename itself made durable; a folder that cannot be synced (some FUSE) still holds it.
        let _ = rustix::fs::fsync(&self.dir);
        Ok(())
    }

    /// A write that failed: the old file is intact, and the message says so.
    fn failed(&self, e: std::io::Error) -> OutputError {
        let full = matches!(Errno::from_io_error(&e), Some(Errno::NOSPC | Errno::DQUOT));
        let cause = if full { format!("the file system is full ({e})") } else { e.to_string() };
        let kept = if self.existing.is_some() {
            format!("{} is left as it was", self.path.display())
        } else {
            "nothing was written".to_string()
        };
        OutputError::Failed(format!("{}: cannot write {}: {cause}; {kept}", self.shown, self.path.display()))
    }
}

/// The folder (resolved) and name a path writes to; a symlink is followed to its file.
fn resolve(path: &Path) -> Result<(PathBuf, OsString), String> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path)
            .map_err(|e| format!("is a symlink that leads to no file ({e}): give the path of the file itself"))?,
        _ => path.to_path_buf(),
    };
    let name = match target.file_name() {
        Some(n) if n != ".." && n != "." => n.to_os_string(),
        _ => return Err("names a folder, not a file: give a file name".into()),
    };
    let parent = target.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let folder = std::fs::canonicalize(parent).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            format!("its folder {} does not exist: create it or give another path", parent.display())
        }
        _ => format!("its folder {} cannot be used ({e}): give a file in a folder you can write to", parent.display()),
    })?;
    if !folder.is_dir() {
        return Err(format!("{} is not a folder", parent.display()));
    }
    Ok((folder, name))
}

/// Which of the results database `db`'s files (the database, its -wal, -shm or -journal) `path`
/// is, by device and inode, if it is one: a hard link, a symlink or a bind mount of it is, under
/// any name. For a command that must never take the database for another file (`db merge`).
pub fn database_file(db: &Path, path: &Path) -> Option<String> {
    let m = std::fs::metadata(path).ok()?;
    Protected::of(db).same_file((m.dev(), m.ino())).map(str::to_string)
}

/// The results database's files, by every name and inode they are reached by.
#[derive(Debug)]
struct Protected {
    /// (path, what it is) for the database, its -wal, -shm and -journal.
    names: Vec<(PathBuf, String)>,
    /// (device, inode, what it is) of those that exist.
    inodes: Vec<(Identity, String)>,
}

impl Protected {
    fn of(db: &Path) -> Protected {
        let mut bases: Vec<PathBuf> = Vec::new();
        // By the name given, its folder resolved (it need not exist yet) ...
        if let (Some(name), Ok(folder)) = (
            db.file_name(),
            std::fs::canonicalize(db.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))),
        ) {
            bases.push(folder.join(name));
        }
        // ... and by the file a symlink leads to (SQLite names its -wal after that).
        if let Ok(real) = std::fs::canonicalize(db) {
            bases.push(real);
        }
        let mut names = Vec::new();
        let mut inodes = Vec::new();
        for base in &bases {
            for (suffix, what) in [
                ("", "the results database"),
                ("-wal", "the results database's write-ahead log"),
                ("-shm", "the results database's shared-memory index"),
                ("-journal", "the results database's rollback journal"),
            ] {
                let mut p = base.clone().into_os_string();
                p.push(suffix);
                let p = PathBuf::from(p);
                let what = format!("{what} ({})", p.display());
                if let Ok(m) = std::fs::metadata(&p) {
                    inodes.push(((m.dev(), m.ino()), what.clone()));
                }
                names.push((p, what));
            }
        }
        Protected { names, inodes }
    }

    fn named(&self, path: &Path) -> Option<&str> {
        self.names.iter().find(|(p, _)| p == path).map(|(_, w)| w.as_str())
    }

    fn same_file(&self, id: Identity) -> Option<&str> {
        self.inodes.iter().find(|(i, _)| *i == id).map(|(_, w)| w.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Files whose first line is "REPORT".
    struct Report;
    impl Kind for Report {
        fn describe(&self) -> String {
            "a test report".into()
        }
        fn recognises(&self, existing: &mut File) -> bool {
            head(existing, 6) == b"REPORT"
        }
    }

    fn output<'a>(path: &'a Path, db: &'a Path, force: bool) -> Output<'a> {
        Output { path, flag: "-o", kind: &Report, force, database: Some(db) }
    }

    fn refusal(e: OutputError) -> String {
        assert!(e.usage().is_some(), "not a usage error: {e}");
        e.to_string()
    }

    #[test]
    fn a_new_file_is_written_and_a_previous_report_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let (db, out) = (dir.path().join("results.sqlite"), dir.path().join("r.txt"));
        output(&out, &db, false).check().unwrap().write(b"REPORT one").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"REPORT one");
        output(&out, &db, false).check().unwrap().write(b"REPORT two").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"REPORT two");
        // No temporary file is left.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn the_database_is_never_written_over_by_any_path() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("results.sqlite");
        // Not yet made: refused by name, with its -wal and -shm.
        for name in ["results.sqlite", "results.sqlite-wal", "results.sqlite-shm", "results.sqlite-journal"] {
            let e = refusal(output(&dir.path().join(name), &db, true).check().unwrap_err());
            assert!(e.contains("iomatrix never writes over it"), "{e}");
        }
        std::fs::write(&db, b"SQLite format 3\0").unwrap();
        std::fs::write(dir.path().join("results.sqlite-wal"), b"wal").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&db, &link).unwrap();
        let hard = dir.path().join("hard.txt");
        std::fs::hard_link(dir.path().join("results.sqlite-wal"), &hard).unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let dotted = sub.join("../results.sqlite");
        for (path, needle) in [
            (&link, "that is the results database ("),
            (&hard, "write-ahead log"),
            (&dotted, "that is the results database ("),
        ] {
            let e = refusal(output(path, &db, true).check().unwrap_err());
            assert!(e.contains(needle), "{e}");
        }
        // The database reached through a symlinked --db: its real file is protected too.
        let db_link = dir.path().join("db-link.sqlite");
        std::os::unix::fs::symlink(&db, &db_link).unwrap();
        let e = refusal(output(&db, &db_link, true).check().unwrap_err());
        assert!(e.contains("iomatrix never writes over it"), "{e}");
        assert_eq!(std::fs::read(&db).unwrap(), b"SQLite format 3\0");
    }

    #[test]
    fn the_database_is_known_by_device_and_inode_under_any_name() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("results.sqlite");
        std::fs::write(&db, b"SQLite format 3\0").unwrap();
        std::fs::write(dir.path().join("results.sqlite-wal"), b"").unwrap();
        std::fs::hard_link(&db, dir.path().join("alias.sqlite")).unwrap();
        std::os::unix::fs::symlink(&db, dir.path().join("link.sqlite")).unwrap();
        std::fs::write(dir.path().join("other.sqlite"), b"SQLite format 3\0").unwrap();
        for name in ["alias.sqlite", "link.sqlite", "results.sqlite"] {
            let what = database_file(&db, &dir.path().join(name));
            assert!(what.as_deref().is_some_and(|w| w.starts_with("the results database (")), "{name}: {what:?}");
        }
        let wal = database_file(&db, &dir.path().join("results.sqlite-wal")).unwrap();
        assert!(wal.starts_with("the results database's write-ahead log"), "{wal}");
        assert_eq!(database_file(&db, &dir.path().join("other.sqlite")), None);
        assert_eq!(database_file(&db, &dir.path().join("missing.sqlite")), None);
    }

    #[test]
    fn another_kind_of_file_is_replaced_only_with_force() {
        let dir = tempfile::tempdir().unwrap();
        let (db, out) = (dir.path().join("results.sqlite"), dir.path().join("notes.txt"));
        std::fs::write(&out, b"my notes").unwrap();
        let e = refusal(output(&out, &db, false).check().unwrap_err());
        assert!(e.contains("exists and is not a test report (8 bytes that would be lost)"), "{e}");
        assert!(e.contains("add --force"), "{e}");
        assert_eq!(std::fs::read(&out).unwrap(), b"my notes");
        output(&out, &db, true).check().unwrap().write(b"REPORT").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"REPORT");
        // An empty file holds nothing to lose.
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        output(&empty, &db, false).check().unwrap().write(b"REPORT").unwrap();
    }

    #[test]
    fn folders_fifos_devices_and_dangling_symlinks_are_refused_even_with_force() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("results.sqlite");
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere/x"), &dangling).unwrap();
        for (path, needle) in [
            (dir.path().to_path_buf(), "is a folder"),
            (fifo, "is a FIFO"),
            (PathBuf::from("/dev/null"), "is a device"),
            (dangling, "a symlink that leads to no file"),
            (dir.path().join("no/such/folder/r.txt"), "such/folder does not exist"),
        ] {
            let e = refusal(output(&path, &db, true).check().unwrap_err());
            assert!(e.contains(needle), "{path:?}: {e}");
        }
    }

    #[test]
    fn a_file_that_changed_after_the_check_is_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let (db, out) = (dir.path().join("results.sqlite"), dir.path().join("r.txt"));
        let checked = output(&out, &db, false).check().unwrap();
        std::fs::write(&out, b"someone else's").unwrap();
        let e = refusal(checked.write(b"REPORT").unwrap_err());
        assert!(e.contains("changed while iomatrix made the new file"), "{e}");
        assert_eq!(std::fs::read(&out).unwrap(), b"someone else's");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "the temporary file is removed");
    }

    #[test]
    fn a_log_is_appended_to_and_a_foreign_file_emptied_only_with_force() {
        let dir = tempfile::tempdir().unwrap();
        let (db, log) = (dir.path().join("results.sqlite"), dir.path().join("step.log"));
        output(&log, &db, false).check().unwrap().append().unwrap().write_all(b"REPORT\none\n").unwrap();
        output(&log, &db, false).check().unwrap().append().unwrap().write_all(b"two\n").unwrap();
        assert_eq!(std::fs::read(&log).unwrap(), b"REPORT\none\ntwo\n");
        std::fs::write(&log, b"someone's notes").unwrap();
        assert!(output(&log, &db, false).check().is_err());
        output(&log, &db, true).check().unwrap().append().unwrap().write_all(b"REPORT\n").unwrap();
        assert_eq!(std::fs::read(&log).unwrap(), b"REPORT\n");
        std::fs::write(&db, b"SQLite format 3\0").unwrap();
        std::fs::remove_file(&log).unwrap();
        std::fs::hard_link(&db, &log).unwrap();
        let e = refusal(output(&log, &db, true).check().unwrap_err());
        assert!(e.contains("under another name"), "{e}");
        assert_eq!(std::fs::read(&db).unwrap(), b"SQLite format 3\0");
    }

    #[test]
    fn a_replaced_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (db, out) = (dir.path().join("results.sqlite"), dir.path().join("r.txt"));
        std::fs::write(&out, b"REPORT old").unwrap();
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o600)).unwrap();
        output(&out, &db, false).check().unwrap().write(b"REPORT new").unwrap();
        assert_eq!(std::fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
