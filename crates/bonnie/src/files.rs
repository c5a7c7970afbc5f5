//! bonnie++'s file tests: create, stat ("read") and delete many files in
//! one folder, first in sequential order, then in random order.
//!
//! As in bonnie++:
//! - Sequential names are a 7-digit sequence number followed by 0..12
//!   random letters/digits, random names the other way round, so files
//!   created one after another land at random places in a sorted directory.
//! - Sequential stat and delete walk the folder in readdir order (what
//!   the file system gives back), and check that every file is found.
//!   Random stat and delete go through the names in a fresh random order.
//! - Stat also reads a file's data when it has any (`-n N:MAX:MIN`).
//! - The folder is made before the create timing and removed inside the
//!   delete timing.
//! - Under `-b`, each created file and the folder are fsync'd, and the
//!   folder after each delete.
//!
//! Names are relative to a descriptor of the folder (openat, fstatat,
//! unlinkat), as bonnie++ works inside the folder after a chdir.

use crate::io::{close_checked, derive_seed, Rng};
use crate::plan::BonniePlan;
use crate::runner::{figures, io_error, Ready};
use crate::{BonnieError, BonnieResult, BonnieTest};
use iomatrix_backend::AlignedBuf;
use iomatrix_stats::Span;
use rustix::fs::{AtFlags, Mode, OFlags};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// bonnie++'s RandExtraLen: random characters added to each name.
const RAND_EXTRA_LEN: u64 = 12;
const NAME_CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
/// Reads and writes of file data go in pieces of this size (bonnie++'s
/// default file chunk).
const FILE_CHUNK: usize = 8192;

pub(crate) struct FileTests<'a> {
    plan: &'a BonniePlan,
    stop: &'a AtomicBool,
    dir: PathBuf,
    /// Names made by the last create test, for the random stat and delete.
    names: Vec<String>,
    buf: AlignedBuf,
}

impl<'a> FileTests<'a> {
    pub(crate) fn new(plan: &'a BonniePlan, stop: &'a AtomicBool, dir: PathBuf) -> Self {
        FileTests { plan, stop, dir, names: Vec::new(), buf: AlignedBuf::new(FILE_CHUNK) }
    }

    pub(crate) fn run(
        &mut self,
        test: BonnieTest,
        repeat: u32,
        ready: &mut Ready<'_>,
    ) -> Result<Option<BonnieResult>, BonnieError> {
        match test {
            BonnieTest::SeqCreate => self.create(test, repeat, false, ready),
            BonnieTest::RandomCreate => self.create(test, repeat, true, ready),
            BonnieTest::SeqStat => self.stat_sequential(repeat, ready),
            BonnieTest::RandomStat => self.stat_random(repeat, ready),
            BonnieTest::SeqDelete => self.delete_sequential(repeat, ready),
            BonnieTest::RandomDelete => self.delete_random(repeat, ready),
            other => Err(BonnieError(format!("{other} is a data test, not a file test"))),
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn err(&self, what: &str, e: impl Into<io::Error>) -> BonnieError {
        io_error(what, &self.dir, None, &e.into())
    }

    fn err_in(&self, what: &str, name: &str, e: impl Into<io::Error>) -> BonnieError {
        io_error(what, &self.dir.join(name), None, &e.into())
    }

    fn open_dir(&self) -> Result<OwnedFd, BonnieError> {
        rustix::fs::open(&self.dir, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
            .map_err(|e| self.err("opening the folder", e))
    }

    fn make_names(&self, repeat: u32, random: bool) -> Vec<String> {
        let mut rng = Rng::new(derive_seed(self.plan.seed, repeat, if random { 10 } else { 7 }));
        let mut names = Vec::with_capacity(self.plan.files as usize);
        for i in 0..self.plan.files {
            let len = rng.below(RAND_EXTRA_LEN + 1);
            let extra: String =
                (0..len).map(|_| NAME_CHARS[rng.below(NAME_CHARS.len() as u64) as usize] as char).collect();
            names.push(if random { format!("{extra}{i:07}") } else { format!("{i:07}{extra}") });
        }
        names
    }

    fn shuffle(&mut self, repeat: u32, purpose: u64) {
        let mut rng = Rng::new(derive_seed(self.plan.seed, repeat, purpose));
        for i in (1..self.names.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            self.names.swap(i, j);
        }
    }

    /// Creates `files` files (`creat`, data if sized, close) in name order.
    fn create(
        &mut self,
        test: BonnieTest,
        repeat: u32,
        random: bool,
        ready: &mut Ready<'_>,
    ) -> Result<Option<BonnieResult>, BonnieError> {
        self.names = self.make_names(repeat, random);
        std::fs::create_dir(&self.dir).map_err(|e| self.err("making the folder", e))?;
        let dir = self.open_dir()?;
        let (min, max) = (self.plan.file_min.bytes(), self.plan.file_max.bytes());
        let mut sizes = Rng::new(derive_seed(self.plan.seed, repeat, if random { 11 } else { 8 }));
        let sync = self.plan.sync;
        let names = std::mem::take(&mut self.names);
        let span = Span::start(ready()?);
        let mut bytes = 0u64;
        for name in &names {
            if self.stopped() {
                return Ok(None);
            }
            let size = if max > min { min + sizes.below(max - min + 1) } else { max };
            let fd = rustix::fs::openat(
                &dir,
                name.as_str(),
                OFlags::CREATE | OFlags::WRONLY | OFlags::TRUNC | OFlags::CLOEXEC,
                Mode::from_bits_truncate(0o600),
            )
            .map_err(|e| self.err_in("create", name, e))?;
            let mut file = File::from(fd);
            let mut left = size;
            while left > 0 {
                let n = left.min(FILE_CHUNK as u64) as usize;
                let data = self.buf.as_slice().get(..n).unwrap_or(&[]);
                file.write_all(data).map_err(|e| self.err_in("create write", name, e))?;
                left -= n as u64;
            }
            if sync {
                file.sync_all().map_err(|e| self.err_in("create fsync", name, e))?;
                rustix::fs::fsync(&dir).map_err(|e| self.err("fsync after create", e))?;
            }
            close_checked(file).map_err(|e| self.err_in("create close", name, e))?;
            bytes += size;
        }
        let measured = span.finish();
        self.names = names;
        Ok(Some(figures(test, repeat, bytes, self.plan.files, 0, &[measured])))
    }

    /// stat(2) one file, and read its data if it has any. Returns its size.
    fn stat_one(&mut self, dir: &OwnedFd, name: &str) -> Result<u64, BonnieError> {
        let st = rustix::fs::statat(dir, name, AtFlags::empty()).map_err(|e| self.err_in("stat", name, e))?;
        let size = st.st_size.max(0) as u64;
        if size > 0 {
            let fd = rustix::fs::openat(dir, name, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
                .map_err(|e| self.err_in("stat open", name, e))?;
            let mut file = File::from(fd);
            let mut left = size;
            while left > 0 {
                let n = left.min(FILE_CHUNK as u64) as usize;
                let piece = self.buf.as_mut_slice().get_mut(..n).unwrap_or(&mut []);
                file.read_exact(piece).map_err(|e| io_error("stat read", &self.dir.join(name), None, &e))?;
                left -= n as u64;
            }
            close_checked(file).map_err(|e| self.err_in("stat close", name, e))?;
        }
        Ok(size)
    }

    fn count_check(&self, what: &str, found: u64) -> Result<(), BonnieError> {
        if found == self.plan.files {
            Ok(())
        } else {
            Err(BonnieError(format!(
                "{what} of {}: found {found} files, expected {}; something else changed the folder",
                self.dir.display(),
                self.plan.files
            )))
        }
    }

    /// Stats every file in readdir order.
    fn stat_sequential(&mut self, repeat: u32, ready: &mut Ready<'_>) -> Result<Option<BonnieResult>, BonnieError> {
        let dir = self.open_dir()?;
        let span = Span::start(ready()?);
        let entries = std::fs::read_dir(&self.dir).map_err(|e| self.err("sequential stat readdir", e))?;
        let (mut found, mut bytes) = (0u64, 0u64);
        for entry in entries {
            if self.stopped() {
                return Ok(None);
            }
            let entry = entry.map_err(|e| self.err("sequential stat readdir", e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str().filter(|n| !n.starts_with('.')) else { continue };
            bytes += self.stat_one(&dir, name)?;
            found += 1;
        }
        let measured = span.finish();
        self.count_check("sequential stat", found)?;
        Ok(Some(figures(BonnieTest::SeqStat, repeat, bytes, found, 0, &[measured])))
    }

    /// Stats every file in a random order of the names.
    fn stat_random(&mut self, repeat: u32, ready: &mut Ready<'_>) -> Result<Option<BonnieResult>, BonnieError> {
        self.shuffle(repeat, 12);
        let dir = self.open_dir()?;
        let names = std::mem::take(&mut self.names);
        let span = Span::start(ready()?);
        let mut bytes = 0u64;
        for name in &names {
            if self.stopped() {
                return Ok(None);
            }
            bytes += self.stat_one(&dir, name)?;
        }
        let measured = span.finish();
        self.names = names;
        Ok(Some(figures(BonnieTest::RandomStat, repeat, bytes, self.plan.files, 0, &[measured])))
    }

    /// Deletes every file in readdir order, then the folder.
    fn delete_sequential(&mut self, repeat: u32, ready: &mut Ready<'_>) -> Result<Option<BonnieResult>, BonnieError> {
        let dir = self.open_dir()?;
        let span = Span::start(ready()?);
        let entries = std::fs::read_dir(&self.dir).map_err(|e| self.err("sequential delete readdir", e))?;
        let mut found = 0u64;
        for entry in entries {
            if self.stopped() {
                return Ok(None);
            }
            let entry = entry.map_err(|e| self.err("sequential delete readdir", e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str().filter(|n| !n.starts_with('.')) else { continue };
            self.unlink_one(&dir, name)?;
            found += 1;
        }
        self.remove_dir(dir)?;
        let measured = span.finish();
        self.count_check("sequential delete", found)?;
        self.names.clear();
        Ok(Some(figures(BonnieTest::SeqDelete, repeat, 0, found, 0, &[measured])))
    }

    /// Deletes every file in a new random order of the names, then the folder.
    fn delete_random(&mut self, repeat: u32, ready: &mut Ready<'_>) -> Result<Option<BonnieResult>, BonnieError> {
        self.shuffle(repeat, 13);
        let dir = self.open_dir()?;
        let names = std::mem::take(&mut self.names);
        let span = Span::start(ready()?);
        for name in &names {
            if self.stopped() {
                return Ok(None);
            }
            self.unlink_one(&dir, name)?;
        }
        self.remove_dir(dir)?;
        let measured = span.finish();
        Ok(Some(figures(BonnieTest::RandomDelete, repeat, 0, names.len() as u64, 0, &[measured])))
    }

    fn unlink_one(&self, dir: &OwnedFd, name: &str) -> Result<(), BonnieError> {
        rustix::fs::unlinkat(dir, name, AtFlags::empty()).map_err(|e| self.err_in("delete", name, e))?;
        if self.plan.sync {
            rustix::fs::fsync(dir).map_err(|e| self.err("fsync after delete", e))?;
        }
        Ok(())
    }

    fn remove_dir(&self, dir: OwnedFd) -> Result<(), BonnieError> {
        close_checked(File::from(dir)).map_err(|e| self.err("closing the folder", e))?;
        std::fs::remove_dir(&self.dir).map_err(|e| self.err("removing the folder", e))
    }
}
