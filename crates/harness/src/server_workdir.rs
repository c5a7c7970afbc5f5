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

    /// The server's folder the working folder is in: what `iomatrix clean` takes.
    pub fn server(&self) -> String {
        self.fs.target()
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

/// Reads a small file whole (a marker), refusing one too large to be it: the buffer is sized by
/// what the server says, so only after the bound the local reader keeps.
fn read_small_file(fs: &mut dyn RemoteFs, path: &str) -> std::io::Result<String> {
    let entry = fs.stat(path)?;
    if entry.kind != RemoteKind::File || entry.size > super::workdir::MARKER_MAX_BYTES {
        return Err(std::io::Error::other(format!(
            "it is not a small regular file (the server says: {:?} of {} bytes; a marker is at most {})",
            entry.kind,
            entry.size,
            super::workdir::MARKER_MAX_BYTES
        )));
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

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_backend::RemoteEntry;
    use std::io;

    /// A server whose only file is a marker of whatever size it claims; reads fill with `x`.
    struct Claims {
        size: u64,
        read: Vec<usize>,
    }

    impl RemoteFs for Claims {
        fn target(&self) -> String {
            "nfs://hostile:111/export".into()
        }
        fn describe(&self) -> serde_json::Value {
            serde_json::Value::Null
        }
        fn mkdir(&mut self, _: &str) -> io::Result<()> {
            unreachable!()
        }
        fn rmdir(&mut self, _: &str) -> io::Result<()> {
            unreachable!()
        }
        fn create(&mut self, _: &str) -> io::Result<u64> {
            unreachable!()
        }
        fn create_new(&mut self, _: &str) -> io::Result<u64> {
            unreachable!()
        }
        fn stat(&mut self, path: &str) -> io::Result<RemoteEntry> {
            Ok(RemoteEntry { name: path.into(), kind: RemoteKind::File, size: self.size })
        }
        fn read_dir(&mut self, _: &str) -> io::Result<Vec<RemoteEntry>> {
            unreachable!()
        }
        fn open(&mut self, _: &str) -> io::Result<u64> {
            Ok(1)
        }
        fn remove(&mut self, _: &str) -> io::Result<()> {
            unreachable!()
        }
        fn read_at(&mut self, _: u64, buf: &mut [u8], _: u64) -> io::Result<()> {
            self.read.push(buf.len());
            buf.fill(b'x');
            Ok(())
        }
        fn write_at(&mut self, _: u64, _: &[u8], _: u64) -> io::Result<()> {
            unreachable!()
        }
        fn flush(&mut self, _: u64) -> io::Result<()> {
            Ok(())
        }
        fn close(&mut self, _: u64) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_marker_the_server_says_is_huge_is_refused_before_any_buffer_is_sized_by_it() {
        let mut fs = Claims { size: 1 << 40, read: Vec::new() };
        let e = read_small_file(&mut fs, "iomatrix-1-2/.iomatrix-run").unwrap_err();
        assert!(e.to_string().contains("1099511627776 bytes; a marker is at most 65536"), "{e}");
        assert!(fs.read.is_empty(), "nothing was read, no buffer made");
        let mut fs = Claims { size: super::super::workdir::MARKER_MAX_BYTES + 1, read: Vec::new() };
        assert!(read_small_file(&mut fs, "m").is_err());
        let mut fs = Claims { size: 300, read: Vec::new() };
        assert_eq!(read_small_file(&mut fs, "m").unwrap(), "x".repeat(300));
        assert_eq!(fs.read, [300]);
    }
}
