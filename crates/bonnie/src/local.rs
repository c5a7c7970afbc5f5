//! The client's files in a local folder (any mounted file system): the data
//! file through a descriptor, the file tests through a descriptor of their
//! folder (openat, fstatat, unlinkat), as bonnie++ works inside the folder
//! after a chdir.

use crate::error::io_error;
use crate::io::{close_checked, stdio_buffer_size};
use crate::place::{Access, DataFile, DataPlace, FilesPlace};
use crate::BonnieError;
use rustix::fs::{AtFlags, Mode, OFlags};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

impl DataFile for File {
    fn sync(&mut self) -> io::Result<()> {
        self.sync_all()
    }

    fn close(self: Box<Self>) -> io::Result<()> {
        close_checked(*self)
    }

    fn stdio_buffer(&self, _writing: bool) -> usize {
        stdio_buffer_size(self)
    }
}

pub(crate) struct LocalData {
    pub(crate) path: PathBuf,
}

impl DataPlace for LocalData {
    fn location(&self) -> String {
        self.path.display().to_string()
    }

    fn open(
        &self,
        what: &str,
        access: Access,
        direct: bool,
        _own_session: bool,
    ) -> Result<Box<dyn DataFile>, BonnieError> {
        let what = if direct { format!("{what} open with O_DIRECT") } else { format!("{what} open") };
        let here = self.location();
        let mut o = OpenOptions::new();
        match access {
            Access::Create => {
                match std::fs::remove_file(&self.path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(io_error(&format!("{what}: removing the old file"), &here, None, &e)),
                }
                o.read(true).write(true).create_new(true);
            }
            Access::ReadWrite => {
                o.read(true).write(true);
            }
            Access::Read => {
                o.read(true);
            }
        }
        if direct {
            o.custom_flags(libc::O_DIRECT);
        }
        let file = o.mode(0o600).open(&self.path).map_err(|e| io_error(&what, &here, None, &e))?;
        Ok(Box::new(file))
    }

    fn remove(&self) -> Result<(), BonnieError> {
        std::fs::remove_file(&self.path).map_err(|e| BonnieError(format!("removing {}: {e}", self.location())))
    }
}

pub(crate) struct LocalFiles {
    dir: PathBuf,
    fd: Option<OwnedFd>,
}

impl LocalFiles {
    pub(crate) fn new(dir: PathBuf) -> LocalFiles {
        LocalFiles { dir, fd: None }
    }

    fn err(&self, what: &str, e: impl Into<io::Error>) -> BonnieError {
        io_error(what, &self.location(), None, &e.into())
    }

    fn err_in(&self, what: &str, name: &str, e: impl Into<io::Error>) -> BonnieError {
        io_error(what, &self.dir.join(name).display().to_string(), None, &e.into())
    }

    fn fd(&self) -> Result<&OwnedFd, BonnieError> {
        self.fd.as_ref().ok_or_else(|| BonnieError(format!("{} is not open (a bug)", self.location())))
    }
}

impl FilesPlace for LocalFiles {
    fn location(&self) -> String {
        self.dir.display().to_string()
    }

    fn make(&mut self) -> Result<(), BonnieError> {
        std::fs::create_dir(&self.dir).map_err(|e| self.err("making the folder", e))
    }

    fn open(&mut self) -> Result<(), BonnieError> {
        let fd = rustix::fs::open(&self.dir, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
            .map_err(|e| self.err("opening the folder", e))?;
        self.fd = Some(fd);
        Ok(())
    }

    fn create(&mut self, name: &str, size: u64, data: &[u8], sync: bool) -> Result<(), BonnieError> {
        let dir = self.fd()?;
        let fd = rustix::fs::openat(
            dir,
            name,
            OFlags::CREATE | OFlags::WRONLY | OFlags::TRUNC | OFlags::CLOEXEC,
            Mode::from_bits_truncate(0o600),
        )
        .map_err(|e| self.err_in("create", name, e))?;
        let mut file = File::from(fd);
        let mut left = size;
        while left > 0 {
            let n = left.min(data.len() as u64) as usize;
            file.write_all(data.get(..n).unwrap_or(&[])).map_err(|e| self.err_in("create write", name, e))?;
            left -= n as u64;
        }
        if sync {
            file.sync_all().map_err(|e| self.err_in("create fsync", name, e))?;
            rustix::fs::fsync(dir).map_err(|e| self.err("fsync after create", e))?;
        }
        close_checked(file).map_err(|e| self.err_in("create close", name, e))
    }

    fn stat(&mut self, name: &str, buf: &mut [u8]) -> Result<u64, BonnieError> {
        let dir = self.fd()?;
        let st = rustix::fs::statat(dir, name, AtFlags::empty()).map_err(|e| self.err_in("stat", name, e))?;
        let size = st.st_size.max(0) as u64;
        if size > 0 {
            let fd = rustix::fs::openat(dir, name, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
                .map_err(|e| self.err_in("stat open", name, e))?;
            let mut file = File::from(fd);
            let mut left = size;
            while left > 0 {
                let n = left.min(buf.len() as u64) as usize;
                let piece = buf.get_mut(..n).unwrap_or(&mut []);
                file.read_exact(piece).map_err(|e| self.err_in("stat read", name, e))?;
                left -= n as u64;
            }
            close_checked(file).map_err(|e| self.err_in("stat close", name, e))?;
        }
        Ok(size)
    }

    fn list(&mut self, what: &str) -> Result<Vec<String>, BonnieError> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&self.dir).map_err(|e| self.err(what, e))? {
            let entry = entry.map_err(|e| self.err(what, e))?;
            if let Some(name) = entry.file_name().to_str().filter(|n| !n.starts_with('.')) {
                names.push(name.to_string());
            }
        }
        Ok(names)
    }

    fn delete(&mut self, name: &str, sync: bool) -> Result<(), BonnieError> {
        let dir = self.fd()?;
        rustix::fs::unlinkat(dir, name, AtFlags::empty()).map_err(|e| self.err_in("delete", name, e))?;
        if sync {
            rustix::fs::fsync(dir).map_err(|e| self.err("fsync after delete", e))?;
        }
        Ok(())
    }

    fn remove(&mut self) -> Result<(), BonnieError> {
        if let Some(fd) = self.fd.take() {
            close_checked(File::from(fd)).map_err(|e| self.err("closing the folder", e))?;
        }
        std::fs::remove_dir(&self.dir).map_err(|e| self.err("removing the folder", e))
    }
}
