//! A tree on a server, walked through iomatrix's own protocol client (NFS
//! READDIRPLUS, SMB QUERY_DIRECTORY) instead of the local file system: the
//! other side of the walk's seam ([`crate::walk::TreeSource`]).
//!
//! What differs from a local walk, and is stated with every run: no FIEMAP
//! (the protocols have no extent map); no client cache to drop (every read
//! goes to the server, whose own cache is out of reach); each file is read
//! up to the size the listing gave; the listing carries no link count or
//! file id, so a file with several names is read once per name; symlinks
//! are what the server shows (NFS lists them, and they are counted, never
//! followed; Samba shows a link inside the share as what it points to and
//! hides one leading out of it). A server that stops answering ends the
//! walk at the first call that finds it gone, so no walk waits out more
//! than one call's timeout per file already under way.

use crate::walk::{BeforeRead, Flow, Found, Mapping, Stage, TreeCounts, TreeSource};
use crate::BackupError;
use iomatrix_backend::{RemoteFs, RemoteKind};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The longest path below the target a walk on a server enters (Linux's PATH_MAX): a server
/// whose folders never end (a folder that lists itself) would otherwise have the walk go down,
/// and hold each level's listing, without end.
pub const MAX_PATH_BYTES: usize = 4096;

pub use iomatrix_extents::NO_EXTENT_MAP;

/// One client's session to the server and the tree it walks there.
pub(crate) struct RemoteTree {
    fs: Box<dyn RemoteFs>,
    /// Below the target's folder: `""` for the folder itself, `client-R` for client R of many.
    root: String,
    /// Set once the server stopped answering.
    lost: Option<String>,
}

impl RemoteTree {
    /// The tree `root` (below the target's folder) of the session `fs`,
    /// checked to be a folder there.
    pub fn open(mut fs: Box<dyn RemoteFs>, root: &str) -> Result<RemoteTree, BackupError> {
        let shown = shown(fs.as_ref(), root);
        match fs.stat(root) {
            Ok(entry) if entry.kind == RemoteKind::Folder => Ok(RemoteTree { fs, root: root.to_string(), lost: None }),
            Ok(_) => Err(BackupError(format!("{} is not a folder", shown.display()))),
            Err(e) => Err(BackupError(format!("{}: {e}", shown.display()))),
        }
    }
}

/// The target's URL joined with `below`, as reports show a path.
fn shown(fs: &dyn RemoteFs, below: &str) -> PathBuf {
    let target = fs.target();
    PathBuf::from(if below.is_empty() { target } else { format!("{}/{below}", target.trim_end_matches('/')) })
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// The call waited out its timeout: the server (or the link) is gone.
fn unanswered(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::TimedOut || e.to_string().contains("no answer within")
}

/// The kind an error is counted under: the server's status where it gave
/// one (`NFS3ERR_NOENT`, `STATUS_ACCESS_DENIED`), else the error's kind;
/// the whole message stays in the examples.
fn kind_of(e: &io::Error) -> String {
    let text = e.to_string();
    for prefix in ["NFS3ERR_", "STATUS_"] {
        if let Some(at) = text.find(prefix) {
            let status: String =
                text[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>();
            return status;
        }
    }
    if unanswered(e) {
        return "no answer within the call timeout".into();
    }
    e.kind().to_string()
}

impl TreeSource for RemoteTree {
    /// Depth first, each folder entered where its listing names it (the
    /// order a local walk reads), the server's order within a folder.
    fn walk_files(
        &mut self,
        stop: &AtomicBool,
        counts: &mut TreeCounts,
        each: &mut dyn FnMut(&mut Self, &Found, &mut TreeCounts) -> Flow,
    ) -> Result<bool, BackupError> {
        let listed = self
            .fs
            .read_dir(&self.root)
            .map_err(|e| BackupError(format!("listing {}: {e}", shown(self.fs.as_ref(), &self.root).display())))?;
        let mut pending = vec![(self.root.clone(), listed.into_iter())];
        while let Some((dir, entries)) = pending.last_mut() {
            if stop.load(Ordering::Relaxed) {
                return Ok(true);
            }
            let Some(entry) = entries.next() else {
                pending.pop();
                continue;
            };
            let below = join(dir, &entry.name);
            match entry.kind {
                RemoteKind::Folder if below.len() > MAX_PATH_BYTES => {
                    counts.directories += 1;
                    let path = shown(self.fs.as_ref(), &below);
                    let e = io::Error::other(format!(
                        "a path longer than {MAX_PATH_BYTES} bytes (Linux's PATH_MAX): not entered (folders on the \
                         server that never end?)"
                    ));
                    counts.errors.add_with_detail("walk: path too long".into(), &path, e.to_string());
                }
                RemoteKind::Folder => {
                    counts.directories += 1;
                    match self.fs.read_dir(&below) {
                        Ok(listed) => pending.push((below, listed.into_iter())),
                        Err(e) => {
                            let path = shown(self.fs.as_ref(), &below);
                            if let Flow::Stop = self.failed(counts, Stage::Walk, &path, &e) {
                                return Ok(true);
                            }
                        }
                    }
                }
                RemoteKind::Symlink => counts.skipped.symlinks += 1,
                RemoteKind::Other => counts.skipped.other += 1,
                RemoteKind::File => {
                    let found = Found { path: shown(self.fs.as_ref(), &below), below_root: below, size: entry.size };
                    if let Flow::Stop = each(self, &found, counts) {
                        return Ok(true);
                    }
                }
            }
        }
        Ok(false)
    }

    fn before_read(&mut self, _file: &Found) -> io::Result<BeforeRead> {
        Ok(BeforeRead { noatime: true, extents: Mapping::NoExtentMap(NO_EXTENT_MAP) })
    }

    /// Open (NFS LOOKUP, SMB CREATE for reading), READs of `buf.len()` up to
    /// the listed size, close (SMB CLOSE; nothing to send for NFS).
    fn read_whole(
        &mut self,
        file: &Found,
        _before: &BeforeRead,
        buf: &mut [u8],
        stop: &AtomicBool,
    ) -> Result<Option<(u64, u64)>, (Stage, io::Error, u64)> {
        let fs = self.fs.as_mut();
        let handle = fs.open_read(&file.below_root).map_err(|e| (Stage::Open, e, 0))?;
        let (mut offset, mut reads) = (0u64, 0u64);
        while offset < file.size {
            if stop.load(Ordering::Relaxed) {
                let _ = fs.close(handle);
                return Ok(None);
            }
            let n = (file.size - offset).min(buf.len() as u64) as usize;
            if let Err(e) = fs.read_at(handle, &mut buf[..n], offset) {
                // Not on a server that is gone: that close would wait out the timeout again.
                if !unanswered(&e) {
                    let _ = fs.close(handle);
                }
                return Err((Stage::Read, e, offset));
            }
            offset += n as u64;
            reads += 1;
        }
        fs.close(handle).map_err(|e| (Stage::Close, e, offset))?;
        Ok(Some((offset, reads)))
    }

    /// Counts the error by the server's status; then, unless the server
    /// plainly answered (the call failed on this file alone, which a look
    /// at the tree's root proves), ends the walk: every further call would
    /// fail too, each after its timeout.
    fn failed(&mut self, counts: &mut TreeCounts, stage: Stage, path: &Path, error: &io::Error) -> Flow {
        counts.errors.add_with_detail(format!("{}: {}", stage.name(), kind_of(error)), path, error.to_string());
        if self.lost.is_some() {
            return Flow::Stop;
        }
        if !unanswered(error) && self.fs.stat(&self.root).is_ok() {
            return Flow::Go;
        }
        self.lost = Some(format!(
            "the server of {} stopped answering; the walk ended at the {} of {}: {error} (files read before are \
             counted, files not reached are not)",
            self.fs.target(),
            stage.name(),
            path.display()
        ));
        Flow::Stop
    }

    fn lost(&self) -> Option<String> {
        self.lost.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::walk::{walk, Prepared};
    use crate::BackupPlan;
    use iomatrix_backend::RemoteEntry;
    use std::collections::BTreeMap;
    use std::time::Instant;

    /// A server in memory: folders listed in the order given, files by
    /// size; `vanished` files are listed but gone when opened; reads of
    /// `dies_at` and every call after it go unanswered.
    #[derive(Default)]
    struct FakeServer {
        folders: BTreeMap<String, Vec<RemoteEntry>>,
        vanished: Vec<String>,
        dies_at: Option<String>,
        dead: bool,
        open: BTreeMap<u64, String>,
        /// Every file opened, in order (shared: the walk owns the fake).
        opened: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
        /// A folder whose listing names itself and a file, at every depth.
        endless: Option<String>,
    }

    fn entry(name: &str, kind: RemoteKind, size: u64) -> RemoteEntry {
        RemoteEntry { name: name.into(), kind, size }
    }

    impl FakeServer {
        fn answer(&self) -> io::Result<()> {
            if self.dead {
                Err(io::Error::new(io::ErrorKind::TimedOut, "nfs://fake:111/export: no answer within 30 s"))
            } else {
                Ok(())
            }
        }
    }

    impl RemoteFs for FakeServer {
        fn target(&self) -> String {
            "nfs://fake:111/export".into()
        }
        fn describe(&self) -> serde_json::Value {
            serde_json::Value::Null
        }
        fn mkdir(&mut self, _: &str) -> io::Result<()> {
            unreachable!("the walk makes nothing")
        }
        fn rmdir(&mut self, _: &str) -> io::Result<()> {
            unreachable!("the walk removes nothing")
        }
        fn create(&mut self, _: &str) -> io::Result<u64> {
            unreachable!("the walk writes nothing")
        }
        fn create_new(&mut self, _: &str) -> io::Result<u64> {
            unreachable!("the walk writes nothing")
        }
        fn stat(&mut self, path: &str) -> io::Result<RemoteEntry> {
            self.answer()?;
            if self.folders.contains_key(path) {
                Ok(entry(path, RemoteKind::Folder, 0))
            } else {
                Err(io::Error::new(io::ErrorKind::NotFound, format!("{path}: NFS3ERR_NOENT")))
            }
        }
        fn read_dir(&mut self, path: &str) -> io::Result<Vec<RemoteEntry>> {
            self.answer()?;
            if let Some(name) = self.endless.as_ref().filter(|name| path.ends_with(name.as_str())) {
                return Ok(vec![entry(name, RemoteKind::Folder, 0), entry("f", RemoteKind::File, 1)]);
            }
            Ok(self.folders[path].clone())
        }
        fn open(&mut self, _: &str) -> io::Result<u64> {
            unreachable!("the walk opens for reading only")
        }
        fn open_read(&mut self, path: &str) -> io::Result<u64> {
            self.answer()?;
            if self.vanished.iter().any(|v| v == path) {
                return Err(io::Error::new(io::ErrorKind::NotFound, format!("LOOKUP {path}: NFS3ERR_NOENT")));
            }
            let mut opened = self.opened.lock().unwrap();
            opened.push(path.to_string());
            let handle = opened.len() as u64;
            self.open.insert(handle, path.to_string());
            Ok(handle)
        }
        fn remove(&mut self, _: &str) -> io::Result<()> {
            unreachable!("the walk removes nothing")
        }
        fn read_at(&mut self, file: u64, _: &mut [u8], _: u64) -> io::Result<()> {
            if self.dies_at.as_ref() == self.open.get(&file) {
                self.dead = true;
            }
            self.answer()
        }
        fn write_at(&mut self, _: u64, _: &[u8], _: u64) -> io::Result<()> {
            unreachable!("the walk writes nothing")
        }
        fn flush(&mut self, _: u64) -> io::Result<()> {
            unreachable!("the walk writes nothing")
        }
        fn close(&mut self, file: u64) -> io::Result<()> {
            self.open.remove(&file);
            self.answer()
        }
    }

    /// `root`: a (100 bytes), sub/ (b: 5000, c: 0), link, gone (listed, vanished), d (10).
    fn server() -> FakeServer {
        let mut s = FakeServer::default();
        s.folders.insert(
            String::new(),
            vec![
                entry("a", RemoteKind::File, 100),
                entry("sub", RemoteKind::Folder, 0),
                entry("link", RemoteKind::Symlink, 0),
                entry("gone", RemoteKind::File, 7),
                entry("d", RemoteKind::File, 10),
            ],
        );
        s.folders.insert("sub".into(), vec![entry("b", RemoteKind::File, 5000), entry("c", RemoteKind::File, 0)]);
        s.vanished.push("gone".into());
        s
    }

    fn walk_fake(fake: FakeServer) -> (crate::BackupResult, Vec<String>) {
        let opened = fake.opened.clone();
        let plan = BackupPlan { read_size: 4096, cold: false, ..BackupPlan::new("nfs://fake:111/export".into()) };
        let mut tree = RemoteTree::open(Box::new(fake), "").unwrap();
        let stop = AtomicBool::new(false);
        let walked = walk(&mut tree, &plan, &Prepared::default(), Instant::now(), &stop, &mut |_| {}).unwrap();
        let opened = opened.lock().unwrap().clone();
        (walked.result, opened)
    }

    #[test]
    fn a_tree_on_a_server_is_walked_in_listing_order_and_a_vanished_file_is_counted() {
        let (r, opened) = walk_fake(server());
        assert_eq!(opened, ["a", "sub/b", "sub/c", "d"], "depth first, a folder entered where it is listed");
        assert_eq!((r.files, r.bytes, r.reads), (4, 5110, 1 + 2 + 1));
        assert_eq!((r.directories, r.skipped.symlinks), (1, 1));
        assert_eq!(r.errors.by_kind.get("open: NFS3ERR_NOENT"), Some(&1), "{:?}", r.errors);
        assert!(r.errors.examples[0].path.ends_with("export/gone"), "{:?}", r.errors.examples);
        // No extent map for any file listed, the vanished one included (as a local file FIEMAP
        // mapped and then failed to read stays in the extents).
        assert_eq!((r.extents.files_without_fiemap, r.extents.no_fiemap_errno.as_str()), (5, NO_EXTENT_MAP));
        assert!(!r.interrupted && r.server_lost.is_none());
    }

    #[test]
    fn a_server_that_stops_answering_ends_the_walk_and_keeps_the_files_read() {
        let mut fake = server();
        fake.dies_at = Some("sub/b".into());
        let (r, opened) = walk_fake(fake);
        assert_eq!(opened, ["a", "sub/b"], "nothing after the server is gone");
        assert_eq!((r.files, r.bytes), (1, 100), "a, read before sub/b");
        assert_eq!(r.errors.total, 1);
        assert_eq!(r.errors.by_kind.get("read: no answer within the call timeout"), Some(&1), "{:?}", r.errors);
        let lost = r.server_lost.unwrap();
        assert!(lost.contains("nfs://fake:111/export stopped answering") && lost.contains("sub/b"), "{lost}");
        assert!(!r.interrupted);
    }

    #[test]
    fn folders_on_a_server_that_never_end_are_entered_to_path_max_and_no_further() {
        let mut fake = server();
        fake.endless = Some("sub".into());
        let (r, opened) = walk_fake(fake);
        // sub, sub/sub, ...: each level 4 bytes, entered while its path fits in PATH_MAX.
        let levels = MAX_PATH_BYTES / 4;
        assert_eq!(r.directories as usize, levels + 1, "the levels entered, and the one refused");
        assert_eq!(opened.iter().filter(|p| p.ends_with("/f") || *p == "sub/f").count(), levels);
        assert_eq!(r.errors.by_kind.get("walk: path too long"), Some(&1), "{:?}", r.errors);
        assert!(r.errors.examples.iter().any(|e| e.error.contains("PATH_MAX")), "{:?}", r.errors.examples);
    }

    #[test]
    fn a_root_that_is_missing_or_a_file_is_refused() {
        let e = RemoteTree::open(Box::new(server()), "nowhere").err().unwrap();
        assert!(e.0.contains("nfs://fake:111/export/nowhere") && e.0.contains("NFS3ERR_NOENT"), "{e}");
        let mut fake = server();
        fake.folders.insert("sub".into(), Vec::new());
        assert!(RemoteTree::open(Box::new(fake), "sub").is_ok());
    }

    #[test]
    fn errors_are_counted_by_the_servers_status() {
        let e = io::Error::other("nfs://h:111/export: LOOKUP /a/b: NFS3ERR_NOENT");
        assert_eq!(kind_of(&e), "NFS3ERR_NOENT");
        let e = io::Error::other("smb://u@h/share: opening a: Received status STATUS_ACCESS_DENIED (0xc0000022)");
        assert_eq!(kind_of(&e), "STATUS_ACCESS_DENIED");
        let e = io::Error::new(io::ErrorKind::TimedOut, "nfs://h:111/export: READ /a at byte 0: no answer within 30 s");
        assert!(unanswered(&e));
        assert_eq!(kind_of(&e), "no answer within the call timeout");
        let e = io::Error::other("smb://u@h/share: READ at byte 0: no answer within 30 s");
        assert!(unanswered(&e));
        assert_eq!(kind_of(&io::Error::new(io::ErrorKind::UnexpectedEof, "x")), "unexpected end of file");
        assert_eq!(join("", "a"), "a");
        assert_eq!(join("client-1/a", "b"), "client-1/a/b");
    }
}
