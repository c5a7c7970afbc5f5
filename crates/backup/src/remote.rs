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

/// Why a tree on a server has no extent counts, as stored and shown.
pub const NO_EXTENT_MAP: &str = "no FIEMAP over nfs:// or smb:// (the protocol has no extent map)";

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
