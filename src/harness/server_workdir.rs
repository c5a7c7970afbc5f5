//! The run's working folder on a server, made and removed through
//! iomatrix's own protocol client, and the leftovers `clean` finds there.

use super::workdir::{Found, Marker};
use iomatrix_backend::{RecordIo, RemoteFile, RemoteFs, RemoteKind};
use iomatrix_core::UsageError;

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
        let name = super::workdir::fresh_name();
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
        let path = format!("{}/{}", self.name, super::workdir::MARKER);
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
/// judged as [`super::workdir::survey`] judges local ones.
pub fn survey(fs: &mut dyn RemoteFs) -> std::io::Result<Vec<Found>> {
    let mut found = Vec::new();
    for entry in fs.read_dir("")? {
        if !entry.name.starts_with(super::workdir::PREFIX) {
            continue;
        }
        let is_folder = entry.kind == RemoteKind::Folder;
        let marker = if is_folder {
            read_small_file(fs, &format!("{}/{}", entry.name, super::workdir::MARKER))
        } else {
            Err(std::io::Error::from(std::io::ErrorKind::NotFound))
        };
        // iomatrix's own protocol clients take no locks: the marker's boot, PID namespace and pid decide.
        let no_lock = iomatrix_guard::LockState::Unknown("a folder on a server, reached without locks".into());
        found.push(Found::judge(&entry.name, is_folder, marker, &no_lock));
    }
    Ok(found)
}

/// Removes a working folder on the server, its marker last: a folder only
/// partly removed is still recognised by the next `clean`.
pub fn remove_working_folder(fs: &mut dyn RemoteFs, name: &str) -> std::io::Result<()> {
    let marker = super::workdir::MARKER;
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
