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
//! The folder is a [`FilesPlace`]: a local folder, worked on through a
//! descriptor of it (openat, fstatat, unlinkat, as bonnie++ works inside the
//! folder after a chdir), or a folder on a server.

use crate::io::derive_seed;
use crate::place::FilesPlace;
use crate::plan::BonniePlan;
use crate::timing::{figures, Ready, Timing};
use crate::{BonnieError, BonnieResult, BonnieTest};
use iomatrix_backend::AlignedBuf;
use iomatrix_random::Generator;
use iomatrix_stats::Span;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// bonnie++'s RandExtraLen: random characters added to each name.
const RAND_EXTRA_LEN: u64 = 12;
const NAME_CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
/// Reads and writes of file data go in pieces of this size (bonnie++'s
/// default file chunk).
const FILE_CHUNK: usize = 8192;

pub(crate) struct FileTests<'a> {
    plan: &'a BonniePlan,
    stop: &'a AtomicBool,
    folder: Box<dyn FilesPlace + 'a>,
    /// Names made by the last create test, for the random stat and delete.
    names: Vec<String>,
    buf: AlignedBuf,
}

impl<'a> FileTests<'a> {
    pub(crate) fn new(plan: &'a BonniePlan, stop: &'a AtomicBool, folder: Box<dyn FilesPlace + 'a>) -> Self {
        FileTests { plan, stop, folder, names: Vec::new(), buf: AlignedBuf::new(FILE_CHUNK) }
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

    fn make_names(&self, repeat: u32, random: bool) -> Result<Vec<String>, BonnieError> {
        let mut rng = Generator::seeded(derive_seed(self.plan.seed, repeat, if random { 10 } else { 7 }));
        let mut names = iomatrix_core::alloc::try_with_capacity(self.plan.files as usize, "the file tests' names")
            .map_err(|e| BonnieError(e.to_string()))?;
        for i in 0..self.plan.files {
            let len = rng.below(RAND_EXTRA_LEN + 1);
            let extra: String =
                (0..len).map(|_| NAME_CHARS[rng.below(NAME_CHARS.len() as u64) as usize] as char).collect();
            names.push(if random { format!("{extra}{i:07}") } else { format!("{i:07}{extra}") });
        }
        Ok(names)
    }

    fn shuffle(&mut self, repeat: u32, purpose: u64) {
        Generator::seeded(derive_seed(self.plan.seed, repeat, purpose)).shuffle(&mut self.names);
    }

    /// Creates `files` files (`creat`, data if sized, close) in name order.
    fn create(
        &mut self,
        test: BonnieTest,
        repeat: u32,
        random: bool,
        ready: &mut Ready<'_>,
    ) -> Result<Option<BonnieResult>, BonnieError> {
        self.names = self.make_names(repeat, random)?;
        self.folder.make()?;
        self.folder.open()?;
        let (min, max) = (self.plan.file_min.bytes(), self.plan.file_max.bytes());
        let mut sizes = Generator::seeded(derive_seed(self.plan.seed, repeat, if random { 11 } else { 8 }));
        let sync = self.plan.sync;
        let names = std::mem::take(&mut self.names);
        let span = Span::start(ready()?);
        let (mut bytes, mut timing) = (0u64, Timing::new(self.plan.series_interval_ns));
        for name in &names {
            if self.stopped() {
                return Ok(None);
            }
            let size = if max > min { min + sizes.below(max - min + 1) } else { max };
            let t = Instant::now();
            self.folder.create(name, size, self.buf.as_slice(), sync)?;
            timing.since(t, 1, size, true);
            bytes += size;
        }
        let measured = span.finish();
        self.names = names;
        Ok(Some(figures(test, repeat, bytes, self.plan.files, 0, &[measured]).timed(timing.finish())))
    }

    fn count_check(&self, what: &str, found: u64) -> Result<(), BonnieError> {
        if found == self.plan.files {
            Ok(())
        } else {
            Err(BonnieError(format!(
                "{what} of {}: found {found} files, expected {}; something else changed the folder",
                self.folder.location(),
                self.plan.files
            )))
        }
    }

    /// Stats every file in the order the folder lists them.
    fn stat_sequential(&mut self, repeat: u32, ready: &mut Ready<'_>) -> Result<Option<BonnieResult>, BonnieError> {
        self.folder.open()?;
        let span = Span::start(ready()?);
        let mut timing = Timing::new(self.plan.series_interval_ns);
        let names = self.folder.list("sequential stat readdir")?;
        let (mut found, mut bytes) = (0u64, 0u64);
        for name in &names {
            if self.stopped() {
                return Ok(None);
            }
            let t = Instant::now();
            let read = self.folder.stat(name, self.buf.as_mut_slice())?;
            timing.since(t, 1, read, false);
            bytes += read;
            found += 1;
        }
        let measured = span.finish();
        self.count_check("sequential stat", found)?;
        Ok(Some(figures(BonnieTest::SeqStat, repeat, bytes, found, 0, &[measured]).timed(timing.finish())))
    }

    /// Stats every file in a random order of the names.
    fn stat_random(&mut self, repeat: u32, ready: &mut Ready<'_>) -> Result<Option<BonnieResult>, BonnieError> {
        self.shuffle(repeat, 12);
        self.folder.open()?;
        let names = std::mem::take(&mut self.names);
        let span = Span::start(ready()?);
        let (mut bytes, mut timing) = (0u64, Timing::new(self.plan.series_interval_ns));
        for name in &names {
            if self.stopped() {
                return Ok(None);
            }
            let t = Instant::now();
            let read = self.folder.stat(name, self.buf.as_mut_slice())?;
            timing.since(t, 1, read, false);
            bytes += read;
        }
        let measured = span.finish();
        self.names = names;
        let result = figures(BonnieTest::RandomStat, repeat, bytes, self.plan.files, 0, &[measured]);
        Ok(Some(result.timed(timing.finish())))
    }

    /// Deletes every file in the order the folder lists them, then the folder.
    fn delete_sequential(&mut self, repeat: u32, ready: &mut Ready<'_>) -> Result<Option<BonnieResult>, BonnieError> {
        self.folder.open()?;
        let span = Span::start(ready()?);
        let mut timing = Timing::new(self.plan.series_interval_ns);
        let names = self.folder.list("sequential delete readdir")?;
        let mut found = 0u64;
        for name in &names {
            if self.stopped() {
                return Ok(None);
            }
            let t = Instant::now();
            self.folder.delete(name, self.plan.sync)?;
            timing.since(t, 1, 0, true);
            found += 1;
        }
        self.folder.remove()?;
        let measured = span.finish();
        self.count_check("sequential delete", found)?;
        self.names.clear();
        Ok(Some(figures(BonnieTest::SeqDelete, repeat, 0, found, 0, &[measured]).timed(timing.finish())))
    }

    /// Deletes every file in a new random order of the names, then the folder.
    fn delete_random(&mut self, repeat: u32, ready: &mut Ready<'_>) -> Result<Option<BonnieResult>, BonnieError> {
        self.shuffle(repeat, 13);
        self.folder.open()?;
        let names = std::mem::take(&mut self.names);
        let span = Span::start(ready()?);
        let mut timing = Timing::new(self.plan.series_interval_ns);
        for name in &names {
            if self.stopped() {
                return Ok(None);
            }
            let t = Instant::now();
            self.folder.delete(name, self.plan.sync)?;
            timing.since(t, 1, 0, true);
        }
        self.folder.remove()?;
        let measured = span.finish();
        let result = figures(BonnieTest::RandomDelete, repeat, 0, names.len() as u64, 0, &[measured]);
        Ok(Some(result.timed(timing.finish())))
    }
}
