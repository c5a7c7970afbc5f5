//! Targets on a server reached by iomatrix's own protocol clients
//! (`nfs://host[:port]/export[/path]`, `smb://[user@]host[:port]/share[/path]`),
//! and the working folder made there.

use crate::workdir::{Found, Marker};
use iomatrix_backend::{RecordIo, RemoteFile, RemoteFs, RemoteKind};
use iomatrix_core::UsageError;
use std::path::Path;
use std::time::Duration;

/// How long any one call to a server may take before the client gives up.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// A `--target` that names a server rather than a local folder.
pub fn url_of(target: &Path) -> Option<&str> {
    target.to_str().filter(|t| t.starts_with("nfs://") || t.starts_with("smb://"))
}

/// The parsed target, checked before anything runs.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub enum RemoteTarget {
    Nfs(iomatrix_nfs::NfsUrl),
    Smb(iomatrix_smb::SmbUrl),
}

impl RemoteTarget {
    pub fn parse(text: &str) -> Result<RemoteTarget, UsageError> {
        if text.starts_with("smb://") {
            return iomatrix_smb::SmbUrl::parse(text, iomatrix_smb::password_from_environment)
                .map(RemoteTarget::Smb)
                .map_err(|e| UsageError::new(format!("--target: {e}")));
        }
        iomatrix_nfs::NfsUrl::parse(text).map(RemoteTarget::Nfs).map_err(|e| UsageError::new(format!("--target: {e}")))
    }

    /// The target as reports show it (never with a password).
    pub fn url(&self) -> String {
        match self {
            RemoteTarget::Nfs(url) => url.to_string(),
            RemoteTarget::Smb(url) => url.to_string(),
        }
    }

    /// A fresh session: each client has its own, as separate machines would.
    pub fn connect(&self) -> std::io::Result<Box<dyn RemoteFs>> {
        match self {
            RemoteTarget::Nfs(url) => iomatrix_nfs::NfsFs::connect(url, CALL_TIMEOUT)
                .map(|fs| Box::new(fs) as Box<dyn RemoteFs>)
                .map_err(|e| std::io::Error::other(e.0)),
            RemoteTarget::Smb(url) => {
                // The password is never sent to other MPI ranks: each reads its own environment.
                let mut url = url.clone();
                if url.password.is_empty() {
                    url.password =
                        iomatrix_smb::password_from_environment().map_err(std::io::Error::other)?.unwrap_or_default();
                }
                iomatrix_smb::SmbFs::connect(&url, CALL_TIMEOUT).map(|fs| Box::new(fs) as Box<dyn RemoteFs>)
            }
        }
    }
}

/// Each client's way to connect its own session to the server; an error
/// where the target is local (the suites call it only for a server).
pub fn connector(target: Option<&RemoteTarget>) -> impl Fn() -> std::io::Result<Box<dyn RemoteFs>> + Sync + '_ {
    move || match target {
        Some(target) => target.connect(),
        None => Err(std::io::Error::other("no remote target")),
    }
}

/// The run's working folder on the server, `iomatrix-PID-MS`, removed at
/// the end with everything the clients left in it (unless kept).
pub struct RemoteWorkDir {
    fs: Box<dyn RemoteFs>,
    pub name: String,
    keep: bool,
    marker: Marker,
}

impl RemoteWorkDir {
    pub fn create(mut fs: Box<dyn RemoteFs>, keep: bool) -> anyhow::Result<RemoteWorkDir> {
        let name = crate::workdir::fresh_name();
        fs.mkdir(&name).map_err(|e| {
            UsageError::new(format!(
                "cannot create a working folder on {}: {e}; choose an export and path you can write to",
                fs.target()
            ))
        })?;
        let mut dir = RemoteWorkDir { fs, name, keep, marker: Marker::for_this_process(keep) };
        dir.write_marker().map_err(|e| {
            UsageError::new(format!(
                "cannot write in {}: {e}; choose an export and path you can write to",
                dir.target()
            ))
        })?;
        Ok(dir)
    }

    /// Names the run in the marker, once the database gave it an id.
    pub fn record_run(&mut self, run_id: i64) -> std::io::Result<()> {
        self.marker.run_id = Some(run_id);
        self.write_marker()
    }

    fn write_marker(&mut self) -> std::io::Result<()> {
        let path = format!("{}/{}", self.name, crate::workdir::MARKER);
        write_file(self.fs.as_mut(), &path, self.marker.to_text().as_bytes())
    }

    pub fn target(&self) -> String {
        format!("{}/{}", self.fs.target(), self.name)
    }

    pub fn describe(&self) -> serde_json::Value {
        self.fs.describe()
    }

    pub fn kept(&self) -> bool {
        self.keep
    }
}

/// Writes a whole (small) file, replacing what was there.
fn write_file(fs: &mut dyn RemoteFs, path: &str, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = RemoteFile::create(fs, path)?;
    file.write_at(bytes, 0)?;
    file.close()
}

/// Reads a small file whole (a marker), refusing one too large to be it.
fn read_small_file(fs: &mut dyn RemoteFs, path: &str) -> std::io::Result<String> {
    let entry = fs.stat(path)?;
    if entry.kind != RemoteKind::File || entry.size > 64 * 1024 {
        return Err(std::io::Error::other("it is not a small regular file"));
    }
    let mut buf = vec![0; entry.size as usize];
    let mut file = RemoteFile::open(fs, path)?;
    let read = file.read_at(&mut buf, 0);
    file.close()?;
    read?;
    String::from_utf8(buf).map_err(std::io::Error::other)
}

/// The `iomatrix-*` entries directly in the target's folder on the server,
/// judged as [`crate::workdir::survey`] judges local ones.
pub fn survey(fs: &mut dyn RemoteFs) -> std::io::Result<Vec<Found>> {
    let mut found = Vec::new();
    for entry in fs.read_dir("")? {
        if !entry.name.starts_with(crate::workdir::PREFIX) {
            continue;
        }
        let is_folder = entry.kind == RemoteKind::Folder;
        let marker = if is_folder {
            read_small_file(fs, &format!("{}/{}", entry.name, crate::workdir::MARKER))
        } else {
            Err(std::io::Error::from(std::io::ErrorKind::NotFound))
        };
        found.push(Found::judge(&entry.name, is_folder, marker));
    }
    Ok(found)
}

/// Removes a working folder on the server, its marker last: a folder only
/// partly removed is still recognised by the next `clean`.
pub fn remove_working_folder(fs: &mut dyn RemoteFs, name: &str) -> std::io::Result<()> {
    let marker = crate::workdir::MARKER;
    for entry in fs.read_dir(name)? {
        let below = format!("{name}/{}", entry.name);
        match entry.kind {
            RemoteKind::Folder => remove_tree(fs, &below)?,
            _ if entry.name == marker => {}
            _ => fs.remove(&below)?,
        }
    }
    fs.remove(&format!("{name}/{marker}"))?;
    fs.rmdir(name)
}

/// Removes `path` and everything below it. Stops at the first call that
/// fails: on a server that is gone each call would wait out its timeout.
/// A symlink is removed as a name, never followed.
fn remove_tree(fs: &mut dyn RemoteFs, path: &str) -> std::io::Result<()> {
    for entry in fs.read_dir(path)? {
        let below = format!("{path}/{}", entry.name);
        match entry.kind {
            RemoteKind::Folder => remove_tree(fs, &below)?,
            _ => fs.remove(&below)?,
        }
    }
    fs.rmdir(path)
}

impl Drop for RemoteWorkDir {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        if let Err(e) = remove_working_folder(self.fs.as_mut(), &self.name) {
            eprintln!("iomatrix: warning: could not remove the working folder {}: {e}", self.target());
        }
    }
}
